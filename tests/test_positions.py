"""The fast position path (a statement skeleton + Python's parser) must agree with libcst's position metadata
for every node it answers for, and answer for most nodes."""
import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from dynlint.linter.positions import fast_position
from dynlint.linter.walker import walk

ROOT = Path(__file__).resolve().parent.parent

TRICKY = textwrap.dedent('''\
    # a comment first
    import torch


    @torch.compile
    @decorate(1,
              2)
    def f(x, *, y=torch.ones(3)):  # trailing comment
        """Docstring
        on two lines."""
        a = 1; b = x.item(); c = "é" + str(b)
        if x.sum() > 0:
            pass
        elif x.any():
            y = foo(1,
                    x.item(),
                2)
        else:
            z = {k: v.item() for k, v in d.items()}
        for i in range(3):
            while x.max() > i:
                x = x - 1
            else:
                print(i)
        else:
            x = x.tolist()
        try:
            u = x.nonzero()
        except (ValueError, TypeError) as e:
            raise RuntimeError(str(e)) from e
        else:
            v = x.unique()
        finally:
            w = len(x)
        with torch.no_grad(), open("f") as fh:
            q = fh.read()
        if x: r = x.item()
        match x.dim():
            case 1:
                s = x.item()
            case _:
                s = 0
        class Inner:
            def method(self, t):
                return t.item()
        lam = lambda t: t.item()
        return (a +
        b)
''')


def _tabs(src: str) -> str:
    return src.replace("    ", "\t")


def _check(src: str):
    module = cst.parse_module(src)
    tree = ast.parse(src)
    truth = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    chain, answered, total = [], 0, 0

    def enter(node):
        nonlocal answered, total
        chain.append(node)
        for target in [node, *cst_children(node)]:         # the visited node, and nodes below it
            if target not in truth:
                continue
            got = fast_position(module, tree, chain, target)
            if isinstance(target, (cst.Module, cst.IndentedBlock, cst.BaseParenthesizableWhitespace,
                                   cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment)):
                continue                    # never reported; whitespace objects may be shared between nodes
            total += 1
            if got is not None:
                answered += 1
                r = truth[target]
                assert got == (r.start.line, r.start.column, r.end.line, r.end.column), \
                    (type(target).__name__, module.code_for_node(target)[:60], got, r)
        return True

    walk(module, enter, lambda node: chain.pop())
    return answered, total


def cst_children(node):
    return [c for c in node.children if isinstance(c, cst.CSTNode)]


@pytest.mark.parametrize("src", [TRICKY, _tabs(TRICKY), TRICKY.replace("\n", "\r\n")], ids=["spaces", "tabs", "crlf"])
def test_fast_positions_agree_with_libcst_metadata(src):
    answered, total = _check(src)
    assert answered / total > 0.8, (answered, total)


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "corpus").glob("*.py"))[:6], ids=lambda p: p.name)
def test_fast_positions_agree_on_the_corpus(path):
    answered, total = _check(path.read_text(encoding="utf-8"))
    assert answered / total > 0.8, (answered, total)
