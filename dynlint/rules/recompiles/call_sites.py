"""What set-up code changes between two calls of a compiled function: the set of arguments (DYN505), an
attribute of the compiled module (DYN506), a global or a config attribute the compiled code reads (DYN514), a
list argument that grows (DYN507)."""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.guards import effect, module_int, recompiles
from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors import TENSOR
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import children, descendants
from dynlint.rules.common import source_of
from dynlint.analysis import guard_lines
from dynlint.rules.recompiles.common import (SiteBookkeeping, bound_parameter, call_bindings, float_expr,
                                            parameter_names)


def _constant(node: cst.BaseExpression) -> bool:
    """A literal number, string, bool or None: the same value each time it is evaluated."""
    node = node.expression if isinstance(node, cst.UnaryOperation) else node
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or \
        (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def _structure(node: Optional[ast.expr]) -> Optional[str]:
    """What Dynamo guards on in an argument's structure, as a phrase: `None`, a list display's length, a dict
    display's keys, "a constant" (a literal number, string or bool: its value is DYN508's), "a value" for
    anything else that is passed (a tensor, a name)."""
    if isinstance(node, ast.Constant) and node.value is None:
        return "`None`"
    if isinstance(node, ast.Constant):
        return "a constant"             # its value against another constant's is DYN508's
    if isinstance(node, ast.List) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return f"a list of {len(node.elts)}"
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return "a dict with keys " + ", ".join(repr(k.value) for k in node.keys) if node.keys else "an empty dict"
    return "a value"


def _differ(a: str, b: str) -> bool:
    """Two structures that fail each other's guards: `None` and anything else, lists of two lengths, dicts of
    two key sets. Values (tensors, names) and constants are alike here: their types are not known, and two
    constants are compared by DYN508."""
    kinds = {a, b}
    return a != b and ("`None`" in kinds or not kinds & {"a value", "a constant"})


def _structures(ctx, callee: str, entry: str, span=None) -> List[Tuple[int, int, dict]]:
    """An analysis: per call of `callee` (line, column, {parameter: structure}), defaults included."""
    out = []
    for line, col, given in call_bindings(ctx, callee, entry, span):
        found = {p: _structure(e) for p, (e, _) in given.items()}
        out.append((line, col, {p: v for p, v in found.items() if v is not None}))
    return out


@register
class ArgumentSetChangesBetweenCalls(SiteBookkeeping):
    """Checks for a compiled callable whose call sites pass a different structure for the same parameter: an
    optional argument passed here, left out (a `None` default) or `None` there; list displays of different
    lengths; dict displays with different keys."""
    code = "DYN505"
    name = "argument-set-changes-between-calls"
    message = ("compiled `{callee}` gets {this} for `{param}` at line {line} and {other} at line {other_line}: "
               "Dynamo guards on {what}, so the second call compiles again")
    fix = "Call the compiled function the same way everywhere: pass optional tensors always (an all-ones mask instead of `None`), a tensor instead of a list whose length changes, or compile one wrapper per calling convention"
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on the structure of the arguments, at the first line of the compiled function that
        reads each one: which are tensors and which are `None` (`mask is None`), the length of a list
        (`len(xs) == 2`), the keys of a dict (`'clip' in opts`). A call that leaves out an optional tensor, or
        passes `None` where another call passes a tensor, a list of another length or a dict with other keys,
        fails those guards and compiles a second graph. The finding stands at that guard, the line Dynamo's
        recompile log names; the calls are its related locations.
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
    """, "evaluate(torch.ones(4), torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def stack_all(xs):
            return torch.stack(xs).sum(0)

        def run(x):
            return stack_all([x, x]), stack_all([x, x, x])
    """, "run(torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def update(w, opts):
            clip = opts.get("clip")
            if clip is not None:
                w = w.clamp(-clip, clip)
            return w * 0.9

        def run(w):
            return update(w, {}), update(w, {"clip": 1.0})
    """, "run(torch.ones(4))")]
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
    """, "evaluate(torch.ones(4), torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def stack_all(xs):
            return torch.stack(xs).sum(0)

        def run(x, y):
            return stack_all([x, y]), stack_all([y, x])       # two items each time
    """, "run(torch.ones(4), torch.zeros(4))")]

    WHAT = {"`None`": "whether it is `None`", "list": "the length of a list", "dict": "the keys of a dict"}

    def visit_Call(self, node: cst.Call) -> None:
        compared = self.calls_compared(node, _structures)
        if compared is None:
            return
        callee, entry, here, mine, calls = compared
        line = here[0]
        for param, this in mine.items():
            other = next(((ln, col, b[param]) for ln, col, b in calls
                          if (ln, col) < here and param in b and _differ(b[param], this)), None)
            if other is None or not self.reads(entry, param):
                continue
            other_line, other_col, that = other
            what = next(w for k, w in self.WHAT.items() if k in this or k in that)
            # compiled for a value first (a tensor), Dynamo guards on its type, a guard with no source line
            # (the function's first line); compiled for `None` first, at the read that tests it
            guarded = None if that == "a value" else param
            self.report_at_guard(node, entry, guarded, f"{this} is passed for `{param}` here",
                                 also=[(other_line, other_col, f"{that} is passed for `{param}` here")],
                                 callee=callee, this=this, param=param, line=line, other=that,
                                 other_line=other_line, what=what)
            return


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
        # a new value each time it runs: not a constant, in a loop or in a function (which a loop calls); or a
        # constant set between two calls
        in_function = any(isinstance(f, cst.FunctionDef) for f in self.ctx.functions)
        if (not _constant(node.value) and (self._loops or in_function)) or \
                (_constant(node.value) and self.between_calls(node, constant=True)):
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
                    self._report(node, name, attrs[0], path, info, f" (in `{info.name}.{method}`)"):
                return

    def _report(self, node, name: str, attr: str, path: str, info, how: str) -> bool:
        """Report the change of `name.<attr>` if the guard model says it recompiles."""
        scalar = info.scalars.get(attr)
        kind = {"float": "module float attribute", "bool": "module bool attribute"}.get(
            scalar or "", module_int(self.ctx.source or ""))
        if scalar is None or attr not in info.reads or not recompiles(kind):
            return False
        reader = f"{info.name}.forward" if path == self.ctx.path else None
        self.report_at_guard(node, reader, f"self.{attr}", f"`{name}.{attr}` changes here", at_entry=False,
                             expr=source_of(node), attr=f"{name}.{attr}", cls=info.name, effect=effect(kind), how=how,
                             what={"int": "an int", "float": "a float", "bool": "a bool"}[scalar])
        return True

    def _check(self, node, target) -> None:
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return
        name, attr = target.value.value, target.attr.value
        if name == "self" or self.tensors.kind(node.value) == TENSOR:
            return
        for path, info in self.module_classes(name):
            if is_module_class(self.ctx.project, path, info.name) and self._report(node, name, attr, path, info, ""):
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
    """Checks for set-up code that changes, between calls, a global, a closure cell or an attribute of a
    module-level object (a config) that compiled code reads: `global SCALE; SCALE = 0.5 + i`, `cfg.scale = 0.5 + i`, `CONFIG["scale"] = 0.5 + i` before each
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
        guards.md, "global" and "object attribute"); an item of a module-level dict or list is guarded the
        same way, where the compiled code first looks its key up (`G['CONFIG']['scale'] == 1.0`). The change can also be a call, between two calls, of a
        function of the file that assigns such state (a setter: `set_fast_path(True)` with `global
        _USE_FAST_PATH` inside), including an attribute of a compiled module. Module attributes set directly
        are DYN506's; state that the compiled code itself changes is DYN305's and DYN306's. Only values whose
        kind the source shows (float arithmetic, an int loop counter, a bool flag set between two calls) are
        reported. The finding stands at the read that installs the guard; the change is its related location.
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
    """, "run(torch.ones(3))"), Example("""
        import torch

        CONFIG = {"scale": 1.0, "shift": 1}


        @torch.compile
        def scaled(x):
            return x * CONFIG["scale"] + CONFIG["shift"]


        def run(x):
            for step in range(4):
                CONFIG["scale"] = 0.5 + step
                x = scaled(x)
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch


        def make_stepper():
            count = 0

            @torch.compile
            def body(x):
                return x + count

            def step(x):
                nonlocal count
                out = body(x)
                count += 1
                return out

            return step


        def run(x):
            step = make_stepper()
            for _ in range(3):
                x = step(x)
            return x
    """, "run(torch.zeros(3))")]
    VALID = [Example("""
        import torch


        @torch.compile
        def scaled(x, scale):
            return x * scale


        def run(x):
            for step in range(4):
                x = scaled(x, torch.tensor(0.5 + step))
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch

        CONFIG = {"scale": 1.0}


        @torch.compile
        def scaled(x):
            return x * CONFIG["scale"]


        def run(x):
            CONFIG["scale"] = 2.0
            for _ in range(4):
                x = scaled(x)
            return x
    """, "run(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.declared: Set[Tuple[int, str]] = set()    # (id of the function, name) declared `global`
        self.cells: Set[Tuple[int, str]] = set()       # ... declared `nonlocal`

    def visit_Global(self, node: cst.Global) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        for n in node.names:
            self.declared.add((id(fn), n.name.value))

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        """A closure cell the function changes (`nonlocal count; count += 1` after calling a compiled function
        of the same closure that reads `count`): Dynamo guards on the cell's value."""
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        for n in node.names:
            self.cells.add((id(fn), n.name.value))

    def _kind(self, node, fn: cst.FunctionDef, target) -> Optional[str]:
        """float, int, bool or None (not known) for what an assignment makes. A bool constant changes the value
        only between two calls of compiled code (it is set once otherwise); a parameter of the function (a
        setter, `set_debug(on)`) changes it whenever that is called, with the kind of the global's first value."""
        value = node.value
        if float_expr(value):
            return "float"
        if isinstance(node, cst.AugAssign) and isinstance(value, cst.Integer):
            return "int"
        if isinstance(node, cst.AugAssign):
            return None
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return "bool" if self.between_calls(node, constant=True) else None
        if isinstance(value, (cst.Comparison, cst.BooleanOperation)) or \
                (isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not)):
            return "bool"
        if isinstance(value, cst.Name) and value.value in parameter_names(fn) and isinstance(target, cst.Name):
            return _first_value_kind(self.ctx.source or "", target.value)
        return None

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        if len(node.targets) == 1:
            self._check(node, node.targets[0].target)

    def _check(self, node, target) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        kind = self._kind(node, fn, target) if fn is not None else None
        if kind is None:
            return
        ix = self.ctx.index
        if isinstance(target, cst.Name) and (id(fn), target.value) in self.declared:
            name, what = target.value, f"global {kind}"
        elif isinstance(target, cst.Name) and (id(fn), target.value) in self.cells and kind == "int":
            name, what = target.value, "closure int"
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and ix is not None and \
                target.value.value in ix.module_instances and not any(
                    is_module_class(self.ctx.project, p, c.name) for p, c in self.module_classes(target.value.value)):
            name, what = f"{target.value.value}.{target.attr.value}", f"object {kind} attribute set between calls"
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and ix is not None and \
                target.value.value in ix.imports and kind in ("bool", "float", "int"):
            # an imported module's attribute (`settings.DEBUG = True`): guarded as a global is
            name, what = f"{target.value.value}.{target.attr.value}", f"global {kind}"
        elif isinstance(target, cst.Subscript):
            self._check_item(node, fn, target, kind)
            return
        else:
            return
        readers = traced_reads(self.ctx, name)
        if readers and recompiles(what):
            self.report_at_guard(node, readers[0], name, f"`{name}` changes here", at_entry=False,
                                 expr=source_of(node), name=name, func=readers[0], effect=effect(what))

    def _check_item(self, node, fn: cst.FunctionDef, target: cst.Subscript, kind: str) -> None:
        """An item of a module-level dict or list (`CONFIG["scale"] = 0.5 + step`) set between two calls:
        Dynamo guards the item it read as it guards a global (`G['CONFIG']['scale'] == 1.0`), where the
        compiled code first looks it up."""
        key = _constant_key(target)
        if key is None or not isinstance(target.value, cst.Name) or not self.between_calls(node):
            return
        name = target.value.value
        if name in parameter_names(fn) or name not in _module_level_names(self.ctx.source or "") or \
                _binds(fn, name):
            return
        what = f"global {kind}"
        source = self.ctx.source or ""
        ix = self.ctx.index
        for reader in traced_reads(self.ctx, name):
            info = ix.functions.get(reader) if ix is not None else None
            tree = guard_lines.function_at(source, info.def_line) if info is not None else None
            span = guard_lines.key_read(source, tree, name, key) if tree is not None else None
            if span is not None and recompiles(what):
                line, col = self.ctx.position(node)[:2]
                label = f"{name}[{key!r}]"
                self.ctx.report(self, node, self.format_message(
                    expr=source_of(node), name=label, func=reader, effect=effect(what)), at=span,
                    related=[(line, col, f"`{label}` changes here")])
                return

    def visit_Call(self, node: cst.Call) -> None:
        """`set_fast_path(True)` between two calls, where the file's `set_fast_path` assigns a global (or an
        attribute of a module-level object) that compiled code reads: the state changes there."""
        func = node.func
        if not isinstance(func, cst.Name) or func.value in self.compiled_names() or func.value in self.ctx.regions \
                or not self.between_calls(node):
            return                      # (state that compiled code changes itself is DYN305's and DYN306's)
        setter = guard_lines.top_function(guard_lines.parsed(self.ctx.source or ""), func.value)
        for name, kind in _state_set_by(self.ctx.source or "", setter) if setter is not None else ():
            obj, _, attr = name.partition(".")
            entry = self.compiled_entry(obj) if attr else None
            if entry is not None:               # `scaler.temperature = t` on a compiled module: forward reads it
                reader, read = entry, f"self.{attr}"
            else:
                readers = traced_reads(self.ctx, name)
                reader, read = (readers[0], name) if readers else (None, None)
            what = f"global {kind}" if kind and not attr else None
            if reader is None or (what and not recompiles(what)) or \
                    self.guard_span(reader, read, at_entry=False) is None:
                continue
            self.report_at_guard(node, reader, read, f"`{func.value}(...)` changes `{name}` here", at_entry=False,
                                 expr=source_of(node), name=name, func=reader.split(".")[0],
                                 effect=effect(what) if what else "the next call compiles again")
            return


def _state_set_by(source: str, fn: ast.FunctionDef) -> List[Tuple[str, Optional[str]]]:
    """(name, kind of its first value) of the module state a function assigns: the globals it declares and
    assigns, and attributes of module-level names (`scaler.temperature = t`)."""
    declared = {n for st in ast.walk(fn) if isinstance(st, ast.Global) for n in st.names}
    local = {a.arg for a in fn.args.args} | {t.id for st in ast.walk(fn) if isinstance(st, ast.Assign)
                                             for t in st.targets if isinstance(t, ast.Name)} - declared
    out = []
    for st in ast.walk(fn):
        for t in st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AugAssign) else []:
            if isinstance(t, ast.Name) and t.id in declared:
                out.append((t.id, _first_value_kind(source, t.id)))
            elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id not in local:
                out.append((f"{t.value.id}.{t.attr}", None))
    return out


def _constant_key(target: cst.Subscript) -> object:
    """The constant key of `d["k"]` / `d[0]` (None for a slice, a computed key, several)."""
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return None
    value = target.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value
    if isinstance(value, cst.Integer):
        return int(value.value, 0)
    return None


def _module_level_names(source: str) -> Set[str]:
    """Names a module binds at its top level with a plain assignment."""
    tree = guard_lines.parsed(source)
    return {t.id for st in (tree.body if tree is not None else ()) if isinstance(st, ast.Assign)
            for t in st.targets if isinstance(t, ast.Name)}


def _first_value_kind(source: str, name: str) -> Optional[str]:
    """"bool", "int" or "float" for a global whose module-level assignment is a literal of that type."""
    tree = guard_lines.parsed(source)
    for stmt in tree.body if tree is not None else ():
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets) \
                and isinstance(stmt.value, ast.Constant):
            return {bool: "bool", int: "int", float: "float"}.get(type(stmt.value.value))
    return None


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
        loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
        info = self.ctx.index.functions.get(self.compiled_entry(func.value) or "") if self.ctx.index else None
        for arg in node.args:
            name = arg.value.value if isinstance(arg.value, cst.Name) and not arg.star else None
            if name is not None and name not in self._grown and loops:
                # grown later in the loop's body: that runs before the loop's next call
                grown = _grown_in(loops[-1], name, self.GROW)
                if grown:
                    self._grown[name] = (grown, loops[-1])
            param = bound_parameter(info, node, arg) if info else None
            if name in self._grown and self._grows_between_calls(name) and \
                    self.reads(self.compiled_entry(func.value), param):
                grow, _ = self._grown[name]
                self.report_at_guard(arg.value, self.compiled_entry(func.value), param, f"`{name}` is passed here",
                                     name=name, grow=f"{name}.{grow}()", callee=func.value)
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


def _grown_in(loop: cst.CSTNode, name: str, grow: frozenset) -> Optional[str]:
    """The method that grows list `name` somewhere inside `loop` (`name.append(...)`), if any."""
    stack = [loop]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in grow and \
                isinstance(n.func.value, cst.Name) and n.func.value.value == name:
            return n.func.attr.value
        stack.extend(children(n))
    return None


def _binds(node: cst.CSTNode, name: str) -> bool:
    """`name = ...` somewhere inside `node` (a loop: a list made afresh on each iteration; a function: its
    local)."""
    return any(isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                 for t in n.targets) for n in descendants(node))


FACTORIES = frozenset({"ones", "zeros", "empty", "rand", "randn", "full", "tensor", "eye", "arange"})
CASTS = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
         "int": "int32", "bool": "bool"}


def _depth(node: ast.AST) -> int:
    """The rank of `torch.tensor(data)` from its nested list displays."""
    return 1 + _depth(node.elts[0]) if isinstance(node, (ast.List, ast.Tuple)) and node.elts else \
        (1 if isinstance(node, (ast.List, ast.Tuple)) else 0)


def _data_dtype(node: ast.AST) -> str:
    leaves = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)]
    if leaves and all(type(v) is bool for v in leaves):
        return "bool"
    return "float32" if any(type(v) is float for v in leaves) else "int64"


def tensor_metadata(node: ast.AST, resolve=lambda name: None) -> Optional[dict]:
    """What Dynamo guards on a tensor that a torch factory makes (`torch.ones(2, 3, dtype=torch.float64)`,
    `torch.tensor([[1.0]])`, `.double()` / `.requires_grad_()` after it): dtype, rank, `requires_grad`, device;
    None for anything else (its metadata is not known here). `resolve(name)`: the expression a local name was
    last bound to, for a cast of a name (`data.double()`)."""
    chain = []
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            (node.func.attr in CASTS or node.func.attr == "requires_grad_") and not node.args:
        chain.append(node.func.attr)
        node = node.func.value
    if isinstance(node, ast.Name) and chain:
        node = resolve(node.id)
    meta = _factory_metadata(node)
    for step in reversed(chain if meta else ()):
        meta.update({"requires_grad": True} if step == "requires_grad_" else {"dtype": CASTS[step]})
    return meta


def _factory_metadata(node: Optional[ast.AST]) -> Optional[dict]:
    """The metadata of a tensor a torch factory call makes, as `tensor_metadata` says."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
            isinstance(node.func.value, ast.Name) and node.func.value.id == "torch" and node.func.attr in FACTORIES):
        return None
    kind, args = node.func.attr, node.args
    kws = {k.arg: k.value for k in node.keywords if k.arg}
    if any(isinstance(a, ast.Starred) for a in args) or (kind != "tensor" and not args):
        return None
    rank, dtype = _rank_and_dtype(kind, args)
    dt, grad, device = kws.get("dtype"), kws.get("requires_grad"), kws.get("device")
    if dt is not None:
        dtype = dt.attr if isinstance(dt, ast.Attribute) and guard_lines.dotted(dt.value) == "torch" else None
    dims = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
    sizes = tuple(_constant_of(d, int) for d in dims) if kind not in ("tensor", "arange", "full", "eye") else None
    return {"dtype": dtype, "rank": rank, "sizes": sizes if sizes and None not in sizes else None,
            "requires_grad": False if grad is None else _constant_of(grad, bool),
            "device": "cpu" if device is None else _constant_of(device, str)}


def _rank_and_dtype(kind: str, args: list) -> Tuple[Optional[int], Optional[str]]:
    if kind == "tensor":
        return _depth(args[0]), _data_dtype(args[0])
    if kind == "eye":
        return 2, "float32"
    if kind == "arange":            # `torch.arange(6.0)`: float32; all-int bounds: int64
        consts = [a.value for a in args if isinstance(a, ast.Constant)]
        return 1, (None if len(consts) < len(args) else
                   "float32" if any(type(v) is float for v in consts) else "int64")
    first = args[0]
    if isinstance(first, (ast.Tuple, ast.List)):
        return len(first.elts), ("float32" if kind != "full" else None)
    return (None if kind == "full" else len(args)), ("float32" if kind != "full" else None)


def _constant_of(node: ast.AST, kind: type):
    return node.value if isinstance(node, ast.Constant) and type(node.value) is kind else None


def _tensor_arguments(ctx, callee: str, entry: str, span=None) -> List[Tuple[int, int, dict]]:
    """An analysis: per call of `callee` (line, column, {parameter: tensor metadata}) for the arguments a torch
    factory makes, at the call or in the last assignment of the name passed."""
    tree = guard_lines.parsed(ctx.source or "")
    out = []
    for line, col, given in call_bindings(ctx, callee, entry, span):
        metas = {}
        for param, (expr, passed) in given.items():
            def resolve(name: str, line: int = line):
                return guard_lines.last_binding(tree, name, line) if tree is not None else None
            if passed and isinstance(expr, ast.Name):
                expr = resolve(expr.id) or expr
            meta = tensor_metadata(expr, resolve) if passed else None
            if meta is not None:
                metas[param] = meta
        out.append((line, col, metas))
    return out


@register
class TensorMetadataDiffersBetweenCalls(SiteBookkeeping):
    """Checks for a compiled callable whose call sites pass, for the same parameter, tensors of another dtype,
    rank, device or `requires_grad` (made by torch factories the code shows: `torch.ones(4)` here,
    `torch.ones(4, dtype=torch.float64)` there), or of other sizes when it is compiled with `dynamic=False`."""
    code = "DYN516"
    name = "tensor-metadata-differs-between-calls"
    message = ("compiled `{callee}` gets a {this} tensor for `{param}` at line {line} and a {other} one at line "
               "{other_line}: Dynamo guards on each tensor argument's {what}, so the second call compiles again")
    fix = ("Convert inputs to one dtype and rank before the call (`x.float()`, `x.reshape(...)`), or keep separate "
           "compiled functions for the variants")
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on every tensor argument's dtype, rank, device and `requires_grad` (`tensor 'x' dtype
        mismatch. expected Float, actual Double`). A call with a tensor that differs in any of them fails the
        guard and compiles another graph; each combination keeps its own. These guards carry no source line:
        Dynamo's recompile log names the compiled function's first line (its first decorator, or its `def`),
        where the finding stands; the calls are its related locations. Sizes are compared only under
        `dynamic=False` (every new size compiles again): otherwise a first new size recompiles once and
        becomes dynamic, the expected cost of a new input (DYN703 covers sizes that follow a loop).
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def norm(x):
            return x / x.norm()

        def run():
            return norm(torch.ones(4)), norm(torch.ones(4, dtype=torch.float64))
    """, "run()"), Example("""
        import torch

        @torch.compile
        def total(x):
            return x.sum() * 2

        def run():
            row = torch.ones(4)
            grid = torch.ones(4, 4)
            return total(row), total(grid)
    """, "run()"), Example("""
        import torch

        @torch.compile
        def loss_fn(w):
            return (w * w).sum()

        def run():
            return loss_fn(torch.ones(4)), loss_fn(torch.ones(4, requires_grad=True))
    """, "run()"), Example("""
        import torch


        def smooth(x):
            return (x + x.roll(1)) * 0.5


        fast = torch.compile(smooth, dynamic=False)


        def run():
            return fast(torch.ones(4)), fast(torch.ones(6))
    """, "run()")]
    VALID = [Example("""
        import torch

        @torch.compile
        def norm(x):
            return x / x.norm()

        def run():
            a = norm(torch.ones(4))
            b = norm(torch.ones(4, dtype=torch.float64).float())
            return a, b
    """, "run()"), Example("""
        import torch

        @torch.compile
        def total(x):
            return x.sum() * 2

        def run():
            return total(torch.zeros(4)), total(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    """, "run()")]

    WHAT = (("dtype", "dtype", "{}"), ("rank", "rank", "rank-{}"), ("requires_grad", "`requires_grad`",
            "{}"), ("device", "device", "{}"))
    SIZES = (("sizes", "sizes (compiled with `dynamic=False`)", "size-{}"),)

    def visit_Call(self, node: cst.Call) -> None:
        compared = self.calls_compared(node, _tensor_arguments)
        if compared is None:
            return
        callee, entry, here, mine, calls = compared
        line = here[0]
        # sizes count only under `dynamic=False`: otherwise a first new size recompiles once and is dynamic
        what = self.WHAT + (self.SIZES if self.compiled_dynamic(callee, False) else ())
        for param, meta in mine.items():
            if not self.reads(entry, param):
                continue            # a tensor the compiled function never uses is not guarded
            for other_line, other_col, metas in calls:
                that = metas.get(param) if (other_line, other_col) < here else None
                diff = [w for w in what if that and None not in (meta[w[0]], that[w[0]])
                        and meta[w[0]] != that[w[0]]]
                if not diff:
                    continue
                key, what, shown = diff[0]
                this_text = self._say(key, shown, meta[key])
                other_text = self._say(key, shown, that[key])
                self.report_at_guard(node, entry, None, f"a {this_text} tensor is passed for `{param}` here",
                                     also=[(other_line, other_col, f"a {other_text} tensor is passed here")],
                                     callee=callee, this=this_text, param=param, line=line, other=other_text,
                                     other_line=other_line, what=what)
                return

    @staticmethod
    def _say(key: str, shown: str, value) -> str:
        if key == "requires_grad":
            return "grad-requiring" if value else "grad-free"
        return shown.format("x".join(map(str, value)) if key == "sizes" else value)
