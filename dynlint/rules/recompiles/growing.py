"""A list argument whose length changes between calls of a compiled function (DYN507): grown by the loop
around the calls (`history.append(x)`, `ws = ws + [w]`), or built at each iteration with a length the loop
variable sets (`[f(i) for i in range(n)]`, `feats[:k]`, `[x] * n`, unpacked into `*args` too). Dynamo guards
the length where the compiled code first reads the list."""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.tensors.kinds import TENSORS
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import children, descendants
from dynlint.rules.common import source_of
from dynlint.rules.recompiles.argument_values import bound_in_loop
from dynlint.rules.recompiles.changing import python_list
from dynlint.rules.recompiles.common import SiteBookkeeping, bound_parameter, loop_changed, names_in


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
        So does a list (or a `*args` tuple) whose length the loop variable sets: `[f(i) for i in range(n)]`,
        `feats[:k]`, `[x] * n`. A list created afresh with the same length each call does not recompile
        (docs/guards.md).
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

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        name = _concatenated(node)
        if name is not None:
            loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
            self._grown[name] = ("+", loops[-1] if loops else None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        name = _concatenated(node)
        if name is not None:
            loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
            self._grown[name] = ("+=", loops[-1] if loops else None)

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
        if self._grown_argument(node, func, info, loops):
            return
        for arg in node.args if loops and info is not None else ():
            if arg.star != "**" and self._length_from_loop(node, arg, func.value, info, loops):
                return

    def _grown_argument(self, node: cst.Call, func: cst.Name, info, loops) -> bool:
        """A list argument that grows between calls (`history.append(x)`); True when reported."""
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
                shown = f"{name} = {name} + [...]" if grow == "+" else f"{name} += [...]" if grow == "+=" else \
                    f"{name}.{grow}()"
                self.report_at_guard(arg.value, self.compiled_entry(func.value), param, f"`{name}` is passed here",
                                     name=name, grow=shown, callee=func.value)
                return True
        return False

    def _length_from_loop(self, node: cst.Call, arg: cst.Arg, callee: str, info, loops) -> bool:
        """A list or tuple whose length the loop's variable sets, passed at each iteration (`[f(i) for i in
        range(n)]`, `feats[:k]`, `[x] * n`, bound in the loop or written at the call; unpacked into `*args`
        too): Dynamo guards the length where the compiled code first reads it (`len(tensors) == 2`, measured on
        torch 2.13), so each new length compiles again. True when reported."""
        value = bound_in_loop(self.ctx, arg.value, loops, node) or arg.value
        changed = loop_changed(loops[-1])
        var = _length_name(value, changed)
        if var is None or not self._python_sequence(value):
            return False
        entry = self.compiled_entry(callee)
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line)
        param = (fn.args.vararg.arg if fn is not None and fn.args.vararg is not None else None) if arg.star \
            else bound_parameter(info, node, arg)
        if param is None or not self.reads(entry, param):
            return False
        shown = source_of(arg.value)
        self.report_at_guard(arg.value, entry, param, f"`{shown}` gets its length from `{var}` here", message=(
            f"`{'*' if arg.star else ''}{shown}` has another length at each call of compiled `{callee}` (its "
            f"length comes from `{var}`, which the loop changes): Dynamo guards on the length of a "
            f"{'`*' + param + '` tuple' if arg.star else 'list argument'}, so every new length recompiles"))
        return True

    def _python_sequence(self, value: cst.BaseExpression) -> bool:
        """`value` makes a Python list or tuple: a comprehension or a repeated display, or a slice of a name the
        function binds to one (`feats[:k]`, `feats = [...]`). A slice of a tensor is a tensor, whose new size is
        the expected first shape change, not a list's length guard."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            value = value.args[0].value if value.args else value        # `list(...)`, `tuple(...)`
        if not isinstance(value, cst.Subscript):
            return True
        base = value.value
        if self.tensors.kind(base) == TENSORS:
            return True
        ix = self.ctx.index
        here = ix.functions.get(self.ctx.qualname or "") if ix is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", here.def_line) if here is not None else None
        return isinstance(base, cst.Name) and fn is not None and \
            python_list(ast.Name(id=base.value, ctx=ast.Load()), fn, None, guard_lines.parsed(self.ctx.source or ""))

    def _grows_between_calls(self, name: str) -> bool:
        """Bound outside the loop that grows it (and this call is in that loop), or not bound in this function
        at all (a module-level list or a parameter: each call of the function grows it further)."""
        _, loop = self._grown[name]
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if fn is None:
            return loop is not None and loop in self.ctx.blocks
        if not self.tensors.bound_in(fn, name) or name in (p.name.value for p in fn.params.params):
            return True
        return loop is not None and loop in self.ctx.blocks and not binds(loop, name, concatenated=True)


def _length_name(value: cst.BaseExpression, changed) -> Optional[str]:
    """The name among `changed` (what the loop changes) that sets the length of the list or tuple `value`
    builds: the bound of a comprehension's `range(...)` or a slice it iterates, a slice's bounds (`feats[:k]`),
    the count of a repeated display (`[x] * n`); None for anything else."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("list", "tuple") \
            and len(value.args) == 1:
        value = value.args[0].value
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and value.for_in.inner_for_in is None and \
            value.for_in.ifs == ():
        it = value.for_in.iter
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value in ("range", "enumerate"):
            it = it.args[0].value if it.func.value == "enumerate" and it.args else it
            found = sorted(set().union(*(names_in(a.value) for a in it.args)) & changed) \
                if isinstance(it, cst.Call) and it.func.value == "range" else []
            return found[0] if found else None
        value = it
    if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice):
        sl = value.slice[0].slice
        found = sorted(set().union(*(names_in(b) for b in (sl.lower, sl.upper) if b is not None)) & changed)
        return found[0] if found and not names_in(value.value) & changed else None
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply) and \
            isinstance(value.left, (cst.List, cst.Tuple)):
        found = sorted(names_in(value.right) & changed)
        return found[0] if found else None
    return None


def _grown_in(loop: cst.CSTNode, name: str, grow: frozenset) -> Optional[str]:
    """How list `name` grows somewhere inside `loop` (`name.append(...)`: "append"; `name = name + [x]`: "+"),
    if it does."""
    stack = [loop]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in grow and \
                isinstance(n.func.value, cst.Name) and n.func.value.value == name:
            return n.func.attr.value
        if _concatenated(n) == name:
            return "+=" if isinstance(n, cst.AugAssign) else "+"
        stack.extend(children(n))
    return None


def binds(node: cst.CSTNode, name: str, concatenated: bool = False) -> bool:
    """`name = ...` somewhere inside `node` (a loop: a list made afresh on each iteration; a function: its
    local); with `concatenated`, not `name = name + [...]`, which grows the list the loop had."""
    return any(isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                 for t in n.targets) and not (concatenated and _concatenated(n))
               for n in descendants(node))


def _concatenated(node: cst.CSTNode) -> Optional[str]:
    """The name a statement grows by concatenating a list display to it (`ws = ws + [w]`, `ws += [w]`)."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) and \
            isinstance(node.target, cst.Name) and isinstance(node.value, cst.List):
        return node.target.value
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
        name, v = node.targets[0].target.value, node.value
        if isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add) and \
                isinstance(v.left, cst.Name) and v.left.value == name and isinstance(v.right, cst.List):
            return name
    return None
