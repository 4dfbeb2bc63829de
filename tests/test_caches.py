"""Dicts that outlive a compiled call and that the compiled code fills (DYN518 for one the caller hands in,
DYN306 for one the module keeps), under real Dynamo: the finding stands at the line Dynamo's recompile log
names, the first read of the dict's keys; a dict made afresh for each call recompiles nothing and gets no
finding."""
import pytest

from conftest import dynamo_guard_lines, line_of
from dynlint.api import check_source

HANDED = '''
import torch


def attend(x, cache):
    v = cache.get("k")
    if v is not None:
        x = x + v
    cache["k"] = x
    return x * 2


def main():
    step = torch.compile(attend, backend="eager")
    cache = {}
    for _ in range(3):
        step(torch.randn(3), cache)
'''

# an argument popped and replaced by what the traced code made of it, the same dict handed in at every step
POPPED = '''
import torch


def denoise(x, extras):
    if extras is not None and "image" in extras:
        image = extras.pop("image")
        extras.update({"image_states": image * 2})
    return x * 2


def main():
    step = torch.compile(denoise, backend="eager")
    extras = {"image": torch.ones(3)}
    for _ in range(3):
        step(torch.randn(3), extras)
'''

# fairseq's layout: one helper tests the state, another fills it, both handed the caller's dict
SPLIT = '''
import torch
import torch.nn as nn


class Stateful:
    def get_state(self, state, key):
        if state is None or key not in state:
            return None
        return state[key]

    def set_state(self, state, key, value):
        if state is not None:
            state[key] = value


class Attention(nn.Module, Stateful):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, state=None):
        k = self.proj(x)
        prev = self.get_state(state, "prev")
        if prev is not None:
            k = torch.cat([prev, k])
        self.set_state(state, "prev", k)
        return k.sum(0)


def main():
    model = torch.compile(Attention(), backend="eager")
    state = {}
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(2, 4), state)
'''

MODULE = '''
import torch
import torch.nn as nn


class Masks(nn.Module):
    def __init__(self):
        super().__init__()
        self._cache = {}

    def forward(self, x):
        n = x.shape[0]
        if n in self._cache:
            return x + self._cache[n]
        mask = torch.ones(n)
        self._cache[n] = mask
        return x + mask


def main():
    m = torch.compile(Masks(), backend="eager")
    for _ in range(3):
        m(torch.randn(4))
'''


# a plain object the caller keeps and hands in again, whose number the compiled code advances (DYN306)
COUNTER = '''import torch


class Cache:
    def __init__(self):
        self.seen = 0


def f(x, cache):
    cache.seen += 1
    return x * cache.seen


def main():
    opt = torch.compile(f, backend="eager")
    c = Cache()
    for _ in range(3):
        opt(torch.randn(3), c)
'''




@pytest.mark.parametrize("source, code, guard", [
    (HANDED, "DYN518", 'v = cache.get("k")'),
    (POPPED, "DYN518", 'if extras is not None and "image" in extras:'),
    (SPLIT, "DYN518", "if state is None or key not in state:"),
    (MODULE, "DYN306", "if n in self._cache:"),
    (COUNTER, "DYN306", "cache.seen += 1"),
])
def test_a_filled_dict_is_reported_where_dynamo_guards_its_keys(tmp_path, source, code, guard):
    pytest.importorskip("torch")
    found = [f.line for f in check_source(source, filename="probe.py").findings if f.code == code]
    assert found == [line_of(source, guard)]
    assert dynamo_guard_lines(tmp_path, source, lineless=False) == [line_of(source, guard)]


@pytest.mark.parametrize("fresh", [
    "    for _ in range(3):\n        cache = {}\n        step(torch.randn(3), cache)\n",
    "    for _ in range(3):\n        step(torch.randn(3), {})\n",
])
def test_a_dict_made_for_each_call_recompiles_nothing_and_is_not_reported(tmp_path, fresh):
    pytest.importorskip("torch")
    source = HANDED.replace("    cache = {}\n    for _ in range(3):\n        step(torch.randn(3), cache)\n", fresh)
    assert source != HANDED
    assert not [f for f in check_source(source, filename="probe.py").findings if f.code == "DYN518"]
    assert dynamo_guard_lines(tmp_path, source, lineless=False) == []


def test_a_key_rewritten_only_when_present_keeps_the_key_set(tmp_path):
    """`if "k" in cache: cache["k"] = ...` rewrites a key the dict had: its keys never change."""
    pytest.importorskip("torch")
    source = HANDED.replace('''    v = cache.get("k")
    if v is not None:
        x = x + v
    cache["k"] = x
''', '''    if "k" in cache:
        cache["k"] = cache["k"] + x
''').replace("    cache = {}\n", '    cache = {"k": torch.zeros(3)}\n')
    assert source != HANDED and 'cache = {"k"' in source
    assert not [f for f in check_source(source, filename="probe.py").findings if f.code == "DYN518"]
    assert dynamo_guard_lines(tmp_path, source, lineless=False) == []


def test_a_dict_the_traced_code_makes_is_not_the_callers():
    """A memo the compiled function makes itself and hands to its helpers is new on every call."""
    source = HANDED.replace("def attend(x, cache):\n", "def attend(x, unused):\n    cache = {}\n")
    assert not [f for f in check_source(source, filename="probe.py").findings if f.code == "DYN518"]


def test_an_object_made_for_each_call_starts_its_numbers_afresh(tmp_path):
    pytest.importorskip("torch")
    source = COUNTER.replace("    c = Cache()\n    for _ in range(3):\n        opt(torch.randn(3), c)\n",
                             "    for _ in range(3):\n        c = Cache()\n        opt(torch.randn(3), c)\n")
    assert source != COUNTER
    assert not [f for f in check_source(source, filename="probe.py").findings if f.code == "DYN306"]
    assert dynamo_guard_lines(tmp_path, source, lineless=False) == []
