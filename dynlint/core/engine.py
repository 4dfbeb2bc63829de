"""The engine: read → index (ast, every file) → regions (whole project) → check (libcst, region code only).

libcst is the slow part, so it only ever sees *units*: the source of each outermost traced function
(dedented so it parses on its own), or a whole top-level statement when a site rule needs it. All rules
run in one walk over each unit; positions are computed per unit and shifted back to file coordinates.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import os
import pickle
import re
import signal
import stat
import sys
import threading
import time
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Protocol, Sequence, Set, Tuple, Type

import libcst as cst

from dynlint.core import notebooks
from dynlint.core.cache import Entry, Indexes, check_key, digest
from dynlint.core.codes import INTERNAL_ERROR, PARSE_ERROR
from dynlint.core.config import Config
from dynlint.core.finding import FileError, Finding, parse_error_finding
from dynlint.core.index import DEEP_LIMIT, ModuleIndex, build_index
from dynlint.core.project import Facts, Project, class_bases
from dynlint.core.suppressions import Suppressions
from dynlint.core.walker import Unit, internal_error, parse, walk_unit


@dataclass
class SourceFile:
    path: str                 # project-relative
    text: str = ""
    digest: str = ""
    index: Optional[ModuleIndex] = None
    error: Optional[Finding] = None


@dataclass
class Result:
    findings: List[Finding]
    files: List[str]
    errors: List[FileError] = field(default_factory=list)
    notices: List[str] = field(default_factory=list)     # for the user: files skipped unread, a cache not used

    @property
    def internal_errors(self) -> List[Finding]:
        return [f for f in self.findings if f.code == INTERNAL_ERROR]


def module_name(path: Path) -> Tuple[str, bool]:
    """Dotted module name as Python would import it: climb while the folder is a package (has __init__.py),
    the way mypy and pytest find a file's module."""
    path = path.absolute()
    if notebooks.is_notebook(path):
        return path.name, False            # not importable: no project module can be it
    is_package = path.name == "__init__.py"
    parts = [] if is_package else [path.stem]
    d = path.parent
    while (d / "__init__.py").is_file() and d.parent != d:
        parts.append(d.name)
        d = d.parent
    return ".".join(reversed(parts)), is_package


def decode(data: bytes) -> str:
    """Decode Python source as the interpreter does (PEP 263 cookie, BOM); raise SyntaxError otherwise."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        if "invalid or missing encoding declaration" in str(e):
            raise SyntaxError("not UTF-8 and no encoding declaration (a binary file?)") from None
        raise SyntaxError(f"invalid encoding declaration: {e}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        raise SyntaxError(f"cannot decode file as {encoding}: {e}") from None
    return text[1:] if text.startswith("\ufeff") else text


def source_lines(text: str) -> List[str]:
    """Lines (ends kept) split where Python's tokenizer splits them: at \\n, \\r\\n and \\r only. str.splitlines
    also splits at form feeds, \\x1c-\\x1e, \\x85 and \\u2028, which would shift every later line number."""
    return list(io.StringIO(text, newline=""))


# Python-version-specific syntax the running interpreter's parser rejects: (pattern on the failing line, what)
_NEWER_SYNTAX = (
    (re.compile(r"^\s*(type\s+\w+\s*[\[=]|(async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)"), (3, 12),
     "PEP 695 type parameters / `type` statements"),
    (re.compile(r"""(?i)\b(?:rf|fr|f)["']"""), (3, 12), "PEP 701 f-strings"),
)


def _syntax_hint(msg: str, line_text: str) -> str:
    """Name the newer Python syntax a parse error probably is, when the running Python predates it."""
    for rx, version, what in _NEWER_SYNTAX:
        if sys.version_info < version and rx.search(line_text or "") and \
                (what.startswith("PEP 695") or msg.startswith("f-string")):
            return (f"{msg} (this looks like {what}, Python {version[0]}.{version[1]}+ syntax; dynlint parses "
                    f"with the grammar of the Python it runs on, {sys.version_info[0]}.{sys.version_info[1]})")
    return msg


# project-relative path -> the text to check instead of the file's (an editor's unsaved buffer, read from
# stdin): set by run() for its passes and their worker processes
_BUFFERS: Dict[str, bytes] = {}


def _read(path: Path, max_bytes: Optional[int], rel: str = "") -> bytes:
    """The source to check: the file's bytes, or a notebook's code cells as one module (core/notebooks.py);
    OSError (with a readable strerror) for what is not a regular file or is too large, ValueError for what
    is not a notebook."""
    data = read_bytes(path, max_bytes, rel)
    return notebooks.module_bytes(data) if notebooks.is_notebook(rel or path) else data


def read_bytes(path: Path, max_bytes: Optional[int], rel: str = "") -> bytes:
    """The file's bytes (or its buffer's); OSError (with a readable strerror) for what is not a regular file
    or is too large."""
    if rel in _BUFFERS:
        data = _BUFFERS[rel]
        if max_bytes and len(data) > max_bytes:
            raise OSError(0, f"too large ({len(data) / 2 ** 20:.1f} MiB > {max_bytes / 2 ** 20:.3g} MiB limit)")
        return data
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer (for ever)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file")
        data = f.read(max_bytes + 1) if max_bytes else f.read()
    if max_bytes and len(data) > max_bytes:
        size = max(st.st_size, len(data)) / 2 ** 20
        raise OSError(0, f"file too large ({size:.1f} MiB > {max_bytes / 2 ** 20:.3g} MiB limit; "
                         f"raise `max-file-size` in [tool.dynlint] or --max-file-size, 0 for no limit)")
    return data


def load(path: Path, rel: str, max_bytes: Optional[int] = None, known: Optional[SourceFile] = None) -> SourceFile:
    """Read, decode and index one file; any problem becomes a DYN000 finding for that file.
    `known`: the file as the index pass saw it; while the bytes are the same, its index is reused."""
    sf = SourceFile(rel)
    try:
        data = _read(path, max_bytes, rel)
    except (OSError, ValueError) as e:
        why = getattr(e, "strerror", None) or str(e)
        if path.is_symlink() and not path.exists():
            why += " (a broken symbolic link or a symbolic link loop)"
        sf.error = parse_error_finding(rel, f"cannot read file: {why}")
        return sf
    sf.digest = digest(data)
    if known is not None and known.index is not None and known.digest == sf.digest:
        sf.text, sf.index = decode(data), known.index          # decoded and parsed before: no error now
        return sf
    try:
        if b"\x00" in data:
            raise SyntaxError("source contains a NUL byte (a binary file?)")
        sf.text = decode(data)
        if "\x00" in sf.text:
            raise SyntaxError("source contains a NUL byte")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # SyntaxWarning for odd escapes in user code
            tree = ast.parse(sf.text, filename=rel)
    except SyntaxError as e:
        msg = e.msg if hasattr(e, "msg") and e.msg else str(e)
        sf.error = parse_error_finding(rel, _syntax_hint(msg, e.text or ""), e.lineno or 1, (e.offset or 1) - 1)
        return sf
    except RecursionError as e:
        sf.error = parse_error_finding(rel, f"nesting too deep for Python's parser ({e})")
        return sf
    except MemoryError as e:
        sf.error = parse_error_finding(rel, f"too complex for Python's parser (MemoryError{': ' if str(e) else ''}{e})")
        return sf
    except ValueError as e:
        sf.error = parse_error_finding(rel, f"{type(e).__name__}: {e}")
        return sf
    module, is_package = module_name(path)
    try:
        sf.index = build_index(tree, rel, module, is_package)
    except RecursionError:
        sf.error = parse_error_finding(rel, "nesting too deep to analyse")
    return sf


def _dedent(lines: List[str], start: int, end: int, indent: int) -> Optional[str]:
    """Lines start..end (1-based) with `indent` leading characters removed, or None if some line has less
    leading whitespace (a multi-line string) or the def does not start its line."""
    prefix = lines[start - 1][:indent]
    if indent and (not prefix.isspace() and prefix != ""):
        return None
    out = []
    for ln in lines[start - 1:end]:
        if ln.startswith(prefix):
            out.append(ln[indent:])
        elif not ln.strip():
            out.append("\n")
        else:
            return None
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


def plan_units(sf: SourceFile, lines: List[str], region_quals: Set[str], site_lines: Set[int]) -> List[Unit]:
    """Cut the smallest self-contained pieces of source that hold every region function and site."""
    ix = sf.index
    units: List[Unit] = []
    site_tops = sorted({span for span in ix.top_spans for ln in site_lines if span[0] <= ln <= span[1]})
    covered = set(site_tops)
    for span in site_tops:
        units.append(Unit(text="".join(lines[span[0] - 1:span[1]]), line_offset=span[0] - 1, col_offset=0,
                          scope=(), site=True))
    last_end = 0
    for fn in sorted((ix.functions[q] for q in region_quals if q in ix.functions), key=lambda f: (f.start, -f.end)):
        if fn.top in covered or fn.end <= last_end:      # inside a unit already planned
            continue
        last_end = fn.end
        text = _dedent(lines, fn.start, fn.end, fn.indent)
        if text is None:                      # fall back to the whole top-level statement
            covered.add(fn.top)
            units.append(Unit(text="".join(lines[fn.top[0] - 1:fn.top[1]]), line_offset=fn.top[0] - 1,
                              col_offset=0, scope=()))
        else:
            scope = tuple(fn.qualname.split(".")[:-1])
            units.append(Unit(text=text, line_offset=fn.start - 1, col_offset=fn.indent, scope=scope))
    return units


_LEADING_FF = re.compile(r"^[ \t]*\f[ \t\f]*", re.M)


def _drop_form_feed_indents(unit: Unit) -> Tuple[Unit, Dict[int, int]]:
    """Python ignores what precedes a form feed in a line's indentation (CPython resets the column to 0);
    libcst counts it, and then rejects valid dedents. Cut it, and remember how many characters each (file)
    line lost so that columns can be given back."""
    shifts: Dict[int, int] = {}

    def cut(m) -> str:
        line = unit.text.count("\n", 0, m.start()) + unit.text.count("\r", 0, m.start()) - \
            unit.text.count("\r\n", 0, m.start()) + 1 + unit.line_offset
        kept = m.group(0).rsplit("\f", 1)[1]
        shifts[line] = len(m.group(0)) - len(kept)
        return kept

    text = _LEADING_FF.sub(cut, unit.text)
    return dataclasses.replace(unit, text=text), shifts


def _shift_columns(f: Finding, shifts: Dict[int, int]) -> Finding:
    changes: dict = {"column": f.column + shifts.get(f.line, 0), "end_column": f.end_column + shifts.get(f.end_line, 0)}
    fix = getattr(f, "autofix", None)
    if fix is not None:       # its edits hold positions on the same lines
        changes["autofix"] = dataclasses.replace(fix, edits=tuple(dataclasses.replace(
            e, column=e.column + shifts.get(e.line, 0), end_column=e.end_column + shifts.get(e.end_line, 0))
            for e in fix.edits))
    return f.with_(**changes)


# Seconds all the units of one file (its functions and top-level statements) may take together: a generous
# bound (big files take a few seconds) that turns an analysis blowing up on some input, or a file of many slow
# functions, into one DYN001 for the rest of that file, not a hang; the other files are still checked.
FILE_TIME_LIMIT = 60.0


class AnalysisTimeout(BaseException):
    """Raised by the timer; a BaseException so that the per-rule isolation (which catches Exception) does not
    swallow it and go on with the next rule (which may be just as slow)."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield       # no interval timer (Windows) or not the main thread (signals): no limit
        return

    def expired(signum, frame):
        raise AnalysisTimeout(f"the file's analysis budget ({seconds:g} s) was spent: these lines were not checked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _unit_lines(unit: Unit) -> Tuple[int, int]:
    return unit.line_offset + 1, unit.line_offset + len(source_lines(unit.text))


def check_unit(sf: SourceFile, unit: Unit, rules: Sequence[Type], regions: Dict[str, Tuple[str, ...]],
               project: Optional[Project], debug: bool) -> List[Finding]:
    """Run every rule over one unit; its problems (too deep, libcst rejects it, a bug) are findings of it."""
    first, last = _unit_lines(unit)
    shifts: Dict[int, int] = {}
    if "\f" in unit.text:
        unit, shifts = _drop_form_feed_indents(unit)
    if unit.text.rstrip("\r\n").endswith("\\"):
        # the last statement ends in a line continuation that the next (comment) line completes: a unit
        # cut there ends at EOF after the backslash, which libcst (and Python) reject; a blank line completes it
        unit = dataclasses.replace(unit, text=unit.text + "\n")
    deep = [d for d in getattr(sf.index, "deep", ()) if first <= d[0] <= last]
    if deep:        # libcst's native parser would overflow its stack (a segfault), so do not call it
        line, n, what = deep[0]
        return [parse_error_finding(
            sf.path, f"expression too deeply nested to analyse ({what} of {n} parts > {DEEP_LIMIT})", line)]
    try:
        module = parse(unit.text)
    except cst.ParserSyntaxError as e:
        return [parse_error_finding(sf.path, f"libcst: {e.message}", e.raw_line + unit.line_offset,
                                    e.raw_column + unit.col_offset)]
    except RecursionError:
        return [parse_error_finding(sf.path, "nesting too deep to parse", first)]
    try:
        found = walk_unit(module, unit, sf, rules, regions, project, debug)
        return [_shift_columns(f, shifts) for f in found] if shifts else found
    except RecursionError:      # the walk and the rules recurse over the tree: Python's stack limit
        return [parse_error_finding(sf.path, "nesting too deep to analyse", first)]
    except Exception as e:      # a bug outside any one rule: lose this unit, keep the rest of the file
        return [internal_error(sf.path, f"checking lines {first}-{last}", e, debug, first)]


def check_file(sf: SourceFile, rules: Sequence[Type], regions: Dict[str, Tuple[str, ...]], site_lines: Set[int],
               project: Optional[Project] = None, debug: bool = False) -> List[Finding]:
    """Run every rule over the region code (and site statements) of one file, in FILE_TIME_LIMIT seconds."""
    lines = source_lines(sf.text)
    # in file order, so that what the budget leaves unchecked is one stretch of lines
    units = sorted(plan_units(sf, lines, set(regions), site_lines), key=lambda u: u.line_offset)
    findings: List[Finding] = []
    done = 0
    try:
        with _time_limit(FILE_TIME_LIMIT):
            for unit in units:
                findings += check_unit(sf, unit, rules, regions, project, debug)
                done += 1
    except AnalysisTimeout as e:    # an analysis that blows up on some input, or many slow functions: not a hang
        if done < len(units):       # (not when the timer fired just as the last unit ended)
            first, last = _unit_lines(units[done])[0], _unit_lines(units[-1])[1]
            findings.append(internal_error(sf.path, f"checking lines {first}-{last}", e, debug, first))
    if not findings:
        return []
    sup = Suppressions(sf.text) if "#" in sf.text else None     # tokenizing is slow: only when needed
    if sup and sup.skip_file:
        return []
    out = [f for f in findings if not (sup and sup.suppressed(f.code, f.line))]
    return sorted(set(out))


# ---- parallel execution --------------------------------------------------------------------------
# Worker processes receive the project once (initializer) and then only file names.
_WORKER: dict = {}


def _init_worker(project: Optional[Project], rules, debug: bool, max_bytes: Optional[int] = None,
                 buffers: Optional[Dict[str, bytes]] = None) -> None:
    # rule classes travel by reference (a spawned worker imports their modules, which registers them)
    _WORKER.update(project=project, rules=list(rules), debug=debug, max_bytes=max_bytes,
                   interrupted=False)
    _BUFFERS.clear()
    _BUFFERS.update(buffers or {})


def _init_pool_worker(*args) -> None:
    # Ctrl-C (from the terminal, to the whole process group, or from the parent) must not interrupt a worker
    # anywhere (mid-way through sending a result, it would leave the pool's pipe unreadable and the parent
    # hanging at exit, and print a traceback): note it, finish the file at hand, then refuse the rest.
    signal.signal(signal.SIGINT, _note_interrupt)
    _init_worker(*args)


def _note_interrupt(signum, frame) -> None:
    _WORKER["interrupted"] = True


def _check_interrupted() -> None:
    if _WORKER.get("interrupted"):
        raise KeyboardInterrupt      # concurrent.futures sends it back as the chunk's result: clean framing


def _index_task(item: Tuple[str, str]) -> Tuple[str, Tuple[int, int], str, bytes]:
    _check_interrupted()
    path, rel = item
    p = Path(path)
    try:
        st = p.stat()
        stamp = (st.st_mtime_ns, st.st_size) if rel not in _BUFFERS else (0, -1)     # a buffer: never cached
    except OSError:
        stamp = (0, -1)
    try:
        sf = load(p, rel, _WORKER.get("max_bytes"))
    except Exception as e:          # a bug of ours (the index pass): this file only
        sf = SourceFile(rel, error=internal_error(rel, "the index pass", e, _WORKER.get("debug", False)))
    sf.text = ""                      # the check re-reads the file; do not ship text between processes
    # the digest of the index's shape: an edit that changes no def, call or import keeps it, even one that
    # moves lines (of its text form, the same wherever the index was built); the pickled file goes to the
    # cache as it is
    index_digest = digest(repr(sf.index.shape()).encode()) if sf.index else ""
    return rel, stamp, index_digest, pickle.dumps(sf, protocol=pickle.HIGHEST_PROTOCOL)


def _check_task(item) -> Tuple[str, List[Finding]]:
    _check_interrupted()
    path, sf, regions, sites = item
    w = _WORKER
    try:
        full = load(Path(path), sf.path, w.get("max_bytes"), known=sf)
        if full.error:                # deleted, unreadable or broken since the index pass: say so
            return sf.path, [full.error]
        full.index = full.index or sf.index     # changed since the index pass: check what is there now
        return sf.path, check_file(full, list(w["rules"]), regions, sites, w["project"], w["debug"])
    except RecursionError:
        return sf.path, [parse_error_finding(sf.path, "nesting too deep to analyse")]
    except Exception as e:            # a bug of ours outside any one rule: this file only
        return sf.path, [internal_error(sf.path, "the check pass", e, w.get("debug", False))]


def _map(fn, items: list, jobs: int, init_args, step=None):
    """Map over items, in worker processes when there is enough work to pay for starting them.
    `step()`, when given, is called as each result arrives (progress)."""
    if jobs <= 1 or len(items) < 16:
        _init_worker(*init_args)
        return [_stepped(fn(i), step) for i in items]
    import concurrent.futures as cf
    import multiprocessing

    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_pool_worker,
                                  initargs=init_args)
    try:
        out = [_stepped(r, step) for r in pool.map(fn, items, chunksize=max(1, len(items) // (jobs * 8)))]
    except BaseException:
        # Ctrl-C (or a worker that died): drop the queued work, let each worker finish its file and exit;
        # terminate only one that does not (a kill mid-way through sending a result would hang us at exit).
        workers = list((getattr(pool, "_processes", None) or {}).values())
        for w in workers:
            try:
                os.kill(w.pid, signal.SIGINT)
            except (OSError, TypeError):
                pass
        pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + 5
        for w in workers:
            w.join(max(0.0, deadline - time.monotonic()))
        for w in workers:
            if w.is_alive():
                w.terminate()
                w.join(1)
        raise
    pool.shutdown()
    return out


def _stepped(value, step):
    if step is not None:
        step()
    return value


def _stepper(progress, stage: str, done: int, total: int):
    """A no-argument callback that advances `progress(stage, done, total)` by one; None without progress."""
    if progress is None:
        return None
    count = [done]
    progress(stage, done, total)

    def step() -> None:
        count[0] += 1
        progress(stage, count[0], total)
    return step


class RegionAnalysis(Protocol):
    """Which functions torch.compile traces, and which lines set it up: torch knowledge, so the caller brings it
    (dynlint.analysis.regions); the engine only plans the work around it."""

    def find_regions(self, project: Project, mode: str, entries: Sequence[str], edges: Optional[dict] = None
                     ) -> Dict[Tuple[str, str], Tuple[str, ...]]: ...

    def site_lines(self, ix: ModuleIndex) -> Set[int]: ...

    def find_frames(self, project: Project, regions, text, breaks: Sequence[Finding], kept=None, digest=None
                    ) -> tuple: ...


def run(files: Iterable[Tuple[Path, str]], config: Config, rules: Sequence[Type], *, regions: RegionAnalysis,
        debug: bool = False, jobs: int = 1, cache=None, progress=None,
        buffers: Optional[Dict[str, bytes]] = None) -> Result:
    """Check files (pairs of path and project-relative path) and return all findings.
    progress: optional `progress(stage, done, total)` callback ("reading", then "checking"), see report/progress.py.
    buffers: project-relative path -> text checked instead of that file's (which need not exist on disk)."""
    # (no wrapper function for the clean-up: the index pass runs here, and a frame more would leave Python's
    # parser less stack for a deeply nested file)
    buffers = dict(buffers or {})
    _BUFFERS.clear()
    _BUFFERS.update(buffers)
    files = [(str(p), rel) for p, rel in files]
    codes = [r.code for r in rules]
    # 1. an entry per file: from the cache while its stat is unchanged, else indexed now (ast)
    entries: Dict[str, Entry] = {}
    fresh: Dict[str, SourceFile] = {}
    todo = []
    for path, rel in files:
        hit = cache.files.get(rel) if cache and rel not in buffers else None
        if hit:
            try:
                st = os.stat(path)
                if (st.st_mtime_ns, st.st_size) == hit[0]:
                    entries[rel] = hit[1]
                    continue
            except OSError:
                pass
        todo.append((path, rel))
    step = _stepper(progress, "reading", len(files) - len(todo), len(files))
    max_bytes = round(config.max_file_size * 2 ** 20) if config.max_file_size else None
    for rel, stamp, index_digest, blob in _map(_index_task, todo, jobs, (None, rules, debug, max_bytes, buffers),
                                               step):
        sf = fresh[rel] = pickle.loads(blob)
        ix = sf.index
        entries[rel] = Entry(digest=sf.digest, index_digest=index_digest,
                             module=ix.module if ix else "", imports=tuple(sorted(set(ix.imports.values()))) if ix
                             else (), classes=class_bases(ix) if ix else (), error=sf.error)
        if cache is not None and stamp[1] >= 0 and not (sf.error and sf.error.code == INTERNAL_ERROR):
            cache.files[rel] = (stamp, entries[rel])
            if ix:
                cache.blobs[rel] = blob
            cache.dirty = True
    rels = [rel for _, rel in files]
    indexed = [rel for rel in rels if entries[rel].index_digest]
    modules: Dict[str, str] = {}
    for rel in indexed:
        modules.setdefault(entries[rel].module, rel)
    paths = dict((rel, path) for path, rel in files)
    indexes = Indexes(indexed, fresh, cache, reload=lambda rel: load(Path(paths[rel]), rel, max_bytes))
    facts = Facts({rel: (entries[rel].module, entries[rel].imports, entries[rel].classes) for rel in indexed})
    project = Project(by_path=indexes, modules=modules, facts=facts)

    # 2. the whole-project view: regions and sites (reused while no file's index shape changed)
    findings: List[Finding] = []
    project_key = digest(repr((config.regions, config.compiled, codes, [(rel, entries[rel].index_digest) for rel in indexed])).encode())
    site_rules = any(r.scope == "site" for r in rules)

    def site_map(pairs) -> Dict[str, Set[int]]:
        """rel -> site lines, for the files that have any (each file's depend on its own index alone)."""
        out = {}
        for rel, ix in pairs:
            lines = regions.site_lines(ix) if site_rules and ix else set()
            if lines:
                out[rel] = lines
        return out

    edges: dict = {}      # the region graph, when the region pass runs now (the frame pass reuses it)
    if cache is not None and cache.project and cache.project[0] == project_key:
        by_file, sites = cache.project[1], dict(cache.project[2])
        if site_rules and fresh:      # re-indexed files keep their shape, but their lines may have moved
            sites = {rel: lines for rel, lines in sites.items() if rel not in fresh}
            sites.update(site_map((rel, sf.index) for rel, sf in fresh.items()))
            cache.project = (project_key, by_file, sites)
            cache.dirty = True
    else:
        try:
            found = regions.find_regions(project, config.regions, config.compiled, edges)
            sites = site_map(project.by_path.items())
        except Exception as e:      # a bug of ours in the whole-project pass: say so (exit 2), report what we have
            findings.append(internal_error(".", "the region analysis", e, debug))
            found, sites = {}, {}
        by_file: Dict[str, Dict[str, Tuple[str, ...]]] = {}
        for (path, q), chain in found.items():
            by_file.setdefault(path, {})[q] = chain
        if cache is not None and not findings:
            cache.project = (project_key, by_file, sites)
            cache.dirty = True

    # 3. check the files that hold regions or sites (libcst), reusing cached findings where the key matches
    errors: List[FileError] = []
    work, keys = [], {}
    for rel in rels:
        e = entries[rel]
        if e.error:
            findings.append(e.error)
            errors.append(FileError(rel, e.error.message, e.error.line, e.error.column))
            continue
        if rel not in by_file and rel not in sites:
            continue
        regs, st = by_file.get(rel, {}), sorted(sites.get(rel, ()))
        if cache is not None:
            deps = [entries[d].index_digest for d in _imported_files(modules, e.imports)]
            keys[rel] = check_key(e.digest, regs, st, deps, facts.outside(rel, e.module))
            hit = cache.checks.get(rel)
            if hit and hit[0] == keys[rel]:
                findings += hit[1]
                continue
        work.append((paths[rel], indexes.source(rel), regs, set(st)))
    step = _stepper(progress, "checking", 0, len(work))
    pass_rules = [r for r in rules if r.scope != "frame"]
    for rel, found in _map(_check_task, work, jobs, (project, pass_rules, debug, max_bytes, buffers), step):
        findings += found
        if cache is not None and rel not in buffers and not any(f.code == INTERNAL_ERROR for f in found):
            cache.checks[rel] = (keys[rel], found)
            cache.dirty = True

    # 4. frames: region functions Dynamo compiles on their own, because something they run breaks the graph
    frame_rules = [r for r in rules if r.scope == "frame"]
    if frame_rules and by_file:
        findings += _frame_pass(regions, project, by_file, findings, config, rules, frame_rules, entries, keys, paths,
                                indexes, cache, buffers, jobs, debug, max_bytes, edges)
    if cache is not None:
        cache.save(keep=set(rels))
    findings = [f for f in findings if config.enabled(f.code, f.path) or f.code in (PARSE_ERROR, INTERNAL_ERROR)]
    _BUFFERS.clear()
    return Result(sorted(set(findings), key=lambda f: f.sort_key), rels, errors)


def _frame_pass(regions: RegionAnalysis, project: Project, by_file, findings: List[Finding], config: Config, rules, frame_rules, entries,
                keys, paths, indexes, cache, buffers, jobs: int, debug: bool, max_bytes, edges: dict) -> List[Finding]:
    """The frame rules, over the functions that the check pass's graph breaks make frames of their own."""
    by_code = {r.code: r for r in rules}
    # every graph break found, selected or not (an ignored DYN301 still breaks the graph), suppressions aside
    breaks = sorted({f for f in findings if f.code in by_code and by_code[f.code].scope == "region" and
                     not by_code[f.code].recompiles and not by_code[f.code].preview}, key=lambda f: f.sort_key)
    # The frame model keeps what it worked out between runs: its graph while the indexes' shapes are unchanged
    # (or the region pass's, when that ran now), each frame's facts while the files they were read from are
    shape = digest(repr(sorted((rel, e.index_digest) for rel, e in entries.items())).encode())

    def text(rel: str) -> Optional[str]:
        try:
            data = buffers[rel] if rel in buffers else _read(Path(paths[rel]), max_bytes, rel) \
                if rel in paths else None
            return decode(data) if data is not None else None
        except (OSError, UnicodeDecodeError, ValueError):
            return None
    kept = cache.frames.get("model") if cache is not None else None
    # (the region pass, when it ran now, left its call graph and the functions compiled explicitly)
    compiled = edges.pop(regions.COMPILED, None)
    graph = kept[1] if kept and kept[0] == shape else ({"edges": edges, "compiled": compiled} if edges else None)
    try:
        frames, model = regions.find_frames(
            project, [(p, q) for p, qs in by_file.items() for q in qs], text, breaks,
            (graph, kept[2] if kept else None), lambda rel: entries[rel].digest if rel in entries else None)
    except Exception as e:      # a bug of ours in the frame model: say so, keep every other finding
        return [internal_error(".", "the frame analysis", e, debug)]
    if cache is not None and model is not None:        # (content-addressed: a buffer's facts are its text's)
        cache.frames["model"] = (shape, *model)
        cache.dirty = True
    project.frames = frames
    out: List[Finding] = []
    work, fkeys = [], {}
    for rel in sorted({p for p, _ in frames}):
        # (a decorator's wrapper is a frame without being a region: it is entered, not traced into)
        regs = {q: by_file.get(rel, {}).get(q) or (q,) for p, q in frames if p == rel}
        fkeys[rel] = digest(repr((keys.get(rel) or entries[rel].digest, sorted(regs.items()),
                                  sorted((q, f) for (p, q), f in frames.items() if p == rel))).encode())
        hit = cache.frames.get(rel) if cache is not None else None
        if hit and hit[0] == fkeys[rel]:
            out += hit[1]
            continue
        work.append((paths[rel], indexes.source(rel), regs, set()))
    for rel, found in _map(_check_task, work, jobs, (project, frame_rules, debug, max_bytes, buffers)):
        out += found
        if cache is not None and rel not in buffers and not any(f.code == INTERNAL_ERROR for f in found):
            cache.frames[rel] = (fkeys[rel], found)
            cache.dirty = True
    return out


def _imported_files(modules: Dict[str, str], imports) -> List[str]:
    """Project files whose index can change a file's findings: the modules it imports."""
    out = set()
    for target in imports:
        parts = target.split(".")
        for i in range(len(parts), 0, -1):
            rel = modules.get(".".join(parts[:i]))
            if rel is not None:
                out.add(rel)
                break
    return sorted(out)
