"""Inline suppressions: `# noqa`, `# noqa: DYN101,DYN201` (flake8's syntax, so one comment serves both
tools), `# dynlint: ignore[DYN101]`, `# dynlint: ignore`, and `# dynlint: skip-file`; file-level exemptions as
ruff writes them, anywhere in the file: `# dynlint: noqa: DYN201` (those codes in the whole file), `# dynlint:
noqa` (the whole file), and `# ruff: noqa: DYN201` (a bare `# ruff: noqa` is ruff's alone)."""
from __future__ import annotations

import io
import re
from typing import Dict, Optional, Set

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
        if "#" not in source:
            return
        self.file_codes: Set[str] = set()
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
