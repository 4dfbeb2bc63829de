"""Find the `@dynlint.example` factories of a project without importing (or running) any user code.

The parent process only reads the files with `ast`: user modules may import torch, crash or hang, and each
factory is imported and called inside its own worker process instead.
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from dynlint.linter.config import DEFAULT_EXAMPLES

DEFAULT_GLOBS = DEFAULT_EXAMPLES       # the configuration's `verify.examples`
# Fully qualified names under which the marker can be imported.
_MARKERS = {"dynlint.example", "dynlint.runtime_check.example", "dynlint.runtime_check.examples.example"}
_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "dist-packages"}


@dataclass(frozen=True)
class ExampleSpec:
    path: str                        # example file, relative to the project root, '/'-separated
    factory: str                     # module-level function name ("" when the file could not be read)
    name: str                        # display name: @example(name=...) when a literal, else the function name
    line: int                        # line of the factory's `def`
    timeout: Optional[float] = None  # @example(timeout=...) when a literal number
    error: str = ""                  # why the file could not be read (then factory is "")

    @property
    def key(self) -> str:
        return f"{self.path}::{self.factory or '<file>'}"


def find_example_files(root: Path, globs: Iterable[str] = DEFAULT_GLOBS) -> List[str]:
    """Files under root matching any glob ('**' = any number of folders), relative and sorted.

    Hidden folders, virtual environments and site-packages are not searched.
    """
    patterns = [glob_regex(g) for g in globs]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not _skipped(Path(folder) / d))
        rel_folder = Path(folder).relative_to(root).as_posix()
        for name in files:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}"
            if any(p.fullmatch(rel) for p in patterns):
                found.append(rel)
    return sorted(found)


def _skipped(folder: Path) -> bool:
    return folder.name.startswith(".") or folder.name in _SKIP_DIRS or (folder / "pyvenv.cfg").exists()


def glob_regex(pattern: str) -> "re.Pattern[str]":
    """Translate a '/'-separated glob relative to the root: '**' spans folders, '*' and '?' do not."""
    pattern = pattern.strip()
    parts = (pattern[2:] if pattern.startswith("./") else pattern).split("/")
    out = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        segment = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)
        out.append(segment if last else segment + "/")
    return re.compile("".join(out))


def find_examples(root: Path, rel_path: str) -> List[ExampleSpec]:
    """The marked factories of one file; a file that cannot be parsed yields one spec carrying the error."""
    try:
        source = (root / rel_path).read_text(encoding="utf-8")
        tree = ast.parse(source, filename=rel_path)
    except (OSError, SyntaxError, ValueError) as e:
        return [ExampleSpec(path=rel_path, factory="", name=rel_path, line=getattr(e, "lineno", None) or 1,
                            error=f"cannot read example file: {e}")]
    aliases = _import_aliases(tree)
    specs = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            if _qualified(call.func if call else decorator, aliases) in _MARKERS:
                options = _literal_keywords(call)
                name = options.get("name")
                timeout = options.get("timeout")
                specs.append(ExampleSpec(
                    path=rel_path, factory=node.name, name=name if isinstance(name, str) else node.name,
                    line=node.lineno,
                    timeout=float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None))
                break
    return specs


def discover(root: Path, globs: Iterable[str] = DEFAULT_GLOBS) -> List[ExampleSpec]:
    return [spec for rel in find_example_files(root, globs) for spec in find_examples(root, rel)]


def _import_aliases(tree: ast.Module) -> Dict[str, str]:
    """Local name -> qualified name for `import dynlint as d` and `from dynlint import example as ex`."""
    aliases: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _qualified(expr: ast.expr, aliases: Dict[str, str]) -> str:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return ""
    parts.append(aliases.get(expr.id, expr.id))
    return ".".join(reversed(parts))


def _literal_keywords(call: Optional[ast.Call]) -> Dict[str, object]:
    options = {}
    for kw in call.keywords if call else ():
        try:
            options[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            pass                  # not a literal: the worker still reads the real value at run time
    return options
