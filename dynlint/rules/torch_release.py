"""The torch release a check predicts for, and what a rule's finding does on it (the measured table in
rules/releases.py; `python bench/releases.py --write` regenerates it from real releases).

Which release: the `torch-version` setting (`--torch-version`), else the installed torch's, read from its
package metadata (torch is not imported), else the newest release in the table; a release outside the table
takes the nearest one in it, and `--show-settings` says so. `all` predicts for every release in the table at
once: a finding stands where it holds on one of them (a library that supports several).

What a finding does there: its rule's behaviour for the finding's pattern (the call it names; the rule as a
whole otherwise), as measured by running the rule's INVALID examples under each release. A finding whose
pattern did nothing on the release (`random.random()` is traced from torch 2.14) is not reported; one whose
behaviour differs between releases says so in its message; a break carries the gb_types that release names.
A pattern the table has no measurement for follows its rule's measured patterns where they all agree on the
release, and stands otherwise.
"""
from __future__ import annotations

import importlib.metadata
import re
from functools import lru_cache
from typing import Dict, Optional, Tuple

from dynlint.linter.config import Config, ConfigError
from dynlint.linter.finding import Finding
from dynlint.rules import releases
from dynlint.rules.releases import MEASURED

ALL = "all"
AS_FOUND = "as found"       # every finding, whatever the table says (the measurement of the table itself)
NOTHING, FAILED = "nothing", "failed"
# what "nothing" means, by what the rule predicts
ABSENT = {"break": "traced", "recompile": "no recompile", "error": "no error", "warning": "no warning",
          "not compiled": "compiled"}


def release_key(release: str) -> Tuple[int, ...]:
    """"2.15" -> (2, 15): releases in order."""
    return tuple(int(p) for p in release.split("."))


RELEASES: Tuple[str, ...] = tuple(sorted(MEASURED, key=release_key))


def expand(per: dict) -> dict:
    """The table's {"2.11-2.13": v, "2.14": w} as {release: value} for each measured release."""
    out = {}
    for span_, value in per.items():
        first, _, last = span_.partition("-")
        out.update((r, value) for r in RELEASES[RELEASES.index(first):RELEASES.index(last or first) + 1])
    return out


BEHAVIOUR = {key: expand(per) for key, per in releases.BEHAVIOUR.items()}
FULLGRAPH = {code: expand(per) for code, per in releases.FULLGRAPH_RAISES.items()}
# (Dynamo setting, value) -> (rule, pattern) -> release -> behaviour, where the setting changes it
SETTINGS = {setting: {key: expand(per) for key, per in table.items()}
            for setting, table in getattr(releases, "SETTINGS", {}).items()}


def release_of(version: str) -> str:
    """"2.15.0+cu132" -> "2.15"."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"{m.group(1)}.{m.group(2)}" if m else ""


def installed() -> Optional[str]:
    """The installed torch's version, from its package metadata; None when torch is not installed."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
    except Exception:        # a broken distribution's metadata must not stop a check
        return None


def nearest(release: str) -> str:
    """The table's release for `release`: itself, else the oldest or newest one it lies beyond."""
    if release in RELEASES:
        return release
    return RELEASES[0] if release_key(release) < release_key(RELEASES[0]) else RELEASES[-1]


def resolved(config: Config) -> Config:
    """`config` with `torch_version` set to a release of the table (or ALL), and its origin saying why."""
    origins = dict(config.origins)
    wanted = config.torch_version
    if wanted == AS_FOUND:
        return config.with_(torch_version="")
    if wanted:
        if wanted != ALL and wanted not in RELEASES:
            raise ConfigError(f"'torch-version' {wanted!r} is not a release dynlint has measured "
                              f"(known: {', '.join(RELEASES)}, or {ALL})")
        return config
    version = installed()
    if version is None or not release_of(version):
        release, why = RELEASES[-1], "the newest release dynlint knows (torch is not installed here)"
    else:
        release = nearest(release_of(version))
        why = f"the installed torch {version}" + ("" if release == release_of(version) else
                                                   f", outside the measured {RELEASES[0]}-{RELEASES[-1]}: {release}'s "
                                                   f"behaviour")
    origins["torch_version"] = why
    return config.with_(torch_version=release, origins=tuple(origins.items()))


@lru_cache(maxsize=None)
def _by_rule() -> Dict[str, Dict[str, Optional[Tuple[str, Tuple[str, ...]]]]]:
    """code -> release -> the rule's behaviour where all its measured patterns agree (None where they differ)."""
    out: Dict[str, Dict[str, Optional[tuple]]] = {}
    for (code, _pattern), per in BEHAVIOUR.items():
        rule = out.setdefault(code, {})
        for release, (what, types) in per.items():
            if what == FAILED:
                continue
            held = what != NOTHING
            if release not in rule:
                rule[release] = (what, types)
            elif rule[release] is not None and (rule[release][0] != NOTHING) != held:
                rule[release] = None
    return out


def behaviour(code: str, pattern: str) -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """release -> (what Dynamo did, gb_types) for a finding of `code` about `pattern` (measured, or its rule's
    where all its patterns agree)."""
    if pattern and (code, pattern) in BEHAVIOUR:
        per = BEHAVIOUR[(code, pattern)]
    else:
        per = BEHAVIOUR.get((code, "")) or {r: v for r, v in _by_rule().get(code, {}).items() if v is not None}
    return {r: v for r, v in per.items() if v[0] != FAILED}


def fullgraph_raises(code: str, release: str, default: bool) -> bool:
    """Whether `fullgraph=True` raises at a break of rule `code` on `release` (on ALL: on any release); the
    rule's own claim where the table has no measurement."""
    per = FULLGRAPH.get(code, {})
    if release == ALL:
        return any(per.values()) if per else default
    return per.get(release, default)


def holds(what: str) -> bool:
    return what != NOTHING


def on_release(finding: Finding, release: str, per: Optional[dict] = None,
               settings: frozenset = frozenset()) -> Optional[Finding]:
    """`finding` as it stands on `release` (or ALL) with the project's Dynamo `settings`: None where the table
    says it does not happen there. `per`: release -> (what, gb_types) where a rule knows its behaviour from
    elsewhere (its own generated table)."""
    per = behaviour(finding.code, finding.pattern) if per is None else per
    for setting in sorted(settings):         # what the pattern does where the project sets it (measured)
        changed = SETTINGS.get(setting, {}).get((finding.code, finding.pattern))
        if changed:
            per = {**per, **changed}
    if not per:
        return finding
    if release == ALL:
        if not any(holds(w) for w, _ in per.values()):
            return None
        here: Optional[tuple] = None
    else:
        here = per.get(release)
        if here is not None and not holds(here[0]):
            return None
    out = finding
    if here is not None and here[1]:        # the gb_types the release names first (a renamed break among them)
        out = out.with_(gb_types=tuple(here[1]) + tuple(t for t in finding.gb_types if t not in here[1]))
    note = difference(per)
    return out.with_(message=f"{out.message} ({note})") if note else out


def difference(per: Dict[str, Tuple[str, Tuple[str, ...]]]) -> str:
    """How the behaviour differs between releases, in words ("torch 2.14 and later: traced"); "" when it does
    not."""
    absent = [r for r in RELEASES if r in per and not holds(per[r][0])]
    if not absent:
        return ""
    kind = next((w for w, _ in per.values() if holds(w)), "break")
    return f"torch {span(absent)}: {ABSENT.get(kind, 'not so')}"


def span(releases) -> str:
    """Releases of the table in words: "2.14 and later", "2.11-2.12", "2.13", "2.11, 2.13"."""
    at = [RELEASES.index(r) for r in releases]
    if at == list(range(at[0], at[-1] + 1)):
        if at[-1] == len(RELEASES) - 1 and len(at) < len(RELEASES):
            return f"{RELEASES[at[0]]} and later"
        if at[0] == 0:
            return f"{RELEASES[at[-1]]} and earlier" if len(at) > 1 else RELEASES[0]
        return RELEASES[at[0]] if len(at) == 1 else f"{RELEASES[at[0]]}-{RELEASES[at[-1]]}"
    return ", ".join(releases)


def markdown(code: str, named: Tuple[str, ...]) -> list:
    """The rule's measured behaviour per release, as markdown lines (`dynlint rule CODE`, docs/rules.md); a
    break that a release names otherwise than the rule (`named`) shows that release's gb_type."""
    rows = sorted((p, per) for (c, p), per in BEHAVIOUR.items() if c == code)
    if not rows:
        return []
    shown = [r for r in RELEASES if any(r in per for _, per in rows)]

    def cell(value, kind: str) -> str:
        if value is None:
            return "–"
        what, types = value
        other = [t for t in types if t not in named]
        return (what if holds(what) else ABSENT.get(kind, what)) + (f" ({'; '.join(other)})" if other else "")

    lines = ["", "### On each torch release", "",
             "Measured by running the rule's examples under each release (`bench/releases.py`); a finding is "
             "reported only where its pattern does what the rule says on the release the check predicts for "
             "(`--torch-version`).", "",
             "| pattern | " + " | ".join(f"torch {r}" for r in shown) + " |",
             "|---|" + "---|" * len(shown)]
    for pattern, per in rows:
        kind = next((w for w, _ in per.values() if holds(w) and w != FAILED), "")
        lines.append(f"| {f'`{pattern}`' if pattern else '(the rule)'} | " +
                     " | ".join(cell(per.get(r), kind) for r in shown) + " |")
    return lines
