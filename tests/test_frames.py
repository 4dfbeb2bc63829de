"""The frame model (dynlint/analysis/frames.py, rules DYN509/DYN510): a function whose run breaks the graph is
compiled as a frame of its own and guarded on what it reads at each entry. Each case is run under real Dynamo
too: where dynlint reports a recompile, Dynamo recompiles at that line; where it stays silent (the break
only some runs reach, None from one caller and a tensor from another of a function entered from eager code,
a value handed on), the case says why, and Dynamo agrees that nothing recompiles there."""
import textwrap

import pytest

from dynlint import api
from dynlint.compiler import harness

LAYERS = '''
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self, index, flag, checkpointing=False):
        super().__init__()
        self.index = index
        self.flag = flag
        self.checkpointing = checkpointing
        self.proj = nn.Linear(4, 4)

    def forward(self, x, bias=None):
{body}
        return self.proj(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(i, {flag}) for i in range(4)])

    def forward(self, x):
{outer}
        return x


def run():
    m = torch.compile(Model())
    with torch.no_grad():
        m(torch.ones(2, 4))
        m(torch.ones(2, 4))
'''
PLAIN = "        for layer in self.layers:\n            x = layer(x)"


def _program(body: str, outer: str = PLAIN, flag: str = "False") -> str:
    return LAYERS.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8), outer=outer, flag=flag)


def _check(src: str, tmp_path):
    """(dynlint's DYN509/DYN510 lines, the lines real Dynamo's recompiles point at)."""
    findings, recompiled = _observe(src, tmp_path, ("DYN509", "DYN510"))
    return sorted({f.line for f in findings}), sorted(recompiled)


def _observe(src: str, tmp_path, select):
    """(dynlint's findings of the selected rules, the lines real Dynamo's recompiles point at) for `run()`."""
    path = tmp_path / "model.py"
    path.write_text(src)
    # preview too: DYN510 is a preview rule by its measured precision, which is not what these cases test
    findings = api.check_source(src, filename="model.py", select=select, preview=True).findings
    obs = harness.observe(str(path), ["run()"])
    assert obs.error is None, obs.error
    return findings, {line for lines in obs.recompile_lines(str(path)) for line in lines}


def _line(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


@pytest.mark.parametrize("body,flag,read", [
    ('y = x * self.index\nprint("layer")\nx = x + y', "False", "x * self.index"),     # a new value per layer
    ('if self.flag:\n    x = x + 1\nprint("layer")', "i % 2 == 1", "if self.flag:"),  # two values
])
def test_a_value_set_per_layer_recompiles_a_layer_that_breaks(body, flag, read, tmp_path):
    src = _program(body, flag=flag)
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, read)]
    assert _line(src, read) in recompiled


def test_the_same_value_in_every_layer_is_not_reported(tmp_path):
    src = _program('if self.flag:\n    x = x + 1\nprint("layer")', flag="True")
    found, recompiled = _check(src, tmp_path)
    assert found == [] and _line(src, "if self.flag:") not in recompiled


def test_without_the_break_the_layer_is_inlined_and_nothing_recompiles(tmp_path):
    src = _program("y = x * self.index\nx = x + y")
    found, recompiled = _check(src, tmp_path)
    assert found == [] and recompiled == []


def test_a_break_that_only_a_flag_reaches_makes_no_frame(tmp_path):
    # the break runs only with checkpointing on (off here, as by default): the layers stay inlined
    src = _program('y = x * self.index\nif self.checkpointing:\n    print("checkpointing")\nx = x + y')
    found, recompiled = _check(src, tmp_path)
    assert found == [] and recompiled == []


def test_none_for_the_first_layer_then_a_tensor(tmp_path):
    outer = ("        bias = None\n        for layer in self.layers:\n            x = layer(x, bias)\n"
             "            bias = x")
    src = _program('if bias is None:\n    bias = x\nprint("layer")\nx = x + bias', outer=outer)
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, "if bias is None:")]
    assert found[0] in recompiled


def test_none_for_the_first_layer_handed_on_to_the_function_that_tests_it(tmp_path):
    # the layer's forward breaks and passes `position_bias` on; the attention it calls (inlined into the layer's
    # frame) tests it: None at the first layer's entry, the tensor the layer returned at the next ones
    src = '''
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, position_bias=None):
        if position_bias is None:
            position_bias = torch.zeros_like(x)
        return self.proj(x) + position_bias, position_bias


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()

    def forward(self, x, position_bias=None):
        print("layer")
        x, position_bias = self.attention(x, position_bias=position_bias)
        return x, position_bias


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(3)])

    def forward(self, x):
        position_bias = None
        for layer in self.layers:
            x, position_bias = layer(x, position_bias=position_bias)
        return x


def run():
    m = torch.compile(Model())
    with torch.no_grad():
        m(torch.ones(2, 4))
'''
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, "if position_bias is None:")]
    assert found[0] in recompiled


def test_an_argument_a_tensor_at_one_call_and_left_out_at_another(tmp_path):
    # `y, _ = self.embed(x)`: the first of what the submodule returns is a tensor (its every return says so);
    # the frame of `Act.forward` sees the default None at one call and it at the other (None first: Dynamo's
    # guard is then `identity is None`, at the test; a tensor first is guarded on its type, at no line)
    src = '''
import torch
from torch import nn


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x), None


class Act(nn.Module):
    def forward(self, x, identity=None):
        x = x if identity is None else identity + x
        print("act")
        return x * 2, None


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = Embed()
        self.act1 = Act()
        self.act2 = Act()

    def forward(self, x):
        y, _ = self.embed(x)
        x, _ = self.act1(x)
        x, _ = self.act2(x, identity=y)
        return x


def run():
    m = torch.compile(Model())
    with torch.no_grad():
        m(torch.ones(2, 4))
'''
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, "x = x if identity is None else identity + x")]
    assert found[0] in recompiled


def test_a_flag_the_layer_sets_on_an_object_every_layer_shares(tmp_path):
    src = '''
import types

import torch
from torch import nn


class Layer(nn.Module):
    def forward(self, x, state):
        if not state.ready:
            x = x + 1
        state.ready = True
        print("layer")
        return x * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(3)])

    def forward(self, x):
        state = types.SimpleNamespace(ready=False)
        for layer in self.layers:
            x = layer(x, state)
        return x


def run():
    m = torch.compile(Model())
    m(torch.ones(3))
'''
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, "if not state.ready:")]
    assert found[0] in recompiled


def test_a_value_from_tolist_read_after_the_break(tmp_path):
    src = '''
import torch


@torch.compile
def per_expert(x, route):
    sizes = torch.bincount(route, minlength=4).tolist()
    return [part.sum() for part in x.split(sizes)]


def run():
    per_expert(torch.ones(8, 2), torch.tensor([0, 0, 1, 1, 1, 2, 3, 3]))
    per_expert(torch.ones(8, 2), torch.tensor([0, 1, 1, 1, 1, 2, 2, 3]))
'''
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, "x.split(sizes)")]
    assert found[0] in recompiled


def test_a_value_from_tolist_handed_on_is_not_reported_here(tmp_path):
    # returned: whatever guards on it does so where the caller uses it, not on this line
    src = '''
import torch


@torch.compile
def sizes_of(route):
    sizes = torch.bincount(route, minlength=4).tolist()
    return sizes


def run():
    sizes_of(torch.tensor([0, 0, 1, 1, 1, 2, 3, 3]))
    sizes_of(torch.tensor([0, 1, 1, 1, 1, 2, 2, 3]))
'''
    found, recompiled = _check(src, tmp_path)
    assert found == [] and _line(src, "return sizes") not in recompiled


def test_removing_the_break_in_another_file_clears_the_finding(tmp_path):
    """The frame pass runs on the whole project's breaks: a cached finding in one file must go when the break
    that made its function a frame goes from another."""
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (tmp_path / "helpers.py").write_text("def noisy(x):\n    print('layer')\n    return x\n")
    (tmp_path / "model.py").write_text(_program("y = x * self.index\nx = noisy(x) + y")
                                       .replace("import torch\n", "import torch\nfrom helpers import noisy\n", 1))
    cfg = api.load_config([str(tmp_path)], api.known_codes())

    def dyn509():
        return [(f.path, f.line) for f in api.check([str(tmp_path)], cfg, cache=True).findings if f.code == "DYN509"]
    assert dyn509() == [("model.py", _line((tmp_path / "model.py").read_text(), "x * self.index"))]
    (tmp_path / "helpers.py").write_text("def noisy(x):\n    return x\n")
    assert dyn509() == []


MOE = '''
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        picks = self.layer(x).argmax(-1)
        counts = (picks[:, None] == torch.arange(4)).sum(0)
        expert_size = counts.tolist()
        return picks.sort().indices, expert_size


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4, 4))

    def forward(self, x, expert_size):
        parts = x.split(expert_size, dim=0)
        return torch.cat([p @ self.weight[i] for i, p in enumerate(parts)])


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.experts = Experts()
        self.seen = []

    def forward(self, x):
        order, expert_size = self.gate(x)
        self.seen.append(expert_size)
        return self.experts(x[order], expert_size)


torch.manual_seed(0)            # the weights too: what the router picks must not depend on earlier tests
model = MoE()
step = torch.compile(model)


def run():
    torch.manual_seed(0)
    for _ in range(3):
        step(torch.randn(16, 4))
'''


def test_values_a_gating_module_returns_from_a_break_recompile_where_the_experts_read_them(tmp_path):
    # transformers' granitemoe / jetmoe: `expert_size = counts.tolist()` in the router, returned, and split by
    # in the experts' module: the MoE layer's graph ends at the router call; the code resumed after it
    # (the experts' forward, inlined) is guarded on the sizes. Appending them to a list guards nothing.
    findings, recompiled = _observe(MOE, tmp_path, ("DYN511",))
    found = sorted({f.line for f in findings})
    assert found == [_line(MOE, "parts = x.split(expert_size")] and set(found) <= recompiled
    assert _line(MOE, "self.seen.append") not in found


def test_a_cached_host_value_finding_follows_edits_of_the_file_that_makes_the_value(tmp_path):
    """The values' flow is kept between runs (frames.py `_host_flow`); an edit of the gating module, in
    another file, that stops returning the Python list must clear the finding in the experts' module."""
    gate, rest = MOE.split("class Experts(nn.Module):")
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (tmp_path / "gate.py").write_text(gate)
    (tmp_path / "model.py").write_text("import torch\nfrom torch import nn\nfrom gate import Gate\n\n\n"
                                       "class Experts(nn.Module):" + rest)
    cfg = api.load_config([str(tmp_path)], api.known_codes())

    def dyn511():
        return [(f.path, f.line) for f in api.check([str(tmp_path)], cfg, cache=True).findings if f.code == "DYN511"]
    split = _line((tmp_path / "model.py").read_text(), "parts = x.split(expert_size")
    assert dyn511() == [("model.py", split)] == dyn511()                   # cold, then from the cache
    (tmp_path / "gate.py").write_text(gate.replace("expert_size = counts.tolist()", "expert_size = counts"))
    assert dyn511() == []


def test_a_cached_handed_on_none_finding_follows_edits_of_the_function_that_tests_it(tmp_path):
    """What a frame hands on is kept between runs (frames.py `_pass_on`); an edit of the attention, in
    another file, that stops taking the argument must clear the finding there."""
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    attention = '''import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, position_bias=None):
        if position_bias is None:
            position_bias = torch.zeros_like(x)
        return self.proj(x) + position_bias, position_bias
'''
    (tmp_path / "attention.py").write_text(attention)
    (tmp_path / "model.py").write_text('''import torch
from torch import nn
from attention import Attention


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()

    def forward(self, x, position_bias=None):
        print("layer")
        x, position_bias = self.attention(x, position_bias=position_bias)
        return x, position_bias


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(3)])

    def forward(self, x):
        position_bias = None
        for layer in self.layers:
            x, position_bias = layer(x, position_bias=position_bias)
        return x
''')
    cfg = api.load_config([str(tmp_path)], api.known_codes())

    def dyn509():       # (the layers' input, then their outputs, requiring grad: another DYN509, not this one's)
        return [(f.path, f.line) for f in api.check([str(tmp_path)], cfg, cache=True).findings
                if f.code == "DYN509" and "requires grad" not in f.message]
    test = _line(attention, "if position_bias is None:")
    assert dyn509() == [("attention.py", test)] == dyn509()                # cold, then from the cache
    (tmp_path / "attention.py").write_text(attention.replace("position_bias=None", "bias=None").replace(
        "if position_bias is None:", "if bias is None:"))
    assert dyn509() == []


ENCODER_DECODER = '''
import torch
from torch import nn


class Positions(nn.Embedding):
    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor | None = None):
        if position_ids is None:
            position_ids = torch.arange(input_ids.shape[1])
        return super().forward(position_ids)


class Cache:
    def __init__(self):
        self.is_updated = {i: False for i in range(3)}
        self.cross = [None] * 3


class Attention(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(8, 8)

    def forward(self, hidden_states, key_value_states=None, cache: Cache | None = None):
        is_cross_attention = key_value_states is not None
        is_updated = False
        if cache is not None:
            is_updated = cache.is_updated.get(self.layer_idx)
        if is_cross_attention and cache is not None and is_updated:
            kv = cache.cross[self.layer_idx]
        else:
            kv = self.proj(key_value_states if is_cross_attention else hidden_states)
            if is_cross_attention and cache is not None:
                cache.cross[self.layer_idx] = kv
                cache.is_updated[self.layer_idx] = True
        return hidden_states + kv


class EncoderLayer(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.attn = Attention(i)

    def forward(self, x):
        return self.attn(x)


class DecoderLayer(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.self_attn = Attention(i)
        self.cross_attn = Attention(i)

    def forward(self, x, encoder_hidden_states=None, cache=None):
        x = self.self_attn(x)
        if encoder_hidden_states is not None:
            x = self.cross_attn(x, key_value_states=encoder_hidden_states, cache=cache)
        return x


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.positions = Positions(16, 8)
        self.layers = nn.ModuleList([EncoderLayer(i) for i in range(3)])

    def forward(self, x):
        x = x + self.positions(x[:, :, 0])
        for layer in self.layers:
            if self.training:
                if torch.rand([]) < 0.0:        # layer drop: a data-dependent branch, in training
                    continue
            x = layer(x)
        return x


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.positions = Positions(16, 8)
        self.layers = nn.ModuleList([DecoderLayer(i) for i in range(3)])

    def forward(self, x, encoder_hidden_states=None, cache=None):
        position_ids = torch.arange(x.shape[1]) + 0
        x = x + self.positions(x[:, :, 0], position_ids=position_ids)
        for layer in self.layers:
            if self.training:
                if torch.rand([]) < 0.0:
                    continue
            x = layer(x, encoder_hidden_states, cache)
        return x
{models}

def run():
    m = torch.compile({entry}())
    m(torch.ones(2, 4, 8))
    m(torch.ones(2, 4, 8))
'''
SEQ2SEQ = '''

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()

    def forward(self, x):
        cache = Cache()
        encoded = self.encoder(x)
        return self.decoder(x, encoder_hidden_states=encoded, cache=cache)
'''
CAUSAL_LM = '''

class CausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()

    def forward(self, x, encoder_hidden_states=None):
        return self.decoder(x, encoder_hidden_states=encoder_hidden_states, cache=Cache())
'''


def test_an_encoder_decoder_in_training_recompiles_per_layer_and_for_the_decoders_positions(tmp_path):
    # layer drop breaks both loops in training, so the layers and the positions' forward are entered as frames
    # from eager code: the encoder's call passes position_ids None, the decoder's (run after it) a tensor; each
    # decoder layer's cross-attention sets its own flag in the cache all layers share
    src = ENCODER_DECODER.replace("{models}", SEQ2SEQ).replace("{entry}", "Model")
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, "if position_ids is None:"),
                     _line(src, "if is_cross_attention and cache is not None and is_updated:")]
    assert set(found) <= set(recompiled)


def test_cross_attention_no_project_code_runs_is_not_reported(tmp_path):
    # the causal LM alone: nothing in the project hands the decoder encoder states, so the cross-attention (and
    # its flag) runs only for a user who passes them; the decoder's positions are entered from one caller
    src = ENCODER_DECODER.replace("{models}", CAUSAL_LM).replace("{entry}", "CausalLM")
    found, recompiled = _check(src, tmp_path)
    assert found == []
    assert _line(src, "if is_cross_attention and cache is not None and is_updated:") not in recompiled
    assert _line(src, "if position_ids is None:") not in recompiled


def test_a_builtin_passed_at_one_entry_is_the_guard_that_fails_first(tmp_path):
    # the decoder hands its positions the builtin `input` (a slip for its tensor): the guard on that tensor
    # argument, checked on entry, fails before the `is None` test's, so the recompile is named at no line
    src = ENCODER_DECODER.replace("{models}", SEQ2SEQ).replace("{entry}", "Model").replace(
        "self.positions(x[:, :, 0], position_ids=position_ids)", "self.positions(input, position_ids=position_ids)")
    found, recompiled = _check(src, tmp_path)
    assert _line(src, "if position_ids is None:") not in found + recompiled
    assert found == [_line(src, "if is_cross_attention and cache is not None and is_updated:")]


def test_layers_appended_to_a_module_list_in_init_are_followed(tmp_path):
    # `self.layers = nn.ModuleList()` then `self.layers.append(Layer(...))` in a loop: the index knows what the
    # list holds, so the layers' forward is found as the frame each layer enters
    src = _program('y = x * self.index\nprint("layer")\nx = x + y').replace(
        "        self.layers = nn.ModuleList([Layer(i, False) for i in range(4)])",
        "        self.layers = nn.ModuleList()\n        for i in range(4):\n            self.layers.append(Layer(i, False))")
    assert "self.layers.append(Layer(i, False))" in src
    found, recompiled = _check(src, tmp_path)
    assert found == [_line(src, "x * self.index")]
    assert found[0] in recompiled


def test_a_break_on_the_right_of_and_that_no_run_reaches_makes_no_frame(tmp_path):
    # `x.dtype == torch.float16 and torch.isinf(x).any()`: in float32 the right side never runs, nothing breaks
    src = _program('if x.dtype == torch.float16 and torch.isinf(x).any():\n    x = x.clamp(-1, 1)\ny = x * self.index')
    found, recompiled = _check(src, tmp_path)
    assert found == []
    assert _line(src, "x * self.index") not in recompiled


def test_a_wrapper_whose_functions_are_called_with_more_or_fewer_arguments(tmp_path):
    # the wrapper's code is one frame for every function it wraps; `shift` called with one argument and with
    # two: the same function, so the guard that fails is the length of `args`, where the wrapper reads it
    src = '''
import functools

import torch


def logged(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        first = args[0]
        return func(first, *args[1:], **kwargs)
    return wrapper


@logged
def shift(x, y=None):
    print("shift")
    return x + 1 if y is None else x + y


@logged
def scale(x):
    print("scale")
    return x * 2


@torch.compile
def step(x):
    return shift(x) + shift(x, x) + scale(x)


def run():
    step(torch.ones(3))
    step(torch.ones(3))
'''
    findings, recompiled = _observe(src, tmp_path, ("DYN513",))
    found = sorted((f.line, f.message.split(" ")[0]) for f in findings)
    assert found == [(_line(src, "first = args[0]"), "`args`"), (_line(src, "return func(first"), "`func`")]
    assert {line for line, _ in found} <= recompiled


def test_an_entry_that_skips_the_first_read_of_args_is_guarded_at_the_next(tmp_path):
    # a factory decorator: methods read `args[0]` under `if method:`, plain functions skip it; `shift` is
    # called with keywords only and with one positional argument, so its entries differ at the read every
    # path runs, the call `func(*args, **kwargs)` (Dynamo's `not args`)
    src = '''
import functools

import torch


def logged(method):
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if method:
                print(args[0])
            return func(*args, **kwargs)
        return wrapper
    return decorate


@logged(False)
def shift(x):
    print("shift")
    return x + 1


@logged(False)
def scale(x):
    print("scale")
    return x * 2


@torch.compile
def step(x):
    return shift(x=x) + shift(x) + scale(x)


def run():
    step(torch.ones(3))
    step(torch.ones(3))
'''
    findings, recompiled = _observe(src, tmp_path, ("DYN513",))
    found = sorted((f.line, f.message.split(" ")[0]) for f in findings)
    call = _line(src, "return func(*args, **kwargs)")
    assert found == [(_line(src, "print(args[0])"), "`args`"), (call, "`args`"), (call, "`func`")]
    assert call in recompiled
