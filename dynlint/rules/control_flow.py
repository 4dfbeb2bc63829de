"""DYN1xx: data-dependent control flow — Python branching on tensor values."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.tensors.kinds import TENSOR, TENSORS, WEAK
from dynlint.linter.rule import Example, FixExample, register
from dynlint.fixes.guards import builtin_any_all, logic_to_tensor_ops, raise_guard_to_assert
from dynlint.fixes.where import branch_to_where, early_return_to_where, ifexp_to_where
from dynlint.rules.common import TorchRule, call_args, is_not, source_of, truth_operands, value_truth_operands

BRANCH = "Data-dependent branching"
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
DATA_OP = "Data dependent operator"

# kept for callers of the old private helper
_truth_operands = truth_operands


def _test_owner(ctx, node: cst.CSTNode):
    """The If/While/IfExp/CompIf whose condition `node` is part of (through `and`/`or`/`not`), or None."""
    child = node
    for p in reversed(ctx.parents):
        if isinstance(p, cst.BooleanOperation) or is_not(p):
            child = p
            continue
        if isinstance(p, (cst.If, cst.While, cst.IfExp, cst.CompIf)) and p.test is child:
            return p
        return None
    return None


@register
class TensorConditionInBranch(TorchRule):
    """Checks for `if`, `elif`, `while`, conditional expressions, comprehension filters and `assert`s with a
    computed message whose condition is a tensor value."""
    code = "DYN101"
    name = "tensor-condition-in-branch"
    message = "branch on a tensor value `{expr}`: Dynamo cannot know which way to go while tracing"
    fix = "Express both arms as tensor ops (`torch.where`), use `torch.cond`, or branch on shapes/config instead"
    gb_types = (BRANCH, ITEM)
    why = """
        Dynamo traces with symbolic tensors whose values are unknown at compile time. A Python `if` on a
        tensor value forces the value to the host, so Dynamo ends the graph before the branch and resumes
        in a new graph after it (`Data-dependent branching`). Each break costs a host sync and splits
        the fused kernels; under `fullgraph=True` it is an error. Conditions on shapes, dtypes, devices,
        `self.training` or `is None` are fine: they are known while tracing. An `assert` on a tensor is
        traced (as `torch._assert_async`) when it has no message or a constant one; a message computed at
        run time (`f"... {step}"`) makes it a branch like any other (measured).
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def clip_positive(x):
                y = x * 2
                if y.sum() > 0:
                    y = y - 1
                return y
        """, "clip_positive(torch.ones(8))"),
        Example("""
            import torch

            @torch.compile
            def gate(x, threshold: float = 0.5):
                return x if (x > threshold).any() else torch.zeros_like(x)
        """, "gate(torch.ones(8))"),
        Example("""
            import torch

            @torch.compile
            def shrink(x):
                while x.norm() > 1:
                    x = x / 2
                return x
        """, "shrink(torch.full((4,), 3.0))"),
        Example("""
            import torch

            @torch.compile
            def safe_log(x):
                has_zero = (x == 0).any()
                if not has_zero:
                    return x.log()
                return (x + 1e-6).log()
        """, "safe_log(torch.ones(4))"),
        Example("""
            import torch

            @torch.compile
            def active_rows(x):
                rows = [row for row in x if row.sum() > 0]
                return len(rows)
        """, "active_rows(torch.ones(2, 3))"),
        Example("""
            import torch

            @torch.compile
            def checked_step(loss, step):
                assert torch.isfinite(loss), f"loss became non-finite at step {step}"
                return loss * 2
        """, "checked_step(torch.tensor(1.0), 3)"),
    ]
    VALID = [
        Example("""
            import torch

            @torch.compile
            def checked_step(loss):
                assert torch.isfinite(loss), "loss became non-finite"
                return loss * 2
        """, "checked_step(torch.tensor(1.0))"),
        Example("""
            import torch

            @torch.compile
            def clip_positive(x):
                y = x * 2
                return torch.where(y.sum() > 0, y - 1, y)
        """, "clip_positive(torch.ones(8))"),
        Example("""
            import torch

            @torch.compile
            def pad_to_even(x, mask=None):
                if x.shape[0] % 2 == 1 and x.dim() == 1:
                    x = torch.cat([x, x.new_zeros(1)])
                if mask is not None:
                    x = x * mask
                if x.dtype == torch.float16 or x.is_cuda:
                    x = x.float()
                return x
        """, "pad_to_even(torch.ones(7))"),
        Example("""
            import torch


            def is_compiling() -> bool:             # a project's own check: it returns torch's
                try:
                    return torch.compiler.is_compiling()
                except Exception:
                    return False


            @torch.compile
            def clamp(x):
                if not is_compiling() and (x < 0).any():    # not evaluated while Dynamo traces
                    raise ValueError("negative input")
                return x.clamp(min=0)
        """, "clamp(torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def check(x):
                assert x.sum() > 0, "needs positive input"
                return x + 1
        """, "check(torch.ones(4))"),
        Example("""
            import torch

            class Block(torch.nn.Module):
                def __init__(self, dim: int, p: float = 0.1):
                    super().__init__()
                    self.proj = torch.nn.Linear(dim, dim)
                    self.p = p

                def forward(self, x, cache=None):
                    b, t, d = x.shape
                    if self.training and self.p > 0:
                        x = torch.nn.functional.dropout(x, self.p)
                    if cache is not None and t > 1:
                        x = torch.cat([cache, x], dim=1)
                    if x.size(-1) != d or not torch.is_floating_point(x):
                        raise ValueError("bad input")
                    return self.proj(x)

            block = torch.compile(Block(4).eval())
        """, "block(torch.ones(2, 3, 4))"),
    ]

    fix_safety = "safe"
    fix_title = ("Rewrites `if cond: name = a` (with an optional `else: name = b`) as `name = torch.where(cond, a, "
                 "b)` (b defaults to `name`), `a if cond else b` as `torch.where(cond, a, b)`, and an early return "
                 "`if cond: return a` ... `return b` as `return torch.where(cond, a, b)` (or, when both returns are "
                 "the same `e` and only `name = v` lies between, `name = torch.where(cond, name, v)`): one graph, "
                 "both arms computed, the right one selected. Output that only runs eagerly (`if not "
                 "torch.compiler.is_compiling(): ...`, e.g. after the logging fix) stays, under its own `if cond:`.")
    fix_note = """
        Safe when the condition is a 0-d tensor (`x.any()`, `y.sum() > 0`) and both arms are elementwise functions
        of the assigned tensor with numbers (`y * 0.5`, `y + 1e-6`, `y.nan_to_num()`, `torch.clamp(y, min=0)`,
        `torch.zeros_like(y)`): the shape is kept and nothing else runs. Only when the dtype cannot change,
        though: both arms, or neither, bring in a float (`y * 0.5`, `y / 2`, `y.clamp(min=0.5)`), or the tensor
        is known to be floating: every value it is given comes from a function that returns floating point for any
        input (`torch.exp`, `x.mean()`, `F.softmax`, `x.float()`, `torch.randn`, `torch.zeros` with no `dtype` or a
        floating one), a true division or a float number with a tensor (`x / n`, `x * 0.5`), arithmetic with a
        floating tensor, or a function of the same file all of whose returns are such tensors (a helper
        returning `torch.cat([torch.cos(a), torch.sin(a)])`; for `a, aux = self.router(x)`, the element in that
        place of every return of the `forward` of the submodule's class, when that class is in the same file and
        `__init__` is the one place that sets `self.router`). Else an integer `y` that came back from one arm as
        it was comes back from `torch.where` as a float tensor, and the fix is unsafe (a parameter is not known
        to be floating). It is unsafe too when the caller could
        tell the new tensor `torch.where` returns from the one it got before: an arm that hands on a tensor the
        caller holds (a parameter, an attribute, a view of one, or one a helper or submodule of the same file hands back) where
        the result is then returned, stored or updated in place, or an arm that updates such a tensor in place
        (`x += 1`, which the fix turns into a new tensor). A tensor in a divisor (`1 / y`) or a factor that is
        not finite makes the fix unsafe: the arm not selected still gets a zero gradient, and 0 * inf is NaN.
        Other side-effect-free tensor arms give an unsafe fix: their shapes may broadcast differently, and both are
        computed. `if cond: raise E(...)` becomes an unsafe fix too: `torch._assert_async` while compiling (a
        RuntimeError, asynchronous on CUDA), the original check when eager. Arms that call user code (a submodule)
        become an unsafe `torch.cond`, which runs only the chosen arm but needs both to return tensors of one shape and
        dtype and to mutate nothing (else it fails while compiling). An early return, and a conditional expression, are
        fixed safely under the same conditions (dtype and identity included: `return x if c else torch.zeros_like(x)`
        handed back the caller's own `x`); else unsafely. When statements lie between the early return and the last one
        (`total = ...; return total / n`), they always run after the fix: an unsafe fix (they may divide by zero or
        index out of range, and a NaN in the arm not selected still reaches the gradient). Loops and other bodies are
        not fixed.
    """
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def clip_positive(x):
                y = x * 2
                if y.sum() > 0:
                    y = y - 1
                return y
        """, """
            import torch

            @torch.compile
            def clip_positive(x):
                y = x * 2
                y = torch.where(y.sum() > 0, y - 1, y)
                return y
        """, "clip_positive(torch.ones(8))", "clip_positive(-torch.ones(8))"),
        FixExample("""
            import torch

            @torch.compile
            def stable_softmax(scores):
                if torch.isnan(scores).any():  # rare
                    print("NaN in scores")
                    scores = torch.nan_to_num(scores)
                return scores.softmax(dim=-1)
        """, """
            import torch

            @torch.compile
            def stable_softmax(scores):
                if not torch.compiler.is_compiling():
                    if torch.isnan(scores).any():
                        print("NaN in scores")
                scores = torch.where(torch.isnan(scores).any(), torch.nan_to_num(scores), scores)  # rare
                return scores.softmax(dim=-1)
        """, "stable_softmax(torch.ones(2, 4))", "stable_softmax(torch.tensor([[1.0, float('nan')]]))"),
        FixExample("""
            import torch

            @torch.compile
            def scale(x):
                y = x - x.mean()
                if y.abs().max() > 1:  # large values
                    return y * 0.5
                return y * 2.0
        """, """
            import torch

            @torch.compile
            def scale(x):
                y = x - x.mean()
                return torch.where(y.abs().max() > 1, y * 0.5, y * 2.0)  # large values
        """, "scale(torch.arange(4.0))", "scale(torch.tensor([0.1, 0.2]))"),
        FixExample("""
            import torch

            @torch.compile
            def soft_clip(x):
                y = x * 2
                if y.abs().max() <= 1:
                    return y.softmax(-1)
                y = y.clamp(min=-1, max=1)
                return y.softmax(-1)
        """, """
            import torch

            @torch.compile
            def soft_clip(x):
                y = x * 2
                y = torch.where(y.abs().max() <= 1, y, y.clamp(min=-1, max=1))
                return y.softmax(-1)
        """, "soft_clip(torch.tensor([0.1, -0.3]))", "soft_clip(torch.tensor([2.0, -3.0, 0.2]))"),
        FixExample("""
            import torch

            @torch.compile
            def check_actions(action, mask=None):
                if mask is not None and (action[mask] < 0).any():
                    raise RuntimeError("invalid action")
                return action * 2
        """, """
            import torch

            @torch.compile
            def check_actions(action, mask=None):
                if torch.compiler.is_compiling():
                    if mask is not None:
                        torch._assert_async(torch.logical_not((action[mask] < 0).any()), "invalid action")
                elif mask is not None and (action[mask] < 0).any():
                    raise RuntimeError("invalid action")
                return action * 2
        """, safety="unsafe"),
        FixExample("""
            import torch

            @torch.compile
            def check_actions(action):
                if (action < 0).any():
                    raise RuntimeError("invalid action")
                return action * 2
        """, """
            import torch

            @torch.compile
            def check_actions(action):
                if torch.compiler.is_compiling():
                    torch._assert_async(torch.logical_not((action < 0).any()), "invalid action")
                elif (action < 0).any():
                    raise RuntimeError("invalid action")
                return action * 2
        """, "check_actions(torch.arange(4))", safety="unsafe"),
        FixExample("""
            import torch

            @torch.compile
            def project(x, w):
                if x.sum() > 0:
                    x = x @ w
                return x
        """, """
            import torch

            @torch.compile
            def project(x, w):
                x = torch.where(x.sum() > 0, x @ w, x)
                return x
        """, "project(torch.ones(2, 3), torch.eye(3) * 2)", "project(-torch.ones(2, 3), torch.eye(3))",
           safety="unsafe"),
        FixExample("""
            import torch

            class Gate(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(4, 4)

                def forward(self, x):
                    if x.sum() > 0:
                        x = self.proj(x)
                    return x * 2

            gate = torch.compile(Gate())
        """, """
            import torch

            class Gate(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(4, 4)

                def forward(self, x):
                    x = torch.cond(x.sum() > 0, lambda: self.proj(x), lambda: x.clone())
                    return x * 2

            gate = torch.compile(Gate())
        """, "gate(torch.ones(2, 4))", "gate(-torch.ones(2, 4))", safety="unsafe"),
        FixExample("""
            import torch

            @torch.compile
            def masked_mean(x, mask):
                if mask.sum() == 0:
                    return x.sum() * 0.0
                total = (x * mask).sum()
                return total / mask.sum()
        """, """
            import torch

            @torch.compile
            def masked_mean(x, mask):
                total = (x * mask).sum()
                return torch.where(mask.sum() == 0, x.sum() * 0.0, total / mask.sum())
        """, "masked_mean(torch.ones(4), torch.tensor([1.0, 0.0, 1.0, 0.0]))",
           "masked_mean(torch.ones(4), torch.zeros(4))", safety="unsafe"),
        FixExample("""
            import torch

            @torch.compile
            def gate(x, threshold: float = 0.5):
                return x if (x > threshold).any() else torch.zeros_like(x)
        """, """
            import torch

            @torch.compile
            def gate(x, threshold: float = 0.5):
                return torch.where((x > threshold).any(), x, torch.zeros_like(x))
        """, "gate(torch.ones(8))", "gate(torch.zeros(8))", safety="unsafe"),
    ]

    def _check(self, test: cst.BaseExpression, owner: cst.CSTNode = None) -> None:
        self._owner = owner
        for operand in truth_operands(test):
            if self.tensors.kind(operand) == TENSOR:
                self.report(operand, expr=source_of(operand))
                return

    def dead_under_dynamo(self, node: cst.CSTNode) -> bool:
        # the walk stands at the `if` (not yet among the parents): judge it, so that the `elif` of
        # `if torch.compiler.is_compiling():` counts as never traced
        owner = getattr(self, "_owner", None)
        if isinstance(owner, cst.If):       # or the operand is one Dynamo never evaluates (`not compiling() and b`)
            return super().dead_under_dynamo(owner) or self._unevaluated(owner.test, node)
        return super().dead_under_dynamo(node)

    def autofix(self, node: cst.CSTNode):
        owner = getattr(self, "_owner", None)
        if isinstance(owner, cst.If):       # the walk stands at the `if`: self.ctx.parents are its ancestors
            at = len(self.ctx.parents)
            return raise_guard_to_assert(self.ctx, owner, at) or branch_to_where(self.ctx, owner, owner.test, at) \
                or early_return_to_where(self.ctx, owner, at)
        if isinstance(owner, cst.IfExp):
            return ifexp_to_where(self.ctx, owner)
        return None

    def visit_If(self, node: cst.If) -> None:
        self._check(node.test, node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check(node.test, node)

    def visit_CompIf(self, node: cst.CompIf) -> None:
        self._check(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        if node.msg is not None and not _constant_string(node.msg):
            self._check(node.test)


def _constant_string(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.SimpleString):
        return True
    return isinstance(node, cst.ConcatenatedString) and _constant_string(node.left) and _constant_string(node.right)


@register
class TensorInBooleanOperator(TorchRule):
    """Checks for `and`, `or` and `not` applied to tensor values outside a branch condition
    (`y = mask.any() or flag`, `ok = not x.isnan().any()`, `assert a.all() and b.all()`)."""
    code = "DYN102"
    name = "tensor-in-boolean-operator"
    message = "`{op}` asks for the truth value of the tensor `{expr}`: Dynamo breaks the graph"
    fix = ("Combine masks with tensor ops (`a & b`, `a | b`, `~a`, `torch.logical_and`) and keep the result a "
           "tensor; use `x is None` tests for optional values")
    gb_types = (BRANCH, DATA_OP)
    why = """
        `a and b`, `a or b` and `not a` are Python control flow: they call `bool()` on `a`, which for a tensor
        needs its value. Dynamo breaks the graph there (`Data-dependent branching`, or `Data dependent
        operator` for `not`; a `not` outside a condition even makes Dynamo skip the whole function). The
        same holds inside `assert a and b`, although a plain `assert t` is traced as an async assertion.
        The bitwise operators `&`, `|`, `~` stay in the graph.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def both_positive(x, y):
                ok = (x > 0).all() and (y > 0).all()
                return x + y, ok
        """, "both_positive(torch.ones(3), torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def finite(x):
                clean = not torch.isnan(x).any()
                return x * 2, clean
        """, "finite(torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def bounded(x):
                assert (x > -10).all() and (x < 10).all(), "out of range"
                return x * 2
        """, "bounded(torch.ones(3))"),
    ]
    VALID = [
        Example("""
            import torch

            @torch.compile
            def both_positive(x, y, mask=None):
                ok = (x > 0).all() & (y > 0).all()
                keep = mask is None or mask
                return x + y, ok, keep
        """, "both_positive(torch.ones(3), torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def bounded(x):
                assert x.numel() > 0 and (x > -10).all(), "out of range"
                return x * 2
        """, "bounded(torch.ones(3))"),
    ]

    fix_safety = "safe"
    fix_title = ("Rewrites `a and b` / `a or b` / `not a` on tensors as `torch.logical_and(a, b)` / "
                 "`torch.logical_or(a, b)` / `torch.logical_not(a)`, which stay in the graph.")
    fix_note = ("Safe for `and` / `or` of boolean 0-d tensors (Python hands back one of them, a 0-d bool tensor; "
                "so does the fix). Unsafe for `not` (a Python bool becomes a tensor), for operands not provably "
                "boolean 0-d tensors, and inside `assert` (compiled, the assertion raises RuntimeError).")
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def both_positive(x, y):
                ok = (x > 0).all() and (y > 0).all()
                return x + y, ok
        """, """
            import torch

            @torch.compile
            def both_positive(x, y):
                ok = torch.logical_and((x > 0).all(), (y > 0).all())
                return x + y, ok
        """, "both_positive(torch.ones(3), torch.ones(3))", "both_positive(torch.ones(3), -torch.ones(3))"),
        FixExample("""
            import torch

            @torch.compile
            def finite(x):
                clean = not torch.isnan(x).any()
                return x * 2, clean
        """, """
            import torch

            @torch.compile
            def finite(x):
                clean = torch.logical_not(torch.isnan(x).any())
                return x * 2, clean
        """, safety="unsafe"),
    ]

    def _top(self, node: cst.CSTNode) -> bool:
        parent = self.ctx.parent()
        return not (isinstance(parent, cst.BooleanOperation) or is_not(parent))

    def autofix(self, node: cst.CSTNode):
        owner = getattr(self, "_owner", None)
        if owner is None:
            return None
        return logic_to_tensor_ops(self.ctx, owner, isinstance(self.ctx.parent(), cst.Assert))

    def _check(self, node: cst.BaseExpression) -> None:
        self._owner = node
        if not self._top(node) or _test_owner(self.ctx, node) is not None:
            return                            # part of a larger expression, or a branch condition (DYN101)
        for operand in value_truth_operands(node):
            if self.tensors.kind(operand) == TENSOR:
                op = "not" if is_not(node) and not isinstance(node, cst.BooleanOperation) else \
                    ("and" if isinstance(node.operator, cst.And) else "or")
                self.report(operand, op=op, expr=source_of(operand))
                return

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._check(node)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if is_not(node):
            if isinstance(self.ctx.parent(), cst.Assert) and self.ctx.parent().test is node:
                # `assert not t` is a branch on t (only `assert t` is rewritten to an async assertion)
                if self.tensors.kind(node.expression) == TENSOR:
                    self._owner = node
                    self.report(node.expression, op="not", expr=source_of(node.expression))
                return
            self._check(node)


@register
class TorchAssertOnTensor(TorchRule):
    """Checks for `torch._assert(cond, msg)` where `cond` is a tensor value."""
    code = "DYN103"
    name = "torch-assert-on-tensor"
    message = "`torch._assert` on a tensor value breaks the graph"
    fix = "Use a plain `assert` (Dynamo rewrites it to `torch._assert_async`) or `torch._check` for sizes"
    gb_types = (DATA_OP,)
    why = """
        `torch._assert` with a tensor condition needs the tensor's value on the host while tracing, so
        Dynamo breaks the graph (`Data dependent operator`). A plain `assert` on the same condition is
        traced into the graph as an asynchronous assertion and does not break.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def normalise(x):
            torch._assert(x.sum() > 0, "empty input")
            return x / x.sum()
    """, "normalise(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def normalise(x):
            assert x.sum() > 0, "empty input"
            return x / x.sum()
    """, "normalise(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        if self.call_name(node) == "torch._assert" and node.args and self.tensors.is_tensor(node.args[0].value):
            self.report(node)


@register
class TensorCheckCall(TorchRule):
    """Checks for `torch._check_tensor_all(cond, msg)` and `torch._check_tensor_all_with(error, cond, msg)` where
    `cond` is a tensor value."""
    code = "DYN106"
    name = "tensor-check-call"
    message = "`{fn}` reads the tensor condition with `.item()`: Dynamo breaks the graph"
    fix = "Use a plain `assert cond.all()` (traced as an asynchronous assertion), or check outside the compiled code"
    gb_types = (ITEM,)
    fullgraph_raises = False         # fullgraph=True silently turns on scalar capture
    why = """
        `torch._check_tensor_all` and `torch._check_tensor_all_with` test a tensor condition by reading it
        on the host (`cond.all().item()`), which Dynamo cannot do while tracing with the default
        `capture_scalar_outputs=False`: it ends the graph there (`Unsupported Tensor.item() call`). Libraries
        call them from helpers that accept a tensor or a bool, so the break sits in the helper.
    """
    INVALID = [Example("""
        import torch


        def check(cond, msg):
            if isinstance(cond, torch.Tensor):
                torch._check_tensor_all_with(ValueError, cond, lambda: msg)
            else:
                torch._check_with(ValueError, cond, lambda: msg)


        @torch.compile
        def normalise(x):
            check(x > 0, "negative input")
            return x / x.sum()
    """, "normalise(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def normalise(x):
            assert (x > 0).all(), "negative input"
            return x / x.sum()
    """, "normalise(torch.ones(4))")]

    CHECKS = {"torch._check_tensor_all": 0, "torch._check_tensor_all_with": 1}     # -> where the condition is

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        at = self.CHECKS.get(name)
        if at is not None and len(node.args) > at and self.tensors.is_tensor(node.args[at].value):
            self.report(node, fn=name)


@register
class PythonAnyAllOnTensor(TorchRule):
    """Checks for the Python builtins `any()` and `all()` applied to a tensor or to a generator of tensor
    conditions."""
    code = "DYN104"
    name = "python-any-all-on-tensor"
    message = "Python `{fn}()` tests the truth of each tensor element one by one: Dynamo breaks the graph"
    fix = "Use the tensor methods: `t.any()` / `t.all()`, or `torch.stack(conds).any()` for several tensors"
    fix_safety = "unsafe"
    fix_title = "Rewrites `any(t)` / `all(t)` of a tensor as `t.any()` / `t.all()`."
    fix_note = ("Unsafe: the result is a 0-d bool tensor instead of a Python bool. Generators over several "
                "tensors are not fixed (`torch.stack` of an empty list would fail where `all([])` is True).")
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def has_negative(x: torch.Tensor):
                flag = any(x < 0)
                return x.abs(), flag
        """, """
            import torch

            @torch.compile
            def has_negative(x: torch.Tensor):
                flag = (x < 0).any()
                return x.abs(), flag
        """, "has_negative(torch.ones(4))", safety="unsafe"),
    ]
    gb_types = (BRANCH,)
    why = """
        The builtins `any()` and `all()` iterate and call `bool()` on every item. On a tensor (or on a
        generator of tensor comparisons) each item is a tensor value, so Dynamo hits a data-dependent branch
        inside the builtin and breaks the graph (`Data-dependent branching`). `t.any()` is one tensor op.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def has_negative(x: torch.Tensor):
                flag = any(x < 0)
                return x.abs(), flag
        """, "has_negative(torch.ones(4))"),
        Example("""
            import torch

            @torch.compile
            def all_finite(grads: list):
                return all(torch.isfinite(g).all() for g in grads)
        """, "all_finite([torch.ones(2), torch.ones(3)])"),
        Example("""
            import torch

            @torch.compile
            def clip_scale(x: torch.Tensor):
                grads = [x, x * 2]
                finite = [g.isfinite().all() for g in grads]
                scale = 1.0 if all(finite) else 0.0
                return [g * scale for g in grads]
        """, "clip_scale(torch.ones(3))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def has_negative(x, flags: list):
            flag = (x < 0).any()
            config_ok = all(f > 0 for f in flags)
            return x.abs(), flag, config_ok
    """, "has_negative(torch.ones(4), [1, 2])")]

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in ("any", "all") or \
                self.call_name(node) not in ("any", "all"):
            return
        pos, _ = call_args(node)
        if len(pos) != 1:
            return
        arg = pos[0]
        if isinstance(arg, (cst.GeneratorExp, cst.ListComp)):
            tensor = self.tensors.kind(arg.elt) == TENSOR
        else:           # a tensor, or a list of tensors (`finite = [g.isfinite().all() for g in grads]`)
            tensor = self.tensors.kind(arg) in (TENSOR, TENSORS)
        if tensor:
            self.report(node, fn=node.func.value)

    def autofix(self, node: cst.Call):
        return builtin_any_all(self.ctx, node)


@register
class TensorEqualityPredicate(TorchRule):
    """Checks for `torch.equal`, `torch.allclose`, `torch.is_nonzero` and the `.equal()` / `.allclose()`
    methods: tensor comparisons that return a Python `bool`."""
    code = "DYN105"
    name = "tensor-equality-predicate"
    message = "`{call}` returns a Python bool computed from tensor values: Dynamo breaks the graph"
    fix = ("Keep the answer a tensor: `(a == b).all()`, `torch.isclose(a, b).all()`, and use it in tensor "
           "ops (`torch.where`) instead of a Python `if`")
    gb_types = (DATA_OP,)
    why = """
        These functions compare the data and hand back a Python `bool`, which needs the values on the host.
        Dynamo cannot produce it from symbolic tensors and breaks the graph (`Data dependent operator`),
        whether or not the result is used in an `if`. Their tensor-valued counterparts trace fine.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def update(new, old):
                if torch.allclose(new, old):
                    return old
                return 0.9 * old + 0.1 * new
        """, "update(torch.ones(3), torch.zeros(3))"),
        Example("""
            import torch

            @torch.compile
            def same(a, b):
                unchanged = a.equal(b)
                return a + b, unchanged
        """, "same(torch.ones(3), torch.ones(3))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def update(new, old):
            close = torch.isclose(new, old).all()
            return torch.where(close, old, 0.9 * old + 0.1 * new)
    """, "update(torch.ones(3), torch.zeros(3))")]

    FUNCS = frozenset({"torch.equal", "torch.allclose", "torch.is_nonzero"})

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if name in self.FUNCS:
            self.report(node, call=name)
        elif self.method_name(node) in ("equal", "allclose") and not name.startswith("torch.") and \
                self.tensors.kind(self.receiver(node)) in (TENSOR, WEAK) and len(node.args) >= 1:
            self.report(node, call=f".{self.method_name(node)}()")
