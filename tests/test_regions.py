"""Compile regions: what torch.compile traces, in each spelling, across files and in each mode."""
import textwrap

import pytest

from conftest import write_tree
from dynlint.api import check, check_source
from dynlint.linter.config import Config

BREAK = "    print('x')\n    return x\n"


def codes_at(source, regions="auto"):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), regions=regions).findings)


@pytest.mark.parametrize("header", [
    "import torch\n@torch.compile\ndef f(x):\n",
    "import torch\n@torch.compile(mode='max-autotune', fullgraph=False)\ndef f(x):\n",
    "import torch as T\n@T.compile\ndef f(x):\n",
    "from torch import compile\n@compile()\ndef f(x):\n",
    "from torch import compile as tc\n@tc\ndef f(x):\n",
    "import torch._dynamo\n@torch._dynamo.optimize('inductor')\ndef f(x):\n",
    "import torch._dynamo as dynamo\n@dynamo.optimize('eager', nopython=False)\ndef f(x):\n",
])
def test_decorator_spellings(header):
    assert [c for _, c in codes_at(header + BREAK)] == ["DYN301"]


@pytest.mark.parametrize("source", [
    "import torch\ndef f(x):\n" + BREAK + "g = torch.compile(f)\n",
    "import torch\ndef f(x):\n" + BREAK + "def main():\n    return torch.compile(f, dynamic=True)\n",
    "import torch\nimport torch.nn as nn\nclass M:\n    def forward(self, x):\n        print(x)\n        return x\n"
    "model = M()\nmodel = torch.compile(model)\n",
    "import torch\nclass M:\n    def forward(self, x):\n        print(x)\n        return x\n"
    "def build():\n    return torch.compile(M())\n",
    "import torch\nclass Blk:\n    def forward(self, x):\n        print(x)\n        return x\n"
    "class Outer:\n    def __init__(self):\n        self.block = Blk()\n        self.fast = torch.compile(self.block)\n",
    "import torch\nclass Flip:\n    def __call__(self, x):\n        print(x)\n        return x\n"
    "def main():\n    return torch.compile(Flip(0.5).__call__)\n",
])
def test_values_passed_to_torch_compile(source):
    assert [c for _, c in codes_at(source, regions="explicit")] == ["DYN301"]


def test_uncompiled_code_is_left_alone():
    src = "import torch\ndef train(x):\n    if x.sum() > 0:\n        print(x.item())\n    return x\n"
    assert codes_at(src) == []
    assert [c for _, c in codes_at(src, regions="all")] == ["DYN101", "DYN201", "DYN301"]


def test_disabled_functions_are_not_traced():
    """The print inside is not checked; calling the disabled function is itself a break (DYN601)."""
    src = ("import torch\n@torch.compiler.disable\ndef log(x):\n    print(x)\n\n"
           "@torch.compile\ndef f(x):\n    return log(x)\n")
    assert codes_at(src) == [(8, "DYN601")]


def test_module_forward_through_project_base_class_and_modes():
    src = textwrap.dedent("""
        import torch.nn as nn
        class Base(nn.Module):
            pass
        class Net(Base):
            def forward(self, x):
                print(x)
                return x
        class NotAModule:
            def forward(self, x):
                print(x)
                return x
    """)
    assert [c for _, c in codes_at(src)] == ["DYN301"]
    assert codes_at(src, regions="explicit") == []


def test_submodules_modulelist_and_self_methods_are_followed(tmp_path):
    write_tree(tmp_path, {
        "net/__init__.py": "",
        "net/blocks.py": textwrap.dedent("""
            import torch.nn as nn
            from net.ops import rotate
            class Block(nn.Module):
                def forward(self, x):
                    return rotate(self.helper(x))
                def helper(self, x):
                    return x.tolist()
        """),
        "net/ops.py": "def rotate(x):\n    print(x)\n    return x\n",
        "net/model.py": textwrap.dedent("""
            import torch
            import torch.nn as nn
            from net.blocks import Block
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([Block() for _ in range(3)])
                    self.seq = nn.Sequential(Block(), Block())
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return self.seq(x)
            model = torch.compile(Model())
        """),
    })
    result = check([str(tmp_path)], Config(root=tmp_path.resolve(), regions="explicit"))
    chains = {(f.path, f.code): f.chain for f in result.findings}
    assert chains == {
        ("net/ops.py", "DYN301"): ("Model.forward", "Block.forward", "rotate"),
        ("net/blocks.py", "DYN203"): ("Model.forward", "Block.forward", "Block.helper"),
    }


# ---- functions Dynamo reaches through values: passed as arguments, registered as forward hooks ---------------
PASSED = '''\
import functools

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


def block(x):
    print("block")
    return x * 2


def scaled(x, k):
    print("scaled")
    return x * k


def twice(x):
    print("twice")
    return x + x


def apply(fn, x):
    return fn(x)


def on_output(module, args, out):
    print("hook")
    return out + 1


def kept(x):
    print("kept")
    return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_forward_hook(on_output)

    def forward(self, x):
        x = checkpoint(block, self.lin(x), use_reentrant=False)
        x = functools.partial(scaled, k=3)(x)
        x = apply(twice, x)
        x.register_hook(kept)
        return x


compiled = torch.compile(Net())
'''


@pytest.mark.dynamo
def test_functions_passed_as_arguments_and_forward_hooks_are_traced(tmp_path):
    # Dynamo follows a function object to where it is called: checkpoint's function, a partial, a user's
    # `apply(fn, x)`, and the forward hooks `nn.Module.__call__` runs; a function a call only keeps (a tensor
    # hook registered in traced code) is not traced where it is registered
    from dynlint.compiler import harness
    path = tmp_path / "m.py"
    path.write_text(PASSED)
    obs = harness.observe(str(path), ["compiled(torch.ones(2, 4, requires_grad=True))"])
    assert obs.error is None
    lines = {i for i, text in enumerate(PASSED.splitlines(), 1) if "print(" in text}
    broke = {b.reported_line for b in obs.breaks} & lines
    assert broke == lines - {PASSED.splitlines().index('    print("kept")') + 1}
    assert {f.line for f in check_source(PASSED).findings if f.code == "DYN301"} == broke


HANDED_IN = '''
import json

import torch
from torch import nn


class Reporter:
    def __init__(self):
        self.lines = []

    def emit(self, **fields):
        self.lines.append(json.dumps(fields))


class Quiet:
    def emit(self, **fields):
        return None


class Model(nn.Module):
    def __init__(self, reporter, other):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.reporter = reporter
        self.other = other

    def forward(self, x):
        y = self.fc(x)
        self.reporter.emit(batch=x.shape[0])
        return y


def main():
    rep = Reporter()
    model = torch.compile(Model(rep, Quiet()))
    model(torch.randn(3, 4))
'''


@pytest.mark.dynamo
def test_a_collaborator_handed_to_the_constructor_is_traced_where_it_is_called(tmp_path):
    """Principle: `self.reporter = reporter` in `__init__` holds what the project's calls of the class pass for
    that parameter (`Model(rep, ...)` with `rep = Reporter()`): the forward's `self.reporter.emit(...)` is traced
    into Reporter.emit, where Dynamo breaks (json.dumps); a class only passed to another parameter is not."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    path = tmp_path / "handed.py"
    path.write_text(HANDED_IN)
    found = [f for f in check_source(HANDED_IN, filename="handed.py").findings if f.code == "DYN310"]
    emit = next(i for i, line in enumerate(HANDED_IN.splitlines(), 1) if "json.dumps" in line)
    assert [f.line for f in found] == [emit]
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None and emit in obs.break_lines(str(path))
    # nothing is traced into Quiet (handed to `other`, which forward never calls)
    assert not [f for f in check_source(HANDED_IN.replace("self.reporter.emit", "self.other.emit"),
                                        filename="handed.py").findings if f.code == "DYN310"]


REGISTERED = '''
import torch
from torch import nn


class Stats:
    def __init__(self, model):
        self.seen = []
        for name, m in model.named_modules():
            if isinstance(m, nn.ReLU):
                m.register_forward_hook(self._make_hook(name))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self.seen.append((name, output.mean().item()))
        return hook


class Sampler:
    def step(self, x, t):
        y = x * 2
        return y[y.sum(-1) > 0]


class Pipeline:
    def __init__(self, net, sampler):
        self.net, self.sampler = net, sampler

    def __call__(self, x):
        step = torch.compile(self.sampler.step)
        return step(self.net(x), 1)


def main():
    net = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    Stats(net)
    torch.compile(net)(torch.randn(2, 4))
    return Pipeline(nn.Linear(4, 4), Sampler())(torch.randn(3, 4))
'''


def test_hooks_registered_on_another_module_and_attributes_unpacked_in_init_are_traced(tmp_path):
    """Principles: a forward hook registered on a module from outside it (`m.register_forward_hook(...)` for each
    `m` of a model's `named_modules()`, the hook made by a factory of the project) runs inside that module's
    compiled forward; `self.net, self.sampler = net, sampler` in `__init__` binds as two assignments do, so
    `torch.compile(self.sampler.step)` compiles what the project's construction of the class passes. Real Dynamo
    breaks at both lines (the hook's `.item()`, the step's boolean mask)."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    path = tmp_path / "registered.py"
    path.write_text(REGISTERED)
    lines = REGISTERED.splitlines()
    item = next(i for i, line in enumerate(lines, 1) if ".item()" in line)
    mask = next(i for i, line in enumerate(lines, 1) if "y[y.sum" in line)
    found = {(f.line, f.code) for f in check_source(REGISTERED, filename="registered.py").findings}
    assert {(item, "DYN201"), (mask, "DYN402")} <= found, found
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None and {item, mask} <= set(obs.break_lines(str(path)))


PARAMETER = '''
import torch
from torch import nn


class RunningMetrics:
    def __init__(self):
        self.correct = 0

    def update(self, logits, target):
        self.correct += (logits.argmax(-1) == target).sum().item()


class Other:
    def update(self, logits, target):
        return None


def eval_step(model, metrics, x, y):
    logits = model(x)
    metrics.update(logits, y)
    return logits


def main():
    model, metrics = nn.Linear(6, 4), RunningMetrics()
    step = torch.compile(eval_step)
    for _ in range(2):
        step(model, metrics, torch.randn(8, 6), torch.randint(0, 4, (8,)))
'''


def test_a_method_called_on_a_parameter_runs_the_class_its_callers_pass(tmp_path):
    """Principle: `metrics.update(...)` on a parameter runs the method of the class the project's calls pass
    for it, a call through `step = torch.compile(eval_step)` being a call of eval_step: the `.item()` in
    RunningMetrics.update breaks the compiled graph (real Dynamo), and nothing is traced into a class no call
    passes."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    path = tmp_path / "param.py"
    path.write_text(PARAMETER)
    item = next(i for i, line in enumerate(PARAMETER.splitlines(), 1) if ".item()" in line)
    found = {(f.line, f.code) for f in check_source(PARAMETER, filename="param.py").findings}
    assert (item, "DYN201") in found, found
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None and item in obs.break_lines(str(path))
    other = PARAMETER.replace("model, metrics = nn.Linear(6, 4), RunningMetrics()",
                              "model, metrics = nn.Linear(6, 4), Other()")
    assert not [f for f in check_source(other, filename="param.py").findings if f.code == "DYN201"]


PROTOCOL = '''
import torch


class NoiseStream:
    def __init__(self, n):
        self.left = torch.tensor(n)

    def __iter__(self):
        return self

    def __next__(self):
        return torch.randn(3) * self.left.item()


def perturb(x, noise):
    return x + next(noise)


def main():
    local = NoiseStream(2)
    step = torch.compile(perturb)
    for _ in range(2):
        step(torch.randn(3), NoiseStream(3))
    return local
'''


def _item_breaks_only_where_traced(tmp_path, source: str, call: str, without: str) -> None:
    """The `.item()` of `source` is a DYN201 finding and a real Dynamo break at its line when `main()` runs;
    with the traced `call` replaced by `without`, nothing is traced there and nothing is reported."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    path = tmp_path / "probe.py"
    path.write_text(source)
    item = next(i for i, line in enumerate(source.splitlines(), 1) if ".item()" in line)
    found = {(f.line, f.code) for f in check_source(source, filename="probe.py").findings}
    assert (item, "DYN201") in found, found
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None and item in obs.break_lines(str(path))
    untraced = source.replace(call, without)
    assert untraced != source
    assert not [f for f in check_source(untraced, filename="probe.py").findings if f.code == "DYN201"]


def test_next_len_and_iter_run_the_method_of_the_class_they_are_given(tmp_path):
    """Principle: `next(noise)` calls `type(noise).__next__` (as `len` and `iter` call `__len__`, `__iter__`),
    which Dynamo inlines like any method: the `.item()` in the `__next__` of the class every caller passes
    breaks the compiled graph (real Dynamo); a class nobody passes is not traced."""
    _item_breaks_only_where_traced(tmp_path, PROTOCOL, "return x + next(noise)", "return x + 1")


INSTANCE_CALL = '''
import torch


class Jitter:
    def __init__(self, scale):
        self.scale = torch.tensor(scale)

    def __call__(self, x):
        return x * self.scale.item()


def main():
    jitter = Jitter(0.5)

    @torch.compile
    def augment(x):
        return jitter(x) + 1

    for _ in range(2):
        augment(torch.randn(3))
'''


def test_calling_an_instance_runs_its_class_call_method(tmp_path):
    """Principle: `jitter(x)` where `jitter` holds an instance of a project class runs `type(jitter).__call__`,
    which Dynamo inlines like any method (here through a closure of the compiled function): its `.item()`
    breaks the compiled graph (real Dynamo); an instance never called is not traced."""
    _item_breaks_only_where_traced(tmp_path, INSTANCE_CALL, "return jitter(x) + 1", "return x + 1")


FILTERS = '''
import torch


class Suppress:
    def __init__(self, token):
        self.token = token

    def apply(self, logits):
        logits[:, self.token] = -1e9


class Clip:
    def apply(self, logits):
        if logits.max().item() > 10:
            logits.clamp_(max=10)


class Decoder:
    def __init__(self):
        self.filters = []
        self.filters.append(Suppress(0))
        self.filters.append(Clip())
        self.step = torch.compile(self._step, backend="eager")

    def _step(self, logits):
        logits = logits * 2
        for f in self.filters:
            f.apply(logits)
        return logits.argmax(-1)


def main():
    decoder = Decoder()
    decoder.step(torch.randn(2, 5))
'''


def test_a_method_called_on_the_items_of_a_list_attribute_runs_the_classes_init_puts_there(tmp_path):
    """Principle: `for f in self.filters: f.apply(logits)` calls `type(f).apply` for each object `__init__`
    appended to the list, which Dynamo inlines like any method: the `.item()` in one of those classes breaks the
    compiled graph (real Dynamo); without the loop nothing there is traced."""
    _item_breaks_only_where_traced(tmp_path, FILTERS, "            f.apply(logits)", "            pass")
    # the frame model reads the call too (the filter breaks, so its call enters a frame): no internal error
    assert not [f for f in check_source(FILTERS, filename="probe.py").findings if f.code == "DYN001"]


TRAINER = '''
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def training_step(self, x):
        loss = self.net(x).pow(2).mean()
        print(f"loss {loss.item():.3f}")
        return loss


class Trainer:
    def fit(self, module, batches):
        step = torch.compile(module.training_step, backend="eager")
        return [step(b) for b in batches]


def main():
    trainer = Trainer()
    trainer.fit(Classifier(), [torch.randn(3, 4), torch.randn(3, 4)])
'''


def test_a_bound_method_of_what_a_method_of_a_local_instance_is_passed_is_traced(tmp_path):
    """Principle: `trainer.fit(Classifier())`, with `trainer` bound to one construction of a project class, is
    a call of `Trainer.fit`, so `torch.compile(module.training_step)` there compiles `Classifier.training_step`
    (real Dynamo breaks at its `.item()`); a class that no call passes is not traced."""
    _item_breaks_only_where_traced(tmp_path, TRAINER, "trainer.fit(Classifier(), [", "trainer.fit(None, [")


OVERRIDE = '''
import torch
import torch.nn as nn


class Metric(nn.Module):
    def forward(self, preds, target):
        self.update(preds, target)
        return preds.sum()

    def update(self, preds, target):
        raise NotImplementedError


class Accuracy(Metric):
    def update(self, preds, target):
        self.correct = (preds.argmax(1) == target).sum().item()


def main():
    metric = torch.compile(Accuracy(), backend="eager")
    metric(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))
'''


def test_a_method_called_on_self_runs_the_override_of_a_subclass(tmp_path):
    """Principle: `self.update(...)` in a base class's `forward` runs `type(self).update`, so the override a
    subclass defines is traced when an instance of it is compiled (real Dynamo breaks at its `.item()`); with no
    override called there, it is not."""
    _item_breaks_only_where_traced(tmp_path, OVERRIDE, "        self.update(preds, target)\n", "")


WRAPPED = '''
import time
from functools import wraps

import torch
import torch.nn as nn


def timed(fn):
    @wraps(fn)
    def wrapper(self, *args, **kwargs):
        start = time.perf_counter()
        out = fn(self, *args, **kwargs)
        self.ms = time.perf_counter() - start
        return out
    return wrapper


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    @timed
    def forward(self, x):
        return self.lin(x)


def main():
    torch.compile(Net(), backend="eager")(torch.randn(2, 4))
'''


def test_the_wrapper_of_a_decorated_forward_is_traced(tmp_path):
    """Principle: calling a compiled module runs what its class holds as `forward`, the outermost decorator's
    wrapper, so Dynamo traces the wrapper's own code too (it breaks at both clock reads); an `@torch.compile`
    above a decorator likewise traces its wrapper, one below it does not (the wrapper runs eagerly)."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    path = tmp_path / "wrapped.py"
    path.write_text(WRAPPED)
    found = {(f.line, f.code) for f in check_source(WRAPPED, filename="wrapped.py").findings}
    assert found == {(12, "DYN307"), (14, "DYN307")}
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None and {12, 14} <= set(obs.break_lines(str(path)))
    below = WRAPPED.replace("    @timed\n    def forward", "    @timed\n    @torch.compile\n    def forward").replace(
        'torch.compile(Net(), backend="eager")(torch.randn(2, 4))', "Net()(torch.randn(2, 4))")
    assert not check_source(below, filename="wrapped.py").findings


BESIDE_NONE = '''
import torch


class Attack:
    def __call__(self, x):
        return self.forward(x)


class Noise(Attack):
    def forward(self, x):
        return x + x.abs().max().item()


def evaluate(x, attack):
    if attack is not None:
        x = attack(x)
    return x.sum()


def main():
    run = torch.compile(evaluate, backend="eager")
    run(torch.randn(3), None)
    run(torch.randn(3), Noise())
'''


def test_a_callable_handed_in_beside_none_runs_its_class(tmp_path):
    """Principle: a parameter that one call passes None and another an instance holds that instance's class
    where it is called (None is never called), and `self.forward(x)` in a base `__call__` runs the subclass's
    `forward` (real Dynamo breaks at its `.item()`)."""
    _item_breaks_only_where_traced(tmp_path, BESIDE_NONE, "run(torch.randn(3), Noise())", "run(torch.randn(3), None)")
