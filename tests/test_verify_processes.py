"""`--timing-processes` on CPU (real workers, real Dynamo and Inductor): each example's timing runs in that many
fresh worker processes, each listed in the JSON `timing_processes` with its own pid (the pids the example's
factory saw), and the interval spans them; a further process that fails leaves the first's figures, with a note.

`tiny` logs the pid of every process that builds it. `only_first` raises in every worker after the first."""
import json
import textwrap

import pytest

from conftest import run_cli, write_tree

pytestmark = pytest.mark.dynamo

EXAMPLES = textwrap.dedent('''
    import os

    import torch
    import dynlint

    FIRST = __file__ + ".first-worker"


    def gelu(x):
        return 0.5 * x * (1.0 + torch.tanh(0.79788 * (x + 0.044715 * x * x * x)))


    @dynlint.example
    def tiny():
        with open(__file__ + ".pids", "a") as f:
            f.write(f"{os.getpid()}\\n")
        return gelu, [(torch.randn(64, 64),)]


    @dynlint.example
    def only_first():
        if not os.path.exists(FIRST):
            with open(FIRST, "w") as f:
                f.write(str(os.getpid()))
        elif open(FIRST).read() != str(os.getpid()):
            raise RuntimeError("only the first worker builds this example")
        return gelu, [(torch.randn(64, 64),)]
''')


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    pytest.importorskip("torch")
    return write_tree(tmp_path_factory.mktemp("processes"), {"pyproject.toml": "[tool.dynlint]\n",
                                                            "dynlint_examples.py": EXAMPLES})


def verify(project, processes):
    """{example name: its JSON entry}, and the pids of the processes that built `tiny`."""
    for left in ("dynlint_examples.py.first-worker", "dynlint_examples.py.pids"):
        (project / left).unlink(missing_ok=True)
    r = run_cli("check", ".", "--verify", "--device", "cpu", "--timing-processes", processes, "--timing-budget",
                "0.1", "--format", "json", "-o", "out.json", "--exit-zero", cwd=project, timeout=300)
    assert r.returncode == 0, r.stderr
    examples = {e["name"]: e for e in json.loads((project / "out.json").read_text())["verify"]["examples"]}
    built = {int(pid) for pid in (project / "dynlint_examples.py.pids").read_text().split()}
    return examples, built


def test_two_timing_processes_are_two_fresh_workers_and_the_interval_spans_them(project):
    examples, built = verify(project, 2)
    tiny = examples["tiny"]
    assert tiny["outcome"] == "ok", tiny["message"]
    processes = tiny["timing_processes"]
    assert len(processes) == 2 and len({p["pid"] for p in processes}) == 2
    assert {p["pid"] for p in processes} == built                      # the workers' own pids
    low, high = tiny["speedup_interval"]
    assert all(low <= p["speedup_interval"][0] and p["speedup_interval"][1] <= high for p in processes)
    assert tiny["rounds"] == sum(p["rounds"] == len(p["eager_rounds_ms"]) and p["rounds"] for p in processes)
    assert tiny["timing_note"] == ""
    # a second process that fails: the first's figures stand, with a note saying why
    first = examples["only_first"]
    assert first["outcome"] == "ok" and len(first["timing_processes"]) == 1, first["message"]
    assert first["speedup_interval"] == first["timing_processes"][0]["speedup_interval"]
    assert first["timing_note"].startswith("timing process 2: RuntimeError: only the first worker builds this example")


def test_one_timing_process_is_the_first_worker_alone(project):
    examples, built = verify(project, 1)
    for e in examples.values():
        assert e["outcome"] == "ok" and len(e["timing_processes"]) == 1 and e["timing_note"] == "", e["message"]
        assert e["speedup_interval"] == e["timing_processes"][0]["speedup_interval"]
    assert {p["pid"] for p in examples["tiny"]["timing_processes"]} == built
