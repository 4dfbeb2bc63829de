"""The guard model (dynlint/analysis/guards.py) against real Dynamo: every entry's probe from bench/guards.py
runs on the installed torch and must behave as the model says, so a torch upgrade that changes a guard fails
here before the recompile rules act on a stale belief."""
import importlib.util
import sys
from pathlib import Path

import pytest

from dynlint.analysis.guards import BEHAVIOUR

_SPEC = importlib.util.spec_from_file_location("bench_guards", Path(__file__).parents[1] / "bench" / "guards.py")
guards = sys.modules["bench_guards"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(guards)

MODELLED = [p for p in guards.PROBES if p.model]


def test_every_entry_of_the_model_has_a_probe():
    assert {p.model for p in MODELLED} == set(BEHAVIOUR)


@pytest.mark.parametrize("probe", MODELLED, ids=lambda p: p.change)
def test_the_model_says_what_dynamo_does(probe):
    outcome = guards.measure(probe)
    assert outcome.error is None
    assert outcome.behaviour == BEHAVIOUR[probe.model], outcome.first_guard
