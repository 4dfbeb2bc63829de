"""Guards installed again in the frames Dynamo resumes after a graph break.

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
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Sequence

from dynlint.analysis import guard_lines
from dynlint.linter.finding import Finding


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
            read = guard_lines.guard_read(source, fn, f.guard[1], after=line)
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
