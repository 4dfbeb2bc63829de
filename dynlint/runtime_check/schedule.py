"""Spread examples over worker slots: one worker per GPU at a time, or `jobs` CPU workers.

A slot is where one worker runs; a GPU slot pins its worker to one GPU through CUDA_VISIBLE_DEVICES.
`plan_slots` is pure and `run_on_slots` takes the worker launcher as a function, so several devices
can be simulated on a CPU-only machine in tests.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Slot:
    device: str                               # "cpu" | "cuda": what the worker runs the example on
    label: str                                # "cpu", "cpu#2", "cuda:1" (shown in the report)
    env: Tuple[Tuple[str, str], ...] = ()     # extra environment of its workers
    threads: int = 0                          # CPU threads for its worker (0: leave the default)

    def environ(self, base: Dict[str, str]) -> Dict[str, str]:
        env = {**base, **dict(self.env)}
        if self.threads and "OMP_NUM_THREADS" not in base:     # a thread count the user chose wins
            env["OMP_NUM_THREADS"] = str(self.threads)
        return env


def plan_slots(device: str, cuda_count: int, jobs: Optional[int] = None,
               visible_devices: Optional[str] = None, cpu_count: int = 0) -> List[Slot]:
    """Slots for a run. device: "cpu" | "cuda" (already resolved from "auto").

    CUDA: one slot per visible GPU (`jobs` caps how many are used). The i-th slot gets the i-th entry of
    the caller's CUDA_VISIBLE_DEVICES, so a restricted set of GPUs stays restricted.
    CPU: `jobs` slots, default 1 - concurrent workers would disturb each other's timings. Several CPU
    workers share the `cpu_count` cores: OpenMP threads of one worker waiting for a core another worker
    holds make every parallel region stall, which ruins timings far more than fewer threads do.
    """
    if device == "cuda":
        if cuda_count < 1:
            raise ValueError("device 'cuda' requested but no CUDA device is visible")
        ids = [v.strip() for v in visible_devices.split(",") if v.strip()] if visible_devices else []
        ids = ids[:cuda_count] if ids else [str(i) for i in range(cuda_count)]
        ids = ids[:jobs] if jobs else ids
        return [Slot("cuda", f"cuda:{gpu}", (("CUDA_VISIBLE_DEVICES", gpu),)) for gpu in ids]
    n = max(1, jobs or 1)
    threads = max(1, cpu_count // n) if n > 1 and cpu_count else 0
    return [Slot("cpu", "cpu" if n == 1 else f"cpu#{i}", threads=threads) for i in range(n)]


def run_on_slots(items: Sequence[T], slots: Sequence[Slot], run_one: Callable[[T, Slot], R],
                 on_interrupt: Callable[[], None] = lambda: None) -> List[R]:
    """Run `run_one(item, slot)` for every item; each slot runs one item at a time. Results keep item order.

    If the caller is interrupted (Ctrl-C) while waiting, no new item starts and `on_interrupt` runs
    (it kills the workers in flight) before the interrupt propagates.
    """
    if not slots:
        raise ValueError("no slots to run on")
    todo: "queue.Queue[int]" = queue.Queue()
    for i in range(len(items)):
        todo.put(i)
    results: List[Optional[R]] = [None] * len(items)
    errors: List[BaseException] = []
    stop = threading.Event()

    def drain(slot: Slot) -> None:
        while not errors and not stop.is_set():
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            try:
                results[i] = run_one(items[i], slot)
            except BaseException as e:       # surfaced in the caller's thread below
                errors.append(e)

    threads = [threading.Thread(target=drain, args=(slot,), daemon=True) for slot in slots[:max(1, len(items))]]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:
        stop.set()
        on_interrupt()
        raise
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]
