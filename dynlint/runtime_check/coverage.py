"""Which user source lines run: recorded with sys.settrace during the eager calls, so that the cross-check
can tell "an example ran this line and Dynamo did not break there" from "no example reached it"."""
from __future__ import annotations

import sys
import threading
from typing import Callable, Dict, Set, Tuple


class LineRecorder:
    """Context manager recording (file, line) for every line executed in files where is_user(file) holds.

    Frames of other files are not traced line by line (the global trace function returns None for them),
    so library and torch code run at close to full speed. A function's first line (`def` or decorator) is
    recorded when it is called, so a finding on a signature counts as reached.
    """

    def __init__(self, is_user: Callable[[str], bool]):
        self.is_user = is_user
        self.lines: Dict[str, Set[int]] = {}

    def _global(self, frame, event, arg):
        code = frame.f_code
        if event != "call" or not self.is_user(code.co_filename):
            return None
        self.lines.setdefault(code.co_filename, set()).add(code.co_firstlineno)
        return self._local

    def _local(self, frame, event, arg):
        if event == "line":
            self.lines[frame.f_code.co_filename].add(frame.f_lineno)
        return self._local

    def __enter__(self) -> "LineRecorder":
        self._previous = sys.gettrace()
        threading.settrace(self._global)
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc_info) -> bool:
        sys.settrace(self._previous)
        threading.settrace(self._previous)
        return False

    def by_file(self, relpath: Callable[[str], str]) -> Tuple[Tuple[str, Tuple[int, ...]], ...]:
        merged: Dict[str, Set[int]] = {}
        for path, lines in self.lines.items():
            merged.setdefault(relpath(path), set()).update(lines)
        return tuple(sorted((p, tuple(sorted(ls))) for p, ls in merged.items()))
