"""A content-keyed cache of per-file work, in a project-local folder that git ignores (like .ruff_cache).

Keys are built so that stale results are never served:
* a file's entry (content digest, index digest, module name, imports) is reused while its stat (mtime,
  size) is unchanged;
* the whole-project result (regions and sites) is reused while the *index* digests of all files are
  unchanged — an edit inside a function body that adds no call, import or class leaves it valid;
* a file's findings are reused while its content digest, its regions and sites, and the index digests of
  the project files it imports are unchanged.
The whole cache is keyed on dynlint's code (its version and a digest of its own source files, so that an
install from a branch, or an edited rule, never reads results of other code), the configuration and the rule
set.

Two files per key: a small one (entries, project result, findings), read on every run, and one holding
a folder with each file's pickled index, read file by file, on demand, only when something changed.
"""
from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, Optional, Tuple

from dynlint import __version__
from dynlint.linter.files import write_atomic

CACHE_DIR = ".dynlint_cache"
FORMAT = 2            # what the entries mean (2: index digests of the index's shape, without line numbers)
_ERRORS = (OSError, EOFError, pickle.UnpicklingError, KeyError, AttributeError, ImportError, TypeError,
           ValueError, IndexError)


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@functools.lru_cache(maxsize=None)
def code_version() -> str:
    """dynlint's version and a digest of the package's own `.py` files: what produced a result."""
    return f"{__version__}+{source_digest(Path(__file__).resolve().parent.parent)}"


def source_digest(package: Path) -> str:
    """A digest of the `.py` files under `package`, names and bytes (a few ms for dynlint's)."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Entry:
    """What the project-wide passes need to know of a file without loading its index."""
    digest: str                       # of the file's bytes
    index_digest: str                 # of its index's shape, ModuleIndex.shape ("" when it could not be indexed)
    module: str
    imports: Tuple[str, ...]          # dotted import targets, to find the project files it depends on
    error: object = None              # its DYN000 finding, if it could not be parsed


class Cache:
    def __init__(self, folder: Path, key: str):
        self.folder = folder
        stem = digest(f"{code_version()} {FORMAT} {key}".encode())
        self.file = folder / f"{stem}.pickle"
        self.index_dir = folder / f"{stem}.indexes"        # one small file per source file, read on demand
        self.files: Dict[str, Tuple[Tuple[int, int], Entry]] = {}   # rel -> (stat stamp, entry)
        self.project: Optional[tuple] = None                          # (key, regions by file, sites)
        self.checks: Dict[str, tuple] = {}                            # rel -> (check key, findings)
        self.blobs: Dict[str, bytes] = {}                             # rel -> pickled SourceFile (new ones)
        self.dirty = False
        try:
            with open(self.file, "rb") as f:
                data = pickle.load(f)
            if data.get("version") == code_version():
                self.files, self.project, self.checks = data["files"], data["project"], data["checks"]
        except _ERRORS:
            pass      # a missing or damaged cache is an empty one

    def _blob_path(self, rel: str) -> Path:
        return self.index_dir / f"{digest(rel.encode())}.pickle"

    def blob(self, rel: str) -> Optional[bytes]:
        if rel in self.blobs:
            return self.blobs[rel]
        try:
            return self._blob_path(rel).read_bytes()
        except OSError:
            return None

    def save(self, keep: Optional[set] = None) -> None:
        """Write atomically; `keep`: the files of this run (entries of vanished files are dropped)."""
        if not self.dirty:
            return
        if keep is not None:
            self.files = {k: v for k, v in self.files.items() if k in keep}
            self.checks = {k: v for k, v in self.checks.items() if k in keep}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Automatically created by dynlint.\n*\n")
            if self.blobs:
                self.index_dir.mkdir(exist_ok=True)
                for rel, blob in self.blobs.items():
                    write_atomic(self._blob_path(rel), blob)
            write_atomic(self.file, pickle.dumps({"version": code_version(), "files": self.files,
                                                  "project": self.project, "checks": self.checks},
                                                 protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            pass      # a read-only project still gets its report


class Indexes(Mapping):
    """rel -> ModuleIndex, unpickled on first access: files indexed in this run, else the cache's blobs."""

    def __init__(self, rels, fresh: Dict[str, object], cache: Optional[Cache]):
        self._rels = list(rels)
        self._fresh = fresh           # rel -> SourceFile indexed in this run
        self._cache = cache
        self._loaded: Dict[str, object] = {}

    def source(self, rel: str):
        sf = self._fresh.get(rel) or self._loaded.get(rel)
        if sf is None:
            blob = self._cache.blob(rel) if self._cache else None
            if blob is None:
                raise KeyError(rel)
            sf = self._loaded[rel] = pickle.loads(blob)
        return sf

    def __getitem__(self, rel: str):
        return self.source(rel).index

    def __iter__(self) -> Iterator[str]:
        return iter(self._rels)

    def __len__(self) -> int:
        return len(self._rels)


def check_key(file_digest: str, regions: dict, sites, dep_digests) -> str:
    text = repr((file_digest, sorted(regions.items()), sorted(sites), sorted(dep_digests)))
    return digest(text.encode())


def open_cache(root: Path, config_fingerprint: str, rule_codes, cache_dir: Optional[str] = None) -> Cache:
    folder = Path(cache_dir) if cache_dir else root / CACHE_DIR
    return Cache(folder, config_fingerprint + repr(sorted(rule_codes)))
