"""Reading sources: a file's bytes (or an editor's unsaved buffer in its place), decoded as Python decodes them,
parsed and indexed (`ast`); any problem becomes a DYN000 finding of that file."""
from __future__ import annotations

import ast
import io
import os
import re
import stat
import sys
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from dynlint.linter import notebooks
from dynlint.linter.cache import digest
from dynlint.linter.finding import Finding, parse_error_finding
from dynlint.linter.index import ModuleIndex, build_index


@dataclass
class SourceFile:
    path: str                 # project-relative
    text: str = ""
    digest: str = ""
    index: Optional[ModuleIndex] = None
    error: Optional[Finding] = None


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


def read_bytes(path: Path, max_bytes: Optional[int]) -> bytes:
    """The file's bytes; OSError (with a readable strerror) for what is not a regular file or is too large."""
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


@dataclass(frozen=True)
class Reader:
    """How one run reads its sources: the size limit, and the texts checked instead of some files' (an editor's
    unsaved buffers, by project-relative path; such a file need not exist on disk). Worker processes get it
    with the rest of the run's shared state."""
    max_bytes: Optional[int] = None
    buffers: Dict[str, bytes] = field(default_factory=dict)

    def bytes(self, path: Path, rel: str) -> bytes:
        """The file's bytes (or its buffer's); OSError (with a readable strerror) for what is not a regular file
        or is too large."""
        if rel not in self.buffers:
            return read_bytes(path, self.max_bytes)
        data = self.buffers[rel]
        if self.max_bytes and len(data) > self.max_bytes:
            raise OSError(0, f"too large ({len(data) / 2 ** 20:.1f} MiB > {self.max_bytes / 2 ** 20:.3g} MiB limit)")
        return data

    def source(self, path: Path, rel: str) -> bytes:
        """The source to check: the file's bytes, or a notebook's code cells as one module (linter/notebooks.py);
        OSError as `bytes`, ValueError for what is not a notebook."""
        data = self.bytes(path, rel)
        return notebooks.module_bytes(data) if notebooks.is_notebook(rel or path) else data

    def load(self, path: Path, rel: str, known: Optional[SourceFile] = None) -> SourceFile:
        """Read, decode and index one file; any problem becomes a DYN000 finding for that file.
        `known`: the file as the index pass saw it; while the bytes are the same, its index is reused."""
        sf = SourceFile(rel)
        try:
            data = self.source(path, rel)
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
            sf.error = parse_error_finding(
                rel, f"too complex for Python's parser (MemoryError{': ' if str(e) else ''}{e})")
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

