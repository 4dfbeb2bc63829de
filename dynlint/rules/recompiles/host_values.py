"""Python values made from tensors at a graph break (`.tolist()`, `.item()`) and read by the code Dynamo resumes
after it, in the same function (DYN510) or in its caller (DYN511)."""
from __future__ import annotations

import ast
from typing import Optional, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.frames import BUILTINS
from dynlint.analysis.guards import effect
from dynlint.analysis.regions import AUTOGRAD_FUNCTION
from dynlint.analysis.resumed import resumes_after
from dynlint.analysis.tensors import TENSOR, WEAK
from dynlint.analysis.tensors.kinds import TENSORS
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import dotted
from dynlint.rules.common import TorchRule


HOST_VALUES = ("DYN201", "DYN202", "DYN203")       # .item(), int(t)/float(t), .tolist(): their breaks
# a Python number made where the graph breaks on a call Dynamo does not trace: `math.exp(t)` of a tensor
# (DYN205), a NumPy draw torch's NumPy layer lacks (`np.random.beta(a, a)`, DYN405)
NUMBER_BREAKS = ("DYN205", "DYN405")
# NumPy draws that give one number: a distribution's with no `size`, or a bare `np.random.rand()`
# (`np.random.permutation(a)` and any draw with a size give an array, which Dynamo turns into a tensor)
# (draw -> its parameters before `size`: more positional arguments than that pass a size)
SCALAR_DRAWS = {"beta": 2, "uniform": 2, "normal": 2, "gamma": 2, "binomial": 2, "randint": 2, "lognormal": 2,
                "laplace": 2, "logistic": 2, "vonmises": 2, "exponential": 1, "poisson": 1, "triangular": 3,
                "rand": 0, "randn": 0, "random": 0, "random_sample": 0, "standard_normal": 0}


GUARD, HANDED = "guard", "handed"
# builtins that read what a tensor's shape already fixes (the length of `t.tolist()`), or only the type
SHAPE_ONLY = frozenset({"len", "type", "id"})


def guarded_read(ctx, node: cst.Name, tensor=None) -> bool:
    """Is this read where the resumed code specialises on the value? Dynamo guards an input of the resumed
    frame where it first computes with it (measured): an operand of arithmetic, a comparison or `not`
    (`w + 1`, `x / (peak + 1e-6)`), the test of an `if`/`while` or the left of `and`/`or`, a subscript, a
    formatted string, an argument of a builtin, torch function or tensor method (`max(w, 1)`,
    `isinstance(w, int)`, `torch.arange(n)`, `x.split(sizes)`; not `len(sizes)`, which the tensor's shape
    fixes), a `range()` bound. Binding it to another name, packing it into a tuple, appending it to a list or
    returning it installs no guard; a value handed to another function is guarded where that function uses it
    (not known here); one on the right of `and`/`or` may never be evaluated. `tensor(receiver)`: whether a
    local whose method is called is known to be a tensor (without it, any local's method is taken for a
    tensor's)."""
    return read_kind(ctx, node, tensor) == GUARD


def read_kind(ctx, node: cst.Name, tensor=None) -> Optional[str]:
    """GUARD for a read `guarded_read` accepts; HANDED for one that hands the value to a function of the
    project (`self.get_loss(..., n)`, `helper(n)`), which Dynamo inlines and where it guards the value first,
    at a line not known here; None for any other read."""
    chain = list(ctx.parents) + [node]
    for i in range(len(chain) - 2, -1, -1):
        n, child = chain[i], chain[i + 1]
        if isinstance(n, cst.BooleanOperation):
            return GUARD if child is n.left else None
        if isinstance(n, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.Subscript,
                          cst.FormattedStringExpression)):
            return GUARD
        if isinstance(n, (cst.If, cst.While)):
            return GUARD if child is n.test else None
        if isinstance(n, cst.Call) and child is not n.func:
            text = dotted(n.func) or ""
            name = ctx.qualify(n.func) or text
            if _project_callable(ctx, text):
                return HANDED
            if name in BUILTINS and name not in SHAPE_ONLY or name.startswith("torch.") or (       # a method of a local: a tensor's
                    isinstance(n.func, cst.Attribute) and name == text and not text.startswith("self.") and
                    (tensor is None or tensor(n.func.value))):
                return GUARD            # a builtin (`max(w, 1)`), a torch function or a tensor's method
            return None
        if isinstance(n, (cst.Return, cst.SimpleStatementLine, cst.Lambda, cst.FunctionDef)):
            return None
    return None


def _project_callable(ctx, text: str) -> bool:
    """`self.method`, or a function or class of the project (this file's or one it imports)."""
    ix, project = ctx.index, ctx.project
    if text.startswith("self."):
        return True
    if not text or ix is None:
        return False
    found = project.resolve(ix, text) if project is not None else None
    return text in ix.functions or text in ix.classes or bool(found and found[0] in ("function", "class"))


def _passed_on(fn, name: str, span) -> bool:
    """The read of `name` at `span` in `fn` only hands it to another call that is not a builtin's or torch's
    (`loss_map[loss](outputs, num_boxes)`: where it is guarded is further on, not known here), or iterates it
    (`for n in sizes`: its length, which the tensor's shape fixed; each item is guarded where it is used)."""
    if any(isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.iter, ast.Name) and n.iter.id == name and
           n.iter.lineno == span[0] for n in ast.walk(fn)):
        return True
    lines = {}
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        for a in list(call.args) + [k.value for k in call.keywords]:
            if isinstance(a, ast.Name) and a.id == name:
                lines[(a.lineno, a.col_offset)] = call
    call = next((c for (ln, _), c in lines.items() if ln == span[0]), None)
    func = guard_lines.dotted(call.func) if call is not None else None
    return call is not None and not (func and (func in BUILTINS or func.startswith(("torch.", "math."))))


class ResumedWork(TorchRule):
    """The lines of each function that do tensor work (a call, an operator or a subscript whose value is a
    tensor): code Dynamo resumes after a break compiles a frame, and keeps its guards, only where there is
    some; a resumed frame of Python alone (`return 100.0 * correct / n`, `if max(norms) > 100: raise`) has no
    graph, so nothing in it is guarded (measured, torch 2.13)."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.made: dict = {}        # (function, name) -> line of `name = <host value>`
        self.work: dict = {}        # function -> lines with tensor work after its first host value

    def _work(self, node) -> None:
        # (asked only where a host value was made above: the kinds of every traced node would cost more than
        # the rest of the pass)
        if self.made and any(k[0] == self.ctx.qualname for k in self.made) and \
                self.tensors.kind(node) in (TENSOR, WEAK, TENSORS):
            self.work.setdefault(self.ctx.qualname, set()).add(self.ctx.position(node)[0])

    def visit_Call(self, node: cst.Call) -> None:
        self._work(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._work(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._work(node)

    def works_after(self, qualname: str, line: int) -> bool:
        return any(ln > line for ln in self.work.get(qualname, ()))


@register
class HostValueGuardedAfterBreak(ResumedWork):
    """Checks for a Python value taken from a tensor where the graph breaks (`sizes = counts.tolist()`,
    `n = mask.sum().item()`) and then read by the code after it (`x.split(sizes)`, `if n:`): Dynamo
    resumes after the break in a new frame that receives the value as an input and guards on it."""
    code = "DYN510"
    reads_breaks = True
    name = "host-value-guarded-after-break"
    message = ("`{name}` comes from the graph break at line {line} and is read by the code Dynamo resumes after "
               "it, which is guarded on its value: {effect}")
    fix = ("Keep the value a tensor (`torch.split` with a tensor of sizes is not possible, but masks, `torch.where` "
           "and `index_select` often are), or mark the values dynamic; fixing the break removes both")
    recompiles = True
    severity = "note"
    why = """
        A `.tolist()`, `.item()` or `int(tensor)` that breaks the graph ends the graph there (so does
        `math.exp(t)` of a tensor, or a NumPy draw torch's NumPy layer lacks, `np.random.beta(a, a)`, each
        making a Python number); Dynamo resumes the function after it in a frame of its own whose inputs
        include the Python values just made. The
        resumed code is specialised on them (split sizes, a loop bound, a condition, a number in arithmetic with
        a tensor) and guarded, so the first call whose data give other values recompiles; then they become
        dynamic (docs/guards.md, "values after a break"). Routing counts in mixture-of-experts layers change on
        every batch.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def per_expert(x, route):
            sizes = torch.bincount(route, minlength=4).tolist()
            return [part.sum() for part in x.split(sizes)]
    """, "per_expert(torch.ones(8, 2), torch.tensor([0, 0, 1, 1, 1, 2, 3, 3]))",
        "per_expert(torch.ones(8, 2), torch.tensor([0, 1, 1, 1, 1, 2, 2, 3]))"), Example("""
        import torch

        @torch.compile
        def normalise(x):
            peak = x.abs().max().item()
            return x / (peak + 1e-6)            # arithmetic with a tensor: `peak` is a constant of the graph
    """, "normalise(torch.tensor([1.0, -2.0]))", "normalise(torch.tensor([3.0, 1.0]))"), Example("""
        import math

        import torch

        @torch.compile
        def tempered(logits, temperature):
            t = math.exp(temperature.log())     # a Python float, made where the graph breaks
            return logits / t
    """, "tempered(torch.randn(3), torch.tensor(2.0))", "tempered(torch.randn(3), torch.tensor(3.0))"), Example("""
        import torch
        import torch.nn.functional as F

        @torch.compile
        def paste(mask, box: torch.Tensor):
            w = int(box[2] - box[0])
            w = max(w, 1)                       # the first computation with `w`: guarded here
            return F.interpolate(mask, size=(w, w))
    """, "paste(torch.rand(1, 1, 4, 4), torch.tensor([0.0, 0.0, 6.0, 6.0]))",
        "paste(torch.rand(1, 1, 4, 4), torch.tensor([0.0, 0.0, 9.0, 9.0]))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def per_expert(x, route):
            onehot = torch.nn.functional.one_hot(route, 4).to(x.dtype)
            return onehot.t() @ x
    """, "per_expert(torch.ones(8, 2), torch.tensor([0, 0, 1, 1, 1, 2, 3, 3]))",
        "per_expert(torch.ones(8, 2), torch.tensor([0, 1, 1, 1, 1, 2, 2, 3]))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.read: dict = {}        # (function, name, line made) -> the first later read of that value

    def _resumed(self, qualname: str, line: int) -> bool:
        """Dynamo resumes the function after a break at `line`: not one in a loop of it (a break in a loop
        skips the whole frame, which then runs eagerly with no guards), `analysis.resumed`."""
        ix = self.ctx.index
        info = ix.functions.get(qualname) if ix is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        return fn is None or resumes_after(fn, line)

    def _resumable(self) -> bool:
        """Dynamo resumes after a break in the frame it compiles, but not inside an `autograd.Function`'s
        `forward`: a break there runs the whole `apply` eagerly, and nothing after it is traced."""
        cls, project = self.ctx.class_name, self.ctx.project
        return not (cls and project is not None and
                    any(b in AUTOGRAD_FUNCTION for b in project.external_bases(self.ctx.path, cls)))

    def _number_call(self, call: cst.Call) -> bool:
        """`math.exp(t)` (any `math` function: its result is a number), or a NumPy draw of one number."""
        name = self.call_name(call) or ""
        draw = name[len("numpy.random."):] if name.startswith("numpy.random.") else ""
        return name.startswith("math.") or (draw in SCALAR_DRAWS and not any(
            a.keyword and a.keyword.value == "size" for a in call.args) and
            sum(a.keyword is None for a in call.args) <= SCALAR_DRAWS[draw])

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        host = self._resumable() and isinstance(value, cst.Call) and (
            (isinstance(value.func, cst.Attribute) and value.func.attr.value in ("tolist", "item")) or
            (isinstance(value.func, cst.Name) and value.func.value in ("int", "float", "bool")) or
            self._number_call(value))
        if host and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            key = (self.ctx.qualname, node.targets[0].target.value)
            self.made[key] = self.ctx.position(node)[0]     # (each break makes a value of its own)

    def visit_Name(self, node: cst.Name) -> None:
        key = (self.ctx.qualname, node.value)
        if key not in self.made or key + (self.made[key],) in self.read:
            return
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if isinstance(parent, (cst.AssignTarget, cst.Param)) or (isinstance(parent, cst.Attribute) and
                                                                  parent.attr is node):
            return
        if self.ctx.position(node)[0] <= self.made[key]:
            return
        kind = read_kind(self.ctx, node, lambda recv: self.tensors.kind(recv) in (TENSOR, WEAK))
        if kind is not None:            # handed on first: guarded in the function it goes to, not here
            self.read[key + (self.made[key],)] = node if kind == GUARD else self._handed_guard(node)

    def _handed_guard(self, node: cst.Name):
        """(the span, the callee) where a function of this file that the value is handed to first computes
        with it (`self.scale(y, n)`, `def scale(self, x, n): return x * (n + 1)`): Dynamo inlines the callee
        into the resumed frame and guards the value there (measured). None when not known here."""
        call = next((p for p in reversed(self.ctx.parents) if isinstance(p, cst.Call)), None)
        arg = next((a for a in call.args if a.value is node), None) if call is not None else None
        text, ix = dotted(call.func) if call is not None else None, self.ctx.index
        if arg is None or arg.star or not text or ix is None:
            return None
        cls = self.ctx.class_name
        q = f"{cls}.{text[5:]}" if text.startswith("self.") and cls and "." not in text[5:] else text
        info = ix.functions.get(q)
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        if fn is None:
            return None
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args][1 if info.cls else 0:]
        positional = [a for a in call.args if a.keyword is None]
        param = arg.keyword.value if arg.keyword is not None else \
            params[positional.index(arg)] if positional.index(arg) < len(params) else None
        span = guard_lines.guard_read(self.ctx.source or "", fn, param) if param else None
        return (span, q) if span is not None and not _passed_on(fn, param, span) else None

    def finish(self, findings) -> None:
        breaks = {f.line for f in findings if f.code in HOST_VALUES + NUMBER_BREAKS}
        for (qualname, name, made), read in self.read.items():
            if read is None or made not in breaks or not self.works_after(qualname, made) or \
                    not self._resumed(qualname, made):
                continue
            message = self.format_message(name=name, line=made, effect=effect("values after a break"))
            if isinstance(read, tuple):     # handed to a function of this file: guarded at its first use there
                (span, callee), line = read, made
                self.ctx.report(self, None, message.replace(" is read by the code", f" is handed to `{callee}` by "
                                                             "the code", 1), at=span,
                                related=[(line, 0, f"`{name}` is made here, at the break")])
            else:
                self.ctx.report(self, read, message, ())


@register
class HostValueGuardedInResumedCode(TorchRule):
    """Checks for Python values a function makes where the graph breaks and returns (`sizes =
    counts.tolist()`, then `return x, sizes`), read by its caller's code after the call or by what that code
    passes them to: the caller's graph ends at the call, and the code Dynamo resumes after it is guarded on
    the values."""
    code = "DYN511"
    name = "host-value-guarded-in-resumed-code"
    message = ("`{name}` holds the Python values made at the graph break at {where} and returned from there; the "
               "code Dynamo resumes after that call reads them here and is guarded on them: {effect}")
    fix = ("Return the counts as a tensor and keep the code after the call on tensors (masks, `index_select`), or "
           "mark the values dynamic; fixing the break removes both")
    recompiles = True
    severity = "note"
    scope = "frame"
    why = """
        A function that breaks the graph with `.tolist()` (or `.item()`, `int(t)`) ends its caller's graph at
        the call: Dynamo runs the function, then resumes the caller after the call in a frame of its own,
        whose inputs include the values the function returned. Code of that resumed frame, the caller's own
        or a function it calls and Dynamo inlines, is specialised on those values where it reads them (split
        sizes, a loop bound, a condition), so the first call whose data give other values recompiles; then
        they become dynamic (docs/guards.md, "values after a break"). Mixture-of-experts layers that route with
        `expert_size = counts.tolist()` in a gating module and split by it in the experts' module do this on
        every batch.
    """
    INVALID = [Example("""
        import torch


        def route(x):
            counts = (x.argmax(-1)[:, None] == torch.arange(4)).sum(0)
            sizes = counts.tolist()
            return x * 2, sizes


        def per_expert(x, sizes):
            return torch.cat([part.sum(0, keepdim=True) for part in x.split(sizes)])


        @torch.compile
        def moe(x):
            y, sizes = route(x)
            return per_expert(y, sizes)
    """, "moe(torch.eye(4).repeat(2, 1))", "moe(torch.eye(4)[[0, 0, 0, 1, 1, 2, 3, 3]])")]
    VALID = [Example("""
        import torch


        def route(x):
            onehot = (x.argmax(-1)[:, None] == torch.arange(4)).to(x.dtype)
            return x * 2, onehot


        def per_expert(x, onehot):
            return onehot.t() @ x


        @torch.compile
        def moe(x):
            y, onehot = route(x)
            return per_expert(y, onehot)
    """, "moe(torch.eye(4).repeat(2, 1))", "moe(torch.eye(4)[[0, 0, 0, 1, 1, 2, 3, 3]])")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.done: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        project = self.ctx.project
        frame = project.frames.get((self.ctx.path, self.ctx.qualname)) if project is not None else None
        origin = {name: (path, line) for name, path, line in frame.host}.get(node.value) if frame else None
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if origin is None or node.value in self.done or isinstance(parent, (cst.AssignTarget, cst.Param)) or (
                isinstance(parent, cst.Attribute) and parent.attr is node) or \
                not guarded_read(self.ctx, node, lambda recv: self.tensors.kind(recv) in (TENSOR, WEAK)):
            return
        self.done.add(node.value)
        path, line = origin
        self.report(node, name=node.value, where=f"line {line}" if path == self.ctx.path else f"{path}:{line}",
                    effect=effect("values after a break"))


@register
class HostValueHeldAcrossBreak(TorchRule):
    """Checks for a Python number made where the graph breaks (`start = time.perf_counter()`, `s =
    x.sum().item()`) and still needed where the graph breaks again further down (`y = self.head(y)` with a
    break inside, then `time.perf_counter() - start`): the frame Dynamo resumes after the first break ends at
    the second with the number live, and is guarded on its value there (analysis/frames.py `Frame.held`)."""
    code = "DYN520"
    name = "host-value-held-across-break"
    message = ("`{name}` holds the Python number made at the graph break at line {line} and is still needed when "
               "the graph breaks again here; the code Dynamo resumed after line {line} is guarded on its value at "
               "this line: {effect}")
    fix = ("Take the number outside the compiled code (time the call from its caller), keep it a tensor, or fix "
           "either break")
    recompiles = True
    severity = "note"
    scope = "frame"
    why = """
        A call that breaks the graph and gives a Python number (the clock, `.item()`, `int(t)`, a `math`
        function of a tensor) ends the graph; Dynamo runs it and resumes the function after it in a frame of
        its own whose inputs include the number. Where that resumed frame breaks again, by itself or in a call
        of a function that breaks, while the number is still needed further down (`elapsed =
        time.perf_counter() - start` after the model's call), Dynamo has to keep the number across the break
        and guards it, at the line of that second break: a clock reading, or any number taken from data,
        differs on the next call and recompiles the resumed code there (measured on torch 2.13; the value is
        dynamic after that). Timing wrappers around a forward that breaks do this on every call.
    """
    INVALID = [Example("""
        import time

        import torch


        def normalise(x):
            if x.sum() > 0:                     # a data-dependent branch: the graph breaks in here
                return x / x.sum()
            return x


        @torch.compile
        def timed(x):
            start = time.perf_counter()         # a break: the clock is read eagerly
            y = normalise(x.sin())              # breaks again with `start` needed below: guarded here
            return y, time.perf_counter() - start
    """, "timed(torch.ones(3))", "timed(torch.ones(3))")]
    VALID = [Example("""
        import torch


        def normalise(x):
            return x / x.abs().sum().clamp_min(1e-6)


        @torch.compile
        def step(x):
            return normalise(x.sin())
    """, "step(torch.ones(3))", "step(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.done: Set[Tuple[str, str, int]] = set()

    def _at(self, node: cst.CSTNode) -> None:
        project = self.ctx.project
        frame = project.frames.get((self.ctx.path, self.ctx.qualname)) if project is not None else None
        line = self.ctx.position(node)[0]
        for name, made, at in (frame.held if frame is not None else ()):
            key = (self.ctx.qualname, name, at)
            if at == line and key not in self.done:
                self.done.add(key)
                message = self.format_message(name=name, line=made, effect=effect("values after a break"))
                self.ctx.report(self, node, message, (),
                                related=[(made, 0, f"`{name}` is made here, at the break")])

    def visit_Call(self, node: cst.Call) -> None:
        self._at(node)

    def visit_If(self, node: cst.If) -> None:
        self._at(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._at(node.test)
