"""The dtype knowledge behind the where-fixes (`--fix` for DYN1xx): which tensors are known floating, what a
submodule returns, and the tables of torch functions' result dtypes, each checked against torch itself."""
from __future__ import annotations

import builtins
import operator
import textwrap
import warnings

import pytest

from dynlint.analysis.tensors import torch_api as tables
from dynlint.api import check_source, fix_source

# ---- which tensors are known floating (the dtype part of the where-fixes) -----------------------------------
# A branch that scales by a float in one arm only (`if c: y = y * 0.5`) is safe when `y` is known floating
# (`Tensors.floating`): then no arm changes its dtype. Unknown stays unsafe, and so does an integer tensor.
_FLOAT_BRANCH = "    if x.max() > 10:\n        y = y * 0.5\n    return y\n"
_FLOAT_WHERE = "    y = torch.where(x.max() > 10, y * 0.5, y)\n"


@pytest.mark.parametrize("helper,first,safe", [
    # newly safe: the tensor is floating whatever `x` is
    ("", "y = torch.exp(x)", True),
    ("", "y = F.gelu(x)", True),
    ("", "y = x.sigmoid()", True),
    ("", "y = torch.zeros(3) + x", True),                          # default dtype: float32
    ("", "y = torch.full((3,), 1.0) + x", True),
    ("", "y = torch.tensor([1, 2.5]) * x", True),
    ("", "y = torch.zeros(3, dtype=torch.half)", True),
    ("", "y = x.sum(dtype=torch.float64)", True),
    ("", "y = torch.cat([x, x.float()])", True),                   # promoted to the floating part
    ("", "y = x.float().max()", True),
    ("def embed(t):\n    return torch.cat([torch.cos(t), torch.sin(t)])\n", "y = embed(x)", True),
    ("def embed(t):\n    e = torch.exp(t)\n    if t.dim() > 1:\n        e = e.flatten()\n    return e\n",
     "y = embed(x)", True),
    # still unsafe: integer tensors ...
    ("", "y = torch.full((3,), 1) + x", False),                    # int64
    ("", "y = torch.arange(4) + x", False),
    ("", "y = torch.tensor([1, 2]) * x", False),
    ("", "y = torch.zeros(3, dtype=torch.long) + x", False),
    ("", "y = x.sum(dtype=torch.long)", False),
    ("", "y = x.float().view(torch.int32)", False),                # reinterpreted bytes
    ("", "y = x.float().max(0)[1]", False),                        # the indices
    ("", "y = F.l1_loss(x, x, reduction='none')", False),          # keeps an integer dtype
    ("", "y = torch.cat([x, x])", False),
    # ... and what is not known
    ("", "y = g(x)", False),
    ("", "y = x * 0.5", False),                                    # floating if a tensor; nothing shows it is one
    ("def embed(t):\n    return t * 2\n", "y = embed(x)", False),
    # floating, but identity still counts: `t.float()` of a float `t` is `t`, the caller's own `x` came back
    ("def embed(t):\n    return t.float()\n", "y = embed(x)", False),
    ("def embed(t, s=None):\n    if s is not None:\n        return t.float() * s\n", "y = embed(x)", False),
    ("@torch.no_grad()\ndef embed(t):\n    return t.float()\n", "y = embed(x)", False),   # decorated
    ("def embed(t):\n    return t.float()\n\nembed = torch.compile(embed)\n", "y = embed(x)", False),
    ("def embed(t):\n    return embed(t) * 0.5\n", "y = embed(x)", False),                     # recursive
    ("def embed(t):\n    yield t.float()\n    return t.float()\n", "y = embed(x)", False),   # a generator
])
def test_where_fix_dtype_known_floating(helper, first, safe):
    src = f"import torch\nimport torch.nn.functional as F\n\n{helper}\n@torch.compile\ndef f(x):\n    {first}\n" + \
        _FLOAT_BRANCH
    assert (_FLOAT_WHERE in fix_source(src)) == safe
    assert _FLOAT_WHERE in fix_source(src, unsafe=True)


@pytest.mark.dynamo
@pytest.mark.parametrize("src", [
    # the helper returns `torch.cat` of `torch.cos` / `torch.sin`: floating for integer input too
    """
    import torch

    def embed(t):
        return torch.cat([torch.cos(t), torch.sin(t)])

    @torch.compile
    def f(x):
        y = embed(x)
        if x.max() > 10:
            y = y * 0.5
        return y
    """,
    """
    import torch

    @torch.compile
    def f(x):
        y = torch.exp(-x) + 1
        if y.sum() > 10:
            y = y * 0.5
        return y
    """,
])
def test_known_floating_where_fix_under_dynamo(src, tmp_path):
    """The newly safe fix: the break is gone, and for integer and float input alike the compiled result has the
    original eager one's values and dtype."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness as fe
    src = textwrap.dedent(src).lstrip("\n")
    fixed = fix_source(src)
    assert ".where(" in fixed and fixed == fix_source(src, unsafe=True)
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(src, encoding="utf-8")
    after.write_text(fixed, encoding="utf-8")
    calls = ["f(torch.arange(4))", "f(torch.arange(20))", "f(-torch.arange(20))", "f(torch.arange(20.0))",
             "f(torch.arange(4.0).half())"]
    reference = fe.run_file(before, calls, compiled=False)
    original, new = fe.run_file(before, calls), fe.run_file(after, calls)
    assert reference.error is None and original.error is None and new.error is None
    assert any("Data-dependent branching" in b.gb_types for b in original.breaks)
    assert new.breaks == []
    assert len(reference.outputs) == len(calls)
    assert fe.compare(reference, new) == []                      # values, dtypes, shapes and types


# `a, b = self.sub(x)`: the element `forward` of a submodule class of this file returns in that position, judged
# in that `forward` -- floating or not, and fresh or the caller's own -- as a helper's return is.
def _routed(returns: str, init: str = "self.router = Router()", extra: str = "") -> str:
    return textwrap.dedent("""
        import torch


        class Router(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.gate = torch.nn.Linear(4, 3)

            def forward(self, x):
                probs = self.gate(x).softmax(-1)
                aux = (probs.mean(0) ** 2).sum() * 3
                return {returns}


        class MoE(torch.nn.Module):
            def __init__(self):
                super().__init__()
                {init}
        {extra}
            def forward(self, x):
                probs, aux = self.router(x)
                if (probs.argmax(-1) == 0).all():
                    aux = aux + 0.01
                return probs, aux


        m = torch.compile(MoE())
    """).format(returns=returns, init=init, extra=extra).lstrip("\n")


_ROUTED_WHERE = "        aux = torch.where((probs.argmax(-1) == 0).all(), aux + 0.01, aux)\n"


@pytest.mark.parametrize("returns,init,extra,safe", [
    ("probs, aux", "self.router = Router()", "", True),
    ("probs, aux.float()", "self.router = Router()", "", True),
    # the position holds an integer tensor, or nothing known, or a tensor the router keeps (a parameter)
    ("probs, aux.long()", "self.router = Router()", "", False),
    ("probs, len(x)", "self.router = Router()", "", False),
    ("probs, self.gate.weight", "self.router = Router()", "", False),
    ("probs, aux * self.gate.weight", "self.router = Router()", "", True),   # arithmetic: a new tensor
    # not a tuple of two in every return; the submodule not surely a Router
    ("(probs, aux, aux)", "self.router = Router()", "", False),
    ("probs, aux", "self.router = Router() if True else torch.nn.Identity()", "", False),
    ("probs, aux", "self.router = Router()", "    def swap(self, r):\n        self.router = r\n", False),
    ("probs, aux", "self.router = Router()\n        self.router.register_forward_hook(lambda *a: None)", "",
     False),
])
def test_where_fix_reads_what_a_submodule_returns(returns, init, extra, safe):
    src = _routed(returns, init, extra)
    assert "DYN101" in {f.code for f in check_source(src).findings}
    assert (_ROUTED_WHERE in fix_source(src)) == safe, fix_source(src)


@pytest.mark.parametrize("edit", [
    # a class decorator, or a rebinding of the class's name, may hand out something else
    lambda src: "def wrap(c):\n    return c\n\n\n" + src.replace("class Router(", "@wrap\nclass Router(", 1),
    lambda src: src.replace("\n\nclass MoE(", "\n\nRouter = wrap(Router)\n\n\nclass MoE(", 1).replace(
        "import torch\n", "import torch\n\n\ndef wrap(c):\n    return c\n", 1),
    # a subclass gives the router another class: MoE.forward runs with it too
    lambda src: src.replace("\n\nm = torch.compile(MoE())", textwrap.dedent("""

        class IntRouter(torch.nn.Module):
            def forward(self, x):
                return x, x.long().sum()


        class IntMoE(MoE):
            def __init__(self):
                super().__init__()
                self.router = IntRouter()


        m = torch.compile(MoE())"""), 1),
])
def test_where_fix_does_not_trust_a_submodule_that_may_be_another(edit):
    src = _routed("probs, aux")
    assert _ROUTED_WHERE in fix_source(src)
    changed = edit(src)
    assert changed != src and "DYN101" in {f.code for f in check_source(changed).findings}
    assert _ROUTED_WHERE not in fix_source(changed)
    assert _ROUTED_WHERE in fix_source(changed, unsafe=True)


@pytest.mark.dynamo
def test_where_fix_on_a_submodule_return_under_dynamo(tmp_path):
    """The fix made safe by reading Router.forward: the break is gone, outputs and dtypes are the eager ones."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness as fe
    src = _routed("probs, aux")
    fixed = fix_source(src)
    assert _ROUTED_WHERE in fixed
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(src, encoding="utf-8")
    after.write_text(fixed, encoding="utf-8")
    calls = ["torch.manual_seed(0)", "m(torch.randn(5, 4))", "m(torch.randn(5, 4) * 100)", "m(torch.zeros(5, 4))",
             "m.router.gate.bias.data = torch.tensor([5.0, 0.0, 0.0])", "m(torch.zeros(5, 4))"]   # the branch taken
    reference = fe.run_file(before, calls, compiled=False)
    original, new = fe.run_file(before, calls), fe.run_file(after, calls)
    assert reference.error is None and original.error is None and new.error is None, (original.error, new.error)
    assert any("Data-dependent branching" in b.gb_types for b in original.breaks)
    assert new.breaks == []
    assert fe.compare(reference, new) == []


# Every entry of the floating-point tables in dynlint/analysis/tensors/torch_api.py, checked against torch: what the
# analysis takes for floating is floating for integer, boolean and floating inputs alike (or torch rejects the input).
def _inputs(torch, floating: bool):
    if floating:
        base = torch.rand(2, 3)
        return [base, base.double(), base.half(), base.bfloat16()]
    ints = torch.arange(1, 7).reshape(2, 3)
    return [ints, ints.int(), ints.to(torch.uint8), ints % 2 == 0]


def _tail(torch, name: str, x):
    """Arguments after the tensor for the function or method `name`."""
    short = name.rsplit(".", 1)[-1]
    mask = torch.tensor([[True, False, True], [False, True, False]])
    return {"softmax": (-1,), "log_softmax": (-1,), "logsumexp": (-1,), "layer_norm": ((3,),), "rms_norm": ((3,),),
            "cross_entropy": (torch.tensor([0, 2]),), "nll_loss": (torch.tensor([0, 2]),), "mse_loss": (x,),
            "smooth_l1_loss": (x,), "huber_loss": (x,), "kl_div": (x,), "cosine_similarity": (x,),
            "binary_cross_entropy": (x,), "binary_cross_entropy_with_logits": (x,), "true_divide": (2,),
            "cumsum": (-1,), "clamp": (0,), "clip": (0,), "clamp_min": (0,), "clamp_max": (1,), "flip": ((0,),),
            "roll": (1,), "unsqueeze": (0,), "reshape": ((-1,),), "view": (-1,), "transpose": (0, 1),
            "permute": ((1, 0),), "full_like": (2,), "pad": ((1, 1),), "expand": ((2, 3),), "masked_fill": (mask, 0),
            "new_zeros": ((2,),), "new_ones": ((2,),), "new_empty": ((2,),), "new_full": ((2,), 1.5),
            "new_tensor": ([1.5, 2.0],)}.get(short, ())


def _apply(torch, name: str, x, **kw):
    """`name(x, ...)` for "torch.fn" / "torch.nn.functional.fn", `x.name(...)` for a method; None where torch
    rejects the input's dtype."""
    fn = getattr(x, name) if "." not in name else operator.attrgetter(name[len("torch."):])(torch)
    args = _tail(torch, name, x) if "." not in name else (x,) + _tail(torch, name, x)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kw)
    except (RuntimeError, NotImplementedError):
        return None


def _names(*groups):
    return sorted(set().union(*groups))


@pytest.mark.parametrize("name", _names(tables.FLOAT_RESULT_FUNCS, tables.FLOAT_RESULT_METHODS))
def test_float_results_are_floating_for_any_input(name):
    torch = pytest.importorskip("torch")
    for x in _inputs(torch, floating=False):
        out = _apply(torch, name, x)
        assert out is None or out.is_floating_point(), (name, x.dtype, out.dtype)
    for x in _inputs(torch, floating=True):
        out = _apply(torch, name, x)
        # (CPU kernels for half / bfloat16 are not all there)
        assert out is not None or x.dtype in (torch.half, torch.bfloat16), (name, x.dtype)
        assert out is None or out.is_floating_point(), (name, x.dtype, out.dtype)


@pytest.mark.parametrize("name", _names(tables.DTYPE_KEEPING_FUNCS, tables.DTYPE_KEEPING_METHODS))
def test_dtype_keeping_calls_keep_a_floating_dtype(name):
    torch = pytest.importorskip("torch")
    for x in _inputs(torch, floating=True):
        out = _apply(torch, name, x)
        assert out is not None or x.dtype in (torch.half, torch.bfloat16), (name, x.dtype)
        assert out is None or out.dtype == x.dtype, (name, x.dtype, out.dtype)


@pytest.mark.parametrize("name", _names(tables.FLOAT_FACTORIES))
def test_float_factories_default_to_a_floating_dtype(name):
    torch = pytest.importorskip("torch")
    fn = operator.attrgetter(name[len("torch."):])(torch)
    out = fn(0, 1, 3) if name.endswith("space") else fn(3)
    assert out.dtype == torch.get_default_dtype() and out.is_floating_point()


@pytest.mark.parametrize("name", _names(tables.DTYPE_ARG_FUNCS, tables.DTYPE_ARG_METHODS))
def test_dtype_argument_sets_the_result_dtype(name):
    torch = pytest.importorskip("torch")
    ints = torch.arange(1, 7).reshape(2, 3)
    if "." not in name:
        outs = [_apply(torch, name, ints, dtype=d) for d in (torch.float64, torch.float16)]
    else:
        fn = operator.attrgetter(name[len("torch."):])(torch)
        short = name.rsplit(".", 1)[-1]
        make = {"full": lambda d: fn((3,), 1, dtype=d), "arange": lambda d: fn(3, dtype=d),
                "linspace": lambda d: fn(0, 1, 3, dtype=d), "logspace": lambda d: fn(0, 1, 3, dtype=d),
                "tensor": lambda d: fn([1, 2], dtype=d), "as_tensor": lambda d: fn([1, 2], dtype=d)}.get(short)
        if make is None and short in ("zeros", "ones", "empty", "rand", "randn", "eye"):
            make = lambda d: fn(3, dtype=d)                                    # noqa: E731
        outs = [make(d) if make else _apply(torch, name, ints, dtype=d) for d in (torch.float64, torch.float16)]
    assert [o.dtype for o in outs] == [torch.float64, torch.float16], name


@pytest.mark.parametrize("name", _names(tables.CONCAT_FUNCS))
def test_joining_with_a_floating_tensor_is_floating(name):
    torch = pytest.importorskip("torch")
    fn = operator.attrgetter(name[len("torch."):])(torch)
    ints = torch.arange(3)
    for f in _inputs(torch, floating=True):
        f = f[0]
        for parts in ([ints, f], [f, ints, ints > 0], [ints > 0, f]):
            assert fn(parts).is_floating_point(), (name, [p.dtype for p in parts])


def test_float_dtypes_and_literals_match_torch():
    torch = pytest.importorskip("torch")
    for name in tables.FLOAT_DTYPES:
        dtype = getattr(torch, name[len("torch."):]) if name.startswith("torch.") else getattr(builtins, name)
        assert torch.zeros(1, dtype=dtype).is_floating_point(), name
        assert torch.arange(3).to(dtype).is_floating_point(), name
    # torch.full and torch.tensor: the fill value or the data decide (`_float_data`)
    assert torch.full((3,), 1.0).is_floating_point() and torch.full((3,), -1e-3).is_floating_point()
    assert torch.full((3,), float("inf")).is_floating_point() and torch.full((3,), 1).dtype == torch.int64
    for data in ([1, 2.5], [[1], [2.0]], (True, 1.5), -0.5, float("inf")):
        assert torch.tensor(data).is_floating_point() and torch.as_tensor(data).is_floating_point(), data
    assert torch.tensor([1, 2]).dtype == torch.int64 and torch.arange(3).dtype == torch.int64


def test_float_arithmetic_matches_torch():
    """A floating tensor on either side of an arithmetic operator gives a floating tensor (or torch rejects
    it); a float number or a true division gives one from any tensor."""
    torch = pytest.importorskip("torch")
    ops = dict(zip(("Add", "Subtract", "Multiply", "Divide", "FloorDivide", "Modulo", "Power", "MatrixMultiply"),
                   (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
                    operator.pow, operator.matmul)))
    assert sorted(ops) == sorted(op.__name__ for op in tables.FLOAT_ARITH)

    def result(fn, a, b):
        try:
            return fn(a, b)
        except (RuntimeError, TypeError):
            return None

    ints = torch.arange(1, 4)
    others = [ints, ints.int(), ints > 1, torch.tensor(2), torch.tensor(True), 2, True, 0.5]
    for f in _inputs(torch, floating=True) + [torch.tensor(1.5), torch.tensor(1.5).half()]:
        f = f.flatten()[:3] if f.dim() else f
        for o in others:
            for fn in ops.values():
                for out in (result(fn, f, o), result(fn, o, f)):
                    assert out is None or out.is_floating_point(), (fn, f.dtype, o)
    for t in _inputs(torch, floating=False) + [torch.tensor(3)]:
        for fn in ops.values():
            if fn is operator.matmul:
                continue
            for lit in (0.5, -1e-12, float("inf")):
                for out in (result(fn, t, lit), result(fn, lit, t)):
                    assert out is None or out.is_floating_point(), (fn, t.dtype, lit)
        for o in (2, ints[:1], True):
            assert (t / o).is_floating_point() and (o / t).is_floating_point(), (t.dtype, o)


def test_float_tensor_methods_match_torch():
    """`.to()` / `.type()` with a floating dtype, `.to(other)`, `.to(device)` (keeps the dtype), `.type_as`,
    indexing and `.T` / `.mT` / `.data`."""
    torch = pytest.importorskip("torch")
    ints, f = torch.arange(1, 7).reshape(2, 3), torch.rand(2, 3).half()
    assert ints.to(torch.float16).dtype == torch.float16 and ints.to("cpu", torch.float64).dtype == torch.float64
    assert ints.to(dtype=torch.bfloat16).dtype == torch.bfloat16 and ints.to(float).dtype == torch.float64
    assert ints.type(torch.float64).dtype == torch.float64 and ints.to(f).dtype == f.dtype
    assert ints.type_as(f).dtype == f.dtype
    for moved in (f.to("cpu"), f.to(f.device), f.to(torch.device("cpu")), f.to(device="cpu", non_blocking=True)):
        assert moved.dtype == f.dtype
    for part in (f[0], f[:, 1:], f[ints > 2], f.T, f.mT, f.data):
        assert part.dtype == f.dtype
