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
`fullgraph=True` forced. Every gb_type a rule names must exist in the installed torch's graph-break registry.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import load_bench, skip_unless_importable

torch = pytest.importorskip("torch")

from dynlint.api import check_source  # noqa: E402
from dynlint.compiler.registry import load_gb_ids  # noqa: E402
from dynlint.rules import all_rules  # noqa: E402
from dynlint.rules.common import GB_TYPES_OF_RELEASE  # noqa: E402
from dynlint.testing import case_ids, example_cases  # noqa: E402

pytestmark = pytest.mark.dynamo

from dynlint.compiler.harness import observe  # noqa: E402

RULES = all_rules()
# gb_types that name a frame skip rather than a primary cause (TorchRule.report adds them to findings)
SKIP_TYPES = {"graph break in loop", "Graph break under GenericContextWrappingVariable"}
INVALID = example_cases("INVALID", runnable=True)
VALID = example_cases("VALID", runnable=True)


def proof_kind(rule) -> str:
    for tag in ("hard-error", "deprecation", "not-compiled"):
        if tag in rule.tags:
            return tag
    return "recompile" if rule.recompiles else "break"


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
    """Every gb_type a rule names is in the installed torch's registry, unless it is listed as a string of
    another release (GB_TYPES_OF_RELEASE); and every rule keeps at least one gb_type this torch knows."""
    known = set(load_gb_ids())
    if not known:
        pytest.skip("this torch ships no graph_break_registry.json")
    release = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    other = set().union(*(v for k, v in GB_TYPES_OF_RELEASE.items() if k != release))
    missing = {(r.code, t) for r in RULES for t in r.gb_types if t not in known and t not in other}
    assert not missing, f"gb_types not in torch {torch.__version__}'s registry: {sorted(missing)}"
    stale = {(r.code, t) for r in RULES for t in r.gb_types if t in known and t in other}
    assert not stale, f"listed as another release's but present in {torch.__version__}: {sorted(stale)}"
    none_known = [r.code for r in RULES if r.gb_types and not set(r.gb_types) & known]
    assert not none_known, f"rules none of whose gb_types torch {torch.__version__} knows: {none_known}"


def test_the_table_of_skipped_torch_functions_is_the_installed_torchs():
    """DYN612 reads analysis/dynamo_skips.py, generated from torch._dynamo.trace_rules: on the release it names,
    it must be what that torch says (regenerate with `python bench/dynamo_skips.py`)."""
    from dynlint.analysis import dynamo_skips
    if torch.__version__.split("+")[0] != dynamo_skips.TORCH_VERSION:
        pytest.skip(f"the table is torch {dynamo_skips.TORCH_VERSION}'s")
    assert load_bench("dynamo_skips").generate() == Path(dynamo_skips.__file__).read_text(encoding="utf-8")


def test_every_rule_is_proven_by_at_least_one_example():
    unproven = [r.code for r in RULES if not any(ex.calls for ex in r.INVALID)]
    assert not unproven, f"rules with no INVALID example that runs under Dynamo: {unproven}"


@pytest.mark.parametrize("rule,i,example", INVALID, ids=case_ids(INVALID, "INVALID"))
def test_invalid_example_does_what_the_rule_predicts(rule, i, example, tmp_path):
    skip_unless_importable(example.code)
    findings = [f for f in check_source(example.code, preview=True).findings if f.code == rule.code]
    assert findings, f"{rule.code} does not fire on INVALID example {i}"
    lines = {f.line for f in findings}
    path = _write(tmp_path, f"{rule.code}_invalid_{i}", example.code)
    obs = observe(str(path), example.calls)
    kind = proof_kind(rule)
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
        wanted = set(rule.gb_types)
        hits = [b for b in obs.breaks if wanted & set(b.gb_types)
                and (rule.scope == "site" or (b.path and Path(b.path).resolve() == path.resolve() and b.line in lines))]
        assert hits, detail
        if rule.scope == "region":
            strict = observe(str(path), example.calls, fullgraph=True)
            raised = strict.error is not None
            assert raised == rule.fullgraph_raises, (
                f"{rule.code}.fullgraph_raises is {rule.fullgraph_raises} but fullgraph=True "
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
