"""The engine: read → index (ast, every file) → regions (whole project) → check (libcst, region code only).

libcst is the slow part, so it only ever sees *units*: the source of each outermost traced function
(dedented so it parses on its own), or a whole top-level statement when a site rule needs it. All rules
run in one walk over each unit; positions are computed per unit and shifted back to file coordinates.
"""
from __future__ import annotations

import ast
import io
import os
import sys
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Type

import libcst as cst

from dynlint.linter.config import Config
from dynlint.linter.finding import INTERNAL_ERROR, FileError, Finding, parse_error_finding
from dynlint.linter.index import ModuleIndex, build_index
from dynlint.linter.project import Project
from dynlint.linter.suppressions import Suppressions
from dynlint.linter.walker import Unit, walk_unit


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

    @property
    def internal_errors(self) -> List[Finding]:
        return [f for f in self.findings if f.code == INTERNAL_ERROR]


def module_name(path: Path) -> Tuple[str, bool]:
    """Dotted module name as Python would import it: climb while the folder is a package (has __init__.py),
    the way mypy and pytest find a file's module."""
    path = path.absolute()
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
        raise SyntaxError(f"invalid encoding declaration: {e}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        raise SyntaxError(f"cannot decode file as {encoding}: {e}") from None
    return text[1:] if text.startswith("\ufeff") else text


def load(path: Path, rel: str) -> SourceFile:
    """Read, decode and index one file; any problem becomes a DYN000 finding for that file."""
    sf = SourceFile(rel)
    try:
        data = path.read_bytes()
    except (OSError, ValueError) as e:
        sf.error = parse_error_finding(rel, f"cannot read file: {getattr(e, 'strerror', None) or e}")
        return sf
    from dynlint.linter.cache import digest
    sf.digest = digest(data)
    try:
        sf.text = decode(data)
        if "\x00" in sf.text:
            raise SyntaxError("source contains a NUL byte")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # SyntaxWarning for odd escapes in user code
            tree = ast.parse(sf.text, filename=rel)
    except SyntaxError as e:
        sf.error = parse_error_finding(rel, e.msg if hasattr(e, "msg") and e.msg else str(e),
                                       e.lineno or 1, (e.offset or 1) - 1)
        return sf
    except (RecursionError, MemoryError, ValueError) as e:
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


def check_file(sf: SourceFile, rules: Sequence[Type], regions: Dict[str, Tuple[str, ...]], site_lines: Set[int],
               project: Optional[Project] = None, debug: bool = False) -> List[Finding]:
    """Run every rule over the region code (and site statements) of one file."""
    lines = sf.text.splitlines(keepends=True)
    findings: List[Finding] = []
    for unit in plan_units(sf, lines, set(regions), site_lines):
        try:
            module = cst.parse_module(unit.text)
        except cst.ParserSyntaxError as e:
            findings.append(parse_error_finding(sf.path, f"libcst: {e.message}", e.raw_line + unit.line_offset,
                                                e.raw_column + unit.col_offset))
            continue
        except RecursionError:
            findings.append(parse_error_finding(sf.path, "nesting too deep to parse", unit.line_offset + 1))
            continue
        findings += walk_unit(module, unit, sf, rules, regions, project, debug)
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


def _init_worker(project: Optional[Project], rule_codes, debug: bool) -> None:
    from dynlint.rules.base import REGISTRY, all_rules
    all_rules()
    _WORKER.update(project=project, rules=[REGISTRY[c] for c in rule_codes], debug=debug)


def _index_task(item: Tuple[str, str]) -> Tuple[str, Tuple[int, int], str, SourceFile]:
    path, rel = item
    p = Path(path)
    try:
        st = p.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (0, -1)
    sf = load(p, rel)
    digest_ = sf.digest
    sf.text = ""                      # the check re-reads the file; do not ship text between processes
    return rel, stamp, digest_, sf


def _check_task(item) -> Tuple[str, List[Finding]]:
    path, sf, regions, sites = item
    w = _WORKER
    full = load(Path(path), sf.path)
    if full.error or full.digest != sf.digest:    # changed while we ran: check what is there now
        if full.error:
            return sf.path, [full.error]
    full.index = full.index or sf.index
    try:
        rules = [r for r in w["rules"]]
        return sf.path, check_file(full, rules, regions, sites, w["project"], w["debug"])
    except RecursionError:
        return sf.path, [parse_error_finding(sf.path, "nesting too deep to analyse")]


def _map(fn, items: list, jobs: int, init_args):
    """Map over items, in worker processes when there is enough work to pay for starting them."""
    if jobs <= 1 or len(items) < 16:
        _init_worker(*init_args)
        return [fn(i) for i in items]
    import concurrent.futures as cf
    import multiprocessing

    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                initargs=init_args) as pool:
        return list(pool.map(fn, items, chunksize=max(1, len(items) // (jobs * 8))))


def run(files: Iterable[Tuple[Path, str]], config: Config, rules: Sequence[Type], debug: bool = False,
        jobs: int = 1, cache=None) -> Result:
    """Check files (pairs of path and project-relative path) and return all findings."""
    from dynlint.rules.regions import compiled_names, find_regions     # torch knowledge lives in rules/

    files = [(str(p), rel) for p, rel in files]
    codes = [r.code for r in rules]
    # 1. index every file (ast), reusing cached indexes of unchanged files
    sources: Dict[str, SourceFile] = {}
    todo = []
    for path, rel in files:
        hit = cache.files.get(rel) if cache else None
        if hit:
            try:
                st = os.stat(path)
                if (st.st_mtime_ns, st.st_size) == hit[0]:
                    sources[rel] = hit[2]
                    continue
            except OSError:
                pass
        todo.append((path, rel))
    for rel, stamp, _, sf in _map(_index_task, todo, jobs, (None, codes, debug)):
        sources[rel] = sf
        if cache is not None and stamp[1] >= 0 and not sf.error:
            cache.files[rel] = (stamp, sf.digest, sf)
            cache.dirty = True
    ordered = [sources[rel] for _, rel in files]

    # 2. the whole-project view: regions and sites
    project = Project(sf.index for sf in ordered if sf.index)
    regions = find_regions(project, config.regions)
    by_file: Dict[str, Dict[str, Tuple[str, ...]]] = {}
    for (path, q), chain in regions.items():
        by_file.setdefault(path, {})[q] = chain
    sites = site_lines(project, compiled_names(project)) if any(r.scope == "site" for r in rules) else {}
    digests = {sf.path: sf.digest for sf in ordered}

    # 3. check the files that hold regions or sites (libcst), reusing cached findings where the key matches
    findings: List[Finding] = []
    errors: List[FileError] = []
    work, keys = [], {}
    paths = dict((rel, path) for path, rel in files)
    for sf in ordered:
        if sf.error:
            findings.append(sf.error)
            errors.append(FileError(sf.path, sf.error.message, sf.error.line, sf.error.column))
            continue
        if sf.path not in by_file and sf.path not in sites:
            continue
        regs, st = by_file.get(sf.path, {}), sorted(sites.get(sf.path, ()))
        if cache is not None:
            from dynlint.linter.cache import check_key
            keys[sf.path] = check_key(sf.digest, regs, st, [digests.get(d, "") for d in _imported_files(project, sf)])
            hit = cache.checks.get(sf.path)
            if hit and hit[0] == keys[sf.path]:
                findings += hit[1]
                continue
        work.append((paths[sf.path], sf, regs, set(st)))
    for rel, found in _map(_check_task, work, jobs, (project, codes, debug)):
        findings += found
        if cache is not None:
            cache.checks[rel] = (keys[rel], found)
            cache.dirty = True
    if cache is not None:
        cache.save()
    findings = [f for f in findings if config.enabled(f.code, f.path) or f.code in ("DYN000", "DYN001")]
    return Result(sorted(set(findings), key=lambda f: f.sort_key), [rel for _, rel in files], errors)


def _imported_files(project: Project, sf: SourceFile) -> List[str]:
    """Project files whose index can change this file's findings: the modules it imports."""
    out = []
    for target in set(sf.index.imports.values()):
        parts = target.split(".")
        for i in range(len(parts), 0, -1):
            ix = project.by_module.get(".".join(parts[:i]))
            if ix is not None:
                out.append(ix.path)
                break
    return sorted(set(out))


def site_lines(project: Project, compiled: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    """Lines, per file, of calls that set up torch.compile or call a compiled callable (site rules look there)."""
    from dynlint.rules.names import COMPILE, strip_call

    out: Dict[str, Set[int]] = {}
    for path, ix in project.by_path.items():
        names = compiled.get(path, set())
        calls = list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]
        for c in calls:
            if c.kind == "name" and (ix.qualify(strip_call(c.target)) in COMPILE or c.target in names):
                out.setdefault(path, set()).add(c.line)
    return out
