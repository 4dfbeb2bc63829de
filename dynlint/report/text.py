"""Human output, in the manner of the best linters: location, code, message, the source line with the
span underlined, the fix and the call chain; then a summary. Colour only on a terminal, NO_COLOR honoured.
What comes from the checked project is shown through `display` (escaped; long lines cut around the span)."""
from __future__ import annotations

import os
from collections import Counter
from typing import Callable, Dict, List, Sequence

from dynlint.linter import notebooks
from dynlint.linter.codes import PARSE_ERROR
from dynlint.linter.files import display_lines, shown
from dynlint.linter.finding import Finding
from dynlint.linter.words import plural
from dynlint.report.display import clip, printable


def use_colour(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


class _Style:
    def __init__(self, on: bool):
        self.on = on

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text


def _render(findings: Sequence[Finding], files: int, sources: Dict[object, List[str]], colour: bool,
            quiet: bool, statistics: bool, name: Callable[[str], str]) -> str:
    """`name`: how a finding's project-relative path is shown (relative to the working folder, in a run).
    `sources`: a file's lines by its path; a notebook cell's by (path, cell)."""
    s = _Style(colour)
    out: List[str] = []
    for f in () if statistics else findings:     # --statistics: the table alone, as ruff prints it
        status = f" [{f.status}]" if f.status else ""
        path = printable(name(f.path))
        if path.lstrip().startswith("::"):      # at a line's start, GitHub Actions would run it as a command
            path = "./" + path
        message, *more = f.message.split("\n")         # more: a traceback (--debug)
        mark = s("[*] ", "1;36") if _fix_safety(f) == "safe" else ""      # as ruff marks what --fix fixes
        where = f"cell {f.cell}:{f.line}" if f.cell else f"{f.line}"      # a notebook's cell, as ruff shows it
        out.append(f"{s(path, '1')}:{where}:{f.column + 1}: {s(f.code, '1;31' if f.severity == 'error' else '1;33')} "
                   f"{mark}{printable(message)}{s(status, '36')}")
        out += [f"       | {printable(m)}" for m in more]
        if quiet:
            continue
        lines = sources.get((f.path, f.cell) if f.cell else f.path)
        if lines and 0 < f.line <= len(lines):
            src = lines[f.line - 1].rstrip("\r\n").expandtabs(1)
            end = f.end_column if f.end_line in (0, f.line) and f.end_column > f.column else len(src)
            shown, start, stop = clip(src, f.column, end)
            # the caret under the span as shown: escapes and the cut change where it stands
            before, span = len(printable(shown[:start])), len(printable(shown[start:stop]))
            out.append(f"  {f.line:>4} | {printable(shown)}")
            out.append(f"       | {' ' * before}{s('^' * max(1, span), '1;31')}")
        if f.chain:
            out.append(f"       = {s('reached through', '2')}: {printable(' -> '.join(f.chain))}")
        for rpath, rline, rcol, what in f.related:
            out.append(f"       = {s(printable(what), '2')}: {printable(name(rpath))}:{rline}:{rcol + 1}")
        if f.fix:
            out.append(f"       = {s('help', '1;36')}: {printable(f.fix)}")
        out.append("")
    if statistics and findings:
        for code, n in sorted(Counter(f.code for f in findings).items()):
            of_code = [f for f in findings if f.code == code]
            mark = "[*]" if any(_fix_safety(f) == "safe" for f in of_code) else "   "
            out.append(f"{n:>5}  {code}  {mark} {of_code[0].name}")
        out.append("")
    n = len(findings)
    errors = sum(1 for f in findings if f.code == PARSE_ERROR)
    summary = f"Found {plural(n, 'problem')} in {plural(files, 'file')} checked"
    if errors:
        summary += f" ({plural(errors, 'file')} could not be parsed)"
    out.append(s(summary + "." if n else f"All checks passed: {plural(files, 'file')} checked.", "1" if n else "1;32"))
    safe = sum(1 for f in findings if _fix_safety(f) == "safe")
    unsafe = sum(1 for f in findings if _fix_safety(f) == "unsafe")
    if safe:
        out.append(f"[*] {safe} fixable with --fix" + (f" ({unsafe} more with --unsafe-fixes)." if unsafe else "."))
    elif unsafe:
        out.append(f"No fixes with --fix ({unsafe} with --unsafe-fixes).")
    return "\n".join(out) + "\n"


def _fix_safety(f: Finding) -> str:
    return f.autofix.safety if f.autofix is not None else ""


def render_report(report, options) -> str:
    """The verify table (if any), then the findings with their source lines (read from the project)."""
    sources: Dict[object, List[str]] = {}
    if not options.quiet:
        for f in report.findings:
            if f.cell:
                if (f.path, f.cell) not in sources:
                    cells = notebooks.cell_lines(report.config.root / f.path, report.config.max_file_size)
                    sources.update({(f.path, n): lines for n, lines in cells.items()})
                    sources.setdefault((f.path, f.cell), [])
            elif f.path in (report.buffers or {}):
                sources[f.path] = report.buffers[f.path].splitlines(keepends=True)
            elif f.path not in sources:
                sources[f.path] = display_lines(report.config.root / f.path, report.config.max_file_size,
                                                report.config.root)
    body = report.verify_text + "\n" if report.verify_text else ""
    return body + _render(report.findings, len(report.files), sources, colour=options.colour, quiet=options.quiet,
                          statistics=options.statistics, name=lambda rel: shown(report.config.root, rel))
