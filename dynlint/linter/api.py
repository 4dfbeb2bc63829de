"""Programmatic entry points (used by the flake8 plugin, the tests and other front ends)."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional, Sequence

from dynlint.linter import engine
from dynlint.linter.config import Config, load_config
from dynlint.linter.files import discover


def known_codes() -> list:
    from dynlint.rules.base import all_rules
    return [r.code for r in all_rules()] + ["DYN0", "DYN9", "DYN000", "DYN001", "DYN901", "DYN902", "DYN903"]


def check(paths: Sequence[str], config: Optional[Config] = None, debug: bool = False, jobs: int = 1,
          cache: bool = False, progress=None) -> engine.Result:
    """Check files/folders like `dynlint check PATHS` (configuration from the nearest pyproject.toml).
    progress: optional `progress(stage, done, total)` callback (see dynlint/linter/progress.py)."""
    from dynlint.linter.cache import open_cache
    from dynlint.rules.base import all_rules

    config = config or load_config(paths, known_codes())
    rules = [r for r in all_rules() if config.enabled(r.code)]     # per-file ignores filter findings later
    store = open_cache(config.root, config.fingerprint(), [r.code for r in rules], config.cache_dir) if cache else None
    notices: list = []
    result = engine.run(discover(paths, config, notices), config, rules, debug=debug, jobs=jobs, cache=store,
                        progress=progress)
    result.notices = notices + (store.notices if store else [])
    return result


def check_source(source: str, filename: str = "example.py", regions: str = "auto", select=("DYN",)) -> engine.Result:
    """Check one piece of source as a single-file project (no configuration file is read)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        config = Config(root=Path(d).resolve(), regions=regions, select=tuple(select))
        return check([str(path)], config)
