"""DYN2xx: host syncs and scalar extraction — pulling tensor values into Python."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.tensors import Tensors
from dynlint.analysis.tensors.kinds import FLOAT_IF_TENSOR, TENSOR, VALUE, WEAK
from dynlint.linter.rule import Example, FixExample, register
from dynlint.fixes.common import atom
from dynlint.fixes.guards import raise_guard_to_assert
from dynlint.fixes.scalars import keep_scalar_tensor
from dynlint.fixes.where import branch_to_where
from dynlint.rules.common import SPLITS, TorchRule, call_args, source_of

ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
DATA_OP = "Data dependent operator"
BUILTIN = "Failed to trace builtin operator"


def is_split_sizes(ctx, node: cst.CSTNode) -> bool:
    """`node` is the sizes argument of `x.split(...)` / `torch.split(x, ...)` (DYN404 reports those)."""
    arg, call = ctx.parent(0), ctx.parent(1)
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call) or arg.value is not node:
        return False
    q = ctx.qualify(call.func) or ""
    if q.startswith("torch.") and q[6:] in SPLITS:
        return call.args.index(arg) >= 1 or (arg.keyword is not None and arg.keyword.value in
                                             ("split_size_or_sections", "split_sizes", "indices_or_sections"))
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in SPLITS


@register
class TensorItemCall(TorchRule):
    """Checks for `.item()` on a tensor inside traced code."""
    code = "DYN201"
    name = "tensor-item-call"
    message = "`.item()` copies a tensor value to the host and breaks the graph"
    fix = "Keep the value as a 0-d tensor (drop `.item()`), or set `torch._dynamo.config.capture_scalar_outputs = True`"
    gb_types = (ITEM, DATA_OP)
    fullgraph_raises = False         # fullgraph=True silently turns on scalar capture
    why = """
        `.item()` needs the concrete value, which does not exist while Dynamo traces symbolically. With the
        default `capture_scalar_outputs=False` Dynamo ends the graph there and resumes afterwards: a host
        sync on every call and a split graph. Arithmetic on the 0-d tensor itself stays in the graph. A NumPy
        array drawn in traced code (`np.random.rand(1)`) is a tensor to Dynamo: its `.item()` breaks too
        (`Data dependent operator`).
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def scale(x):
            peak = x.abs().max().item()
            return x / peak
    """, "scale(torch.arange(1.0, 5.0))"), Example("""
        import numpy as np
        import torch

        @torch.compile
        def jitter(x):
            eps = np.random.rand(1).item()
            return x * eps
    """, "jitter(torch.ones(3))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def scale(x):
            peak = x.abs().max()
            return x / peak
    """, "scale(torch.arange(1.0, 5.0))")]

    fix_safety = "safe"
    fix_title = ("Drops `.item()` where the value only feeds arithmetic with tensors (directly, or through a local "
                 "assigned once): the 0-d tensor gives the same result, since 0-d tensors take part in type "
                 "promotion like Python numbers, and stays in the graph.")
    fix_note = ("Unsafe when the local is also returned: the caller then gets a 0-d tensor instead of a Python "
                "number. Values used any other way (`max(v, 1)`, formatting, indexing) are not fixed.")
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def scale(x):
                peak = x.abs().max().item()
                return x / peak
        """, """
            import torch

            @torch.compile
            def scale(x):
                peak = x.abs().max()
                return x / peak
        """, "scale(torch.arange(1.0, 5.0))"),
        FixExample("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def normalised_loss(logits, targets):
                loss = F.cross_entropy(logits, targets)
                scale = loss.detach().item()
                return loss / max(scale, 1.0)
        """, """
            import torch
            import torch.nn.functional as F

            @torch.compile
            def normalised_loss(logits, targets):
                loss = F.cross_entropy(logits, targets)
                scale = loss.detach()
                return loss / scale.clamp(min=1.0)
        """, "normalised_loss(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))"),
        FixExample("""
            import torch

            @torch.compile
            def accuracy(logits, labels):
                acc = (logits.argmax(-1) == labels).float().mean().item()
                return acc
        """, """
            import torch

            @torch.compile
            def accuracy(logits, labels):
                acc = (logits.argmax(-1) == labels).float().mean()
                return acc
        """, safety="unsafe"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        # a method of tensors alone (a NumPy array in traced code is a tensor to Dynamo): a receiver of unknown
        # kind counts, a known Python value does not
        if self.method_name(node) == "item" and not node.args and self.tensors.kind(self.receiver(node)) != VALUE:
            self.report(node)

    def autofix(self, node: cst.Call):
        if self.tensors.kind(self.receiver(node)) not in (TENSOR, WEAK):
            return None             # not known to be a tensor: dropping `.item()` may change what it is
        return keep_scalar_tensor(self.ctx, node, self.receiver(node), "drop `.item()`", self.receiver(node),
                                  floats_ok=self.tensors.floating(self.receiver(node)) >= FLOAT_IF_TENSOR)


@register
class PythonScalarOfTensor(TorchRule):
    """Checks for `float(t)`, `int(t)` and `bool(t)` on a tensor inside traced code."""
    code = "DYN202"
    name = "python-scalar-of-tensor"
    message = "`{fn}()` of a tensor copies its value to the host and breaks the graph"
    fix = "Keep tensor arithmetic on the tensor (e.g. `t.to(torch.float32)`), or compare with tensor ops"
    gb_types = (ITEM,)
    fullgraph_raises = False         # float()/int() are captured under fullgraph (bool() still raises)
    why = """
        `float(t)`, `int(t)` and `bool(t)` call `t.item()` under the hood: Dynamo cannot produce a Python
        number from a symbolic tensor, so it breaks the graph (`Tensor.item()`). Converting sizes
        (`int(x.shape[0])`) is fine.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def temperature(logits, t):
            return logits / float(t.mean())
    """, "temperature(torch.ones(4), torch.full((2,), 2.0))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def temperature(logits, t):
            n = int(logits.shape[0])
            return logits / t.mean() * n
    """, "temperature(torch.ones(4), torch.full((2,), 2.0))")]

    fix_safety = "safe"
    fix_title = ("`float(t)` / `int(t)` whose value only feeds arithmetic with tensors become `t.float()` / "
                 "`t.long()` (a 0-d tensor promotes like the Python number); `if bool(t): name = ...` becomes "
                 "`torch.where`, as for DYN101.")
    fix_note = ("Unsafe when the local is also returned (a 0-d tensor instead of a Python number), or for the "
                "`torch.where` and raise-guard forms where DYN101's are (see there).")
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def temperature(logits: torch.Tensor, t):
                return logits / float(t.mean())
        """, """
            import torch

            @torch.compile
            def temperature(logits: torch.Tensor, t):
                return logits / t.mean().float()
        """, "temperature(torch.ones(4), torch.full((2,), 2.0))"),
        FixExample("""
            import torch

            @torch.compile
            def mean_positive(loss, target):
                n_pos = int(target.sum())
                return loss.sum() / max(n_pos, 1)
        """, """
            import torch

            @torch.compile
            def mean_positive(loss, target):
                n_pos = target.sum().long()
                return loss.sum() / n_pos.clamp(min=1)
        """, "mean_positive(torch.ones(4), torch.tensor([0.0, 1.0, 1.0, 1.0]))",
           "mean_positive(torch.ones(4), torch.zeros(4))"),
        FixExample("""
            import torch

            @torch.compile
            def normalise(x):
                scale = x.abs().mean(dim=-1, keepdim=True)
                if bool(scale.min() < 1e-12):
                    scale = scale + 1e-12
                return x / scale
        """, """
            import torch

            @torch.compile
            def normalise(x):
                scale = x.abs().mean(dim=-1, keepdim=True)
                scale = torch.where(scale.min() < 1e-12, scale + 1e-12, scale)
                return x / scale
        """, "normalise(torch.ones(2, 3))", "normalise(torch.tensor([[1.0, -2.0], [0.0, 0.0]]))"),
    ]
    CASTS = {"float": "float", "int": "long"}

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("float", "int", "bool") and \
                len(node.args) == 1 and self.tensors.is_tensor(node.args[0].value):
            self.report(node, fn=node.func.value)

    def autofix(self, node: cst.Call):
        fn, arg = node.func.value, node.args[0].value
        if node.args[0].star or node.args[0].keyword:
            return None
        if fn in self.CASTS:
            cast = cst.Call(func=cst.Attribute(value=atom(arg), attr=cst.Name(self.CASTS[fn])))
            return keep_scalar_tensor(self.ctx, node, cast.with_changes(lpar=node.lpar, rpar=node.rpar),
                                      f"`{fn}(t)` -> `t.{self.CASTS[fn]}()`", arg, floats_ok=fn == "float")
        owner = self.ctx.parent()
        if isinstance(owner, cst.If) and owner.test is node:     # `if bool(t):` is `if t:`
            at = len(self.ctx.parents) - 1
            return raise_guard_to_assert(self.ctx, owner, at, arg) or branch_to_where(self.ctx, owner, arg, at)
        return None


@register
class TensorTolistCall(TorchRule):
    """Checks for `.tolist()` on a tensor inside traced code."""
    code = "DYN203"
    name = "tensor-tolist-call"
    message = "`.tolist()` copies a tensor to a Python list and breaks the graph"
    fix = "Keep the data as a tensor and use tensor ops; index with tensors instead of Python lists"
    gb_types = ("Tensor.tolist() with non-integer tensor", DATA_OP, ITEM)
    why = """
        `.tolist()` materialises every element on the host. For floating-point tensors Dynamo always breaks
        (`Tensor.tolist() with non-integer tensor`), even with scalar capture on; integer tensors break
        (`Data dependent operator`) unless `capture_scalar_outputs=True`. `torch.tensor(t.tolist())` round-trips through Python for
        nothing: use `t.clone()`. An integer tensor built from Python values alone (`torch.tensor([-1])`,
        `torch.as_tensor(x.shape[1:], dtype=torch.long)`) keeps its values while Dynamo traces when it has at most one element: its
        `.tolist()` does not break then, and is not reported unless the source shows two or more elements.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def rebuild(x):
            return torch.tensor(x.tolist()) * 2
    """, "rebuild(torch.ones(3))"), Example("""
        import torch

        @torch.compile
        def route(gates):
            weights = gates.sum(0)
            weights = weights.tolist()      # the name is a tensor here, a list after
            return gates * max(weights)
    """, "route(torch.ones(4, 2))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def rebuild(x):
            return x.clone() * 2
    """, "rebuild(torch.ones(3))"), Example("""
        import torch

        @torch.compile
        def flatten_rows(values):
            shape = torch.cat([torch.as_tensor([-1]), torch.as_tensor(values.size()[2:], dtype=torch.long)])
            return values.reshape(shape.tolist())
    """, "flatten_rows(torch.ones(4, 5))")]

    def visit_Call(self, node: cst.Call) -> None:
        if self.method_name(node) != "tolist" or node.args or is_split_sizes(self.ctx, node):
            return
        recv = self.receiver(node)
        if self.tensors.kind(recv) == VALUE:         # as for `.item()`: tensors (and traced arrays) alone have it
            return
        built = self.tensors.host_numel(recv)       # from Python values: breaks only past one element
        if built is None or built >= 2:
            self.report(node)


@register
class DataPtrComparison(TorchRule):
    """Checks for comparisons of `data_ptr()` values inside traced code."""
    code = "DYN204"
    name = "data-ptr-comparison"
    message = "comparing `data_ptr()` values breaks the graph"
    fix = "Compare tensors by identity (`a is b`) or track aliasing outside the compiled region"
    gb_types = ("Data pointer comparison", "Builtin `operator.*` comparison with constant `self` failed")
    why = """
        Fake tensors used while tracing have no real storage, so Dynamo cannot compare their addresses and
        breaks the graph (`Data pointer comparison`; torch 2.11 reports `Builtin operator.* comparison with
        constant self failed`). Reading `x.data_ptr()` alone does not break.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def maybe_copy(x, y):
            if x.data_ptr() == y.data_ptr():
                return x.clone()
            return x + y
    """, "maybe_copy(torch.ones(3), torch.ones(3))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def maybe_copy(x, y):
            if x is y:
                return x.clone()
            return x + y
    """, "maybe_copy(torch.ones(3), torch.ones(3))")]

    def visit_Comparison(self, node: cst.Comparison) -> None:
        sides = [node.left] + [c.comparator for c in node.comparisons]
        if sum(isinstance(s, cst.Call) and self.method_name(s) == "data_ptr" for s in sides) >= 2:
            self.report(node)


MATH_ON_TENSOR_OK = frozenset({"math.prod", "math.isclose"})


@register
class MathFunctionOnTensor(TorchRule):
    """Checks for `math.*` functions (`math.sqrt`, `math.exp`, `math.log`, `math.floor`, ...) applied to a
    tensor value."""
    code = "DYN205"
    name = "math-function-on-tensor"
    message = "`{fn}()` turns the tensor `{expr}` into a Python float: Dynamo breaks the graph"
    fix = "Use the torch function (`torch.sqrt`, `t.exp()`, `t.floor()`), which stays a tensor op"
    gb_types = (DATA_OP,)
    why = """
        The `math` module works on Python floats, so `math.sqrt(t)` first converts the tensor with
        `float(t)`, which needs its value on the host. Dynamo breaks the graph there (`Data dependent
        operator`). `math.sqrt(x.shape[-1])` on a size is fine: sizes are known while tracing.
    """
    INVALID = [Example("""
        import math

        import torch

        @torch.compile
        def rms_scale(x):
            return x / math.sqrt(x.pow(2).mean())
    """, "rms_scale(torch.ones(4))")]
    VALID = [Example("""
        import math

        import torch

        @torch.compile
        def rms_scale(x):
            head_scale = math.sqrt(x.shape[-1])
            return x / torch.sqrt(x.pow(2).mean()) / head_scale
    """, "rms_scale(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if not name.startswith("math.") or name in MATH_ON_TENSOR_OK:
            return
        pos, _ = call_args(node)
        for arg in pos:
            if self.tensors.kind(arg) == TENSOR:
                self.report(node, fn=name, expr=source_of(arg))
                return


@register
class TensorUsedAsPythonInt(TorchRule):
    """Checks for tensor values used where Python needs an `int`: `range(t)`, indexing with a 0-d tensor
    computed from data (`x[scores.argmax()]`), and indexing a Python list, tuple or string with a tensor
    (`LABELS[i]` for `i` in a tensor of ids)."""
    code = "DYN206"
    name = "tensor-used-as-python-int"
    message = "`{expr}` is a tensor used as a Python int ({where}): Dynamo needs its value and breaks the graph"
    fix = ("Keep indices as tensors (`x.index_select(0, scores.argmax(0, keepdim=True))`, `torch.gather`), "
           "or loop over a bound derived from shapes")
    gb_types = (DATA_OP, BUILTIN, ITEM)
    why = """
        `range()` and integer indexing need a real `int`, so the tensor is converted with `__index__`, which
        reads its value. Dynamo cannot do that with a symbolic tensor and breaks the graph (`Failed to trace
        builtin operator` for `range`, `Data dependent operator` for a 0-d index tensor, `Tensor.item()` for the
        index of a Python list, tuple or string, which only a one-element tensor can be). Indexing a tensor with
        a 1-d index tensor is a gather and is fine.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def pick(x, scores):
                best = scores.argmax()
                return x[best] * 2
        """, "pick(torch.ones(4, 3), torch.tensor([0.0, 2.0, 1.0, 0.0]))"),
        Example("""
            import torch

            @torch.compile
            def repeat_steps(x, steps):
                n = steps.long().sum()
                for _ in range(n):
                    x = x * 0.5
                return x
        """, "repeat_steps(torch.ones(4), torch.tensor([1.0, 2.0]))"),
        Example("""
            import torch

            LABELS = ("-", "a", "b", "c")

            @torch.compile
            def decode(ids: torch.Tensor):
                return [LABELS[i] for i in ids]        # each `i` a 0-d tensor
        """, "decode(torch.tensor([1, 2]))"),
        Example("""
            import torch

            @torch.compile
            def next_timestep(timesteps, t):
                index = (timesteps == t).nonzero(as_tuple=True)[0][0]     # an element of a 1-d tensor: 0-d
                return timesteps[index + 1]
        """, "next_timestep(torch.arange(10, 0, -1), torch.tensor(5))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def pick(x, scores):
            best = scores.argmax(dim=0, keepdim=True)
            for _ in range(x.shape[1]):
                x = x * 0.5
            return x.index_select(0, best) * 2, x[scores.argsort()]
    """, "pick(torch.ones(4, 3), torch.tensor([0.0, 2.0, 1.0, 0.0]))")]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "range" and self.call_name(node) == "range":
            for arg in call_args(node)[0]:
                if self.tensors.kind(arg) == TENSOR:
                    self.report(arg, expr=source_of(arg), where="`range()` argument")
                    return

    def visit_Subscript(self, node: cst.Subscript) -> None:
        for element in node.slice:
            sl = element.slice
            if isinstance(sl, cst.Index) and self.tensors.is_scalar(sl.value):
                self.report(sl.value, expr=source_of(sl.value), where="0-d index")
                return
            # (not by the guess that `forward`'s parameters are tensors: `LABELS[label]` reads an int as often)
            if isinstance(sl, cst.Index) and len(node.slice) == 1 and \
                    Tensors.strict_of(self.ctx).kind(sl.value) == TENSOR and self.tensors.is_sequence(node.value):
                self.report(sl.value, expr=source_of(sl.value), where="index of a Python list, tuple or string")
                return


@register
class TensorSliceBound(TorchRule):
    """Checks for slices whose bounds are tensor values: `x[:n]` with `n = lengths.max()`."""
    code = "DYN207"
    name = "tensor-slice-bound"
    message = "slice bound `{expr}` is a tensor: Dynamo reads its value with `.item()` and breaks the graph"
    fix = "Slice with sizes known while tracing (`x.shape`), or keep the full tensor and mask it (`torch.where(pos < n, x, 0)`)"
    gb_types = (ITEM,)
    fullgraph_raises = False         # fullgraph=True captures the scalar instead
    why = """
        Slice bounds must be Python ints, so a tensor bound is read with `.item()`. With the default
        `capture_scalar_outputs=False` Dynamo breaks the graph (`Tensor.item()`), and because the slice is
        in the middle of an expression it often cannot resume: the whole function then runs eagerly.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def best_prefix(scores):
            n = scores.argmax()
            return scores[:n].sum() + 1
    """, "best_prefix(torch.tensor([0.0, 1.0, 3.0, 2.0]))"), Example("""
        import torch

        @torch.compile
        def block_mask(sizes, n: int):
            mask = torch.zeros(n, n)
            ends = torch.tensor(sizes).cumsum(-1)
            starts = torch.tensor([0] + sizes[:-1]).cumsum(-1)
            for start, end in zip(starts, ends):        # 0-d tensors
                mask[start:end, start:end] = 1
            return mask
    """, "block_mask([2, 3], 5)")]
    VALID = [Example("""
        import torch

        @torch.compile
        def best_prefix(scores):
            n = scores.argmax()
            keep = torch.arange(scores.shape[0]) < n
            return torch.where(keep, scores, 0.0).sum() + 1, scores[: scores.shape[0] // 2]
    """, "best_prefix(torch.tensor([0.0, 1.0, 3.0, 2.0]))")]

    def visit_Subscript(self, node: cst.Subscript) -> None:
        for element in node.slice:
            sl = element.slice
            if isinstance(sl, cst.Slice):
                for bound in (sl.lower, sl.upper, sl.step):
                    if bound is not None and self.tensors.kind(bound) == TENSOR:
                        self.report(bound, expr=source_of(bound))
                        return
