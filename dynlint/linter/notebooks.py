"""Jupyter notebooks (`.ipynb`), read with nbformat: their code cells are checked as one module, in cell order.

The module (the *view*) holds each code cell after a marker line naming it (`# %% dynlint cell 3`; cells count
from 1, markdown and raw cells included, as an editor shows them). IPython syntax is not Python: a line magic
or shell escape (`%timeit f(x)`, `!pip install`, `files = !ls`, `obj?`) becomes `pass` at its indentation, and
a cell magic (`%%bash`) leaves its whole cell out. A line of a cell that reads like a marker is held the same way
(as a comment): cell boundaries come from the notebook's structure, never from text inside a cell. Rules, caching and `# noqa` then see an ordinary module;
reports turn its lines back into cells (`in_cells`), and `--fix` writes the fixed cells back into the notebook
(`write_back`), each IPython line as it was, outputs and metadata untouched.
"""
from __future__ import annotations

import bisect
import io
import json
import os
import re
import stat
import warnings
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

SUFFIX = ".ipynb"
MARK = "# %% dynlint cell "
_IPYTHON = re.compile(r"^\s*(?:[%!]|\?|[A-Za-z_][\w.]*\s*=\s*[%!])|\?\s*$")
_PLACEHOLDER = "pass  # dynlint: IPython syntax"
_HELD = "# dynlint: a cell's line that looks like a cell marker"   # the cell's own text never marks a cell


def is_notebook(path) -> bool:
    return str(path).endswith(SUFFIX)


def _marker(line: str) -> Optional[int]:
    """The cell a view's marker line names (None for any other line)."""
    number = line[len(MARK):].strip() if line.startswith(MARK) else ""
    return int(number) if number.isdigit() else None


@dataclass
class View:
    text: str                             # the module
    ipython: Dict[int, List[str]]         # cell -> its IPython (and marker-like) lines, in order, now placeholders


def read(data: bytes):
    """The notebook (nbformat's NotebookNode, converted to format 4); ValueError naming what is wrong."""
    import nbformat

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not a notebook: not UTF-8 ({e})") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                  # missing cell ids and the like: still readable
            nb = nbformat.reads(text, as_version=4, capture_validation_error={})
    except RecursionError:
        raise ValueError("not a notebook: nested too deep") from None
    except Exception as e:                                   # json's, nbformat's own (reader, version) errors
        raise ValueError(f"not a notebook: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") \
            from None
    if not isinstance(nb.get("cells"), list):
        raise ValueError("not a notebook: no list of cells")
    return nb


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def view(data: bytes) -> View:
    nb = read(data)
    lines: List[str] = []
    ipython: Dict[int, List[str]] = {}
    for number, cell in enumerate(nb.cells, 1):
        src = _source(cell)
        if cell.get("cell_type") != "code" or src.lstrip().startswith("%%"):
            continue
        lines.append(f"{MARK}{number}\n")
        for i, line in enumerate(io.StringIO(src, newline=None), 1):
            body = line.rstrip("\n")
            if _IPYTHON.search(body):
                ipython.setdefault(number, []).append(body)
                body = body[:len(body) - len(body.lstrip())] + _PLACEHOLDER
            elif _marker(body) is not None:       # a forged `# %% dynlint cell N`: held, as an IPython line is
                ipython.setdefault(number, []).append(body)
                body = _HELD
            lines.append(body + "\n")
    return View("".join(lines), ipython)


def module_bytes(data: bytes) -> bytes:
    """What dynlint checks for a notebook's bytes: the view, as UTF-8."""
    return view(data).text.encode("utf-8")


def where(text: str) -> List[Tuple[int, int]]:
    """For each line of a view (as checked, or as fixed): (its cell, its line in the cell); (cell, 0) on a
    cell's marker line."""
    out: List[Tuple[int, int]] = []
    cell, i = 0, 0
    for line in io.StringIO(text, newline=""):
        number = _marker(line)
        if number is not None:
            cell, i = number, 0
        else:
            i += 1
        out.append((cell, i))
    return out


def in_cells(findings, view_text) -> list:
    """The findings, a notebook's counted in its cells (Finding.cell, and `line`/`end_line` within the cell).
    `view_text(rel)`: the module that was checked for a notebook, or None where it cannot be had."""
    lines: Dict[str, List[Tuple[int, int]]] = {}
    out = []
    for f in findings:
        if f.cell or not is_notebook(f.path):
            out.append(f)
            continue
        if f.path not in lines:
            text = view_text(f.path)
            lines[f.path] = where(text) if text else []
        at = lines[f.path]
        if not 0 < f.line <= len(at) or at[f.line - 1][0] == 0:
            out.append(f)                      # not read as a notebook (DYN000 on the file): as it is
            continue
        cell, line = at[f.line - 1]
        end_cell, end = at[f.end_line - 1] if 0 < f.end_line <= len(at) else (cell, line)
        out.append(f.with_(cell=cell, line=max(line, 1),
                           end_line=max(end, 1) if end_cell == cell else max(line, 1),
                           end_column=f.end_column if end_cell == cell else 0))
    return sorted(out, key=lambda f: f.sort_key)


def write_back(data: bytes, fixed: str) -> bytes:
    """The notebook with its code cells as in `fixed` (a fixed view); ValueError when the fixed text no longer
    shows every cell's marker, in order, or an IPython line's placeholder went missing."""
    import nbformat

    nb, old = read(data), view(data)
    numbers = [c for c, i in where(old.text) if i == 0]
    cells: Dict[int, List[str]] = {}
    current = None
    for line in io.StringIO(fixed, newline=None):
        if _marker(line) is not None:
            current = _marker(line)
            cells[current] = []
        elif current is None:
            if line.strip():
                raise ValueError("the fixes added code above the first cell")
        else:
            cells[current].append(line)
    if list(cells) != numbers:
        raise ValueError("the fixes moved or removed the lines that mark the notebook's cells")
    for number, body in cells.items():
        magic = iter(old.ipython.get(number, []))
        out = []
        for line in body:
            if line.strip() in (_PLACEHOLDER, _HELD):
                try:
                    out.append(next(magic) + "\n")
                except StopIteration:
                    raise ValueError(f"the fixes repeated an IPython line of cell {number}") from None
            else:
                out.append(line)
        if next(magic, None) is not None:
            raise ValueError(f"the fixes removed an IPython line of cell {number}")
        text = "".join(out)
        original = _source(nb.cells[number - 1])
        if not original.endswith("\n") and text.endswith("\n"):
            text = text[:-1]                 # the view ends every line; the cell's last line had no newline
        if text != original:
            nb.cells[number - 1].source = text
    return nbformat.writes(nb).rstrip("\n").encode("utf-8") + (b"\n" if data.endswith(b"\n") else b"")


def json_lines(data: bytes) -> Dict[Tuple[int, int], int]:
    """(cell, line in the cell) -> the line of the notebook's file that holds it (for SARIF and GitHub, which
    point into the file as stored). A cell whose source is one JSON string maps all its lines to that line."""
    text = data.decode("utf-8", errors="replace")
    breaks = [i for i, c in enumerate(text) if c == "\n"]
    out: Dict[Tuple[int, int], int] = {}
    try:
        for number, cell in enumerate(_elements(text, _member(text, _skip_ws(text, 0), "cells")), 1):
            src = _member(text, cell, "source")
            if src is None:
                continue
            if text[src] == '"':
                value = json.decoder.scanstring(text, src + 1)[0]
                starts = [src] * max(1, value.count("\n") + (not value.endswith("\n")))
            else:
                starts = list(_elements(text, src))
            for i, pos in enumerate(starts, 1):
                out[(number, i)] = bisect.bisect_left(breaks, pos) + 1
    except (ValueError, IndexError, TypeError):
        pass                                 # not the JSON nbformat read: the lines found so far
    return out


_DECODER = json.JSONDecoder()


def _elements(text: str, pos: Optional[int]) -> Iterator[int]:
    """The offsets of the values of the JSON array at `pos`."""
    if pos is None or text[pos] != "[":
        raise ValueError("not an array")
    pos = _skip_ws(text, pos + 1)
    while text[pos] != "]":
        yield pos
        pos = _skip_ws(text, _DECODER.raw_decode(text, pos)[1])
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)


def _member(text: str, pos: int, key: str) -> Optional[int]:
    """The offset of the value of `key` in the JSON object at `pos` (None when it has none)."""
    if text[pos] != "{":
        raise ValueError("not an object")
    pos = _skip_ws(text, pos + 1)
    while text[pos] != "}":
        name, pos = json.decoder.scanstring(text, pos + 1)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)           # past the ':'
        if name == key:
            return pos
        pos = _skip_ws(text, _DECODER.raw_decode(text, pos)[1])
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return None


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _read_file(path, max_mib: float) -> bytes:
    """A regular file's bytes (OSError for anything else, or one over the size limit); never blocks on a FIFO."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode) or (max_mib and st.st_size > max_mib * 2 ** 20):
        raise OSError(0, "not a regular file, or too large")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()


def cell_lines(path, max_mib: float = 10.0) -> Dict[int, List[str]]:
    """Each code cell's lines (for code snippets in reports); none for what is not a regular file, is over the
    size limit or is not a notebook."""
    try:
        nb = read(_read_file(path, max_mib))
    except (OSError, ValueError):
        return {}
    return {n: _source(c).split("\n") for n, c in enumerate(nb.cells, 1) if c.get("cell_type") == "code"}


class StoredLines:
    """Where a finding stands in the file as stored: its line, or for a notebook cell's finding the line of
    the notebook's JSON that holds that line of the cell (SARIF and GitHub point into the file). Each
    notebook is read once."""

    def __init__(self, root, max_mib: float = 10.0):
        self.root, self.max_mib = root, max_mib
        self._files: Dict[str, Dict[Tuple[int, int], int]] = {}

    def __call__(self, f) -> int:
        if not f.cell:
            return f.line
        if f.path not in self._files:
            try:
                self._files[f.path] = json_lines(_read_file(os.path.join(self.root, f.path), self.max_mib))
            except OSError:
                self._files[f.path] = {}
        return self._files[f.path].get((f.cell, f.line), 1)
