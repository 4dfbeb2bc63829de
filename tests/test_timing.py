"""How `--verify` measures a speedup (runtime_check/timing.py), on synthetic timings: a stable series stops
early with a narrow interval, a noisy one measures on and says how wide its interval is, equal times are no
measurable difference."""
import random

import pytest

from dynlint.runtime_check import timing


class Machine:
    """Calls that take `ms` each (eager, compiled), with Gaussian noise; a clock that advances with them."""

    def __init__(self, eager_ms, compiled_ms, noise, seed=1):
        self.ms = {"eager": eager_ms, "compiled": compiled_ms}
        self.noise, self.rng, self.now, self.calls = noise, random.Random(seed), 0.0, 0

    def clock(self):
        return self.now

    def block(self, fn, k):
        self.calls += k
        seconds = sum(max(0.05, 1 + self.rng.gauss(0, self.noise)) * self.ms[fn()] for _ in range(k)) / 1000
        self.now += seconds
        return seconds


def run(machine, budget_s=2.0):
    return timing.measure(machine.block, lambda: "eager", lambda: "compiled", budget_s, clock=machine.clock)


def test_a_stable_series_stops_early_with_a_narrow_interval():
    s = run(Machine(2.0, 1.0, noise=0.002))
    assert s.rounds == timing.MIN_ROUNDS and s.settled
    assert s.low <= s.speedup <= s.high and s.high - s.low < 0.01 and abs(s.speedup - 2.0) < 0.01
    assert s.eager_calls_per_block in (9, 10)                      # blocks of ~20 ms of 2 ms calls
    assert s.compiled_calls_per_block in (19, 20)                  # and of 1 ms calls
    assert s.verdict == timing.FASTER


def test_each_side_s_block_is_sized_from_its_own_call_time():
    """A 6.6 ms eager call and a 0.7 ms compiled one (a CUDA-graph replay): blocks of 3 eager calls and of 28
    compiled ones, each about BLOCK_S long; the speedup is that of one call (6.6 / 0.7)."""
    m = Machine(6.6, 0.7, noise=0.002)
    blocks = {"eager": [], "compiled": []}

    def block(fn, k):
        blocks[fn()].append(k)
        return m.block(fn, k)

    s = timing.measure(block, lambda: "eager", lambda: "compiled", 2.0, clock=m.clock)
    warm_up = 1
    assert set(blocks["eager"][warm_up:]) == {3} and set(blocks["compiled"][warm_up:]) == {28}
    assert (s.eager_calls_per_block, s.compiled_calls_per_block) == (3, 28)
    assert abs(s.eager_ms - 6.6) < 0.05 and abs(s.compiled_ms - 0.7) < 0.01 and abs(s.speedup - 6.6 / 0.7) < 0.1
    # blocks of one call each, when asked for, on both sides
    one = timing.measure(block, lambda: "eager", lambda: "compiled", 2.0, clock=m.clock, calls_per_block=1)
    assert (one.eager_calls_per_block, one.compiled_calls_per_block) == (1, 1)


def test_one_call_at_a_time_times_blocks_of_one_call():
    m = Machine(2.0, 1.0, noise=0.002)
    s = timing.measure(m.block, lambda: "eager", lambda: "compiled", 2.0, clock=m.clock, calls_per_block=1)
    assert s.eager_calls_per_block == s.compiled_calls_per_block == 1 and m.calls == 2 + 2 * s.rounds        # the warm-up pair, then one call each
    assert abs(s.speedup - 2.0) < 0.02


def test_a_noisy_series_measures_longer_and_widens_its_interval():
    stable, noisy = run(Machine(2.0, 1.0, noise=0.002)), run(Machine(2.0, 1.0, noise=0.8))
    assert noisy.rounds > stable.rounds
    assert noisy.high - noisy.low > 10 * (stable.high - stable.low)
    assert noisy.low <= 2.0 <= noisy.high


def test_the_budget_ends_a_series_that_does_not_settle():
    m = Machine(2.0, 1.0, noise=2.0)
    s = run(m, budget_s=0.5)
    assert not s.settled and s.rounds >= timing.MIN_ROUNDS
    assert m.now < 0.5 + 3 * 2 * timing.BLOCK_S * 4                # stopped soon after the budget


def test_equal_times_are_no_measurable_difference():
    s = run(Machine(1.0, 1.0, noise=0.1))
    assert s.low <= 1.0 <= s.high and s.verdict == timing.SAME
    slower = run(Machine(1.0, 2.0, noise=0.01))
    assert slower.verdict == timing.SLOWER and slower.high < 1.0


def test_the_interval_is_the_same_for_the_same_timings():
    rng = random.Random(3)
    eager, compiled = [rng.uniform(1, 2) for _ in range(30)], [rng.uniform(0.5, 1) for _ in range(30)]
    assert timing.interval(eager, compiled) == timing.interval(eager, compiled)


@pytest.mark.parametrize("compile_s, eager_ms, compiled_ms, calls", [
    (10.0, 2.0, 1.0, 10_000),            # 10 s to save 1 ms a call
    (10.0, 1.0, 2.0, None),              # slower: never pays off
    (0.0001, 2.0, 1.0, 1),
])
def test_break_even_calls(compile_s, eager_ms, compiled_ms, calls):
    assert timing.break_even_calls(compile_s, eager_ms, compiled_ms) == calls


def test_launch_bound():
    assert timing.launch_bound(1.0, 0.2) is True and timing.launch_bound(1.0, 0.9) is False
    assert timing.launch_bound(1.0, None) is None


def test_the_recommended_mode_is_the_fastest_measurably_better_one_whose_outputs_agree():
    from dynlint.runtime_check.results import Agreement, ExampleResult, ModeResult

    base = ExampleResult(name="m", path="x.py", line=1, factory="m", outcome="ok", eager_ms=2.0, compiled_ms=1.0,
                         speedup_low=1.9, speedup_high=2.1, agreement=Agreement("match"))

    def mode(name, speedup, low, high, agreement="match"):
        return ModeResult(name, speedup=speedup, speedup_low=low, speedup_high=high, agreement=agreement)
    assert base.recommended_mode is None                                      # no --modes
    assert base.with_(modes=(mode("reduce-overhead", 3.0, 2.8, 3.2),)).recommended_mode == "reduce-overhead"
    assert base.with_(modes=(mode("max-autotune", 2.05, 1.95, 2.2),)).recommended_mode == "default"   # overlaps
    assert base.with_(modes=(mode("reduce-overhead", 3.0, 2.8, 3.2, "mismatch"),)).recommended_mode == "default"
    slower = base.with_(compiled_ms=2.4, speedup_low=0.8, speedup_high=0.86,
                        modes=(mode("max-autotune", 0.9, 0.85, 0.95),))
    assert slower.recommended_mode is None and slower.verdict == timing.SLOWER


class Synced(Machine):
    """As Machine, and each block also pays a fixed cost (`sync_ms`): the synchronisation and the empty queue
    that the first call of a block starts from."""

    def __init__(self, eager_ms, compiled_ms, sync_ms, noise=0.002):
        super().__init__(eager_ms, compiled_ms, noise)
        self.sync_ms = sync_ms

    def block(self, fn, k):
        return super().block(fn, k) + self.sync_ms / 1000


def test_one_call_at_a_time_is_apart_from_blocks_for_a_call_as_short_as_a_synchronisation():
    # a 1.6 ms eager call against a 0.13 ms compiled one, 0.05 ms to synchronise (the bundled pointwise example
    # on an H200): blocks give about 11x, one call at a time about 9x
    short = Synced(1.6, 0.13, 0.05)
    blocks = timing.measure(short.block, lambda: "eager", lambda: "compiled", 2.0, clock=short.clock)
    one = timing.measure(short.block, lambda: "eager", lambda: "compiled", 2.0, clock=short.clock, calls_per_block=1)
    assert blocks.speedup > 10.5 and 8.5 < one.speedup < 9.5
    assert timing.apart(blocks, one) and timing.apart(one, blocks)
    # the same cost beside 2 ms and 1 ms calls moves one call at a time by under 5%: not apart
    long = Synced(2.0, 1.0, 0.05)
    blocks = timing.measure(long.block, lambda: "eager", lambda: "compiled", 2.0, clock=long.clock)
    one = timing.measure(long.block, lambda: "eager", lambda: "compiled", 2.0, clock=long.clock, calls_per_block=1)
    assert blocks.low > one.high and not timing.apart(blocks, one)


def process_rounds(eager_ms, compiled_ms, seed, rounds=30, noise=0.02):
    """One process's rounds: (eager ms, compiled ms) per round, each with Gaussian noise."""
    rng = random.Random(seed)
    return ([eager_ms * (1 + rng.gauss(0, noise)) for _ in range(rounds)],
            [compiled_ms * (1 + rng.gauss(0, noise)) for _ in range(rounds)])


def test_the_interval_across_processes_holds_each_process_s_figure():
    """As llama on an H200 (issue 37): 2.31x in one fresh process, 2.52x in another (9% apart), the host twice as
    fast in one. Each process's own interval misses the other's figure; the interval across them holds both."""
    fast_host, slow_host = process_rounds(6.1, 6.1 / 2.31, seed=1), process_rounds(11.3, 11.3 / 2.52, seed=2)
    (a, a_low, a_high), (b, b_low, b_high) = timing.interval(*fast_host), timing.interval(*slow_host)
    assert abs(a - 2.31) < 0.03 and abs(b - 2.52) < 0.03
    assert not a_low <= b <= a_high and not b_low <= a <= b_high            # one process's interval: too narrow
    speedup, low, high = timing.across_processes([fast_host, slow_host])
    assert low <= a_low < a < b < b_high <= high and low <= speedup <= high
    assert timing.verdict(low, high) == timing.FASTER


def test_processes_that_agree_leave_the_single_process_interval():
    one = process_rounds(2.0, 1.0, seed=1)
    assert timing.across_processes([one, one]) == timing.interval(*one)      # the same rounds twice: exactly it
    assert timing.across_processes([one]) == timing.interval(*one)
    _, low1, high1 = timing.interval(*one)
    speedup, low, high = timing.across_processes([one, process_rounds(2.0, 1.0, seed=2)])   # the same machine
    assert abs(speedup - 2.0) < 0.02 and low <= low1 and high1 <= high
    assert high - low < 1.5 * (high1 - low1)      # as wide, to within resampling (two draws of the same machine)
