"""The guard model (dynlint/analysis/guards.py) against real Dynamo: every entry's probe from bench/guards.py
runs on the installed torch and must behave as the model says, so a torch upgrade that changes a guard fails
here before the recompile rules act on a stale belief."""
import pytest

from conftest import load_bench
from dynlint.analysis.guards import BEHAVIOUR

guards = load_bench("guards")

MODELLED = [p for p in guards.PROBES if p.model]


def test_every_entry_of_the_model_has_a_probe():
    assert {p.model for p in MODELLED} == set(BEHAVIOUR)


@pytest.mark.parametrize("probe", MODELLED, ids=lambda p: p.change)
def test_the_model_says_what_dynamo_does(probe):
    outcome = guards.measure(probe)
    assert outcome.error is None
    assert outcome.behaviour == BEHAVIOUR[probe.model], outcome.first_guard


@pytest.mark.parametrize("change,said", [
    ("an int attribute of an nn.Module, `self.calls += 1` in forward", "`self.calls` was 0, then 1, then 2, then 3"),
    ("a list argument that grows by one each call, iterated", "`past` had 1 item when compiled"),
    ("a global int, `global n; n += 1` in the compiled function", "`n` was 0, then 1"),
    ("an argument that is None, then a tensor, alternating", "`mask` was a tensor when compiled, then NoneType"),
    ("`torch.no_grad()` around every other call", "grad mode changed between calls"),
    ("a dict cache on the module filled in forward, keyed by a size", "`self.cache` had no key 4 when compiled"),
])
def test_a_recompile_is_said_in_the_users_words(change, said):
    """--verify's DYN902 says what changed, from the guards real Dynamo reports."""
    from dynlint.runtime_check.crosscheck import in_words

    (probe,) = [p for p in guards.PROBES if p.change == change]
    assert in_words(guards.measure(probe).reasons).startswith(said)
