"""What set-up code changes between two calls of a compiled function: the set of arguments (DYN505), an
attribute of the compiled module (DYN506), a global or a config attribute the compiled code reads (DYN514), a
list argument that grows (DYN507)."""
from __future__ import annotations

import re
from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.guards import effect, module_int, recompiles
from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors import TENSOR
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import children
from dynlint.rules.common import source_of
from dynlint.rules.recompiles.common import SiteBookkeeping, float_expr


def _constant(node: cst.BaseExpression) -> bool:
    """A literal number, string, bool or None: the same value each time it is evaluated."""
    node = node.expression if isinstance(node, cst.UnaryOperation) else node
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or \
        (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def _call_shape(node: cst.Call) -> Tuple[int, Tuple[str, ...], Tuple[int, ...]]:
    """(positional count, keyword names, positions/keywords passed a literal None)."""
    pos = [a for a in node.args if a.keyword is None and not a.star]
    kws = tuple(sorted(a.keyword.value for a in node.args if a.keyword is not None))
    nones = tuple(i for i, a in enumerate(node.args) if isinstance(a.value, cst.Name) and a.value.value == "None")
    return len(pos), kws, nones


@register
class ArgumentSetChangesBetweenCalls(SiteBookkeeping):
    """Checks for a compiled callable called with a different set of arguments at different call sites
    (an optional argument passed here, left out or `None` there)."""
    code = "DYN505"
    name = "argument-set-changes-between-calls"
    message = "compiled `{callee}` is called with other arguments than at line {line} ({diff}): this call recompiles"
    fix = "Call the compiled function the same way everywhere: pass optional tensors always (an all-ones mask instead of `None`), or compile one wrapper per calling convention"
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on the structure of the arguments: which ones are tensors and which are `None` or
        defaults (`expected type of 'mask' to be a tensor type, but found NoneType`). A call that leaves out
        an optional tensor, or passes `None` where another call passes a tensor, fails those guards and
        compiles a second graph.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def masked_mean(x, mask=None):
            if mask is not None:
                x = x * mask
            return x.mean()

        def evaluate(x, mask):
            full = masked_mean(x, mask)
            plain = masked_mean(x)
            return full, plain
    """, "evaluate(torch.ones(4), torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def masked_mean(x, mask=None):
            if mask is not None:
                x = x * mask
            return x.mean()

        def evaluate(x, mask):
            full = masked_mean(x, mask)
            plain = masked_mean(x, torch.ones_like(x))
            return full, plain
    """, "evaluate(torch.ones(4), torch.ones(4))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._seen = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in self.compiled_here():
            return
        if any(a.star for a in node.args):
            return
        shape = _call_shape(node)
        first = self._seen.setdefault(node.func.value, (node, shape))
        if first[1] != shape:
            line = self.ctx.position(first[0])[0]
            diff = self._describe(first[1], shape)
            self.report(node, callee=node.func.value, line=line, diff=diff)

    @staticmethod
    def _describe(a, b) -> str:
        if a[0] != b[0]:
            return f"{b[0]} positional instead of {a[0]}"
        if a[1] != b[1]:
            return f"keywords {list(b[1]) or 'none'} instead of {list(a[1]) or 'none'}"
        return "`None` in other places"


@register
class ModuleAttributeSetBetweenCalls(SiteBookkeeping):
    """Checks for a training loop (or any repeated code) that changes an int, float or bool attribute of a
    compiled module whose `forward` reads it: `model.step = step`, `model.global_step += 1`, or a call of a method of the
    module that does (`model.advance()`, a scheduler's `set_step(i)`)."""
    code = "DYN506"
    name = "module-attribute-set-between-calls"
    message = ("`{expr}` changes `{attr}`{how}, {what} attribute that the compiled `{cls}.forward` reads: "
               "Dynamo guards on its value, so {effect}")
    fix = ("Pass the value to `forward` as an argument (an int argument becomes dynamic after one recompile), or "
           "keep it in a tensor buffer updated in place (`model.step.fill_(step)`)")
    recompiles = True
    why = """
        Integer attributes of an `nn.Module` are static to Dynamo: the graph is specialised on their value
        and guarded (`self.step == 3`). Changing one between calls (a warm-up schedule's step counter set by
        the training loop) fails that guard on every new value, so the model recompiles each step until
        `recompile_limit` (8) makes it run eagerly, silently. The same int passed as an argument recompiles
        once and then becomes dynamic; a tensor buffer is a graph input and never recompiles. A float
        attribute recompiles once and is then a graph input, a bool compiles one graph per value (both
        reported, with how often). An attribute that `forward` never reads is not guarded (docs/guards.md).
    """
    INVALID = [Example("""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)
                self.step = 0

            def forward(self, x):
                warmup = min(1.0, (self.step + 1) / 100)
                return self.proj(x) * warmup

        def fit(x):
            model = torch.compile(Net())
            for step in range(10):
                model.step = step
                model(x).sum().backward()
    """, "fit(torch.ones(2, 4))")]
    VALID = [Example("""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)
                self.step = 0

            def forward(self, x):
                return self.proj(x) * 2

        def fit(x):
            model = torch.compile(Net())
            for step in range(10):
                model.step = step       # forward never reads it: not guarded
                model(x).sum().backward()
    """, "fit(torch.ones(2, 4))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._loops = 0

    def visit_For(self, node) -> None:
        self._loops += 1

    def leave_For(self, node) -> None:
        self._loops -= 1

    visit_While, leave_While = visit_For, leave_For

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        # a new value each time it runs: not a constant, in a loop or in a function (which a loop calls)
        if not _constant(node.value) and (self._loops or any(isinstance(f, cst.FunctionDef)
                                                             for f in self.ctx.functions)):
            for t in node.targets:
                self._check(node, t.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target)

    def visit_Call(self, node: cst.Call) -> None:
        """`model.advance()` in a loop, where `Net.advance` changes an int attribute forward reads."""
        func = node.func
        if not (self._loops or any(isinstance(f, cst.FunctionDef) for f in self.ctx.functions)) or \
                not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) or func.value.value == "self":
            return
        name, method = func.value.value, func.attr.value
        for path, info in self.module_classes(name):
            attrs = info.setters.get(method)
            if attrs and is_module_class(self.ctx.project, path, info.name) and \
                    self._report(node, name, attrs[0], info, f" (in `{info.name}.{method}`)"):
                return

    def _report(self, node, name: str, attr: str, info, how: str) -> bool:
        """Report the change of `name.<attr>` if the guard model says it recompiles."""
        scalar = info.scalars.get(attr)
        kind = {"float": "module float attribute", "bool": "module bool attribute"}.get(
            scalar or "", module_int(self.ctx.source or ""))
        if scalar is None or attr not in info.reads or not recompiles(kind):
            return False
        self.report(node, expr=source_of(node), attr=f"{name}.{attr}", cls=info.name, effect=effect(kind), how=how,
                    what={"int": "an int", "float": "a float", "bool": "a bool"}[scalar])
        return True

    def _check(self, node, target) -> None:
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return
        name, attr = target.value.value, target.attr.value
        if name == "self" or self.tensors.kind(node.value) == TENSOR:
            return
        for path, info in self.module_classes(name):
            if is_module_class(self.ctx.project, path, info.name) and self._report(node, name, attr, info, ""):
                return


def traced_reads(ctx, name: str) -> List[str]:
    """The traced functions of the unit's file whose source reads `name` (`SCALE`, `cfg.scale`)."""
    ix, lines = ctx.index, (ctx.source or "").splitlines()
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])(?!\s*(=(?!=)|[-+*/]=))")
    out = []
    for q in sorted(ctx.regions):
        info = ix.functions.get(q) if ix is not None else None
        if info and any(pattern.search(line) for line in lines[info.def_line:info.end]):
            out.append(q)
    return out


@register
class StateSetBetweenCalls(SiteBookkeeping):
    """Checks for set-up code that changes, between calls, a global or an attribute of a module-level object
    (a config) that compiled code reads: `global SCALE; SCALE = 0.5 + i`, `cfg.scale = 0.5 + i` before each
    call. Dynamo guards on the value it read, so the next call with a new value compiles again."""
    code = "DYN514"
    name = "state-set-between-calls"
    message = ("`{expr}` changes `{name}`, which the compiled `{func}` reads: Dynamo guards on its value, so "
               "{effect}")
    fix = ("Pass the value to the compiled function as an argument (a float becomes a graph input after one "
           "recompile), or keep it in a tensor updated in place")
    recompiles = True
    severity = "note"
    why = """
        A global or an attribute of a module-level object that compiled code reads is a constant of its
        graph, guarded (`SCALE == 1.5`). Set-up code that assigns a new value before a call (a schedule
        written into a config, a global set by a training loop) fails the guard: a float recompiles once and
        is then a graph input, an int recompiles on every new value until `recompile_limit` (8) (docs/
        guards.md, "global" and "object attribute"). Module attributes are DYN506's; state that the compiled
        code itself changes is DYN305's and DYN306's. Only values whose kind the source shows (float
        arithmetic, an int loop counter) are reported.
    """
    INVALID = [Example("""
        import torch

        SCALE = 1.0


        @torch.compile
        def scaled(x):
            return x * SCALE


        def run(x):
            global SCALE
            for step in range(4):
                SCALE = 0.5 + step
                x = scaled(x)
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch


        class Config:
            scale = 1.0


        cfg = Config()


        @torch.compile
        def scaled(x):
            return x * cfg.scale


        def run(x):
            for step in range(4):
                cfg.scale = 0.5 + step
                x = scaled(x)
            return x
    """, "run(torch.ones(3))")]
    VALID = [Example("""
        import torch


        @torch.compile
        def scaled(x, scale):
            return x * scale


        def run(x):
            for step in range(4):
                x = scaled(x, torch.tensor(0.5 + step))
            return x
    """, "run(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.declared: Set[Tuple[int, str]] = set()    # (id of the function, name) declared `global`

    def visit_Global(self, node: cst.Global) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        for n in node.names:
            self.declared.add((id(fn), n.name.value))

    def _kind(self, node) -> Optional[str]:
        """float, int or None (not known) for what an assignment makes."""
        value = node.value
        if float_expr(value):
            return "float"
        if isinstance(node, cst.AugAssign) and isinstance(value, cst.Integer):
            return "int"
        return None

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        if len(node.targets) == 1:
            self._check(node, node.targets[0].target)

    def _check(self, node, target) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        kind = self._kind(node)
        if fn is None or kind is None:
            return
        ix = self.ctx.index
        if isinstance(target, cst.Name) and (id(fn), target.value) in self.declared:
            name, what = target.value, f"global {kind}"
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and ix is not None and \
                target.value.value in ix.module_instances and not any(
                    is_module_class(self.ctx.project, p, c.name) for p, c in self.module_classes(target.value.value)):
            name, what = f"{target.value.value}.{target.attr.value}", f"object {kind} attribute set between calls"
        else:
            return
        readers = traced_reads(self.ctx, name)
        if readers and recompiles(what):
            self.report(node, expr=source_of(node), name=name, func=readers[0], effect=effect(what))


@register
class GrowingListArgument(SiteBookkeeping):
    """Checks for a list that grows between calls and is passed to a compiled function each time: a history
    appended to in the loop that calls it, or a module-level list appended to before each call."""
    code = "DYN507"
    name = "growing-list-argument"
    message = ("`{name}` grows by `{grow}` before each call of compiled `{callee}`: Dynamo guards on the length "
               "of a list argument, so every new length recompiles")
    fix = ("Pass a tensor (`torch.stack(history)`, or a preallocated buffer filled in place), or a list of a fixed "
           "length (the last k items)")
    recompiles = True
    why = """
        A list argument is unpacked into its items: Dynamo traces one graph input per element and guards on
        the list's length (`len(past) == 3`). A list that grows by one item per call fails that guard every
        time, so each call recompiles until `recompile_limit` (8), after which the function runs eagerly.
        A list created afresh with the same length each call does not recompile (docs/guards.md).
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def smooth(x, past):
            for p in past:
                x = x + 0.1 * p
            return x

        def run(x):
            history = []
            for _ in range(10):
                history.append(x)
                x = smooth(x, history)
            return x
    """, "run(torch.ones(3))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def smooth(x, past):
            for p in past:
                x = x + 0.1 * p
            return x

        def run(x):
            history = []
            for _ in range(10):
                history.append(x)
                x = smooth(x, history[-2:])      # a fixed length once it has two items
            return x
    """)]

    GROW = frozenset({"append", "extend", "insert", "appendleft"})

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._grown = {}            # list name -> (the growing call, the loop it is in or None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in self.GROW and isinstance(func.value, cst.Name):
            loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
            self._grown[func.value.value] = (func.attr.value, loops[-1] if loops else None)
            return
        if not isinstance(func, cst.Name) or func.value not in self.compiled_names():
            return
        for arg in node.args:
            name = arg.value.value if isinstance(arg.value, cst.Name) and not arg.star else None
            if name in self._grown and self._grows_between_calls(name):
                grow, _ = self._grown[name]
                self.report(arg.value, name=name, grow=f"{name}.{grow}()", callee=func.value)
                return

    def _grows_between_calls(self, name: str) -> bool:
        """Bound outside the loop that grows it (and this call is in that loop), or not bound in this function
        at all (a module-level list or a parameter: each call of the function grows it further)."""
        _, loop = self._grown[name]
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if fn is None:
            return loop is not None and loop in self.ctx.blocks
        if not self.tensors.bound_in(fn, name) or name in (p.name.value for p in fn.params.params):
            return True
        return loop is not None and loop in self.ctx.blocks and not _binds(loop, name)


def _binds(loop: cst.CSTNode, name: str) -> bool:
    """`name = ...` somewhere inside `loop` (a list made afresh on each iteration)."""
    stack = [loop]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                             for t in n.targets):
            return True
        stack.extend(children(n))
    return False
