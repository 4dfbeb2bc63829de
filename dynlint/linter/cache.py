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

The cache folder is inside the checked tree, so a repository can ship files there. Every file is therefore
sealed: a keyed BLAKE2b tag (a MAC) over its name and bytes, under a random key that lives in the user's own
cache folder (`~/.cache/dynlint/key`), never in the project. Nothing is unpickled before its tag checks out, so
a planted, truncated or garbled file is just a miss (and is overwritten); see docs/reliability.md.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import pickle
import secrets
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from dynlint.linter.files import escapes
from dynlint.linter.writes import write_atomic
from dynlint.linter.version import __version__

CACHE_DIR = ".dynlint_cache"
CACHE_IGNORE = b"# Automatically created by dynlint.\n*\n"     # its .gitignore: also how `dynlint clean` knows it
FORMAT = 3            # what the entries mean (3: sealed files; 2: index digests without line numbers)
MAGIC = b"dynlint-cache\x00"
TAG_SIZE = 32
MAX_FILE_BYTES = 1 << 30      # a larger file is no cache of ours (git compresses a planted 10 GB of zeros to KBs)
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


# ---- the seal ------------------------------------------------------------------------------------------
def key_file() -> Path:
    """Where the user's key lives: their own cache folder (XDG), outside any project. A relative
    XDG_CACHE_HOME is ignored, as the XDG specification says (it would lie wherever dynlint runs)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "dynlint", "key")


def key_inside(root: Path) -> Optional[str]:
    """Why the key cannot seal the cache of the project at `root`, or None: a key inside the checked tree (HOME
    or XDG_CACHE_HOME in the checkout, as CI containers set them) could have been committed with the cache."""
    key, tree = os.path.realpath(key_file()), os.path.realpath(root)
    if os.path.commonpath([key, tree]) == tree:
        return f"the key {key_file()} lies inside the checked project"
    return None


def _owner(path: Optional[Path]) -> Optional[int]:
    try:
        return os.stat(path).st_uid if path is not None else None
    except OSError:
        return None


def _read_regular(path, limit: int, trusted: bool = False) -> bytes:
    """A regular file's bytes, never through a symbolic link (O_NOFOLLOW), never blocking on a FIFO or a
    terminal (O_NONBLOCK, and only regular files are read); OSError otherwise or when over `limit`.
    `trusted`: also the user's own, and neither readable nor writable by others (a secret)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            raise OSError(0, "not a cache file")
        if trusted:
            _check_private(st, "key file", 0o077)
        return f.read(limit + 1)


def _check_private(st: os.stat_result, what: str, others: int) -> None:
    """OSError unless `st` belongs to this user and grants others none of the `others` permission bits: a
    key planted by another user, or one they could replace, would let them seal a pickle of their choosing."""
    if not hasattr(os, "getuid"):
        return
    if st.st_uid != os.getuid():
        raise OSError(0, f"the {what} belongs to another user")
    if st.st_mode & others:
        raise OSError(0, f"the {what} is open to other users (mode {stat.S_IMODE(st.st_mode):o}; "
                         f"chmod go-rwx fixes it)")


@functools.lru_cache(maxsize=None)
def user_key() -> bytes:
    """The user's secret key (32 random bytes, mode 0600), made on first use. OSError when the user's cache
    folder cannot hold one, or holds one that is not theirs alone: the cache is then off, never unsealed."""
    path = key_file()
    for _ in range(3):
        try:
            _check_private(os.stat(path.parent), "key's folder", 0o022)
            key = _read_regular(path, TAG_SIZE, trusted=True)
            if len(key) == TAG_SIZE:
                return key
            os.unlink(path)                           # damaged: make a new one
        except FileNotFoundError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _check_private(os.stat(path.parent), "key's folder", 0o022)
        fd, tmp = tempfile.mkstemp(prefix=".key.", dir=path.parent)    # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(TAG_SIZE))
            os.link(tmp, path)              # atomic, and never over a key another dynlint made meanwhile
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    raise OSError(0, f"cannot make a key in {path.parent}")


def seal(name: str, payload: bytes) -> bytes:
    tag = hashlib.blake2b(name.encode() + b"\0" + payload, key=user_key(), digest_size=TAG_SIZE).digest()
    return MAGIC + tag + payload


def unseal(name: str, data: bytes) -> Optional[bytes]:
    """The payload, if `data` is a file this user's dynlint sealed under `name`; else None."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + TAG_SIZE:
        return None
    tag, payload = data[len(MAGIC):len(MAGIC) + TAG_SIZE], data[len(MAGIC) + TAG_SIZE:]
    good = hashlib.blake2b(name.encode() + b"\0" + payload, key=user_key(), digest_size=TAG_SIZE).digest()
    return payload if hmac.compare_digest(tag, good) else None


@dataclass(frozen=True)
class Entry:
    """What the project-wide passes need to know of a file without loading its index."""
    digest: str                       # of the file's bytes
    index_digest: str                 # of its index's shape, ModuleIndex.shape ("" when it could not be indexed)
    module: str
    imports: Tuple[str, ...]          # dotted import targets, to find the project files it depends on
    classes: tuple = ()               # project.class_bases: its classes and the names of their bases
    error: object = None              # its DYN000 finding, if it could not be parsed
    dynamo: tuple = ()                # the Dynamo settings it makes (ModuleIndex.dynamo_config)


class Cache:
    """`root`: the project; a folder inside it must stay inside it (no symbolic link out of it), one outside
    it was named by the user (--cache-dir). `notices`: why the cache could not be used, for the user."""

    def __init__(self, folder: Path, key: str, root: Optional[Path] = None):
        self.folder = folder
        self.root = root
        stem = digest(f"{code_version()} {FORMAT} {key}".encode())
        self.file = folder / f"{stem}.pickle"
        self.index_dir = folder / f"{stem}.indexes"        # one small file per source file, read on demand
        self.files: Dict[str, Tuple[Tuple[int, int], Entry]] = {}   # rel -> (stat stamp, entry)
        self.project: Optional[tuple] = None                          # (key, regions by file, sites)
        self.checks: Dict[str, tuple] = {}                            # rel -> (check key, findings)
        # rel -> (key, findings of the frame pass); "model" -> what the frame model keeps between runs
        self.frames: Dict[str, tuple] = {}
        self.blobs: Dict[str, bytes] = {}                             # rel -> pickled SourceFile (new ones)
        # rel -> (the file's digest, its SourceFile) unpickled from the folder: a cache kept open (an editor's
        # session) unpickles each index once, not at every check
        self._sources: Dict[str, tuple] = {}
        self.dirty = False
        self.notices: List[str] = []
        self.usable = self._check_folder()
        data = self._load(self.file) if self.usable else None
        if isinstance(data, dict) and data.get("version") == code_version():
            self.files, self.project, self.checks = data["files"], data["project"], data["checks"]
            self.frames = data.get("frames", {})

    def _check_folder(self) -> bool:
        why = escapes(self.folder, self.root) if self.root is not None else None
        if why is None:
            try:
                st = os.lstat(self.folder)
                if not stat.S_ISDIR(st.st_mode):
                    why = "it is not a folder"
                elif hasattr(os, "getuid") and st.st_uid not in (os.getuid(), 0, _owner(self.root)):
                    why = "it belongs to another user"      # (the project's owner is trusted: a mounted checkout)
            except FileNotFoundError:
                pass
            except OSError as e:
                why = e.strerror or str(e)
        if why is None and self.root is not None:
            why = key_inside(self.root)
        if why is None:
            try:
                user_key()
            except OSError as e:
                why = f"no key for it in {key_file().parent} ({e.strerror or e})"
        if why:
            self.notices.append(f"cache not used: {self.folder}: {why}")
        return why is None

    def _load(self, path: Path):
        """Unpickle a file of the cache folder only if this user's dynlint sealed it there; else None."""
        try:
            payload = unseal(path.relative_to(self.folder).as_posix(), _read_regular(path, MAX_FILE_BYTES))
            return pickle.loads(payload) if payload is not None else None
        except _ERRORS:
            return None       # a missing or damaged cache is an empty one

    def _write(self, path: Path, payload: bytes) -> None:
        write_atomic(path, seal(path.relative_to(self.folder).as_posix(), payload), self.root)

    def _blob_path(self, rel: str) -> Path:
        return self.index_dir / f"{digest(rel.encode())}.pickle"

    def source(self, rel: str):
        """The SourceFile indexed for `rel` in an earlier run, or None."""
        if rel in self.blobs:
            return pickle.loads(self.blobs[rel])
        if not self.usable:
            return None
        entry = self.files.get(rel)
        kept = self._sources.get(rel)
        if entry is not None and kept is not None and kept[0] == entry[1].digest:
            return kept[1]
        sf = self._load(self._blob_path(rel))
        if entry is not None and sf is not None and getattr(sf, "digest", None) == entry[1].digest:
            self._sources[rel] = (entry[1].digest, sf)
        return sf

    def save(self, keep: Optional[set] = None) -> None:
        """Write atomically; `keep`: the files of this run (entries of vanished files are dropped)."""
        if not self.dirty or not self.usable:
            return
        if keep is not None:
            self.files = {k: v for k, v in self.files.items() if k in keep}
            self.checks = {k: v for k, v in self.checks.items() if k in keep}
            self.frames = {k: v for k, v in self.frames.items() if k in keep or k == "model"}
        try:
            make_folder(self.folder, self.root)
            if self.blobs:
                self.index_dir.mkdir(exist_ok=True)
                for rel, blob in self.blobs.items():
                    self._write(self._blob_path(rel), blob)
                self.blobs = {}         # written: a cache kept open (an editor's session) writes each once
            self._write(self.file, pickle.dumps({"version": code_version(), "files": self.files,
                                                 "project": self.project, "checks": self.checks,
                                                 "frames": self.frames},
                                                protocol=pickle.HIGHEST_PROTOCOL))
            self.dirty = False
        except OSError as e:
            # a read-only project still gets its report; a link out of the project is refused, and said
            self.notices.append(f"cache not written: {e}")


class Indexes(Mapping):
    """rel -> ModuleIndex, unpickled on first access: files indexed in this run, else the cache's blobs."""

    def __init__(self, rels, fresh: Dict[str, object], cache: Optional[Cache], reload=None):
        self._rels = list(rels)
        self._fresh = fresh           # rel -> SourceFile indexed in this run
        self._cache = cache
        self._reload = reload         # rel -> SourceFile indexed now: for a blob gone or damaged since
        self._loaded: Dict[str, object] = {}

    def source(self, rel: str):
        sf = self._fresh.get(rel) or self._loaded.get(rel)
        if sf is None:
            sf = self._cache.source(rel) if self._cache else None
            if sf is None and self._reload is not None:
                sf = self._reload(rel)
            if sf is None or sf.index is None:
                raise KeyError(rel)
            self._loaded[rel] = sf
        return sf

    def __getitem__(self, rel: str):
        return self.source(rel).index

    def __iter__(self) -> Iterator[str]:
        return iter(self._rels)

    def __len__(self) -> int:
        return len(self._rels)


def check_key(file_digest: str, regions: dict, sites, dep_digests, outside=()) -> str:
    text = repr((file_digest, sorted(regions.items()), sorted(sites), sorted(dep_digests), outside))
    return digest(text.encode())


def open_cache(root: Path, config_fingerprint: str, rule_codes, cache_dir: Optional[str] = None) -> Cache:
    return Cache(cache_folder(root, cache_dir), config_fingerprint + repr(sorted(rule_codes)), root)


def make_folder(folder: Path, root: Optional[Path]) -> None:
    """The cache folder, with a .gitignore that keeps it out of commits (as ruff's does)."""
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not os.path.lexists(ignore):
        write_atomic(ignore, CACHE_IGNORE, root)


def cache_folder(root: Path, cache_dir: Optional[str] = None) -> Path:
    return Path(cache_dir) if cache_dir else root / CACHE_DIR


@contextlib.contextmanager
def held(root: Path, cache_dir: Optional[str] = None) -> Iterator[bool]:
    """Hold the project's cache lock (flock on a file of the cache folder) for a run, so that processes
    checking the same project take turns: the first works out what the cache lacks, the next ones find it
    there (flake8's workers each run the whole project). Yields whether the lock is held: not where the
    folder cannot be made or leads out of the project, nor on a system without flock; the run goes on
    unlocked then, and is only slower."""
    try:
        import fcntl
    except ImportError:
        yield False
        return
    folder = cache_folder(root, cache_dir)
    fd = None
    try:
        if escapes(folder, root) is None:
            make_folder(folder, root)
            if escapes(folder, root) is None:       # not swapped for a link meanwhile
                fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) |
                             getattr(os, "O_NONBLOCK", 0), 0o600)
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)
                    fd = None
                else:
                    fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)            # closing the file releases the lock
