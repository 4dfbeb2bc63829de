"""Randomness outside torch's generators: the `random` module's draws, seeding and RNG-state calls, and the
numbers `random.randint` / `random.uniform` hand in as graph inputs used as Python numbers."""
from __future__ import annotations

import functools

import libcst as cst

from dynlint.analysis.tensors.kinds import TENSOR, WEAK
from dynlint.linter.rule import Example, register
from dynlint.rules.common import NamedCallRule, TorchRule, source_of
from dynlint.rules.side_effects.common import SKIPPED

DATA_OP = "Data dependent operator"


@register
class PythonRandomInCompiledCode(NamedCallRule):
    """Checks for the `random` module's draws that Dynamo skips (`random.random()`, `random.gauss()`,
    `random.choice()`, `random.shuffle()`, `random.seed()`) inside traced code."""
    code = "DYN308"
    name = "python-random-in-compiled-code"
    message = "`{call}()` is skipped by Dynamo: it breaks the graph"
    fix = "Draw with torch (`torch.rand(())`, `torch.randint`, `torch.randperm`) so the randomness is in the graph, or draw outside and pass the value in"
    gb_types = (SKIPPED,)
    why = """
        Most of the `random` module is marked as skipped (`Attempted to call function marked as skipped`):
        the graph ends at the call. `random.random()` also recompiles once afterwards, because the resume
        function first guards on the drawn float. `random.randint`, `random.randrange` and
        `random.uniform` are handled specially (drawn outside the graph and passed in) and do not break.
    """
    INVALID = [
        Example("""
            import random

            import torch

            @torch.compile
            def jitter(x):
                scale = random.random()
                return x * scale
        """, "jitter(torch.ones(4))"),
        Example("""
            import random

            import torch

            @torch.compile
            def pick(x, options: list):
                return x * random.choice(options)
        """, "pick(torch.ones(4), [1.0, 2.0])"),
        Example("""
            import random

            import torch

            @torch.compile
            def shuffled(x, order: list):
                random.shuffle(order)
                return x * order[0]

            @torch.compile
            def sampled(x, options: list):
                return x * random.sample(options, 1)[0]

            @torch.compile
            def seeded(x):
                random.seed(0)
                return x * 2
        """, "shuffled(torch.ones(4), [1.0, 2.0])", "sampled(torch.ones(4), [1.0, 2.0])", "seeded(torch.ones(4))"),
    ]
    VALID = [Example("""
        import random

        import torch

        @torch.compile
        def jitter(x):
            shift = random.randint(0, 3)
            scale = random.uniform(0.5, 1.5)
            return x * scale + shift + torch.rand(())
    """, "jitter(torch.ones(4))")]
    prefixes = ("random.",)
    allowed = frozenset({"random.randint", "random.randrange", "random.uniform", "random.Random",
                         "random.SystemRandom"})


@register
class RngStateInCompiledCode(NamedCallRule):
    """Checks for seeding and RNG-state calls (`torch.manual_seed()`, `torch.cuda.manual_seed_all()`,
    `torch.get_rng_state()`) inside traced code."""
    code = "DYN317"
    name = "rng-state-in-compiled-code"
    message = "`{call}()` changes the global RNG state: Dynamo skips it and breaks the graph"
    fix = "Seed once outside the compiled function, or pass a `torch.Generator` to the random ops"
    gb_types = (SKIPPED,)
    why = """
        Seeding and RNG-state functions mutate global generator state outside any graph; Dynamo marks them
        as skipped (`Attempted to call function marked as skipped`) and breaks the graph at the call.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def noisy(x):
            torch.manual_seed(0)
            return x + torch.randn_like(x)
    """, "noisy(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def noisy(x):
            return x + torch.randn_like(x)

        def reproducible(x):
            torch.manual_seed(0)
            return noisy(x)
    """, "reproducible(torch.ones(4))")]
    exact = frozenset({"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
                       "torch.cuda.manual_seed_all", "torch.get_rng_state", "torch.set_rng_state",
                       "torch.random.get_rng_state", "torch.random.set_rng_state", "torch.cuda.get_rng_state",
                       "torch.cuda.set_rng_state", "torch.random.fork_rng"})


RANDOM_TRACED = frozenset({"random.randint", "random.randrange", "random.uniform"})
INT_ARGUMENT_CALLS = frozenset({"torch.rot90", "torch.roll", "torch.narrow", "range", "int", "float", "round"})
INT_ARGUMENT_METHODS = frozenset({"roll", "narrow", "view", "reshape", "expand", "repeat", "topk", "split", "chunk",
                                  "rot90", "unflatten", "tile"})


@functools.lru_cache(maxsize=4)
def _mentions_random(source: str) -> bool:
    """Every RANDOM_TRACED call needs the word somewhere in the file; asked once per file, not per unit (a
    scan of the whole file per function is quadratic in a file of many functions)."""
    return "random" in source


def _draws_here(ctx) -> bool:
    """An analysis (ctx.analysis): the unit can call a RANDOM_TRACED function, by its name or through a name
    the file imports it as."""
    text = ctx.unit.text
    names = {q.rsplit(".", 1)[-1] for q in RANDOM_TRACED}
    if ctx.index is not None:
        names |= {local for local, target in ctx.index.imports.items() if target in RANDOM_TRACED}
    return any(n in text for n in names)


@register
class PythonRandomValueAsNumber(TorchRule):
    """Checks for values drawn with `random.randint`, `random.randrange` or `random.uniform` that are then
    used as Python numbers: in arithmetic with non-tensors, as indices or slice bounds, as int arguments
    (`torch.rot90(x, k)`, `x.roll(shift)`), or in a branch condition."""
    code = "DYN319"
    name = "python-random-value-as-number"
    message = "`{name}` comes from `{source}()`, which Dynamo turns into a graph input: {use} breaks the graph"
    fix = "Use the drawn value only in tensor arithmetic (`x * scale`, `x + shift`), or draw with torch (`torch.randint(0, 4, ())`) and keep it a tensor"
    gb_types = ("unimplemented builtin op on tensor arguments", "Unsupported Tensor.item() call with "
                "capture_scalar_outputs=False", DATA_OP, "Data-dependent branching", "constant fold exception")
    why = """
        Dynamo does not bake `random.randint(...)`, `random.randrange(...)` or `random.uniform(...)` into
        the graph: it draws the number outside and passes it in as a 0-d tensor input, so `x * scale` stays
        correct on every call. That value is not a Python number while tracing, though. Arithmetic with
        other Python numbers (`1 + shift`) fails (`unimplemented builtin op on tensor arguments`); indices,
        slice bounds and int arguments (`torch.rot90(x, k)`, `x.roll(shift)`) need its value (`Data
        dependent operator`, `Tensor.item()`); so does a branch on it. Each breaks the graph.
    """
    INVALID = [
        Example("""
            import random

            import torch

            @torch.compile
            def random_rotate(images):
                k = random.randint(0, 3)
                return torch.rot90(images, k, dims=(-2, -1))
        """, "random_rotate(torch.ones(2, 3, 4, 4))"),
        Example("""
            import random

            import torch

            @torch.compile
            def random_gain(x):
                gain = random.uniform(0.5, 1.5)
                return x * (1.0 + gain)
        """, "random_gain(torch.ones(4))"),
    ]
    VALID = [Example("""
        import random

        import torch

        @torch.compile
        def random_gain(x):
            gain = random.uniform(0.5, 1.5)
            shift = random.randint(0, 3)
            return x * gain + shift
    """, "random_gain(torch.ones(4))")]

    def _source(self, name: str):
        values = self.tensors.assigned_values(name)
        if not values:
            return None
        sources = {self.call_name(v) if isinstance(v, cst.Call) else None for v in values}
        return sources.pop() if len(sources) == 1 and sources <= RANDOM_TRACED else None

    def visit_Name(self, node: cst.Name) -> None:
        if not _mentions_random(self.ctx.source) or not self.ctx.analysis(_draws_here):
            return
        parent = self.ctx.parent()
        if isinstance(parent, (cst.AssignTarget, cst.Param)) or \
                (isinstance(parent, cst.Attribute) and parent.attr is node) or \
                (isinstance(parent, cst.Call) and parent.func is node) or isinstance(parent, cst.Arg) and \
                parent.keyword is node:
            return
        source = self._source(node.value)
        if not source:
            return
        use = self._bad_use(node)
        if use:
            self.report(node, name=node.value, source=source, use=use)

    def _bad_use(self, node: cst.Name):
        parents = self.ctx.parents
        parent = parents[-1] if parents else None
        if isinstance(parent, cst.BinaryOperation):
            other = parent.right if parent.left is node else parent.left
            return None if self.tensors.kind(other) in (TENSOR, WEAK) else "arithmetic with a Python number"
        if isinstance(parent, (cst.Index, cst.Slice)):
            return "indexing with it"
        if isinstance(parent, cst.Arg) and len(parents) > 1 and isinstance(parents[-2], cst.Call):
            call = parents[-2]
            name = self.call_name(call) or ""
            method = self.method_name(call)
            if name in INT_ARGUMENT_CALLS or (method in INT_ARGUMENT_METHODS and not name.startswith("random.")):
                return f"passing it to `{source_of(call.func)}()` as an int"
        if isinstance(parent, cst.Comparison):
            top = parents[-2] if len(parents) > 1 else None
            if isinstance(top, (cst.If, cst.While, cst.IfExp)) and top.test is parent:
                return "branching on it"
        return None
