"""The engine: one run of the checks, a pipeline whose stages are the methods of `_Run` and whose state is its
attributes.

index every file (ast; linter/sources.py) → the project view → the project-wide pass: the regions (the functions
torch.compile traces, as `--regions` says which) and the sites (the lines that set it up) → the check of the
files that hold either (libcst, their traced code only: linter/units.py) → the frame pass (the functions that
graph breaks make Dynamo compile on their own) → the findings. The work per file runs in worker processes
(linter/pool.py); the cache keeps what each stage found while what it depends on is unchanged.
"""
from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Protocol, Sequence, Set, Tuple, Type

from dynlint.linter import pool
from dynlint.linter.cache import Entry, Indexes, check_key, digest
from dynlint.linter.codes import INTERNAL_ERROR, PARSE_ERROR
from dynlint.linter.config import Config
from dynlint.linter.finding import FileError, Finding, parse_error_finding
from dynlint.linter.index import ModuleIndex
from dynlint.linter.project import Facts, Project, class_bases
from dynlint.linter.sources import Reader, SourceFile, decode
from dynlint.linter.suppressions import Suppressions
from dynlint.linter.units import check_file
from dynlint.linter.walker import internal_error

Chains = Dict[str, Tuple[str, ...]]     # qualname -> the call chain shown for it (from a root of the regions)


@dataclass
class Result:
    findings: List[Finding]
    files: List[str]
    errors: List[FileError] = field(default_factory=list)
    notices: List[str] = field(default_factory=list)     # for the user: files skipped unread, a cache not used
    # per file, the Dynamo settings that apply to its code: those it makes and those of the files it imports
    dynamo_settings: Dict[str, frozenset] = field(default_factory=dict)

    @property
    def internal_errors(self) -> List[Finding]:
        return [f for f in self.findings if f.code == INTERNAL_ERROR]


class RegionAnalysis(Protocol):
    """Which functions torch.compile traces, and which lines set it up: torch knowledge, so the caller brings it
    (dynlint.analysis.regions); the engine only plans the work around it."""

    COMPILED: str       # the key under which find_regions leaves the functions compiled explicitly in `edges`

    def find_regions(self, project: Project, mode: str, entries: Sequence[str], edges: Optional[dict] = None
                     ) -> Dict[Tuple[str, str], Tuple[str, ...]]: ...

    def site_lines(self, ix: ModuleIndex) -> Set[int]: ...

    def find_frames(self, project: Project, regions, text, breaks: Sequence[Finding], kept=None, digest=None
                    ) -> tuple: ...

    def resumed_guards(self, findings: Sequence[Finding], breaks: Sequence[Finding], text) -> List[Finding]: ...

    def in_skipped_frames(self, findings: Sequence[Finding], breaks: Sequence[Finding], text,
                          entered: Sequence[Tuple[str, int]] = (), span=None) -> List[Finding]: ...

    def after_skipping_breaks(self, breaks: Sequence[Finding], text) -> List[Finding]: ...


@dataclass
class _Shared:
    """What every task of a pass needs: sent to each worker process once (linter/pool.py)."""
    reader: Reader
    rules: list                 # rule classes travel by reference (a spawned worker imports their modules)
    project: Optional[Project]
    debug: bool
    ignore_noqa: bool = False


@dataclass
class _Sources:
    """rel -> a file's source as the index pass read it (a notebook's code cells, a buffer's text), or None;
    picklable, for the worker processes (`Project.sources`)."""
    reader: Reader
    paths: Dict[str, str]

    def __call__(self, rel: str) -> Optional[str]:
        try:
            data = self.reader.source(Path(self.paths[rel]), rel) if rel in self.paths else None
            return decode(data) if data is not None else None
        except (OSError, UnicodeDecodeError, ValueError):
            return None


def _index_task(item: Tuple[str, str]) -> Tuple[str, Tuple[int, int], str, bytes]:
    shared: _Shared = pool.state()
    path, rel = item
    p = Path(path)
    try:
        st = p.stat()
        # (a buffer: never cached)
        stamp = (st.st_mtime_ns, st.st_size) if rel not in shared.reader.buffers else (0, -1)
    except OSError:
        stamp = (0, -1)
    try:
        sf = shared.reader.load(p, rel)
    except Exception as e:          # a bug of ours (the index pass): this file only
        sf = SourceFile(rel, error=internal_error(rel, "the index pass", e, shared.debug))
    sf.text = ""                      # the check re-reads the file; do not ship text between processes
    # the digest of the index's shape: an edit that changes no def, call or import keeps it, even one that
    # moves lines (of its text form, the same wherever the index was built); the pickled file goes to the
    # cache as it is
    index_digest = digest(repr(sf.index.shape()).encode()) if sf.index else ""
    return rel, stamp, index_digest, pickle.dumps(sf, protocol=pickle.HIGHEST_PROTOCOL)


def _check_task(item) -> Tuple[str, List[Finding]]:
    shared: _Shared = pool.state()
    path, sf, traced, sites = item
    try:
        full = shared.reader.load(Path(path), sf.path, known=sf)
        if full.error:                # deleted, unreadable or broken since the index pass: say so
            return sf.path, [full.error]
        full.index = full.index or sf.index     # changed since the index pass: check what is there now
        return sf.path, check_file(full, list(shared.rules), traced, sites, shared.project, shared.debug,
                                   shared.ignore_noqa)
    except RecursionError:
        return sf.path, [parse_error_finding(sf.path, "nesting too deep to analyse")]
    except Exception as e:            # a bug of ours outside any one rule: this file only
        return sf.path, [internal_error(sf.path, "the check pass", e, shared.debug)]


def run(files: Iterable[Tuple[Path, str]], config: Config, rules: Sequence[Type], *, analysis: RegionAnalysis,
        debug: bool = False, jobs: int = 1, cache=None, progress=None,
        buffers: Optional[Dict[str, bytes]] = None, focus: Optional[Set[str]] = None) -> Result:
    """Check files (pairs of path and project-relative path) and return all findings.
    analysis: which functions torch.compile traces and which lines set it up (dynlint.analysis.regions).
    progress: optional `progress(stage, done, total)` callback ("reading", then "checking"), see report/progress.py.
    buffers: project-relative path -> text checked instead of that file's (which need not exist on disk).
    focus: the files whose findings are wanted now (an editor's open documents): the others keep the findings
    cached for them, even where an edit elsewhere could change them (the next check without `focus` checks
    them again; the cache keeps only what was checked under its own key). Every file is checked as usual when
    None."""
    # (the stages are called from here, one frame deep: the index pass may run in this process, and every frame
    # more leaves Python's parser less stack for a deeply nested file)
    r = _Run(files, config, rules, analysis, debug, jobs, cache, progress, buffers)
    r.focus = focus
    r.index()
    r.build_project()
    r.find_regions()
    r.check()
    r.check_frames()
    r.resume_guards()
    return r.result()


class _Run:
    """One run: each stage a method, called in order by `run`; what they find, attributes."""

    def __init__(self, files, config: Config, rules: Sequence[Type], analysis: RegionAnalysis, debug: bool,
                 jobs: int, cache, progress, buffers: Optional[Dict[str, bytes]]):
        self.files = [(str(p), rel) for p, rel in files]
        self.rels = [rel for _, rel in self.files]
        self.paths = dict((rel, path) for path, rel in self.files)
        self.config, self.rules, self.analysis = config, rules, analysis
        self.debug, self.jobs, self.cache, self.progress = debug, jobs, cache, progress
        max_bytes = round(config.max_file_size * 2 ** 20) if config.max_file_size else None
        self.reader = Reader(max_bytes, dict(buffers or {}))
        self.entries: Dict[str, Entry] = {}         # every file's: from the cache, or indexed now
        self.fresh: Dict[str, SourceFile] = {}      # the files indexed now
        self.indexed: List[str] = []                # the files that have an index (they parsed)
        self.modules: Dict[str, str] = {}           # module name -> the file that is it
        self.indexes: Optional[Indexes] = None
        self.facts: Optional[Facts] = None
        self.project: Optional[Project] = None
        self.regions: Dict[str, Chains] = {}        # file -> its region functions
        self.sites: Dict[str, Set[int]] = {}        # file -> its site lines (for the files that have any)
        self.call_graph: dict = {}       # the region pass's, when it ran now (the frame pass reuses it)
        self.check_keys: Dict[str, str] = {}        # file -> the cache key of its check
        self.findings: List[Finding] = []
        self.errors: List[FileError] = []
        self.focus: Optional[Set[str]] = None      # see `run`
        self.learned = False                        # a file on disk indexed or checked now (cached for later runs)

    # ---- 1. read and index every file (ast) --------------------------------------------------------------
    def index(self) -> None:
        """An entry per file: from the cache while its stat is unchanged, else read and indexed now."""
        cache = self.cache
        todo = []
        for path, rel in self.files:
            entry = self._cached_entry(path, rel)
            if entry is None:
                todo.append((path, rel))
            else:
                self.entries[rel] = entry
        step = pool.stepper(self.progress, "reading", len(self.files) - len(todo), len(self.files))
        shared = _Shared(self.reader, list(self.rules), None, self.debug, self.config.ignore_noqa)
        for rel, stamp, index_digest, blob in pool.run(_index_task, todo, self.jobs, shared, step):
            sf = self.fresh[rel] = pickle.loads(blob)
            ix = sf.index
            self.entries[rel] = Entry(digest=sf.digest, index_digest=index_digest,
                                      module=ix.module if ix else "", imports=tuple(sorted(set(ix.imports.values())))
                                      if ix else (), classes=class_bases(ix) if ix else (), error=sf.error,
                                      dynamo=tuple(getattr(ix, "dynamo_config", ())) if ix else ())
            if cache is not None and stamp[1] >= 0 and not (sf.error and sf.error.code == INTERNAL_ERROR):
                self.learned = True
                cache.files[rel] = (stamp, self.entries[rel])
                if ix:
                    cache.blobs[rel] = blob
                cache.dirty = True

    def _cached_entry(self, path: str, rel: str) -> Optional[Entry]:
        """The file's entry from the cache, while its stat is the one cached."""
        hit = self.cache.files.get(rel) if self.cache is not None and rel not in self.reader.buffers else None
        if hit:
            try:
                st = os.stat(path)
                if (st.st_mtime_ns, st.st_size) == hit[0]:
                    return hit[1]
            except OSError:
                pass
        return None

    # ---- 2. the project view ---------------------------------------------------------------------------------
    def build_project(self) -> None:
        entries = self.entries
        self.indexed = [rel for rel in self.rels if entries[rel].index_digest]
        for rel in self.indexed:
            self.modules.setdefault(entries[rel].module, rel)
        self.indexes = Indexes(self.indexed, self.fresh, self.cache,
                               reload=lambda rel: self.reader.load(Path(self.paths[rel]), rel))
        self.facts = Facts({rel: (entries[rel].module, entries[rel].imports, entries[rel].classes)
                            for rel in self.indexed})
        self.project = Project(by_path=self.indexes, modules=self.modules, facts=self.facts)
        self.project.sources = _Sources(self.reader, self.paths)

    # ---- 3. the project-wide pass: regions and sites ---------------------------------------------------------
    def find_regions(self) -> None:
        """The regions and sites of every file (reused while no file's index shape changed)."""
        config, cache = self.config, self.cache
        key = digest(repr((config.regions, config.compiled, [r.code for r in self.rules],
                           [(rel, self.entries[rel].index_digest) for rel in self.indexed])).encode())
        if cache is not None and cache.project and cache.project[0] == key:
            self.regions, self.sites = cache.project[1], dict(cache.project[2])
            # re-indexed files keep their shape, but their lines may have moved
            if self._site_rules() and self.fresh:
                self.sites = {rel: lines for rel, lines in self.sites.items() if rel not in self.fresh}
                self.sites.update(self._site_lines((rel, sf.index) for rel, sf in self.fresh.items()))
                cache.project = (key, self.regions, self.sites)
                cache.dirty = True
            return
        try:
            found = self.analysis.find_regions(self.project, config.regions, config.compiled, self.call_graph)
            sites = self._site_lines(self.project.by_path.items())
        except Exception as e:      # a bug of ours in the whole-project pass: say so (exit 2), report what we have
            self.findings.append(internal_error(".", "the region analysis", e, self.debug))
            return                  # (and cache nothing: the next run tries again)
        for (path, q), chain in found.items():
            self.regions.setdefault(path, {})[q] = chain
        self.sites = sites
        if cache is not None:
            cache.project = (key, self.regions, self.sites)
            cache.dirty = True

    def _site_rules(self) -> bool:
        return any(r.scope == "site" for r in self.rules)

    def _site_lines(self, pairs) -> Dict[str, Set[int]]:
        """rel -> site lines, for the files that have any (each file's depend on its own index alone)."""
        out = {}
        site_rules = self._site_rules()
        for rel, ix in pairs:
            lines = self.analysis.site_lines(ix) if site_rules and ix else set()
            if lines:
                out[rel] = lines
        return out

    # ---- 4. check the files that hold regions or sites (libcst) ---------------------------------------------
    def check(self) -> None:
        """Every rule but the frame rules, over each file's regions and sites; cached findings where the key
        matches."""
        work = []
        for rel in self.rels:
            e = self.entries[rel]
            if e.error:
                self.findings.append(e.error)
                self.errors.append(FileError(rel, e.error.message, e.error.line, e.error.column))
                continue
            if rel not in self.regions and rel not in self.sites:
                continue
            regions, sites = self.regions.get(rel, {}), sorted(self.sites.get(rel, ()))
            if self.cache is not None:
                module_of = lambda r: self.entries[r].module    # noqa: E731
                deps = [self.entries[d].index_digest for d in _imported_files(self.modules, e.imports)] + \
                    [self.entries[d].digest for d in _importing_files(self.facts, e.module, module_of)]
                self.check_keys[rel] = check_key(e.digest, regions, sites, deps, self.facts.outside(rel, e.module))
                hit = self.cache.checks.get(rel)
                if hit and (hit[0] == self.check_keys[rel] or self._kept(rel)):
                    self.findings += hit[1]
                    continue
            work.append((self.paths[rel], self.indexes.source(rel), regions, set(sites)))
        step = pool.stepper(self.progress, "checking", 0, len(work))
        shared = _Shared(self.reader, [r for r in self.rules if r.scope != "frame"], self.project, self.debug,
                         self.config.ignore_noqa)
        self._keep(pool.run(_check_task, work, self.jobs, shared, step), self.check_keys, "checks")

    def _kept(self, rel: str) -> bool:
        """A file outside the focus keeps its cached findings (`run`'s `focus`)."""
        return self.focus is not None and rel not in self.focus and rel not in self.reader.buffers

    def _keep(self, results, keys: Dict[str, str], store: str) -> None:
        """Add the findings of checked files, and cache them (`cache.<store>`) under their keys."""
        cache = self.cache
        for rel, found in results:
            self.findings += found
            if cache is not None and rel not in self.reader.buffers and \
                    not any(f.code == INTERNAL_ERROR for f in found):
                getattr(cache, store)[rel] = (keys[rel], found)
                cache.dirty = self.learned = True

    # ---- 5. frames: region functions Dynamo compiles on their own, because something they run breaks the graph --
    def check_frames(self) -> None:
        """The frame rules, over the functions that the check pass's graph breaks make frames of their own."""
        frame_rules = [r for r in self.rules if r.scope == "frame"]
        if not frame_rules or not self.regions:
            return
        frames = self._frames()
        if frames is None:
            return
        cache = self.cache
        work, keys = [], {}
        for rel in sorted({p for p, _ in frames}):
            # (a decorator's wrapper is a frame without being a region: it is entered, not traced into)
            traced = {q: self.regions.get(rel, {}).get(q) or (q,) for p, q in frames if p == rel}
            keys[rel] = digest(repr((self.check_keys.get(rel) or self.entries[rel].digest, sorted(traced.items()),
                                     sorted((q, f) for (p, q), f in frames.items() if p == rel))).encode())
            hit = cache.frames.get(rel) if cache is not None else None
            if hit and (hit[0] == keys[rel] or self._kept(rel)):
                self.findings += hit[1]
                continue
            work.append((self.paths[rel], self.indexes.source(rel), traced, set()))
        shared = _Shared(self.reader, frame_rules, self.project, self.debug, self.config.ignore_noqa)
        self._keep(pool.run(_check_task, work, self.jobs, shared), keys, "frames")

    # ---- 5b. guards again in the frames Dynamo resumes after a break, none in those it skips ----------------------
    def resume_guards(self) -> None:
        """Each finding at a guard in a function whose graph breaks further down, again at the resumed code's
        first read of the value; none in a function Dynamo skips (analysis/resumed.py): derived from the
        findings, so run every time, cached or not."""
        breaks = self._breaks()
        try:
            found = self.analysis.resumed_guards(self.findings, breaks, self._text)
        except Exception as e:      # a bug of ours: say so, keep every other finding
            self.findings.append(internal_error(".", "the resumed-frame guards", e, self.debug))
            return
        if not self.config.ignore_noqa:         # a `noqa` on the resumed read's line silences it there
            sups = {rel: Suppressions(self._text(rel) or "") for rel in {f.path for f in found}}
            found = [f for f in found if not sups[f.path].suppressed(f.code, f.line)]
        self.findings += found
        # and none in the frames Dynamo skips (a break in a loop: the function runs eagerly, unguarded)
        recompile = {r.code for r in self.rules if r.recompiles}
        try:
            skipped = set(self.analysis.in_skipped_frames([f for f in self.findings if f.code in recompile],
                                                          breaks, self._text, self.project.entered, self._span))
            # and no break Dynamo never meets, below one that makes it skip the function (`breaks` are as the
            # release checked for words them: matched by place and code)
            unmet = {(f.path, f.line, f.column, f.code)
                     for f in self.analysis.after_skipping_breaks(breaks, self._text)}
            skipped |= {f for f in self.findings if (f.path, f.line, f.column, f.code) in unmet}
        except Exception as e:      # a bug of ours: say so, keep every finding
            self.findings.append(internal_error(".", "the skipped frames", e, self.debug))
            return
        self.findings = [f for f in self.findings if f not in skipped]

    def _span(self, rel: str, line: int) -> Optional[Tuple[int, int]]:
        """The lines of the innermost function of a file holding a line, from its index (None: not known)."""
        ix = self.project.by_path.get(rel) if self.project is not None else None
        fn = ix.function_at(line) if ix is not None else None
        return (fn.start, fn.end) if fn is not None else None

    def _breaks(self) -> List[Finding]:
        """Every graph break found, selected or not (an ignored DYN301 still breaks the graph), on the release
        checked for, suppressions aside."""
        by_code = {r.code: r for r in self.rules}
        return sorted({f for f in self.on_release(self.findings) if f.code in by_code and
                       by_code[f.code].scope == "region" and not by_code[f.code].recompiles and
                       not by_code[f.code].preview}, key=lambda f: f.sort_key)

    def _frames(self) -> Optional[dict]:
        """The frame model's answer, (path, qualname) -> Frame (None when it failed: a DYN001 says so). It keeps
        what it worked out between runs: its graph while the indexes' shapes are unchanged (or the region
        pass's, when that ran now), each frame's facts while those shapes and the files they were read from are."""
        breaks = self._breaks()
        cache, entries = self.cache, self.entries
        shape = digest(repr(sorted((rel, e.index_digest) for rel, e in entries.items())).encode())
        kept = cache.frames.get("model") if cache is not None else None
        # (the region pass, when it ran now, left its call graph and the functions compiled explicitly)
        compiled = self.call_graph.pop(self.analysis.COMPILED, None)
        graph = kept[1] if kept and kept[0] == shape else \
            ({"edges": self.call_graph, "compiled": compiled} if self.call_graph else None)
        # what it worked out holds while the files it read are unchanged, and the project's shape is: a call
        # added anywhere (a new caller, a new file) can change what a frame is given
        facts = kept[2] if kept and kept[0] == shape else None
        try:
            frames, model = self.analysis.find_frames(
                self.project, [(p, q) for p, qs in self.regions.items() for q in qs], self._text, breaks,
                (graph, facts), lambda rel: entries[rel].digest if rel in entries else None)
        except Exception as e:      # a bug of ours in the frame model: say so, keep every other finding
            self.findings.append(internal_error(".", "the frame analysis", e, self.debug))
            return None
        if cache is not None and model is not None:        # (content-addressed: a buffer's facts are its text's)
            cache.frames["model"] = (shape, *model)
            cache.dirty = True
        self.project.frames = frames
        return frames

    def _text(self, rel: str) -> Optional[str]:
        """A file's source as the index pass read it, for the frame model."""
        return _Sources(self.reader, self.paths)(rel)

    # ---- 6. the findings ---------------------------------------------------------------------------------------
    def result(self) -> Result:
        # (a focused run, an editor's, writes the cache when it learned something of the files on disk: what it
        # worked out from unsaved buffers alone stays in the session's memory, not rewritten on every keystroke)
        if self.cache is not None and (self.focus is None or self.learned):
            self.cache.save(keep=set(self.rels))
        config = self.config
        findings = [f if f.autofix is None or config.can_fix(f.code) else f.with_(autofix=None)
                    for f in self.on_release(self.findings)
                    if config.enabled(f.code, f.path) or f.code in (PARSE_ERROR, INTERNAL_ERROR)]
        return Result(sorted(set(findings), key=lambda f: f.sort_key), self.rels, self.errors,
                      dynamo_settings=self.dynamo_settings())

    def on_release(self, findings: Sequence[Finding]) -> List[Finding]:
        return on_release(findings, self.rules, self.config.torch_version, self.dynamo_settings())

    def dynamo_settings(self) -> Dict[str, frozenset]:
        """rel -> the Dynamo settings (KEY, VALUE) that apply to the file's code: those it makes
        (`torch._dynamo.config.KEY = VALUE`) and those of the project files it imports (importing them runs
        their module level). A setting elsewhere (another script, a test) is not assumed to have run first."""
        made = {rel: tuple(getattr(e, "dynamo", ())) for rel, e in self.entries.items() if getattr(e, "dynamo", ())}
        if not made:
            return {}
        out = {}
        for rel in self.rels:
            e = self.entries.get(rel)
            found = set(made.get(rel, ()))
            for other in _imported_files(self.modules, e.imports) if e is not None else ():
                found.update(made.get(other, ()))
            if found:
                out[rel] = frozenset(found)
        return out


def on_release(findings: Sequence[Finding], rules: Sequence[Type], release: str,
               settings: Optional[Dict[str, frozenset]] = None) -> List[Finding]:
    """The findings as they stand on a torch release with the Dynamo `settings` that apply to each file
    (each rule's `on_release`); every one as found where no release is named (a configuration made without
    `load_config`)."""
    if not release:
        return list(findings)
    by_code = {r.code: r for r in rules}
    settings = settings or {}
    out = []
    for f in findings:
        rule = by_code.get(f.code)
        kept = rule.on_release(f, release, settings.get(f.path, frozenset())) if rule is not None else f
        if kept is not None:
            out.append(kept)
    return out


def _importing_files(facts: Facts, module: str, module_of) -> List[str]:
    """Project files whose code can change a file's findings: those importing it or a name of it (what their
    calls pass, analysis/tensors/foreign.py), through the packages that re-export its names."""
    out: Set[str] = set()
    todo, seen = [module, *facts.by_parent.get(module, ())], set()
    while todo:
        target = todo.pop()
        if target in seen:
            continue
        seen.add(target)
        for rel in facts.importers.get(target, ()):
            out.add(rel)
            if rel.endswith("__init__.py") and target != module:     # `from .helpers import gate` re-exported
                todo.append(f"{module_of(rel)}.{target.rpartition('.')[2]}")
    return sorted(out)


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
