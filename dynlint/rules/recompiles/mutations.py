"""An object that compiled code reads, changed in place between two of its calls (DYN517): an attribute of an
argument or of the receiver of a compiled method set, a dict or list argument changed, a tensor argument's
`requires_grad` or rank changed in place."""
from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.regions import compiled_methods
from dynlint.linter.rule import Example, register
from dynlint.rules.recompiles.common import SiteBookkeeping, bound_parameter

ITEMS = frozenset({"update", "pop", "popitem", "setdefault", "clear", "append", "extend", "insert", "remove"})
METADATA = frozenset({"requires_grad_", "unsqueeze_", "squeeze_", "t_", "resize_", "transpose_", "resize_as_"})
GROW = frozenset({"append", "extend", "insert"})
CONTAINERS = frozenset({"dict", "list", "collections.OrderedDict", "OrderedDict", "collections.defaultdict"})

# line, column, kind ("attr", "items", "metadata"), what: the attribute, the method, or "key 'k'" for `x['k'] = ...`
Change = Tuple[int, int, str, str]


def _name(node: ast.AST) -> Optional[str]:
    return node.id if isinstance(node, ast.Name) else None


def _setters(tree: ast.Module) -> Dict[str, List[str]]:
    """method name -> the attributes of `self` it assigns from its parameters (`def set_decay(self, v):
    self.decay = v`), over the file's classes."""
    out: Dict[str, List[str]] = {}
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name != "__init__"):
            params = {a.arg for a in fn.args.args[1:]}
            for st in ast.walk(fn):
                if isinstance(st, ast.Assign) and isinstance(st.value, ast.Name) and st.value.id in params:
                    out.setdefault(fn.name, []).extend(
                        t.attr for t in st.targets if isinstance(t, ast.Attribute) and _name(t.value) == "self")
    return out


def _file_setters(ctx) -> Dict[str, List[str]]:
    """An analysis: `_setters` of the unit's file."""
    tree = guard_lines.parsed(ctx.source or "")
    return _setters(tree) if tree is not None else {}


def _changes(scope: ast.AST, name: str, setters: Dict[str, List[str]]) -> Iterator[Change]:
    """The statements of `scope` that change the object `name` holds in place."""
    for n in ast.walk(scope):
        targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target] \
            if isinstance(n, ast.AugAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and _name(t.value) == name:
                yield n.lineno, n.col_offset, ("metadata" if t.attr == "requires_grad" else "attr"), t.attr
            elif isinstance(t, ast.Subscript) and _name(t.value) == name:
                key = t.slice.value if isinstance(t.slice, ast.Constant) else None
                yield n.lineno, n.col_offset, "items", f"key {key!r}" if key is not None else "[...]"
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _name(n.func.value) == name:
            method = n.func.attr
            if method in ITEMS:
                yield n.lineno, n.col_offset, "items", method
            elif method in METADATA:
                yield n.lineno, n.col_offset, "metadata", method
            for attr in setters.get(method, ()):
                yield n.lineno, n.col_offset, "attr", attr


def _literal(key_repr: str) -> object:
    try:
        return ast.literal_eval(key_repr)
    except (ValueError, SyntaxError):
        return None


def _has_key(value: Optional[ast.AST], key: object) -> bool:
    """The dict display a name was bound to holds the constant key."""
    return isinstance(value, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == key for k in value.keys)


def _loops_around(scope: ast.AST, line: int) -> List[ast.AST]:
    return [n for n in ast.walk(scope) if isinstance(n, (ast.For, ast.While)) and
            n.lineno <= line <= (n.end_lineno or n.lineno)]


def _container(tree: ast.Module, name: str, line: int) -> bool:
    """`name` was last bound, before `line`, to a dict or list display or constructor (not a tensor, whose
    items a subscript assignment writes in place without any guard)."""
    value = guard_lines.last_binding(tree, name, line)
    return isinstance(value, (ast.Dict, ast.List, ast.DictComp, ast.ListComp)) or (
        isinstance(value, ast.Call) and guard_lines.dotted(value.func) in CONTAINERS)


@register
class ArgumentChangedBetweenCalls(SiteBookkeeping):
    """Checks for an object handed to compiled code (an argument, or the object whose compiled method is
    called) that set-up code changes in place between two calls: an attribute it reads set, a dict or list it
    reads changed (a dict's item where the code uses it, a key it looks up where it looks, a key it never
    looks up not at all, unless it reads the dict whole), a tensor's `requires_grad` or rank changed in
    place."""
    code = "DYN517"
    name = "argument-changed-between-calls"
    message = ("`{obj}` is changed in place at line {line} between calls of compiled `{callee}`, which reads "
               "{what}: Dynamo guards on {guard}, so the next call compiles again")
    fix = ("Pass the changing value as an argument of its own (a tensor, or a number that becomes dynamic after "
           "one recompile), or build the object once, before the first call")
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on what the traced code read from an object it was handed: an attribute's value
        (`cfg.center == True`), a dict's keys or a list's length (`'extra' in feats`, `len(xs) == 2`), a tensor's
        `requires_grad` and rank. Changing the object in place between two calls (a config flag flipped,
        `feats["extra"] = ...`, `pred.requires_grad_()`) fails the guard at the next call, which compiles
        again: once per new value, and for an int on every value. A dict is guarded one key at a time where
        the code looks a key up (`'extra' in feats`), and on the value of an item where the code uses it (`clip
        = opts.get("clip")` guards nothing, `if clip is not None:` does); a key the code never looks up can be
        added freely unless it reads the dict whole (iterates it, takes its length). The finding stands at the
        guard, the read that Dynamo's recompile log names (a tensor's metadata: the compiled function's first
        line); the change and the next call are its related locations. Module attributes are DYN506's.
    """
    INVALID = [Example("""
        import torch
        from dataclasses import dataclass


        @dataclass
        class NormConfig:
            center: bool = True


        @torch.compile
        def layer_norm(x, cfg):
            if cfg.center:
                x = x - x.mean(-1, keepdim=True)
            return x * 2


        def run(x):
            cfg = NormConfig()
            layer_norm(x, cfg)
            cfg.center = False
            return layer_norm(x, cfg)
    """, "run(torch.ones(2, 4))"), Example("""
        import torch


        @torch.compile
        def combine(feats):
            out = feats["base"] * 2
            if "extra" in feats:
                out = out + feats["extra"]
            return out


        def run():
            feats = {"base": torch.ones(3)}
            combine(feats)
            feats["extra"] = torch.ones(3)
            return combine(feats)
    """, "run()"), Example("""
        import torch


        class Scheduler:
            def __init__(self):
                self.decay = 0.5

            @torch.compile
            def apply(self, grad):
                return grad * self.decay

            def set_decay(self, value):
                self.decay = value


        def run(g):
            sched = Scheduler()
            sched.apply(g)
            sched.set_decay(0.25)
            return sched.apply(g)
    """, "run(torch.ones(3))"), Example("""
        import torch


        @torch.compile
        def loss_fn(pred, target):
            return ((pred - target) ** 2).mean()


        def run():
            target, pred = torch.zeros(5), torch.ones(5)
            loss_fn(pred, target)
            pred.requires_grad_(True)
            return loss_fn(pred, target)
    """, "run()"), Example("""
        import torch


        @torch.compile
        def clipped(x, opts):
            clip = opts.get("clip")          # binding the item guards nothing
            if clip is not None:             # its first use: guarded on `opts['clip'] == 1.0` here
                x = x.clamp(-clip, clip)
            return x * 2


        def run(x):
            opts = {"clip": 1.0}
            clipped(x, opts)
            opts["clip"] = 0.5
            return clipped(x, opts)
    """, "run(torch.ones(3))")]
    VALID = [Example("""
        import torch
        from dataclasses import dataclass


        @dataclass
        class NormConfig:
            center: bool = True
            note: str = ""


        @torch.compile
        def layer_norm(x, cfg):
            if cfg.center:
                x = x - x.mean(-1, keepdim=True)
            return x * 2


        def run(x):
            cfg = NormConfig()
            layer_norm(x, cfg)
            cfg.note = "second"          # an attribute the compiled code never reads
            return layer_norm(x, cfg)
    """, "run(torch.ones(2, 4))"), Example("""
        import torch


        @torch.compile
        def step(x, buf):
            return x + buf.sum()


        def run(x):
            buf = torch.zeros(3)
            step(x, buf)
            buf[0] = 1.0                 # a tensor's values: data, not guarded
            return step(x, buf)
    """, "run(torch.ones(3))"), Example("""
        import torch


        @torch.compile
        def clipped(x, opts):
            clip = opts.get("clip")
            if clip is not None:
                x = x.clamp(-clip, clip)
            return x * 2


        def run(x):
            opts = {"clip": 1.0}
            clipped(x, opts)
            opts["note"] = "second"      # a key the compiled code never looks up: not guarded
            return clipped(x, opts)
    """, "run(torch.ones(3))")]

    GUARD = {"attr": "its value", "items": "the keys of a dict or the length of a list",
             "metadata": "a tensor's `requires_grad` and rank"}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        tree = guard_lines.parsed(self.ctx.source or "")
        if tree is None:
            return
        if isinstance(func, cst.Name) and func.value in self.compiled_here():
            entry = self.compiled_entry(func.value)
            info = self.ctx.index.functions.get(entry) if entry and self.ctx.index is not None else None
            handed = [(a.value.value, bound_parameter(info, node, a)) for a in node.args
                      if isinstance(a.value, cst.Name) and info is not None]
            callee = func.value
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                func.attr.value in compiled_methods(self.ctx.index):
            entry = self._method_entry(tree, func.attr.value)
            handed, callee = [(func.value.value, "self")], f"{func.value.value}.{func.attr.value}"
        else:
            return
        if entry is None:
            return
        line, col = self.ctx.position(node)[:2]
        scope = guard_lines.enclosing(tree, line)
        for name, param in handed:
            if param and self._check(node, scope, callee, entry, name, param, (line, col)):
                return

    def _method_entry(self, tree: ast.Module, method: str) -> Optional[str]:
        """The qualname of the function a compiled method runs: `Cls.m` decorated, or `Cls.f` for `self.m =
        torch.compile(self.f)`."""
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
                if fn.name == method and any((guard_lines.dotted(d.func if isinstance(d, ast.Call) else d) or "")
                                             .endswith("compile") for d in fn.decorator_list):
                    return f"{cls.name}.{method}"
                for st in ast.walk(fn):
                    if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and st.value.args and \
                            any(isinstance(t, ast.Attribute) and t.attr == method for t in st.targets) and \
                            (guard_lines.dotted(st.value.func) or "").endswith("compile"):
                        inner = st.value.args[0]
                        if isinstance(inner, ast.Attribute) and _name(inner.value) == "self":
                            return f"{cls.name}.{inner.attr}"
        return None

    def _check(self, node, scope, callee: str, entry: str, name: str, param: str, here: Tuple[int, int]) -> bool:
        """Report the first change of `name` between an earlier call and this one (or anywhere in a loop
        around this call) that the compiled code reads."""
        line = here[0]
        earlier = self._earlier_call(scope, callee, line)
        loops = _loops_around(scope, line)
        tree = guard_lines.parsed(self.ctx.source or "")
        setters = self.ctx.analysis(_file_setters)
        for c_line, c_col, kind, detail in sorted(_changes(scope, name, setters)):
            between = earlier is not None and earlier < c_line < line
            looped = any(loop.lineno <= c_line <= (loop.end_lineno or 0) for loop in loops)
            if not (between or looped) or (kind == "items" and not _container(tree, name, c_line)) or \
                    (looped and detail in GROW):
                continue            # (a list grown in the loop that calls: DYN507's)
            value = f"{param}.{detail}" if kind == "attr" else param
            guard = self.GUARD[kind]
            span = self.guard_span(entry, value, at_entry=False)
            if span is None:
                continue                # the compiled code never reads it: not guarded
            if kind == "items":
                item = self._item_guard(tree, entry, name, param, detail, c_line)
                if item is None:
                    continue
                span, guard = item[0] or span, item[1] or guard
            if kind == "metadata":
                span = self.guard_span(entry, None)
            what = f"`{value}`" if kind == "attr" else f"`{param}`"
            col = guard_lines.column((self.ctx.source or "").splitlines(), c_line, c_col)
            self.ctx.report(self, node, self.format_message(obj=name, line=c_line, callee=callee, what=what,
                                                            guard=guard),
                            at=span, related=[(c_line, col, f"`{name}` changes here"),
                                              (line, here[1], "the next call")])
            return True
        return False

    def _item_guard(self, tree, entry: str, name: str, param: str, detail: str, c_line: int):
        """Where, and on what, Dynamo guards a dict the change `detail` makes (`key 'k'`, `[...]`): (span or None
        for the first read, what it guards or None for the default); None where nothing is guarded. A key the code
        looks up is guarded there when it is added, where its value is used when that changes; one it never looks
        up, of a dict it never reads whole, is not guarded at all; a dict read whole is guarded on its keys, with
        no line of its own (the function's first line)."""
        fn = self._entry_def(entry)
        if fn is None or not detail.startswith("key "):
            whole = fn is not None and detail == "[...]" and guard_lines.reads_whole(fn, param)
            return (self.guard_span(entry, None) if whole else None), None
        key = _literal(detail[4:])
        had = _has_key(guard_lines.last_binding(tree, name, c_line), key)
        source = self.ctx.source or ""
        found = guard_lines.item_use(source, fn, param, key) if had else guard_lines.key_read(source, fn, param, key)
        if found is not None:
            return found, (f"the value of `{param}[{key!r}]`" if had else f"whether `{param}` holds {key!r}")
        return (self.guard_span(entry, None), None) if guard_lines.reads_whole(fn, param) else None

    def _entry_def(self, entry: str) -> Optional[ast.AST]:
        info = self.ctx.index.functions.get(entry) if self.ctx.index is not None else None
        return guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None

    @staticmethod
    def _earlier_call(scope: ast.AST, callee: str, line: int) -> Optional[int]:
        """The line of the first call of `callee` (`f`, `obj.method`) in `scope` before `line`."""
        lines = [n.lineno for n in ast.walk(scope) if isinstance(n, ast.Call) and n.lineno < line and
                 guard_lines.dotted(n.func) == callee]
        return min(lines) if lines else None
