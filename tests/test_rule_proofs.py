"""Every rule proven against real TorchDynamo.

For each INVALID example that has calls: the code is written to a file, imported, and its calls run with
`torch.compile` patched to the cheap "eager" backend (dynlint/compiler/harness.py). The test then asserts that Dynamo
did what the rule predicts, where dynlint says it would:

* graph-break rules: a break whose gb_type is one the rule names, at a line of one of the rule's findings
  (site rules, which look at set-up code, accept the break anywhere: it happens inside library code);
* recompile rules: a recompile at a line a finding's span holds: the source line of the guard that failed, or
  where the guard has none (a tensor's metadata, grad mode) the recompiled function's first line (a guard that
  a torch layer installs names no line of the example: there the recompile alone is checked);
* rules tagged "hard-error": the call raises, with one of the rule's gb_types in the message;
* rules tagged "deprecation": a FutureWarning/DeprecationWarning at a finding's line;
* rules tagged "not-compiled": Dynamo compiled nothing at all;
* `fullgraph_raises`: with `fullgraph=True` forced, the example raises exactly when the rule says so.

Each VALID example that has calls runs without a break, a recompile or an error, and also compiles with
`fullgraph=True` forced.

On the installed torch's release, the per-release table (dynlint/rules/releases.py, measured by
bench/releases.py) must hold: an INVALID example whose findings the table says do nothing on this release is
proven silent (no finding, and Dynamo indeed does nothing there); the gb_types a finding carries are the ones
this release names; the rules' gb_types that this release's graph-break registry has are the table's.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import load_bench, skip_unless_importable

torch = pytest.importorskip("torch")

from dynlint.api import check_source  # noqa: E402
from dynlint.compiler.registry import load_gb_ids  # noqa: E402
from dynlint.rules import all_rules  # noqa: E402
from dynlint.rules import releases, torch_release  # noqa: E402
from dynlint.testing import PREDICTED, case_ids, example_cases, observed, proof_kind  # noqa: E402

pytestmark = pytest.mark.dynamo

from dynlint.compiler.harness import observe  # noqa: E402

RULES = all_rules()
INVALID = example_cases("INVALID", runnable=True)
VALID = example_cases("VALID", runnable=True)
RELEASE = torch_release.release_of(torch.__version__)
MEASURED = RELEASE in releases.MEASURED     # this release is in the table


def _write(tmp_path: Path, name: str, code: str) -> Path:
    path = tmp_path / f"{name.replace('-', '_')}.py"
    path.write_text(code, encoding="utf-8")
    return path


def _describe(obs, path) -> str:
    lines = [f"error: {obs.error!r}"]
    lines += [f"break at {b.path == str(path) and b.line}: {b.gb_types} ({b.reported_path}:{b.reported_line})"
              for b in obs.breaks]
    lines += [f"recompile of {r.function}: {r.reason!r} -> lines {ls}"
              for r, ls in zip(obs.recompiles, obs.recompile_lines(str(path)))]
    return "\n".join(lines)


def test_every_gb_type_exists_in_the_installed_registry():
    """The gb_types the rules name that this torch's registry has are those the table recorded for its
    release (regenerate it with `python bench/releases.py --write` otherwise); every gb_type a rule names is in
    the registry of a release in the table (a typo is in none)."""
    known = set(load_gb_ids())
    if not known:
        pytest.skip("this torch ships no graph_break_registry.json")
    named = {t for r in RULES for t in r.gb_types}
    if MEASURED:
        lacks = releases.REGISTRY_LACKS[RELEASE]
        assert named - known == lacks, (
            f"torch {torch.__version__}'s registry lacks {sorted(named - known - lacks)} though the table says it "
            f"has them, and has {sorted(lacks & known)} though the table says it lacks them")
    anywhere = set(known).union(*(named - lacks for lacks in releases.REGISTRY_LACKS.values()))
    missing = {(r.code, t) for r in RULES for t in r.gb_types if t not in anywhere}
    assert not missing, f"gb_types in no measured release's registry: {sorted(missing)}"


def test_the_table_of_skipped_torch_functions_is_the_installed_torchs():
    """DYN612 reads analysis/dynamo_skips.py, generated from torch._dynamo.trace_rules of each measured release:
    for the installed one, it must be what that torch says (regenerate with `python bench/dynamo_skips.py
    --venvs DIR`)."""
    from dynlint.analysis import dynamo_skips
    if RELEASE not in dynamo_skips.NOT_SKIPPED_ON:
        pytest.skip(f"torch {RELEASE} is not in the table ({', '.join(dynamo_skips.MEASURED)})")
    expected = dynamo_skips.SKIPPED_TORCH_FUNCTIONS - dynamo_skips.NOT_SKIPPED_ON[RELEASE]
    assert set(load_bench("dynamo_skips").skipped()) == expected


def test_the_table_of_torch_functions_answering_with_python_values_is_the_installed_torchs():
    """DYN617 reads analysis/non_tensor_returns.py, measured by bench/non_tensor_returns.py under real Dynamo: on
    the release it was measured on, measuring again gives the same table."""
    from dynlint.analysis import non_tensor_returns
    if RELEASE not in non_tensor_returns.MEASURED:
        pytest.skip(f"torch {RELEASE} is not the measured release ({', '.join(non_tensor_returns.MEASURED)})")
    assert set(load_bench("non_tensor_returns").measure()) == non_tensor_returns.NON_TENSOR_RETURNS


def test_the_table_of_optimizer_methods_is_what_the_installed_torch_does():
    """DYN614 reads analysis/torch_methods.py, measured by bench/torch_methods.py under real Dynamo (every
    optimizer and scheduler of torch.optim, each method called from compiled code): on the torch it was measured
    on, measuring again gives the same table."""
    from dynlint.analysis import torch_methods
    if not torch.__version__.startswith(torch_methods.TORCH_VERSION):
        pytest.skip(f"the table was measured on torch {torch_methods.TORCH_VERSION}")
    bench = load_bench("torch_methods")
    assert bench.render(torch_methods.TORCH_VERSION, bench.measure()) == \
        Path(torch_methods.__file__).read_text(encoding="utf-8")


def test_every_rule_is_proven_by_at_least_one_example():
    unproven = [r.code for r in RULES if not any(ex.calls for ex in r.INVALID)]
    assert not unproven, f"rules with no INVALID example that runs under Dynamo: {unproven}"


@pytest.mark.parametrize("rule,i,example", INVALID, ids=case_ids(INVALID, "INVALID"))
def test_invalid_example_does_what_the_rule_predicts(rule, i, example, tmp_path):
    skip_unless_importable(example.code)
    found = [f for f in check_source(example.code, preview=True, torch_version=torch_release.AS_FOUND).findings
             if f.code == rule.code]
    assert found, f"{rule.code} does not fire on INVALID example {i}"
    findings = [f for f in check_source(example.code, preview=True, torch_version=RELEASE if MEASURED else "all")
                .findings if f.code == rule.code]
    path = _write(tmp_path, f"{rule.code}_invalid_{i}", example.code)
    obs = observe(str(path), example.calls)
    kind = proof_kind(rule)
    if not findings:
        # silent on this release: the table says its findings do nothing here, and Dynamo agrees at each
        seen = [observed(rule, f, obs, str(path))[0] for f in found]
        assert all(what != PREDICTED[kind] for what in seen), (
            f"{rule.code} INVALID {i} is silent on torch {RELEASE} but Dynamo did {seen}:\n{_describe(obs, path)}")
        return
    lines = {f.line for f in findings}
    detail = f"{rule.code} INVALID {i} (finding lines {sorted(lines)}):\n{_describe(obs, path)}"

    if kind == "hard-error":
        assert obs.error is not None, detail
        if rule.gb_types:
            assert any(t in str(obs.error) for t in rule.gb_types), detail
        else:                                    # a Dynamo error (Unsupported, UserError, ...), not the user's
            assert type(obs.error).__module__.startswith("torch._dynamo"), detail
        return
    assert obs.error is None, detail
    if kind == "deprecation":
        assert any(cat in ("FutureWarning", "DeprecationWarning") and Path(f).resolve() == path.resolve()
                   and ln in lines for cat, _, f, ln in obs.warnings), detail + f"\nwarnings: {obs.warnings}"
    elif kind == "not-compiled":
        assert obs.frames == 0 and not obs.breaks, detail + f"\nframes compiled: {obs.frames}"
    elif kind == "recompile":
        # at the line Dynamo's recompile log names (obs.guard_lines): a finding's span holds it
        spans = {n for f in findings for n in range(f.line, max(f.end_line, f.line) + 1)}
        assert obs.recompiles, detail
        assert any(ls is None or ls & spans for ls in obs.guard_lines(str(path))), \
            detail + f"\nguard lines: {obs.guard_lines(str(path))}"
    else:
        # the gb_types the findings carry on this release (a release that renamed the break names it so)
        wanted = set(rule.gb_types) | {t for f in findings for t in f.gb_types}
        hits = [b for b in obs.breaks if wanted & set(b.gb_types)
                and (rule.scope == "site" or (b.path and Path(b.path).resolve() == path.resolve() and b.line in lines))]
        assert hits, detail
        # and none of the rule's own kind of break in the example escapes its findings: each lies in a span
        spans = {n for f in findings for n in range(f.line, max(f.end_line, f.line) + 1)}
        missed = [b for b in obs.breaks if wanted & set(b.gb_types) and b.path and
                  Path(b.path).resolve() == path.resolve() and b.line not in spans]
        assert rule.scope == "site" or not missed, detail + f"\nbreaks outside every finding: {missed}"
        if rule.scope == "region":
            strict = observe(str(path), example.calls, fullgraph=True)
            raised = strict.error is not None
            claimed = torch_release.fullgraph_raises(rule.code, RELEASE, rule.fullgraph_raises)
            assert raised == claimed, (
                f"{rule.code} on torch {RELEASE}: fullgraph=True should {'raise' if claimed else 'compile'} but "
                f"{'raised ' + repr(strict.error) if raised else 'compiled'}")


@pytest.mark.parametrize("rule,i,example", VALID, ids=case_ids(VALID, "VALID"))
def test_valid_example_compiles_cleanly(rule, i, example, tmp_path):
    skip_unless_importable(example.code)
    path = _write(tmp_path, f"{rule.code}_valid_{i}", example.code)
    obs = observe(str(path), example.calls)
    detail = f"{rule.code} VALID {i}:\n{_describe(obs, path)}"
    assert obs.error is None and not obs.breaks and not obs.recompiles, detail
    strict = observe(str(path), example.calls, fullgraph=True)
    assert strict.error is None, f"{rule.code} VALID {i} fails under fullgraph=True: {strict.error!r}"


def _setting_cases():
    out = []
    for (setting, value), table in torch_release.SETTINGS.items():
        for (code, pattern), per in table.items():
            if RELEASE in per:
                out.append((setting, value, code, pattern, per[RELEASE][0]))
    return out


@pytest.mark.parametrize("setting,value,code,pattern,what", _setting_cases(), ids=lambda v: str(v))
def test_a_dynamo_setting_does_what_the_table_says(setting, value, code, pattern, what, tmp_path):
    """Under the Dynamo setting a project's code may make, the rule's INVALID examples do at their findings what
    the table recorded for this release: one of them what the rule says, or none of them anything (where the
    setting captures the value)."""
    import logging
    import warnings

    from dynlint.rules.torch_release import AS_FOUND
    rule = next(r for r in RULES if r.code == code)
    functions = {"print": print, "warnings.warn": warnings.warn, "logging.info": logging.info,
                 "logging.warning": logging.warning, "logging.debug": logging.debug}
    patch = {setting: {functions[value]}} if setting == "reorderable_logging_functions" else {setting: value == "True"}
    seen = []
    for i, example in enumerate(rule.INVALID):
        found = [f for f in check_source(example.code, preview=True, torch_version=AS_FOUND).findings
                 if f.code == code and f.pattern == pattern]
        if not example.calls or not found:
            continue
        path = _write(tmp_path, f"{code}_setting_{i}", example.code)
        with torch._dynamo.config.patch(**patch):
            obs = observe(str(path), example.calls)
        seen += [(observed(rule, f, obs, str(path))[0], _describe(obs, path)) for f in found]
    assert seen
    if what == "nothing":
        assert all(w == "nothing" for w, _ in seen), seen
    else:
        assert any(w == what for w, _ in seen), seen
