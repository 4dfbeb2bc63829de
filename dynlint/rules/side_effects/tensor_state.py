"""Tensors and parameters handled in ways a graph cannot hold: deep copies of tensor state, `requires_grad`
changed, the backward pass run, parameters created while tracing."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors.kinds import TENSOR, VALUE
from dynlint.analysis.tensors.syntax import keyword_arg
from dynlint.linter.rule import Example, FixExample, register
from dynlint.fixes.common import SAFE, Autofix, expr
from dynlint.rules.common import TorchRule, source_of
from dynlint.rules.side_effects.common import SKIPPED


@register
class DeepcopyOfTensorState(TorchRule):
    """Checks for `copy.deepcopy` of tensors, modules, or containers holding tensors inside traced code."""
    code = "DYN304"
    name = "deepcopy-of-tensor-state"
    message = "`copy.deepcopy({expr})` copies tensors: Dynamo cannot trace it and breaks the graph"
    fix = "Copy tensors with `t.clone()` (or `{k: v.clone() for k, v in d.items()}`); copy modules once, outside the compiled code"
    gb_types = ("Attempted to copy.deepcopy a tensor", "copy.deepcopy()")
    why = """
        `copy.deepcopy` walks Python objects with `__deepcopy__` hooks and a memo dict; Dynamo does not trace
        it for tensors (`Attempted to copy.deepcopy a tensor`; torch 2.11 reports `copy.deepcopy()`), and a
        module holds tensors in its parameters: `self.net` (built in `__init__`, or kept from an `__init__`
        parameter that every construction of the class passes a module), or a parameter that every call of
        the compiled function in the file hands a module (`snap(model, x)` with `model = nn.Linear(4, 2)`).
        Public model sweeps attribute about one in eight graph
        breaks to this call. On torch 2.13 a deepcopy of plain dicts, lists or config objects without
        tensors is traced; torch 2.11 and older break on every `copy.deepcopy` (`copy.deepcopy()`), so this
        rule, which follows 2.13, misses those there.
    """
    INVALID = [
        Example("""
            import copy

            import torch

            @torch.compile
            def snapshot(x):
                before = copy.deepcopy(x)
                x.mul_(2)
                return x - before
        """, "snapshot(torch.ones(3))"),
        Example("""
            import copy

            import torch

            class EMA(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = torch.nn.Linear(4, 4)

                def forward(self, x):
                    shadow = copy.deepcopy(self.net)
                    return shadow(x)

            ema = torch.compile(EMA())
        """, "ema(torch.ones(2, 4))"),
        Example("""
            import copy

            import torch

            def snapshot_and_eval(model, x):
                frozen = copy.deepcopy(model)       # the module its callers hand in
                return frozen(x)

            def run(x):
                model = torch.nn.Linear(4, 2)
                snap = torch.compile(snapshot_and_eval)
                return snap(model, x)
        """, "run(torch.ones(2, 4))"),
        Example("""
            import copy

            import torch

            class Teacher(torch.nn.Module):
                def __init__(self, student):
                    super().__init__()
                    self.student = student          # the module its callers hand in

                def forward(self, x):
                    frozen = copy.deepcopy(self.student)
                    return frozen(x)

            teacher = torch.compile(Teacher(torch.nn.Linear(4, 4)))
        """, "teacher(torch.ones(2, 4))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def snapshot(x):
            before = x.clone()
            x.mul_(2)
            return x - before
    """, "snapshot(torch.ones(3))")]

    def _holds_tensors(self, node: cst.CSTNode) -> bool:
        if self.tensors.kind(node) == TENSOR:
            return True
        if isinstance(node, cst.Name) and self._module_passed(node.value):
            return True
        if isinstance(node, cst.Name) and node.value == "self":
            return bool(self.ctx.class_name)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return self.tensors._submodule(node.attr.value)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return any(self._holds_tensors(e.value) for e in node.elements)
        if isinstance(node, cst.Dict):
            return any(isinstance(e, cst.DictElement) and self._holds_tensors(e.value) for e in node.elements)
        return False

    def _module_passed(self, name: str) -> bool:
        """`name` is a parameter of the function being checked, and every call of it in this file (through a
        compiled alias: `snap = torch.compile(snapshot)`, `snap(model, x)`) passes a module built there (an
        `nn.*` layer or a module class of the project): its parameters are tensors."""
        ix, project, q = self.ctx.index, self.ctx.project, self.ctx.qualname or ""
        info = ix.functions.get(q) if ix is not None and project is not None else None
        params = (info.params[1:] if info and info.cls else info.params) if info else []
        if name not in params:
            return False
        i, found = params.index(name), False
        for g in ix.functions.values():
            for alias, value in g.compiled.items():
                if q not in (value, f"{g.qualname}.{value}"):
                    continue
                for c in (c for c in g.calls if c.kind == "name" and c.target == alias and i < len(c.args)):
                    ctors = g.instances.get(c.args[i]) or ix.module_instances.get(c.args[i]) or []
                    if not ctors or not all(self._module_ctor(x) for x in ctors):
                        return False
                    found = True
        return found

    def _module_ctor(self, dotted: str) -> bool:
        ix, project = self.ctx.index, self.ctx.project
        qual = ix.qualify(dotted)
        if qual.startswith("torch.nn.") and qual.rsplit(".", 1)[1][:1].isupper():
            return True
        found = project.resolve(ix, dotted)
        return bool(found and found[0] == "class" and is_module_class(project, found[1][0], found[1][1].name))

    fix_safety = "safe"
    fix_title = ("Replaces `copy.deepcopy(t)` of a local tensor `t` by `t.detach().clone().requires_grad_("
                 "t.requires_grad)`: a new leaf with the same values, dtype, device and `requires_grad`, which "
                 "Dynamo traces (it still breaks, as before, when `t` requires grad).")
    fix_note = """
        What differs from a deep copy: the copy is compact (its own storage, offset 0, rather than a copy of the
        whole storage of a view), `.grad` and Python attributes set on the tensor are not copied, and a tensor that
        requires grad but is not a leaf is copied instead of raising. Deep copies of modules, containers and
        `self.<attribute>` (parameters) are not fixed.
    """
    FIX_EXAMPLES = [
        FixExample("""
            import copy

            import torch

            @torch.compile
            def snapshot(x):
                before = copy.deepcopy(x)
                x.mul_(2)
                return x - before
        """, """
            import copy

            import torch

            @torch.compile
            def snapshot(x):
                before = x.detach().clone().requires_grad_(x.requires_grad)
                x.mul_(2)
                return x - before
        """, "snapshot(torch.arange(3.0))"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.call_name(node) == "copy.deepcopy" and node.args and self._holds_tensors(node.args[0].value):
            self.report(node, expr=source_of(node.args[0].value))

    def autofix(self, node: cst.Call):
        arg = node.args[0].value
        if len(node.args) != 1 or node.args[0].keyword or node.args[0].star or not isinstance(arg, cst.Name) or \
                self.tensors.kind(arg) != TENSOR:
            return None
        new = expr("{x}.detach().clone().requires_grad_({x}.requires_grad)", x=arg)
        return Autofix("Copy the tensor with `.detach().clone()`", SAFE,
                       ((node, new.with_changes(lpar=node.lpar, rpar=node.rpar)),))


@register
class RequiresGradMutation(TorchRule):
    """Checks for changing `requires_grad` inside traced code: `t.requires_grad = flag` and
    `t.requires_grad_()` (on tensors, parameters or whole modules)."""
    code = "DYN314"
    name = "requires-grad-mutation"
    message = "changing `requires_grad` inside compiled code breaks the graph"
    fix = "Set `requires_grad` once, before compiling (freeze parameters at construction); use `.detach()` to stop gradients inside"
    gb_types = ("setattr() on Tensor.requires_grad", "Unsupported Tensor.requires_grad_() call",
                "requires_grad_() intermediate leaked as output", "returning intermediate with requires_grad_()")
    why = """
        AOTAutograd decides which inputs need gradients before the graph runs; a graph cannot change that
        halfway. Dynamo breaks at `t.requires_grad = ...` (`setattr() on Tensor.requires_grad`) and at
        `requires_grad_()` (`Unsupported Tensor.requires_grad_() call`, or `requires_grad_() intermediate
        leaked as output` for a returned intermediate). Freezing parameters in a loop inside `forward`
        makes Dynamo skip the whole function. A tensor made inside the traced code and kept there
        (`y = x.detach().requires_grad_()` for a gradient the function takes itself) is traced.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def leaf(x):
                y = x * 2
                y.requires_grad = True
                return y
        """, "leaf(torch.ones(4))"),
        Example("""
            import torch

            class Frozen(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(4, 4)

                def forward(self, x):
                    self.proj.weight.requires_grad_(False)
                    return self.proj(x)

            model = torch.compile(Frozen())
        """, "model(torch.ones(2, 4))"),
        Example("""
            import torch

            @torch.compile
            def as_leaf(x):
                y = x * 2
                y.requires_grad_()          # an intermediate that leaves the graph as an output
                return y
        """, "as_leaf(torch.ones(4))"),
        Example("""
            import torch

            @torch.compile
            def input_grad(x):
                y = x.detach()
                y.requires_grad_(True)      # live when the graph ends at autograd.grad: an output
                (g,) = torch.autograd.grad((y * y).sum(), y)
                return g
        """, "input_grad(torch.ones(4))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def energy_grad(x):
            y = x.detach().requires_grad_()     # made here and kept inside: traced
            return (y * 3).sum().detach() + 1
    """, "energy_grad(torch.ones(4))"), Example("""
        import torch

        class Frozen(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)
                self.proj.weight.requires_grad_(False)

            def forward(self, x):
                return self.proj(x).detach() if not x.requires_grad else self.proj(x)

        model = torch.compile(Frozen())
    """, "model(torch.ones(2, 4))")]

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad":
                self.report(node)
                return

    def visit_Call(self, node: cst.Call) -> None:
        if self.method_name(node) == "requires_grad_" and not (self.call_name(node) or "").startswith("torch.") \
                and not self._kept_inside(node):
            self.report(node)

    def _kept_inside(self, node: cst.Call) -> bool:
        """`requires_grad_()` on a tensor made in the traced code (`x.detach().requires_grad_()`, a local computed
        there) that stays inside the graph: Dynamo traces it (measured: no break). An input's (a parameter's, a
        module's parameter) breaks the graph; so does an intermediate's that becomes an output of the graph:
        returned, or live across a later break (the `torch.autograd.grad(s, y)` it was made for), unless that
        break is in a loop, which skips the frame before any graph is made."""
        fn = self.ctx.functions[-1] if self.ctx.functions else None
        receiver = node.func.value
        if not isinstance(fn, cst.FunctionDef):
            return False
        if isinstance(receiver, cst.Call):
            parent = self.ctx.parent()
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and \
                    isinstance(parent.targets[0].target, cst.Name):
                return not _leaks(self, fn, parent.targets[0].target.value)
            return isinstance(parent, cst.Expr)     # (the value itself is dropped)
        if isinstance(receiver, cst.Name):
            values = self.tensors.bindings(receiver.value)
            return bool(values) and all(isinstance(v, (cst.Call, cst.BinaryOperation)) and f is None
                                        for v, f, _ in values) and not _leaks(self, fn, receiver.value)
        return False


def _leaks(rule: TorchRule, fn: cst.FunctionDef, name: str) -> bool:
    """`name` leaves `fn`'s graph: some `return` of `fn` (not of a function inside it) hands it back, alone or in a
    tuple, list or dict, or an autograd call outside any loop is given it (the graph ends there, `name` live)."""
    found = []

    def named(items) -> bool:
        return any(isinstance(i, cst.Name) and i.value == name for i in items)

    class Uses(cst.CSTVisitor):
        loops = 0

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_For(self, node: cst.For) -> None:
            self.loops += 1

        def leave_For(self, node: cst.For) -> None:
            self.loops -= 1

        visit_While, leave_While = visit_For, leave_For

        def visit_Return(self, node: cst.Return) -> None:
            value = node.value
            items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else \
                [e.value for e in value.elements if isinstance(e, cst.DictElement)] if isinstance(value, cst.Dict) \
                else [value]
            found.append(named(items))

        def visit_Call(self, node: cst.Call) -> None:
            if not self.loops and (rule.call_name(node) or "") in AUTOGRAD_CALLS:
                found.append(named(a.value for a in node.args) or any(
                    isinstance(a.value, (cst.Tuple, cst.List)) and named(e.value for e in a.value.elements)
                    for a in node.args))
    fn.visit(Uses())
    return any(found)


@register
class AutogradCallInCompiledCode(TorchRule):
    """Checks for `loss.backward()`, `torch.autograd.grad()` and `torch.autograd.backward()` inside traced
    code."""
    code = "DYN315"
    name = "autograd-call-in-compiled-code"
    message = "`{call}` runs the backward pass inside compiled code: Dynamo breaks the graph"
    fix = "Compile the forward (and loss) only and call `.backward()` outside; AOTAutograd compiles the backward for you"
    gb_types = ("Unsupported Tensor.backward() call",
                "using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`", SKIPPED)
    why = """
        torch.compile already produces the backward graph through AOTAutograd; an explicit backward inside
        the traced function cannot be captured (`Unsupported Tensor.backward() call`, `using
        torch.autograd.grad with trace_autograd_ops=False`), so the graph ends there. Compiled autograd is
        the supported way to capture the backward itself.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def train_step(x, w):
                loss = (x @ w).pow(2).mean()
                loss.backward()
                return loss.detach()
        """, "train_step(torch.ones(2, 3), torch.ones(3, 1, requires_grad=True))"),
        Example("""
            import torch

            @torch.compile
            def input_grad(x, w):
                loss = (x * w).sum()
                (g,) = torch.autograd.grad(loss, w)
                return g
        """, "input_grad(torch.ones(3), torch.ones(3, requires_grad=True))"),
        Example("""
            import torch

            class Trainer:
                def __init__(self, model, loss_fn):
                    self.model, self.loss_fn = model, loss_fn
                    self.training_step = torch.compile(self._training_step)

                def _training_step(self, x, y):
                    loss = self.loss_fn(self.model(x), y)   # a callable the trainer keeps
                    loss.backward()
                    return loss.detach()
        """, "Trainer(torch.nn.Linear(3, 2), torch.nn.functional.mse_loss).training_step(torch.ones(4, 3), "
             "torch.zeros(4, 2))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def loss_fn(x, w):
            return (x @ w).pow(2).mean()

        def train_step(x, w):
            loss = loss_fn(x, w)
            loss.backward()
            return loss.detach()
    """, "train_step(torch.ones(2, 3), torch.ones(3, 1, requires_grad=True))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if name in AUTOGRAD_CALLS:
            self.report(node, call=f"{name}()")
        elif self.method_name(node) == "backward" and self._tensor_receiver(self.receiver(node)):
            self.report(node, call=".backward()")

    def _tensor_receiver(self, receiver) -> bool:
        """`.backward()` is a tensor's method in traced code whatever the receiver's inferred kind (a loss from
        a callable the object keeps, `self.loss_fn(...)`; nn.Module has none), unless the receiver is known
        to be a Python value, is `self`, or names a class (`MyFunction.backward(ctx, g)`)."""
        if receiver is None or self.tensors.kind(receiver) == VALUE:
            return False
        return not (isinstance(receiver, cst.Name) and (receiver.value == "self" or receiver.value[:1].isupper()))


AUTOGRAD_CALLS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})     # DYN315's by name
PARAM_MODULES = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "SyncBatchNorm", "PReLU", "MultiheadAttention", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell",
    "Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer",
})
NO_PARAM_FLAGS = ("elementwise_affine", "affine")


@register
class ParameterCreatedInForward(TorchRule):
    """Checks for `nn.Parameter(...)` and parametrised layers (`nn.Linear`, `nn.LayerNorm`, `nn.Conv2d`,
    `nn.Embedding`, ...) constructed inside traced code."""
    code = "DYN316"
    name = "parameter-created-in-forward"
    message = "`{call}(...)` creates parameters while tracing: Dynamo breaks the graph"
    fix = "Create layers and parameters in `__init__` and only use them in `forward`"
    gb_types = ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo",)
    why = """
        Building an `nn.Parameter` inside traced code is not supported (`Attempted to use torch.nn.Parameter()
        constructor with Dynamo`): the graph breaks, and the new weights are re-created (freshly
        initialised, never trained) on every call. Layers without parameters (`nn.ReLU()`, `nn.Dropout()`,
        `nn.LayerNorm(..., elementwise_affine=False)`) trace fine.
    """
    INVALID = [
        Example("""
            import torch
            import torch.nn as nn

            class Head(nn.Module):
                def forward(self, x):
                    proj = nn.Linear(x.shape[-1], 2)
                    return proj(x)

            head = torch.compile(Head())
        """, "head(torch.ones(3, 4))"),
        Example("""
            import torch
            import torch.nn as nn

            class Scale(nn.Module):
                def forward(self, x):
                    gain = nn.Parameter(torch.ones(x.shape[-1]))
                    return x * gain

            scale = torch.compile(Scale())
        """, "scale(torch.ones(3, 4))"),
    ]
    VALID = [Example("""
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, dim: int):
                super().__init__()
                self.proj = nn.Linear(dim, 2)

            def forward(self, x):
                x = nn.LayerNorm(x.shape[-1], elementwise_affine=False)(x)
                return nn.Dropout(0.0)(nn.GELU()(self.proj(x)))

        head = torch.compile(Head(4))
    """, "head(torch.ones(3, 4))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            self.report(node, call="nn.Parameter")
            return
        head, _, cls = name.rpartition(".")
        if head in ("torch.nn", "torch.nn.modules") and cls in PARAM_MODULES:
            for a in node.args:
                if a.keyword and a.keyword.value in NO_PARAM_FLAGS and isinstance(a.value, cst.Name) and \
                        a.value.value == "False":
                    return
            self.report(node, call=f"nn.{cls}")


@register
class ModuleBuiltInCompiledCode(TorchRule):
    """Checks for an `nn.Module` subclass of the project built inside traced code (`Gate(x.shape[-1])` in a
    compiled function) whose `__init__` breaks (it makes parameters): Dynamo runs that `__init__` as a frame of
    its own and breaks at its `super().__init__()` call; and for a traced method that initialises its module
    again (`super().__init__()` in a `reset()`)."""
    code = "DYN618"
    name = "module-built-in-compiled-code"
    reads_breaks = True
    message = "`{cls}` is an nn.Module {how} inside compiled code: Dynamo breaks the graph at this call"
    fix = "Build the module once, in the enclosing module's `__init__` (or before compiling), and only call it here"
    gb_types = ("Uninitialized nn.Module", "Unsupported super().__init__() call")
    why = """
        Calling an `nn.Module` class in traced code runs its `__init__` under Dynamo. Where that `__init__`
        breaks the graph (an `nn.Parameter(...)` or a layer with weights, DYN316), Dynamo runs it as a frame of
        its own, and there `super().__init__()` on the new object breaks too (`Uninitialized nn.Module`); the
        module is built afresh, freshly initialised, on every call. (An `__init__` with nothing that breaks is
        inlined, measured on torch 2.13.) The finding stands in `__init__`, which the compiled code reaches
        through the construction. A traced method that initialises its module again (`super().__init__()` in a
        `reset()`) breaks the same way (`Unsupported super().__init__() call`).
    """
    INVALID = [Example("""
        import torch
        import torch.nn as nn

        class Gate(nn.Module):
            def __init__(self, dim):
                super().__init__()                  # its own frame (a parameter below breaks): breaks here
                self.weight = nn.Parameter(torch.ones(dim))

            def forward(self, x):
                return x * self.weight

        @torch.compile
        def gated(x):
            gate = Gate(x.shape[-1])
            return gate(x)
    """, "gated(torch.ones(3))"), Example("""
        import torch
        import torch.nn as nn

        class Resettable(nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0

            def reset(self):
                super().__init__()              # initialised again, from traced code
                self.calls = 0

            def forward(self, x):
                if x.shape[0] > 2:
                    self.reset()
                return x * 2

        model = torch.compile(Resettable())
    """, "model(torch.ones(3))")]
    VALID = [Example("""
        import torch
        import torch.nn as nn

        class Gate(nn.Module):
            def __init__(self, scale):
                super().__init__()
                self.scale = scale

            def forward(self, x):
                return x * self.scale

        GATE = Gate(2.0)

        @torch.compile
        def gated(x):
            return GATE(x)
    """, "gated(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._inits: list = []

    def visit_Call(self, node: cst.Call) -> None:
        func, cls = node.func, self.ctx.class_name
        if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and
                isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and
                func.value.func.value == "super") or not cls or self.ctx.project is None or \
                not is_module_class(self.ctx.project, self.ctx.path, cls):
            return
        if (self.ctx.qualname or "").endswith(f"{cls}.__init__"):
            self._inits.append((node, cls, self.ctx.qualname))     # (reported in `finish`, if it is a frame)
            return
        self.report(node, cls=cls, how="initialised again")

    def finish(self, findings) -> None:
        """A module's `__init__` reached from traced code is inlined into the graph when nothing in it breaks;
        where something does (an `nn.Parameter(...)`, a layer with weights: DYN316), Dynamo runs it as a frame
        of its own, whose `super().__init__()` breaks on the uninitialised module (measured, torch 2.13)."""
        from dynlint.linter.rule import REGISTRY
        for node, cls, qualname in self._inits:
            info = self.ctx.index.functions.get(qualname) if self.ctx.index is not None else None
            if info is not None and any(
                    info.def_line < f.line <= info.end and f.code != self.code and f.code in REGISTRY and
                    not REGISTRY[f.code].recompiles and f.gb_types for f in findings):
                self.report(node, cls=cls, how="built")


# the factories whose `requires_grad=True` Dynamo refuses inside a graph
GRAD_FACTORIES = frozenset(f"torch.{n}" for n in (
    "tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace", "logspace", "eye",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "as_tensor"))


# attributes whose value is true where Dynamo traces a training call (`self.training`) or a parameter's
# (`param.requires_grad`): a factory's `requires_grad=` set from them creates a leaf that requires grad
STATE_FLAGS = frozenset({"training", "requires_grad"})


@register
class TensorCreatedRequiringGrad(TorchRule):
    """Checks for tensor factories called with `requires_grad=True` in traced code (`torch.zeros(...,
    requires_grad=True)`, `torch.tensor(..., requires_grad=True)`)."""
    code = "DYN320"
    name = "tensor-created-requiring-grad"
    message = "`{call}` creates a leaf tensor that requires grad inside compiled code: Dynamo breaks the graph"
    fix = "Create trainable tensors in `__init__` (as `nn.Parameter`), or create it without `requires_grad` and compute with it"
    gb_types = ("Attempted to use tensor creation function with requires_grad=True",)
    why = """
        A factory called with `requires_grad=True` makes a new leaf of the autograd graph; Dynamo does not
        trace the creation of such leaves (`Attempted to use tensor creation function with requires_grad=True`)
        and breaks the graph at the call, on every call, and the tensor is a fresh leaf each time, so nothing
        learns it.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def scaled(x):
            w = torch.ones(x.shape[-1], requires_grad=True)
            return x * w
    """, "scaled(torch.randn(2, 4))"), Example("""
        import torch
        from torch import nn

        class Queries(nn.Module):
            def forward(self, x):
                q = torch.zeros_like(x, requires_grad=self.training)
                return x + q

        model = torch.compile(Queries().train())
    """, "model(torch.randn(2, 4))")]
    VALID = [Example("""
        import torch

        W = torch.ones(4, requires_grad=True)

        @torch.compile
        def scaled(x):
            return x * W
    """, "scaled(torch.randn(2, 4))")]

    def visit_Call(self, node: cst.Call) -> None:
        if (self.call_name(node) or "") not in GRAD_FACTORIES:
            return
        flag = keyword_arg(node, "requires_grad")
        if isinstance(flag, cst.Name) and flag.value == "True":
            self.report(node, call=f"{self.call_name(node)}(..., requires_grad=True)")
        elif isinstance(flag, cst.Attribute) and flag.attr.value in STATE_FLAGS:
            # a flag read from the model's state, true when Dynamo traces a training call or a parameter's
            self.report(node, call=f"{self.call_name(node)}(..., requires_grad={source_of(flag)})")
