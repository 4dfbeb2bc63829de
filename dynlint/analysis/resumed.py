"""Guards installed again in the frames Dynamo resumes after a graph break, and none in the frames it skips.

When the graph breaks inside a function Dynamo compiles (`if sigmas[i + 1] == 0:` on a tensor, a `.item()`), it
runs the break eagerly and compiles the rest of the function as a frame of its own (a `torch_dynamo_resume_in_*`
function), whose arguments are the live locals. That frame has guards of its own: a Python number the first
frame guarded (`i == 0` where `sigmas[i]` read it) is guarded again where the resumed code first reads it
(`sigmas[i + 1]`), so a new value fails both guards, and the recompile log names both lines. Measured on torch
2.13 (a probe: `a = table[i]`, a `print`, `return y + table[i + 1]`; each new `i` recompiles the function at
the first read and `torch_dynamo_resume_in_step_at_7` at the second).

Each finding at a guard (Finding.guard: the function's `def` line and the value it guards) gets a copy at the
first read after the first break below it in the same function that Dynamo resumes from: one not inside a
loop of that function (a break in a loop skips the whole frame: nothing is resumed) nor in a function nested in
it, with no break in a loop further down (the resumed frame would be skipped in its turn).

A graph break inside a loop makes Dynamo skip the whole frame: the function runs eagerly, and nothing in its own
code is guarded, what it reads before the loop included (what it calls is entered as frames of their own, guarded
as usual). A recompile finding in such a function's own code names a guard that is never installed
(`in_skipped_frames`). Measured on torch 2.13: tests/test_skipped_frames.py.
"""
from __future__ import annotations

import ast
import builtins
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from dynlint.analysis import guard_lines
from dynlint.analysis.defs import body_nodes, host_call
from dynlint.analysis.names import SKIPS_FRAME
from dynlint.linter.finding import Finding

BUILTINS = frozenset(dir(builtins))


def resumed_guards(findings: Sequence[Finding], breaks: Sequence[Finding],
                   text: Callable[[str], Optional[str]]) -> List[Finding]:
    """The findings at the guards the resumed frames install again (see the module's docstring)."""
    by_path: Dict[str, List[int]] = {}
    for b in breaks:
        by_path.setdefault(b.path, []).append(b.line)
    out: List[Finding] = []
    for f in findings:
        if not f.guard or f.path not in by_path:
            continue
        source = text(f.path)
        fn = guard_lines.function_at(source, f.guard[0]) if source else None
        if fn is None:
            continue
        lines = sorted({ln for ln in by_path[f.path] if fn.lineno < ln <= (fn.end_lineno or 0)})
        for line in (ln for ln in lines if ln >= f.line):      # (a break in the guarded statement too)
            if not all(resumes_after(fn, later) for later in lines if later >= line):
                break           # (a break in a loop further down skips the resumed frame: no guards at all)
            read = (guard_lines.index_read if f.pattern == "0-d tensor index" else guard_lines.guard_read)(
                source, fn, f.guard[1], after=line)
            if read is not None and read[0] != f.line:
                out.append(f.with_(
                    line=read[0], column=read[1], end_line=read[2], end_column=read[3], guard=(),
                    message=f"{f.message} (guarded again where the code Dynamo resumes after the break at line "
                            f"{line} reads it)",
                    related=f.related + ((f.path, f.line, f.column, "first guarded here"),)))
                break           # (a later break's resumed frame: the same value, the same kind of guard)
    return out


def resumes_after(fn: ast.AST, line: int) -> bool:
    """Does a break at `line` of `fn` leave code for Dynamo to resume in `fn`'s frame: the line is in `fn`'s own
    statements, not in a loop of it nor in a function or class nested in it?"""
    def inside(node: ast.AST) -> bool:
        return node.lineno <= line <= (getattr(node, "end_lineno", None) or node.lineno)
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                          ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) and \
                hasattr(n, "lineno") and inside(n):
            return False
        stack.extend(ast.iter_child_nodes(n))
    return True


# calls whose value is a Python number: the clock (`time.perf_counter()`), the `math` module
NUMBER_MODULES = ("time.", "math.")


def held_across(fn: ast.AST, made: int, breaks: Sequence[int], known: Callable[[str], bool],
                returned: bool = False) -> Optional[Tuple[str, int]]:
    """The Python number a break at `made` binds (`t0 = time.perf_counter()`, `s = x.sum().item()`), and the
    next of `breaks` (lines of `fn`: its breaks, and its calls of functions that break) while it is still needed.
    Dynamo resumes after the first break in a frame that receives the number; where that frame ends at the next
    break with the number live, it keeps the number and guards its value there (measured on torch 2.13:
    `___stack0 == 35749.2` at the second break's line, for a float and an int alike; a number the frame only
    returns is not guarded). None where the code between reads or rebinds it (a read that computes is where the
    guard is: DYN510), where a break is in a loop (the frame is skipped), where a call between them goes to a
    function not known here (`fn(self, *args)` of a wrapper: it may break first), where nothing reads it
    after, or in a generator. The frame guards it even with no tensor work before that break (`elapsed =
    time.perf_counter() - start` right after the first: measured). `known(name)`: a module-level name of the file (a def, a class, an import)."""
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in body_nodes(fn)):
        return None             # a generator (a context manager's): Dynamo makes no resumed frame of it
    made_by = _number_assigned(fn, made, returned)
    if made_by is None:
        return None
    name, end = made_by
    later = sorted(b for b in breaks if b > end)
    if not later or not resumes_after(fn, made) or not resumes_after(fn, later[0]):
        return None
    at = later[0]
    uses = [n for n in body_nodes(fn) if isinstance(n, ast.Name) and n.id == name and not _exclusive(fn, made, n.lineno)]
    if any(end < n.lineno < at for n in uses) or not any(n.lineno >= at and isinstance(n.ctx, ast.Load) for n in uses):
        return None
    return None if _opaque_call(fn, end, at, known) else (name, at)


def _exclusive(fn: ast.AST, a: int, b: int) -> bool:
    """Are lines `a` and `b` in the two arms of one `if` of `fn` (no run goes through both)?"""
    def within(stmts, line):
        return bool(stmts) and stmts[0].lineno <= line <= (stmts[-1].end_lineno or stmts[-1].lineno)
    return any(isinstance(n, ast.If) and (within(n.body, a) and within(n.orelse, b) or
                                          within(n.orelse, a) and within(n.body, b)) for n in body_nodes(fn))


def _number_assigned(fn: ast.AST, made: int, returned: bool = False) -> Optional[Tuple[str, int]]:
    """(name, last line) of `name = <a call giving a Python number>` at line `made` of `fn`: a host value
    (`.item()`, `int(t)`), the clock, a `math` function; with `returned`, any call (one of a function that
    breaks and returns a number, which the caller's resumed frame receives)."""
    stmt = next((s for s in body_nodes(fn) if isinstance(s, ast.Assign) and
                 s.lineno <= made <= (s.end_lineno or s.lineno)), None)
    if stmt is None or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) or \
            not isinstance(stmt.value, ast.Call) or not (returned or
                host_call(stmt.value) or (guard_lines.dotted(stmt.value.func) or "").startswith(NUMBER_MODULES)):
        return None
    return stmt.targets[0].id, stmt.end_lineno or stmt.lineno


def _opaque_call(fn: ast.AST, end: int, at: int, known: Callable[[str], bool]) -> bool:
    """A call between the lines whose function is a parameter, a closure's variable or a local: not known here."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    return any(isinstance(c, ast.Call) and end < c.lineno < at and isinstance(c.func, ast.Name) and
               (c.func.id in params or not (known(c.func.id) or c.func.id in BUILTINS)) for c in body_nodes(fn))


def in_skipped_frames(findings: Sequence[Finding], breaks: Sequence[Finding], text: Callable[[str], Optional[str]],
                      entered: Sequence[Tuple[str, int]] = (),
                      span: Callable[[str, int], Optional[Tuple[int, int]]] = lambda path, line: None
                      ) -> List[Finding]:
    """The findings in the own code of a frame Dynamo skips (see the module's docstring). Dynamo traces a function
    from its start to the first break: one in a loop, reached on every iteration, skips the frame; one outside
    loops and conditions ends a graph, and the code after it is the next frame, traced the same way. `entered`:
    (path, line) of the calls that enter a function which breaks, which end their caller's graph too. Where a
    frame may end before its loop (a break or such a call under a condition), its findings are kept. `span(path,
    line)`: the lines of the innermost function holding a line, from the index (a finding whose function has no
    break that skips a frame is not parsed for)."""
    by_path: Dict[str, List[Tuple[int, bool]]] = {}        # path -> (line, skips when in a loop)
    for b in breaks:
        by_path.setdefault(b.path, []).append((b.line, SKIPS_FRAME in b.message))
    for path, line in entered:
        by_path.setdefault(path, []).append((line, False))
    out: List[Finding] = []
    for f in findings:
        lines = span(f.path, f.line)
        source = text(f.path) if any(lines is None or lines[0] <= at <= lines[1]
                                     for at, _ in by_path.get(f.path, ())) else None
        fn = guard_lines.innermost_function(source, f.line) if source else None
        if fn is not None and _skipped(fn, f.line, sorted(b for b in by_path[f.path]
                                                          if fn.lineno < b[0] <= (fn.end_lineno or 0))):
            out.append(f)
    return out


def after_skipping_breaks(breaks: Sequence[Finding], text: Callable[[str], Optional[str]]) -> List[Finding]:
    """The graph breaks below a break in a `try` block (reached always) that makes Dynamo skip the whole function,
    in that function's own code: Dynamo stops tracing there and runs the function eagerly, so it never meets
    them (the functions they call are frames of their own, and keep their breaks). Not after a break in a loop:
    Dynamo still reports the breaks after the loop there (measured, torch 2.13: a skipped `heapq.heappush` in a
    loop, then `heapq.nsmallest` below it, both reported)."""
    out: List[Finding] = []
    skipping = [b for b in breaks if f"inside a `try` block, so Dynamo {SKIPS_FRAME}" in b.message]
    for path in sorted({b.path for b in skipping}):
        source = text(path)
        if not source:
            continue
        for b in sorted((b for b in skipping if b.path == path), key=lambda b: b.line):
            fn = guard_lines.innermost_function(source, b.line)
            if fn is None or _reach(fn, b.line) not in ("always", "every iteration"):
                continue
            out += [f for f in breaks if f.path == path and b.line < f.line <= (fn.end_lineno or 0) and
                    f not in out and guard_lines.innermost_function(source, f.line) is fn]
    return out


def _skipped(fn: ast.AST, line: int, breaks: List[Tuple[int, bool]]) -> bool:
    """Is `line` of `fn` in a frame Dynamo skips, given the breaks in `fn` in the order of their lines?"""
    start = fn.lineno - 1           # the frame under way starts after this line
    for at, skips in breaks:
        reach = _reach(fn, at)
        if reach == "every iteration" and skips:
            return line > start
        if reach == "always":
            if line <= at:
                return False
            start = at
        elif reach == "maybe" and at < line and _work_only_at(fn, start, at):
            start = at              # (the break is the frame's only work: taken or not, no graph below it)
        elif reach in ("maybe", "every iteration"):
            return False            # (the frame may end here first, or Dynamo's treatment is not known)
    return start >= fn.lineno and line > start and _work_only_at(fn, start, start)


# what can run tensor work (or read one): with none of these, a frame makes no graph
_WORK = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.AugAssign, ast.Await, ast.Yield, ast.YieldFrom,
         ast.comprehension)
# calls Dynamo answers while tracing, from what kind of value it has
_STATIC = frozenset({"isinstance", "issubclass", "hasattr", "callable"})


def _work_only_at(fn: ast.AST, start: int, at: int) -> bool:
    """Below line `start` of `fn`, only the statement at line `at` (a break) can do tensor work: elsewhere no
    call (but `isinstance` and its kind), no operator, no read of an item (`self._logged[name] = value`). A
    frame with no graph is not compiled, so nothing in it is guarded: the one Dynamo resumes after the break,
    and, where the break is under a condition not taken, the frame itself (measured, torch 2.13)."""
    rest = [s for s in guard_lines._statements(fn.body) if s.lineno > start and
            not (s.lineno <= at <= (s.end_lineno or s.lineno) and not hasattr(s, "body"))]
    return any(s.lineno > at for s in rest) and not any(
        (isinstance(n, _WORK) and not (isinstance(n, ast.Call) and guard_lines.dotted(n.func) in _STATIC)) or
        (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load))
        for s in rest for e in guard_lines._own_expressions(s) for n in ast.walk(e))


def no_work_before(fn: ast.AST, line: int) -> bool:
    """No statement of `fn` above line `line` can do tensor work: a frame breaking at `line` makes no graph
    before it, so only the frame Dynamo resumes there is compiled and guarded (its recompiles name `line`)."""
    before = [s for s in guard_lines._statements(fn.body) if (s.end_lineno or s.lineno) < line]
    return not any((isinstance(n, _WORK) and not (isinstance(n, ast.Call) and guard_lines.dotted(n.func) in _STATIC))
                   or (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load))
                   for s in before for e in guard_lines._own_expressions(s) for n in ast.walk(e))


def _reach(fn: ast.AST, line: int) -> Optional[str]:
    """"always": `line` is in `fn`'s own statements outside loops and conditions; "every iteration": in a
    `for`/`while` loop of them, with no condition between the loop and it (a break in an `if`'s own test
    counts); "maybe": under a condition outside loops; None otherwise (under a condition in a loop, whose
    break skips the frame when taken; in a nested function)."""
    node, looped = fn, False
    while True:
        inner = next((c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt) and
                      c.lineno <= line <= (c.end_lineno or c.lineno)), None)
        if inner is None:
            return "every iteration" if looped else "always"
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        if isinstance(inner, (ast.For, ast.AsyncFor, ast.While)):
            looped = True
        elif isinstance(inner, ast.If):
            if not inner.test.lineno <= line <= (inner.test.end_lineno or inner.test.lineno):
                return None if looped else "maybe"
        node = inner
