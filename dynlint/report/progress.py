"""Progress bars on stderr for long runs: `--verify` (one step per example) and large static runs.

Both take the same callback, `progress(label, done, total)`: the engine calls it with its stage ("reading",
"checking") as the label, `run_verify` with the name of the example that is running. The bars come from
tqdm, imported only when a bar is actually drawn, so a small or non-interactive run never pays for it.
They stay silent when stderr is not a terminal or the `CI` environment variable is set.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Optional, TextIO, Tuple

LARGE_RUN = 200          # static runs over this many files get a bar; smaller ones finish before it would matter


def wanted(stream: Optional[TextIO] = None) -> bool:
    """Whether to draw bars on `stream` (default stderr): a terminal, and not under CI."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):     # no isatty, or a closed stream
        return False


def _size(stream: TextIO) -> Tuple[int, int]:
    try:
        size = os.get_terminal_size(stream.fileno())
        return size.columns, size.lines
    except (AttributeError, OSError, ValueError):
        return 0, 0


class _Bar:
    """One tqdm bar at a time, opened lazily; calls may come from several threads (verify slots)."""

    def __init__(self, stream: Optional[TextIO]) -> None:
        self._stream = stream
        self._bar = None
        self._lock = threading.Lock()

    def _open(self, desc: str, total: int, unit: str):
        from tqdm import tqdm  # lazily: only a run that shows a bar imports it

        stream = self._stream or sys.stderr
        # tqdm draws nothing on a terminal that reports its size as 0 x 0 (some pseudo-terminals): assume 80 x 24
        columns, lines = _size(stream)
        size = {"dynamic_ncols": True} if columns > 0 else {"ncols": 80}
        if lines <= 0:
            size["nrows"] = 24
        self._bar = tqdm(total=total, desc=desc, unit=unit, file=stream, leave=False, mininterval=0.1, **size)
        return self._bar

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class StageBars(_Bar):
    """For the static engine: a bar per stage, when the run (its first stage) has at least `min_total` files.
    Later stages of a large run get a bar whatever their size: checking is the slow part."""

    def __init__(self, min_total: int = LARGE_RUN, stream: Optional[TextIO] = None) -> None:
        super().__init__(stream)
        self.min_total = min_total
        self._stage = ""
        self._large: Optional[bool] = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            if stage != self._stage:
                self._stage = stage
                if self._large is None:
                    self._large = total >= self.min_total
                if self._bar is not None:
                    self._bar.close()
                    self._bar = None
                if self._large and done < total:
                    self._open(stage, total, "file").update(done)
                return
            if self._bar is not None:
                self._bar.update(done - self._bar.n)


class ExampleBar(_Bar):
    """For `--verify`: one bar over all examples, naming the one that is running."""

    def __init__(self, desc: str = "verify", stream: Optional[TextIO] = None) -> None:
        super().__init__(stream)
        self.desc = desc

    def __call__(self, current: str, done: int, total: int) -> None:
        with self._lock:
            bar = self._bar if self._bar is not None else self._open(self.desc, total, "example")
            bar.set_postfix_str(current, refresh=False)
            bar.update(done - bar.n)
            bar.refresh()


def stage_bars(quiet: bool = False):
    """Context manager giving the engine's callback, or None when bars are not wanted."""
    return StageBars() if not quiet and wanted() else contextlib.nullcontext()


def example_bar(quiet: bool = False):
    """Context manager giving run_verify's callback, or None when bars are not wanted."""
    return ExampleBar() if not quiet and wanted() else contextlib.nullcontext()
