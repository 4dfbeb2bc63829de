"""The value analysis is flow-sensitive: a use of a name sees the bindings that reach it, not every binding of
the name in the function (dynlint/analysis/tensors.py, `reaching`). Each case is checked through the rules, as
a user sees it; each rule's own Dynamo proofs are in test_rule_proofs.py."""
import textwrap

import pytest

from dynlint import api


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

    from dynlint.core.config import Config
    from dynlint.rules import measured

    (tmp_path / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n")
    config = Config(root=Path(tmp_path).resolve())
    found = [f.code for f in api.check([str(tmp_path)], config).findings]
    assert "DYN301" in found
    monkeypatch.setitem(measured.MEASURED, "DYN301", {"right": 8, "false": 2, "unverified": 0, "sites": 8})
    assert "DYN301" not in [f.code for f in api.check([str(tmp_path)], config).findings]
    assert "DYN301" in [f.code for f in api.check([str(tmp_path)], config.with_(preview=True)).findings]
