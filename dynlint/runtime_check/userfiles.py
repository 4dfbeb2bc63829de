"""Which source files are the user's: under the project root, but not an installed package, the Python
installation (a virtual environment often lives inside the project) or dynlint itself (its worker runs the
examples, and `dynlint check --verify` may be run on dynlint's own repository)."""
from __future__ import annotations

import os
import sys
from typing import Dict

import dynlint

_DYNLINT_DIR = os.path.realpath(os.path.dirname(dynlint.__file__))


class UserFiles:
    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, _DYNLINT_DIR}
        self._excluded = tuple(os.path.realpath(p) + os.sep for p in prefixes)
        self._cache: Dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        """Whether `path` (absolute, as in a code object or traceback) is user code."""
        known = self._cache.get(path)
        if known is None:
            known = self._cache[path] = self._is_user(path)
        return known

    def _is_user(self, path: str) -> bool:
        if not path or path.startswith("<"):                 # <string>, <frozen ...>, generated code
            return False
        real = os.path.realpath(path)
        if not real.startswith(self.root + os.sep):
            return False
        parts = real.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            return False
        return not real.startswith(self._excluded)

    def relpath(self, path: str) -> str:
        """'/'-separated path relative to the root; files outside it keep their absolute path."""
        real = os.path.realpath(path)
        if real.startswith(self.root + os.sep):
            return os.path.relpath(real, self.root).replace(os.sep, "/")
        return path
