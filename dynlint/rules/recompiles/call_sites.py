"""What set-up code changes between two calls of a compiled function: the set of arguments (DYN505), an
attribute of the compiled module (DYN506); a list argument that grows is `growing` (DYN507); a global, a config
attribute or an object's state that the compiled code reads is `state_set` (DYN514)."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

import libcst as cst

from dynlint.analysis.defs import body_nodes
from dynlint.analysis.guards import effect, module_int, recompiles
from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors import TENSOR
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import descendants
from dynlint.rules.common import source_of
from dynlint.analysis import guard_lines
from dynlint.rules.recompiles.caches import ANY, key_of, key_reads
from dynlint.rules.recompiles.changing import class_def, python_list
from dynlint.rules.recompiles.common import SiteBookkeeping, bound_parameter, call_bindings, names_in, varying
from dynlint.rules.recompiles.foreign_setters import assigned_elsewhere, number_kind
from dynlint.rules.recompiles.handed import handed_arguments
from dynlint.rules.recompiles.rows import carried_none_elsewhere
from dynlint.rules.recompiles.tensor_args import tensor_metadata


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
    if isinstance(node, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return f"a tuple of {len(node.elts)}"
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return "a dict with keys " + ", ".join(repr(k.value) for k in node.keys) if node.keys else "an empty dict"
    if tensor_metadata(node) is not None:
        return "a tensor"               # against a constant: Dynamo guards the argument's type
    return "a value"


def _differ(a: str, b: str) -> bool:
    """Two structures that fail each other's guards: `None` and anything else, lists of two lengths, dicts of
    two key sets. Values (tensors, names) and constants are alike here: their types are not known, and two
    constants are compared by DYN508."""
    kinds = {a, b}
    return a != b and ("`None`" in kinds or kinds == {"a tensor", "a constant"} or
                       not kinds & {"a value", "a constant", "a tensor"})


def _keys(structure: str) -> frozenset:
    """The keys a `_structure` of a dict display names (none for anything else)."""
    if structure.startswith("a dict with keys "):
        try:
            return frozenset(ast.literal_eval(f"({structure[len('a dict with keys '):]},)"))
        except (ValueError, SyntaxError):
            return frozenset()
    return frozenset()


def _loop_rows(fn: ast.AST, name: str, line: int) -> List[ast.expr]:
    """The rows of the innermost `for name in <display>` around `line` in `fn` (a list or tuple display, or a
    name `fn` binds once to one); none when the loop runs over anything else."""
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and
             n.target.id == name and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not loops:
        return []
    it = max(loops, key=lambda n: n.lineno).iter
    if isinstance(it, ast.Name):
        bound = [n.value for n in ast.walk(fn) if isinstance(n, ast.Assign) and
                 any(isinstance(t, ast.Name) and t.id == it.id for t in n.targets)]
        it = bound[0] if len(bound) == 1 else None
    return list(it.elts) if isinstance(it, (ast.List, ast.Tuple)) and \
        not any(isinstance(e, ast.Starred) for e in it.elts) else []


def _picked_rows(tree: ast.Module, fn: ast.AST, name: str, line: int) -> List[ast.expr]:
    """What the producers a loop picks in turn make, for a name the innermost loop around `line` binds once,
    above it: `batch = sources[step % 2]()` over a display of the file's functions (or a name bound once to
    one), `batch = a() if step % 2 else b()`; each producer's one returned expression (a display, or a
    name it binds once to one). Rows of two structures fail each other's guards, as two call sites would.
    None when the loop binds it otherwise."""
    loops = [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While)) and
             n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not loops:
        return []
    loop = max(loops, key=lambda n: n.lineno)
    binds = [n for n in ast.walk(loop) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)) and
             any(isinstance(t, ast.Name) and t.id == name for target in (n.targets if isinstance(n, ast.Assign) else [n.target])
                 for t in ast.walk(target))]
    if len(binds) != 1 or not isinstance(binds[0], ast.Assign) or binds[0].lineno >= line:
        return []
    value = binds[0].value
    arms = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
    if len(arms) == 1:
        picked = value.func.value if isinstance(value, ast.Call) and isinstance(value.func, ast.Subscript) and \
            not value.args and not value.keywords else None
        if isinstance(picked, ast.Name):
            picked = guard_lines.last_binding(tree, picked.id, binds[0].lineno)
        if not isinstance(picked, (ast.List, ast.Tuple)):
            return []
        arms = [ast.Call(func=e, args=[], keywords=[]) for e in picked.elts]
    rows = [_made_by(tree, arm) for arm in arms]
    return rows if len(rows) > 1 and None not in rows else []


def _made_by(tree: ast.Module, node: ast.expr) -> Optional[ast.expr]:
    """A display, or what `f()` returns where `f` is a function of the file with one `return` (of a display, or
    of a name it binds once to one); None otherwise."""
    if not isinstance(node, ast.Call):
        return node if isinstance(node, (ast.Dict, ast.List, ast.Tuple)) else None
    fn = next((f for f in tree.body if isinstance(f, ast.FunctionDef) and isinstance(node.func, ast.Name) and
               f.name == node.func.id), None)
    returns = [n for n in body_nodes(fn) if isinstance(n, ast.Return)] if fn is not None else []
    if len(returns) != 1 or returns[0].value is None:
        return None
    made = returns[0].value
    if isinstance(made, ast.Name):
        bound = [n for n in body_nodes(fn) if isinstance(n, ast.Assign) and
                 any(isinstance(t, ast.Name) and t.id == made.id for t in n.targets)]
        made = bound[0].value if len(bound) == 1 else None
    return made if isinstance(made, (ast.Dict, ast.List, ast.Tuple)) else None


def _instance(ctx, node: Optional[ast.expr], line: int) -> Optional[str]:
    """"an instance of `Cls`" for an object of a class of the project: built at the call (`f(Scaled(2.0), x)`),
    or a name the calling function binds once to one (`op = Scaled(2.0)`). Dynamo guards an object's type where
    the compiled code first reads it, so instances of two classes fail each other's guard."""
    ix, project = ctx.index, ctx.project
    if ix is None or project is None:
        return None
    if isinstance(node, ast.Name):
        here = ix.function_at(line)
        built = ix.built(node.id, here) if here is not None else []
        dotted = built[0] if len(built) == 1 else None
    else:
        dotted = guard_lines.dotted(node.func) if isinstance(node, ast.Call) else None
    found = project.resolve(ix, dotted) if dotted else None
    return f"an instance of `{found[1][1].name}`" if found and found[0] == "class" else None


def _structures(ctx, callee: str, entry: str, span=None) -> List[Tuple[int, int, dict]]:
    """An analysis: per call of `callee` (line, column, {parameter: structure}), defaults included."""
    out = []
    for line, col, given in call_bindings(ctx, callee, entry, span):
        found = {p: _instance(ctx, e, line) or _structure(e) for p, (e, _) in given.items()}
        out.append((line, col, {p: v for p, v in found.items() if v is not None}))
    return out


def _aliasing(ctx, callee: str, entry: str, span=None) -> List[Tuple[int, int, dict]]:
    """An analysis: per call of `callee` (line, column, {parameter: the earlier parameter the call binds to the
    same name, or ""}) for the parameters bound to a name or to what a call makes."""
    out = []
    for line, col, given in call_bindings(ctx, callee, entry, span):
        first: dict = {}
        found = {}
        for p, (e, passed) in given.items():
            if passed and isinstance(e, ast.Name):
                found[p] = first.setdefault(e.id, p) if e.id in first else ""
                first.setdefault(e.id, p)
            elif passed and isinstance(e, ast.Call) and ctx.index is not None and \
                    ctx.index.qualify(guard_lines.dotted(e.func) or "").startswith("torch."):
                found[p] = ""           # a new tensor (`torch.randn(2, 3)`): no other parameter's
        out.append((line, col, found))
    return out


@register
class ArgumentSetChangesBetweenCalls(SiteBookkeeping):
    """Checks for a compiled callable whose call sites pass a different structure for the same parameter: an
    optional argument passed here, left out (a `None` default) or `None` there; list displays of different
    lengths; dict displays with different keys; objects of two classes; another number of positional
    arguments for a `*args` parameter; one tensor for two parameters here, two tensors there."""
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
        (`len(xs) == 2`), the keys of a dict (`'clip' in opts`), the type of an object (`___check_type_id`),
        the length of the tuple a `*args` parameter gets, and whether two tensor arguments are one object
        (`k is q`, at the first read of the later one). A call that leaves out an optional tensor, or passes
        `None` where another call passes a tensor, a list of another length, a dict with other keys, an
        instance of another class, more positional arguments or two tensors where another passed one
        twice, a Python number where another passed a tensor, fails those guards and compiles a second graph.
        The finding stands at that guard, the line Dynamo's recompile log names (a tensor passed first is
        guarded on its type at the function's first line); the calls are its related locations. One call in
        a loop is as many calls as the loop hands it rows: a loop over a display of rows, or producers the loop
        picks in turn (`batch = sources[step % 2]()` over the file's functions, each returning a dict display
        of its own keys; the arms of a conditional).
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
    """, "run(torch.ones(4))"), Example("""
        import torch

        class Gain(torch.nn.Module):
            def forward(self, x):
                return x * 2

        class Bias(torch.nn.Module):
            def forward(self, x):
                return x + 2

        @torch.compile
        def through(layer, x):
            return layer(x.sin())                   # `layer`'s type is guarded here

        def run(x):
            return through(Gain(), x), through(Bias(), x)
    """, "run(torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def combine(*feats):
            out = feats[0]                          # guarded on the length of `feats`
            for f in feats[1:]:
                out = out + f
            return out

        def run(x, y):
            return combine(x, y), combine(x, y, x + y)
    """, "run(torch.ones(4), torch.zeros(4))"), Example("""
        import torch

        @torch.compile
        def attend(q, k, v):
            scores = q @ k.t()                      # `k is q` at one call, not at the other
            return scores.softmax(-1) @ v

        def run():
            x = torch.randn(4, 8)
            memory = torch.randn(4, 8)
            return attend(x, x, x), attend(x, memory, memory)
    """, "run()"), Example("""
        import torch

        @torch.compile
        def weighted(x, **weights):             # the keywords' dict is guarded on its length, at the `def`
            total = x.sum() * 0
            for w in weights.values():
                total = total + w * x.sum()
            return total

        def run(x):
            return weighted(x, ce=1.0), weighted(x, ce=1.0, aux=0.1)
    """, "run(torch.ones(4))"), Example("""
        import torch

        def step(x, callback=None):
            y = x * 2
            if callback is not None:
                callback(y)
            return y

        def sample(step_fn, x, callback=None):  # hands `callback` on to the compiled step its callers pass
            for _ in range(2):
                x = step_fn(x, callback=callback)
            return x

        def main():
            seen = []
            fast = torch.compile(step)
            sample(fast, torch.ones(2))
            sample(fast, torch.ones(2), callback=seen.append)
    """, "main()"), Example("""
        import torch

        def test_optional_mask():
            @torch.compile
            def scores(q, k, mask=None):            # compiled where it is defined, inside the test
                s = q @ k.t()
                if mask is not None:
                    s = s.masked_fill(~mask, 0.0)
                return s

            q = torch.randn(3, 4)
            mask = torch.ones(3, 3, dtype=torch.bool)
            scores(q, q)
            scores(q, q, mask)
            scores(q, q, mask=None)                 # compiled for `None` already: that graph is reused
    """, "test_optional_mask()"), Example("""
        import torch

        class Cell(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = torch.nn.GRUCell(4, 4)

            def forward(self, x, h=None):
                if h is None:
                    h = torch.zeros(x.shape[0], 4)
                h = self.rnn(x, h)
                return h * 2, h

        def stream(chunks):
            model = torch.compile(Cell())
            h = None                                # the state the loop carries: None at the first call
            for x in chunks:
                out, h = model(x, h)
            return out
    """, "stream([torch.ones(2, 4)] * 3)"), Example("""
        import torch

        @torch.compile
        def shift(x, offset):
            y = x.cos()
            return y + offset

        def run():
            x = torch.ones(3)
            return shift(x, 2.0), shift(x, torch.ones(3))     # a number, then a tensor
    """, "run()")]
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
    """, "run(torch.ones(4), torch.zeros(4))"), Example("""
        import torch

        class Cell(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = torch.nn.GRUCell(4, 4)

            def forward(self, x, h):
                h = self.rnn(x, h)
                return h * 2, h

        def stream(chunks):
            model = torch.compile(Cell())
            h = torch.zeros(2, 4)                   # a tensor from the first call on
            with torch.no_grad():
                for x in chunks:
                    out, h = model(x, h)
            return out
    """, "stream([torch.ones(2, 4)] * 3)"), Example("""
        import torch

        @torch.compile
        def shift(x, offset):
            y = x.cos()
            return y + offset

        def run():
            x = torch.ones(3)
            return shift(x, torch.zeros(3)), shift(x, torch.ones(3))     # a tensor at both calls
    """, "run()")]

    WHAT = {"`None`": "whether it is `None`", "tensor": "whether it is a tensor or a Python value",
            "list": "the length of a list", "tuple": "the length of a tuple",
            "dict": "the keys of a dict", "instance": "the type of an object"}

    def visit_Call(self, node: cst.Call) -> None:
        compared = self.calls_compared(node, _structures)
        if compared is None:
            self._held_or_handed(node)
            return
        callee, entry, here, mine, calls = compared
        for param, this in mine.items():
            earlier = [(ln, col, b[param]) for ln, col, b in calls if (ln, col) < here and param in b]
            other = next((c for c in earlier if _differ(c[2], this)), None)
            if any(not _differ(c[2], this) and c[2] == this for c in earlier):
                continue            # compiled for this structure already: that graph is kept and reused
            if other is not None and self._report(node, callee, entry, param, (*here, this), other):
                return
        # a parameter of the calling function handed on: what that function's callers pass flows through it
        # (the first call compiles; the first that differs from it recompiles)
        for param, passed in self.through_caller(node, entry, _structures):
            later = next((c for c in passed[1:] if _differ(c[2], passed[0][2])), None)
            if later is not None and self._report(node, callee, entry, param, later, passed[0]):
                return
        loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
        for arg in node.args if loops else ():
            if not arg.star and self._none_then_carried(node, arg, callee, entry, loops[-1]):
                return
        for arg in node.args if loops else ():
            if not arg.star and self._rows_differ(node, arg, callee, entry):
                return
        self._aliasing_differs(node)

    def _aliasing_differs(self, node: cst.Call) -> bool:
        """One call passes the same tensor for two parameters (`attn(x, x, x)`), another two different ones
        (`attn(x, y, y)`): Dynamo guards that the second parameter it reads is the first (`k is q`), where it
        first reads it, and the other call fails that guard (measured, torch 2.13). True when reported."""
        compared = self.calls_compared(node, _aliasing)
        if compared is None:
            return False
        callee, entry, here, mine, calls = compared
        info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
        tensors = {bound_parameter(info, node, a) for a in node.args
                   if info is not None and not a.star and self.tensors.kind(a.value) == TENSOR}
        for param, same in mine.items():
            earlier = next(((ln, col, b[param]) for ln, col, b in calls
                            if (ln, col) < here and param in b and b[param] != same), None)
            if earlier is None or param not in tensors:
                continue
            other = same or earlier[2]
            reads = [self.guard_span(entry, p, at_entry=False) for p in (param, other)]
            if None in reads:
                continue
            guarded, first = (param, other) if reads[0] >= reads[1] else (other, param)
            this, that = (f"the same tensor for `{param}` and `{same}`", "different ones") if same else \
                (f"different tensors for `{param}` and `{other}`", "the same one")
            self.report_at_guard(node, entry, guarded, f"{this} here", also=[
                (earlier[0], earlier[1], f"{that} here")], message=(
                    f"compiled `{callee}` gets {this} at line {here[0]} and {that} at line {earlier[0]}: Dynamo "
                    f"guards whether two arguments are the same tensor (`{guarded} is {first}`), so the second "
                    f"call compiles again"))
            return True
        return False

    def _rows_differ(self, node: cst.Call, arg: cst.Arg, callee: str, entry: Optional[str]) -> bool:
        """The argument is the variable of a loop over a display of rows (`for inputs in [{"x": x}, {"x": x,
        "mask": m}]`, or a name the function binds to one): each call gets the next row, so rows of two
        structures (dict keys, list lengths, None or not) fail each other's guards, as two call sites would.
        True when reported."""
        info = self.ctx.index.functions.get(self.ctx.qualname) if self.ctx.index is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        entry_info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
        param = bound_parameter(entry_info, node, arg) if entry_info is not None else None
        if fn is None or param is None or not isinstance(arg.value, cst.Name):
            return False
        line = self.ctx.position(node)[0]
        rows = _loop_rows(fn, arg.value.value, line) or \
            _picked_rows(guard_lines.parsed(self.ctx.source or ""), fn, arg.value.value, line)
        found = [(e, _structure(e)) for e in rows]
        if not found or any(s is None for _, s in found):
            return False
        first, kind = found[0]
        other = next(((e, s) for e, s in found[1:] if _differ(s, kind)), None)
        if other is None:
            return False
        lines = (self.ctx.source or "").splitlines()
        at = lambda e: (e.lineno, guard_lines.column(lines, e.lineno, e.col_offset))   # noqa: E731
        return self._report(node, callee, entry, param, (*at(other[0]), other[1]), (*at(first), kind))


    def _report(self, node: cst.Call, callee: str, entry: Optional[str], param: str, this_call, other_call) -> bool:
        """Report the two structures passed for `param` (each as (line, column, structure)) at the guard."""
        line, col, this = this_call
        other_line, other_col, that = other_call
        if not self.reads(entry, param):
            return False
        what = next(w for k, w in self.WHAT.items() if k in this or k in that)
        # compiled for a value first (a tensor), Dynamo guards on its type, a guard with no source line
        # (the function's first line); compiled for `None` first, at the read that tests it
        # (the `**kwargs` dict the frame builds is guarded on its length there too)
        guarded = None if that in ("a value", "a tensor") or param == self._kwargs_of(entry) else param
        also = [(other_line, other_col, f"{that} is passed for `{param}` here")]
        if (line, col) != self.ctx.position(node)[:2]:      # through the calling function's parameter
            also.insert(0, (line, col, f"{this} is passed for `{param}` here"))
        changed = f"`{param}` is handed to `{callee}` here" if len(also) > 1 else f"{this} is passed for `{param}` here"
        fmt = dict(callee=callee, this=this, param=param, line=line, other=that, other_line=other_line, what=what)
        span = self._key_read(entry, param, _keys(this) ^ _keys(that)) if guarded else None
        if span is not None:        # the first read of a key one dict has and the other lacks
            here = self.ctx.position(node)[:2]
            self.ctx.report(self, node, self.format_message(**fmt), at=span, related=[(*here, changed), *also])
            return True
        self.report_at_guard(node, entry, guarded, changed, also=also, **fmt)
        return True

    def _key_read(self, entry: Optional[str], param: str, keys: frozenset):
        """Where Dynamo guards a dict argument whose key sets differ by `keys` between calls: the compiled
        function's first read that asks for one of those keys (`"mask" in inputs`, `inputs.get("mask")`) or
        for all of them (`len(inputs)`, iteration); a read of a key both dicts have (`inputs["x"]`) guards
        only that key (measured). None when not known here."""
        info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None and keys else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        for read in key_reads(fn, param) if fn is not None else ():
            key = key_of(read)
            if key is None or key is ANY or key in keys:
                return guard_lines.span_of(self.ctx.source or "", read)
        return None


    def finish(self, findings) -> None:
        """A function of this unit compiled where it is defined, handed by a loop of another file the state that
        loop carries, None at its first call (`rows.carried_none_elsewhere`): reported here, at the guard."""
        for qual, param, calls in carried_none_elsewhere(self.ctx, self.tensors):
            span = self.guard_span(qual, param, at_entry=False)
            path, line, name = calls[0]
            if span is not None:
                self.ctx.report(self, None, (
                    f"compiled `{qual}` gets `{param}` from a loop in {path} (line {line}), `None` at its first call "
                    f"and what the loop carries at the next ones: Dynamo guards on whether it is `None`, so the "
                    f"second call compiles again"), at=span,
                    related=[(p, ln, 0, f"`{n}` is None at the first call, then what the loop assigns")
                             for p, ln, n in calls])

    def _held_or_handed(self, node: cst.Call) -> None:
        """The loop-carried None of `_none_then_carried` where the call runs compiled code through an attribute
        (`self.decoder(token, hidden)`, the attribute holding a compiled module or method) or through a function
        of the file that hands the argument on to such a call (`self._step(label, hidden)`)."""
        loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
        if not loops:
            return
        entry = self.compiled_method(node)
        if entry is not None:
            callee = source_of(node.func)
            for arg in node.args:
                if not arg.star and self._none_then_carried(node, arg, callee, entry, loops[-1]):
                    return
            return
        for arg, entry, param, inner in handed_arguments(self, node):
            if self._none_then_carried(node, arg, inner, entry, loops[-1], param):
                return

    def _none_then_carried(self, node: cst.Call, arg: cst.Arg, callee: str, entry: Optional[str], loop,
                           param: Optional[str] = None) -> bool:
        """A loop-carried state that starts as None: `h = None` before the loop, `out, h = model(x, h)` (or any
        other value) in it. The first call gets None, the next a value: Dynamo guarded `h is None` where the
        compiled code first reads it, and compiles again, once (measured, torch 2.13: an RNN cell's hidden
        state, a decoder's cache). True when reported."""
        value = arg.value
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if not isinstance(value, cst.Name) or fn is None or entry is None:
            return False
        name, start = value.value, self.ctx.position(loop)[0]
        before = [n for n in descendants(fn.body) if isinstance(n, cst.Assign) and self.ctx.position(n)[0] < start
                  and any(isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets)]
        inside = [n for n in descendants(loop.body) if isinstance(n, cst.Assign) and
                  any(name in names_in(t.target) for t in n.targets)]
        if not before or not _is_none(before[-1].value) or not inside or any(_is_none(n.value) for n in inside):
            return False
        info = self.ctx.index.functions.get(entry) if self.ctx.index is not None else None
        param = param or (bound_parameter(info, node, arg) if info is not None else None)
        if param is None or not self.reads(entry, param):
            return False
        line = self.ctx.position(inside[0])[0]
        self.report_at_guard(value, entry, param, f"`{name}` is None at the first call, then what line {line} "
                                                  f"assigns", message=(
            f"compiled `{callee}` gets `{name}`, `None` at the loop's first call and a value at the next ones (the "
            f"loop carries it): Dynamo guards on whether it is `None`, so the second call compiles again"))
        return True

    def _kwargs_of(self, entry: str) -> Optional[str]:
        """The name of the `**kwargs` parameter of the file's function `entry`, if it has one."""
        info = self.ctx.index.functions.get(entry) if self.ctx.index is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        return fn.args.kwarg.arg if fn is not None and fn.args.kwarg is not None else None


# what changes a list in place
LIST_CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})
# the guard model's kind of a module attribute holding each kind of constant (an int's depends on a setting)
MODULE_KINDS = {"float": "module float attribute", "bool": "module bool attribute", "str": "module str attribute",
                "enum": "module enum attribute"}
WHAT = {"int": "an int", "float": "a float", "bool": "a bool", "str": "a str", "enum": "an Enum member"}


@register
class ModuleAttributeSetBetweenCalls(SiteBookkeeping):
    """Checks for a training loop (or any repeated code) that changes an int, float, bool, str or Enum attribute of a
    compiled module whose `forward` reads it: `model.step = step`, `model.global_step += 1`, or a call of a method of the
    module that does (`model.advance()`, a scheduler's `set_step(i)`), on the module or on the modules of its
    tree (`model.freeze(True)` looping over `self.modules()`)."""
    code = "DYN506"
    name = "module-attribute-set-between-calls"
    message = ("`{expr}` changes `{attr}`{how}, {what} attribute that the compiled `{reader}` reads: "
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
        attribute recompiles once and is then a graph input, a bool compiles one graph per value, a string
        (`model.mode = "eval"`) recompiles on every new value (all reported, with how often). So does a method of the model that sets the attribute on the modules of
        its tree (`for m in self.modules(): m.frozen = on`): the compiled model guards it where each
        submodule's `forward` reads it. An attribute that `forward` never reads is not guarded (docs/guards.md).
        An attribute of a submodule set through the chain that holds it (`model.sa1.npoint = 48`) is guarded
        where that submodule's `forward` reads it (Dynamo inlines it); a training script in another file that
        sets one between two calls is reported here, in the module's file, at the guard, the assignment as
        the related location.
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
    """, "fit(torch.ones(2, 4))"), Example("""
        import torch
        from torch import nn

        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.frozen = False

            def forward(self, x):
                if self.frozen:
                    return x
                return x + self.proj(x)

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Gate()
                self.b = Gate()

            def forward(self, x):
                return self.b(self.a(x))

            def freeze(self, on):
                for m in self.modules():        # every Gate of the tree
                    if isinstance(m, Gate):
                        m.frozen = on

        def run(x):
            model = Stack()
            compiled = torch.compile(model)
            compiled(x)
            model.freeze(True)
            return compiled(x)
    """, "run(torch.ones(2, 4))")]
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
        """`model.advance()` in a loop, where `Net.advance` changes an int attribute forward reads; or
        `model.sizes.append(s)`, a list attribute forward reads."""
        func = node.func
        if not (self._loops or any(isinstance(f, cst.FunctionDef) for f in self.ctx.functions)):
            return
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and \
                isinstance(func.value.value, cst.Name) and func.value.value.value != "self" and \
                func.attr.value in LIST_CHANGES:
            self._list_changed(node, func.value.value.value, func.value.attr.value)
            return
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) or func.value.value == "self":
            return
        name, method = func.value.value, func.attr.value
        if self._list_changed_by(node, name, method):
            return
        for path, info in self.module_classes(name):
            attrs = info.setters.get(method)
            if attrs and is_module_class(self.ctx.project, path, info.name) and \
                    self._report(node, name, attrs[0], path, info, f" (in `{info.name}.{method}`)"):
                return
            for attr, _, only in (e.partition(":") for e in info.tree_setters.get(method, ())):
                for sub_path, sub in self._submodule_classes(path, info, only):
                    if self._report(node, name, attr, sub_path, sub, f" on every `{sub.name}` in its tree (in "
                                    f"`{info.name}.{method}`)", shown=attr):
                        return

    def _list_changed(self, node: cst.Call, name: str, attr: str) -> None:
        """`model.sizes.append(s)` between calls, where the module class (of this file) keeps `self.sizes` as a
        list and `forward` reads it: Dynamo guards the list (its length, `len(self.sizes) == 1`) where forward
        first reads it, and every change recompiles (the guard model's "module list attribute")."""
        tree = guard_lines.parsed(self.ctx.source or "")
        for path, info in self.module_classes(name):
            cls = class_def(self.ctx.source or "", info) if path == self.ctx.path else None
            receiver = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=attr, ctx=ast.Load())
            if cls is None or not is_module_class(self.ctx.project, path, info.name) or \
                    not python_list(receiver, cls, cls, tree):
                continue
            reader = f"{info.name}.forward"
            if self.guard_span(reader, f"self.{attr}", at_entry=False) is None:
                continue            # forward never reads it: not guarded
            kind = "module list attribute"
            self.report_at_guard(node, reader, f"self.{attr}", f"`{name}.{attr}` changes here", at_entry=False,
                                 expr=source_of(node), attr=f"{name}.{attr}", reader=reader, effect=effect(kind),
                                 how="", what="a list")
            return

    def _list_changed_by(self, node: cst.Call, name: str, method: str) -> bool:
        """`model.update_memory(h)` between calls, where the module class (of this file) keeps `self.mems` as a
        list that this method changes (`self.mems.append(h)`, `self.mems = self.mems[-k:]`) and forward reads
        (`if not self.mems:`, through its own methods too): guarded there, every change recompiles (the guard
        model's "module list attribute", as `_list_changed`)."""
        tree = guard_lines.parsed(self.ctx.source or "")
        for path, info in self.module_classes(name):
            cls = class_def(self.ctx.source or "", info) if path == self.ctx.path else None
            fn = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == method), None) \
                if cls is not None and is_module_class(self.ctx.project, path, info.name) else None
            for attr in sorted(_lists_changed(fn)) if fn is not None else ():
                receiver = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=attr, ctx=ast.Load())
                reader = f"{info.name}.forward"
                if python_list(receiver, cls, cls, tree) and \
                        self.guard_span(reader, f"self.{attr}", at_entry=False) is not None:
                    self.report_at_guard(node, reader, f"self.{attr}", f"`{source_of(node)}` changes `self.{attr}` "
                                         f"here", at_entry=False, expr=source_of(node), attr=f"{name}.{attr}",
                                         reader=reader, effect=effect("module list attribute"),
                                         how=f" (in `{info.name}.{method}`)", what="a list")
                    return True
        return False

    def _submodule_classes(self, path: str, info, only: str):
        """The project's module classes whose instances the module class `info` builds into its attributes, at
        any depth (`self.fc1 = QuantLinear(...)`): what `self.modules()` yields; only `only` when given (an
        `isinstance(m, QuantLinear)` test)."""
        project = self.ctx.project
        if project is None:
            return []
        out, seen, todo = [], {(path, info.name)}, [(path, info)]
        while todo:
            p, c = todo.pop()
            cix = project.by_path.get(p)
            for ctor in (x for xs in c.attrs.values() for x in xs) if cix is not None else ():
                r = project.resolve(cix, ctor)
                if not r or r[0] != "class" or (r[1][0], r[1][1].name) in seen:
                    continue
                seen.add((r[1][0], r[1][1].name))
                todo.append(r[1])
                if is_module_class(project, r[1][0], r[1][1].name) and \
                        (not only or only.rpartition(".")[2] == r[1][1].name):
                    out.append(r[1])
        return out

    def _report(self, node, name: str, attr: str, path: str, info, how: str, shown: str = "") -> bool:
        """Report the change of `name.<attr>` (or of what `shown` names) if the guard model says it
        recompiles."""
        scalar = info.scalars.get(attr)
        reader = f"{info.name}.forward" if path == self.ctx.path else None
        if scalar is None and reader is not None and isinstance(node, cst.Assign):
            # kept from a parameter (`self.npoint = npoint`): a literal assigned now says what it holds
            scalar = number_kind(source_of(node.value)) or self._loop_kind(node.value)
            if scalar is not None and self.guard_span(reader, f"self.{attr}", at_entry=False) is None:
                return False
        elif attr not in info.reads:
            return False
        kind = MODULE_KINDS.get(scalar or "", module_int(self.ctx.source or ""))
        if scalar is None or not recompiles(kind):
            return False
        shown = shown or f"{name}.{attr}"
        self.report_at_guard(node, reader, f"self.{attr}", f"`{shown}` changes here", at_entry=False,
                             expr=source_of(node), attr=shown, reader=f"{info.name}.forward", effect=effect(kind), how=how,
                             what=WHAT[scalar])
        return True

    def _loop_kind(self, value: cst.BaseExpression) -> Optional[str]:
        """The kind of the values a loop around binds to the name assigned (`enc.pooling = pool` with `pool` an
        Enum member of the loop's rows: "enum"), where the guard model knows that kind of module attribute."""
        found = varying(self.ctx, value, [b for b in self.ctx.blocks if isinstance(b, cst.For)]) \
            if isinstance(value, cst.Name) else None
        return found[1] if found and found[1] in WHAT else None

    def _check(self, node, target) -> None:
        if not isinstance(target, cst.Attribute) or self.tensors.kind(node.value) == TENSOR:
            return
        if isinstance(target.value, cst.Attribute) and isinstance(target.value.value, cst.Name):
            self._check_submodule(node, target)
            return
        if not isinstance(target.value, cst.Name):
            return
        name, attr = target.value.value, target.attr.value
        if name == "self":
            return
        for path, info in self.module_classes(name):
            if is_module_class(self.ctx.project, path, info.name) and self._report(node, name, attr, path, info, ""):
                return

    def finish(self, findings) -> None:
        """A module class of this unit whose instance another file changes between calls of the compiled object
        (`model.sa1.npoint = 48` in a training script): reported here, at the guard (`foreign_setters`)."""
        for cls, reader, attr, scalar, span, related in assigned_elsewhere(self, modules=True):
            kind = MODULE_KINDS.get(scalar, module_int(self.ctx.source or ""))
            if recompiles(kind):
                shown = related[3].split("`")[1].split("=")[0].strip()
                self.ctx.report(self, None, self.format_message(
                    expr=related[3].split("`")[1], attr=shown, how="", reader=reader, effect=effect(kind),
                    what=WHAT[scalar]), at=span, related=[related])

    def _check_submodule(self, node, target: cst.Attribute) -> None:
        """`model.sa1.npoint = 48` between calls: an attribute of a submodule the compiled module keeps (`self.sa1 =
        SetAbstraction(...)`), which that submodule's `forward` reads. Dynamo inlines the submodule's forward into
        the compiled frame and guards the attribute where it reads it, as it guards the module's own."""
        name, sub, attr = target.value.value.value, target.value.attr.value, target.attr.value
        project = self.ctx.project
        if name == "self" or project is None:
            return
        for path, info in self.module_classes(name):
            cix = project.by_path.get(path)
            if cix is None or not is_module_class(project, path, info.name):
                continue
            for ctor in info.attrs.get(sub, ()):
                r = project.resolve(cix, ctor)
                if r and r[0] == "class" and is_module_class(project, r[1][0], r[1][1].name) and \
                        self._report(node, f"{name}.{sub}", attr, r[1][0], r[1][1], ""):
                    return


def _lists_changed(fn: ast.FunctionDef) -> set:
    """The attributes a method changes in place (`self.mems.append(h)`) or rebinds (`self.mems = ...`)."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in LIST_CHANGES and \
                isinstance(n.func.value, ast.Attribute) and guard_lines.dotted(n.func.value.value) == "self":
            out.add(n.func.value.attr)
        for t in n.targets if isinstance(n, ast.Assign) else ():
            if isinstance(t, ast.Attribute) and guard_lines.dotted(t.value) == "self":
                out.add(t.attr)
    return out


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"
