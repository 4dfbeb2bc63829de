"""GitHub Actions annotations: one workflow command per finding, e.g.

    ::warning file=model.py,line=9,col=12,endLine=9,endColumn=23,title=DYN101 tensor-condition-in-branch::branch on ...

Columns convert here (1-based; endColumn is the column after the span, as in SARIF). Escaping follows
@actions/core: `%`, CR and LF in the message; those and `:` and `,` in property values. Before that, what
comes from the checked project (paths, messages that quote code) goes through `display.printable`: a file name
or a line of code must not reach the log as terminal escapes or bidi overrides.
"""
from __future__ import annotations

from dynlint.linter import notebooks
from dynlint.linter.codes import PARSE_ERROR
from dynlint.linter.files import repository_root
from dynlint.linter.finding import Finding
from dynlint.report.display import printable


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(f: Finding, prefix: str = "", stored: int = 0) -> str:
    """`stored`: for a notebook cell's finding, the line of the notebook's file that holds it (GitHub marks
    that line; the message names the cell)."""
    if f.code == PARSE_ERROR or f.severity == "error":
        level = "error"
    else:
        level = "notice" if f.severity == "note" else "warning"
    if f.cell:
        props = [("file", printable(prefix + f.path)), ("line", stored or 1)]
    else:
        props = [("file", printable(prefix + f.path)), ("line", f.line), ("col", f.column + 1)]
        end_line = max(f.end_line, f.line)
        if end_line > f.line or f.end_column > f.column:      # a known span; otherwise GitHub marks the line
            props += [("endLine", end_line), ("endColumn", f.end_column + 1)]
    props.append(("title", f"{f.code} {f.name}" if f.name else f.code))
    message = printable(f.message, line_breaks=True) + (f" [{f.status}]" if f.status else "")
    if f.cell:
        message += f" (cell {f.cell}, line {f.line})"
    if f.chain:
        message += f"\nreached through: {printable(' -> '.join(f.chain))}"
    for rpath, rline, _, what in f.related:
        message += f"\n{printable(what)}: {printable(prefix + rpath)}:{rline}"
    if f.fix:
        message += f"\nhelp: {printable(f.fix)}"
    return f"::{level} " + ",".join(f"{k}={escape_property(str(v))}" for k, v in props) + f"::{escape_data(message)}"


def render_report(report, options) -> str:
    """Paths are written relative to the project's repository (where Actions runs)."""
    root = report.config.root
    prefix, stored = repository_root(root)[1], notebooks.StoredLines(root)
    return "".join(command(f, prefix, stored(f)) + "\n" for f in report.findings)
