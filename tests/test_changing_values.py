"""Values that change from one compiled call to the next with no loop variable naming them, under real Dynamo:
the elements a loop binds through `zip`/`itertools.product`/`enumerate`; a number an object keeps that the loop
changes, directly or through a method of its class; a number drawn afresh from a random generator. Dynamo guards
each at its first read in the compiled code; DYN501 must stand at that line (and nowhere when nothing changes)."""
import json
import textwrap

import pytest

from conftest import dynamo_guard_lines, line_of, observe_package, write_tree
from dynlint import api


def _package(tmp_path, files: dict):
    """A project of one package `pkg` under `tmp_path`: {file name in the package: text}."""
    return write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "pkg/__init__.py": "",
                                 **{f"pkg/{name}": text for name, text in files.items()}}) / "pkg"


def _found(source: str) -> list:
    return sorted(f.line for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN501")


GRID = textwrap.dedent("""
    import itertools

    import torch


    def smooth(x, kernel, weight):
        y = torch.nn.functional.avg_pool1d(x, kernel, stride=1)
        return y * weight


    def search(fn, x, kernel, weight):
        return fn(x, kernel, weight).sum()


    def main():
        fn = torch.compile(smooth)
        x = torch.randn(1, 2, 16)
        for kernel, weight in itertools.product([3], [0.5, 2.0]):
            search(fn, x, kernel, weight)
""")


@pytest.mark.parametrize("loop", [
    "for kernel, weight in itertools.product([3], [0.5, 2.0]):",
    "for kernel, weight in zip([3, 3], [0.5, 2.0]):",
    "for i, (kernel, weight) in enumerate(zip([3, 3], [0.5, 2.0])):",
    "for weight, kernel in reversed(list(zip([2.0, 0.5], [3, 3]))):",
])
def test_the_elements_a_loop_binds_through_zip_and_product(tmp_path, loop):
    """Each row of `zip`/`product` is one element of each argument: `weight` takes 0.5, then 2.0, and Dynamo
    guards it where `smooth` first multiplies with it (the kernel, the same each time, is not reported)."""
    source = GRID.replace("for kernel, weight in itertools.product([3], [0.5, 2.0]):", loop)
    guards = dynamo_guard_lines(tmp_path, source)
    assert guards == [line_of(source, "return y * weight")]
    assert _found(source) == guards


SCALER = textwrap.dedent("""
    import torch


    class Annealer:
        def __init__(self, start=1.0):
            self.temperature = start

        def decay(self):
            self.temperature *= 0.5


    def soften(logits, temperature):
        return torch.softmax(logits / temperature, dim=-1)


    def main():
        fn = torch.compile(soften)
        annealer = Annealer()
        for _ in range(3):
            fn(torch.randn(4, 5), annealer.temperature)
            annealer.decay()
""")


@pytest.mark.parametrize("change", [
    None,                                                          # a method of its class changes it
    ("        annealer.decay()\n", "        annealer.temperature = annealer.temperature / 2\n"),   # directly
    # `__call__` sets it, from a parameter; the class says it is a float where `__init__` sets it
    ("    def decay(self):\n        self.temperature *= 0.5\n",
     "    def __call__(self, value):\n        self.temperature = value\n"),
])
def test_a_number_an_object_keeps_changed_by_the_loop(tmp_path, change):
    source = SCALER
    if change:
        source = source.replace(*change)
        assert source != SCALER
    if change and "__call__" in change[1]:
        source = source.replace("annealer.decay()", "annealer(0.25)")
    guards = dynamo_guard_lines(tmp_path, source)
    assert guards == [line_of(source, "return torch.softmax(logits / temperature, dim=-1)")]
    assert _found(source) == guards


def test_an_object_the_loop_does_not_change_is_not_reported(tmp_path):
    """A method that changes something else: the temperature is the same at every call, nothing recompiles."""
    source = SCALER.replace("self.temperature *= 0.5", "self.calls = 1")
    assert dynamo_guard_lines(tmp_path, source) == []
    assert _found(source) == []


DRAWN = textwrap.dedent("""
    import random

    import numpy as np
    import torch


    def blend(x, y, lam, flip):
        if flip:
            x = x.flip(-1)
        return lam * x + (1 - lam) * y


    def main():
        random.seed(1)
        rng = np.random.default_rng(3)
        fn = torch.compile(blend)
        for _ in range(4):
            lam = rng.uniform(0.2, 0.8)
            flip = False
            fn(torch.randn(6), torch.randn(6), lam, flip)
""")


def test_a_number_a_generator_draws_at_each_call(tmp_path):
    """`rng.uniform(...)` of a NumPy generator the function made: a new float at each call, guarded where `blend`
    first computes with it (`flip`, the same each time, is not reported)."""
    guards = dynamo_guard_lines(tmp_path, DRAWN)
    assert guards == [line_of(DRAWN, "return lam * x + (1 - lam) * y")]
    assert _found(DRAWN) == guards


def test_a_bool_drawn_at_each_call(tmp_path):
    """`flip = random.random() < 0.5`: a bool that changes with the draw, guarded at `if flip:`; the float,
    fixed here, is not."""
    source = DRAWN.replace("flip = False", "flip = random.random() < 0.5").replace(
        "lam = rng.uniform(0.2, 0.8)", "lam = 0.5")
    guards = dynamo_guard_lines(tmp_path, source)
    assert guards == [line_of(source, "if flip:")]
    assert _found(source) == guards


DISTILLER = '''
import torch


def soft_targets(logits, temperature):
    return torch.softmax(logits / temperature, dim=-1)


class Trainer:
    def __init__(self, temperature=4.0):
        self.temperature = temperature
        self.targets = torch.compile(soft_targets)

    def step(self, logits):
        return self.targets(logits, self.temperature).sum()
'''

LOOP = '''
import torch

from pkg.trainer import Trainer


def main():
    trainer = Trainer()
    for epoch in range(2):
        for _ in range(2):
            trainer.step(torch.randn(3, 5))
        trainer.temperature = trainer.temperature / 2
'''


def test_an_attribute_a_script_in_another_file_changes_between_calls_of_the_method(cli, tmp_path, monkeypatch):
    """`self.temperature` handed to compiled code by `step`, which a script in another file calls in a loop that
    halves the trainer's temperature between epochs: guarded where `soft_targets` first divides by it."""
    pkg = _package(tmp_path, {"trainer.py": DISTILLER, "run.py": LOOP})
    guard = line_of(DISTILLER, "return torch.softmax(logits / temperature, dim=-1)")
    obs = observe_package(tmp_path, monkeypatch, pkg / "trainer.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "trainer.py"))) == {guard}

    def found():
        out = cli("check", "pkg", "--no-cache", "--output-format", "json", cwd=tmp_path)
        return {(f["path"], f["line"]) for f in json.loads(out.stdout)["findings"] if f["code"] == "DYN501"}
    assert found() == {("pkg/trainer.py", guard)}
    # the temperature set once, before the loop: one value at every call, nothing reported
    (pkg / "run.py").write_text(LOOP.replace("        trainer.temperature = trainer.temperature / 2\n", "").replace(
        "    trainer = Trainer()\n", "    trainer = Trainer()\n    trainer.temperature = 2.0\n"))
    assert found() == set()


SETTINGS = textwrap.dedent("""
    import torch

    SETTINGS = {"clip": 1.0, "name": "run"}


    def configure(round_):
        SETTINGS["clip"] = 1.0 / (round_ + 1)


    def clipped(x):
        return x.clamp(-SETTINGS["clip"], SETTINGS["clip"])


    def main():
        fn = torch.compile(clipped)
        for round_ in range(3):
            configure(round_)
            fn(torch.randn(4))
""")


def test_an_item_of_a_module_level_dict_a_setter_changes_between_calls(tmp_path):
    """`configure(round_)` assigns `SETTINGS["clip"]` between two calls: Dynamo guards the item where the
    compiled code first looks it up (DYN514, with the setter's call as the related location)."""
    guards = dynamo_guard_lines(tmp_path, SETTINGS)
    assert guards == [line_of(SETTINGS, 'return x.clamp(-SETTINGS["clip"], SETTINGS["clip"])')]
    found = [f for f in api.check_source(SETTINGS, filename="probe.py").findings if f.code == "DYN514"]
    assert [f.line for f in found] == guards
    assert [r[1] for r in found[0].related] == [line_of(SETTINGS, "        configure(round_)")]
    # a setter that changes another item, one the compiled code never reads: nothing is guarded on it
    source = SETTINGS.replace('SETTINGS["clip"] = 1.0 / (round_ + 1)', 'SETTINGS["name"] = "run" + str(round_)')
    assert dynamo_guard_lines(tmp_path, source) == []
    assert [f for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN514"] == []


SETTINGS_MODULE = "# read by the model\nGAIN = 1.0\n"

MODEL = '''
import torch

from pkg import settings


def amplify(x):
    return torch.tanh(x) * settings.GAIN
'''

SWEEP = '''
import torch

from pkg import settings
from pkg.model import amplify


def main():
    fn = torch.compile(amplify)
    for gain in (1.0, 0.5, 0.25):
        settings.GAIN = gain
        fn(torch.randn(3))
'''


def test_a_settings_module_global_another_file_sets_between_calls(cli, tmp_path, monkeypatch):
    """`settings.GAIN = gain` in a sweep in another file, read by the compiled code as `settings.GAIN`: Dynamo
    guards `G['settings'].GAIN` where it is read (DYN514, the assignment as the related location)."""
    pkg = _package(tmp_path, {"settings.py": SETTINGS_MODULE, "model.py": MODEL, "run.py": SWEEP})
    guard = line_of(MODEL, "return torch.tanh(x) * settings.GAIN")
    obs = observe_package(tmp_path, monkeypatch, pkg / "model.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "model.py"))) == {guard}

    def found():
        out = cli("check", "pkg", "--no-cache", "--output-format", "json", cwd=tmp_path)
        return {(f["path"], f["line"], f["related"][0]["line"]) for f in json.loads(out.stdout)["findings"]
                if f["code"] == "DYN514"}
    assert found() == {("pkg/model.py", guard, line_of(SWEEP, "settings.GAIN = gain"))}
    # set once, before the sweep: the same value at every call
    (pkg / "run.py").write_text(SWEEP.replace("        settings.GAIN = gain\n", "").replace(
        "    fn = torch.compile(amplify)\n", "    fn = torch.compile(amplify)\n    settings.GAIN = 0.5\n"))
    assert found() == set()


STEP = '''
import torch


def rescore(scores, length):
    return scores / (length ** 0.7)
'''

SEARCH = '''
import torch


def search(step_fn, scores, max_len):
    for length in range(1, max_len + 1):
        scores = step_fn(scores, length)
    return scores
'''

DRIVER = '''
import torch

from pkg.search import search
from pkg.step import rescore


def main():
    step_fn = torch.compile(rescore)
    search(step_fn, torch.randn(4), 3)
'''


def test_a_loop_of_a_third_file_passes_its_variable_to_a_function_compiled_in_another(cli, tmp_path, monkeypatch):
    """`rescore` compiled in one file, handed to `search` in another, which calls it with the variable of its
    loop: Dynamo guards `length` where `rescore` first reads it, and the finding stands there, once."""
    pkg = _package(tmp_path, {"step.py": STEP, "search.py": SEARCH, "run.py": DRIVER})
    guard = line_of(STEP, "return scores / (length ** 0.7)")
    obs = observe_package(tmp_path, monkeypatch, pkg / "step.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "step.py"))) == {guard}
    out = cli("check", "pkg", "--no-cache", "--output-format", "json", cwd=tmp_path)
    found = [(f["path"], f["line"]) for f in json.loads(out.stdout)["findings"] if f["code"] == "DYN501"]
    assert found == [("pkg/step.py", guard)]


NOISE = textwrap.dedent("""
    import torch


    class Schedule:
        def __init__(self, steps=10):
            self.sigmas = []
            for k in range(steps):
                self.sigmas.append(1.0 / (k + 1))

        def denoise(self, x, k):
            x = x * (k + 1)
            return x / self.sigmas[k]


    def main():
        schedule = Schedule()
        fn = torch.compile(schedule.denoise)
        for k in range(4):
            fn(torch.randn(3), k)
""")


def test_an_int_that_indexes_a_python_list_is_guarded_there_at_every_new_value(tmp_path):
    """`k` becomes dynamic after its first change (guarded at its first read), but a Python list cannot be
    indexed with a symbolic int: Dynamo specialises it at `self.sigmas[k]`, and every further value fails that
    guard. Both lines are reported; indexing a tensor instead keeps one."""
    guards = dynamo_guard_lines(tmp_path, NOISE)
    assert guards == [line_of(NOISE, "x = x * (k + 1)"), line_of(NOISE, "return x / self.sigmas[k]")]
    assert _found(NOISE) == guards
    tensor = NOISE.replace("self.sigmas = []", "self.sigmas = torch.zeros(steps)").replace(
        "self.sigmas.append(1.0 / (k + 1))", "self.sigmas[k] = 1.0 / (k + 1)")
    assert dynamo_guard_lines(tmp_path, tensor) == [line_of(NOISE, "x = x * (k + 1)")]
    assert _found(tensor) == [line_of(NOISE, "x = x * (k + 1)")]


SAMPLER = textwrap.dedent("""
    import torch

    TABLE = torch.arange(10.0)


    @torch.compile(backend="eager")
    def step(x, t):
        y = x * t
        a = TABLE[t]
        if t > 0:
            return y * a + TABLE[t - 1]
        return y * a


    @torch.compile(backend="eager")
    def last(x, t):
        y = x * t
        if t == 0:
            return y
        return y + 1


    @torch.compile(backend="eager")
    def ahead(x, t):
        y = x * t
        prev = t - 3
        if prev >= 0:
            y = y + TABLE[prev]
        return y


    def main():
        x = torch.ones(3)
        for t in reversed(range(6)):
            x = step(x, t) + last(x, t) + ahead(x, t)
""")


def test_an_int_that_became_dynamic_is_guarded_again_where_a_branch_tests_it(tmp_path):
    """A sampler's step index changes at every call: guarded at its first read, dynamic after the first change;
    then a branch on it guards the side taken, and the last step (t = 0) takes the other: a recompile at the
    test (`t != 0`), or, for an inequality on the int (or the int plus constants), at the first tensor index by
    it, whose range Dynamo folds the test into (`1 <= t <= 9` at `TABLE[t]`; `3 <= t` at `TABLE[prev]`)."""
    guards = dynamo_guard_lines(tmp_path, SAMPLER)
    first = [n for n, line in enumerate(SAMPLER.splitlines(), 1) if "y = x * t" in line]
    again = [line_of(SAMPLER, text) for text in ("a = TABLE[t]", "if t == 0:", "y = y + TABLE[prev]")]
    assert sorted(set(guards)) == sorted(first + again)
    assert _found(SAMPLER) == sorted(first + again)


BLOCKS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Gate(nn.Module):
        def __init__(self, gain, mode="scale"):
            super().__init__()
            self.gain = gain
            self.mode = mode

        def forward(self, x):
            y = torch.sigmoid(x)
            if self.mode == "scale":
                return y * self.gain
            return y + self.gain


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.gates = nn.ModuleList([Gate(0.5), Gate(2.0), Gate(1.0, "shift")])

        def forward(self, x):
            for gate in self.gates:
                x = gate(x)
            return x


    def main():
        stack = Stack()
        for gate in stack.gates:
            gate.compile()
        for _ in range(2):
            stack(torch.randn(3))
""")


def test_instances_compiled_one_by_one_share_forward_and_its_guards(tmp_path):
    """Three `Gate`s compiled one by one run one `forward` code object: the graph of the first is guarded on its
    `gain` and `mode`; the others, built with other values, fail those guards where forward first reads them
    (DYN508, the constructions and the compiling loop as related locations). Compiling the whole stack inlines
    each gate under its own name instead: nothing recompiles, nothing is reported."""
    guards = dynamo_guard_lines(tmp_path, BLOCKS)
    assert guards == [line_of(BLOCKS, 'if self.mode == "scale":'), line_of(BLOCKS, "return y * self.gain")]

    def found(source):
        return sorted(f.line for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN508")
    assert found(BLOCKS) == guards
    whole = BLOCKS.replace("    for gate in stack.gates:\n        gate.compile()\n", "    stack.compile()\n")
    assert whole != BLOCKS
    assert dynamo_guard_lines(tmp_path, whole) == []
    assert found(whole) == []


AMP = textwrap.dedent("""
    import torch


    def project(x, w):
        return x @ w


    def main():
        fn = torch.compile(project)
        for epoch in range(3):
            use_amp = epoch > 0
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_amp):
                fn(torch.randn(2, 3), torch.randn(3, 3))
""")


def test_an_autocast_flag_a_local_of_the_loop_sets(tmp_path):
    """`enabled=use_amp` with `use_amp = epoch > 0` set by the loop: the autocast state changes at the second
    epoch; Dynamo's global-state guard has no line, and the finding stands at the compiled function's `def`."""
    guards = dynamo_guard_lines(tmp_path, AMP)
    assert guards == [line_of(AMP, "def project(x, w):")]
    found = [f.line for f in api.check_source(AMP, filename="probe.py").findings if f.code == "DYN515"]
    assert found == guards
    fixed = AMP.replace("use_amp = epoch > 0", "use_amp = True")
    assert dynamo_guard_lines(tmp_path, fixed) == []
    assert [f for f in api.check_source(fixed, filename="probe.py").findings if f.code == "DYN515"] == []


TEACHER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)


    class Trainer:
        def __init__(self, head):
            self.head = torch.compile(head)

        def targets(self, x):
            with torch.no_grad():
                return self.head(x)

        def loss(self, x):
            return self.head(x).sum()


    def main():
        trainer = Trainer(Head())
        trainer.targets(torch.randn(3, 4))
        trainer.loss(torch.randn(3, 4)).backward()
""")


def test_a_compiled_module_an_object_keeps_called_in_both_grad_modes(tmp_path):
    """`self.head`, compiled in `__init__`, runs under `torch.no_grad()` in one method and with grad in another:
    Dynamo's grad-mode guard fails at the second call (DYN504), reported at the forward of the module the caller
    hands in."""
    from dynlint.compiler import harness
    path = tmp_path / "probe.py"
    path.write_text(TEACHER)
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None
    assert [g.guard for r in obs.recompiles for g in r.failures] == ["GLOBAL_STATE changed: grad_mode"]

    def found(source):
        return [f.line for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN504"]
    # at the frame Dynamo names (the module's forward: the guard has no line), the call under no_grad related
    assert found(TEACHER) == [line_of(TEACHER, "def forward(self, x):")]
    both_off = TEACHER.replace("        return self.head(x).sum()", "        with torch.no_grad():\n"
                               "            return self.head(x).sum()").replace(".backward()", "")
    assert found(both_off) == []


STEPS = textwrap.dedent("""
    import torch


    class Ladder:
        def __init__(self):
            self.levels = []
            self.scales = [2.0 ** -k for k in range(8)]

        def prepare(self, n):
            self.levels = [k * 2 for k in range(n)][::-1]

        def apply(self, x, level):
            x = x + level
            return x * self.scales[level]


    def run(ladder, x):
        ladder.prepare(3)
        fn = torch.compile(ladder.apply)
        for level in ladder.levels:
            x = fn(x, level)
        return x


    def main():
        run(Ladder(), torch.randn(4))
""")


def test_the_ints_of_a_list_an_object_keeps_handed_on_by_a_loop(tmp_path):
    """`for level in ladder.levels`, a list the class only fills with ints (a comprehension, reversed): each
    iteration hands the compiled method another int, guarded at its first read and, as a Python list's index, at
    every further value."""
    guards = dynamo_guard_lines(tmp_path, STEPS)
    assert guards == [line_of(STEPS, "x = x + level"), line_of(STEPS, "return x * self.scales[level]")]
    assert _found(STEPS) == guards
    # the levels kept in a tensor: each element is a 0-d tensor, a graph input, guarded on nothing
    tensor = STEPS.replace("[k * 2 for k in range(n)][::-1]", "torch.arange(n).flip(0) * 2").replace(
        "self.scales[level]", "self.scales[0]")
    assert dynamo_guard_lines(tmp_path, tensor) == []
    assert _found(tensor) == []


OWN_OPTIONS = '''
import torch

OPTIONS = {"clip": 1.0, "tag": "a"}


def clipped(x):
    return x.clamp(-OPTIONS["clip"], OPTIONS["clip"])
'''

SCRIPT = '''
import torch

from pkg import model as M


def main():
    fn = torch.compile(M.clipped)
    fn(torch.randn(3))
    M.OPTIONS["clip"] = 0.5
    fn(torch.randn(3))
'''


def test_a_script_sets_an_item_of_the_modules_own_dict_between_two_calls(cli, tmp_path, monkeypatch):
    """`M.OPTIONS["clip"] = 0.5` between two calls in another file, straight-line: Dynamo guards
    `G['OPTIONS']['clip']` where the module's compiled function first looks the key up."""
    pkg = _package(tmp_path, {"model.py": OWN_OPTIONS, "run.py": SCRIPT})
    guard = line_of(OWN_OPTIONS, 'return x.clamp(-OPTIONS["clip"], OPTIONS["clip"])')
    obs = observe_package(tmp_path, monkeypatch, pkg / "model.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "model.py"))) == {guard}

    def found():
        out = cli("check", "pkg", "--no-cache", "--output-format", "json", cwd=tmp_path)
        return {(f["path"], f["line"], f["related"][0]["line"]) for f in json.loads(out.stdout)["findings"]
                if f["code"] == "DYN514"}
    assert found() == {("pkg/model.py", guard, line_of(SCRIPT, 'M.OPTIONS["clip"] = 0.5'))}
    # an item the compiled code never reads: not guarded, not reported
    (pkg / "run.py").write_text(SCRIPT.replace('M.OPTIONS["clip"] = 0.5', 'M.OPTIONS["tag"] = "b"'))
    assert found() == set()


DECAY = textwrap.dedent("""
    import math

    import torch


    def decayed(x, age):
        x = x - age
        return x * math.exp(-age / 4.0)


    def main():
        fn = torch.compile(decayed)
        for age in range(1, 5):
            fn(torch.randn(3), age)
""")


def test_a_number_handed_to_a_math_function_is_guarded_there_at_every_new_value(tmp_path):
    """`age` becomes dynamic after its first change (guarded at `x - age`), but `math.exp` runs on a concrete
    number: Dynamo specialises the value it makes, and every further age fails that guard at the call."""
    guards = dynamo_guard_lines(tmp_path, DECAY)
    assert guards == [line_of(DECAY, "x = x - age"), line_of(DECAY, "return x * math.exp(-age / 4.0)")]
    assert _found(DECAY) == guards
    torch_exp = DECAY.replace("math.exp(-age / 4.0)", "torch.exp(torch.tensor(-age / 4.0))")
    assert dynamo_guard_lines(tmp_path, torch_exp) == [line_of(DECAY, "x = x - age")]
    assert _found(torch_exp) == [line_of(DECAY, "x = x - age")]


SCORER = '''
import torch


class Scorer:
    def __init__(self):
        self.w = torch.ones(4)

    def score(self, x, bias=None):
        y = x * self.w
        if bias is not None:
            y = y + bias
        return y.sum()
'''

EPOCHS = '''
import torch

from pkg.scorer import Scorer


def main():
    scorer = Scorer()
    fn = torch.compile(scorer.score)
    for epoch in range(3):
        bias = torch.ones(4) if epoch > 0 else None
        fn(torch.randn(4), bias)
'''


def test_a_local_a_loop_of_another_file_sets_from_its_variable(cli, tmp_path, monkeypatch):
    """`bias = torch.ones(4) if epoch > 0 else None` in a loop of another file, handed to a method compiled
    there: None at the first call, a tensor at the next; Dynamo guards `bias is not None` where the method first
    tests it (DYN501, in the method's file)."""
    pkg = _package(tmp_path, {"scorer.py": SCORER, "run.py": EPOCHS})
    guard = line_of(SCORER, "if bias is not None:")
    obs = observe_package(tmp_path, monkeypatch, pkg / "scorer.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "scorer.py"))) == {guard}
    out = cli("check", "pkg", "--no-cache", "--output-format", "json", cwd=tmp_path)
    found = {(f["path"], f["line"]) for f in json.loads(out.stdout)["findings"] if f["code"] == "DYN501"}
    assert found == {("pkg/scorer.py", guard)}


NET = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, mask=None):
        y = self.fc(x)
        if mask is not None:
            y = y * mask
        return y.sum()
'''

TRAIN = '''
import torch

from pkg.net import Net


def main():
    model = Net()
    step = torch.compile(model)
    for epoch in range(3):
        mask = torch.ones(4) if epoch > 0 else None
        step(torch.randn(2, 4), mask)
'''


def test_a_module_compiled_whole_in_another_file_takes_what_its_loop_sets(cli, tmp_path, monkeypatch):
    """`step = torch.compile(model)` in a training script: each call runs the module's forward, which Dynamo
    guards on the mask being None at its first test (the module's file reports it)."""
    pkg = _package(tmp_path, {"net.py": NET, "run.py": TRAIN})
    guard = line_of(NET, "if mask is not None:")
    obs = observe_package(tmp_path, monkeypatch, pkg / "net.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "net.py"))) == {guard}
    out = cli("check", "pkg", "--no-cache", "--output-format", "json", cwd=tmp_path)
    found = {(f["path"], f["line"]) for f in json.loads(out.stdout)["findings"] if f["code"] == "DYN501"}
    assert found == {("pkg/net.py", guard)}


COUNTER = textwrap.dedent("""
    import torch


    class Walker:
        def __init__(self):
            self.pos = 0

        def advance(self, x):
            y = x * (self.pos + 1)
            if y.sum() > 0:
                y = y - 1
            self.pos += 1
            return y


    def main():
        walker = Walker()
        fn = torch.compile(walker.advance)
        for _ in range(3):
            fn(torch.ones(3))
""")


def test_a_counter_the_compiled_method_advances_is_guarded_again_after_a_break(tmp_path):
    """`self.pos` is guarded at its first read, and the frame Dynamo resumes after the break at `if y.sum() > 0:`
    guards it again where it reads it (`self.pos += 1`): both lines fail at the next call (DYN306)."""
    guards = dynamo_guard_lines(tmp_path, COUNTER)
    assert guards == [line_of(COUNTER, "y = x * (self.pos + 1)"), line_of(COUNTER, "self.pos += 1")]
    found = sorted(f.line for f in api.check_source(COUNTER, filename="probe.py").findings if f.code == "DYN306")
    assert found == guards


AGEING = textwrap.dedent("""
    import math

    import torch


    class Averager:
        def __init__(self):
            self.age = 0
            self.avg = torch.zeros(3)

        def weight(self):
            return 1.0 - math.exp(-self.age / 3.0)

        def update(self, x):
            self.age += 1
            w = self.weight()
            self.avg.mul_(w).add_(x, alpha=1 - w)


    def main():
        averager = Averager()
        fn = torch.compile(averager.update)
        for _ in range(4):
            fn(torch.ones(3))
""")


def test_a_counter_the_compiled_method_advances_goes_through_a_math_function(tmp_path):
    """`self.age += 1` in the compiled method: guarded where it is read first, dynamic after one change, and
    specialised again where `weight()` hands it to `math.exp`: each further call fails that guard (DYN306)."""
    guards = dynamo_guard_lines(tmp_path, AGEING)
    assert guards == [line_of(AGEING, "return 1.0 - math.exp(-self.age / 3.0)"), line_of(AGEING, "self.age += 1")]
    found = sorted(f.line for f in api.check_source(AGEING, filename="probe.py").findings if f.code == "DYN306")
    assert found == guards


OPTIONS = textwrap.dedent("""
    import torch


    @torch.compile(backend="eager")
    def unread(x, opts):
        clip = opts.get("clip")
        return x.clamp(-clip, clip)


    @torch.compile(backend="eager")
    def used(x, opts):
        clip = opts.get("clip")
        if clip is not None:
            x = x.clamp(-clip, clip)
        return x * 2


    @torch.compile(backend="eager")
    def asked(x, opts):
        y = x * 2
        if "clip" in opts:
            y = y.clamp(-1, 1)
        return y


    @torch.compile(backend="eager")
    def whole(x, opts):
        for name, value in opts.items():
            x = x * value
        return x


    def main():
        x = torch.randn(3, 4)
        a = {"clip": 1.0}
        b = {"clip": 1.0}
        c = {"scale": 1.0}
        d = {"scale": 1.0}
        for i in range(3):
            unread(x, a)
            used(x, b)
            asked(x, c)
            whole(x, d)
            a["note"] = 2.0 + i
            b["clip"] = 2.0 + i
            c["clip"] = 2.0 + i
            d[f"extra{i}"] = 1.0
""")


def test_a_dict_changed_between_calls_is_guarded_one_key_at_a_time(tmp_path):
    """DYN517 on a dict argument changed between calls: the value of an item the code uses is guarded at its
    first use (not where `.get` binds it), a key it asks about where it asks, a key it never looks up nowhere
    (no recompile, no finding), and a dict it iterates on its keys, a guard with no line of its own (at the
    function's start)."""
    guards = dynamo_guard_lines(tmp_path, OPTIONS)
    found = sorted(f.line for f in api.check_source(OPTIONS, filename="probe.py", preview=True).findings
                   if f.code == "DYN517")
    expected = [line_of(OPTIONS, text) for text in ("if clip is not None:", 'if "clip" in opts:')] + \
        [line_of(OPTIONS, "def whole(x, opts):") - 1]          # (its decorator: Dynamo's first line)
    assert found == expected
    assert set(expected) <= set(guards) and line_of(OPTIONS, "return x.clamp(-clip, clip)") not in guards


DOMAINS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Domains(nn.Module):
        def __init__(self):
            super().__init__()
            self.domain_scale = {"speech": 1.0, "music": 2.0, "noise": 3.0}
            self.lin = nn.Linear(4, 4)

        def forward(self, x, extras):
            y = self.lin(x)
            return y * self.domain_scale[extras["domain"]]


    def main():
        model = torch.compile(Domains(), backend="eager")
        for domain in ["speech", "music", "noise"]:
            model(torch.randn(2, 4), {"domain": domain, "weight": 1.0})
""")


def test_the_changing_item_of_a_dict_display_argument_is_guarded_where_it_is_used(tmp_path):
    """A loop variable handed in as an item of a dict (`{"domain": d}`) is guarded where the compiled code uses
    the item (`extras['domain'] == 'speech'`), on every new string, as an argument of its own would be."""
    guards = dynamo_guard_lines(tmp_path, DOMAINS)
    use = line_of(DOMAINS, 'return y * self.domain_scale[extras["domain"]]')
    assert guards == [use]
    assert _found(DOMAINS) == [use]


NAMED = textwrap.dedent("""
    import enum

    import torch


    class Mode(enum.Enum):
        FAST = 1
        SLOW = 2


    @torch.compile(backend="eager")
    def sgd_step(w, g, lr):
        return w - lr * g


    @torch.compile(backend="eager")
    def run(x, mode):
        if mode is Mode.FAST:
            return x * 2
        return x.sin()


    def main():
        w, g = torch.randn(4), torch.randn(4)
        decayed = [0.1 * 0.9 ** i for i in range(3)]
        for lr in decayed:
            w = sgd_step(w, g, lr)
        for mode in [Mode.FAST, Mode.SLOW]:
            run(w, mode)
""")


def test_the_elements_of_a_list_the_function_builds_and_of_a_list_of_enum_members(tmp_path):
    """A loop over a local bound once to a list (a display or a comprehension of floats) binds its elements;
    a loop over members of an Enum class binds constants Dynamo guards by identity (`___check_obj_id`): each
    new one recompiles, at the first read."""
    guards = dynamo_guard_lines(tmp_path, NAMED)
    expected = [line_of(NAMED, "return w - lr * g"), line_of(NAMED, "if mode is Mode.FAST:")]
    assert guards == expected
    assert _found(NAMED) == expected


MODES = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.mode = "train"

        def forward(self, x):
            y = self.lin(x)
            if self.mode == "train":
                return y * 2
            return y.softmax(-1)


    def main():
        model = Head()
        fast = torch.compile(model, backend="eager")
        for mode in ["train", "eval", "export"]:
            model.mode = mode
            fast(torch.randn(2, 4))
""")


def test_a_str_attribute_of_a_compiled_module_set_between_calls(tmp_path):
    """`model.mode = mode` between calls: Dynamo guards forward's read (`self.mode == 'train'`), and every new
    string recompiles (DYN506, the guard model's "module str attribute")."""
    guards = dynamo_guard_lines(tmp_path, MODES)
    read = line_of(MODES, 'if self.mode == "train":')
    assert guards == [read]
    assert [f.line for f in api.check_source(MODES, filename="probe.py").findings if f.code == "DYN506"] == [read]


def test_an_enum_attribute_of_a_module_set_from_the_loops_rows(tmp_path):
    """`model.pooling = pool` with `pool` an Enum member of the loop's rows: Dynamo guards forward's read by
    identity (`___check_obj_id(self.pooling, ...)`), one graph per member (DYN506, "module enum attribute");
    the same member in every row compiles once."""
    source = MODES.replace("import torch\n", "import enum\n\nimport torch\n", 1).replace(
        "class Head", "class Pool(enum.Enum):\n    MEAN = 1\n    MAX = 2\n\n\nclass Head").replace(
        'self.mode = "train"', "self.pooling = Pool.MEAN").replace(
        'if self.mode == "train":', "if self.pooling is Pool.MEAN:").replace(
        'for mode in ["train", "eval", "export"]:\n        model.mode = mode',
        "for pool in [Pool.MEAN, Pool.MAX]:\n        model.pooling = pool")
    read = line_of(source, "if self.pooling is Pool.MEAN:")
    assert dynamo_guard_lines(tmp_path, source) == [read]
    assert [f.line for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN506"] == [read]
    same = source.replace("[Pool.MEAN, Pool.MAX]", "[Pool.MAX, Pool.MAX]")
    assert dynamo_guard_lines(tmp_path, same) == []
    assert not [f for f in api.check_source(same, filename="probe.py").findings if f.code == "DYN506"]


def test_a_list_attribute_of_a_compiled_module_grown_between_calls(tmp_path):
    """`model.sizes.append(s)` between calls of the compiled module, whose forward reads `len(self.sizes)`:
    Dynamo guards the list's length there, and every change recompiles (DYN506, "module list attribute")."""
    source = MODES.replace('self.mode = "train"', "self.sizes = [4]").replace(
        'if self.mode == "train":', "if len(self.sizes) > 2:").replace(
        'for mode in ["train", "eval", "export"]:\n        model.mode = mode',
        "for s in [5, 6, 7]:\n        model.sizes.append(s)")
    guards = dynamo_guard_lines(tmp_path, source)
    read = line_of(source, "if len(self.sizes) > 2:")
    assert guards == [read]
    assert [f.line for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN506"] == [read]


def test_a_number_read_through_a_getter_of_an_object_the_loop_changes(tmp_path):
    """`update(w, g, sched.get_last_lr()[0])` with `sched.step()` in the loop: the getter returns `[self.lr]`,
    which `step` halves, so every call hands the compiled function a new float (`lr == 0.1`, then dynamic)."""
    source = textwrap.dedent("""
        import torch


        class Sched:
            def __init__(self, lr):
                self.lr = lr

            def step(self):
                self.lr *= 0.5

            def get_last_lr(self):
                return [self.lr]


        @torch.compile(backend="eager")
        def update(w, g, lr):
            return w - lr * g


        def main():
            w, g = torch.randn(4), torch.randn(4)
            sched = Sched(0.1)
            for _ in range(3):
                w = update(w, g, sched.get_last_lr()[0])
                sched.step()
    """)
    guards = dynamo_guard_lines(tmp_path, source)
    assert guards == [line_of(source, "return w - lr * g")] == _found(source)


def test_a_loop_over_functions_hands_in_a_new_object_at_each_call(tmp_path):
    """`for act in [F.relu, F.gelu, torch.tanh, swish]`: each function is guarded by identity where the compiled
    code calls it (`___check_obj_id(act, ...)`), one graph per function."""
    source = textwrap.dedent("""
        import torch
        import torch.nn.functional as F


        def swish(t):
            return t * torch.sigmoid(t)


        @torch.compile(backend="eager")
        def apply(x, act):
            y = x * 2
            return act(y)


        def main():
            x = torch.randn(4)
            for act in [F.relu, F.gelu, torch.tanh, swish]:
                apply(x, act)
    """)
    call = line_of(source, "return act(y)")
    assert call in dynamo_guard_lines(tmp_path, source, lineless=False)
    assert _found(source) == [call]


def test_a_loop_over_lists_of_numbers_hands_in_items_dynamo_guards(tmp_path):
    """`for sizes in ([2, 4], [3, 3], [1, 5])`: the list's items are guarded where the compiled code reads them
    (`sizes[0] == 2` at `x.split(sizes)`), as a tuple's are."""
    source = textwrap.dedent("""
        import torch


        @torch.compile(backend="eager")
        def split_sum(x, sizes):
            return [p.sum() for p in x.split(sizes)]


        def main():
            x = torch.randn(6)
            for sizes in ([2, 4], [3, 3], [1, 5]):
                split_sum(x, sizes)
    """)
    read = line_of(source, "return [p.sum() for p in x.split(sizes)]")
    assert dynamo_guard_lines(tmp_path, source, lineless=False) == [read] == _found(source)


def test_no_branch_guard_after_the_int_is_specialised_again_by_a_python_list(tmp_path):
    """With a Python list for the table, `TABLE[t]` specialises `t` again at every value (a guard there each
    time): the branch on it further down is on a constant and installs no guard of its own."""
    source = SAMPLER.replace("TABLE = torch.arange(10.0)", "TABLE = [float(i) for i in range(10)]")
    guards = dynamo_guard_lines(tmp_path, source)
    branch = line_of(source, "if t > 0:")
    assert line_of(source, "a = TABLE[t]") in guards and branch not in guards
    found = _found(source)
    assert line_of(source, "a = TABLE[t]") in found and branch not in found


TRAIN_EVAL = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return F.dropout(self.lin(x), p=0.5, training=self.training)


    def main():
        model = Net()
        fast = torch.compile(model, backend="eager")
        for epoch in range(3):
            model.train()
            fast(torch.randn(2, 4)).sum().backward()
            model.eval()
            fast(torch.randn(2, 4))
""")


def test_train_and_eval_recompile_at_the_training_flag_unless_grad_mode_changes_too(tmp_path):
    """`model.train()` / `model.eval()` around calls of the compiled model: the guard on `self.training` fails
    where forward reads it (DYN503). With evaluation under `torch.no_grad()`, grad mode, checked before any
    other guard, is what fails (DYN504's, no line of its own); and `.train()` alone, on a module already in
    training mode, flips nothing."""
    read = line_of(TRAIN_EVAL, "return F.dropout(")
    assert dynamo_guard_lines(tmp_path, TRAIN_EVAL, lineless=False) == [read]
    assert [f.line for f in api.check_source(TRAIN_EVAL, filename="probe.py").findings if f.code == "DYN503"] == [read]
    no_grad = TRAIN_EVAL.replace("        fast(torch.randn(2, 4))\n", "        with torch.no_grad():\n"
                                                                       "            fast(torch.randn(2, 4))\n")
    assert dynamo_guard_lines(tmp_path, no_grad, lineless=False) == []
    found = {f.code for f in api.check_source(no_grad, filename="probe.py").findings}
    assert "DYN504" in found and "DYN503" not in found
    train_only = TRAIN_EVAL.replace("        model.eval()\n", "")
    assert dynamo_guard_lines(tmp_path, train_only) == []
    assert not [f for f in api.check_source(train_only, filename="probe.py").findings if f.code == "DYN503"]


MEMORY = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Recurrent(nn.Module):
        def __init__(self, mem_len=2):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.mem_len = mem_len
            self.mems = []

        def _context(self, x):
            if not self.mems:
                return x
            return x + torch.stack(self.mems).mean(0)

        def forward(self, x):
            return self.lin(self._context(x))

        def update_memory(self, h):
            self.mems.append(h.detach())
            self.mems = self.mems[-self.mem_len:]


    def main():
        model = Recurrent()
        fast = torch.compile(model, backend="eager")
        for _ in range(4):
            h = fast(torch.randn(2, 4))
            model.update_memory(h)
""")


def test_a_list_attribute_a_method_of_the_module_changes_between_calls(tmp_path):
    """`model.update_memory(h)` between calls, appending to `self.mems` and keeping its last items: forward reads
    the list through its own method (`if not self.mems:`), where Dynamo guards it; each new length recompiles
    (DYN506, "module list attribute")."""
    read = line_of(MEMORY, "if not self.mems:")
    assert dynamo_guard_lines(tmp_path, MEMORY) == [read]
    assert [f.line for f in api.check_source(MEMORY, filename="probe.py").findings if f.code == "DYN506"] == [read]
    same = MEMORY.replace("        model.update_memory(h)\n", "")
    assert dynamo_guard_lines(tmp_path, same) == []
    assert not [f for f in api.check_source(same, filename="probe.py").findings if f.code == "DYN506"]
