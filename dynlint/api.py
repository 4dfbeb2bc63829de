"""Programmatic entry points (used by the CLI, the flake8 plugin, the tests and other front ends)."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from dynlint.analysis import regions
from dynlint.linter import engine, notebooks, sources
from dynlint.linter.cache import open_cache
from dynlint.linter.codes import ENGINE_CODES
from dynlint.linter.config import Config, ConfigError, load_config
from dynlint.linter.finding import Finding
from dynlint.linter.files import discover, relpath
from dynlint.rules import active_rules, all_rules, checked_rules, torch_release


def known_codes() -> list:
    """Every code a configuration may name: the rules', dynlint's own, and their families' prefixes."""
    return [r.code for r in all_rules()] + list(ENGINE_CODES) + ["DYN0", "DYN9"]


def check(paths: Sequence[str], config: Optional[Config] = None, debug: bool = False, jobs: int = 1,
          cache: bool = False, progress=None, buffers=None) -> engine.Result:
    """Check files/folders like `dynlint check PATHS` (configuration from the nearest pyproject.toml).
    progress: optional `progress(stage, done, total)` callback (see dynlint/report/progress.py).
    buffers: project-relative path -> text to check instead of that file's (see check_buffer)."""
    config = torch_release.resolved(config or load_config(paths, known_codes()))
    rules = checked_rules(config)     # per-file ignores (and rules run only for the frame pass) filter later
    store = open_cache(config.root, config.fingerprint(), [r.code for r in rules], config.cache_dir) \
        if cache and cache_allowed(config, paths) else None
    notices: list = []
    files = list(discover(paths, config, notices)) if paths else []      # none: the buffers alone
    scope = _project_scope(paths, config, files)
    if scope is not None:
        files += scope[1]
    result = engine.run(_with_buffers(files, config, buffers), config, rules, analysis=regions, debug=debug,
                        jobs=jobs, cache=store, progress=progress, buffers=buffers)
    if scope is not None:
        named = scope[0]
        result.findings = [f for f in result.findings if f.path in named]
        result.errors = [e for e in result.errors if e.path in named]
        result.files = [rel for rel in result.files if rel in named]
    result.notices = notices + (store.notices if store else [])
    result.findings = notebooks.in_cells(result.findings, lambda rel: _notebook_view(config, rel, buffers))
    return result


def release_change(paths: Sequence[str], config: Config, before: str, jobs: int = 1, cache: bool = False,
                   progress=None) -> Tuple[engine.Result, List[Finding], List[Finding]]:
    """What changes for the project between the torch release `before` and the one `config` predicts for: the
    check's result on that release, the findings that do not hold on it any more, and those that are new."""
    config = torch_release.resolved(config)
    if before not in torch_release.RELEASES or config.torch_version not in torch_release.RELEASES:
        raise ConfigError(f"compare two releases dynlint has measured ({', '.join(torch_release.RELEASES)}), "
                          f"not {before!r} and {config.torch_version!r}")
    result = check(paths, config.with_(torch_version=torch_release.AS_FOUND), jobs=jobs, cache=cache,
                   progress=progress)
    rules = checked_rules(config)

    def on(release):
        return {_place(f): f for f in engine.on_release(result.findings, rules, release, result.dynamo_settings)}
    old, new = on(before), on(config.torch_version)
    result.findings = sorted(new.values(), key=lambda f: f.sort_key)
    return (result, sorted((old[k] for k in old.keys() - new.keys()), key=lambda f: f.sort_key),
            sorted((new[k] for k in new.keys() - old.keys()), key=lambda f: f.sort_key))


def _place(f: Finding) -> tuple:
    return (f.path, f.cell, f.line, f.column, f.code, f.pattern)


def _project_scope(paths: Sequence[str], config: Config, files: list):
    """Files or folders named inside a project are checked with the whole project in view, as an editor buffer
    or flake8 checks a file: what is compiled, and which callers reach a function, is the project's to say,
    whichever files are named (`dynlint check pkg/layers.py` reports what the editor shows there). The named
    files' project-relative paths and the project's other files; None when the paths are the project (or no
    configuration file makes one)."""
    if config.source is None or not paths:
        return None
    root = config.root.resolve()
    if any(Path(p).resolve() == root or root not in Path(p).resolve().parents for p in paths):
        return None
    named = {rel for _, rel in files}
    others = [(p, rel) for p, rel in discover([str(config.root)], config, []) if rel not in named]
    return named, others


def cache_allowed(config: Config, paths: Sequence[str]) -> bool:
    """A cache is written only in a project: at its configuration file, in the working folder, or in a folder
    the user named. Paths with no project in common are rooted at their deepest common folder (up to the file
    system's root), a place nobody chose: no `.dynlint_cache` is left there."""
    if config.source is not None or config.cache_dir:
        return True
    root = config.root.resolve()
    return root == Path.cwd().resolve() or any(Path(p).resolve() == root for p in paths)


def _notebook_view(config: Config, rel: str, buffers: Optional[dict] = None) -> Optional[str]:
    """The module dynlint checks for a notebook of the project (None when it cannot be read as one)."""
    try:
        data = buffers[rel] if buffers and rel in buffers else \
            sources.read_bytes(config.root / rel, round(config.max_file_size * 2 ** 20) or None)
        return notebooks.view(data).text
    except (OSError, ValueError):
        return None


def _with_buffers(files: list, config: Config, buffers: Optional[dict]) -> list:
    """The files to check, with the buffered ones (which need not exist on disk) in place of theirs."""
    if not buffers:
        return files
    return [(p, r) for p, r in files if r not in buffers] + [(config.root / r, r) for r in buffers]


def check_buffer(text, filename: str, config: Optional[Config] = None, debug: bool = False, jobs: int = 1,
                 cache: bool = False, progress=None) -> engine.Result:
    """Check `text` as if it were the file `filename` of its project (`dynlint check - --stdin-filename`, an
    editor's unsaved buffer): the whole project stays in view, so calls between files are followed, and the
    findings are those of that file. `text`: str, or the bytes as read (their encoding declared as in a file)."""
    config = config or load_config([filename], known_codes())
    rel = relpath(Path(filename).absolute(), config.root)
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    # in a project (a configuration file makes one), the project is in view; outside any, the buffer alone: a
    # file opened from a downloads folder or a home directory does not read (or cache) everything beside it
    in_project = config.source is not None
    result = check([str(config.root)] if in_project else [], config, debug, jobs, cache and in_project, progress,
                   buffers={rel: data})
    result.findings = [f for f in result.findings if f.path == rel]
    result.errors = [e for e in result.errors if e.path == rel]
    result.files = [rel]
    return result


class Session:
    """Repeated checks of one project, as an editor makes them: its configuration, file list and cache are kept
    in memory between checks (a check of the project with a changed buffer then costs what the edit touches).
    `refresh()` after files were created or deleted; a new Session after its configuration file changed."""

    def __init__(self, path: str):
        self.config = torch_release.resolved(load_config([path], known_codes()))
        self.rules = checked_rules(self.config)
        # outside any project (no configuration file above it) an editor's file is checked alone, uncached
        self.store = open_cache(self.config.root, self.config.fingerprint(), [r.code for r in self.rules],
                                self.config.cache_dir) if self.config.source is not None else None
        self._files: Optional[list] = None

    def refresh(self) -> None:
        self._files = None

    def check(self, buffers: Optional[dict] = None, focus: Optional[set] = None) -> engine.Result:
        """Check the whole project, `buffers` (project-relative path -> bytes) in place of those files; `focus`:
        the files whose findings are wanted now, the others keeping their cached ones (`engine.run`)."""
        if self._files is None:
            self._notices: list = []
            self._files = list(discover([str(self.config.root)], self.config, self._notices)) \
                if self.config.source is not None else []                      # kept: read again
        result = engine.run(_with_buffers(self._files, self.config, buffers), self.config, self.rules,
                            analysis=regions, cache=self.store, buffers=buffers, focus=focus)
        result.notices = self._notices + (self.store.notices if self.store else [])
        return result


def fix(paths: Sequence[str], config: Config, unsafe: bool = False, debug: bool = False, jobs: int = 1,
        cache: bool = False, progress=None):
    """Check with the fixes applied in memory, in passes (linter/fixer.py); nothing is written. A FixOutcome."""
    from dynlint.linter import fixer  # only for --fix/--diff: a pre-commit check starts 5 ms sooner without it
    config = torch_release.resolved(config)
    rules = active_rules(config)
    # a cache of its own: findings cached by a dynlint without fixes would carry none
    store = open_cache(config.root, config.fingerprint() + "|fix", [r.code for r in rules], config.cache_dir) \
        if cache and cache_allowed(config, paths) else None
    notices: list = []
    outcome = fixer.fix_files(discover(paths, config, notices), config, rules, analysis=regions, unsafe=unsafe,
                              debug=debug, jobs=jobs, cache=store, progress=progress)
    outcome.result.notices = notices + (store.notices if store else [])
    outcome.result.findings = notebooks.in_cells(outcome.result.findings, lambda rel: outcome.after.get(rel)
                                                 or _notebook_view(config, rel))
    return outcome


def check_source(source: str, filename: str = "example.py", regions: str = "auto", select=("DYN",),
                 preview: bool = False, torch_version: str = "") -> engine.Result:
    """Check one piece of source as a single-file project (no configuration file is read); `preview`: the preview
    rules too; `torch_version`: the release to predict for ("2.15", "all"; default: the installed torch's)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        config = Config(root=Path(d).resolve(), regions=regions, select=tuple(select), preview=preview,
                        torch_version=torch_version)
        return check([str(path)], config)


def fix_source(source: str, unsafe: bool = False, filename: str = "example.py", select=("DYN",),
               preview: bool = False) -> str:
    """The fixed text of one piece of source, checked as a single-file project (the fix examples' tests)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / filename
        path.write_text(source, encoding="utf-8")
        config = Config(root=Path(d).resolve(), select=tuple(select), preview=preview)
        return fix([str(path)], config, unsafe=unsafe).after.get(filename, source)
