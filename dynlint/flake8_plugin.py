"""flake8 plugin (entry point `DYN` under `flake8.extension`): the CLI's findings, reported by flake8.

flake8 checks one file at a time, but whether a function is compiled can depend on other files (a helper
in utils.py is traced because model.py's compiled forward calls it). So the first file of a project that a
flake8 process sees runs dynlint over the whole project (its root found as the CLI finds it), and every file
then reports its own findings from that run. The run uses the project's cache, and flake8's worker processes
take turns on it (linter/cache.py `held`): the first works the project out, the others then read it warm.
Under a selection that leaves out every DYN code (`--select E`, `--extend-ignore DYN`), nothing is run.
flake8 adds 1 to the column a plugin yields; Finding.column is 0-based, so it passes as is. flake8 applies
`--select`, `--extend-ignore` and `# noqa` on top; dynlint's own configuration and suppressions apply too.
Text flake8 reads from stdin (an editor's buffer, `--stdin-display-name` naming the file) is checked as that
file of its project. flake8 imports every plugin at each start, so dynlint's modules are imported inside the
functions, when a file is checked (not to dodge a cycle).
"""
from __future__ import annotations

import ast
import functools
import os
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

from dynlint.linter.finding import Finding
from dynlint.linter.version import __version__
from dynlint.report.display import printable

# project root -> (files dynlint checked, findings by project-relative path); once per flake8 process
_PROJECTS: Dict[Path, Tuple[Set[str], Dict[str, List[Finding]]]] = {}
ALL_CODES = tuple(f"DYN{n:03d}" for n in range(1000))     # every code dynlint could emit, for flake8's selection


def project_config(path: Path):
    """The configuration, and so the project root, that `dynlint check PATH` would use (it depends on the
    file's folder and the working folder only: read once per folder)."""
    return _folder_config(os.path.abspath(os.path.dirname(path) or "."), os.getcwd())


@functools.lru_cache(maxsize=None)
def _folder_config(folder: str, cwd: str):
    from dynlint import api
    from dynlint.linter.config import load_config

    return load_config([folder], api.known_codes())


def _check_project(config) -> Tuple[Set[str], Dict[str, List[Finding]]]:
    from dynlint import api
    from dynlint.linter.cache import held

    if config.root not in _PROJECTS:
        with held(config.root, config.cache_dir):
            result = api.check([str(config.root)], config, cache=True)
        by_path: Dict[str, List[Finding]] = {}
        for f in result.findings:
            by_path.setdefault(f.path, []).append(f)
        _PROJECTS[config.root] = (set(result.files), by_path)
    return _PROJECTS[config.root]


def findings_for(filename: str) -> List[Finding]:
    from dynlint import api
    from dynlint.linter.files import relpath

    config = project_config(Path(filename))
    rel = relpath(Path(filename), config.root)
    files, by_path = _check_project(config)
    if rel in files:
        return by_path.get(rel, [])
    # flake8 was given a file the project walk skips (e.g. git-ignored): check it on its own
    return [f for f in api.check([filename], config).findings if f.path == rel]


def buffer_findings(text: str, filename: str) -> List[Finding]:
    from dynlint import api
    from dynlint.linter.cache import held

    config = project_config(Path(filename).absolute())
    with held(config.root, config.cache_dir):
        return api.check_buffer(text, filename, config, cache=True).findings


class Flake8Plugin:
    name = "dynlint"
    version = __version__

    selected = True          # some DYN code is selected (flake8's options say so in parse_options)

    def __init__(self, tree: ast.AST, filename: str, lines: List[str]):
        self.filename, self.lines = filename, lines

    @classmethod
    def parse_options(cls, options) -> None:
        """flake8 calls this with its options, in each process that checks files."""
        from flake8.style_guide import Decision, DecisionEngine

        decide = DecisionEngine(options)
        cls.selected = any(decide.decision_for(code) is Decision.Selected for code in ALL_CODES)

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        if not self.selected:
            return
        for f in self._findings():
            yield f.line, f.column, f"{f.code} {printable(f.message)}", type(self)

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
