"""`--modes` on CPU (real workers, real Dynamo and Inductor): every requested mode is in the JSON `modes` of the
example with its status, and each mode after "default" runs in a worker of its own with its own timeout, so a
mode that times out leaves the default's figures and the example's outcome as they are; so does a further
timing process (`--timing-processes`) that times out.

The example's factory hangs in every worker after the first (the default's): the max-autotune worker times
out while building; reduce-overhead is skipped on CPU (it replays CUDA graphs)."""
import json
import textwrap

import pytest

from conftest import run_cli, write_tree

pytestmark = pytest.mark.dynamo

EXAMPLES = textwrap.dedent('''
    import os
    import time

    import torch
    import dynlint

    FIRST = __file__ + ".first-worker"


    def gelu(x):
        return 0.5 * x * (1.0 + torch.tanh(0.79788 * (x + 0.044715 * x * x * x)))


    @dynlint.example(timeout=20)
    def hangs_after_default():
        if not os.path.exists(FIRST):
            with open(FIRST, "w") as f:
                f.write(str(os.getpid()))
        elif open(FIRST).read() != str(os.getpid()):
            time.sleep(600)                          # a later worker: another mode's
        return gelu, [(torch.randn(64, 64),)]
''')


def verify(project, modes, timing_processes=1):
    (project / "dynlint_examples.py.first-worker").unlink(missing_ok=True)
    r = run_cli("check", ".", "--verify", "--device", "cpu", "--modes", modes, "--timing-budget", "0.2",
                "--timing-processes", timing_processes, "--format", "json", "-o", "out.json", "--exit-zero",
                cwd=project, timeout=300)
    assert r.returncode == 0, r.stderr
    (example,) = json.loads((project / "out.json").read_text())["verify"]["examples"]
    return example


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    pytest.importorskip("torch")
    return write_tree(tmp_path_factory.mktemp("modes"), {"pyproject.toml": "[tool.dynlint]\n",
                                                        "dynlint_examples.py": EXAMPLES})


def test_a_mode_that_times_out_keeps_the_others_and_the_example(project):
    e = verify(project, "default,reduce-overhead,max-autotune-no-cudagraphs", timing_processes=2)
    assert e["outcome"] == "ok" and e["speedup"] is not None, e["message"]
    # the second timing process hangs too: it times out, and the first's figures stand, with a note
    assert len(e["timing_processes"]) == 1 and e["timing_note"].startswith("timing process 2: timed out after")
    assert e["speedup_interval"] == e["timing_processes"][0]["speedup_interval"]
    modes = {m["mode"]: m for m in e["modes"]}
    assert list(modes) == ["default", "reduce-overhead", "max-autotune-no-cudagraphs"]
    assert modes["default"]["status"] == "measured" and modes["default"]["speedup"] == e["speedup"]
    assert modes["reduce-overhead"]["status"] == "skipped" and "not measured on CPU" in modes["reduce-overhead"]["note"]
    tuned = modes["max-autotune-no-cudagraphs"]
    assert tuned["status"] == "timeout" and tuned["speedup"] is None
    assert tuned["note"].startswith("timed out after") and "during phase 'build'" in tuned["note"]


def test_every_requested_mode_is_listed_even_when_none_but_default_runs(project):
    e = verify(project, "default,reduce-overhead")
    assert e["outcome"] == "ok", e["message"]
    assert [(m["mode"], m["status"]) for m in e["modes"]] == [("default", "measured"), ("reduce-overhead", "skipped")]
