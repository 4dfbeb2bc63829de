"""`--verify --cluster ray`: a sweep of N CPU examples on one node against two, beside the local pool.

    python bench/ray_sweep.py [--examples 8] [--rounds 2]

Starts a real Ray cluster on this machine (a head with no CPU, so it runs no example, and one or two node
processes with one CPU each, `ray start --block`), writes a project of N small `@dynlint.example` modules
(each compiled for real through Inductor on CPU), and times `dynlint check --verify` as a whole command: with
the local pool (one CPU worker, the default), with `--cluster ray` on one node, and on two nodes. The runs
alternate within each round, so a change in the machine's speed lands on all of them. Prints a markdown table
(the median wall time of each, its ratio to the local pool, and whether every example finished alike).

`LocalCluster` is also what tests/test_cluster.py starts.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """A head with no CPU and `nodes` nodes with `cpus` CPUs each, every one a `ray start --block` process of
    this machine: stopping the process stops its node. `address` is what RAY_ADDRESS takes."""

    def __init__(self, nodes: int = 2, cpus: int = 1):
        self.temp = tempfile.mkdtemp(prefix="ray-")          # short: Ray's socket paths must stay under 108 bytes
        self.address = f"127.0.0.1:{_free_port()}"
        os.mkdir(os.path.join(self.temp, "t"))
        # the tasks' temporary files too: a node killed mid-task leaves them, and `stop` removes them with the rest
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", TMPDIR=os.path.join(self.temp, "t"))
        start = [sys.executable, "-m", "ray.scripts.scripts", "start", "--block", "--disable-usage-stats"]
        quiet = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.procs = [subprocess.Popen([*start, "--head", f"--port={self.address.split(':')[1]}", "--num-cpus=0",
                                        "--include-dashboard=false", f"--temp-dir={self.temp}"], **quiet)]
        try:
            self._wait(1)
            for n in range(nodes):          # one at a time: two nodes starting at once on one host can both hang
                self.procs.append(subprocess.Popen([*start, f"--address={self.address}", f"--num-cpus={cpus}"],
                                                   **quiet))
                self._wait(2 + n)
        except BaseException:
            self.stop()
            raise

    def _wait(self, alive: int, limit: float = 120) -> None:
        deadline = time.monotonic() + limit
        probe = ("import ray; ray.init(address=%r, logging_level='ERROR'); "
                 "print(sum(n['Alive'] for n in ray.nodes()))" % self.address)
        while time.monotonic() < deadline:
            done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
            if done.returncode == 0 and done.stdout.strip().splitlines()[-1:] == [str(alive)]:
                return
            time.sleep(1)
        raise RuntimeError(f"the Ray cluster at {self.address} did not come up with {alive} nodes")

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.temp, ignore_errors=True)

    def __enter__(self) -> "LocalCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def write_project(root: Path, n: int) -> Path:
    """N examples, each a small MLP of its own width, two calls (so each also shows the shape recompile)."""
    factories = "".join(textwrap.dedent(f'''

        @dynlint.example
        def mlp_{i}():
            torch.manual_seed({i})
            width = {32 + 8 * i}
            model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.Linear(width, 4))
            return model, [(torch.randn(8, width),), (torch.randn(16, width),)]
    ''') for i in range(n))
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.dynlint]\n")
    (root / "dynlint_examples.py").write_text("import torch\nimport dynlint\n" + factories)
    return root


def verify(project: Path, *extra: str, env=None) -> tuple:
    """(wall seconds of the whole command, [(example, outcome, graphs, recompiles)])."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--verify", "--device", "cpu",
                           "--timing-processes", "1", "--timing-budget", "0.2", "--format", "json", "-o", "out.json",
                           "--exit-zero", *extra], cwd=project, env={**os.environ, **(env or {})},
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    examples = json.loads((project / "out.json").read_text())["verify"]["examples"]
    return wall, [(e["name"], e["outcome"], len(e["graphs"]), len(e["recompiles"])) for e in examples]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1,
                    help="rounds run first and not counted (Inductor's on-disk caches fill in the first)")
    args = ap.parse_args()
    project = write_project(Path(tempfile.mkdtemp(prefix="dynlint-sweep-")), args.examples)
    times: dict = {"local pool (1 CPU worker)": [], "Ray, 1 node x 1 CPU": [], "Ray, 2 nodes x 1 CPU": []}
    found: dict = {}
    with LocalCluster(nodes=1) as one, LocalCluster(nodes=2) as two:
        for r in range(args.warmup + args.rounds):
            for label, env in zip(times, [None, {"RAY_ADDRESS": one.address}, {"RAY_ADDRESS": two.address}]):
                wall, results = verify(project, *(["--cluster", "ray"] if env else []), env=env)
                if r >= args.warmup:
                    times[label].append(wall)
                    found.setdefault(label, results)
    base = statistics.median(times["local pool (1 CPU worker)"])
    one, two = times["Ray, 1 node x 1 CPU"], times["Ray, 2 nodes x 1 CPU"]
    print(f"{args.examples} CPU examples, {args.rounds} rounds after {args.warmup} not counted, "
          f"{os.cpu_count()} cores on this machine; 1 node / 2 nodes in each round: "
          f"{', '.join(f'{a / b:.2f}x' for a, b in zip(one, two))}\n")
    print("| where | median wall (s) | runs (s) | vs local pool | every example as the local pool's |")
    print("|---|---|---|---|---|")
    for label, walls in times.items():
        same = found[label] == found["local pool (1 CPU worker)"]
        print(f"| {label} | {statistics.median(walls):.1f} | {', '.join(f'{w:.1f}' for w in walls)} | "
              f"{base / statistics.median(walls):.2f}x | {'yes' if same else 'no'} |")
    shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    main()
