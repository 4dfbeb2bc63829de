"""DYN3xx: Python side effects — printing, logging, I/O and other calls Dynamo cannot put in a graph."""
from __future__ import annotations

import functools

import libcst as cst

from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors import TENSOR, VALUE, WEAK
from dynlint.core.rule import Example, FixExample, register
from dynlint.core.walker import children, walk
from dynlint.fixes.buffers import counter_to_buffer
from dynlint.fixes.common import SAFE, Autofix, expr
from dynlint.fixes.guards import guard_eager_only
from dynlint.rules.common import TorchRule, source_of

BUILTIN = "Failed to trace builtin operator"
SKIPPED = "Attempted to call function marked as skipped"
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log",
                         "warning_once", "info_once", "warning_advice", "debug_once"})
LOGGER_NAMES = frozenset({"logger", "log", "_logger", "LOGGER", "LOG", "_log", "logging"})


@register
class PrintInCompiledCode(TorchRule):
    """Checks for `print(...)` inside traced code."""
    code = "DYN301"
    name = "print-in-compiled-code"
    message = "`print()` is a side effect Dynamo cannot trace: it breaks the graph"
    fix = "Remove the print, guard it with `if not torch.compiler.is_compiling():`, or print outside the compiled function"
    gb_types = (BUILTIN, "repr() on tensor")
    why = """
        Printing writes to a stream, which cannot be captured in an FX graph. Dynamo ends the graph before
        the call, runs it eagerly, and resumes in a new graph (`Failed to trace builtin operator`);
        printing a tensor also forces its value to the host. Inside a loop the whole function falls back
        to eager.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def step(x):
            y = x.relu()
            print("activation mean", y.mean())
            return y * 2
    """, "step(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def step(x):
            y = x.relu()
            return y * 2

        def run(x):
            y = step(x)
            print("activation mean", y.mean())
            return y
    """, "run(torch.ones(4))")]

    fix_safety = "safe"
    fix_title = ("Wraps the `print` statement in `if not torch.compiler.is_compiling():` (adding `import torch` if "
                 "needed): it still prints when the function runs eagerly, and Dynamo, which knows that test while "
                 "tracing, skips it without a break. When the print is the whole body of an `if` whose condition "
                 "has no side effects, the `if` goes under the guard too.")
    fix_note = "Unsafe when an argument calls user code (skipping it while compiling would skip its side effects)."
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def step(x):
                y = x.relu()
                print("activation mean", y.mean())
                return y * 2
        """, """
            import torch

            @torch.compile
            def step(x):
                y = x.relu()
                if not torch.compiler.is_compiling():
                    print("activation mean", y.mean())
                return y * 2
        """, "step(torch.ones(4))"),
        FixExample("""
            from torch import compile

            @compile
            def step(x, verbose: bool = False):
                y = x.relu()
                if verbose:  # debugging aid
                    print("activation mean", y.mean())
                return y * 2
        """, """
            import torch
            from torch import compile

            @compile
            def step(x, verbose: bool = False):
                y = x.relu()
                if not torch.compiler.is_compiling():
                    if verbose:  # debugging aid
                        print("activation mean", y.mean())
                return y * 2
        """, "step(torch.ones(4), True)"),
        FixExample("""
            import itertools

            import torch

            STEP = itertools.count()

            @torch.compile
            def step(x):
                print("step", next(STEP))
                return x * 2
        """, """
            import itertools

            import torch

            STEP = itertools.count()

            @torch.compile
            def step(x):
                if not torch.compiler.is_compiling():
                    print("step", next(STEP))
                return x * 2
        """, safety="unsafe"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print" and self.call_name(node) == "print":
            self.report(node)

    def autofix(self, node: cst.Call):
        return guard_eager_only(self.ctx, node, "the print")


@register
class LoggingInCompiledCode(TorchRule):
    """Checks for logging calls (`logger.info`, `logging.warning`, `logger.warning_once`, ...) inside traced code."""
    code = "DYN302"
    name = "logging-in-compiled-code"
    message = "logging call `{call}` breaks the graph, even when the level is disabled"
    fix = "Log outside the compiled function, or guard with `if not torch.compiler.is_compiling():`"
    gb_types = ("logging.Logger method not supported for non-export cases", "Unsupported python_type() call",
                "Unsupported method call", "Unresolved GetAttrVariable comparison", SKIPPED)
    fix_safety = "safe"
    fix_title = ("Wraps the logging statement in `if not torch.compiler.is_compiling():`: it still logs when the "
                 "function runs eagerly and is skipped, without a break, while Dynamo traces. When it is the whole "
                 "body of an `if` whose condition has no side effects, the `if` goes under the guard too (so a "
                 "check like `if not torch.isfinite(loss):` stops breaking the graph as well).")
    fix_note = "Unsafe when an argument calls user code (skipping it while compiling would skip its side effects)."
    FIX_EXAMPLES = [
        FixExample("""
            import logging

            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def step(x):
                y = x * 2
                logger.info("step done")
                return y + 1
        """, """
            import logging

            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def step(x):
                y = x * 2
                if not torch.compiler.is_compiling():
                    logger.info("step done")
                return y + 1
        """, "step(torch.ones(4))"),
        FixExample("""
            import logging

            import torch
            import torch.nn.functional as F

            logger = logging.getLogger(__name__)

            @torch.compile
            def loss_fn(logits, y):
                loss = F.cross_entropy(logits, y)
                # report, but keep training
                if not torch.isfinite(loss):
                    logger.warning("non-finite loss")
                return loss
        """, """
            import logging

            import torch
            import torch.nn.functional as F

            logger = logging.getLogger(__name__)

            @torch.compile
            def loss_fn(logits, y):
                loss = F.cross_entropy(logits, y)
                # report, but keep training
                if not torch.compiler.is_compiling():
                    if not torch.isfinite(loss):
                        logger.warning("non-finite loss")
                return loss
        """, "loss_fn(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))",
           "loss_fn(torch.full((4, 3), float('nan')), torch.tensor([0, 1, 2, 0]))"),
    ]
    why = """
        `logging.Logger` methods are not traceable. Dynamo breaks the graph at every logging call
        (`logging.Logger method not supported for non-export cases`), and a call whose level is disabled
        still breaks, because the level check itself is Python the tracer has to run.
    """
    INVALID = [Example("""
        import logging

        import torch

        logger = logging.getLogger(__name__)

        @torch.compile
        def step(x):
            y = x * 2
            logger.info("step done")
            return y + 1
    """, "step(torch.ones(4))")]
    VALID = [Example("""
        import logging

        import torch

        logger = logging.getLogger(__name__)

        @torch.compile
        def step(x):
            y = x * 2
            return y + 1

        def run(x):
            logger.info("step done")
            return step(x)
    """, "run(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in LOG_METHODS:
            return
        recv = func.value
        q = self.ctx.qualify(recv) or ""
        ix = self.ctx.index
        is_logger = q == "logging" or q.startswith("logging.") or (
            isinstance(recv, cst.Name) and (recv.value in LOGGER_NAMES or
                                            ix.qualify(ix.assigned_calls.get(recv.value, "")).endswith(
                                                ("getLogger", "get_logger")))) or (
            isinstance(recv, cst.Attribute) and recv.attr.value in LOGGER_NAMES)
        if is_logger and q != "warnings":
            self.report(node, call=source_of(func))

    def autofix(self, node: cst.Call):
        return guard_eager_only(self.ctx, node, "the logging call")


@register
class WarningsWarnInCompiledCode(TorchRule):
    """Checks for `warnings.warn(...)` inside traced code."""
    code = "DYN303"
    name = "warnings-warn-in-compiled-code"
    message = "`warnings.warn()` is skipped by Dynamo: it breaks the graph"
    fix = "Warn once outside the compiled function (e.g. at construction time)"
    gb_types = (SKIPPED,)
    why = """
        Dynamo does not trace into the `warnings` module; the call is marked as skipped, so the graph ends
        there and resumes afterwards (`Attempted to call function marked as skipped`).
    """
    INVALID = [Example("""
        import warnings

        import torch

        @torch.compile
        def act(x):
            warnings.warn("act is deprecated")
            return torch.relu(x)
    """, "act(torch.ones(4))")]
    VALID = [Example("""
        import warnings

        import torch

        @torch.compile
        def act(x):
            return torch.relu(x)

        def deprecated_act(x):
            warnings.warn("act is deprecated")
            return act(x)
    """, "deprecated_act(torch.ones(4))")]

    fix_safety = "safe"
    fix_title = ("Wraps the `warnings.warn` statement in `if not torch.compiler.is_compiling():`: eager runs still "
                 "warn, and Dynamo skips the call without a break.")
    fix_note = "Unsafe when an argument calls user code (skipping it while compiling would skip its side effects)."
    FIX_EXAMPLES = [
        FixExample("""
            import warnings

            import torch

            @torch.compile
            def act(x):
                warnings.warn("act is deprecated")
                return torch.relu(x)
        """, """
            import warnings

            import torch

            @torch.compile
            def act(x):
                if not torch.compiler.is_compiling():
                    warnings.warn("act is deprecated")
                return torch.relu(x)
        """, "act(torch.ones(4))"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.call_name(node) in ("warnings.warn", "warnings.warn_explicit"):
            self.report(node)

    def autofix(self, node: cst.Call):
        return guard_eager_only(self.ctx, node, "the warning")


UNSUPPORTED_METHOD = "Unsupported method call"
DATA_OP = "Data dependent operator"


def _calls_listed(name: str, exact, prefixes=()) -> bool:
    return name in exact or name.startswith(tuple(prefixes))


class _NamedCallRule(TorchRule):
    """A rule that reports calls of listed (qualified) names: `exact` names and every function of the
    modules in `prefixes`, minus `allowed`."""
    exact: frozenset = frozenset()
    prefixes: tuple = ()
    allowed: frozenset = frozenset()

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node)
        if not name or name in self.allowed:
            return
        if isinstance(node.func, cst.Name) and name == node.func.value and name not in self.exact:
            return                                   # a local function that happens to share a name
        if _calls_listed(name, self.exact, self.prefixes):
            self.report(node, call=name)


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
        module holds tensors in its parameters. Public model sweeps attribute about one in eight graph
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
        if isinstance(node, cst.Name) and node.value == "self":
            return bool(self.ctx.class_name)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return self.tensors._submodule(node.attr.value)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return any(self._holds_tensors(e.value) for e in node.elements)
        if isinstance(node, cst.Dict):
            return any(isinstance(e, cst.DictElement) and self._holds_tensors(e.value) for e in node.elements)
        return False

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


MUTATORS = frozenset({"append", "extend", "insert", "pop", "popleft", "appendleft", "update", "setdefault",
                      "add", "clear", "remove", "discard", "popitem"})


def _declared(fn: cst.FunctionDef, kind) -> set:
    """Names a function declares `global` (kind=cst.Global) or `nonlocal` (not counting nested defs)."""
    names = set()

    def enter(node) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not fn:
            return False
        if isinstance(node, kind):
            names.update(n.name.value for n in node.names)
        return True

    walk(fn, enter, lambda node: None)
    return names


@register
class MutableGlobalState(TorchRule):
    """Checks for traced code that mutates module-level or closure state: `global n; n += 1`, `nonlocal`
    counters, `HISTORY.append(x)`, `CACHE[key] = value` on containers the function does not own."""
    code = "DYN305"
    name = "mutable-global-state"
    message = "`{expr}` mutates {where} state: Dynamo guards on it, so calls recompile as it changes"
    fix = "Return the value and let the caller keep the state, or keep counters in a tensor buffer"
    recompiles = True
    why = """
        Dynamo does not break here: it replays the mutation after the graph and installs guards on the
        state it read (`G['COUNT'] == 3`, `len(G['HISTORY']) == 2`). The next call fails those guards and
        recompiles: a growing list or a global counter recompiles on every call until
        `recompile_limit` (8) is hit, after which the function silently runs eagerly. A `nonlocal` counter
        recompiles once, then becomes dynamic.
    """
    INVALID = [
        Example("""
            import torch

            SEEN = []

            @torch.compile
            def record(x):
                SEEN.append(x.detach())
                return x * 2
        """, "for _ in range(4): record(torch.ones(3))"),
        Example("""
            import torch

            CALLS = 0

            @torch.compile
            def counted(x):
                global CALLS
                CALLS += 1
                return x * 2
        """, "for _ in range(4): counted(torch.ones(3))"),
    ]
    VALID = [Example("""
        import torch

        SEEN = []

        @torch.compile
        def scaled(x):
            history = []
            history.append(x * 2)
            return history[-1]

        def record(x):
            y = scaled(x)
            SEEN.append(y.detach())
            return y
    """, "for _ in range(4): record(torch.ones(3))")]

    _BUILTINS = frozenset(dir(__import__("builtins")))

    def _state(self, name: str):
        fn = self.ctx.function
        if not isinstance(fn, cst.FunctionDef):
            return None
        key = ("declared", id(fn))
        if key not in self.ctx.shared:
            text = self.ctx.unit.text          # no keyword in the source, no declaration: skip the walks
            self.ctx.shared[key] = (_declared(fn, cst.Global) if "global" in text else set(),
                                    _declared(fn, cst.Nonlocal) if "nonlocal" in text else set())
        globals_, nonlocals = self.ctx.shared[key]
        if name in globals_:
            return "global"
        if self._owned_by_traced_caller(name):
            return None         # a variable of an enclosing traced function: it lives and dies with the call
        if name in nonlocals:
            return "closure"
        ix = self.ctx.index
        if self.is_local(name) or name in self._BUILTINS or (ix and (name in ix.imports or name in ix.functions
                                                                     or name in ix.classes)):
            return None
        return "module-level" if len(self.ctx.functions) <= 1 else "module-level or closure"

    def _owned_by_traced_caller(self, name: str) -> bool:
        """`name` is bound by an enclosing function that is itself traced (a nested helper's `nonlocal`)."""
        fns, traced = self.ctx.functions, self.ctx.region_depth
        for fn, is_traced in zip(fns[:-1], traced[:-1]):
            if isinstance(fn, cst.FunctionDef) and is_traced and self.tensors.bound_in(fn, name):
                return True
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if isinstance(target, cst.Name):
            where = self._state(target.value)
            if where in ("global", "closure"):
                self.report(node, expr=source_of(node), where=where)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            where = self._state(target.value.value)
            if where:
                self.report(node, expr=source_of(node), where=where)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Name) and self._state(target.value) in ("global", "closure") and \
                    self.tensors.kind(node.value) != TENSOR:
                self.report(node, expr=source_of(node), where=self._state(target.value))
                return
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                where = self._state(target.value.value)
                if where:
                    self.report(node, expr=source_of(node), where=where)
                    return

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS and isinstance(func.value, cst.Name):
            where = self._state(func.value.value)
            if where:
                self.report(node, expr=source_of(node), where=where)


@register
class ModulePythonStateMutation(TorchRule):
    """Checks for `nn.Module` methods that update Python-valued attributes while traced: `self.steps += 1`,
    `self.flag = not self.flag`, `self.history.append(...)`."""
    code = "DYN306"
    name = "module-python-state-mutation"
    message = "`{expr}` changes a Python attribute of the module: Dynamo guards on it, so every new value recompiles"
    fix = "Keep counters in a registered buffer (`self.register_buffer('steps', torch.tensor(0), persistent=False)`) or outside the module"
    recompiles = True
    fix_safety = "unsafe"
    fix_title = "Keep an integer counter in a non-persistent buffer, registered in `__init__`"
    fix_note = """
        Unsafe: code that reads the attribute gets a 0-d tensor instead of an int (`f"{model.calls}"` shows
        `tensor(3)`), and the counter moves with `model.to(device)`. Offered only for a counter: `__init__`
        sets it once, to an integer, after `super().__init__()`, and the class does nothing else with it than
        add or subtract integers (a read such as `if self.calls % 100 == 0:` would become a tensor condition
        and break the graph). `persistent=False` keeps it out of the `state_dict`, so checkpoints still load.
    """
    why = """
        Integer and bool attributes of an `nn.Module` are treated as constants: Dynamo specialises the graph
        on their value (`self.steps == 3`). Changing them inside `forward` means the next call fails the
        guard and recompiles — on every call for a counter, until `recompile_limit` (8) makes the module run
        eagerly. A list attribute that grows is guarded on its length the same way. A tensor buffer updated
        in place (`self.steps += 1` on a buffer) is traced into the graph and does not recompile.
    """
    INVALID = [
        Example("""
            import torch

            class Counter(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.calls = 0

                def forward(self, x):
                    self.calls += 1
                    return x * 2

            model = torch.compile(Counter())
        """, "for _ in range(4): model(torch.ones(3))"),
        Example("""
            import torch

            class Tracker(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norms = []

                def forward(self, x):
                    self.norms.append(x.norm().detach())
                    return x * 2

            model = torch.compile(Tracker())
        """, "for _ in range(4): model(torch.ones(3))"),
    ]
    FIX_EXAMPLES = [FixExample("""
        import torch

        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 2.0
                self.calls = 0  # how many batches it saw

            def forward(self, x):
                self.calls += 1
                return x * self.scale

        model = torch.compile(Counter())
    """, """
        import torch

        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 2.0
                self.register_buffer("calls", torch.tensor(0), persistent=False)  # how many batches it saw

            def forward(self, x):
                self.calls += 1
                return x * self.scale

        model = torch.compile(Counter())
    """, "for i in range(4): model(torch.full((3,), float(i)))", safety="unsafe")]
    VALID = [Example("""
        import torch

        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("calls", torch.zeros((), dtype=torch.long))

            def forward(self, x):
                self.calls += 1
                self.last_batch = x.shape[0]
                return x * 2

        model = torch.compile(Counter())
    """, "for _ in range(4): model(torch.ones(3))")]

    def _module_attr(self, node: cst.CSTNode):
        """`self.<attr>` in a method of an nn.Module class, not a tensor or submodule: the attribute name."""
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"):
            return None
        if not self._in_module():
            return None
        attr = node.attr.value
        if attr == "training" or self.tensors.kind(node) == TENSOR or self.tensors._submodule(attr):
            return None
        return attr

    def _in_module(self) -> bool:
        key = "in_module_class"
        if key not in self.ctx.shared:
            cls, ix, project = self.ctx.class_name, self.ctx.index, self.ctx.project
            self.ctx.shared[key] = bool(cls and ix and project and cls in ix.classes and
                                        is_module_class(project, ix.path, cls))
        return self.ctx.shared[key]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._module_attr(node.target) and self.tensors.kind(node.value) == VALUE:
            self.report(node, expr=source_of(node))

    def autofix(self, node: cst.CSTNode):
        return counter_to_buffer(self.ctx, node) if isinstance(node, cst.AugAssign) else None

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            attr = self._module_attr(t.target)
            if not attr or self.tensors.kind(node.value) == TENSOR:
                continue
            reads_itself = any(isinstance(n, cst.Attribute) and n.attr.value == attr and
                               isinstance(n.value, cst.Name) and n.value.value == "self"
                               for n in _walk(node.value))
            if reads_itself:
                self.report(node, expr=source_of(node))
                return

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS and self._module_attr(func.value):
            self.report(node, expr=source_of(node))


def _walk(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from _walk(child)


@register
class ClockReadInCompiledCode(_NamedCallRule):
    """Checks for clock and calendar reads (`time.time()`, `time.perf_counter()`, `time.sleep()`,
    `datetime.datetime.now()`) inside traced code."""
    code = "DYN307"
    name = "clock-read-in-compiled-code"
    message = "`{call}()` reads the clock: Dynamo does not trace the `time` module and breaks the graph"
    fix = "Time the compiled call from outside (`t0 = time.perf_counter(); out = model(x)`), or use the torch profiler"
    gb_types = (SKIPPED, UNSUPPORTED_METHOD)
    why = """
        The `time` module's functions are C builtins Dynamo marks as skipped (`Attempted to call function
        marked as skipped`), and `datetime.now()` is an unsupported method call: the graph ends there and
        resumes afterwards. The float read there is a constant of the resumed graph, which is guarded on it,
        so the next call recompiles too. Timing inside a compiled function also measures tracing, not the
        kernels.
    """
    INVALID = [Example("""
        import time

        import torch

        @torch.compile
        def timed(x):
            start = time.perf_counter()
            y = x.relu() * 2
            return y, time.perf_counter() - start
    """, "timed(torch.ones(4))")]
    VALID = [Example("""
        import time

        import torch

        @torch.compile
        def step(x):
            return x.relu() * 2

        def timed(x):
            start = time.perf_counter()
            y = step(x)
            return y, time.perf_counter() - start
    """, "timed(torch.ones(4))")]
    prefixes = ("time.",)
    exact = frozenset({"datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
                       "datetime.date.today"})


@register
class PythonRandomInCompiledCode(_NamedCallRule):
    """Checks for the `random` module's draws that Dynamo skips (`random.random()`, `random.gauss()`,
    `random.choice()`, `random.shuffle()`, `random.seed()`) inside traced code."""
    code = "DYN308"
    name = "python-random-in-compiled-code"
    message = "`{call}()` is skipped by Dynamo: it breaks the graph"
    fix = "Draw with torch (`torch.rand(())`, `torch.randint`, `torch.randperm`) so the randomness is in the graph, or draw outside and pass the value in"
    gb_types = (SKIPPED,)
    why = """
        Most of the `random` module is marked as skipped (`Attempted to call function marked as skipped`):
        the graph ends at the call. `random.random()` also recompiles once afterwards, because the resume
        function first guards on the drawn float. `random.randint`, `random.randrange` and
        `random.uniform` are handled specially (drawn outside the graph and passed in) and do not break.
    """
    INVALID = [
        Example("""
            import random

            import torch

            @torch.compile
            def jitter(x):
                scale = random.random()
                return x * scale
        """, "jitter(torch.ones(4))"),
        Example("""
            import random

            import torch

            @torch.compile
            def pick(x, options: list):
                return x * random.choice(options)
        """, "pick(torch.ones(4), [1.0, 2.0])"),
    ]
    VALID = [Example("""
        import random

        import torch

        @torch.compile
        def jitter(x):
            shift = random.randint(0, 3)
            scale = random.uniform(0.5, 1.5)
            return x * scale + shift + torch.rand(())
    """, "jitter(torch.ones(4))")]
    prefixes = ("random.",)
    allowed = frozenset({"random.randint", "random.randrange", "random.uniform", "random.Random",
                         "random.SystemRandom"})


@register
class SystemQueryInCompiledCode(_NamedCallRule):
    """Checks for operating-system and process queries (`os.getpid()`, `os.path.exists()`, `os.listdir()`,
    `socket.gethostname()`, `threading.get_ident()`, `glob.glob()`) inside traced code."""
    code = "DYN309"
    name = "system-query-in-compiled-code"
    message = "`{call}()` asks the operating system: Dynamo skips it and breaks the graph"
    fix = "Query once outside the compiled code (at construction time) and keep the answer as a constant"
    gb_types = (SKIPPED,)
    why = """
        These are C functions (or Python wrappers around them) that Dynamo marks as skipped (`Attempted to
        call function marked as skipped`), so the graph ends at the call. Their answers rarely change
        between calls anyway. `os.environ.get` and `os.path.join` are traced and fine.
    """
    INVALID = [Example("""
        import os

        import torch

        @torch.compile
        def maybe_dump(x):
            y = x * 2
            if os.path.exists("/tmp/dump-activations"):
                y = y + 0
            return y
    """, "maybe_dump(torch.ones(4))")]
    VALID = [Example("""
        import os

        import torch

        DUMP = os.path.exists("/tmp/dump-activations")

        @torch.compile
        def maybe_dump(x):
            y = x * 2
            if DUMP or os.environ.get("DUMP_ACTIVATIONS"):
                y = y + 0
            return y
    """, "maybe_dump(torch.ones(4))")]
    exact = frozenset({
        "os.getpid", "os.getppid", "os.getcwd", "os.listdir", "os.scandir", "os.stat", "os.lstat", "os.urandom",
        "os.cpu_count", "os.makedirs", "os.mkdir", "os.remove", "os.unlink", "os.rename", "os.walk",
        "os.getuid", "os.getlogin", "os.uname", "os.path.exists", "os.path.isfile", "os.path.isdir",
        "os.path.getsize", "os.path.getmtime", "os.path.realpath", "os.path.abspath", "os.path.islink",
        "shutil.which", "glob.glob", "socket.gethostname", "getpass.getuser", "threading.get_ident",
        "threading.current_thread", "threading.active_count", "resource.getrusage", "signal.getsignal",
        "locale.getlocale", "sys.getsizeof", "sys.getrefcount", "atexit.register",
    })


@register
class SerialisationInCompiledCode(_NamedCallRule):
    """Checks for serialisation, encoding and hashing calls (`json.dumps`, `pickle.dumps`, `hashlib.md5`,
    `base64.b64encode`, `zlib.crc32`) inside traced code."""
    code = "DYN310"
    name = "serialisation-in-compiled-code"
    message = "`{call}()` cannot be traced by Dynamo: it breaks the graph"
    fix = "Serialise outside the compiled function: return tensors and encode them in the caller"
    gb_types = (UNSUPPORTED_METHOD, SKIPPED)
    why = """
        `json` runs a C encoder whose methods Dynamo does not support (`Unsupported method call`); `pickle`,
        `hashlib`, `base64`, `binascii`, `zlib` and `csv` are C extensions Dynamo skips (`Attempted to call
        function marked as skipped`). Either way the graph ends at the call.
    """
    INVALID = [Example("""
        import json

        import torch

        @torch.compile
        def described(x, meta: dict):
            y = x * 2
            tag = json.dumps(meta)
            return y, tag
    """, "described(torch.ones(4), {'step': 1})")]
    VALID = [Example("""
        import json

        import torch

        @torch.compile
        def scaled(x):
            return x * 2

        def described(x, meta: dict):
            return scaled(x), json.dumps(meta)
    """, "described(torch.ones(4), {'step': 1})")]
    prefixes = ("json.", "pickle.", "base64.", "binascii.", "zlib.", "hashlib.", "csv.")
    exact = frozenset({"codecs.encode", "codecs.decode"})


@register
class StreamWriteInCompiledCode(_NamedCallRule):
    """Checks for writes to `sys.stdout` / `sys.stderr` (`write`, `writelines`, `flush`) inside traced code."""
    code = "DYN311"
    name = "stream-write-in-compiled-code"
    message = "`{call}()` writes to a stream: Dynamo cannot trace it and breaks the graph"
    fix = "Write from the caller, after the compiled function returns"
    gb_types = (UNSUPPORTED_METHOD,)
    why = """
        Stream objects are C-level `TextIOWrapper`s; Dynamo does not support calling their methods
        (`Unsupported method call`) and breaks the graph, exactly like `print`.
    """
    INVALID = [Example("""
        import sys

        import torch

        @torch.compile
        def progress(x):
            y = x * 2
            sys.stderr.write("step\\n")
            return y + 1
    """, "progress(torch.ones(4))")]
    VALID = [Example("""
        import sys

        import torch

        @torch.compile
        def step(x):
            return x * 2 + 1

        def progress(x):
            y = step(x)
            sys.stderr.write("step\\n")
            return y
    """, "progress(torch.ones(4))")]
    prefixes = ("sys.stdout.", "sys.stderr.", "sys.__stdout__.", "sys.__stderr__.")


@register
class DebuggerInCompiledCode(_NamedCallRule):
    """Checks for debugger entry points (`breakpoint()`, `pdb.set_trace()`) inside traced code."""
    code = "DYN312"
    name = "debugger-in-compiled-code"
    message = "`{call}()` stops in the debugger: Dynamo breaks the graph there"
    fix = "Remove it, or debug the eager function (`torch.compiler.disable`, or `TORCH_COMPILE_DISABLE=1`)"
    gb_types = (BUILTIN, SKIPPED)
    why = """
        A debugger needs a real Python frame; Dynamo cannot trace `breakpoint()` (`Failed to trace builtin
        operator`) or `pdb.set_trace()` (`Attempted to call function marked as skipped`) and breaks the
        graph, so the code you step through afterwards is a resume function, not your original frame.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def inspect_me(x):
                y = x * 2
                breakpoint()
                return y + 1
        """, "inspect_me(torch.ones(4))"),
        Example("""
            import pdb

            import torch

            @torch.compile
            def inspect_me(x):
                y = x * 2
                pdb.set_trace()
                return y + 1
        """),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def inspect_me(x):
            y = x * 2
            return y + 1
    """, "inspect_me(torch.ones(4))")]
    exact = frozenset({"breakpoint", "pdb.set_trace", "pdb.post_mortem", "pdb.pm", "pdb.run", "ipdb.set_trace",
                       "pudb.set_trace"})


@register
class FileIOInCompiledCode(_NamedCallRule):
    """Checks for file and buffer I/O (`open()`, `io.BytesIO()`, `torch.save()`, `torch.load()`) inside
    traced code."""
    code = "DYN313"
    name = "file-io-in-compiled-code"
    message = "`{call}()` does I/O Dynamo cannot trace: it breaks the graph"
    fix = "Do I/O outside the compiled function: return the tensors and save them from the caller"
    gb_types = (BUILTIN, "Unsupported context manager", UNSUPPORTED_METHOD, SKIPPED)
    why = """
        `open()` is a builtin Dynamo cannot trace (`Failed to trace builtin operator`); used as a context
        manager it also makes Dynamo skip the whole function (`Unsupported context manager`). In-memory
        buffers (`io.BytesIO`) and `torch.save`/`torch.load` break the same way (`Unsupported method call`).
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def logged(x):
                y = x.relu()
                with open("/dev/null", "a") as f:
                    f.write("ok\\n")
                return y * 2
        """, "logged(torch.ones(4))"),
        Example("""
            import io

            import torch

            @torch.compile
            def checkpointed(x):
                y = x.relu()
                torch.save(y, io.BytesIO())
                return y * 2
        """, "checkpointed(torch.ones(4))"),
    ]
    VALID = [Example("""
        import io

        import torch

        @torch.compile
        def step(x):
            return x.relu() * 2

        def checkpointed(x):
            y = step(x)
            torch.save(y, io.BytesIO())
            return y
    """, "checkpointed(torch.ones(4))")]
    exact = frozenset({"open", "io.open", "io.BytesIO", "io.StringIO", "io.FileIO", "torch.save", "torch.load",
                       "numpy.save", "numpy.load", "numpy.savetxt", "numpy.loadtxt"})


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
        makes Dynamo skip the whole function.
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
    ]
    VALID = [Example("""
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
        if self.method_name(node) == "requires_grad_" and not (self.call_name(node) or "").startswith("torch."):
            self.report(node)


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
        if name in ("torch.autograd.grad", "torch.autograd.backward"):
            self.report(node, call=f"{name}()")
        elif self.method_name(node) == "backward" and self.tensors.kind(self.receiver(node)) in (TENSOR, WEAK):
            self.report(node, call=".backward()")


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
class RngStateInCompiledCode(_NamedCallRule):
    """Checks for seeding and RNG-state calls (`torch.manual_seed()`, `torch.cuda.manual_seed_all()`,
    `torch.get_rng_state()`) inside traced code."""
    code = "DYN317"
    name = "rng-state-in-compiled-code"
    message = "`{call}()` changes the global RNG state: Dynamo skips it and breaks the graph"
    fix = "Seed once outside the compiled function, or pass a `torch.Generator` to the random ops"
    gb_types = (SKIPPED,)
    why = """
        Seeding and RNG-state functions mutate global generator state outside any graph; Dynamo marks them
        as skipped (`Attempted to call function marked as skipped`) and breaks the graph at the call.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def noisy(x):
            torch.manual_seed(0)
            return x + torch.randn_like(x)
    """, "noisy(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def noisy(x):
            return x + torch.randn_like(x)

        def reproducible(x):
            torch.manual_seed(0)
            return noisy(x)
    """, "reproducible(torch.ones(4))")]
    exact = frozenset({"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
                       "torch.cuda.manual_seed_all", "torch.get_rng_state", "torch.set_rng_state",
                       "torch.random.get_rng_state", "torch.random.set_rng_state", "torch.cuda.get_rng_state",
                       "torch.cuda.set_rng_state", "torch.random.fork_rng"})


@register
class TensorFormattedAsString(TorchRule):
    """Checks for tensors turned into strings eagerly: `str(t)`, `repr(t)` and `"%s" % t`."""
    code = "DYN318"
    name = "tensor-formatted-as-string"
    message = "`{expr}` formats a tensor's values as text: Dynamo breaks the graph"
    fix = "Format outside the compiled function, or format shapes (`tuple(t.shape)`) rather than values"
    gb_types = (BUILTIN, "repr() on tensor", "torch.* op returned non-Tensor")
    why = """
        Printing a tensor's values needs the values. Dynamo cannot trace `str()` on a tensor (`Failed to
        trace builtin operator`) or `repr()` (`repr() on tensor`), and `%`-formatting one makes it skip the
        whole function (`torch.* op returned non-Tensor`). f-strings are formatted lazily and only break
        when the text is used, which print and logging calls report themselves.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def described(x):
            y = x.softmax(-1)
            text = str(y)
            return y, text
    """, "described(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def described(x):
            y = x.softmax(-1)
            text = f"shape={tuple(y.shape)}"
            return y, text
    """, "described(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("str", "repr") and \
                self.call_name(node) in ("str", "repr") and len(node.args) == 1 and \
                self.tensors.kind(node.args[0].value) == TENSOR:
            self.report(node, expr=source_of(node))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Modulo) or \
                not isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString)):
            return
        right = node.right
        items = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
        if any(self.tensors.kind(i) == TENSOR for i in items):
            self.report(node, expr=source_of(node))


RANDOM_TRACED = frozenset({"random.randint", "random.randrange", "random.uniform"})
INT_ARGUMENT_CALLS = frozenset({"torch.rot90", "torch.roll", "torch.narrow", "range", "int", "float", "round"})
INT_ARGUMENT_METHODS = frozenset({"roll", "narrow", "view", "reshape", "expand", "repeat", "topk", "split", "chunk",
                                  "rot90", "unflatten", "tile"})


@functools.lru_cache(maxsize=4)
def _mentions_random(source: str) -> bool:
    """Every RANDOM_TRACED call needs the word somewhere in the file; asked once per file, not per unit (a
    scan of the whole file per function is quadratic in a file of many functions)."""
    return "random" in source


@register
class PythonRandomValueAsNumber(TorchRule):
    """Checks for values drawn with `random.randint`, `random.randrange` or `random.uniform` that are then
    used as Python numbers: in arithmetic with non-tensors, as indices or slice bounds, as int arguments
    (`torch.rot90(x, k)`, `x.roll(shift)`), or in a branch condition."""
    code = "DYN319"
    name = "python-random-value-as-number"
    message = "`{name}` comes from `{source}()`, which Dynamo turns into a graph input: {use} breaks the graph"
    fix = "Use the drawn value only in tensor arithmetic (`x * scale`, `x + shift`), or draw with torch (`torch.randint(0, 4, ())`) and keep it a tensor"
    gb_types = ("unimplemented builtin op on tensor arguments", "Unsupported Tensor.item() call with "
                "capture_scalar_outputs=False", DATA_OP, "Data-dependent branching", "constant fold exception")
    why = """
        Dynamo does not bake `random.randint(...)`, `random.randrange(...)` or `random.uniform(...)` into
        the graph: it draws the number outside and passes it in as a 0-d tensor input, so `x * scale` stays
        correct on every call. That value is not a Python number while tracing, though. Arithmetic with
        other Python numbers (`1 + shift`) fails (`unimplemented builtin op on tensor arguments`); indices,
        slice bounds and int arguments (`torch.rot90(x, k)`, `x.roll(shift)`) need its value (`Data
        dependent operator`, `Tensor.item()`); so does a branch on it. Each breaks the graph.
    """
    INVALID = [
        Example("""
            import random

            import torch

            @torch.compile
            def random_rotate(images):
                k = random.randint(0, 3)
                return torch.rot90(images, k, dims=(-2, -1))
        """, "random_rotate(torch.ones(2, 3, 4, 4))"),
        Example("""
            import random

            import torch

            @torch.compile
            def random_gain(x):
                gain = random.uniform(0.5, 1.5)
                return x * (1.0 + gain)
        """, "random_gain(torch.ones(4))"),
    ]
    VALID = [Example("""
        import random

        import torch

        @torch.compile
        def random_gain(x):
            gain = random.uniform(0.5, 1.5)
            shift = random.randint(0, 3)
            return x * gain + shift
    """, "random_gain(torch.ones(4))")]

    def _source(self, name: str):
        values = self.tensors.assigned_values(name)
        if not values:
            return None
        sources = {self.call_name(v) if isinstance(v, cst.Call) else None for v in values}
        return sources.pop() if len(sources) == 1 and sources <= RANDOM_TRACED else None

    def visit_Name(self, node: cst.Name) -> None:
        if not _mentions_random(self.ctx.source):
            return
        parent = self.ctx.parent()
        if isinstance(parent, (cst.AssignTarget, cst.Param)) or \
                (isinstance(parent, cst.Attribute) and parent.attr is node) or \
                (isinstance(parent, cst.Call) and parent.func is node) or isinstance(parent, cst.Arg) and \
                parent.keyword is node:
            return
        source = self._source(node.value)
        if not source:
            return
        use = self._bad_use(node)
        if use:
            self.report(node, name=node.value, source=source, use=use)

    def _bad_use(self, node: cst.Name):
        parents = self.ctx.parents
        parent = parents[-1] if parents else None
        if isinstance(parent, cst.BinaryOperation):
            other = parent.right if parent.left is node else parent.left
            return None if self.tensors.kind(other) in (TENSOR, WEAK) else "arithmetic with a Python number"
        if isinstance(parent, (cst.Index, cst.Slice)):
            return "indexing with it"
        if isinstance(parent, cst.Arg) and len(parents) > 1 and isinstance(parents[-2], cst.Call):
            call = parents[-2]
            name = self.call_name(call) or ""
            method = self.method_name(call)
            if name in INT_ARGUMENT_CALLS or (method in INT_ARGUMENT_METHODS and not name.startswith("random.")):
                return f"passing it to `{source_of(call.func)}()` as an int"
        if isinstance(parent, cst.Comparison):
            top = parents[-2] if len(parents) > 1 else None
            if isinstance(top, (cst.If, cst.While, cst.IfExp)) and top.test is parent:
                return "branching on it"
        return None
