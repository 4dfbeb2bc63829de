"""`--cluster ray`: the examples of --verify spread over a Ray cluster, one Ray task per example.

Each task asks for one GPU (`--device cuda`) or one CPU and runs the same worker as on one host
(`verify.run_example`: a fresh process per example, its own timeout, its process group killed afterwards) on
whichever node Ray gives it. No shared file system is assumed: Ray's runtime environment ships the project
(`working_dir`, what .gitignore ignores left out) and this dynlint (`py_modules`) to the nodes, and the outputs
`--fix --verify` compares travel with the task's result. The nodes need torch, as the workers of one host do.

A task whose node dies, or whose example times out, is run once more on another node; if that fails too, the
example is an error of its own, and the others go on.
"""
from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import dynlint
from dynlint.runtime_check.discover import ExampleSpec
from dynlint.runtime_check.results import ExampleResult
from dynlint.runtime_check.schedule import Slot
from dynlint.runtime_check.verify import run_example      # the one-host runner: on the nodes, and for unreadable files

INSTALL_HINT = "pip install 'dynlint[ray]'"
# what is never shipped to the nodes, beyond what .gitignore ignores (Ray honours it)
_EXCLUDES = [".git", "**/__pycache__", ".dynlint_cache", "**/.venv", "**/venv", "**/*.egg-info"]
_START_SLACK_S = 120.0          # a node's first task also installs the runtime environment


class ClusterUnavailable(RuntimeError):
    """Ray is missing, or the cluster cannot be reached or cannot run the examples."""


def connect(cluster: str, root: Path):
    """ray, connected to the cluster `cluster` names ("ray" or "ray://HOST:PORT") with the project and dynlint
    shipped to its nodes."""
    try:
        import ray
    except ImportError:
        raise ClusterUnavailable(f"--cluster ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    address = cluster if cluster.startswith("ray://") else (os.environ.get("RAY_ADDRESS") or "auto")
    env = {"working_dir": str(root), "excludes": _EXCLUDES,
           "py_modules": [str(Path(dynlint.__file__).resolve().parent)]}
    try:
        ray.init(address=address, runtime_env=env, log_to_driver=False, logging_level=logging.ERROR,
                 configure_logging=True)
    except Exception as e:                    # ConnectionError, ValueError (too large a working_dir), ...
        raise ClusterUnavailable(f"--cluster {cluster}: cannot use the Ray cluster at {address}: {e}") from None
    return ray


def cluster_device(ray, device: str) -> str:
    """"cpu" | "cuda" for the cluster: "auto" is CUDA when any node has a GPU."""
    gpus = ray.cluster_resources().get("GPU", 0)
    if device == "cuda" and gpus < 1:
        raise ClusterUnavailable("--device cuda: the Ray cluster has no GPU")
    return "cuda" if device == "cuda" or (device == "auto" and gpus >= 1) else "cpu"


def run_on_ray(specs: Sequence[ExampleSpec], root: Path, cluster: str, device: str, options: Dict,
               progress: Optional[Callable[[str, int, int], None]] = None) -> Tuple[str, List[ExampleResult]]:
    """(the device the examples ran on, their results in the order of `specs`). options: run_example's keyword
    arguments (timeout, passes, time_budget_s, modes, timing_processes, save_outputs, reference_outputs; the
    output paths are this host's, one per spec: {"save_outputs": [...], ...})."""
    if not specs:
        return ("cpu" if device == "auto" else device), []       # nothing to ship, no cluster to reach
    ray = connect(cluster, root)
    try:
        resolved = cluster_device(ray, device)
        return resolved, _Sweep(ray, resolved, specs, options, progress).run()
    finally:
        ray.shutdown()


class _Sweep:
    """The examples' tasks in flight, each retried once elsewhere when its node dies or it times out."""

    def __init__(self, ray, device: str, specs: Sequence[ExampleSpec], options: Dict, progress):
        self.ray, self.device, self.specs, self.options, self.progress = ray, device, specs, options, progress
        self.remote = ray.remote(max_retries=0, **({"num_gpus": 1} if device == "cuda" else {"num_cpus": 1}))(
            run_on_node)
        self.results: List[Optional[ExampleResult]] = [None] * len(specs)
        self.flight: Dict = {}        # ObjectRef -> (index, attempt, deadline)
        self.first_failure: Dict[int, str] = {}     # index -> why its first attempt failed

    def run(self) -> List[ExampleResult]:
        for i in range(len(self.specs)):
            self._submit(i, attempt=1)
        try:
            while self.flight:
                self._collect(*self.ray.wait(list(self.flight), num_returns=1, timeout=5.0))
        except BaseException:
            for ref in self.flight:       # interrupted: the tasks in flight are killed, their workers with them
                self.ray.cancel(ref, force=True)
            raise
        return self.results  # type: ignore[return-value]

    def _submit(self, i: int, attempt: int, avoid: str = "") -> None:
        spec, options = self.specs[i], dict(self.options)
        options["timeout"] = spec.timeout or options["timeout"]
        outputs = {k: options.pop(k)[i] for k in ("save_outputs", "reference_outputs") if options.get(k)}
        if spec.error:                  # nothing to run: said here, as on one host
            self._finish(i, run_example(spec, Slot(self.device, "ray"), Path(), Path(), **options), None)
            return
        reference = outputs.get("reference_outputs")
        blob = Path(reference).read_bytes() if reference and Path(reference).is_file() else None
        task = self.remote.options(scheduling_strategy=self._elsewhere(avoid)) if avoid else self.remote
        ref = task.remote(spec, self.device, options, bool(outputs.get("save_outputs")), blob)
        budget = options["timeout"] * (options["timing_processes"] + len(options["modes"])) + _START_SLACK_S
        self.flight[ref] = (i, attempt, time.monotonic() + budget)

    def _elsewhere(self, node: str):
        """A scheduling strategy for another alive node than `node` (any node when there is no other)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        need = "GPU" if self.device == "cuda" else "CPU"
        others = [n["NodeID"] for n in self.ray.nodes()
                  if n["Alive"] and n["NodeID"] != node and n["Resources"].get(need, 0) >= 1]
        return NodeAffinitySchedulingStrategy(others[0], soft=True) if others else "DEFAULT"

    def _collect(self, ready, pending) -> None:
        for ref in ready:
            i, attempt, _ = self.flight.pop(ref)
            try:
                done = self.ray.get(ref)
            except self.ray.exceptions.RayError as e:     # the node or the task's process died
                self._failed(i, attempt, "", f"its Ray task failed ({type(e).__name__}: {_first_line(e)})")
                continue
            result = ExampleResult.from_dict(done["result"])
            if result.outcome == "timeout":
                self._failed(i, attempt, done["node"], result.message, result)
                continue
            self._finish(i, result, done.get("outputs"))
        now = time.monotonic()
        for ref in [r for r in pending if self.flight[r][2] < now]:   # a task that outlived every timeout it has
            i, attempt, _ = self.flight.pop(ref)
            self.ray.cancel(ref, force=True)
            self._failed(i, attempt, "", "its Ray task outlived the example's time limits and was cancelled")

    def _failed(self, i: int, attempt: int, node: str, why: str, result: Optional[ExampleResult] = None) -> None:
        if attempt == 1:
            self.first_failure[i] = _first_line(why)
            self._submit(i, attempt=2, avoid=node or "-")
            return
        spec = self.specs[i]
        result = result or ExampleResult(name=spec.name, path=spec.path, line=spec.line, factory=spec.factory,
                                         outcome="error", slot="ray")
        self._finish(i, result.with_(message=why), None)

    def _finish(self, i: int, result: ExampleResult, outputs: Optional[bytes]) -> None:
        if i in self.first_failure:
            first = f"run twice on the Ray cluster, the second time on another node: the first attempt: " \
                    f"{self.first_failure[i]}"
            result = result.with_(message=f"{result.message}\n({first})" if result.message else first)
        save = (self.options.get("save_outputs") or [None] * len(self.specs))[i]
        if save and outputs is not None:
            Path(save).parent.mkdir(parents=True, exist_ok=True)
            Path(save).write_bytes(outputs)
        self.results[i] = result
        if self.progress:
            self.progress(result.name, sum(r is not None for r in self.results), len(self.specs))


def run_on_node(spec: ExampleSpec, device: str, options: Dict, save: bool, reference: Optional[bytes]) -> dict:
    """A Ray task: the example run by verify.run_example on this node, in the shipped copy of the project (the
    task's working directory). Ray pins the task to its GPU through CUDA_VISIBLE_DEVICES, which the worker
    inherits."""
    import ray

    context = ray.get_runtime_context()
    node = context.get_node_id()
    gpus = context.get_accelerator_ids().get("GPU", [])
    slot = Slot(device, f"ray:{node[:8]}/" + (f"cuda:{gpus[0]}" if device == "cuda" and gpus else "cpu"))
    with tempfile.TemporaryDirectory(prefix="dynlint-ray-") as tmp:
        paths = {}
        if reference is not None:
            paths["reference_outputs"] = os.path.join(tmp, "reference.pt")
            Path(paths["reference_outputs"]).write_bytes(reference)
        if save:
            paths["save_outputs"] = os.path.join(tmp, "outputs.pt")
        result = run_example(spec, slot, Path.cwd(), Path(tmp) / "work", **options, **paths)
        saved = Path(paths["save_outputs"]) if save else None
        outputs = saved.read_bytes() if saved and saved.is_file() else None
    return {"result": result.to_dict(), "node": node, "outputs": outputs}


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0][:200]
