"""Which files to check: walk the given paths, skip excluded and .gitignore'd ones.

Paths named explicitly on the command line are always checked (as ruff does without --force-exclude,
except that exclude globs from the configuration still apply to them).
"""
from __future__ import annotations

import fnmatch
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple

from dynlint.linter.config import DEFAULT_EXCLUDE, Config


class _GitIgnore:
    """The common subset of .gitignore: globs, `dir/`, anchored `/x`, `**`, `!negation`, comments."""

    def __init__(self, base: Path, lines: Sequence[str]):
        self.base = base
        self.rules: List[Tuple[str, bool, bool, bool]] = []   # (pattern, negate, dir_only, anchored)
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            neg = line.startswith("!")
            line = line[1:] if neg else line
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            self.rules.append((line.lstrip("/"), neg, dir_only, anchored))

    def ignored(self, path: Path, is_dir: bool):
        """True/False when a rule decides, None when none does."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        verdict = None
        for pat, neg, dir_only, anchored in self.rules:
            if dir_only and not is_dir:
                continue
            target = rel if anchored else rel.rsplit("/", 1)[-1]
            if fnmatch.fnmatchcase(target, pat) or (anchored and "**" in pat and
                                                     fnmatch.fnmatchcase(target, pat.replace("**/", ""))):
                verdict = not neg
        return verdict


def _excluded(rel: str, patterns: Sequence[str]) -> bool:
    parts = rel.split("/")
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat + "/*") or rel.startswith(pat + "/"):
            return True
        if "/" not in pat and any(fnmatch.fnmatch(p, pat) for p in parts):
            return True
    return False


def relpath(path: Path, root: Path) -> str:
    """`path` relative to the project root, '/'-separated. A symbolic link that leads outside the root, is broken
    or loops is named by where the link is; a path outside the root gets `../` parts."""
    try:
        return _printable(path.resolve(strict=True).relative_to(root).as_posix())
    except (ValueError, OSError, RuntimeError):     # outside, missing, or a symlink loop (RuntimeError)
        pass
    try:
        return _printable(Path(os.path.relpath(path.absolute(), root)).as_posix())
    except ValueError:                              # another drive (Windows): no relative path exists
        return _printable(path.absolute().as_posix())


def _printable(rel: str) -> str:
    """A file name that is not valid UTF-8 reaches us with its bytes as lone surrogates, which no report can
    encode: show them as `\\xff` (distinct names stay distinct; the file itself is opened by its real name)."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        return os.fsencode(rel).decode("utf-8", "backslashreplace")


def repository_root(root: Path) -> Tuple[Path, str]:
    """The repository holding the project (nearest folder with .git), and the project's path inside it
    ('' or 'sub/dir/'): CI annotations and code scanning resolve paths against the repository root."""
    root = root.resolve()
    for d in (root, *root.parents):
        if (d / ".git").exists():
            rel = root.relative_to(d).as_posix()
            return d, "" if rel == "." else rel + "/"
    return root, ""


def discover(paths: Sequence[str], config: Config) -> Iterator[Tuple[Path, str]]:
    """Yield (path, project-relative path) for every Python file to check, each once, in sorted order."""
    root = config.root
    user_ex = config.exclude + config.extend_exclude
    seen = set()
    found: List[Tuple[Path, str]] = []
    for p in paths:
        path = Path(p)
        if path.is_file() or (path.is_symlink() and not path.is_dir()) or not path.exists():
            rel = relpath(path, root)
            if not _excluded(rel, user_ex) and rel not in seen:
                seen.add(rel)
                found.append((path, rel))
            continue
        ignores: List[_GitIgnore] = []
        # a folder named explicitly is checked even if the configuration excludes it (its own rules still apply)
        walk_ex = () if _excluded(relpath(path, root), user_ex) else user_ex
        dir_rels: dict = {}     # a folder's relative path, so that its plain children need no resolve()

        def child_rel(child: Path) -> str:
            parent = dir_rels.get(str(child.parent))
            if parent is None or os.path.islink(child):
                return relpath(child, root)
            name = _printable(child.name)
            return f"{parent}/{name}" if parent not in ("", ".") else name

        for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
            d = Path(dirpath)
            if dirpath not in dir_rels:
                rel_d = relpath(d, root)
                if not rel_d.startswith(".."):
                    dir_rels[dirpath] = rel_d
            gi = d / ".gitignore"
            if gi.is_file():
                try:
                    ignores.append(_GitIgnore(d, gi.read_text(encoding="utf-8", errors="replace").splitlines()))
                except OSError:
                    pass

            def skip(child: Path, is_dir: bool) -> bool:
                rel = child_rel(child)
                if _excluded(rel, walk_ex):
                    return True
                if is_dir and any(fnmatch.fnmatch(child.name, pat) for pat in DEFAULT_EXCLUDE):
                    return True
                if is_dir and (child / "pyvenv.cfg").exists():     # any virtual environment
                    return True
                verdict = None
                for g in ignores:
                    v = g.ignored(child, is_dir)
                    verdict = v if v is not None else verdict
                return bool(verdict)

            dirnames[:] = sorted(n for n in dirnames if not skip(d / n, True))
            for n in dirnames:
                if not os.path.islink(d / n) and dirpath in dir_rels:
                    dir_rels[os.path.join(dirpath, n)] = child_rel(d / n)
            for name in sorted(filenames):
                if name.endswith(".py"):
                    child = d / name
                    if not skip(child, False):
                        rel = child_rel(child)
                        if rel not in seen:
                            seen.add(rel)
                            found.append((child, rel))
    found.sort(key=lambda t: t[1])
    yield from found


def display_lines(path: Path, max_mib: float = 10.0) -> List[str]:
    """A file's lines for code snippets in reports; none for what is not a regular file (a FIFO would block,
    /dev/zero would never end) or is over the size limit. Python's line breaks only (not form feeds)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or (max_mib and st.st_size > max_mib * 2 ** 20):
            return []
        with open(path, encoding="utf-8", errors="replace") as f:      # universal newlines: \r\n and \r become \n
            return f.read().split("\n")
    except OSError:
        return []


def write_atomic(path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename over it: readers never see half a file, and an
    interrupted write leaves the old one. The file keeps its mode (a new one gets what open() would give
    it); a symbolic link is followed, so the link stays a link. Reports, fixed sources and the cache use it."""
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)             # mkstemp made it private (0600)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
