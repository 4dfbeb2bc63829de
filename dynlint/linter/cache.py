"""A content-keyed cache of per-file work, in a project-local folder that git ignores (like .ruff_cache).

Two layers, both keyed so that stale results are never served:
* the index of a file, keyed on its stat (mtime, size) and content digest;
* the findings of a file, keyed on its digest, the regions and sites found in it, and the digests of the
  project files it imports (so a change in a callee's file that changes this file's regions or types
  re-checks it).
The whole cache is keyed on dynlint's version, the configuration and the rule set.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Dict, Optional

from dynlint import __version__

CACHE_DIR = ".dynlint_cache"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Cache:
    def __init__(self, folder: Path, key: str):
        self.folder = folder
        self.file = folder / f"{digest((__version__ + key).encode())}.pickle"
        self.files: Dict[str, tuple] = {}     # rel -> (mtime_ns, size, digest, SourceFile without text)
        self.checks: Dict[str, tuple] = {}    # rel -> (check key, findings)
        self.dirty = False
        try:
            with open(self.file, "rb") as f:
                data = pickle.load(f)
            if data.get("version") == __version__:
                self.files, self.checks = data["files"], data["checks"]
        except (OSError, EOFError, pickle.UnpicklingError, KeyError, AttributeError, ImportError, TypeError):
            pass      # a missing or damaged cache is an empty one

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Automatically created by dynlint.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                pickle.dump({"version": __version__, "files": self.files, "checks": self.checks}, f,
                            protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.file)
        except OSError:
            pass      # a read-only project still gets its report


def check_key(file_digest: str, regions: dict, sites, dep_digests) -> str:
    text = repr((file_digest, sorted(regions.items()), sorted(sites), sorted(dep_digests)))
    return digest(text.encode())


def open_cache(root: Path, config_fingerprint: str, rule_codes, cache_dir: Optional[str] = None) -> Cache:
    folder = Path(cache_dir) if cache_dir else root / CACHE_DIR
    return Cache(folder, config_fingerprint + repr(sorted(rule_codes)))
