"""Eager against compiled, with an interval: how `--verify` measures a speedup.

The method of PyTorch's own benchmark harness (benchmarks/dynamo/common.py, `speedup_experiment`): warm-up
past compilation and the first recompiles, then rounds that time eager and compiled alike, with the device
synchronised around each timing, and the ratio of the medians. Here each round times a block of calls of
each, and the two alternate which goes first from round to round, so that a clock or load drift hits both
alike. Each side's block holds as many calls as fill about BLOCK_S of its own calls (a 6.6 ms eager call 3, a
0.7 ms CUDA-graph replay 28), so both amortise the timer and the synchronisation alike; the figures compared
are per call. The interval is a bootstrap over
the rounds (whole rounds are resampled: a round's two blocks stay paired); rounds go on until the 95%
interval is within ±TARGET of the speedup, or the time budget is spent. An interval that holds 1.0 is no
measurable difference, neither a win nor a loss.

That interval is one process's. Between fresh processes a model's figure moved 3-9% and the host's speed up to
2x (docs/benchmarks.md), beyond it; so `--verify` times each example in several fresh worker processes
(`--timing-processes`, default 2) and reports an interval that spans them (`across_processes`).

A block of back-to-back calls is the throughput of a loop that keeps the device's queue full. One call at a
time with the device synchronised after each (what PyTorch's harness times, and a latency benchmark) can
differ a lot: for a launch-bound call (its kernels fill less than half of it), and for a call so short that
the fixed cost of a synchronisation and an empty queue (tens of microseconds) weighs on one side. On a GPU
the worker also measures that, blocks of one call (`calls_per_block=1`), and reports both when the call is
launch-bound or the two differ by more than TARGET, their intervals apart.

Nothing here imports torch: the worker hands in `time_block` (which synchronises the device).
"""
from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

BLOCK_S = 0.02            # one block of calls lasts about this long (many calls of a 10 µs function)
MAX_CALLS = 1000          # calls in a block at most
MIN_ROUNDS = 5
MAX_ROUNDS = 400
TARGET = 0.05             # stop once the interval is within ±5% of the speedup
LEVEL = 0.95
RESAMPLES = 1000
FASTER, SLOWER, SAME = "faster", "slower", "no measurable difference"


@dataclass(frozen=True)
class Speedup:
    eager_ms: float                 # median time of one call over the rounds
    compiled_ms: float
    speedup: float                  # eager_ms / compiled_ms
    low: float                      # the 95% interval of the speedup
    high: float
    rounds: int
    eager_calls_per_block: int      # each side's block fills about BLOCK_S with its own calls
    compiled_calls_per_block: int
    settled: bool                   # the interval reached ±TARGET (else the time budget ran out first)
    eager_rounds_ms: Tuple[float, ...] = ()      # one call's time in each round
    compiled_rounds_ms: Tuple[float, ...] = ()

    @property
    def verdict(self) -> str:
        return verdict(self.low, self.high)


def verdict(low: float, high: float) -> str:
    """An interval that holds 1.0 is no measurable difference, neither a win nor a loss."""
    return SAME if low <= 1.0 <= high else (FASTER if low > 1.0 else SLOWER)


def interval(eager: Sequence[float], compiled: Sequence[float], resamples: int = RESAMPLES,
             seed: int = 0) -> Tuple[float, float, float]:
    """(speedup, low, high): the ratio of the medians, and a percentile bootstrap interval over rounds."""
    n = len(eager)
    point = statistics.median(eager) / statistics.median(compiled)
    if n < 2:
        return point, point, point
    rng = random.Random(seed)            # the same timings always give the same interval
    ratios = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(statistics.median([eager[i] for i in picks]) / statistics.median([compiled[i] for i in picks]))
    ratios.sort()
    tail = (1 - LEVEL) / 2
    return point, ratios[int(tail * resamples)], ratios[min(resamples - 1, int((1 - tail) * resamples))]


def close_enough(point: float, low: float, high: float) -> bool:
    return high - low <= 2 * TARGET * point


def measure(time_block: Callable[[Callable[[], object], int], float], eager: Callable[[], object],
            compiled: Callable[[], object], budget_s: float,
            clock: Callable[[], float] = time.perf_counter, calls_per_block: Optional[int] = None) -> Speedup:
    """Rounds of eager and compiled until the interval is within ±TARGET or `budget_s` is spent (at least
    MIN_ROUNDS, unless one round alone takes more than the budget: then 3). time_block(fn, k): seconds for
    k calls of fn, the device synchronised before and after. calls_per_block: as many calls in every block
    (1: one call at a time), instead of as many of each side's own calls as fill BLOCK_S."""
    sides = (eager, compiled)
    one = [max(time_block(fn, 1), 1e-7) for fn in sides]    # the warm-up calls, timed: each side's own
    k = tuple(calls_per_block or max(1, min(MAX_CALLS, int(BLOCK_S / t))) for t in one)
    times: Tuple[List[float], List[float]] = ([], [])
    start = clock()
    settled = False
    while len(times[0]) < MAX_ROUNDS:
        order = (0, 1) if len(times[0]) % 2 == 0 else (1, 0)
        for which in order:
            times[which].append(time_block(sides[which], k[which]) / k[which] * 1000.0)
        spent = clock() - start
        rounds = len(times[0])
        if rounds >= MIN_ROUNDS and (rounds <= 20 or rounds % 5 == 0 or spent > budget_s):
            settled = close_enough(*interval(times[0], times[1], resamples=200))
            if settled or spent > budget_s:
                break
        elif rounds >= 3 and spent > 2 * budget_s:
            break
    point, low, high = interval(*times)
    return Speedup(statistics.median(times[0]), statistics.median(times[1]), point, low, high, len(times[0]), *k,
                   settled and close_enough(point, low, high), tuple(times[0]), tuple(times[1]))


def across_processes(rounds: Sequence[Tuple[Sequence[float], Sequence[float]]]) -> Tuple[float, float, float]:
    """(speedup, low, high) over the rounds of several fresh processes, each (eager ms, compiled ms) per round:
    the ratio of the medians over every process's rounds, and the union of each process's own bootstrap
    interval (`interval`), widened to hold that ratio if it does not.

    The union rather than a bootstrap that resamples processes, then rounds: the spread to cover is between
    processes, and a run affords two or three of them, too few to resample (two give three distinct draws).
    The union holds every process's figure with its own uncertainty, and processes that agree leave it the
    single process's interval. It grows with each process that lands further out and never narrows: a range
    to expect the figure in, not the precision of a mean over processes. (Whether two processes hold a third's
    figure, the user's, has not been measured: docs/benchmarks.md.)"""
    eager = [t for e, _ in rounds for t in e]
    compiled = [t for _, c in rounds for t in c]
    point = statistics.median(eager) / statistics.median(compiled)
    own = [interval(e, c)[1:] for e, c in rounds]
    return point, min([point] + [low for low, _ in own]), max([point] + [high for _, high in own])


def apart(a: Speedup, b: Speedup) -> bool:
    """Whether two measurements of one speedup disagree: by more than TARGET, their intervals apart."""
    return abs(a.speedup - b.speedup) > TARGET * min(a.speedup, b.speedup) and (a.high < b.low or b.high < a.low)


def launch_bound(wall_ms: Optional[float], device_ms: Optional[float]) -> Optional[bool]:
    """Whether a call spends most of its time on the host (launching kernels) rather than in them."""
    if not wall_ms or device_ms is None:
        return None
    return device_ms < 0.5 * wall_ms


def break_even_calls(compile_s: Optional[float], eager_ms: Optional[float], compiled_ms: Optional[float]
                     ) -> Optional[int]:
    """Calls after which compiling has paid for itself: compile seconds / time saved per call (None when a
    call saves nothing)."""
    if compile_s is None or not eager_ms or not compiled_ms or compiled_ms >= eager_ms:
        return None
    return max(1, round(compile_s * 1000.0 / (eager_ms - compiled_ms)))
