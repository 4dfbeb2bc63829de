"""A function's parameters take the kinds of what its calls in *other* files pass (analysis/tensors/foreign.py):
Dynamo inlines a call across files as it does within one, and it does not read annotations, so `t: int` handed
a 0-d tensor is a tensor. Each case is proven under real Dynamo at the finding's line."""
import json
import textwrap

import pytest

from conftest import observe_package

HELPERS = '''
import torch


def gate(x, t):
    if t > 500:
        return x * 2
    return x


def pick(table, t: int):
    prev = t - 10
    if prev >= 0:
        return table[prev]
    return table[0]
'''

MAIN = '''
import torch
import torch.nn as nn
{imports}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.table = torch.arange(1000.0)

    def forward(self, x, ts):
        t = {t}
        y = {gate}(self.lin(x), t)
        return y + {pick}(self.table, t)


def main():
    m = torch.compile(Net(), backend="eager")
    for i in range(2):
        m(torch.randn(2, 4), torch.tensor([600 - i * 300]))
'''


def _project(tmp_path, t="ts[0]", imports="from pkg.helpers import gate, pick", gate="gate", pick="pick",
             init="", extra=None):
    pkg = tmp_path / "pkg"
    pkg.mkdir(exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text(init)
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "main.py").write_text(textwrap.dedent(MAIN).format(imports=imports, t=t, gate=gate, pick=pick))
    for name, text in (extra or {}).items():
        (pkg / name).write_text(textwrap.dedent(text))
    return pkg


def _found(cli, tmp_path, *more) -> set:
    out = cli("check", "pkg", "--no-cache", "--format", "json", *more, cwd=tmp_path)
    return {(f["path"], f["line"], f["code"]) for f in json.loads(out.stdout)["findings"]}


def _dynamo_breaks(tmp_path, monkeypatch) -> set:
    path = tmp_path / "pkg" / "helpers.py"
    obs = observe_package(tmp_path, monkeypatch, path, "__import__('pkg.main').main.main()")
    return set(obs.break_lines(str(path)))


@pytest.mark.parametrize("imports, gate, pick", [
    ("from pkg.helpers import gate, pick", "gate", "pick"),
    ("from pkg import helpers as H", "H.gate", "H.pick"),
    ("from pkg import gate, pick", "gate", "pick"),             # re-exported by the package
])
def test_a_tensor_passed_from_another_file_makes_the_parameter_a_tensor(cli, tmp_path, monkeypatch, imports, gate,
                                                                         pick):
    _project(tmp_path, imports=imports, gate=gate, pick=pick, init="from pkg.helpers import gate, pick\n")
    found = _found(cli, tmp_path)
    # `t > 500` and, through `t: int` that Dynamo does not read, `prev >= 0`
    assert found == {("pkg/helpers.py", 6, "DYN101"), ("pkg/helpers.py", 13, "DYN101")}
    assert {line for _, line, _ in found} <= _dynamo_breaks(tmp_path, monkeypatch)


def test_an_int_passed_from_another_file_is_no_tensor(cli, tmp_path, monkeypatch):
    _project(tmp_path, t="x.shape[0] * 300")
    assert _found(cli, tmp_path) == set()
    assert _dynamo_breaks(tmp_path, monkeypatch) == set()


def test_a_function_handed_on_in_another_file_keeps_its_parameters_unknown(cli, tmp_path):
    # `other.py` stores `gate`: it may be called with anything, so its callers do not tell what `t` is
    _project(tmp_path, extra={"other.py": '''
        from pkg.helpers import gate

        HANDLERS = [gate]
    '''})
    assert ("pkg/helpers.py", 6, "DYN101") not in _found(cli, tmp_path)
    # ... while `pick`, only ever called, still takes the tensor its caller passes
    assert ("pkg/helpers.py", 13, "DYN101") in _found(cli, tmp_path)


def test_an_edit_of_the_calling_file_rechecks_the_called_one(cli, tmp_path):
    pkg = _project(tmp_path)
    out = cli("check", "pkg", "--format", "json", cwd=tmp_path)
    assert len(json.loads(out.stdout)["findings"]) == 2
    main = pkg / "main.py"
    main.write_text(main.read_text().replace("t = ts[0]", "t = x.shape[0] * 300"))
    out = cli("check", "pkg", "--format", "json", cwd=tmp_path)
    assert json.loads(out.stdout)["findings"] == []


SCHEDULER = '''
import torch


class Scheduler:
    def __init__(self, n=1000):
        self.alphas = torch.linspace(0.99, 0.01, n)
        self.final = torch.tensor(1.0)
        self.n = n
        self.timesteps = None

    def set_timesteps(self, steps):
        self.steps = steps
        self.timesteps = torch.arange(0, self.n, self.n // steps).flip(0)

    def _previous(self, t, prev):
        return self.alphas[prev] if prev >= 0 else self.final

    def step(self, out, t: int, x):
        prev = t - self.n // self.steps
        a = self.alphas[t]
        b = self.alphas[prev] if prev >= 0 else self.final
        return x * a.sqrt() + out * (1 - b).sqrt() + self._previous(t, prev)
'''

SAMPLER = '''
import torch

from pkg.scheduler import Scheduler


def sample(scheduler, step_fn, x, steps):
    scheduler.set_timesteps(steps)
    for t in scheduler.{timesteps}:
        x = step_fn(torch.tanh(x), t, x)
    return x


def main():
    scheduler = Scheduler()
    step_fn = torch.compile(scheduler.step, backend="eager")
    sample(scheduler, step_fn, torch.randn(2, 4), 4)
'''


def test_a_method_compiled_elsewhere_takes_what_the_compiled_alias_is_called_with(cli, tmp_path, monkeypatch):
    # `step_fn = torch.compile(scheduler.step)` handed to a sampling loop over the scheduler's tensor of
    # timesteps: `t: int` is a 0-d tensor, in `step` and in the method it calls with it; each subscript by it (or
    # by `prev`, made from it) is guarded on its value, there and in `_previous` it is handed to (DYN501)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "scheduler.py").write_text(SCHEDULER)
    (pkg / "run.py").write_text(SAMPLER.format(timesteps="timesteps"))
    found = _found(cli, tmp_path)
    assert found == {("pkg/scheduler.py", 17, "DYN101"), ("pkg/scheduler.py", 22, "DYN101"),
                     ("pkg/scheduler.py", 17, "DYN501"), ("pkg/scheduler.py", 21, "DYN501"),
                     ("pkg/scheduler.py", 22, "DYN501")}
    obs = observe_package(tmp_path, monkeypatch, pkg / "scheduler.py", "__import__('pkg.run').run.main()")
    assert {17, 22} <= set(obs.break_lines(str(pkg / "scheduler.py")))
    assert {17, 21, 22} <= set().union(*obs.guard_lines(str(pkg / "scheduler.py")))
    # the loop over a list of ints instead: Python ints, no tensor, no warning
    (pkg / "run.py").write_text(SAMPLER.format(timesteps="timesteps.tolist()"))
    assert _found(cli, tmp_path) == set()


TYPED_BASE = '''
from tqdm.auto import tqdm


class Pipeline:
    def register_modules(self, **kwargs):
        for name, module in kwargs.items():
            setattr(self, name, module)

    def progress_bar(self, iterable=None, total=None):
        if iterable is not None:
            return tqdm(iterable, disable=True)
        return tqdm(total=total, disable=True)
'''

TYPED_SCHEDULER = '''
import numpy as np
import torch


class Sched:
    def __init__(self, n: int = 1000):
        self.alphas = torch.linspace(0.99, 0.01, n)
        self.one = torch.tensor(1.0)
        self.timesteps = torch.from_numpy(np.arange(0, n)[::-1].copy())

    def set_timesteps(self, steps: int):
        self.timesteps = torch.from_numpy(np.arange(0, 1000, 1000 // steps)[::-1].copy())

    def step(self, out: torch.Tensor, timestep: int, sample: torch.Tensor):
        prev = timestep - 100
        a = self.alphas[timestep]
        b = self.alphas[prev] if prev >= 0 else self.one
        return sample * b.sqrt() + out * (1 - a).sqrt()
'''

TYPED_PIPELINE = '''
import torch

from pkg.base import Pipeline
from pkg.sched import Sched


class Pipe(Pipeline):
    def __init__(self, sched{annotation}):
        super().__init__()
        {keep}

    def __call__(self, x, steps: int = 10):
        self.sched.set_timesteps(steps)
        {loop}
            x = self.sched.step(x * 0.5, t, x, **{{}})
        return x


def retrieve_timesteps(scheduler, steps):
    scheduler.set_timesteps(steps)
    timesteps = scheduler.timesteps
    return timesteps, len(timesteps)
'''

LOOPS = {
    "attribute": "for i, t in enumerate(self.sched.timesteps):",
    "ints": "for i, t in enumerate(self.sched.timesteps.tolist()):",
    # iterating a progress bar over it (a method of the base returning `tqdm(iterable)`)
    "progress bar": "for t in self.progress_bar(self.sched.timesteps):",
    # handed to a helper of the file, which reads the attribute of what it is handed
    "helper": "timesteps, n = retrieve_timesteps(self.sched, steps)\n        for i, t in enumerate(timesteps):",
}

TYPED_RUN = '''
import torch
from pkg.pipe import Pipe
from pkg.sched import Sched


def main():
    parts = {"sched": Sched()}         # (loaded, as a library's users load it: no construction to follow)
    pipe = Pipe(**parts)
    pipe.sched.step = torch.compile(pipe.sched.step, backend="eager")
    pipe(torch.randn(2, 4), steps=3)
'''


def _typed_project(tmp_path, annotation=": Sched", keep="self.register_modules(sched=sched)", loop="attribute"):
    pkg = tmp_path / "pkg"
    pkg.mkdir(exist_ok=True)
    # the scheduler's `step` is compiled from outside (a user's script, the zoo): declared in the settings
    (tmp_path / "pyproject.toml").write_text('[tool.dynlint]\ncompiled = ["pkg.sched:Sched.step"]\n')
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text(TYPED_BASE)
    (pkg / "sched.py").write_text(TYPED_SCHEDULER)
    (pkg / "pipe.py").write_text(TYPED_PIPELINE.format(annotation=annotation, keep=keep, loop=LOOPS[loop]))
    (tmp_path / "run.py").write_text(TYPED_RUN)
    return pkg


@pytest.mark.parametrize("keep, loop", [
    ("self.register_modules(sched=sched)", "attribute"),
    ("self.sched = sched", "attribute"),
    ("self.register_modules(sched=sched)", "progress bar"),
    ("self.register_modules(sched=sched)", "helper"),
])
def test_a_method_called_through_a_declared_attribute_takes_what_the_calls_pass(cli, tmp_path, monkeypatch, keep,
                                                                                 loop):
    # a pipeline keeps the scheduler it is handed (`sched: Sched`, kept by a method that sets the attributes its
    # keywords name, or assigned) and calls `self.sched.step(out, t, x)` with `t` from the scheduler's tensor of
    # timesteps: Dynamo traces `timestep: int` as the 0-d tensor it is, and `prev >= 0` breaks; each subscript by
    # it (or by `prev`, made from it) reads it as an int and guards on its value: every new `t` recompiles (DYN501)
    pkg = _typed_project(tmp_path, keep=keep, loop=loop)
    assert _found(cli, tmp_path) == {("pkg/sched.py", 18, "DYN101"), ("pkg/sched.py", 17, "DYN501"),
                                     ("pkg/sched.py", 18, "DYN501")}
    obs = observe_package(tmp_path, monkeypatch, pkg / "sched.py", "__import__('run').main()")
    assert 18 in obs.break_lines(str(pkg / "sched.py"))
    assert {17, 18} <= set().union(*obs.guard_lines(str(pkg / "sched.py")))


def test_a_declared_attribute_called_with_ints_or_undeclared_keeps_the_parameter_a_number(cli, tmp_path,
                                                                                          monkeypatch):
    # the timesteps as Python ints: Dynamo traces ints, no break
    pkg = _typed_project(tmp_path, loop="ints")
    assert _found(cli, tmp_path) == set()
    obs = observe_package(tmp_path, monkeypatch, pkg / "sched.py", "__import__('run').main()")
    assert obs.break_lines(str(pkg / "sched.py")) == {}
    # no declared type, and what the pipeline keeps is not built where the project shows it: its calls are not read
    _typed_project(tmp_path, annotation="")
    assert _found(cli, tmp_path) == set()
    # a method handed the scheduler by keyword that does not set the attributes its keywords name keeps nothing
    pkg = _typed_project(tmp_path)
    (pkg / "base.py").write_text(TYPED_BASE.replace("setattr(self, name, module)", "print(name, module)"))
    assert _found(cli, tmp_path) == set()


LOOP_MODULE = '''
import torch


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def training_step(self, batch, batch_idx):
        loss = self.fc(batch).pow(2).mean()
        if batch_idx == 0:
            loss = loss * 2
        return loss
'''

LOOP_TRAINER = '''
import torch

from pkg.module import Classifier


class Trainer:
    def __init__(self, compile_step=True):
        self.compile_step = compile_step

    def fit(self, module, batches):
        step = torch.compile(module.training_step) if self.compile_step else module.training_step
        for batch_idx, batch in enumerate(batches):
            step(batch, batch_idx)


def main():
    trainer = Trainer()
    trainer.fit(Classifier(), [torch.ones(2, 4)] * 3)
'''


def test_a_loop_in_another_file_passes_its_counter_to_a_compiled_method(cli, tmp_path, monkeypatch):
    # `step = torch.compile(module.training_step) if ... else ...` (compiled on one branch) called in another
    # file's loop with `enumerate`'s count: an int Dynamo guards where the method first reads it (DYN501)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "module.py").write_text(LOOP_MODULE)
    (pkg / "trainer.py").write_text(LOOP_TRAINER)
    assert ("pkg/module.py", 12, "DYN501") in _found(cli, tmp_path)
    obs = observe_package(tmp_path, monkeypatch, pkg / "module.py", "__import__('pkg.trainer').trainer.main()")
    assert 12 in set().union(*obs.guard_lines(str(pkg / "module.py")))
    # the same value on every call: nothing to guard anew
    (pkg / "trainer.py").write_text(LOOP_TRAINER.replace("step(batch, batch_idx)", "step(batch, 1)"))
    assert ("pkg/module.py", 12, "DYN501") not in _found(cli, tmp_path)


FLAGS_MODULE = '''
import torch

DEBUG = False


def set_debug(flag):
    global DEBUG
    DEBUG = flag


def scaled(x):
    y = x.sin()
    if DEBUG:
        y = y.clamp(-0.5, 0.5)
    return y * 2
'''

FLAGS_RUN = '''
import torch

from pkg import flags
from pkg.flags import scaled, set_debug


def main():
    fn = torch.compile(scaled)
    x = torch.randn(4)
    for debug in (False, True):
        set_debug(debug)
        fn(x)
'''


@pytest.mark.parametrize("call", ["set_debug(debug)", "flags.set_debug(debug)"])
def test_a_setter_of_a_global_called_in_another_file_is_reported_at_the_guard(cli, tmp_path, monkeypatch, call):
    """`set_debug(flag)`, a function of the compiled code's file that assigns the global it reads, called between
    compiled calls in another file (by name or through the module): Dynamo guards `G['DEBUG'] == False` at the
    first read and the call after the setter fails it (DYN514, at the guard, the setter's call related)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "flags.py").write_text(FLAGS_MODULE)
    run = FLAGS_RUN.replace("set_debug(debug)", call)
    (pkg / "run.py").write_text(run)
    guard = FLAGS_MODULE.splitlines().index("    if DEBUG:") + 1
    obs = observe_package(tmp_path, monkeypatch, pkg / "flags.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "flags.py"))) == {guard}
    assert ("pkg/flags.py", guard, "DYN514") in _found(cli, tmp_path)
    # called once before the compiled calls: one value for every call, nothing recompiles
    (pkg / "run.py").write_text(run.replace(f"    for debug in (False, True):\n        {call}\n        fn(x)\n",
                                            f"    debug = True\n    {call}\n    fn(x)\n    fn(x)\n"))
    assert ("pkg/flags.py", guard, "DYN514") not in _found(cli, tmp_path)


PASTE = '''
import torch


@torch.compile
def paste(logits, image_size):
    h, w = image_size
    ys = torch.arange(h).float()[:, None]
    xs = torch.arange(w).float()[None, :]
    return logits.mean() * (ys + xs)
'''

PASTE_RUN = '''
import torch

from pkg.paste import paste

IMAGES = [((24, 32), 3), ((40, 30), 3)]


def main():
    for (h, w), n in IMAGES:
        paste(torch.randn(n, 4), (h, w))
'''


def test_a_decorated_function_called_by_name_in_another_files_loop_is_guarded_where_it_reads(cli, tmp_path,
                                                                                             monkeypatch):
    """`paste(logits, (h, w))` in a loop over a module constant of another file, `paste` compiled where it is
    defined: Dynamo guards `image_size[0] == 24` where the compiled code first uses `h` (DYN501, at the guard in
    the compiled function's file)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "paste.py").write_text(PASTE)
    (pkg / "run.py").write_text(PASTE_RUN)
    guard = PASTE.splitlines().index("    ys = torch.arange(h).float()[:, None]") + 1
    obs = observe_package(tmp_path, monkeypatch, pkg / "paste.py", "__import__('pkg.run').run.main()")
    assert guard in set().union(*obs.guard_lines(str(pkg / "paste.py")))
    assert ("pkg/paste.py", guard, "DYN501") in _found(cli, tmp_path)
    # the same size for every image: nothing changes between calls
    (pkg / "run.py").write_text(PASTE_RUN.replace("((40, 30), 3)", "((24, 32), 3)"))
    assert ("pkg/paste.py", guard, "DYN501") not in _found(cli, tmp_path)


TRAINER = '''
import torch


class Trainer:
    def __init__(self, w):
        self.w = w
        self.lr = 0.0

    @torch.compile
    def apply_update(self, g):
        self.w.sub_(self.lr * g)

    def train_step(self, g):
        self.apply_update(g)
'''

TRAINER_RUN = '''
import torch

from pkg.trainer import Trainer


def lr_at(step):
    return 0.1 * (0.5 ** step)


def main():
    trainer = Trainer(torch.zeros(3))
    for step in range(3):
        trainer.lr = lr_at(step)
        trainer.train_step(torch.ones(3))
'''


def test_an_attribute_another_files_loop_sets_from_a_schedule_is_guarded_where_the_compiled_method_reads_it(
        cli, tmp_path, monkeypatch):
    """`trainer.lr = lr_at(step)` in a loop of another file that calls `trainer.train_step`, which calls the
    decorated `apply_update` reading `self.lr`: Dynamo guards `self.lr` there, and each new rate fails it
    (DYN514, at the guard in the class's file)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "trainer.py").write_text(TRAINER)
    (pkg / "run.py").write_text(TRAINER_RUN)
    guard = TRAINER.splitlines().index("        self.w.sub_(self.lr * g)") + 1
    obs = observe_package(tmp_path, monkeypatch, pkg / "trainer.py", "__import__('pkg.run').run.main()")
    assert guard in set().union(*obs.guard_lines(str(pkg / "trainer.py")))
    assert ("pkg/trainer.py", guard, "DYN514") in _found(cli, tmp_path)
    # set once, before the loop: every call sees the same rate
    (pkg / "run.py").write_text(TRAINER_RUN.replace("        trainer.lr = lr_at(step)\n", "").replace(
        "    for step in range(3):", "    trainer.lr = lr_at(0)\n    for step in range(3):"))
    assert ("pkg/trainer.py", guard, "DYN514") not in _found(cli, tmp_path)


STREAM = '''
import torch


@torch.compile
def encode_chunk(x, state):
    if state is None:
        state = torch.zeros(x.shape[-1])
    y = x.sin() + state
    return y, y.mean(0)
'''

STREAM_RUN = '''
import torch

from pkg.stream import encode_chunk


def transcribe(chunks):
    state = None
    out = []
    for chunk in chunks:
        y, state = encode_chunk(chunk, state)
        out.append(y)
    return out


def main():
    transcribe([torch.randn(2, 4) for _ in range(3)])
'''


def test_a_state_another_files_loop_carries_from_none_is_reported_at_the_guard(cli, tmp_path, monkeypatch):
    """`state = None` before a loop of another file, `y, state = encode_chunk(chunk, state)` in it: the first
    call gets None, the next a tensor; Dynamo guards `state is None` in the compiled function (DYN505, there)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "stream.py").write_text(STREAM)
    (pkg / "run.py").write_text(STREAM_RUN)
    guard = STREAM.splitlines().index("    if state is None:") + 1
    obs = observe_package(tmp_path, monkeypatch, pkg / "stream.py", "__import__('pkg.run').run.main()")
    assert guard in set().union(*obs.guard_lines(str(pkg / "stream.py")))
    assert ("pkg/stream.py", guard, "DYN505") in _found(cli, tmp_path)
    # a tensor from the first call on: the guard holds
    (pkg / "run.py").write_text(STREAM_RUN.replace("    state = None\n", "    state = torch.zeros(4)\n"))
    assert ("pkg/stream.py", guard, "DYN505") not in _found(cli, tmp_path)


MASKS = '''
import torch


@torch.compile(backend="eager")
def binarize(logits, threshold: float = 0.5):
    probs = logits.sigmoid()
    return probs > threshold
'''

MASKS_RUN = '''
import torch

from pkg.masks import binarize


def main():
    logits = torch.randn(4, 8)
    pred = binarize(logits)
    target = binarize(logits + 0.3, threshold=0.4)
    return (pred == target).float().mean()
'''


def test_constants_another_file_passes_to_a_decorated_function_are_guarded_where_it_reads_them(cli, tmp_path,
                                                                                               monkeypatch):
    """`binarize(logits)` then `binarize(..., threshold=0.4)` in another file, `binarize` compiled by its own
    `@torch.compile`: the default 0.5, then 0.4. Dynamo guards `threshold == 0.5` where the compiled code reads
    it (DYN508, at the guard in the compiled function's file, the calls related)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "masks.py").write_text(MASKS)
    (pkg / "run.py").write_text(MASKS_RUN)
    guard = MASKS.splitlines().index("    return probs > threshold") + 1
    obs = observe_package(tmp_path, monkeypatch, pkg / "masks.py", "__import__('pkg.run').run.main()")
    assert set().union(*obs.guard_lines(str(pkg / "masks.py"))) == {guard}
    assert ("pkg/masks.py", guard, "DYN508") in _found(cli, tmp_path)
    # the same threshold at both calls: one graph
    (pkg / "run.py").write_text(MASKS_RUN.replace("threshold=0.4", "threshold=0.5"))
    assert ("pkg/masks.py", guard, "DYN508") not in _found(cli, tmp_path)
