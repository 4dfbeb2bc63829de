"""`[tool.dynlint]` in the nearest pyproject.toml, merged with command-line flags.

Unknown keys, codes or values are errors (exit 2) that name the offender. Configuration is data only:
nothing in it is executed.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
import stat
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

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
# every choice list and default list of an option, spelled here only
REGION_MODES = ("auto", "explicit", "all")
DEVICES = ("auto", "cpu", "cuda")
DEFAULT_EXAMPLES = ("**/dynlint_examples.py",)
COMMAND_LINE = "command line"       # the origin of a setting a flag gave
# the sections of `dynlint check --help` that hold options' flags
SELECTION, VERIFY, PERFORMANCE = "rule selection", "verify (runs your code; needs torch)", "performance"


class ConfigError(Exception):
    """A configuration problem the user must fix; the CLI prints it and exits 2."""


@dataclass(frozen=True)
class Config:
    """The resolved settings: each one's default is here; its TOML key, flags and help are in OPTIONS below."""
    root: Path
    select: Tuple[str, ...] = ("DYN",)
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    regions: str = "auto"
    preview: bool = False
    compiled: Tuple[str, ...] = ()
    ignore_noqa: bool = False
    fixable: Tuple[str, ...] = ("DYN",)
    unfixable: Tuple[str, ...] = ()
    examples: Tuple[str, ...] = DEFAULT_EXAMPLES
    device: str = "auto"
    timeout: float = 300.0
    timing_processes: int = 2
    cluster: str = "local"             # where --verify runs: "local" (this host), "ray", "ray://HOST:PORT"
    jobs: int = 0
    cache_dir: Optional[str] = None
    max_file_size: float = 10.0
    # the torch release to predict for ("2.15", or "all"); "": every finding as found, until the rules resolve
    # it (rules/torch_release.resolved: the installed torch's, else the newest measured)
    torch_version: str = ""
    source: Optional[Path] = None      # the configuration file it came from
    # field -> where its value came from (COMMAND_LINE or the configuration file); a field not named: the default
    origins: Tuple[Tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    def with_(self, **kw) -> "Config":
        return replace(self, **kw)

    def enabled(self, code: str, path: str = "") -> bool:
        """ruff's precedence: the longest matching prefix between select and ignore wins."""
        ignores = self.ignore + tuple(c for pat, codes in self.per_file_ignores
                                      if path and _path_matches(path, pat) for c in codes)
        best_sel = max((len(s) for s in self.select if code.startswith(s)), default=-1)
        best_ign = max((len(s) for s in ignores if code.startswith(s)), default=-1)
        return best_sel >= 0 and best_sel > best_ign

    def can_fix(self, code: str) -> bool:
        """Whether --fix may apply a fix of rule `code`: ruff's precedence between `fixable` and `unfixable`."""
        best_fix = max((len(s) for s in self.fixable if code.startswith(s)), default=-1)
        best_not = max((len(s) for s in self.unfixable if code.startswith(s)), default=-1)
        return best_fix >= 0 and best_fix > best_not

    def fingerprint(self) -> str:
        """Stable text of everything that changes findings (cache key)."""
        return repr((self.select, self.ignore, self.per_file_ignores, self.regions, self.preview, self.compiled,
                     self.ignore_noqa))

    def origin(self, name: str) -> str:
        """Where the setting `name` (a field) came from: COMMAND_LINE, the configuration file, or "default"."""
        return dict(self.origins).get(name, "default")


def _path_matches(path: str, pattern: str) -> bool:
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern.rstrip("/") + "/*") or \
        any(fnmatch.fnmatch(part, pattern) for part in path.split("/"))


MAX_CONFIG_BYTES = 1 << 20


def _toml(path: Path, named: bool = False) -> dict:
    """Parse a TOML file; ConfigError naming it for anything wrong (a nesting deep enough to exhaust the
    parser's recursion included). A configuration file found in the project must be a regular file of at most
    1 MiB, not a symbolic link out of its repository (`pyproject.toml -> ~/.ssh/config`, `-> /dev/zero`); one the
    user `named` (`--config`) is read where it leads."""
    try:
        if not named and not _contained(path):
            raise ConfigError(f"{path} is a symbolic link out of the repository: dynlint does not read through it")
        with open(path, "rb") as f:
            if not named and (not stat.S_ISREG(os.fstat(f.fileno()).st_mode)):
                raise ConfigError(f"{path} is not a regular file")
            data = f.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path} is larger than {MAX_CONFIG_BYTES >> 20} MiB: not a configuration file")
        return tomllib.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid TOML in {path}: {e}") from None
    except RecursionError:
        raise ConfigError(f"invalid TOML in {path}: nested too deeply") from None


def _contained(path: Path) -> bool:
    """`path` resolves inside its repository (the nearest folder above it with a `.git`), or inside its own folder
    outside any: not a symbolic link out of the checkout (a monorepo's packages may share one file)."""
    folder = Path(os.path.abspath(path.parent))
    base = next((d for d in (folder, *folder.parents) if (d / ".git").exists()), folder)
    return os.path.realpath(path).startswith(os.path.realpath(base).rstrip(os.sep) + os.sep)


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
        # a repository root ends the climb, unless another user made it (an empty `.git` beside their
        # pyproject.toml in a shared folder would move the root there and apply their configuration)
        if (d / ".git").exists() and (d == first or _trusted(d / ".git", tree_owner)):
            return p if p.is_file() and (d == first or _trusted(p, tree_owner)) else None
    return None


def _common_root(paths: Sequence[str]) -> Path:
    """Without a configuration file: the working directory when every path is inside it (as ruff does),
    else the deepest folder holding them all (the paths as given: links are not followed)."""
    cwd = Path(os.path.abspath(os.curdir))
    full = [Path(os.path.abspath(p)) for p in (paths or ["."])]
    if all(p == cwd or cwd in p.parents for p in full):
        return cwd
    common = Path(os.path.commonpath([str(p) for p in full]))
    return common if common.is_dir() else common.parent     # a file, or one not saved yet (an editor's buffer)


def load_config(paths: Sequence[str], known_codes: Sequence[str], config_file: Optional[str] = None,
                isolated: bool = False) -> Config:
    """Find and read the configuration: the nearest .dynlint.toml / dynlint.toml (top-level keys) or
    pyproject.toml ([tool.dynlint]) above the first path, or `config_file`. `isolated` (ruff's --isolated):
    the file still marks the project's root, but none of its settings is read."""
    if config_file:
        source: Optional[Path] = Path(config_file)
        if not source.is_file():
            raise ConfigError(f"config file not found: {config_file}")
    else:
        source = find_config(Path(paths[0] if paths else "."))
    root = source.parent if source else _common_root(paths)
    cfg = Config(root=root.resolve(), source=None if isolated else source)
    if not source or isolated:
        return cfg
    data = _toml(source, named=bool(config_file))
    nested = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    if "dynlint" in nested or source.name == "pyproject.toml":
        return apply_table(cfg, nested.get("dynlint", {}), known_codes, where=f"[tool.dynlint] in {source}")
    return apply_table(cfg, data, known_codes, where=str(source))        # a dynlint.toml: top-level keys


# ---- the options: each declared once, here --------------------------------------------------------------
@dataclass(frozen=True)
class Reading:
    """What reading one value needs besides the value: its key, the project root, the codes a configuration may
    name, and whether it came from the command line (the user's own choice) or from a file of the project."""
    key: str
    root: Path
    known: Sequence[str]
    command_line: bool


@dataclass(frozen=True)
class Option:
    """One setting as the user writes it: its TOML key ("verify.KEY": in [tool.dynlint.verify]), the Config
    field it sets (whose default is the option's), how a value is read and checked (a ConfigError says what is
    wrong) or the choices it takes, its help (`dynlint check --help` and the README's table), and the flags of
    `dynlint check` that set it: `flag_type` reads a flag's text, a flag without a value sets `flag_sets`."""
    key: str
    field: str
    help: str
    read: Optional[Callable[[object, Reading], object]] = None
    choices: Tuple[str, ...] = ()
    extends: bool = False                 # adds to the field's value (as set above it in the table, else as it was)
    flags: Tuple[str, ...] = ()
    metavar: Optional[str] = None
    flag_type: Optional[Callable[[str], object]] = None
    flag_sets: object = None
    flag_help: str = ""                   # the flag's help where `help` does not fit it (a `--no-` flag)
    group: str = SELECTION                # its section of `dynlint check --help` (SELECTION, VERIFY, PERFORMANCE)

    @property
    def default(self):
        """The field's default; none for an option that adds to another's (`extend-select`)."""
        shared = any(o.field == self.field and not o.extends for o in OPTIONS)
        return None if self.extends and shared else _DEFAULTS[self.field]

    def parse(self, value, reading: Reading):
        if not self.choices:
            return self.read(value, reading)
        if value not in self.choices:
            raise ConfigError(f"unknown value {value!r} for '{self.key}' (expected one of {', '.join(self.choices)})")
        return value


def _codes(value, key: str, known: Sequence[str]) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of rule codes, got {value!r}")
    value = ["DYN" if v.strip().upper() == "ALL" else v for v in value]     # ruff's `ALL`: every rule
    for v in value:
        if not any(k.startswith(v) for k in known) and v != "DYN":
            raise ConfigError(f"unknown rule code or prefix {v!r} in '{key}'")
    return tuple(v.strip().upper() for v in value)


def _rule_codes(value, r: Reading) -> Tuple[str, ...]:
    return _codes(value, r.key, r.known)


def _per_file_ignores(value, r: Reading):
    if not isinstance(value, dict):
        raise ConfigError("'per-file-ignores' must be a table of glob = [codes]")
    return tuple((k, _codes(v, f"per-file-ignores.{k}", r.known)) for k, v in value.items())


def _globs(value, r: Reading) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ConfigError(f"'{r.key}' must be a list of glob patterns")
    return tuple(value)


def _glob_or_globs(value, r: Reading) -> Tuple[str, ...]:
    return _globs([value] if isinstance(value, str) else value, r)


def _entry_points(value, r: Reading) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) and x.count(":") == 1 and all(x.split(":"))
                                              for x in value):
        raise ConfigError("'compiled' must be a list of \"module:function\" patterns, "
                          "e.g. [\"pkg.schedulers.*:*.step\"]")
    return tuple(value)


def _bool(value, r: Reading) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"'{r.key}' must be true or false")
    return value


def _workers(value, r: Reading) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError("'jobs' must be a non-negative integer (0: all cores)")
    return value


def _positive(value, r: Reading) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"'{r.key}' must be a positive integer")
    return value


def _mebibytes(value, r: Reading) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError("'max-file-size' must be a non-negative number of MiB (0: no limit)")
    cap = _DEFAULTS["max_file_size"]
    if not r.command_line and not 0 < value <= cap:
        # the cap bounds what a repository's bytes can cost (a 12 MB file from 18 KiB of git pack took 4.9 GB)
        raise ConfigError(f"'max-file-size' in a project's configuration may lower the cap, not lift it: between 0 "
                          f"and {cap:g} MiB, got {value!r} (--max-file-size on the command line may raise it)")
    return float(value)


def _release(value, r: Reading) -> str:
    try:
        return flag_release(value if isinstance(value, str) else "")
    except ConfigError:
        raise ConfigError(f"'{r.key}' must be a torch release such as \"2.15\", or \"all\"; got {value!r}") from None


def _seconds(value, r: Reading) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"'{r.key}' must be a positive number of seconds")
    return float(value)


def _cache_folder(value, r: Reading) -> str:
    if r.command_line:        # the user's own choice: any folder, as given
        return value
    parts = Path(value).parts if isinstance(value, str) else ()
    if not parts or Path(value).is_absolute() or ".." in parts or Path(value).anchor:
        # a repository's configuration must not aim the cache (which dynlint writes) outside it
        raise ConfigError(f"'cache-dir' must be a relative path inside the project, got {value!r} "
                          f"(use --cache-dir on the command line for a folder elsewhere)")
    return str(r.root / value)


# how the flags' text reads (a ConfigError is a usage error, reported by argparse with the flag's name)
def flag_codes(text: str) -> List[str]:
    codes = [c.strip().upper() for c in text.split(",") if c.strip()]
    if not codes:
        raise ConfigError("no codes given (a comma-separated list of codes or prefixes, e.g. DYN1)")
    return codes


def flag_globs(text: str) -> List[str]:
    globs = [g.strip() for g in text.split(",") if g.strip()]
    if not globs:
        raise ConfigError("no patterns given (a comma-separated list of globs, e.g. 'gen/*,*_pb2.py')")
    return globs


def flag_workers(text: str) -> int:
    n = int(text) if text.strip().lstrip("-").isdigit() else 0
    if n < 1:
        raise ConfigError(f"must be a positive number of worker processes, got {text!r}")
    return n


def flag_seconds(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise ConfigError(f"expected a positive number of seconds, got {text!r}")
    return number


def flag_cluster(text: str) -> str:
    """Where --verify runs the examples: `local` (this host's GPUs or cores), `ray` (the Ray cluster the
    environment names: RAY_ADDRESS, else the one started on this host) or `ray://HOST:PORT` (Ray Client)."""
    text = text.strip()
    if text not in ("local", "ray") and not re.fullmatch(r"ray://[\w.\-\[\]:]+:\d+", text):
        raise ConfigError(f"expected local, ray or ray://HOST:PORT, got {text!r}")
    return text


def _cluster(value, r: Reading) -> str:
    try:
        return flag_cluster(value if isinstance(value, str) else "")
    except ConfigError as e:
        raise ConfigError(f"'{r.key}': {e}") from None


def flag_release(text: str) -> str:
    """A torch release as "X.Y" ("2.15"; "2.15.0" and "2.15.0+cu132" name it too), or "all"."""
    text = text.strip().lower()
    m = re.fullmatch(r"(\d+)\.(\d+)(\.\d+)?(\+[\w.]+)?", text)
    if text != "all" and not m:
        raise ConfigError(f"expected a torch release such as 2.15, got {text!r}")
    return "all" if text == "all" else f"{m.group(1)}.{m.group(2)}"


_CODES = dict(metavar="CODE,...", flag_type=flag_codes)
_GLOBS = dict(metavar="GLOB,...", flag_type=flag_globs)

# In the order tables are read (an `extend-` key after the key it extends).
OPTIONS: Tuple[Option, ...] = (
    Option("select", "select", "rules to run, by code or prefix (DYN1, DYN201)", _rule_codes,
           flags=("--select",), **_CODES),
    Option("extend-select", "select", "rules to run in addition to `select`", _rule_codes, extends=True,
           flags=("--extend-select",), **_CODES),
    Option("ignore", "ignore", "rules not to run, by code or prefix; between `select` and `ignore`, the longest "
           "matching prefix wins", _rule_codes, flags=("--ignore",), **_CODES),
    Option("extend-ignore", "ignore", "rules not to run in addition to `ignore`", _rule_codes, extends=True,
           flags=("--extend-ignore",), **_CODES),
    Option("fixable", "fixable", "rules whose fixes --fix may apply, by code or prefix (`ALL`: every rule)",
           _rule_codes, flags=("--fixable",), **_CODES),
    Option("extend-fixable", "fixable", "rules whose fixes --fix may apply, in addition to `fixable`", _rule_codes,
           extends=True, flags=("--extend-fixable",), **_CODES),
    Option("unfixable", "unfixable", "rules whose fixes --fix never applies (their findings are still reported); "
           "between `fixable` and `unfixable`, the longest matching prefix wins", _rule_codes,
           flags=("--unfixable",), **_CODES),
    Option("per-file-ignores", "per_file_ignores", "rules not to run on some files: `{ \"glob\" = [codes] }`",
           _per_file_ignores),
    Option("extend-per-file-ignores", "per_file_ignores", "rules not to run on some files, in addition to "
           "`per-file-ignores`", _per_file_ignores, extends=True),
    Option("exclude", "exclude", "files and folders to skip; setting it replaces the default, which skips "
           "virtual environments, build output and caches (a name without `/` matches a folder at any depth)",
           _globs, flags=("--exclude",), **_GLOBS),
    Option("extend-exclude", "extend_exclude", "files and folders to skip in addition to `exclude`", _globs,
           extends=True, flags=("--extend-exclude",), **_GLOBS),
    Option("regions", "regions", "which code counts as compiled: `auto`, functions decorated with or passed to "
           "torch.compile, every nn.Module.forward, and what they call; `explicit`, only what is compiled "
           "explicitly, and what it calls; `all`, every function", choices=REGION_MODES, flags=("--regions",)),
    Option("compiled", "compiled", "entry points your users compile, as \"module:function\" patterns "
           "(`pkg.schedulers.*:*.step`)", _entry_points),
    Option("preview", "preview", "run the preview rules too: those below 0.9 precision on real code (see "
           "`dynlint rules`)", _bool, flags=("--preview",), flag_sets=True),
    Option("ignore-noqa", "ignore_noqa", "report what `# noqa` and the other suppression comments silence (as "
           "ruff's --ignore-noqa)", _bool, flags=("--ignore-noqa",), flag_sets=True),
    Option("torch-version", "torch_version", "the torch release to predict for (`2.15`), or `all` (what "
           "happens on any release dynlint has measured); default: the installed torch's, read from its package "
           "metadata without importing it, else the newest release measured", _release, flags=("--torch-version",),
           metavar="X.Y", flag_type=flag_release),
    Option("respect-gitignore", "respect_gitignore", "skip what .gitignore and .git/info/exclude ignore", _bool,
           flags=("--no-respect-gitignore",), flag_sets=False,
           flag_help="check files that .gitignore and .git/info/exclude ignore"),
    Option("force-exclude", "force_exclude", "apply the excludes to files named on the command line too (the "
           "pre-commit hook names every file)", _bool, flags=("--force-exclude",), flag_sets=True),
    Option("jobs", "jobs", "worker processes; 0: one per core (a number above the cores is capped at them)",
           _workers, flags=("--jobs", "-j"), metavar="N", flag_type=flag_workers, group=PERFORMANCE,
           flag_help="worker processes (default: one per core)"),
    Option("max-file-size", "max_file_size", "larger files are reported (DYN000), not parsed; in MiB (a project's "
           "configuration may only lower it; the command line may lift it, 0: no limit)",
           _mebibytes, flags=("--max-file-size",), metavar="MIB", flag_type=float, group=PERFORMANCE),
    Option("cache-dir", "cache_dir", "where to keep the cache (default: the project's `.dynlint_cache`); in a "
           "configuration file, a folder inside the project", _cache_folder, flags=("--cache-dir",),
           metavar="DIR", group=PERFORMANCE),
    Option("verify.examples", "examples", "the files whose @dynlint.example providers --verify runs (glob "
           "patterns)", _glob_or_globs),
    Option("verify.device", "device", "where --verify runs the examples; auto: on a GPU when there is one",
           choices=DEVICES, flags=("--device",), group=VERIFY),
    Option("verify.timeout", "timeout", "time limit per example of --verify, in seconds", _seconds,
           flags=("--verify-timeout",), metavar="SECONDS", flag_type=flag_seconds, group=VERIFY),
    Option("verify.timing-processes", "timing_processes", "fresh worker processes each example's speedup is timed "
           "in by --verify; its interval spans theirs (1: one process's own, which can be narrower than the spread "
           "between processes)", _positive, flags=("--timing-processes",), metavar="N", flag_type=flag_workers,
           group=VERIFY),
    Option("verify.cluster", "cluster", "where --verify runs the examples: `local`, this host (one worker per GPU); "
           "`ray`, the Ray cluster RAY_ADDRESS names or the one started on this host; `ray://HOST:PORT`, a Ray "
           "cluster through Ray Client (each example a Ray task on one GPU, or one CPU)", _cluster,
           flags=("--cluster",), metavar="CLUSTER", flag_type=flag_cluster, group=VERIFY),
)
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Config)}


def apply_table(cfg: Config, table: dict, known_codes: Sequence[str], where: str) -> Config:
    """`cfg` with the settings of a configuration file's table; a ConfigError names `where` they came from."""
    try:
        return _apply(cfg, _flat(table), known_codes, origin=str(cfg.source or where), command_line=False)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def inline_setting(text: str) -> Optional[dict]:
    """`--config 'KEY = VALUE'` (ruff's form): the TOML table the text makes, or None when it is not one
    (then it names a configuration file)."""
    if "=" not in text:
        return None
    try:
        table = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    return table or None


def apply_inline(cfg: Config, table: dict, known_codes: Sequence[str]) -> Config:
    """`cfg` with a `--config 'KEY = VALUE'` setting on top: a setting of the command line."""
    try:
        return _apply(cfg, _flat(table), known_codes, origin=COMMAND_LINE, command_line=True)
    except ConfigError as e:
        raise ConfigError(f"--config: {e}") from None


def apply_flags(cfg: Config, values: Dict[str, object], known_codes: Sequence[str]) -> Config:
    """`cfg` with the settings the command line's flags gave (`values`: option key -> the flag's value)."""
    try:
        return _apply(cfg, values, known_codes, origin=COMMAND_LINE, command_line=True)
    except ConfigError as e:
        raise ConfigError(f"the command line: {e}") from None


def _flat(table: dict) -> Dict[str, object]:
    """A table's values by option key ("verify.device" for `device` in its verify table); unknown keys are errors."""
    if not isinstance(table, dict):
        raise ConfigError("must be a table")
    known = sorted({o.key.split(".")[0] for o in OPTIONS})
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} (known: {', '.join(known)})")
    subtables = {o.key.split(".")[0] for o in OPTIONS if "." in o.key}
    flat = {k: v for k, v in table.items() if k not in subtables}
    for name in sorted(subtables & set(table)):
        sub = table[name]
        if not isinstance(sub, dict):
            raise ConfigError(f"'{name}' must be a table")
        inner = sorted(o.key.split(".", 1)[1] for o in OPTIONS if o.key.startswith(name + "."))
        bad = sorted(set(sub) - set(inner))
        if bad:
            raise ConfigError(f"unknown key {bad[0]!r} in [tool.dynlint.{name}] (known: {', '.join(inner)})")
        flat.update((f"{name}.{k}", v) for k, v in sub.items())
    return flat


def _apply(cfg: Config, values: Dict[str, object], known_codes: Sequence[str], origin: str,
           command_line: bool) -> Config:
    kw: Dict[str, object] = {}
    for option in OPTIONS:
        if option.key in values:
            value = option.parse(values[option.key], Reading(option.key, cfg.root, known_codes, command_line))
            kw[option.field] = tuple(kw.get(option.field, getattr(cfg, option.field))) + value \
                if option.extends else value
    origins = {**dict(cfg.origins), **dict.fromkeys(kw, origin)}
    return cfg.with_(**kw, origins=tuple(origins.items()))


# ---- what the options say to a reader -------------------------------------------------------------------
def settings(cfg: Config) -> List[Tuple[str, object, str]]:
    """(key, value, where it came from) of every setting, in the order of Config's fields (`--show-settings`)."""
    keys = {o.field: o.key for o in reversed(OPTIONS)}         # a field's first option names it
    return [(keys[f.name], getattr(cfg, f.name), cfg.origin(f.name)) for f in dataclasses.fields(cfg)
            if f.name in keys]


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


README_MARKS = ("<!-- options: generated from OPTIONS in dynlint/linter/config.py by "
                "`python -m dynlint.linter.config README.md`; do not edit -->", "<!-- /options -->")


def options_markdown() -> str:
    """The README's table of the options (tests/test_options.py keeps the README's copy equal to it)."""
    rows = ["| key | flag | default | what it sets |", "|---|---|---|---|"]
    for o in OPTIONS:
        value = "" if o.flag_sets is not None else " " + (o.metavar or "{" + ",".join(o.choices) + "}")
        flags = ", ".join(f"`{flag}{value}`" for flag in o.flags)
        default = _toml_value(o.default) if o.default not in (None, ()) else ""
        rows.append(f"| `{o.key}` | {flags} | {f'`{default}`' if default else ''} | {o.help} |")
    return "\n".join(rows) + "\n"


def with_options_table(text: str) -> str:
    """`text` (the README) with the table between README_MARKS rendered afresh."""
    start, end = text.index(README_MARKS[0]) + len(README_MARKS[0]), text.index(README_MARKS[1])
    return text[:start] + "\n" + options_markdown() + text[end:]


if __name__ == "__main__":
    readme = Path(sys.argv[1])
    readme.write_text(with_options_table(readme.read_text(encoding="utf-8")), encoding="utf-8")
