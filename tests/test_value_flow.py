"""The value analysis is flow-sensitive: a use of a name sees the bindings that reach it, not every binding of
the name in the function (dynlint/analysis/tensors/assignments.py, `reaching`). Each case is checked through the
rules, as a user sees it; each rule's own Dynamo proofs are in test_rule_proofs.py."""
import textwrap

import pytest

from conftest import dynamo_breaks, line_of
from dynlint import api


def broken_lines(tmp_path, src: str, call: str) -> set:
    """The lines real Dynamo reports breaks at when `call` runs the module `src` (it must run without error)."""
    from dynlint.compiler import harness
    path = tmp_path / "m.py"
    path.write_text(src)
    obs = harness.observe(str(path), [call])
    assert obs.error is None, obs.error
    return {b.reported_line for b in obs.breaks}


def codes(body: str, select=("DYN",)):
    src = "import torch\n\n@torch.compile\ndef f(x, flag):\n" + textwrap.indent(textwrap.dedent(body).lstrip("\n"), "    ")
    return sorted((f.line - 4, f.code) for f in api.check_source(src, select=select).findings)


def test_a_name_rebound_from_tensor_to_list_is_a_tensor_before():
    # transformers' MoE routers: `sizes = gates.sum(0); sizes = sizes.tolist()`; Dynamo breaks at the tolist
    assert codes("""
        sizes = x.long().sum(0)
        sizes = sizes.tolist()
        return x * len(sizes)
    """) == [(2, "DYN203")]


def test_the_last_binding_before_a_use_hides_the_earlier_ones():
    assert codes("""
        n = x.shape[0]
        n = x.sum()
        return torch.zeros(n)
    """, select=("DYN403",)) == [(3, "DYN403")]
    assert codes("""
        n = x.sum()
        n = x.shape[0]
        return torch.zeros(n)
    """, select=("DYN403",)) == []


def test_a_binding_in_one_branch_does_not_hide_the_one_before():
    # either binding can reach the use: a tensor on one path, an int on the other, so not known: no warning
    assert codes("""
        n = x.shape[0]
        if flag:
            n = x.sum()
        return torch.zeros(n)
    """, select=("DYN403",)) == []
    # both paths give a tensor
    assert codes("""
        n = x.sum()
        if flag:
            n = x.amax()
        return torch.zeros(n)
    """, select=("DYN403",)) == [(4, "DYN403")]


def test_a_loop_carries_a_binding_back_to_the_top_of_its_body():
    # on the second iteration `n` is the tensor bound at the bottom of the loop
    assert codes("""
        n = x.shape[0]
        for _ in range(2):
            y = torch.zeros(n)
            n = y.sum()
        return y
    """, select=("DYN403",)) == []
    assert codes("""
        n = x.sum()
        for _ in range(2):
            y = torch.zeros(n)
            n = y.sum()
        return y
    """, select=("DYN403",)) == [(3, "DYN403")]


def test_a_binding_inside_a_loop_body_does_not_hide_the_one_before_the_loop():
    # the loop may run no time
    assert codes("""
        n = x.shape[0]
        for _ in range(flag):
            n = x.sum()
        return torch.zeros(n)
    """, select=("DYN403",)) == []


@pytest.mark.parametrize("body", [
    # a comprehension's variable, bound and used in the same statement
    "return [t.item() for t in x]\n",
    # a walrus in a condition
    "if (s := x.sum()) > 0:\n    return s.item()\nreturn x\n",
])
def test_bindings_inside_an_expression_reach_their_uses(body):
    assert "DYN201" in {c for _, c in codes(body)}


NET = '''
import torch
from torch import nn


class Block(nn.Module):
    def forward(self, hidden_states, height, width):
        pad = torch.zeros(height, width)
        return hidden_states.view(-1, height, width) + pad
{extra}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])

    def forward(self, x):
        b, h, w = x.shape
        for block in self.blocks:
            x = block(x, {height}, w)
        return x
'''


def sizes_warned(height="h", extra=""):
    result = api.check_source(NET.format(height=height, extra=extra), select=("DYN403",))
    return sorted(f.line for f in result.findings)


def test_a_forward_parameter_takes_the_kind_its_callers_pass():
    # `height` is an int from `x.shape` at the one call: not the tensor its name-less guess would make it
    assert sizes_warned() == []
    # a tensor at the call: the sizes are tensors (each call reported once, at its first line)
    assert sizes_warned(height="x.sum()") == [8, 9]


def test_callers_that_disagree_leave_the_parameter_unknown():
    # not known (an int at one call, unknown at the other): no warning, and no guess either
    src = NET.format(height="h", extra="").replace(
        "            x = block(x, h, w)", "            x = block(x, h, w)\n        x = self.blocks[0](x, self.n, w)")
    assert api.check_source(src, select=("DYN403",)).findings == []


LOGGED = '''
import torch

LOGGED = {}


def log_metric(name, value):
    LOGGED[name] = float(value)
    return value


def log_dict(metrics):
    for k, v in metrics.items():
        log_metric(k, v)


@torch.compile
def step(x):
    loss = log_metric("loss", x.sum())
    log_dict({"l1": x.abs().sum()})
    return loss
'''


def test_a_tensor_from_one_caller_and_what_is_not_known_from_another_is_a_tensor(tmp_path):
    """`log_metric(name, x.sum())` from compiled code, and `log_metric(k, v)` with what this analysis cannot
    read: the first call makes `float(value)` break the graph (local evidence, not lost to the other caller)."""
    pytest.importorskip("torch")
    line = line_of(LOGGED, "LOGGED[name] = float(value)")
    found = [f.line for f in api.check_source(LOGGED, select=("DYN202",)).findings]
    assert found == [line]
    assert line in broken_lines(tmp_path, LOGGED, "step(torch.ones(4))")
    # a Python number from the other caller: the two disagree, and the parameter stays unknown
    number = LOGGED.replace("log_metric(k, v)", "log_metric(k, 1.0)")
    assert api.check_source(number, select=("DYN202",)).findings == []
    # the tensor passed only by a caller that runs eagerly: no evidence about what the traced code passes
    eager = LOGGED.replace('    loss = log_metric("loss", x.sum())\n', '    loss = x.sum()\n') + \
        "\n\ndef report():\n    return log_metric(\"loss\", torch.ones(3).sum())\n"
    assert api.check_source(eager, select=("DYN202",)).findings == []


def test_a_class_used_where_this_file_cannot_see_keeps_the_guess():
    # Block escapes (named outside the calls that build it): its callers are not all in view
    assert sizes_warned(height="h", extra="\nREGISTRY = [Block]\n") == [8, 9]


def test_the_elements_of_a_parameter_only_guessed_to_be_a_tensor_are_not_tensors():
    src = '''
import torch
from torch import nn


class Stage(nn.Module):
    def forward(self, hidden_states, input_dimensions):
        height, width = input_dimensions
        return hidden_states.view(-1, height, width)
'''
    assert api.check_source(src, select=("DYN403",)).findings == []
    # a parameter the body uses as a tensor is one, and so are its rows
    src = src.replace("hidden_states.view(-1, height, width)", "hidden_states.view(-1, height, width) + "
                      "input_dimensions.sum()")
    assert api.check_source(src, select=("DYN403",)).findings != []


def test_a_rule_measured_below_the_preview_bar_runs_only_under_preview(monkeypatch, tmp_path):
    from pathlib import Path

    from dynlint.linter.config import Config
    from dynlint.rules import measured

    (tmp_path / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n")
    config = Config(root=Path(tmp_path).resolve())
    found = [f.code for f in api.check([str(tmp_path)], config).findings]
    assert "DYN301" in found
    monkeypatch.setitem(measured.MEASURED, "DYN301", {"right": 8, "false": 2, "unverified": 0, "sites": 8})
    assert "DYN301" not in [f.code for f in api.check([str(tmp_path)], config).findings]
    assert "DYN301" in [f.code for f in api.check([str(tmp_path)], config.with_(preview=True)).findings]


def test_a_project_helper_that_returns_a_compiling_check_counts_as_one(tmp_path):
    # transformers' is_torchdynamo_compiling() / is_tracing(x), in another module of the project
    from pathlib import Path

    from dynlint.linter.config import Config

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils.py").write_text(
        "def is_compiling() -> bool:\n    try:\n        import torch\n\n        if hasattr(torch, 'compiler'):\n"
        "            return torch.compiler.is_compiling()\n        return False\n    except Exception:\n"
        "        return False\n\n\ndef is_tracing(tensor=None) -> bool:\n"
        "    tracing = is_compiling() or is_jit_tracing()\n    if tensor is not None:\n"
        "        tracing |= hasattr(tensor, 'proxy')\n    return tracing\n\n\ndef is_jit_tracing():\n"
        "    return False\n\n\ndef sometimes(x):\n    return x is None and is_compiling()\n")
    (tmp_path / "pkg" / "model.py").write_text(
        "import torch\nfrom torch import nn\n\nfrom .utils import is_compiling, is_tracing, sometimes\n\n\n"
        "class M(nn.Module):\n    def forward(self, x):\n"
        "        if not is_tracing(x) and (x[:, -1] == 0).all():\n            return None\n"      # 9
        "        if not is_compiling():\n            if x.sum() > 0:\n                x = x + 1\n"    # 11-12
        "        if is_compiling() or x.max() > 3:\n            x = x * 2\n"                         # 14
        "        if not sometimes(x) and x.mean() > 0:\n            x = x / 2\n"                    # 16
        "        if x.min() > 0:\n            x = x - 1\n        return x\n")                       # 18
    result = api.check([str(tmp_path)], Config(root=Path(tmp_path).resolve()))
    # `sometimes` is not only a compiling check (`x is None and ...`): not known, so its branch is still checked
    assert sorted(f.line for f in result.findings if f.code == "DYN101") == [16, 18]


def test_torch_arithmetic_on_python_numbers_is_not_known_to_be_a_tensor():
    # Dynamo folds `torch.div(n, 2)` of static sizes to a constant (no break) and traces it as a tensor only once
    # sizes are dynamic: no warning either way; on a tensor operand it is a tensor
    assert codes("""
        chunks = torch.div(x.size(1), 2, rounding_mode="trunc")
        return x.view(x.size(0), chunks, 2)
    """, select=("DYN403",)) == []
    assert codes("""
        chunks = torch.div(x.sum(), 2, rounding_mode="trunc")
        return x.view(x.size(0), chunks, 2)
    """, select=("DYN403",)) == [(2, "DYN403")]


SKIPPING_LOOP = '''
import torch
from torch import nn


class Encoder(nn.Module):
    def forward(self, x):
        for i in range(3):
            p = torch.rand([])
            skip = self.training and p < 0.1     # a tensor when training
            if not skip or i == 0:
                x = x + 1
            if skip:
                x = x * 0
            if x.sum() > 0:
                x = x - 1
        return x
'''


def test_nothing_later_in_a_loop_body_is_reported_after_a_break_that_skips_the_frame(tmp_path):
    # the first `if` breaks inside the loop, so Dynamo runs the whole function eagerly: the other two never break
    path = tmp_path / "encoder.py"
    path.write_text(SKIPPING_LOOP)
    static = sorted(f.line for f in api.check_source(SKIPPING_LOOP).findings)
    assert static == [11]
    pytest.importorskip("torch")
    from dynlint.compiler.harness import observe

    seen = observe(str(path), ["torch.compile(Encoder().train(), backend='eager')(torch.ones(3))"])
    assert sorted(seen.break_lines(str(path))) == [11]


def test_isinstance_tensor_proves_a_tensor_inside_its_branch():
    src = ("import torch\n\n\ndef check(cond):\n    if isinstance(cond, torch.Tensor):\n        return cond.item()\n"
           "    return bool(cond)\n\n\n@torch.compile\ndef f(x):\n    return x * check(x.sum() > 0)\n")
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(6, "DYN201")]
    # after a branch that returns, the parameter is not a tensor (line 7 used to be DYN202); after one that does
    # not, it is what it was (`.item()` of a parameter is evidence enough)
    assert [(f.line, f.code) for f in api.check_source(src.replace(
        "        return cond.item()\n    return bool(cond)", "        pass\n    return cond.item()")).findings] == \
        [(7, "DYN201")]


def test_a_helper_parameter_takes_the_kind_its_callers_pass():
    src = ('import torch\n\n\ndef gate(x, n):\n    return torch.tanh(x[:, :n])\n\n\n@torch.compile\n'
           'def f(x):\n    return gate(x, {n})\n')
    # an int tensor as the bound (vits' `torch.IntTensor([hidden])`): Dynamo reads it with .item()
    assert [(f.line, f.code) for f in api.check_source(src.format(n="torch.IntTensor([2])")).findings] == \
        [(5, "DYN207")]
    assert api.check_source(src.format(n="x.shape[1] // 2")).findings == []


def test_unpacking_what_a_method_of_the_class_returns():
    # longformer: `padding_len, input_ids, attention_mask = self._pad_to_window_size(...)`, then
    # `(attention_mask > 0).flatten().any().item()`
    src = '''
import torch
from torch import nn


class Encoder(nn.Module):
    def _pad(self, x, mask):
        pad = (8 - x.shape[1] % 8) % 8
        if pad > 0:
            mask = nn.functional.pad(mask, (0, pad))
        return pad, x, mask

    def forward(self, x, attention_mask=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(x)
        padding_len, x, attention_mask = self._pad(x, attention_mask)
        flag = (attention_mask > 0).flatten().any().item()
        if padding_len > 0:
            x = x[:, :-padding_len]
        return x * flag
'''
    # the mask is a tensor (its `.item()` breaks); the padding length an int (no DYN101, no DYN207); the flag
    # `.item()` made is a constant of the resumed code's `x * flag` (real Dynamo: `___stack0 == True` there)
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(17, "DYN201"), (20, "DYN510")]


HANDED_ON = '''import torch


def scale(x, n):
    return x * n


@torch.compile
def fn(x):
    n = x.abs().sum().item()
    y = scale(x, n)
    return y + x * n


def run():
    fn(torch.ones(3))
    fn(torch.ones(3) * 2)
'''


@pytest.mark.dynamo
def test_a_host_value_handed_to_a_function_first_is_guarded_there(tmp_path):
    """The first read of a value made at a break that hands it to a function of the project (`scale(x, n)`):
    Dynamo inlines the function and guards the value at its own first use there, not at the later `x * n`."""
    from dynlint.compiler import harness
    path = tmp_path / "m.py"
    path.write_text(HANDED_ON)
    obs = harness.observe(str(path), ["run()"])
    assert obs.error is None, obs.error
    assert {f.line for r in obs.recompiles for f in r.failures[:1]} == {5}
    found = [(f.line, f.code) for f in api.check_source(HANDED_ON).findings]
    assert found == [(5, "DYN510"), (10, "DYN201")]        # the guard in `scale`, where Dynamo names it
    # read in arithmetic first, it is guarded there
    first = HANDED_ON.replace("    y = scale(x, n)\n    return y + x * n", "    y = x * n\n    return scale(y, n)")
    assert [(f.line, f.code) for f in api.check_source(first).findings] == [(10, "DYN201"), (11, "DYN510")]


def test_a_parameter_annotated_as_a_bool_tensor_is_a_mask():
    src = ("import torch\nfrom torch import nn\n\n\nclass Embed(nn.Module):\n"
           "    def forward(self, ids: torch.Tensor, keep: torch.BoolTensor) -> torch.Tensor:\n"
           "        return ids[keep.view(-1)]\n")
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(7, "DYN402")]
    assert api.check_source(src.replace("torch.BoolTensor", "torch.LongTensor")).findings == []


@pytest.mark.dynamo
@pytest.mark.parametrize("build, breaks", [
    ("torch.as_tensor([-1])", False),                                        # one element: a constant to Dynamo
    ("torch.cat([torch.tensor([-1]), torch.as_tensor(x.shape[2:], dtype=torch.long)])", False),
    ("torch.tensor([3, 4])", True),                                          # two elements: breaks
    ("torch.tensor([0.5])", True),                                           # floating point: always breaks
    ("torch.as_tensor(x.shape)", True),                   # dtype not shown (float for an empty shape): reported
    ("x.long().sum(0)", True),                                               # data
])
def test_tolist_of_a_tensor_built_from_python_values_is_reported_where_dynamo_breaks(tmp_path, build, breaks):
    # transformers' tapas: `torch.cat([torch.as_tensor([-1]), torch.as_tensor(vector_shape, dtype=torch.long)])
    # .tolist()` compiles without a break when `vector_shape` is empty, and breaks when it is not: the
    # rule reports it only where the source shows two or more elements
    from dynlint.compiler import harness
    src = f"import torch\n\n\n@torch.compile\ndef f(x):\n    shape = {build}\n    return x.sum() + len(shape.tolist())\n"
    path = tmp_path / "m.py"
    path.write_text(src)
    obs = harness.observe(str(path), ["f(torch.ones(4, 5))"])
    assert obs.error is None
    assert bool(obs.breaks) == breaks
    assert codes_of(src) == ([(6, "DYN203")] if breaks else [])


def codes_of(src: str):
    return sorted((f.line - 1, f.code) for f in api.check_source(src, select=("DYN203",)).findings)


# ---- containers of tensors: iterating, indexing or unpacking one gives tensors (kinds.TENSORS) ----------------
# Each case is compiled too: Dynamo breaks at the reported line, on the tensor the analysis says is there.
CONTAINER_CASES = [
    # an annotated parameter: List[Tensor] / list[torch.Tensor] / Tuple[Tensor, ...] / Sequence[Tensor]
    ("from typing import List\n\n@torch.compile\ndef f(xs: List[torch.Tensor]):\n    out = xs[0]\n"
     "    for a in xs:\n        if a.sum() > 0:\n            out = out + a\n    return out\n",
     "f([torch.ones(3), -torch.ones(3)])", 9, "DYN101"),
    ("@torch.compile\ndef f(xs: list[torch.Tensor], ys: tuple[torch.Tensor, ...]):\n    out = xs[0]\n"
     "    for a, b in zip(xs, ys):\n        if a.max() > b.min():\n            out = out + a\n    return out\n",
     "f([torch.ones(3)], (torch.zeros(3),))", 7, "DYN101"),
    # a list display of tensors, indexed
    ("@torch.compile\ndef f(x: torch.Tensor):\n    parts = [x.relu(), x.sigmoid()]\n"
     "    return x * len(parts[1].tolist())\n",
     "f(torch.ones(3))", 6, "DYN203"),
    # a list comprehension of tensors, iterated
    ("@torch.compile\ndef f(x: torch.Tensor):\n    rows = [r * 2 for r in x]\n    n = 0\n"
     "    for r in rows:\n        n = n + r.sum().item()\n    return x * n\n",
     "f(torch.ones(2, 3))", 8, "DYN201"),
]


@pytest.mark.dynamo
@pytest.mark.parametrize("body, call, line, code", CONTAINER_CASES)
def test_the_elements_of_a_container_of_tensors_are_tensors(tmp_path, body, call, line, code):
    src = "import torch\n\n" + body
    assert line in broken_lines(tmp_path, src, call)
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(line, code)]


def test_a_list_of_python_values_keeps_its_elements_unknown():
    # `[n, m]` of sizes: no tensor in it, so nothing its elements do is reported
    assert codes("""
        sizes = [x.shape[0], x.shape[1]]
        for s in sizes:
            if s > 2:
                x = x + 1
        return x
    """) == []


@pytest.mark.dynamo
@pytest.mark.parametrize("method", ["item", "tolist"])
def test_item_and_tolist_are_tensor_methods_whatever_the_receiver_is_inferred_to_be(tmp_path, method):
    # a module's NumPy array and a dict's value are of no known kind: Dynamo traces the array as a tensor (and a
    # tensor is what a dict of statistics holds) and breaks at each call; a known Python value is left alone
    src = ("import numpy as np\nimport torch\n\nTABLE = np.ones(1)\nSTATS = {'m': torch.ones(1)}\n\n\n"
           "@torch.compile\ndef f(x):\n"
           f"    a = len(str(TABLE.{method}()))\n"
           f"    b = len(str(STATS['m'].{method}()))\n"
           "    return x * a * b\n")
    assert {10, 11} <= broken_lines(tmp_path, src, "f(torch.ones(3))")
    code = {"item": "DYN201", "tolist": "DYN203"}[method]
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(10, code), (11, code)]
    assert api.check_source(f"import torch\n\n@torch.compile\ndef f(x):\n    n = (3).{method}()\n    return x\n",
                            select=(code,)).findings == []


@pytest.mark.dynamo
def test_a_pep_484_type_comment_gives_the_parameters_their_kinds(tmp_path):
    # TorchScript-era code types its helpers in a comment: `x` is a tensor, `y` a list of them, `n` an int
    src = ("import torch\nfrom torch import Tensor\n\n\ndef pick(x, y, n):\n"
           "    # type: (Tensor, list[Tensor], int) -> Tensor\n"
           "    if x > n:\n        return y[0]\n    return x\n\n\n"
           "@torch.compile\ndef f(x):\n    return pick(x, [x], 1)\n")
    assert {7} <= broken_lines(tmp_path, src, "f(torch.ones(1))")
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(7, "DYN101")]
    # without the comment nothing says `x` is a tensor rather than a number
    assert api.check_source(src.replace("    # type: (Tensor, list[Tensor], int) -> Tensor\n", "")).findings == []


@pytest.mark.dynamo
def test_a_module_attribute_holding_a_numpy_array_is_a_tensor_in_traced_code(tmp_path):
    # a sampler keeps its schedule as a NumPy array (one method) or a tensor (another): either way Dynamo
    # traces the attribute as a tensor, and branching on one of its values breaks
    src = ("import numpy as np\nimport torch\nfrom torch import nn\n\n\nclass Sampler(nn.Module):\n"
           "    def __init__(self, n=4):\n        super().__init__()\n"
           "        self.timesteps = np.arange(n)[::-1] + 1\n        self.sigmas = np.linspace(0, 1, n)\n\n"
           "    def set_timesteps(self, n):\n        self.timesteps = torch.from_numpy(np.arange(n))\n\n"
           "    def forward(self, x):\n        if self.sigmas[-1] > 0.5:\n            x = x * 2\n"
           "        return x\n\n\ncompiled = torch.compile(Sampler())\n")
    assert {16} <= broken_lines(tmp_path, src, "compiled(torch.ones(2))")
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(16, "DYN101")]


@pytest.mark.dynamo
def test_a_name_bound_in_every_arm_of_an_if_hides_the_bindings_before_it(tmp_path):
    # `limit=200` is an int, but after the if/else both of whose arms bind a tensor to it, only a tensor reaches
    # the branch (an `elif` chain ending in `else` likewise); an `if` with no `else` may keep the int
    src = ("import torch\n\n\n@torch.compile\ndef f(x, limit=200, mode=0):\n"
           "    if mode == 0:\n        limit = x.amax()\n    elif mode == 1:\n        limit = x.amin()\n"
           "    else:\n        limit = x.mean()\n"
           "    if limit > 0:\n        x = x + 1\n    return x\n")
    assert {12} <= broken_lines(tmp_path, src, "f(torch.ones(3))")
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(12, "DYN101")]
    no_else = src.replace("    else:\n        limit = x.mean()\n", "")
    assert api.check_source(no_else).findings == []


@pytest.mark.dynamo
def test_an_item_of_a_list_of_unknown_values_is_not_a_python_value(tmp_path):
    # `pair = [x.sum(), y]` holds a tensor: indexing it may give one, so a helper it is passed to keeps its own
    # evidence (`.item()`) instead of taking the argument for a Python number
    src = ("import torch\n\n\ndef scalar(v):\n    return v.item()\n\n\n@torch.compile\ndef f(x, y):\n"
           "    pair = [x.sum(), y]\n    return x * scalar(pair[0])\n")
    assert {5} <= broken_lines(tmp_path, src, "f(torch.ones(3), 2)")
    assert [(f.line, f.code) for f in api.check_source(src).findings] == [(5, "DYN201")]


RETURNED = '''import torch
from torch import nn


def energy(v):
    return (v ** 2).mean()


def clip(h, limit):
    e = energy(h)
    if e > limit:
        h = h * 0.5
    return h


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def _saturated(self, h):
        return (h.abs() > 0.5).any()

    def forward(self, x):
        h = clip(self.proj(x), 0.1)
        if self._saturated(h):
            h = h * 0.5
        return h


def run():
    return torch.compile(Block())(torch.ones(2, 4) * 3)
'''


def test_a_call_of_a_project_function_is_what_its_returns_are(tmp_path):
    """`e = energy(h)` and `self._saturated(h)` return tensors (judged in the callee, its parameters as its
    callers pass them): branching on them breaks where Dynamo says, and dynlint says so there."""
    found = {f.line for f in api.check_source(RETURNED).findings if f.code == "DYN101"}
    assert found == {11, 26}
    assert broken_lines(tmp_path, RETURNED, "run()") >= found


AUTOGRAD = '''import torch


class ScaleByPeak(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        peak = x.abs().max().item()
        ctx.peak = peak
        return x / peak

    @staticmethod
    def backward(ctx, grad):
        return grad / ctx.peak


class Noisy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        print("backward")
        return grad * 2


def loss(w, x):
    return ScaleByPeak.apply(x @ w).sum() + Noisy.apply(x @ w).sum()


def run():
    w = torch.ones(3, 3, requires_grad=True)
    return torch.compile(loss)(w, torch.ones(2, 3))
'''


def test_an_autograd_functions_forward_and_backward_are_traced_through_apply(tmp_path):
    """`Fn.apply(x)` in compiled code: Dynamo traces `Fn.forward` and `Fn.backward` (its higher-order op), and
    breaks inside them where dynlint says."""
    found = {f.line: f.code for f in api.check_source(AUTOGRAD).findings}
    assert found == {7: "DYN201", 23: "DYN301"}
    assert broken_lines(tmp_path, AUTOGRAD, "run()") >= set(found)


NUMPY = '''import numpy as np
import torch


@torch.compile
def equalize(img):
    arr = img.detach().numpy()
    lo, hi = np.min(arr), np.max(arr)
    if hi - lo < 1e-3:
        return img * 0
    return (img - img.min()) / (img.max() - img.min())


def run():
    return equalize(torch.rand(4, 4))
'''


def test_a_numpy_function_of_a_traced_array_is_a_tensor(tmp_path):
    """`np.min(t.numpy())` in traced code runs on torch._numpy and gives an array Dynamo traces as a tensor:
    branching on it breaks where Dynamo says."""
    found = {f.line for f in api.check_source(NUMPY).findings if f.code == "DYN101"}
    assert found == {9}
    assert broken_lines(tmp_path, NUMPY, "run()") >= found


FIELDS = '''from dataclasses import dataclass

import torch


@dataclass
class Batch:
    tokens: torch.Tensor
    lengths: torch.Tensor
    pad_id: int = 0


@torch.compile
def trim(batch: Batch):
    longest = batch.lengths.max()
    if batch.pad_id > 0:
        return batch.tokens * 0
    return batch.tokens[:, :longest] * 2


def run():
    return trim(Batch(torch.ones(2, 5), torch.tensor([2, 3])))
'''


def test_a_field_a_class_of_the_file_annotates_as_a_tensor_is_one(tmp_path):
    """`batch.lengths` of a parameter annotated `Batch`, whose body annotates `lengths: torch.Tensor`: a tensor
    (slicing with its max breaks where Dynamo says); `batch.pad_id: int` stays a Python value (no finding)."""
    found = {f.line: f.code for f in api.check_source(FIELDS).findings}
    assert found == {18: "DYN207"}
    assert broken_lines(tmp_path, FIELDS, "run()") >= set(found)


ALIASED = '''
import torch


def test_done_flag():
    def fn(x, done, counts):
        if bool(done):
            return torch.zeros_like(x)
        return torch.repeat_interleave(x, counts, dim=0)

    opt = torch.compile(fn)
    opt(torch.randn(3), torch.tensor(False), torch.tensor([1, 2, 1]))


def test_other():
    def fn(x, done, counts):
        if bool(done):
            return torch.zeros_like(x)
        return x.repeat(counts)

    opt = torch.compile(fn)
    opt(torch.randn(3), False, 2)
'''


def test_a_function_compiled_where_it_is_defined_takes_its_kinds_from_the_alias_calls(tmp_path):
    """Principle: `opt = torch.compile(fn)` ... `opt(x, torch.tensor(False), counts)` binds fn's parameters as a
    direct call would (the one use of `fn`, the alias bound once): `done` and `counts` are tensors there, so
    `bool(done)` and the value-dependent `repeat_interleave` break (real Dynamo, at those lines); the same code
    called with a Python bool and int in the next function is clean."""
    pytest.importorskip("torch")
    lines = ALIASED.splitlines()
    first = next(i for i, ln in enumerate(lines, 1) if "bool(done)" in ln)
    interleave = next(i for i, ln in enumerate(lines, 1) if "repeat_interleave" in ln)
    found = {(f.line, f.code) for f in api.check_source(ALIASED, filename="m.py").findings}
    assert {(first, "DYN202"), (interleave, "DYN401")} <= found, found
    assert not {line for line, _ in found} - {first, interleave}, found
    assert {first, interleave} <= broken_lines(tmp_path, ALIASED, "test_done_flag()") | \
        broken_lines(tmp_path, ALIASED.replace("torch.tensor(False)", "torch.tensor(True)"), "test_done_flag()")
    assert not broken_lines(tmp_path, ALIASED, "test_other()")


BY_NAME = '''
import torch
from torch import nn


class Truncated(nn.Module):
    def __init__(self, d=4, depth=4):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(d, d) for _ in range(depth)])

    def forward(self, x, upto):
        return self.layers[:upto](x)


def main():
    tu = Truncated()
    tu.compile()
    tu(torch.randn(2, 4), 2)
    tu(torch.randn(2, 4), 3)
'''


def test_a_module_built_and_called_by_name_takes_its_forwards_kinds_from_those_calls(tmp_path):
    """Principle: `tu = Truncated()` ... `tu(x, 2)`, the class built once and the instance only called (and
    compiled), binds forward's parameters as `self.block(...)` calls do: `upto` is an int there, the slice
    `self.layers[:upto]` is traced (real Dynamo: no break), and nothing calls it a tensor; handed on to another
    function, the instance may be called with anything, and forward's parameters keep their default kinds."""
    pytest.importorskip("torch")
    found = [(f.line, f.code) for f in api.check_source(BY_NAME, filename="m.py").findings]
    assert not [c for _, c in found if c.startswith("DYN2")], found
    assert not broken_lines(tmp_path, BY_NAME, "main()")
    handed = BY_NAME.replace("    tu(torch.randn(2, 4), 3)\n", "    tu(torch.randn(2, 4), 3)\n    run(tu)\n")
    assert [f for f in api.check_source(handed, filename="m.py").findings if f.code == "DYN207"]


LITERALS = '''
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 4)

    def forward(self, h, horizon):
        for _ in range(horizon):
            h = self.out(h)
        return h


def main():
    dec = Decoder()
    dec.compile()
    for horizon in (3, 5):
        dec(torch.randn(2, 4), horizon)
'''


def test_the_elements_of_a_display_of_literals_are_python_values(tmp_path):
    """Principle: `for horizon in (3, 5)` binds the literals the display holds, ints: handed to forward, `range
    (horizon)` is a Python loop Dynamo unrolls (real Dynamo: no break), not a tensor used as an int."""
    pytest.importorskip("torch")
    found = [f.code for f in api.check_source(LITERALS, filename="m.py").findings]
    assert "DYN206" not in found, found
    assert not broken_lines(tmp_path, LITERALS, "main()")
    assert "DYN206" in [f.code for f in api.check_source(
        LITERALS.replace("for horizon in (3, 5):", "for horizon in (torch.tensor(3), torch.tensor(5)):"),
        filename="m.py").findings]


SCHEDULER = '''import torch


class Scheduler:
    def __init__(self):
        self.alphas = torch.linspace(1.0, 0.1, 1000)
        self.timesteps = torch.arange(0, 1000, 100).flip(0)

    def step(self, eps, t, sample):
        prev_t = t - 100
        a_prev = self.alphas[prev_t] if prev_t >= 0 else self.alphas[0]
        return sample * a_prev + eps


def sample():
    sched = Scheduler()
    step = torch.compile(sched.step, backend="eager")
    x = torch.ones(4)
    for t in sched.timesteps[-3:]:
        x = step(torch.randn_like(x), t, x)
    return x
'''


@pytest.mark.dynamo
def test_an_attribute_read_through_a_local_instance_has_the_kind_its_class_gives_it(tmp_path):
    """`sched.timesteps` where `sched = Scheduler()`: what `Scheduler.__init__` makes it (a tensor, through
    `.flip(0)`), so the loop's `t` is a tensor, and the compiled method's `prev_t >= 0` branches on a tensor
    where real Dynamo breaks; the code it resumes indexes `self.alphas` with the 0-d tensor, guarded on its value
    there (DYN501: the alias's calls are read although the method and the alias share the name `step`)."""
    found = sorted((f.line, f.code) for f in api.check_source(SCHEDULER).findings)
    assert found == [(11, "DYN101"), (11, "DYN501")]
    assert 11 in broken_lines(tmp_path, SCHEDULER, "sample()")
    from dynlint.compiler import harness
    obs = harness.observe(str(tmp_path / "m.py"), ["sample()"])
    assert 11 in set().union(*obs.guard_lines(str(tmp_path / "m.py")))
    # the same attribute made a Python list: no tensor, no finding
    as_list = SCHEDULER.replace("torch.arange(0, 1000, 100).flip(0)", "list(range(900, -1, -100))")
    assert [f.code for f in api.check_source(as_list).findings] == []


def test_a_nested_unpacking_target_reads_the_callees_return_not_a_guess(tmp_path):
    # timm's xcit: `x, (Hp, Wp) = self.patch_embed(x)` holds the sizes the embedding returns, which a forward
    # annotated `H: int` then takes: no tensor, and real Dynamo does not break there
    src = '''import torch
import torch.nn as nn


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        x = self.proj(x)
        return x.flatten(2), ({size})


class Pos(nn.Module):
    def forward(self, B: int, H: int, W: int):
        return torch.zeros(B, H + 1, W)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = Embed()
        self.pos = Pos()

    def forward(self, x):
        x, (Hp, Wp) = self.embed(x)
        return self.pos(x.shape[0], Hp, Wp)


def main():
    torch.compile(Net(), backend="eager")(torch.randn(2, 3, 8, 8))
'''
    sizes = src.format(size="x.shape[2], x.shape[3]")
    assert api.check_source(sizes).findings == []
    assert broken_lines(tmp_path, sizes, "main()") == set()
    # the same target holding what the callee says are tensors: a size argument made of them breaks the graph
    tensors = src.format(size="x.abs().sum().long(), x.abs().amax().long()").replace(
        "return self.pos(x.shape[0], Hp, Wp)", "return torch.zeros(Hp, Wp)")
    assert [(f.line, f.code) for f in api.check_source(tensors).findings] == [(28, "DYN403")]
    assert 28 in broken_lines(tmp_path, tensors, "main()")


def test_a_module_handed_in_returns_what_its_forward_returns(tmp_path):
    # `emissions, lengths = model(feats, lengths)` with `model` a parameter every call passes one module class:
    # its forward returns tensors, so `emission[:n]` over their rows slices by a tensor (a real break)
    src = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, lengths):
        return x * 2, lengths // 2


@torch.compile(backend="eager")
def decode(model, x, lengths):
    out, lens = model(x, lengths)
    sums = []
    for o, n in zip(out, lens):
        sums.append(o[:n].sum())
    return sums


def main():
    decode(Model(), torch.randn(2, 8), torch.tensor([6, 8]))
'''
    found = [(f.line, f.code) for f in api.check_source(src).findings]
    assert (15, "DYN207") in found
    assert 15 in broken_lines(tmp_path, src, "main()")
    # handed something else too: what it returns is not known, nothing is said
    other = src.replace("    decode(Model(), ", "    decode(lambda x, n: (x, n), torch.randn(2, 8), torch.tensor([6, 8]))\n    decode(Model(), ")
    assert (15, "DYN207") not in [(f.line, f.code) for f in api.check_source(other).findings]


def test_a_comprehension_binds_its_targets_as_a_for_statement_does(tmp_path):
    # `for o, n in zip(out, lens)` and `for i, n in enumerate(lens)` in a comprehension: `n` is a row of the
    # tensor `lens`, so slicing by it breaks (real Dynamo, both lines); `range(...)` gives ints (no break)
    src = '''import torch


@torch.compile(backend="eager")
def decode(out, lens):
    a = [o[:n].sum() for o, n in zip(out, lens)]
    b = [out[i][:n].sum() for i, n in enumerate(lens)]
    c = [out[i][:i + 1].sum() for i in range(2)]
    return a, b, c


def main():
    decode(torch.randn(2, 8), torch.tensor([6, 8]))
'''
    assert sorted((f.line, f.code) for f in api.check_source(src).findings) == [(6, "DYN207"), (7, "DYN207")]
    assert {6, 7} <= broken_lines(tmp_path, src, "main()")
    assert 8 not in broken_lines(tmp_path, src, "main()")



AVERAGER = '''import copy

import torch
from torch import nn


class Averager:
    def __init__(self):
        self.avg = None

    def update(self, params):
        if self.avg is None:
            self.avg = [copy.deepcopy(p.detach()) for p in params]
        return len(self.avg)


def main():
    model = nn.Linear(3, 2)
    update = torch.compile(Averager().update)
    update(PARAMS)
'''


@pytest.mark.parametrize("params", ["list(model.parameters())", "tuple(model.buffers()) + tuple(model.parameters())"])
def test_a_modules_parameters_are_tensors_also_in_a_list(tmp_path, params):
    """`model.parameters()` gives the module's tensors one by one, and `list(...)` of it holds the same tensors:
    a compiled method handed one deep-copies tensors, which breaks the graph (DYN304) where dynlint says."""
    src = AVERAGER.replace("PARAMS", params)
    line = line_of(src, "self.avg = [copy.deepcopy(p.detach()) for p in params]")
    assert dynamo_breaks(tmp_path, src) == {(line, ("Attempted to copy.deepcopy a tensor",))}
    assert [f.line for f in api.check_source(src).findings if f.code == "DYN304"] == [line]


ROLLOUT = '''import torch


@torch.compile(backend="eager")
def step(returns, reward, done):
    returns = returns + reward
    finished = returns[done]
    return returns.masked_fill(done, 0.0), finished


def main():
    returns = torch.zeros(4)
    for t in range(3):
        step(returns, torch.ones(4), torch.arange(4) % 3 == t)
'''


@pytest.mark.parametrize("use", ["returns.masked_fill(done, 0.0)", "torch.where(done, 0.0, returns)",
                                 "torch.masked_fill(returns, done, 0.0)"])
def test_a_parameter_torch_takes_as_a_mask_is_a_boolean_tensor(tmp_path, use):
    """`done` is used where torch's signatures take only a boolean tensor (the mask of `masked_fill`, the condition
    of `torch.where`): indexing with it selects by a mask, which breaks the graph (DYN402) where dynlint says."""
    src = ROLLOUT.replace("returns.masked_fill(done, 0.0)", use)
    line = line_of(src, "finished = returns[done]")
    assert line in {ln for ln, _ in dynamo_breaks(tmp_path, src)}
    assert [f.line for f in api.check_source(src).findings if f.code == "DYN402"] == [line]
