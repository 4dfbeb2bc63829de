"""The worker pool: a task mapped over items, in worker processes when there is enough work to pay for starting
them. Each worker receives the run's shared state once (the pool's initializer; under fork, without pickling)
and then only the items; a task is `task(item)`, a module-level function (it travels by reference) that asks
`state()` for that state. (Not `task(state, item)` through a wrapper: a frame more in each worker leaves
Python's parser less stack for a deeply nested file.)"""
from __future__ import annotations

import os
import signal
import sys
import time
from typing import Callable, Optional

# the `state` of the run under way in this process (a worker's: its pool's), and whether Ctrl-C has come
_state = None
_interrupted = False


def state():
    """The state shared by the tasks of the run under way (KeyboardInterrupt in a worker once Ctrl-C has come)."""
    if _interrupted:
        raise KeyboardInterrupt      # concurrent.futures sends it back as the chunk's result: clean framing
    return _state


def run(task: Callable, items: list, jobs: int, state, step: Optional[Callable[[], None]] = None) -> list:
    """[task(item) for item in items], where task asks `state()` for `state`; in `jobs` worker processes when
    there are enough items. `step()`, when given, is called as each result arrives (progress)."""
    global _state
    if jobs <= 1 or len(items) < 16:
        _state = state
        try:
            return [_stepped(task(i), step) for i in items]
        finally:
            _state = None
    import concurrent.futures as cf
    import multiprocessing

    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker, initargs=(state,))
    try:
        out = [_stepped(r, step) for r in pool.map(task, items, chunksize=max(1, len(items) // (jobs * 8)))]
    except BaseException:
        # Ctrl-C (or a worker that died): drop the queued work, let each worker finish its file and exit;
        # terminate only one that does not (a kill mid-way through sending a result would hang us at exit).
        workers = list((getattr(pool, "_processes", None) or {}).values())
        for w in workers:
            try:
                os.kill(w.pid, signal.SIGINT)
            except (OSError, TypeError):
                pass
        pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + 5
        for w in workers:
            w.join(max(0.0, deadline - time.monotonic()))
        for w in workers:
            if w.is_alive():
                w.terminate()
                w.join(1)
        # and let the pool's own thread finish closing its pipe now: left to the interpreter's exit, its close
        # races Python's exit hook that writes to that pipe ("Exception ignored ... Bad file descriptor")
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is not None:
            manager.join(5)
        raise
    pool.shutdown()
    return out


def _init_worker(state) -> None:
    # Ctrl-C (from the terminal, to the whole process group, or from the parent) must not interrupt a worker
    # anywhere (mid-way through sending a result, it would leave the pool's pipe unreadable and the parent
    # hanging at exit, and print a traceback): note it, finish the file at hand, then refuse the rest.
    global _state, _interrupted
    signal.signal(signal.SIGINT, _note_interrupt)
    _state, _interrupted = state, False


def _note_interrupt(signum, frame) -> None:
    global _interrupted
    _interrupted = True


def _stepped(value, step):
    if step is not None:
        step()
    return value


def stepper(progress, stage: str, done: int, total: int) -> Optional[Callable[[], None]]:
    """A no-argument callback that advances `progress(stage, done, total)` by one; None without progress."""
    if progress is None:
        return None
    count = [done]
    progress(stage, done, total)

    def step() -> None:
        count[0] += 1
        progress(stage, count[0], total)
    return step
