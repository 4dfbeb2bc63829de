"""Which files to check: walk the given paths, skip excluded and .gitignore'd ones.

Paths named explicitly on the command line are always checked, as ruff does, unless `force-exclude` is on
(`--force-exclude`, which the pre-commit hook passes: pre-commit names every file, excluded ones too).
"""
from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from dynlint.linter.config import DEFAULT_EXCLUDE, NEVER_WALKED, Config

MAX_IGNORE_PATTERNS = 1000       # per .gitignore: matching costs each file every pattern (git's own limit: none)
MAX_IGNORE_BYTES = 1 << 20
# `*` wildcards (not `**`) in one .gitignore pattern: pathspec matches with a regular expression, which
# backtracks through every way k wildcards split a name (a 255-character name: C(255, k) tries per pattern and
# file); `a*a*...a*b` with 25 of them hung a run. Real patterns use one or two (`*.py[cod]`, `*_pb2*.py`).
MAX_IGNORE_WILDCARDS = 2
_WILDCARD = re.compile(r"(?<![*\\])\*(?!\*)")


class _GitIgnore:
    """One .gitignore file, matched by pathspec (git's own rules: `**`, anchoring, `\\#` escapes, negation),
    its patterns relative to its folder."""

    def __init__(self, base: Path, text: str, notices: List[str]):
        self.base = base
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        if len(lines) > MAX_IGNORE_PATTERNS:
            notices.append(f"{_printable(str(base / '.gitignore'))}: only its first {MAX_IGNORE_PATTERNS} of "
                           f"{len(lines)} patterns are used")
            lines = lines[:MAX_IGNORE_PATTERNS]
        costly = [ln for ln in lines if len(_WILDCARD.findall(ln)) > MAX_IGNORE_WILDCARDS]
        if costly:
            notices.append(f"{_printable(str(base / '.gitignore'))}: {len(costly)} pattern(s) with more than "
                           f"{MAX_IGNORE_WILDCARDS} `*` wildcards are not used (matching them can take hours)")
            lines = [ln for ln in lines if len(_WILDCARD.findall(ln)) <= MAX_IGNORE_WILDCARDS]
        import pathspec  # only where a folder is walked: a pre-commit run of named files never needs it

        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, path: Path, is_dir: bool) -> Optional[bool]:
        """True/False when a pattern decides, None when none does."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _read_gitignore(folder: Path, root: Path, notices: List[str], name: str = ".gitignore") -> Optional[_GitIgnore]:
    """The ignore file `folder/name` (patterns relative to `folder`), unless it is a link out of the project."""
    path = folder / name
    if escapes(path, root) or not path.is_file():
        return None
    try:
        with open(path, "rb") as f:
            text = f.read(MAX_IGNORE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    return _GitIgnore(folder, text, notices)


def _trusted_above(path: Path, top: Path) -> bool:
    """An ignore file of a repository above the project is used only if it belongs to the user, to root or to
    whoever owns the checked folder, as configuration files above it are: another user's `.git/info/exclude` in
    a shared parent folder must not hide the project's files."""
    if not hasattr(os, "getuid"):
        return True
    try:
        return os.stat(path).st_uid in (os.getuid(), 0, os.stat(top).st_uid)
    except OSError:
        return False


def _ignores_above(top: Path, root: Path, notices: List[str]) -> List[_GitIgnore]:
    """What applies to a walk from `top` before its own .gitignore files: the repository's .git/info/exclude
    (lowest precedence, as in git), then the .gitignore files of the folders from the project root down."""
    out: List[_GitIgnore] = []
    folders = [d for d in reversed(top.parents) if _under(str(d), str(root))]
    repo = next((d for d in (top, *top.parents) if (d / ".git").is_dir()), None)
    if repo is not None and (_under(str(repo), str(root)) or _trusted_above(repo / ".git" / "info" / "exclude", top)):
        out += [g for g in [_read_gitignore(repo, root, notices, ".git/info/exclude")] if g]
    return out + [g for g in (_read_gitignore(d, root, notices) for d in folders) if g]


def _excluded(rel: str, patterns: Sequence[str]) -> bool:
    """Does a pattern match the path, a folder above it (`build` excludes `build/x.py`), or, for a pattern
    without a `/`, any one of its parts (`.venv` anywhere)?"""
    whole, prefixes, part = _matcher(tuple(patterns))
    rel = os.path.normcase(rel)
    return bool((whole and whole.match(rel)) or rel.startswith(prefixes) or
                (part and any(part.match(p) for p in rel.split("/"))))


@functools.lru_cache(maxsize=64)
def _matcher(patterns: Tuple[str, ...]):
    """The patterns compiled once (fnmatch's own translation, joined): a walk asks for every file and folder."""
    whole, prefixes, part = [], [], []
    for pat in patterns:
        pat = os.path.normcase(pat.rstrip("/"))
        whole += [fnmatch.translate(pat), fnmatch.translate(pat + "/*")]
        prefixes.append(pat + "/")
        if "/" not in pat:
            part.append(fnmatch.translate(pat))
    return (re.compile("|".join(whole)) if whole else None, tuple(prefixes),
            re.compile("|".join(part)) if part else None)


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


def shown(root: Path, rel: str) -> str:
    """How the text output and `--diff` name a project file: relative to the working folder, as ruff does
    (so a diff made at a repository's root applies there, whichever folder holds the configuration)."""
    try:
        return _printable(Path(os.path.relpath(root / rel)).as_posix())
    except ValueError:                              # another drive (Windows): no relative path exists
        return _printable((root / rel).as_posix())


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


def not_checkable(path: Path, root: Path, may_link: bool = True) -> Optional[str]:
    """Why a file must be skipped unread: a link out of the project (it would print the user's secrets, or
    /proc/self/environ), or not a regular file (a FIFO blocks, a device never ends). None for a file to check;
    one that cannot be opened at all (broken link, loop) is checked, and gets its DYN000. `may_link` False: the
    caller knows no folder on the way is a link (the walk never enters one), so only the file itself can be."""
    why = escapes(path, root) if may_link or os.path.islink(path) else None
    if why:
        return why
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else "not a regular file (a FIFO, device or socket)"


def discover(paths: Sequence[str], config: Config, notices: Optional[List[str]] = None,
             left_out: Optional[List[Tuple[str, str]]] = None) -> Iterator[Tuple[Path, str]]:
    """Yield (path, project-relative path) for every Python file and notebook to check, each once, in sorted
    order.
    What is skipped unread (see `not_checkable`) is said in `notices`; `left_out`, when given, gets (relative
    path, why) of every file and folder the walk leaves out (`--show-files`)."""
    root = config.root
    notices = [] if notices is None else notices
    user_ex = config.exclude + config.extend_exclude
    named_ex = user_ex if config.force_exclude else ()       # a file named explicitly
    seen = set()
    found: List[Tuple[Path, str]] = []

    def skipped(path: Path, rel: str, may_link: bool = True) -> bool:
        why = not_checkable(path, root, may_link)
        if why:
            notices.append(f"skipped {rel}: {why}")
        return bool(why)

    for p in paths:
        path = Path(p)
        if path.is_file() or (path.is_symlink() and not path.is_dir()) or not path.exists():
            rel = relpath(path, root)
            if not _excluded(rel, named_ex) and rel not in seen and not skipped(path, rel):
                seen.add(rel)
                found.append((path, rel))
            continue
        why = escapes(path, root)
        if why:
            notices.append(f"skipped {relpath(path, root)}: {why}")
            continue
        path = Path(os.path.abspath(path))         # the ignore files above it have absolute folders
        ignores = _ignores_above(path, root, notices) if config.respect_gitignore else []   # then those below
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
            if ".gitignore" in filenames and config.respect_gitignore:
                g = _read_gitignore(d, root, notices)
                ignores += [g] if g else []

            def skip(child: Path, is_dir: bool) -> bool:
                why = reason(child, is_dir)
                if why and left_out is not None:
                    left_out.append((child_rel(child) + ("/" if is_dir else ""), why))
                return bool(why)

            def reason(child: Path, is_dir: bool) -> str:
                rel = child_rel(child)
                if _excluded(rel, walk_ex):
                    return "excluded by `exclude` / `extend-exclude`" + \
                        (" (dynlint's default `exclude`; setting `exclude` replaces it)"
                         if _excluded(rel, DEFAULT_EXCLUDE) and config.exclude == DEFAULT_EXCLUDE else "")
                if is_dir and child.name in NEVER_WALKED:
                    return "version control or dynlint's cache: never walked"
                if is_dir and (child / "pyvenv.cfg").exists():     # any virtual environment
                    return "a virtual environment"
                verdict = None
                for g in ignores:
                    v = g.ignored(child, is_dir)
                    verdict = v if v is not None else verdict
                return "ignored by git (.gitignore)" if verdict else ""

            dirnames[:] = sorted(n for n in dirnames if not skip(d / n, True))
            for n in dirnames:
                if not os.path.islink(d / n) and dirpath in dir_rels:
                    dir_rels[os.path.join(dirpath, n)] = child_rel(d / n)
            for name in sorted(filenames):
                if name.endswith((".py", ".ipynb")):     # Jupyter notebooks too (linter/notebooks.py)
                    child = d / name
                    if not skip(child, False):
                        rel = child_rel(child)
                        if rel not in seen and not skipped(child, rel, may_link=False):
                            seen.add(rel)
                            found.append((child, rel))
    found.sort(key=lambda t: t[1])
    yield from found


def display_lines(path: Path, max_mib: float = 10.0, root: Optional[Path] = None) -> List[str]:
    """A file's lines for code snippets in reports (`report_bytes`). Python's line breaks only (not form feeds):
    universal newlines, \r\n and \r become \n."""
    data = report_bytes(path, max_mib, root)
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def report_bytes(path: Path, max_mib: float = 10.0, root: Optional[Path] = None) -> Optional[bytes]:
    """A project file's bytes as a report quotes or hashes them; None for what is not a regular file (a FIFO
    would block, /dev/zero would never end), is over the size limit, or (given the project's `root`) is reached
    through a symbolic link out of it (an editor's buffer named like a link to a secret)."""
    try:
        if root is not None and escapes(path, root):
            return None
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or (max_mib and st.st_size > max_mib * 2 ** 20):
            return None
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def escapes(path, root: Path) -> Optional[str]:
    """Why `path` must not be read or written for the project at `root`: it is in the project as written (some
    folder on its way is the project root, however spelled), but a symbolic link (the file itself, or a folder
    on the way) takes it out. None when it stays inside, or when it is not in the project as written (a place
    the user named, e.g. `-o /tmp/report.json`)."""
    if not in_project(path, root) or _under(os.path.realpath(path), os.path.realpath(root)):
        return None
    return "a symbolic link leads out of the project"


def in_project(path, root: Path) -> bool:
    """`path` is in the project as written: some folder on its way is the project root, however spelled."""
    path = os.path.abspath(path)
    if _under(path, str(root)):
        return True
    real_root = os.path.realpath(root)
    folder = path
    while os.path.realpath(folder) != real_root:
        folder, last = os.path.dirname(folder), folder
        if folder == last:
            return False
    return True


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
