"""Tensors passed with other metadata between calls of a compiled function (DYN516): what a tensor's dtype,
rank, device and `requires_grad` are, read from the torch factories, `*_like` functions and methods that make it
(`torch.randint(0, 255, (2, 4), dtype=torch.uint8)`, `w.clone().requires_grad_()`)."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.regions import is_module_class
from dynlint.linter.rule import Example, register
from dynlint.rules.recompiles.common import GRAD_OFF, SiteBookkeeping, call_bindings, grad_off_around


FACTORIES = frozenset({"ones", "zeros", "empty", "rand", "randn", "full", "tensor", "eye", "arange", "randint"})
CASTS = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
         "int": "int32", "bool": "bool"}
# methods whose result has the metadata of their tensor, `requires_grad` aside (`detach` clears it)
KEPT = frozenset({"clone", "contiguous", "detach"})
# `torch.zeros_like(x)`: x's dtype, rank and device, `requires_grad` False (a `dtype=` given wins)
LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like"})


def _depth(node: ast.AST) -> int:
    """The rank of `torch.tensor(data)` from its nested list displays."""
    return 1 + _depth(node.elts[0]) if isinstance(node, (ast.List, ast.Tuple)) and node.elts else \
        (1 if isinstance(node, (ast.List, ast.Tuple)) else 0)


def _data_dtype(node: ast.AST) -> str:
    leaves = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)]
    if leaves and all(type(v) is bool for v in leaves):
        return "bool"
    return "float32" if any(type(v) is float for v in leaves) else "int64"


def tensor_metadata(node: ast.AST, resolve=lambda name: None) -> Optional[dict]:
    """What Dynamo guards on a tensor that a torch factory makes (`torch.ones(2, 3, dtype=torch.float64)`,
    `torch.tensor([[1.0]])`, `.double()` / `.requires_grad_()` after it): dtype, rank, `requires_grad`, device;
    None for anything else (its metadata is not known here). `resolve(name)`: the expression a local name was
    last bound to, for a cast of a name (`data.double()`)."""
    chain = []
    while True:
        step = _step(node)
        if step is None:
            break
        chain.append(step[1:])
        node = step[0]
    if isinstance(node, ast.Name) and chain:
        node = resolve(node.id)
    meta = _factory_metadata(node, resolve)
    for step, arg in reversed(chain if meta else ()):
        if step == "requires_grad_":
            meta["requires_grad"] = True if arg is None else _constant_of(arg, bool)
        elif step == "detach":
            meta["requires_grad"] = False
        elif step in CASTS:
            meta["dtype"] = CASTS[step]
        elif step == "rank":
            meta["rank"] = arg(meta["rank"]) if meta["rank"] is not None else None
            meta["sizes"] = None
    return meta


def _step(node: ast.AST):
    """(the tensor it is made from, the step, its argument) for one step that keeps a tensor's metadata but
    what it names: a cast, `clone`/`contiguous`/`detach`, `requires_grad_(...)`, or a change of rank ("rank",
    a function of the old rank): `unsqueeze(d)`, `view(...)`/`reshape(...)` to k sizes, `flatten()`, `x[None]`;
    None for anything else."""
    if isinstance(node, ast.Subscript):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        added = sum(isinstance(i, ast.Constant) and i.value is None for i in items)
        if added and all(isinstance(i, ast.Slice) or isinstance(i, ast.Constant) and i.value in (None, Ellipsis)
                         for i in items):
            return node.value, "rank", lambda r, k=added: r + k           # `x[None]`, `x[:, None]`
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or node.keywords:
        return None
    attr, args = node.func.attr, node.args
    if attr in CASTS or attr in KEPT or attr == "requires_grad_":
        if not args or (attr == "requires_grad_" and len(args) == 1):
            return node.func.value, attr, (args[0] if args else None)
        return None
    if attr == "unsqueeze" and len(args) == 1:
        return node.func.value, "rank", lambda r: r + 1
    if attr == "flatten" and not args:
        return node.func.value, "rank", lambda r: 1
    if attr in ("view", "reshape") and args and not any(isinstance(a, ast.Starred) for a in args):
        k = len(args[0].elts) if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else len(args)
        return node.func.value, "rank", lambda r, k=k: k
    return None


def _factory_metadata(node: Optional[ast.AST], resolve=lambda name: None) -> Optional[dict]:
    """The metadata of a tensor a torch factory call makes, as `tensor_metadata` says."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
            isinstance(node.func.value, ast.Name) and node.func.value.id == "torch" and
            node.func.attr in FACTORIES | LIKE):
        return None
    kind, args = node.func.attr, node.args
    kws = {k.arg: k.value for k in node.keywords if k.arg}
    if kind in LIKE:
        return _like_metadata(args, kws, resolve)
    if kind == "randint":           # `torch.randint([low,] high, size)`: int64 unless `dtype=` says
        size = kws.get("size", args[-1] if args else None)
        if not isinstance(size, (ast.Tuple, ast.List)):
            return None
        args = [size]
    if any(isinstance(a, ast.Starred) for a in args) or (kind != "tensor" and not args):
        return None
    rank, dtype = _rank_and_dtype(kind, args)
    if kind == "randint":
        dtype = "int64"
    dt, grad, device = kws.get("dtype"), kws.get("requires_grad"), kws.get("device")
    if dt is not None:
        dtype = _dtype_of(dt)
    dims = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
    sizes = tuple(_constant_of(d, int) for d in dims) if kind not in ("tensor", "arange", "full", "eye") else None
    return {"dtype": dtype, "rank": rank, "sizes": sizes if sizes and None not in sizes else None,
            "requires_grad": False if grad is None else _constant_of(grad, bool),
            "device": "cpu" if device is None else _constant_of(device, str)}


def _like_metadata(args: list, kws: dict, resolve) -> Optional[dict]:
    """`torch.zeros_like(x, ...)`: x's metadata, with `requires_grad` False and what the keywords say."""
    source = args[0] if args else None
    meta = tensor_metadata(resolve(source.id) if isinstance(source, ast.Name) else source, resolve)
    if meta is None:
        return None
    dt = kws.get("dtype")
    return {**meta, "requires_grad": _constant_of(kws["requires_grad"], bool) if "requires_grad" in kws else False,
            "dtype": meta["dtype"] if dt is None else _dtype_of(dt),
            "device": meta["device"] if "device" not in kws else _constant_of(kws["device"], str)}


def _dtype_of(node: ast.AST) -> Optional[str]:
    """`torch.float64` -> "float64"; None for anything else."""
    return node.attr if isinstance(node, ast.Attribute) and guard_lines.dotted(node.value) == "torch" else None


def _rank_and_dtype(kind: str, args: list) -> Tuple[Optional[int], Optional[str]]:
    if kind == "tensor":
        return _depth(args[0]), _data_dtype(args[0])
    if kind == "eye":
        return 2, "float32"
    if kind == "arange":            # `torch.arange(6.0)`: float32; all-int bounds: int64
        consts = [a.value for a in args if isinstance(a, ast.Constant)]
        return 1, (None if len(consts) < len(args) else
                   "float32" if any(type(v) is float for v in consts) else "int64")
    first = args[0]
    if isinstance(first, (ast.Tuple, ast.List)):
        return len(first.elts), ("float32" if kind != "full" else None)
    return (None if kind == "full" else len(args)), ("float32" if kind != "full" else None)


def _constant_of(node: ast.AST, kind: type):
    return node.value if isinstance(node, ast.Constant) and type(node.value) is kind else None


def _tensor_arguments(ctx, callee: str, entry: str, span=None) -> List[Tuple[int, int, dict]]:
    """An analysis: per call of `callee` (line, column, {parameter: tensor metadata}) for the arguments a torch
    factory makes, at the call or in the last assignment of the name passed; for other tensors, their
    `requires_grad` where the code shows it (`grad_of`)."""
    tree = guard_lines.parsed(ctx.source or "")
    out = []
    for line, col, given in call_bindings(ctx, callee, entry, span):
        metas = {}
        for param, (expr, passed) in given.items():
            def resolve(name: str, line: int = line):
                return guard_lines.last_binding(tree, name, line) if tree is not None else None
            if passed and isinstance(expr, ast.Name):
                expr = resolve(expr.id) or expr
            meta = tensor_metadata(expr, resolve) if passed else None
            grad = grad_of(ctx, tree, expr, line) if passed and meta is None and tree is not None else None
            if grad is not None:
                meta = dict.fromkeys(("dtype", "rank", "sizes", "device"), None) | {"requires_grad": grad}
            if meta is not None:
                metas[param] = meta
        out.append((line, col, metas))
    return out


def grad_of(ctx, tree: ast.Module, expr: ast.AST, line: int, depth: int = 0) -> Optional[bool]:
    """Whether a tensor requires grad, where the code shows it: what a module of the project returns, called
    with grad mode on (its parameters require grad), and tensor arithmetic on it, True; `.detach()` and
    `torch.from_numpy(...)` False; None when not known (a parameter, data from elsewhere), and for a file that
    freezes parameters anywhere (`requires_grad_(False)`)."""
    if depth > 4 or "requires_grad_(False)" in (ctx.source or "") or "requires_grad = False" in (ctx.source or ""):
        return None
    if isinstance(expr, ast.Name):
        bound = guard_lines.last_binding(tree, expr.id, line)
        return grad_of(ctx, tree, bound, getattr(bound, "lineno", line), depth + 1) if bound is not None else None
    if isinstance(expr, ast.BinOp):
        sides = [grad_of(ctx, tree, e, line, depth + 1) for e in (expr.left, expr.right)]
        return True if True in sides else None
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    if isinstance(func, ast.Attribute) and guard_lines.dotted(func.value) != "torch":
        if func.attr == "detach" and not expr.args:
            return False
        if func.attr == "requires_grad_":
            return True if not expr.args else _constant_of(expr.args[0], bool)
        return True if func.attr in RANK_KEPT and grad_of(ctx, tree, func.value, line, depth + 1) else None
    if guard_lines.dotted(func) == "torch.from_numpy":
        return False
    return True if _is_module(ctx, tree, func, line) and not _grad_off_at(ctx, tree, expr) else None


def _is_module(ctx, tree: ast.Module, func: ast.AST, line: int, depth: int = 0) -> bool:
    """`func` names a module: an instance of a project's `nn.Module` class (`D = Critic()`) or of torch's own
    (`nn.Linear(4, 2)`), or `torch.compile` of one."""
    if depth > 3 or ctx.project is None or ctx.index is None:
        return False
    if isinstance(func, ast.Name):
        bound = guard_lines.last_binding(tree, func.id, line)
        return bound is not None and _is_module(ctx, tree, bound, bound.lineno, depth + 1)
    if not isinstance(func, ast.Call):
        return False
    name = guard_lines.dotted(func.func)
    if name == "torch.compile" and func.args:
        return _is_module(ctx, tree, func.args[0], line, depth + 1)
    qualified = ctx.index.qualify(name) if name else ""
    if qualified.startswith("torch.nn.") and qualified.rpartition(".")[2][:1].isupper():
        return True         # a layer of torch's own (`nn.Linear(4, 2)`)
    found = ctx.project.resolve(ctx.index, name) if name else None
    return bool(found) and found[0] == "class" and is_module_class(ctx.project, found[1][0], found[1][1].name)


def _grad_off_at(ctx, tree: ast.Module, call: ast.Call) -> bool:
    """The call stands inside a `with` that turns grad mode off (or sets it), or in a function decorated so."""
    return grad_off_around(tree, call, lambda d: ctx.index.qualify(d), GRAD_OFF | {"torch.set_grad_enabled"})


@register
class TensorMetadataDiffersBetweenCalls(SiteBookkeeping):
    """Checks for a compiled callable whose call sites pass, for the same parameter, tensors of another dtype,
    rank, device or `requires_grad` (made by torch factories the code shows: `torch.ones(4)` here,
    `torch.ones(4, dtype=torch.float64)` there; a module's output with grad mode on here, `.detach()`ed there),
    or of other sizes when it is compiled with `dynamic=False`."""
    code = "DYN516"
    name = "tensor-metadata-differs-between-calls"
    message = ("compiled `{callee}` gets a {this} tensor for `{param}` at line {line} and a {other} one at line "
               "{other_line}: Dynamo guards on each tensor argument's {what}, so the second call compiles again")
    fix = ("Convert inputs to one dtype and rank before the call (`x.float()`, `x.reshape(...)`), or keep separate "
           "compiled functions for the variants")
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on every tensor argument's dtype, rank, device and `requires_grad` (`tensor 'x' dtype
        mismatch. expected Float, actual Double`). A call with a tensor that differs in any of them fails the
        guard and compiles another graph; each combination keeps its own. These guards carry no source line:
        Dynamo's recompile log names the compiled function's first line (its first decorator, or its `def`),
        where the finding stands; the calls are its related locations. What a module returns with grad mode
        on requires grad (its parameters do), and so does arithmetic on it; `.detach()` and
        `torch.from_numpy(...)` do not: a critic called on a detached sample, then on the generator's output,
        compiles twice. Sizes are compared only under
        `dynamic=False` (every new size compiles again): otherwise a first new size recompiles once and
        becomes dynamic, the expected cost of a new input (DYN703 covers sizes that follow a loop).
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def norm(x):
            return x / x.norm()

        def run():
            return norm(torch.ones(4)), norm(torch.ones(4, dtype=torch.float64))
    """, "run()"), Example("""
        import torch

        @torch.compile
        def total(x):
            return x.sum() * 2

        def run():
            row = torch.ones(4)
            grid = torch.ones(4, 4)
            return total(row), total(grid)
    """, "run()"), Example("""
        import torch

        @torch.compile
        def loss_fn(w):
            return (w * w).sum()

        def run():
            return loss_fn(torch.ones(4)), loss_fn(torch.ones(4, requires_grad=True))
    """, "run()"), Example("""
        import torch


        def smooth(x):
            return (x + x.roll(1)) * 0.5


        fast = torch.compile(smooth, dynamic=False)


        def run():
            return fast(torch.ones(4)), fast(torch.ones(6))
    """, "run()"), Example("""
        import torch

        @torch.compile
        def scale(img):
            return img.float() / 255.0

        def run():
            return scale(torch.randint(0, 255, (2, 4), dtype=torch.uint8)), scale(torch.rand(2, 4))
    """, "run()"), Example("""
        import torch

        @torch.compile
        def project(x, w):
            return x @ w

        def run():
            w = torch.randn(3, 3)
            return project(torch.ones(2, 3), w), project(torch.ones(2, 3), w.clone().requires_grad_())
    """, "run()"), Example("""
        import torch

        @torch.compile
        def pool(x):
            return x.mean(-1)

        def run():
            x = torch.randn(4, 8)
            return pool(x), pool(x.unsqueeze(0))        # a batch of one: rank 3 where the first call had 2
    """, "run()"), Example("""
        import torch
        from torch import nn

        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 1)

            def forward(self, x):
                return self.fc(x)

        def run():
            gen, critic = nn.Linear(4, 2), torch.compile(Critic())
            fake = gen(torch.randn(8, 4))
            real_loss = critic(fake.detach()).mean()      # the critic's step: no grad into the generator
            return real_loss - critic(fake).mean()        # the generator's step: a module's output, grad on
    """, "run()")]
    VALID = [Example("""
        import torch

        @torch.compile
        def norm(x):
            return x / x.norm()

        def run():
            a = norm(torch.ones(4))
            b = norm(torch.ones(4, dtype=torch.float64).float())
            return a, b
    """, "run()"), Example("""
        import torch

        @torch.compile
        def total(x):
            return x.sum() * 2

        def run():
            return total(torch.zeros(4)), total(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    """, "run()"), Example("""
        import torch

        @torch.compile
        def project(x, w):
            return x @ w

        def run():
            w = torch.randn(3, 3, requires_grad=True)
            return project(torch.ones(2, 3), w.detach()), project(torch.zeros_like(torch.ones(2, 3)), w.detach())
    """, "run()"), Example("""
        import torch

        @torch.compile
        def pool(x):
            return x.mean(-1)

        def run():
            x = torch.randn(4, 8)
            return pool(x[None]), pool(x.view(1, 4, 8))  # rank 3 at both calls
    """, "run()"), Example("""
        import torch
        from torch import nn

        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 1)

            def forward(self, x):
                return self.fc(x)

        def run():
            gen, critic = nn.Linear(4, 2), torch.compile(Critic())
            with torch.no_grad():
                fake = gen(torch.randn(8, 4))
            return critic(fake).mean() - critic(torch.randn(8, 2)).mean()     # grad-free both times
    """, "run()")]

    WHAT = (("dtype", "dtype", "{}"), ("rank", "rank", "rank-{}"), ("requires_grad", "`requires_grad`",
            "{}"), ("device", "device", "{}"))
    SIZES = (("sizes", "sizes (compiled with `dynamic=False`)", "size-{}"),)

    def visit_Call(self, node: cst.Call) -> None:
        compared = self.calls_compared(node, _tensor_arguments)
        if compared is None:
            return
        callee, entry, here, mine, calls = compared
        line = here[0]
        # sizes count only under `dynamic=False`: otherwise a first new size recompiles once and is dynamic
        what = self.WHAT + (self.SIZES if self.compiled_dynamic(callee, False) else ())
        for param, meta in mine.items():
            if not self.reads(entry, param):
                continue            # a tensor the compiled function never uses is not guarded
            for other_line, other_col, metas in calls:
                that = metas.get(param) if (other_line, other_col) < here else None
                diff = [w for w in what if that and None not in (meta[w[0]], that[w[0]])
                        and meta[w[0]] != that[w[0]]]
                if not diff:
                    continue
                key, what, shown = diff[0]
                this_text = self._say(key, shown, meta[key])
                other_text = self._say(key, shown, that[key])
                self.report_at_guard(node, entry, None, f"a {this_text} tensor is passed for `{param}` here",
                                     also=[(other_line, other_col, f"a {other_text} tensor is passed here")],
                                     callee=callee, this=this_text, param=param, line=line, other=other_text,
                                     other_line=other_line, what=what)
                return

    @staticmethod
    def _say(key: str, shown: str, value) -> str:
        if key == "requires_grad":
            return "grad-requiring" if value else "grad-free"
        return shown.format("x".join(map(str, value)) if key == "sizes" else value)


# methods whose result has the rank of their tensor
RANK_KEPT = KEPT | frozenset(CASTS) | frozenset({"flip", "to", "cpu", "cuda", "roll", "abs", "neg"})


def tensor_rank(node: Optional[ast.AST], resolve, depth: int = 0) -> Optional[int]:
    """The rank of the tensor `node` makes, where the code shows it: a torch factory (`torch.arange(0, 1000, 100)`),
    a method that keeps the rank (`.flip(0)`), a slice (`ts[-3:]`), a name or an attribute that `resolve` gives
    the expression of; None when not known."""
    if node is None or depth > 8:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RANK_KEPT and \
            guard_lines.dotted(node.func.value) != "torch":
        return tensor_rank(node.func.value, resolve, depth + 1)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return tensor_rank(node.value, resolve, depth + 1)
    if isinstance(node, (ast.Name, ast.Attribute)) and guard_lines.dotted(node) != "torch":
        return tensor_rank(resolve(node), resolve, depth + 1)
    meta = tensor_metadata(node, lambda name: resolve(ast.Name(name)))
    return meta["rank"] if meta else None

