"""The recompile rules follow values that change between calls the way the guard model says they recompile
(dynlint/analysis/guards.py, measured in docs/guards.md): through the functions a loop calls, into module
attributes a training loop sets, into lists that grow. Each case states what Dynamo does with it."""
import textwrap

import pytest

from dynlint import api

COMPILED = '''
import torch
from torch import nn


@torch.compile
def f(x, v):
    return x * 2 if v is None else x * v
'''


def codes(src: str, select=("DYN5",)) -> list:
    result = api.check_source(textwrap.dedent(COMPILED + src), select=select)
    return sorted(f.code for f in result.findings)


@pytest.mark.parametrize("arg,found", [
    ("0.5 + i", ["DYN501"]),                # a new float each call: one recompile (then a graph input)
    ("i % 2 == 0", ["DYN501"]),             # a bool: one graph per value
    ('"mode" * (i + 1)', ["DYN501"]),       # a new string each call: every value recompiles
    ("None if i % 2 else torch.ones(3)", ["DYN501"]),
    ("i", ["DYN501"]),                      # an int: one recompile, then dynamic
    ("batches[i]", []),                     # a tensor (or not known): nothing said
])
def test_an_argument_made_of_a_parameter_that_a_loop_varies(arg, found):
    src = f'''
batches = [torch.ones(3) for _ in range(4)]


def step(i):
    return f(torch.ones(3), {arg})


for i in range(4):
    step(i)
'''
    assert codes(src) == found


def test_a_parameter_that_no_loop_varies_is_not_reported():
    src = '''
def step(i):
    return f(torch.ones(3), 0.5 + i)


step(3)
'''
    assert codes(src) == []


NET = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.step = 0

    def forward(self, x):
        return self.proj(x) * {use}


def fit(x):
    model = torch.compile(Net())
    for step in range(10):
        {assign}
        model(x)
'''


@pytest.mark.parametrize("method,found", [
    ("def advance(self):\n        self.step += 1", ["DYN506"]),         # changes what forward reads
    ("def advance(self):\n        self.other = 1", []),                 # not an int forward reads
])
def test_a_method_the_loop_calls_that_changes_an_int_attribute_forward_reads(method, found):
    src = NET.format(use="min(1.0, self.step / 100)", assign="model.advance()").replace(
        "    def forward(self, x):", f"    {method}\n\n    def forward(self, x):")
    assert codes(src) == found
    if found:
        (f,) = api.check_source(textwrap.dedent(COMPILED + src), select=("DYN506",)).findings
        assert "`model.step` (in `Net.advance`)" in f.message


@pytest.mark.parametrize("init,assign,said", [
    ("0.5", "model.step = step / 10", "a float attribute"),        # once, then a graph input
    ("True", "model.step = step % 2 == 0", "a bool attribute"),     # one graph per value
])
def test_float_and_bool_module_attributes_set_between_calls_say_how_often(init, assign, said):
    src = NET.format(use="self.step", assign=assign).replace("self.step = 0\n", f"self.step = {init}\n")
    (f,) = api.check_source(textwrap.dedent(COMPILED + src), select=("DYN506",)).findings
    assert said in f.message and "the first change recompiles" in f.message


def test_int_attributes_set_under_compound_statements_of_init_are_seen():
    src = NET.format(use="min(1.0, self.step / 100)", assign="model.step = step").replace(
        "        self.step = 0\n", "        with torch.no_grad():\n            if True:\n                self.step = 0\n"
        "        try:\n            pass\n        finally:\n            self.other = 1\n")
    assert codes(src) == ["DYN506"]


@pytest.mark.parametrize("use,assign,found", [
    ("min(1.0, self.step / 100)", "model.step = step", ["DYN506"]),     # a module's int: every value recompiles
    ("min(1.0, self.step / 100)", "model.step += 1", ["DYN506"]),
    ("min(1.0, self.step / 100)", "model.step = 0", []),                 # the same value every time
    ("2", "model.step = step", []),                                      # forward never reads it: not guarded
])
def test_a_module_int_attribute_set_between_calls(use, assign, found):
    assert codes(NET.format(use=use, assign=assign)) == found


@pytest.mark.parametrize("body,found", [
    ("history.append(x)\n        x = f(x, history)", ["DYN507"]),       # one item longer each call
    ("history = [x]\n        x = f(x, history)", []),                   # made afresh, the same length
])
def test_a_list_that_grows_between_calls(body, found):
    src = f'''
@torch.compile
def g(x, past):
    for p in past:
        x = x + p
    return x


def run(x):
    history = []
    for _ in range(5):
        {body}
    return x
'''.replace("f(x, history)", "g(x, history)")
    assert codes(src) == found


LAZY = '''
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = None
        self.cache = {init}

    def forward(self, x):
        if self.proj is None:
            self.proj = nn.Linear(x.shape[-1], 3)
        n = x.shape[0]
        if n not in self.cache:
            self.cache[n] = torch.arange(n)
        return self.proj(x) + self.cache[n][:, None]
'''


def test_a_submodule_made_by_forward_and_a_dict_cache_it_fills_recompile_once_each():
    result = api.check_source(textwrap.dedent(COMPILED + LAZY.format(init="{}")), select=("DYN306",))
    said = {f.line: f.message for f in result.findings}
    # the cache's finding stands where Dynamo guards its keys, `if n not in self.cache:` (tests/test_caches.py)
    assert [n for n in said] == [18, 20]
    assert "the call that creates it recompiles once" in said[18] and "each new key recompiles once" in said[20]
    # not known to be a dict (a tensor buffer indexed in place is traced into the graph): nothing said
    result = api.check_source(textwrap.dedent(COMPILED + LAZY.format(init="torch.zeros(8, 8)")), select=("DYN306",))
    assert [f.line for f in result.findings] == [18]


@pytest.mark.parametrize("first,second,found", [
    ("0.7", "1.0", ["DYN508"]),          # a float: the second value recompiles (then it is a graph input)
    ('"gelu"', '"relu"', ["DYN508"]),    # a string: one graph per value
    ("True", "False", ["DYN508"]),
    ("0.7", "0.7", []),                  # the same value: one graph
    ("2", "3", ["DYN508"]),              # an int: the second value recompiles once (then it is dynamic)
])
def test_constants_that_differ_between_call_sites(first, second, found):
    src = f'''
def evaluate(x):
    a = f(x, v={first})
    return a


def train(x):
    return f(x, v={second})
'''
    assert codes(src) == found


def test_a_sampler_index_set_lazily_then_advanced_is_reported():
    """`if self.index is None: self.index = 0` sets a first value once; `self.index += 1` then changes it on
    every call: a plain object's int, so one recompile after the None check, then dynamic (docs/guards.md)."""
    src = '''
class Sampler:
    def __init__(self):
        self.sigmas = torch.linspace(1, 0, 20)
        self.index = None

    def step(self, x):
        if self.index is None:
            self.index = 0
        sigma = self.sigmas[self.index]
        self.index += 1
        return x * sigma


sampler = Sampler()
step = torch.compile(sampler.step)
'''
    code = textwrap.dedent(COMPILED + src)
    (f,) = api.check_source(code, select=("DYN306",)).findings
    assert "self.index += 1" in f.message and "attribute of the object" in f.message
    # where Dynamo's guard is: the first read, `if self.index is None:`
    assert code.splitlines()[f.line - 1].strip() == "if self.index is None:"


STEP_COUNTER = '''\
import torch


class Sched:
    def __init__(self):
        self.step_index = 0

    def step(self, x):
        y = x * self.step_index
        self.step_index = self.step_index + 1
        return y


sched = Sched()
step = torch.compile(sched.step)
'''


@pytest.mark.dynamo
def test_a_counter_assigned_on_self_is_reported_where_dynamo_guards(tmp_path, monkeypatch):
    """`self.step_index = self.step_index + 1` (an Assign, not `+=`) in a compiled method: DYN306 raised
    AttributeError on it (four diffusers schedulers in the zoo); now reported at the read Dynamo guards on."""
    import importlib
    import logging

    import torch

    found = [(f.line, f.code) for f in api.check_source(STEP_COUNTER, "sched_probe.py").findings]
    assert found == [(9, "DYN306")]
    (tmp_path / "sched_probe.py").write_text(STEP_COUNTER)
    monkeypatch.syspath_prepend(str(tmp_path))
    guards = []

    class Guards(logging.Handler):
        def emit(self, record):
            guards.extend(line for line in record.getMessage().splitlines() if " in step" in line and "# " in line)

    torch._dynamo.reset()
    handler = Guards()
    log = logging.getLogger("torch._dynamo")
    torch._logging.set_logs(recompiles=True)
    log.addHandler(handler)
    try:
        probe = importlib.import_module("sched_probe")
        for _ in range(3):
            probe.step(torch.ones(2))
    finally:
        log.removeHandler(handler)
        torch._logging.set_logs()
        torch._dynamo.reset()
    assert guards and all("self.step_index" in g and "sched_probe.py:9 in step" in g for g in guards), guards


LOSSES = '''import torch
import torch.nn.functional as F


def focal_loss(logits, target, gamma=2.0, reduction="mean"):
    ce = F.cross_entropy(logits, target, reduction="none")
    pt = torch.exp(-ce)
    loss = (1 - pt) ** gamma * ce
    if reduction == "mean":
        return loss.mean()
    return loss.sum()
'''

TRAIN = '''import torch

from xlosses import losses


def run():
    logits, target = torch.randn(6, 4), torch.randint(0, 4, (6,))
    fl = torch.compile(losses.focal_loss, backend="eager")
    fl(logits, target)
    fl(logits, target, reduction="sum")
    fl(logits, target, 1.0, "sum")
'''


@pytest.mark.dynamo
def test_constants_passed_in_another_file_are_guarded_where_the_compiled_function_reads_them(tmp_path, monkeypatch):
    """A function compiled and called in another file (`fl = torch.compile(losses.focal_loss)` in a script):
    each parameter the calls there set to different constants, or leave to the default, is reported at its
    guard in the function's own file, the line real Dynamo's recompile log names."""
    from dynlint.compiler import harness

    pkg = tmp_path / "xlosses"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "losses.py").write_text(LOSSES)
    (pkg / "train.py").write_text(TRAIN)
    found = sorted((f.path.rsplit("/", 1)[-1], f.line) for f in api.check([str(pkg)]).findings if f.code == "DYN508")
    assert found == [("losses.py", 8), ("losses.py", 9)]
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    obs = harness.observe(str(pkg / "train.py"), ["run()"])
    assert obs.error is None, obs.error
    guarded = {(f.path.rsplit("/", 1)[-1], f.line) for r in obs.recompiles for f in r.failures[:1]}
    assert guarded == {("losses.py", 8), ("losses.py", 9)}


def test_a_hook_handles_remove_is_not_a_change_of_a_container():
    """`self.handle.remove()` (a `RemovableHandle`, no argument) is not `list.remove(x)`: DYN615 says it breaks,
    DYN306 has nothing to say; `self.seen.remove(x)` still changes a list attribute."""
    src = textwrap.dedent("""
        import torch
        from torch import nn

        class Probe(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.handle = self.body.register_forward_hook(lambda m, i, o: None)
                self.seen = [1]

            def forward(self, x):
                self.handle.remove()
                self.seen.remove(1)
                return self.body(x)
    """)
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(13, "DYN615"), (14, "DYN306")]
