"""`[tool.dynlint]` in the nearest pyproject.toml, merged with command-line flags.

Unknown keys, codes or values are errors (exit 2) that name the offender. Configuration is data only:
nothing in it is executed.
"""
from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# folders no walk enters, whatever the configuration says (version control, dynlint's own cache)
NEVER_WALKED = (".git", ".hg", ".svn", ".dynlint_cache")
# what `exclude` is until a configuration sets it (as ruff: setting `exclude` replaces these, `extend-exclude`
# adds to them); a name without `/` matches a folder of that name at any depth
DEFAULT_EXCLUDE = (".venv", "venv", "env", ".env", ".tox", ".nox", "__pycache__", "build", "dist", "node_modules",
                   "site-packages", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                   "__pypackages__")
REGION_MODES = ("auto", "explicit", "all")
KNOWN_KEYS = {"select", "ignore", "extend-select", "extend-ignore", "per-file-ignores", "exclude",
              "extend-exclude", "regions", "verify", "cache-dir", "jobs", "max-file-size", "preview", "compiled",
              "respect-gitignore", "force-exclude"}
VERIFY_KEYS = {"examples", "device", "timeout"}


class ConfigError(Exception):
    """A configuration problem the user must fix; the CLI prints it and exits 2."""


@dataclass(frozen=True)
class Config:
    root: Path
    select: Tuple[str, ...] = ("DYN",)
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    respect_gitignore: bool = True     # skip what .gitignore / .git/info/exclude ignore (ruff's respect-gitignore)
    force_exclude: bool = False        # exclude also files named explicitly (ruff's force-exclude; pre-commit)
    regions: str = "auto"
    preview: bool = False              # run the preview rules too (ruff's --preview)
    compiled: Tuple[str, ...] = ()     # entry points compiled from outside: "module.glob:qualname.glob"
    examples: Tuple[str, ...] = ("**/dynlint_examples.py",)
    device: str = "auto"
    timeout: float = 300.0
    jobs: int = 0                      # 0: all cores
    cache_dir: Optional[str] = None
    max_file_size: float = 10.0        # MiB; a larger file is one DYN000, not parsed (0: no limit)
    source: Optional[Path] = None      # the pyproject.toml it came from

    def with_(self, **kw) -> "Config":
        return replace(self, **kw)

    def enabled(self, code: str, path: str = "") -> bool:
        """ruff's precedence: the longest matching prefix between select and ignore wins."""
        ignores = self.ignore + tuple(c for pat, codes in self.per_file_ignores
                                      if path and _path_matches(path, pat) for c in codes)
        best_sel = max((len(s) for s in self.select if code.startswith(s)), default=-1)
        best_ign = max((len(s) for s in ignores if code.startswith(s)), default=-1)
        return best_sel >= 0 and best_sel > best_ign

    def fingerprint(self) -> str:
        """Stable text of everything that changes findings (cache key)."""
        return repr((self.select, self.ignore, self.per_file_ignores, self.regions, self.preview, self.compiled))


def _path_matches(path: str, pattern: str) -> bool:
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern.rstrip("/") + "/*") or \
        any(fnmatch.fnmatch(part, pattern) for part in path.split("/"))


def _toml(path: Path) -> dict:
    """Parse a TOML file; ConfigError naming it for anything wrong (a nesting deep enough to exhaust the
    parser's recursion included)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid TOML in {path}: {e}") from None
    except RecursionError:
        raise ConfigError(f"invalid TOML in {path}: nested too deeply") from None


def _owner(path: Path) -> Optional[int]:
    try:
        return os.stat(path).st_uid
    except (OSError, AttributeError):
        return None


def _trusted(path: Path, tree_owner: Optional[int]) -> bool:
    """A configuration file in a folder above the checked one is used only if it belongs to the user, to root,
    or to whoever owns the checked folder (a checkout mounted into a container), as git does with repositories:
    another user's pyproject.toml in a shared /tmp must not configure, or root, the run."""
    if not hasattr(os, "getuid"):
        return True
    return _owner(path) in (os.getuid(), 0, tree_owner)


STANDALONE = (".dynlint.toml", "dynlint.toml")    # top-level keys, as ruff.toml; before pyproject.toml in a folder


def find_config(start: Path) -> Optional[Path]:
    """The nearest .dynlint.toml, dynlint.toml, or pyproject.toml with a [tool] table above `start`, climbing from
    the path as given (a symbolic link's folder, not its target's) up to the repository root (.git)."""
    start = Path(os.path.abspath(start))
    first = start if start.is_dir() else start.parent
    tree_owner = _owner(first)
    for d in (first, *first.parents):
        for name in STANDALONE:
            p = d / name
            if p.is_file() and (d == first or _trusted(p, tree_owner)):
                return p
        p = d / "pyproject.toml"
        if p.is_file() and (d == first or _trusted(p, tree_owner)):
            try:
                if "tool" in _toml(p):
                    return p
            except ConfigError:
                return p      # reported by load_config
        if (d / ".git").exists():
            return p if p.is_file() else None
    return None


def _common_root(paths: Sequence[str]) -> Path:
    """Without a configuration file: the working directory when every path is inside it (as ruff does),
    else the deepest folder holding them all (the paths as given: links are not followed)."""
    cwd = Path(os.path.abspath(os.curdir))
    full = [Path(os.path.abspath(p)) for p in (paths or ["."])]
    if all(p == cwd or cwd in p.parents for p in full):
        return cwd
    common = Path(os.path.commonpath([str(p) for p in full]))
    return common.parent if common.is_file() else common


def _codes(value, key: str, known: Sequence[str]) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of rule codes, got {value!r}")
    for v in value:
        if not any(k.startswith(v) for k in known) and v != "DYN":
            raise ConfigError(f"unknown rule code or prefix {v!r} in '{key}'")
    return tuple(v.strip().upper() for v in value)


def load_config(paths: Sequence[str], known_codes: Sequence[str], config_file: Optional[str] = None) -> Config:
    """Find and read the configuration: the nearest .dynlint.toml / dynlint.toml (top-level keys) or
    pyproject.toml ([tool.dynlint]) above the first path, or `config_file`."""
    if config_file:
        source: Optional[Path] = Path(config_file)
        if not source.is_file():
            raise ConfigError(f"config file not found: {config_file}")
    else:
        source = find_config(Path(paths[0] if paths else "."))
    root = source.parent if source else _common_root(paths)
    cfg = Config(root=root.resolve(), source=source)
    if not source:
        return cfg
    data = _toml(source)
    nested = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    if "dynlint" in nested or source.name == "pyproject.toml":
        return apply_table(cfg, nested.get("dynlint", {}), known_codes, where=f"[tool.dynlint] in {source}")
    return apply_table(cfg, data, known_codes, where=str(source))        # a dynlint.toml: top-level keys


def apply_table(cfg: Config, table: dict, known_codes: Sequence[str], where: str) -> Config:
    """`cfg` with the table's settings; a ConfigError names `where` they came from (a file, the command line)."""
    try:
        return _apply_table(cfg, table, known_codes)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def _apply_table(cfg: Config, table: dict, known_codes: Sequence[str]) -> Config:
    if not isinstance(table, dict):
        raise ConfigError("must be a table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    kw: Dict[str, object] = {}
    if "select" in table:
        kw["select"] = _codes(table["select"], "select", known_codes)
    if "extend-select" in table:
        kw["select"] = tuple(kw.get("select", cfg.select)) + _codes(table["extend-select"], "extend-select", known_codes)
    if "ignore" in table or "extend-ignore" in table:
        kw["ignore"] = _codes(table.get("ignore", []), "ignore", known_codes) + \
            _codes(table.get("extend-ignore", []), "extend-ignore", known_codes)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError("'per-file-ignores' must be a table of glob = [codes]")
        kw["per_file_ignores"] = tuple((k, _codes(v, f"per-file-ignores.{k}", known_codes)) for k, v in pfi.items())
    for key, attr in (("exclude", "exclude"), ("extend-exclude", "extend_exclude")):
        if key in table:
            v = table[key]
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ConfigError(f"'{key}' must be a list of glob patterns")
            kw[attr] = tuple(v)
    if "regions" in table:
        if table["regions"] not in REGION_MODES:
            raise ConfigError(f"unknown value {table['regions']!r} for 'regions' (expected one of {', '.join(REGION_MODES)})")
        kw["regions"] = table["regions"]
    if "compiled" in table:
        v = table["compiled"]
        if not isinstance(v, list) or not all(isinstance(x, str) and x.count(":") == 1 and all(x.split(":"))
                                              for x in v):
            raise ConfigError("'compiled' must be a list of \"module:function\" patterns, "
                              "e.g. [\"pkg.schedulers.*:*.step\"]")
        kw["compiled"] = tuple(v)
    for key in ("preview", "respect-gitignore", "force-exclude"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"'{key}' must be true or false")
            kw[key.replace("-", "_")] = table[key]
    if "jobs" in table:
        if not isinstance(table["jobs"], int) or table["jobs"] < 0:
            raise ConfigError("'jobs' must be a non-negative integer (0: all cores)")
        kw["jobs"] = table["jobs"]
    if "max-file-size" in table:
        v = table["max-file-size"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ConfigError("'max-file-size' must be a non-negative number of MiB (0: no limit)")
        kw["max_file_size"] = float(v)
    if "cache-dir" in table:
        v = table["cache-dir"]
        parts = Path(v).parts if isinstance(v, str) else ()
        if not parts or Path(v).is_absolute() or ".." in parts or Path(v).anchor:
            # a repository's configuration must not aim the cache (which dynlint writes) outside it
            raise ConfigError(f"'cache-dir' must be a relative path inside the project, got {v!r} "
                              f"(use --cache-dir on the command line for a folder elsewhere)")
        kw["cache_dir"] = str(cfg.root / v)
    if "verify" in table:
        v = table["verify"]
        if not isinstance(v, dict):
            raise ConfigError("'verify' must be a table")
        bad = sorted(set(v) - VERIFY_KEYS)
        if bad:
            raise ConfigError(f"unknown key {bad[0]!r} in [tool.dynlint.verify] (known: {', '.join(sorted(VERIFY_KEYS))})")
        if "examples" in v:
            ex = v["examples"]
            if isinstance(ex, str):
                ex = [ex]
            if not isinstance(ex, list) or not all(isinstance(x, str) for x in ex):
                raise ConfigError("'verify.examples' must be a list of glob patterns")
            kw["examples"] = tuple(ex)
        if "device" in v:
            if v["device"] not in ("auto", "cpu", "cuda"):
                raise ConfigError(f"unknown value {v['device']!r} for 'verify.device' (expected auto, cpu or cuda)")
            kw["device"] = v["device"]
        if "timeout" in v:
            if not isinstance(v["timeout"], (int, float)) or v["timeout"] <= 0:
                raise ConfigError("'verify.timeout' must be a positive number of seconds")
            kw["timeout"] = float(v["timeout"])
    return cfg.with_(**kw)
