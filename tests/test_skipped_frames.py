"""No recompile findings in the frames Dynamo skips (analysis/resumed.py, `in_skipped_frames`): a graph break inside
a loop makes Dynamo run the whole function eagerly, so nothing its own code reads is guarded. Each probe runs under
real Dynamo; dynlint's recompile findings must stand only at lines whose guards failed."""
import textwrap

from conftest import dynamo_guard_lines, line_of
from dynlint import api
from dynlint.rules import all_rules

RECOMPILES = {r.code for r in all_rules() if r.recompiles}

SOURCE = textwrap.dedent("""
    import torch


    @torch.compile
    def skipped(x, n, flag):
        y = x * n
        if flag:
            y = y + 1
        for i in range(3):
            if y.sum() > 0:
                y = y - 1
        return y


    @torch.compile
    def compiled(x, n):
        y = x * n
        for i in range(3):
            if n > 10:
                print(y.sum().item())
            y = y - 1
        return y


    def main():
        for n in range(5):
            skipped(torch.ones(3), n, n % 2 == 0)
            compiled(torch.ones(3), n)
""")


def test_a_function_skipped_for_a_break_in_its_loop_is_not_guarded(tmp_path):
    """`skipped` breaks in every iteration of its loop: its reads of `n` and `flag` install no guard. `compiled`'s
    break is under an `if` its calls never take: it compiles, and `n` recompiles it where it is read."""
    guards = dynamo_guard_lines(tmp_path, SOURCE, lineless=False)
    assert guards == [line_of(SOURCE, "def compiled") + 1]
    found = sorted(f.line for f in api.check_source(SOURCE, filename="probe.py").findings if f.code in RECOMPILES)
    assert found == guards


def test_only_the_frame_that_meets_the_break_in_a_loop_is_skipped(tmp_path):
    """A break outside loops ends the first frame, whose reads stay guarded; the frame Dynamo resumes after it
    meets a break in a loop and is skipped: `i` recompiles at its first read only. With the loop's break first,
    the whole function is skipped and nothing recompiles."""
    source = textwrap.dedent("""
        import torch


        @torch.compile
        def step(x, table, i):
            a = table[i]
            y = x * a
            print("tick")
            for _ in range(2):
                print("again")
            return y + table[i + 1]


        def main():
            table = torch.arange(10.0)
            for i in range(3):
                step(torch.ones(3), table, i)
    """)
    guards = dynamo_guard_lines(tmp_path, source, lineless=False)
    assert guards == [line_of(source, "a = table[i]")]
    found = sorted(f.line for f in api.check_source(source, filename="probe.py").findings if f.code in RECOMPILES)
    assert found == guards
    looped = source.replace('    print("tick")\n', "")
    assert dynamo_guard_lines(tmp_path, looped, lineless=False) == []
    assert [f for f in api.check_source(looped, filename="probe.py").findings if f.code in RECOMPILES] == []


def test_a_frame_that_may_end_before_its_loop_keeps_its_guards(tmp_path):
    """The first call sets `self.scales` in a method that breaks the graph (a `float()` of a tensor), under the
    test: Dynamo ends the frame at that call, before the loop whose break skips the rest, so the test is
    guarded, and the second call recompiles there."""
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Pool(nn.Module):
            def __init__(self):
                super().__init__()
                self.scales = None

            def setup(self, x):
                self.scales = [float(x.max())]

            def forward(self, x, levels):
                if self.scales is None:
                    self.setup(x)
                out = []
                for level in range(2):
                    idx = torch.where(levels == level)[0]
                    out.append(x[idx] * self.scales[0])
                return out


        def main():
            pool = torch.compile(Pool())
            for _ in range(2):
                pool(torch.ones(4), torch.tensor([0, 1, 1, 0]))
    """)
    guards = dynamo_guard_lines(tmp_path, source, lineless=False)
    assert guards == [line_of(source, "if self.scales is None:")]
    found = sorted(f.line for f in api.check_source(source, filename="probe.py").findings if f.code in RECOMPILES)
    assert found == guards


LOGGED = textwrap.dedent("""
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self._logged = {}

        def log(self, name, value):
            if isinstance(value, torch.Tensor):
                value = value.detach().float().item()
            self._logged[name] = value

        def forward(self, x):
            y = self.lin(x)
            self.log("loss", y.sum())
            self.log("mean", y.mean())
            return y


    def main():
        m = torch.compile(Net(), backend="eager")
        for _ in range(4):
            m(torch.randn(2, 3))
""")


def test_state_changed_in_a_frame_resumed_with_no_tensor_work_is_not_guarded(tmp_path):
    """A logging helper: `.item()` (a break) under `isinstance`, then `self._logged[name] = value`. The frame
    Dynamo resumes after the break does no tensor work, so it is not compiled: the dict's new keys fail no
    guard. Without the break, the store is compiled and the next call recompiles on the dict's keys."""
    store = line_of(LOGGED, "self._logged[name] = value")
    assert dynamo_guard_lines(tmp_path, LOGGED, lineless=False) == []
    assert not [f for f in api.check_source(LOGGED, filename="probe.py").findings if f.code in RECOMPILES]
    unbroken = LOGGED.replace("value = value.detach().float().item()", "value = value.detach().float()")
    assert dynamo_guard_lines(tmp_path, unbroken, lineless=False) == [store]
    assert [f.line for f in api.check_source(unbroken, filename="probe.py").findings if f.code == "DYN306"] == [store]


SKIPPING_BREAKS = textwrap.dedent("""
    import torch


    @torch.compile(backend="eager")
    def track(x, hist):
        try:
            hist.append(float(x.abs().max()))
            hist.append(float(x.abs().min()))
        except RuntimeError:
            pass
        for i in range(2):
            x = x + 1
            print(i)
        return x * x.sum().item()


    def main():
        hist = []
        for _ in range(2):
            track(torch.randn(4), hist)
""")


def test_no_break_below_one_that_makes_dynamo_skip_the_function(tmp_path):
    """A break inside a `try` block makes Dynamo skip the whole function: it reports that break and runs the
    function eagerly, never meeting the ones below it (the second `float()`, the `print` in the loop, the
    `.item()`); dynlint reports the first alone. After a break in a loop, the breaks below the loop are still
    reported."""
    from conftest import dynamo_breaks
    first = line_of(SKIPPING_BREAKS, "hist.append(float(x.abs().max()))")
    assert {line for line, _ in dynamo_breaks(tmp_path, SKIPPING_BREAKS)} == {first}
    breaks = {r.code for r in all_rules() if r.gb_types}
    found = api.check_source(SKIPPING_BREAKS, filename="probe.py").findings
    assert sorted({f.line for f in found if f.code in breaks}) == [first]


RELAX = textwrap.dedent("""
    import torch


    @torch.compile(backend="eager")
    def relax(x, tol: float = 1e-4, max_iters: int = 8):
        it = 0
        while (x.abs() > tol).any() and it < max_iters:
            x = x * 0.5
            it += 1
        return x


    def main():
        for s in (1.0, 4.0, 16.0):
            relax(torch.full((3,), s))
""")


def test_a_break_in_a_while_test_before_its_last_operand_skips_the_function(tmp_path):
    """`while x.any() and it < n:`: the rest of the test is code inside the loop, where Dynamo cannot resume, so
    it skips the function ("graph break in loop") and nothing recompiles; with the breaking operand last
    (`while it < n and x.any():`) it resumes the body at each iteration and guards the counter (DYN519)."""
    from conftest import dynamo_breaks
    from dynlint.analysis.names import SKIPS_FRAME
    test = line_of(RELAX, "while (x.abs() > tol).any()")
    assert any("graph break in loop" in kinds for _, kinds in dynamo_breaks(tmp_path, RELAX))
    assert dynamo_guard_lines(tmp_path, RELAX, lineless=False) == []
    found = api.check_source(RELAX, filename="probe.py").findings
    assert [f.line for f in found if f.code == "DYN101" and SKIPS_FRAME in f.message] == [test]
    assert not [f for f in found if f.code in RECOMPILES]
    last = RELAX.replace("(x.abs() > tol).any() and it < max_iters", "it < max_iters and (x.abs() > tol).any()")
    counted = line_of(last, "it += 1")
    assert counted in dynamo_guard_lines(tmp_path, last, lineless=False)
    assert [f.line for f in api.check_source(last, filename="probe.py").findings if f.code == "DYN519"] == [counted]


LOOP_THEN_BREAK = textwrap.dedent("""
    import heapq

    import torch


    @torch.compile(backend="eager")
    def k_best(candidates, k):
        heap = []
        for i, c in enumerate(candidates):
            heapq.heappush(heap, (c.sum(), i))
        return [i for _, i in heapq.nsmallest(k, heap)]


    def main():
        for _ in range(2):
            k_best(list(torch.randn(4, 3)), 2)
""")


def test_breaks_below_a_loop_that_skips_the_function_are_still_reported(tmp_path):
    from conftest import dynamo_breaks
    below = line_of(LOOP_THEN_BREAK, "return [i for _, i in heapq.nsmallest(k, heap)]")
    assert below in {line for line, _ in dynamo_breaks(tmp_path, LOOP_THEN_BREAK)}
    breaks = {r.code for r in all_rules() if r.gb_types}
    found = api.check_source(LOOP_THEN_BREAK, filename="probe.py").findings
    assert below in {f.line for f in found if f.code in breaks}
