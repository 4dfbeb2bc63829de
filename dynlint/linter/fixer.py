"""`dynlint check --fix`: apply the fixes findings carry, as ruff does.

Rules describe a fix as edits (finding.Fix / finding.Edit): the file span of a syntax node and the source that
replaces it. This module knows nothing of torch: it parses the whole file with libcst, finds each target node by
type and position, swaps in the parsed replacement (so comments and formatting elsewhere are untouched) and adds
any `import` a fix needs. Fixes whose spans overlap are not applied in the same pass; the project is re-checked
and the rest applied in later passes, until nothing changes (at most `MAX_PASSES`). Later passes check a
mirror of the project (symbolic links, with the fixed files written out), so `--diff` sees exactly what `--fix`
would write. A file is written only at the end, atomically (a temporary file beside it, then a rename) and with
its permissions, encoding and byte-order mark kept; a file that does not parse is never touched, and neither is
one whose fixed text would not parse.
"""
from __future__ import annotations

import ast
import codecs
import difflib
import hashlib
import io
import shutil
import tempfile
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from dynlint.linter import engine, notebooks
from dynlint.linter.files import shown
from dynlint.linter.writes import write_atomic
from dynlint.linter.finding import Finding, Fix

MAX_PASSES = 4


# ---- one file, one pass ----------------------------------------------------------------------------------
def _offsets(text: str) -> List[int]:
    starts, pos = [0], 0
    for line in io.StringIO(text, newline=""):
        pos += len(line)
        starts.append(pos)
    return starts


def _span(fix: Fix, starts: List[int]) -> List[Tuple[int, int]]:
    def at(line: int, col: int) -> int:
        return starts[min(max(line, 1), len(starts)) - 1] + col
    return [(at(e.line, e.column), at(e.end_line, e.end_column)) for e in fix.edits]


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: Dict[int, object]):
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        new = self.replacements.get(id(original_node))
        if new is None:
            return updated_node
        if isinstance(new, list):
            return cst.FlattenSentinel(new)
        return new


def _replacement(edit, original: cst.CSTNode, module: cst.Module):
    if not edit.statements:
        return cst.parse_expression(edit.code)
    config = cst.PartialParserConfig(default_indent=module.default_indent, default_newline=module.default_newline)
    body = list(cst.parse_module(edit.code, config=config).body)
    if body and hasattr(original, "leading_lines"):      # comments above the replaced statement stay above it
        body[0] = body[0].with_changes(leading_lines=original.leading_lines)
    return body


def apply_fixes(text: str, fixes: Sequence[Fix]) -> Tuple[str, List[Fix]]:
    """Apply the fixes that do not overlap (the smallest first) to one file's text; (new text, applied)."""
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    nodes: Dict[tuple, cst.CSTNode] = {}
    for node, r in wrapper.resolve(PositionProvider).items():
        nodes.setdefault((type(node).__name__, r.start.line, r.start.column, r.end.line, r.end.column), node)
    starts = _offsets(text)
    taken: List[Tuple[int, int]] = []
    chosen: List[Tuple[Fix, List[cst.CSTNode]]] = []
    for fix in sorted(fixes, key=lambda f: (sum(b - a for a, b in _span(f, starts)), _span(f, starts))):
        targets = [nodes.get((e.node_type, e.line, e.column, e.end_line, e.end_column)) for e in fix.edits]
        spans = _span(fix, starts)
        if not fix.edits or any(t is None for t in targets) or \
                any(a < d and c < b for a, b in spans for c, d in taken):
            continue
        chosen.append((fix, targets))
        taken += spans
    if not chosen:
        return text, []
    replacements = {id(t): _replacement(e, t, module) for fix, targets in chosen for e, t in zip(fix.edits, targets)}
    module = module.visit(_Replace(replacements))
    needed = [imp for fix, _ in chosen for imp in fix.imports]
    if needed:
        module = ensure_imports(module, needed)
    return module.code, [fix for fix, _ in chosen]


def _binds(stmt: cst.CSTNode) -> List[Tuple[str, str]]:
    """(module, local name) pairs a top-level `import a.b [as c]` statement binds."""
    out = []
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = cst.Module([]).code_for_node(alias.name)
                    if alias.asname is not None:
                        out.append((dotted, cst.Module([]).code_for_node(alias.asname.name)))
                    else:
                        out.append((dotted.split(".")[0], dotted.split(".")[0]))
    return out


def ensure_imports(module: cst.Module, needed: Iterable[Tuple[str, str]]) -> cst.Module:
    """Add `import module [as name]` after the module's docstring, `__future__` imports and leading imports,
    for each (module, name) no top-level import binds yet."""
    body = list(module.body)
    bound = {b for stmt in body for b in _binds(stmt)}
    missing = []
    for mod, name in needed:
        if (mod, name) not in bound and (mod, name) not in missing:
            missing.append((mod, name))
    if not missing:
        return module

    def is_docstring(stmt) -> bool:
        return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
            isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString,
                                                                                   cst.ConcatenatedString))

    def is_import(stmt) -> bool:
        return isinstance(stmt, cst.SimpleStatementLine) and \
            all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
    start = 1 if body and is_docstring(body[0]) else 0
    while start < len(body) and isinstance(body[start], cst.SimpleStatementLine) and \
            any(isinstance(s, cst.ImportFrom) and s.module and cst.Module([]).code_for_node(s.module) == "__future__"
                for s in body[start].body):
        start += 1
    end = start
    while end < len(body) and is_import(body[end]):
        end += 1
    # after the last plain `import x` of the leading imports, else before its first `from x import y`
    plain = [i for i in range(start, end) if all(isinstance(s, cst.Import) for s in body[i].body)]
    at = plain[-1] + 1 if plain else start
    new = [cst.parse_statement(f"import {m}" + (f" as {n}" if n != m else ""),
                               config=module.config_for_parsing) for m, n in missing]
    if at == start and at < len(body):     # the new import opens the block: it takes the blank lines and comments
        new[0] = new[0].with_changes(leading_lines=body[at].leading_lines)
        body[at] = body[at].with_changes(leading_lines=[])
    return module.with_changes(body=body[:at] + new + body[at:])


# ---- reading and writing source files --------------------------------------------------------------------
@dataclass
class Source:
    text: str
    encoding: str = "utf-8"
    bom: bool = False
    notebook: Optional[bytes] = None       # a notebook's file: `text` is its cells as one module

    @classmethod
    def read(cls, path: Path) -> "Source":
        data = path.read_bytes()
        if notebooks.is_notebook(path):
            return cls(notebooks.view(data).text, notebook=data)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        bom = data.startswith(codecs.BOM_UTF8)
        text = data.decode(encoding)
        return cls(text[1:] if text.startswith("\ufeff") else text, "utf-8" if encoding == "utf-8-sig" else encoding,
                   bom)

    def encode(self, text: str) -> bytes:
        """The file's bytes for `text` (a notebook's: the fixed cells written back; ValueError if they cannot)."""
        if self.notebook is not None:
            return notebooks.write_back(self.notebook, text)
        return (codecs.BOM_UTF8 if self.bom else b"") + text.encode(self.encoding)

    def as_stored(self, text: str) -> str:
        """What the file holds for `text`, for a diff that applies to it (a notebook's JSON)."""
        return text if self.notebook is None else self.encode(text).decode("utf-8")


def unified_diff(rel: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=_diff_name("a/", rel), tofile=_diff_name("b/", rel)))


_GIT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
                '"': '\\"', "\\": "\\\\"}


def _diff_name(prefix: str, rel: str) -> str:
    """A file name in a diff header as git writes one: plain when it is printable ASCII, else in double quotes
    with C escapes and octal UTF-8 bytes (what `git apply` reads back), so a name never carries a control
    character or a line break into a terminal or a CI log."""
    name = prefix + rel
    if all(" " <= c <= "~" and c not in '"\\' for c in name):
        return name
    out = []
    for c in name:
        if c in _GIT_ESCAPES:
            out.append(_GIT_ESCAPES[c])
        elif " " <= c <= "~":
            out.append(c)
        else:
            out += [f"\\{b:03o}" for b in c.encode("utf-8", "surrogateescape")]
    return '"' + "".join(out) + '"'


# ---- the project: passes until nothing changes -----------------------------------------------------------
class _Mirror:
    """The checked files as symbolic links in a temporary folder, package structure kept (so module names and
    imports resolve as in the project), with fixed files written out as real files."""

    def __init__(self, files: Sequence[Tuple[str, str]]):
        self.dir = Path(tempfile.mkdtemp(prefix="dynlint-fix-"))
        self.paths: Dict[str, Path] = {}
        for path, rel in files:
            self.paths[rel] = self._place(Path(path).absolute())

    def _place(self, real: Path) -> Path:
        top = real.parent
        while (top / "__init__.py").is_file() and top.parent != top:
            top = top.parent                   # the first folder above the package: module names start below it
        base = self.dir / hashlib.blake2b(str(top).encode(), digest_size=6).hexdigest()
        target = base / real.relative_to(top)
        target.parent.mkdir(parents=True, exist_ok=True)
        d = real.parent
        while d != top:
            init = base / d.relative_to(top) / "__init__.py"
            if not init.exists() and not init.is_symlink():
                init.symlink_to(d / "__init__.py")
            d = d.parent
        if not target.exists() and not target.is_symlink():
            target.symlink_to(real)
        return target

    def write(self, rel: str, data: bytes) -> None:
        p = self.paths[rel]
        if p.is_symlink():
            p.unlink()
        p.write_bytes(data)

    @property
    def files(self) -> List[Tuple[str, str]]:
        return [(str(p), rel) for rel, p in self.paths.items()]

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class FixOutcome:
    result: object                                   # engine.Result: the findings left in the fixed code
    found: int                                       # findings before fixing
    applied: Dict[str, int] = field(default_factory=dict)      # rel -> fixes applied
    applied_codes: Dict[str, Dict[str, int]] = field(default_factory=dict)   # rel -> rule code -> fixes applied
    before: Dict[str, str] = field(default_factory=dict)       # rel -> original text, for changed files
    after: Dict[str, str] = field(default_factory=dict)        # rel -> fixed text
    sources: Dict[str, Source] = field(default_factory=dict)
    paths: Dict[str, Path] = field(default_factory=dict)       # rel -> the file
    problems: List[str] = field(default_factory=list)          # files left alone, and why
    unsafe_available: int = 0                        # fixes left that --unsafe-fixes would apply
    root: Optional[Path] = None                      # the project: no write follows a link out of it

    @property
    def fixed(self) -> int:
        return sum(self.applied.values())

    def diff(self) -> str:
        return "".join(unified_diff(shown(self.root, rel) if self.root else rel,
                                    self.sources[rel].as_stored(self.before[rel]),
                                    self.sources[rel].as_stored(self.after[rel]))
                       for rel in sorted(self.after))

    def write(self) -> List[str]:
        """Write every changed file; the list of those that could not be written (and why)."""
        failed = []
        for rel in sorted(self.after):
            try:
                write_atomic(self.paths[rel], self.sources[rel].encode(self.after[rel]), self.root)
            except (OSError, UnicodeError) as e:
                failed.append(f"{rel}: cannot write the fixed file: {e}")
        return failed


def fixable(f: Finding, unsafe: bool) -> bool:
    return f.autofix is not None and (f.autofix.safety == "safe" or (unsafe and f.autofix.safety == "unsafe"))


def fix_files(files: Iterable[Tuple[Path, str]], config, rules: Sequence[Type], *, analysis, unsafe: bool = False,
              debug: bool = False, jobs: int = 1, cache=None, progress=None, passes: int = MAX_PASSES) -> FixOutcome:
    """Check the files, apply their fixes in passes (in memory), and return what changed and what is left.
    Nothing is written: call `.write()` on the outcome (`--fix`) or print `.diff()` (`--diff`)."""


    files = [(str(p), rel) for p, rel in files]
    result = engine.run(files, config, rules, analysis=analysis, debug=debug, jobs=jobs, cache=cache, progress=progress)
    out = FixOutcome(result=result, found=len(result.findings), paths={rel: Path(p) for p, rel in files},
                     root=config.root)
    texts: Dict[str, str] = {}
    broken = set()
    mirror: Optional[_Mirror] = None
    try:
        for _ in range(passes):
            todo: Dict[str, List[Fix]] = {}
            code_of: Dict[int, str] = {}
            for f in result.findings:
                if fixable(f, unsafe) and f.path in out.paths and f.path not in broken:
                    todo.setdefault(f.path, []).append(f.autofix)
                    code_of[id(f.autofix)] = f.code
            changed = []
            for rel, fixes in sorted(todo.items()):
                if rel not in texts:
                    try:
                        out.sources[rel] = Source.read(out.paths[rel])
                    except (OSError, SyntaxError, ValueError, LookupError) as e:
                        out.problems.append(f"{rel}: not fixed, cannot read it: {e}")
                        broken.add(rel)
                        continue
                    texts[rel] = out.before[rel] = out.sources[rel].text
                try:
                    new, applied = apply_fixes(texts[rel], fixes)
                    ast.parse(new)
                except Exception as e:       # a fix of ours gives bad code: leave the file as it was
                    out.problems.append(f"{rel}: not fixed: the fixes would not give valid Python "
                                        f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
                    broken.add(rel)
                    continue
                if applied and new != texts[rel]:
                    try:
                        out.sources[rel].encode(new)        # a notebook's fixed cells must go back into it
                    except ValueError as e:
                        out.problems.append(f"{rel}: not fixed: the fixed text cannot be written back ({e})")
                        broken.add(rel)
                        continue
                    texts[rel] = new
                    out.applied[rel] = out.applied.get(rel, 0) + len(applied)
                    codes = out.applied_codes.setdefault(rel, {})
                    for fix in applied:
                        codes[code_of[id(fix)]] = codes.get(code_of[id(fix)], 0) + 1
                    changed.append(rel)
            if not changed:
                break
            mirror = mirror or _Mirror(files)
            for rel in changed:
                mirror.write(rel, out.sources[rel].encode(texts[rel]))
            result = engine.run(mirror.files, config, rules, analysis=analysis, debug=debug, jobs=jobs)
    finally:
        if mirror is not None:
            mirror.close()
    for rel in broken:                  # a file that could not be fixed keeps its original text
        texts.pop(rel, None)
        out.applied.pop(rel, None)
    out.after = {rel: t for rel, t in texts.items() if t != out.before.get(rel)}
    out.before = {rel: out.before[rel] for rel in out.after}
    out.result = result
    out.unsafe_available = 0 if unsafe else sum(1 for f in result.findings if fixable(f, True))
    return out
