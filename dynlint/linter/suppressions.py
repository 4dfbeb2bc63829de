"""Inline suppressions: `# noqa`, `# noqa: DYN101,DYN201` (flake8's syntax, so one comment serves both
tools), `# dynlint: ignore[DYN101]`, `# dynlint: ignore`, and `# dynlint: skip-file`; file-level exemptions as
ruff writes them, anywhere in the file: `# dynlint: noqa: DYN201` (those codes in the whole file), `# dynlint:
noqa` (the whole file), and `# ruff: noqa: DYN201` (a bare `# ruff: noqa` is ruff's alone)."""
from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, List, Optional, Set, Tuple

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*dynlint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)
_SKIP_FILE = re.compile(r"#\s*dynlint:\s*skip-file\b", re.I)
_FILE_NOQA = re.compile(r"#\s*(?:dynlint|ruff):\s*noqa\b(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
ALL = None   # a bare suppression


def _comments(source: str):
    """(line, comment text) for lines that may carry a suppression. Like flake8, a physical-line match:
    tokenizing whole files would cost more than the check itself on large trees."""
    for n, line in enumerate(io.StringIO(source, newline=""), 1):     # Python's line breaks only (not \f)
        i = line.find("#")
        if i >= 0 and ("noqa" in line[i:].lower() or "dynlint:" in line[i:]):
            yield n, line[i:]


class Suppressions:
    def __init__(self, source: str):
        self.by_line: Dict[int, Optional[Set[str]]] = {}
        self.skip_file = False
        self.file_codes: Set[str] = set()
        if "#" not in source:
            return
        for line, text in _comments(source):
            if _SKIP_FILE.search(text):
                self.skip_file = True
            exempt = _FILE_NOQA.search(text)
            if exempt:
                codes = exempt.group("codes")
                if not codes:       # a bare `# ruff: noqa` is ruff's business; `# dynlint: noqa` skips the file
                    self.skip_file = self.skip_file or "dynlint" in exempt.group(0).lower()
                else:
                    self.file_codes.update(c.upper() for c in re.split(r"[,\s]+", codes) if c)
                continue
            for rx in (_NOQA, _IGNORE):
                m = rx.search(text)
                if m:
                    codes = m.group("codes")
                    if not codes or not codes.strip():
                        self.by_line[line] = ALL
                    elif self.by_line.get(line, set()) is not ALL:
                        self.by_line.setdefault(line, set()).update(
                            c.upper() for c in re.split(r"[,\s]+", codes) if c)

    def suppressed(self, code: str, line: int) -> bool:
        if any(code.startswith(c) for c in self.file_codes):
            return True
        if line not in self.by_line:
            return False
        codes = self.by_line[line]
        return codes is ALL or any(code.startswith(c) for c in codes)


def add_noqa(source: str, codes_by_line: Dict[int, Set[str]]) -> Tuple[str, int, List[int]]:
    """`source` with `# noqa: CODES` on each given line (ruff's --add-noqa): merged into a `# noqa: ...` the line
    already has, else appended. A line that ends inside a string or continues with a backslash takes no
    comment. Returns the text, how many lines got one, and the lines that could not (or the source unchanged
    and every line, when it does not tokenize)."""
    lines = source.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source, 0, sorted(codes_by_line)
    inside = {n for t in tokens if t.type == tokenize.STRING or t.type == getattr(tokenize, "FSTRING_MIDDLE", -1)
              for n in range(t.start[0], t.end[0])}
    added, left = 0, []
    for n, codes in sorted(codes_by_line.items()):
        if not 0 < n <= len(lines):
            continue
        body = lines[n - 1].rstrip("\r\n")
        end = lines[n - 1][len(body):]
        if n in inside or body.rstrip().endswith("\\"):
            left.append(n)
            continue
        m = _NOQA.search(body[body.find("#"):]) if "#" in body else None
        if m and m.group("codes"):
            start = body.find("#") + m.start()
            old = {c.upper() for c in re.split(r"[,\s]+", m.group("codes")) if c}
            body = body[:start] + "# noqa: " + ", ".join(sorted(old | codes)) + body[body.find("#") + m.end():]
        elif m:
            continue                                  # a bare `# noqa` already silences the line
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        lines[n - 1] = body + end
        added += 1
    return "".join(lines), added, left
