"""flake8 plugin (entry point `DYN` under `flake8.extension`): the CLI's findings, reported by flake8.

flake8 checks one file at a time, but whether a function is compiled can depend on other files (a helper
in utils.py is traced because model.py's compiled forward calls it). So the first file of a project that a
flake8 process sees runs dynlint over the whole project, and every file then reports its own findings
from that run. flake8 adds 1 to the column a plugin yields; Finding.column is 0-based, so it passes as is.
flake8 applies `--select`, `--extend-ignore` and `# noqa` on top; dynlint's own configuration and
suppressions apply too. Text flake8 reads from stdin (an editor's buffer, `--stdin-display-name` naming the
file) is checked as that file of its project. flake8 imports every plugin at each start, so dynlint's modules are imported inside the
functions, when a file is checked (not to dodge a cycle).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

from dynlint.core.finding import Finding
from dynlint.core.version import __version__

# project root -> (files dynlint checked, findings by project-relative path); once per flake8 process
_PROJECTS: Dict[Path, Tuple[Set[str], Dict[str, List[Finding]]]] = {}


def project_root(path: Path) -> Path:
    """As the CLI finds it: the folder of the nearest pyproject.toml with a [tool] table, else of .git."""
    from dynlint.core.config import find_config

    start = path.resolve().parent
    source = find_config(start)
    if source is not None:
        return source.parent
    return next((d for d in (start, *start.parents) if (d / ".git").exists()), start)


def _check_project(root: Path) -> Tuple[Set[str], Dict[str, List[Finding]]]:
    from dynlint import api
    from dynlint.core.config import load_config

    if root not in _PROJECTS:
        config = load_config([str(root)], api.known_codes())
        result = api.check([str(root)], config)
        by_path: Dict[str, List[Finding]] = {}
        for f in result.findings:
            by_path.setdefault(f.path, []).append(f)
        _PROJECTS[root] = (set(result.files), by_path)
    return _PROJECTS[root]


def findings_for(filename: str) -> List[Finding]:
    from dynlint import api
    from dynlint.core.config import load_config
    from dynlint.core.files import relpath

    path = Path(filename)
    root = project_root(path)
    rel = relpath(path, root)
    files, by_path = _check_project(root)
    if rel in files:
        return by_path.get(rel, [])
    # flake8 was given a file the project walk skips (e.g. git-ignored): check it on its own
    return [f for f in api.check([filename], load_config([str(root)], api.known_codes())).findings if f.path == rel]


def buffer_findings(text: str, filename: str) -> List[Finding]:
    from dynlint import api
    from dynlint.core.config import load_config

    root = project_root(Path(filename).absolute())
    return api.check_buffer(text, filename, load_config([str(root)], api.known_codes())).findings


class Flake8Plugin:
    name = "dynlint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: List[str]):
        self.filename, self.lines = filename, lines

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        for f in self._findings():
            yield f.line, f.column, f"{f.code} {f.message}", type(self)

    def _findings(self) -> List[Finding]:
        """The file's findings from the project run, unless flake8 read other text than the file's: stdin
        (`flake8 -`, named by `--stdin-display-name` or not at all), an editor's unsaved buffer: then that
        text, checked as that file of its project."""
        text = "".join(self.lines)
        path = Path(self.filename)
        if self.filename not in ("-", "stdin") and path.is_file():
            try:
                same = path.read_text(encoding="utf-8") == text
            except (OSError, UnicodeError):
                same = True     # unreadable here: the project run says what is wrong with it
            if same:
                return findings_for(self.filename)
        return buffer_findings(text, "stdin.py" if self.filename in ("-", "stdin") else self.filename)
