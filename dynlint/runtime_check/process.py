"""Run one worker in its own process group, with a timeout, and leave nothing running afterwards.

User code may hang, fork helpers (Inductor's compile pool, DataLoader workers, a stray `sleep`), crash or
print megabytes. The worker starts a new session, so its whole group can be killed at once; its output
goes to a log file of which only the tail is read. A descendant that leaves the group (`setsid`, a daemon)
is found by a tag in its environment, which every descendant inherits, and killed too (Linux, /proc). One
that also drops its environment (`env -i`) is found another way: while workers run, this process is a
child subreaper (Linux `prctl`), so a descendant whose parent dies is re-parented to it rather than to init;
once no worker runs, every child of this process that is neither a worker nor one it had before the first
worker started is such an orphan, and is killed.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

LOG_TAIL_BYTES = 4000
# Workers run in their own sessions, so Ctrl-C in the terminal does not reach them: the parent kills
# whatever is still running when it is interrupted (kill_running).
_RUNNING: Dict[subprocess.Popen, str] = {}          # worker -> the tag in its environment
_RUNNING_LOCK = threading.Lock()
TAG = "DYNLINT_VERIFY_WORKER"
PR_SET_CHILD_SUBREAPER = 36                         # linux/prctl.h
# workers in run_isolated; whether this process is their subreaper; its children before the first worker
_ADOPTING = {"workers": 0, "on": False, "before": frozenset()}


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
    tag = secrets.token_hex(8)
    with _RUNNING_LOCK:
        if _ADOPTING["workers"] == 0:
            _ADOPTING["on"] = _subreaper(True)
            _ADOPTING["before"] = frozenset(_children()) if _ADOPTING["on"] else frozenset()
        _ADOPTING["workers"] += 1
    proc = None
    timed_out = False
    try:
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env={**env, TAG: tag}, cwd=cwd, **_new_group())
        with _RUNNING_LOCK:
            _RUNNING[proc] = tag
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # Always, not only on timeout: the worker's children (user helpers, compile pools) die with it.
            _kill_group(proc)
            proc.wait()
            _kill_tagged(tag)
    finally:
        with _RUNNING_LOCK:
            _RUNNING.pop(proc, None)
            _ADOPTING["workers"] -= 1
            if _ADOPTING["workers"] == 0 and _ADOPTING["on"]:
                _kill_adopted()
                _ADOPTING["on"] = not _subreaper(False)
    return ProcessOutcome(proc.returncode, timed_out, time.perf_counter() - start, read_tail(log_path))


def kill_running() -> None:
    """Kill the process groups of every worker still running (the parent was interrupted), and the orphans."""
    with _RUNNING_LOCK:
        running = list(_RUNNING.items())
    for proc, tag in running:
        _kill_group(proc)
        _kill_tagged(tag)
    with _RUNNING_LOCK:
        if _ADOPTING["on"]:
            _kill_adopted(keep={proc.pid for proc, _ in running})


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


def _kill_tagged(tag: str) -> None:
    """Kill every process whose environment carries this worker's tag: descendants that left its process
    group."""
    if os.path.isdir("/proc"):              # not Linux: only the group is killed
        _kill_until_gone(lambda: _tagged(tag))


def _kill_until_gone(find, reap: bool = False, rounds: int = 10) -> None:
    """SIGKILL the pids `find()` gives, and look again until it gives none (one may fork while it is being
    killed). `reap`: they are children of this process: wait for them (2 s at most), or they stay zombies."""
    for _ in range(rounds):
        found = find()
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not reap:
            time.sleep(0.05)
            continue
        deadline = time.monotonic() + 2.0
        for pid in found:
            try:
                while os.waitpid(pid, os.WNOHANG) == (0, 0) and time.monotonic() < deadline:
                    time.sleep(0.01)
            except ChildProcessError:
                pass


def _tagged(tag: str) -> List[int]:
    """pids of the processes (of this user) whose environment holds TAG=tag."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(name))
        except OSError:                      # gone, or another user's
            continue
    return found


def _subreaper(on: bool) -> bool:
    """Make this process a child subreaper (or stop): Linux only; False where it is not available."""
    if not sys.platform.startswith("linux"):    # pragma: no cover - macOS, Windows: no prctl
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):           # pragma: no cover
        return False


def _children() -> List[int]:
    """pids of the processes whose parent is this one (/proc), zombies included."""
    me, found = os.getpid(), []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()    # after "pid (comm)": state, ppid, ...
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def _kill_adopted(keep=()) -> None:
    """Kill and reap the children of this process that it did not start: orphans of the workers' descendants,
    re-parented here. Workers (`keep`, and those still registered), pool processes and the children there were
    before the first worker started are left alone. Only while this process is a subreaper (else it adopts
    nothing, and a child of its own it started meanwhile is no orphan); called with _RUNNING_LOCK held."""

    def orphans() -> List[int]:
        ours = set(keep) | {p.pid for p in _RUNNING} | {p.pid for p in multiprocessing.active_children()}
        return [pid for pid in _children() if pid not in ours and pid not in _ADOPTING["before"]]
    _kill_until_gone(orphans, reap=True)
