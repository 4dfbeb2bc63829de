"""Run one worker in its own process group, with a timeout, and leave nothing running afterwards.

User code may hang, fork helpers (Inductor's compile pool, DataLoader workers, a stray `sleep`), crash or
print megabytes. The worker starts a new session, so its whole group can be killed at once; its output
goes to a log file of which only the tail is read.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Set

LOG_TAIL_BYTES = 4000
# Workers run in their own sessions, so Ctrl-C in the terminal does not reach them: the parent kills
# whatever is still running when it is interrupted (kill_running).
_RUNNING: Set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.Lock()


@dataclass(frozen=True)
class ProcessOutcome:
    returncode: Optional[int]     # negative: killed by that signal (POSIX)
    timed_out: bool
    wall_s: float
    log_tail: str                 # the last few KB of stdout + stderr

    def describe_exit(self) -> str:
        """'exit code 3', 'killed by SIGSEGV', ..."""
        rc = self.returncode
        if rc is not None and rc < 0:
            try:
                return f"killed by {signal.Signals(-rc).name}"
            except ValueError:
                return f"killed by signal {-rc}"
        return f"exit code {rc}"


def run_isolated(cmd: Sequence[str], *, env: Dict[str, str], timeout: float, log_path: str,
                 cwd: Optional[str] = None) -> ProcessOutcome:
    start = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, **_new_group())
    with _RUNNING_LOCK:
        _RUNNING.add(proc)
    timed_out = False
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # Always, not only on timeout: the worker's children (user helpers, compile pools) die with it.
        _kill_group(proc)
        proc.wait()
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    return ProcessOutcome(proc.returncode, timed_out, time.perf_counter() - start, read_tail(log_path))


def kill_running() -> None:
    """Kill the process groups of every worker still running (the parent was interrupted)."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for proc in running:
        _kill_group(proc)


def read_tail(path: str, size: int = LOG_TAIL_BYTES) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _new_group() -> dict:
    if sys.platform == "win32":  # pragma: no cover - no process groups to kill; CREATE_NEW_PROCESS_GROUP is the closest
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}        # setsid(): the worker leads a new process group


def _kill_group(proc: subprocess.Popen) -> None:
    if sys.platform == "win32":  # pragma: no cover
        proc.kill()
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)   # the group id is the worker's pid (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass                                  # the group is already empty
