"""Recompile events under real Dynamo (CPU workers): one event per recompile site, and a static recompile finding
credited only by an event on its own lines.

`decode` breaks the graph (the print in `log`), so Dynamo compiles it as two code objects: `decode` and the
resume function after the break, which receives `x.cos()` as a stack value. A new length (128, then 129: a
decode loop's step) fails a size guard in both, once on `x` and once on `___stack0`: one site, one event. A
recompile finding planted at another line of `decode` predicts something else and is not confirmed by it.
"""
import textwrap
from pathlib import Path

import pytest

from conftest import write_tree
from dynlint.linter.finding import Finding

pytestmark = pytest.mark.dynamo

MODEL = textwrap.dedent('''
    import torch


    def log(x):
        print("step")
        return x


    def decode(x):
        h = x.cos()
        scale = 2                                           # the planted finding's line
        return h + log(x.sin()).sum() * scale
''')

EXAMPLES = textwrap.dedent('''
    import torch
    import dynlint
    from model import decode


    @dynlint.example
    def decode_steps():
        return decode, [(torch.randn(128),), (torch.randn(129),)]
''')


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    pytest.importorskip("torch")
    from dynlint.runtime_check import run_verify

    root = write_tree(tmp_path_factory.mktemp("sites"), {"model.py": MODEL, "dynlint_examples.py": EXAMPLES})
    line = next(n for n, text in enumerate(MODEL.splitlines(), 1) if "planted finding" in text)
    planted = Finding(path="model.py", line=line, column=4, code="DYN599", message="planted: another guard")
    return run_verify(Path(root), ["dynlint_examples.py"], device="cpu", timeout=150, static_findings=[planted])


def test_one_event_per_recompile_site_named_as_the_user_names_it(report):
    (example,) = report.examples
    assert example.outcome == "ok", example.message
    (event,) = example.recompiles
    assert event.function == "decode" and event.reason.startswith("tensor 'x' size mismatch at index 0")


def test_a_recompile_finding_at_another_line_of_the_function_is_not_credited(report):
    (planted,) = [f for f in report.findings if f.code == "DYN599"]
    assert planted.status == "not observed"
    # the size change is the first of its example: automatic dynamic shapes at work, not a DYN902
    assert not [f for f in report.findings if f.code == "DYN902"]
