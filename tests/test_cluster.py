"""`--verify --cluster ray` on a real local Ray cluster: a head (no CPU of its own, so it runs no example) and two
node processes started with `ray start` on this machine, one CPU each. The examples run as Ray tasks on both
nodes, with the project shipped through Ray's runtime environment, and their results are the local pool's; a
node killed while it runs an example loses only that run: the example is run once more on the other node, and
the other examples are untouched."""
import json
import os
import signal
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import load_bench, run_cli, write_tree

pytestmark = pytest.mark.dynamo
ray = pytest.importorskip("ray")

EXAMPLES = textwrap.dedent('''
    import os
    import time

    import torch
    import dynlint

    from model import Gate, scaled


    @dynlint.example
    def linear():
        torch.manual_seed(0)
        return torch.nn.Linear(8, 8), [(torch.randn(2, 8),)]


    @dynlint.example
    def gate_breaks():
        return Gate(), [(torch.randn(4),), (torch.randn(4),)]


    @dynlint.example
    def scaled_recompiles():
        return scaled, [(torch.randn(4), 2), (torch.randn(4), 3)]


    @dynlint.example
    def slow():
        if MARKER:                      # the test's signal: this example's process is running now
            with open(MARKER + ".part", "w") as f:
                f.write(str(os.getpid()))
            os.replace(MARKER + ".part", MARKER)       # whole, or not there at all
            time.sleep(6)
        return torch.nn.ReLU(), [(torch.randn(4),)]
''')
MODEL = textwrap.dedent('''
    import torch


    class Gate(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x + 1
            return x - 1


    def scaled(x, k):
        return x * k
''')
FLAGS = ("--device", "cpu", "--timing-processes", "1", "--timing-budget", "0.2", "--format", "json", "--exit-zero")


@pytest.fixture
def cluster():
    with load_bench("ray_sweep").LocalCluster(nodes=2) as c:      # the bench's sweep starts the same
        yield c


def _project(root: Path, marker: str = "") -> Path:
    return write_tree(root, {"pyproject.toml": "[tool.dynlint]\n", "model.py": MODEL,
                             "dynlint_examples.py": f"MARKER = {marker!r}\n" + EXAMPLES})


def _verify(project: Path, *extra: str, env=None) -> dict:
    r = run_cli("check", ".", "--verify", *FLAGS, *extra, "-o", "out.json", cwd=project, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads((project / "out.json").read_text())


def _essentials(example: dict) -> tuple:
    """What an example's run found, not where or how fast: the same on any node as on this host."""
    return (example["name"], example["outcome"], len(example["graphs"]),
            sorted((b["path"], b["line"], b["gb_types"]) for b in example["graph_breaks"]),
            sorted((r["line"], r["reason"]) for r in example["recompiles"]))


def test_the_examples_run_on_both_nodes_and_find_what_the_local_pool_finds(tmp_path, cluster):
    project = _project(tmp_path)
    local = _verify(project)
    spread = _verify(project, "--cluster", "ray", env={"RAY_ADDRESS": cluster.address})
    assert [_essentials(e) for e in spread["verify"]["examples"]] == \
        [_essentials(e) for e in local["verify"]["examples"]]
    assert {e["outcome"] for e in spread["verify"]["examples"]} == {"ok"}
    assert any(e["graph_breaks"] for e in spread["verify"]["examples"])       # the runs found something to agree on
    assert any(e["recompiles"] for e in spread["verify"]["examples"])
    nodes = {e["slot"].split("/")[0] for e in spread["verify"]["examples"]}
    assert len(nodes) == 2 and all(n.startswith("ray:") for n in nodes), nodes
    assert _statuses(spread) == _statuses(local)        # the static findings are cross-checked as on one host


def _statuses(report: dict) -> list:
    return sorted((f["code"], f["path"], f["line"], f.get("status")) for f in report["findings"])


def test_a_node_killed_mid_run_loses_only_its_example(tmp_path, cluster):
    marker = tmp_path / "slow.pid"
    project = _project(tmp_path / "p", str(marker))
    out: dict = {}
    failed: list = []

    def verify():
        try:
            out.update(_verify(project, "--cluster", "ray", env={"RAY_ADDRESS": cluster.address}))
        except BaseException as e:          # said below, where the test fails, not lost in the thread
            failed.append(e)

    run = threading.Thread(target=verify)
    run.start()
    while not marker.exists() and run.is_alive():       # bounded by the run's own limit, not a guess at load
        time.sleep(0.1)
    assert marker.exists(), f"the slow example never started: {failed or out}"
    pid = int(marker.read_text())
    chain = _ancestors(pid)               # the example's worker -> the Ray worker -> ... -> the node's raylet
    raylet = next(p for p in chain if "raylet" in _cmdline(p))
    for victim in [raylet, *chain[:chain.index(raylet)]]:          # the node and everything it ran
        os.kill(victim, signal.SIGKILL)
    run.join(600)
    assert not failed, failed
    examples = {e["name"]: e for e in out["verify"]["examples"]}
    assert {name: e["outcome"] for name, e in examples.items()} == dict.fromkeys(
        ["linear", "gate_breaks", "scaled_recompiles", "slow"], "ok"), [e["message"] for e in examples.values()]
    assert examples["gate_breaks"]["graph_breaks"] and examples["scaled_recompiles"]["recompiles"]
    assert "run twice on the Ray cluster" in examples["slow"]["message"], examples["slow"]["message"]
    assert not any(examples[name]["message"] for name in ("linear", "gate_breaks", "scaled_recompiles"))


def _ancestors(pid: int) -> list:
    chain = [pid]
    while chain[-1] > 1:
        with open(f"/proc/{chain[-1]}/stat") as f:
            chain.append(int(f.read().rsplit(")", 1)[1].split()[1]))
    return chain


def _cmdline(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")


def test_without_ray_the_cluster_option_says_how_to_install_it(tmp_path):
    project = _project(tmp_path / "p")
    write_tree(tmp_path / "noray", {"ray/__init__.py": "raise ImportError('no Ray here')\n"})
    r = run_cli("check", ".", "--verify", "--cluster", "ray", cwd=project,
                env={"PYTHONPATH": os.pathsep.join([str(tmp_path / "noray"), os.environ.get("PYTHONPATH", "")])})
    assert r.returncode == 2 and "pip install 'dynlint[ray]'" in r.stderr, r.stderr


def test_a_cluster_setting_that_names_no_cluster_is_an_error(tmp_path):
    project = write_tree(tmp_path, {"pyproject.toml": '[tool.dynlint.verify]\ncluster = "spark://x:1"\n', "m.py": ""})
    r = run_cli("check", ".", cwd=project)
    assert r.returncode == 2 and "expected local, ray or ray://HOST:PORT" in r.stderr, r.stderr


NET = textwrap.dedent('''
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            print("shape", x.shape)
            return self.lin(x).relu()
''')
NET_EXAMPLE = textwrap.dedent('''
    import torch
    import dynlint
    from model import Net


    @dynlint.example
    def net():
        torch.manual_seed(0)
        return Net(), [(torch.randn(2, 4),)]
''')


def test_fix_verify_on_the_cluster_compares_the_fixed_codes_outputs_with_the_originals(tmp_path, cluster):
    """`--fix --verify`: the original code runs on the cluster, then the fixed one (shipped anew), and the eager
    outputs of the first travel back and out again to be compared with the second's."""
    project = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "model.py": NET,
                                    "dynlint_examples.py": NET_EXAMPLE})
    r = run_cli("check", ".", "--fix", "--verify", "--cluster", "ray", *FLAGS, "-o", "out.json", cwd=project,
                env={"RAY_ADDRESS": cluster.address}, timeout=600)
    assert r.returncode == 0 and "WARNING" not in r.stderr, r.stderr
    fixes = json.loads((project / "out.json").read_text())["verify"]["fixes"]
    (example,) = fixes["examples"]
    assert (example["before"]["break_sites"], example["after"]["break_sites"]) == (1, 0)
    assert example["outputs"]["status"] == "match" and fixes["kept"] == [{"path": "model.py", "fixes": 1}]
    assert "is_compiling()" in (project / "model.py").read_text()
