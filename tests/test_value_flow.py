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
