"""Scalar arguments that change between calls: a loop variable passed to a compiled function (DYN501) and a
`range()` over an int parameter (DYN502); call sites that pass different constants are `constants` (DYN508)."""
from __future__ import annotations

import ast
import re
from typing import Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.defs import body_nodes
from dynlint.analysis.guards import effect, recompiles
from dynlint.analysis.tensors import TENSOR
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import descendants, dotted
from dynlint.rules.common import TorchRule, call_args, source_of
from dynlint.rules.recompiles.argument_values import (attribute_value, bound_in_loop, built_fields, carried_number,
                                                      changing_number, float_number, item_key, kept_attribute,
                                                      loop_origin, made_by_torch, number_expr, record_rows,
                                                      value_kind)
from dynlint.rules.recompiles.changing import (branch_guard, drawn_number, helper_of_state, list_index, math_call,
                                               object_state, set_by_callers)
from dynlint.rules.recompiles.handed import compiled_parameter, handed_on
from dynlint.rules.recompiles.rows import loop_values, row_index_guards
from dynlint.rules.recompiles.tensor_args import tensor_rank
from dynlint.rules.recompiles.common import (GRAD_OFF, SiteBookkeeping, bound_parameter, compile_call,
                                             enum_classes, float_expr, grad_off_around, parameter_names,
                                             varying)


# argument kinds that `torch.compile(dynamic=True)` makes symbolic from the first call: a new value recompiles
# nothing (an int bounding a `range()` still does: "int argument in range")
SYMBOLIC = frozenset({"int argument", "float argument"})


def _descends(loops, var: str) -> bool:
    """The innermost loop binding `var` counts down: `for t in reversed(range(n))`, `range(n, 0, -1)`."""
    loop = next((b for b in reversed(loops) if isinstance(b, cst.For) and isinstance(b.target, cst.Name) and
                 b.target.value == var), None)
    it = loop.iter if loop is not None else None
    if isinstance(it, cst.Call) and dotted(it.func) == "reversed" and it.args:
        return isinstance(it.args[0].value, cst.Call) and dotted(it.args[0].value.func) == "range"
    return isinstance(it, cst.Call) and dotted(it.func) == "range" and len(it.args) == 3 and \
        isinstance(it.args[2].value, cst.UnaryOperation) and isinstance(it.args[2].value.operator, cst.Minus)


@register
class VaryingScalarArgument(SiteBookkeeping):
    """Checks for calls of a compiled function inside a loop that pass the loop variable: an int, float, bool or
    string that changes every iteration, or a number read from a tensor the loop binds (`t.item()`); and a sampling
    loop that hands the compiled function back what it returned with grad mode on (`x = step(model, x)`):
    `x` requires grad from the second call on."""
    code = "DYN501"
    name = "varying-scalar-argument"
    message = "compiled `{callee}` gets `{var}`, a new value at each call in the loop ({kind}): {effect}"
    fix = "Pass varying numbers as tensors (`torch.tensor(step)`), or mark them dynamic; map strings to a small fixed set of modes or to separate compiled functions"
    recompiles = True
    scope = "site"
    why = """
        Dynamo guards on the value of every Python scalar argument that the compiled code reads (`step == 3`,
        `mode == 'train'`), at its first read. A new int or float recompiles once, after which Dynamo makes it
        dynamic (a SymInt/SymFloat); an int that bounds a `range()` stays specialised and recompiles on every
        value; a new bool compiles one graph per value; a new string recompiles on every value until
        `recompile_limit` (8) is hit, after which the function silently runs eagerly. The finding stands at the
        guard, the line Dynamo's recompile log names; the call is its related location. A local that the loop
        sets once before the call (`freq = w if epoch > 0 else None`) changes as the loop variable does and is
        judged by what it is set to; so is a number the loop reads anew from the state it updates (`step = 0.5 /
        (1 + float(x.abs().max()))` in a `while` that reassigns `x`). The elements of a 1-d tensor (`for t in scheduler.timesteps`) are 0-d
        tensors: a graph input, except where the compiled code indexes a tensor with one
        (`self.alphas_cumprod[t]`): Dynamo turns it into a Python int there and guards on its value (`t.item()
        == 900`), so every new value recompiles (`index_select` keeps it in the graph). An int that indexes a
        Python list (`self.sigmas[k]`) is specialised there even after it became dynamic: every further value
        fails that second guard, reported at the subscript. A branch on a dynamic int (`if t > 0:`, `if t == 0:`)
        guards the side it took, so a loop that counts down (a sampler's steps) recompiles again at its last
        step: at the test, or, for an inequality, at the first tensor index by the int, whose range the test is
        folded into (`1 <= t <= 9`); one counting up from 0 is dynamic from 1 on, on one side for good. What changes between calls is followed beyond loop
        variables: the rows of `zip`, `itertools.product` and `enumerate`, a list attribute the class only fills
        with ints, a number an object keeps that the loop changes (`scaler.update()` assigning `self.scale`), an
        attribute a caller changes between calls of the method that hands it on, a draw from a random generator
        (`rng.beta(a, a)`, `random.random() < p`). An argument the compiled code never reads is not guarded, and
        not reported.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def scale(x, temperature):
                return x / temperature

            def run(x):
                for temperature in [0.5, 1.0, 2.0]:
                    x = scale(x, temperature)
                return x
        """, "run(torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def activate(x, kind):
                return torch.relu(x) if kind == "relu" else torch.tanh(x)

            def sweep(x):
                for kind in ["relu", "tanh", "gelu"]:
                    x = activate(x, kind)
                return x
        """, "sweep(torch.ones(3))"),
        Example("""
            import torch
            from torch import nn

            @torch.compile
            def denoise_step(model, x):
                return x - 0.1 * model(x)

            def sample(model):
                x = torch.randn(2, 4)
                for _ in range(3):
                    x = denoise_step(model, x)
                return x
        """, "sample(nn.Linear(4, 4))"),
        Example("""
            import torch

            class Sampler:
                def __init__(self, steps=4):
                    self.steps = steps
                    self.alphas = torch.linspace(0.1, 0.9, steps)

                @torch.compile
                def step(self, x, t):
                    return x * self.alphas[t] + t

                def sample(self, x):
                    for t in reversed(range(self.steps)):
                        x = self.step(x, t)
                    return x
        """, "Sampler().sample(torch.ones(3))"),
        Example("""
            import torch

            class Sampler:
                def __init__(self):
                    self.alphas = torch.linspace(0.9, 0.1, 10)
                    self.timesteps = torch.arange(9, -1, -1)

                @torch.compile
                def step(self, x, t):
                    return x * self.alphas[t]       # `t` a 0-d tensor: Dynamo guards `t.item() == 9`

                def sample(self, x):
                    for t in self.timesteps:
                        x = self.step(x, t)
                    return x
        """, "Sampler().sample(torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def loss_fn(logits, item_freq):
                if item_freq is not None:
                    logits = logits - torch.log(item_freq)
                return logits.sum()

            def train(logits):
                for epoch in range(3):
                    freq = torch.rand(4) + 0.1 if epoch > 0 else None     # set once per iteration, then passed
                    loss_fn(logits, freq)
        """, "train(torch.randn(2, 4))"),
        Example("""
            import torch

            def warmup(step, steps=4):
                return min(1.0, step / steps)

            @torch.compile
            def kl_loss(x, beta):
                return beta * x.pow(2).mean()

            def train(x):
                for step in range(3):
                    loss = kl_loss(x, warmup(step))
                return loss
        """, "train(torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def kl_loss(x, floor=0.0):
                kl = x.pow(2)
                if floor > 0:
                    kl = kl.clamp(min=floor)
                return kl.mean()

            def train(x):
                for step in range(3):
                    loss = kl_loss(x, floor=0.1 if step > 0 else 0.0)
                return loss
        """, "train(torch.ones(3))"),
        Example("""
            import torch

            @torch.compile
            def relax(x, step):
                return x - step * x.sin()

            def solve(x, tol=1e-3):
                err = 1.0
                while err > tol:
                    # read anew from the state the loop updates: a new number each call
                    step = 0.5 / (1.0 + float(x.cos().abs().max()))
                    x = relax(x, step)
                    err = float(x.sin().abs().max())
                return x
        """, "solve(torch.tensor([0.4, -0.3]))"),
        Example("""
            import torch

            class Agent:
                def __init__(self):
                    self.w = torch.ones(4)

                def act(self, obs, greedy):
                    if greedy:
                        return obs * self.w
                    return obs - self.w

            def rollout(obs):
                agent = Agent()
                agent.act = torch.compile(agent.act)    # the instance's method rebound to its compiled self
                for step in range(4):
                    obs = agent.act(obs, step % 2 == 0)
                return obs
        """, "rollout(torch.ones(4))"),
        Example("""
            import torch

            class Buffer:
                def __init__(self):
                    self.prios = torch.rand(16)

                def sample(self, n, beta):
                    return self.prios[:n] ** -beta

            def learn(sample_fn, n, beta):
                return sample_fn(n, beta).sum()     # hands its own parameters on to the compiled call

            def train():
                buffer = Buffer()
                sample_fn = torch.compile(buffer.sample)
                for it in range(3):
                    beta = 0.4 + 0.2 * it
                    learn(sample_fn, 8, beta)
        """, "train()"),
        Example("""
            import torch

            class Denoiser(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(4, 4)

                def forward(self, x, t):
                    return self.proj(x) * (t / 1000)

            def sample(model, timesteps):           # every caller passes a compiled module and a list of ints
                x = torch.randn(2, 4)
                for t in timesteps:
                    x = model(x, t)
                return x

            def main():
                denoiser = torch.compile(Denoiser())
                sample(denoiser, [999, 666, 333])
        """, "main()"),
        Example("""
            import torch

            def test_int_and_float_args():
                def fn(x, alpha):
                    return x * alpha + 1

                opt_fn = torch.compile(fn)
                x = torch.zeros(2)
                for n, alpha in [(1, 0.5), (2, 0.25), (3, 0.75)]:   # each tuple's float
                    opt_fn(x, alpha)
                    fn(x, alpha)                    # the test's eager reference: not compiled
        """, "test_int_and_float_args()"),
        Example("""
            import torch

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = torch.nn.Linear(3, 3)

                def forward(self, x):
                    return self.fc(x)

            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.compiled_loss = torch.compile(self.loss)   # an attribute holds the compiled method

                def loss(self, x, lam=None):
                    y = self.model(x)
                    if lam is not None:
                        y = y * lam
                    return y.sum()

                def train_step(self, x, lam=None):
                    return self.compiled_loss(x, lam)      # hands its parameter on

            def train():
                trainer = Trainer(Net())
                for step in range(4):
                    lam = 0.7 if step % 2 == 1 else None
                    trainer.train_step(torch.randn(2, 3), lam=lam)
        """, "train()"),
    ]
    VALID = [Example("""
        import torch

        class Sampler:
            def __init__(self):
                self.alphas = torch.linspace(0.9, 0.1, 10)
                self.timesteps = torch.arange(9, -1, -1)

            @torch.compile
            def step(self, x, t):
                return x * self.alphas.index_select(0, t.view(1))   # a graph op: nothing to guard

            def sample(self, x):
                for t in self.timesteps:
                    x = self.step(x, t)
                return x
    """, "Sampler().sample(torch.ones(3))"), Example("""
        import torch

        @torch.compile
        def relax(x, step):
            return x - step * x.sin()

        def solve(x, w):
            for _ in range(3):
                step = 0.5 / (1.0 + float(w.abs().max()))   # from what the loop never changes: one value
                x = relax(x, step)
            return x
    """, "solve(torch.tensor([0.4, -0.3]), torch.ones(2))"), Example("""
        import torch

        @torch.compile
        def scale(x, factor):
            return x * factor

        def run(x):
            for step in range(4):
                x = scale(x, torch.tensor(float(step)))
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch

        @torch.compile
        def scale(x, factor):
            return x * factor

        def run(x):
            for step in range(4):
                x = scale(x, 2)             # the same value each call: one graph
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch
        from torch import nn

        @torch.compile
        def denoise_step(model, x):
            return x - 0.1 * model(x)

        def sample(model):
            x = torch.randn(2, 4)
            with torch.no_grad():           # what it returns does not require grad
                for _ in range(3):
                    x = denoise_step(model, x)
            return x
    """, "sample(nn.Linear(4, 4))")]

    GUARD = {"int": "int argument", "float": "float argument", "bool": "bool argument", "str": "str argument",
             "enum": "enum argument", "function": "enum argument",
             "None or tensor": "None or tensor argument", "None or int": "None or tensor argument",
             "None or float": "None or tensor argument", "None or str": "None or tensor argument",
             "None or bool": "None or tensor argument", "dtype": "dtype argument", "dict": "dict argument",
             "tuple": "tuple argument", "list": "tuple argument"}

    def _int_use(self, callee: Optional[str], param: Optional[str]) -> str:
        """How the compiled function `callee` (a qualname of this file) uses its int parameter `param`:
        "int argument in range" (a `range(...)` bound), "int argument in condition" (an `if` / `while` test reads
        it) or "int argument"."""
        ix = self.ctx.index
        info = ix.functions.get(callee) if ix is not None and callee else None
        if info is None or param is None:
            return "int argument"
        text = "\n".join((self.ctx.source or "").splitlines()[info.def_line - 1:info.end])
        name = re.escape(param)
        if re.search(rf"\brange\((\s*[^()]*,)?\s*{name}\s*[,)]", text):
            return "int argument in range"
        compared = rf"(\b{name}\s*(<|>|==|!=)|(<|>|==|!=)=?\s*{name}\b)"
        if re.search(rf"^\s*(el)?(if|while)\b[^\n#]*{compared}", text, re.M):
            return "int argument in condition"
        return "int argument"

    def finish(self, findings) -> None:
        """The elements of a tensor that calls in other files iterate and pass to a method of this unit compiled
        as an entry, which indexes a tensor with them (`rows.py`)."""
        for qual, index, span, rows in row_index_guards(self.ctx, self.tensors):
            path, line, var = rows[0]
            inner = guard_lines.innermost_function(self.ctx.source or "", span[0])
            indexed = ast.parse(index, mode="eval").body.slice
            self.ctx.report(self, None, self.format_message(
                callee=qual, var=var, kind=f"a 0-d tensor, the index of `{index}`",
                effect=effect("0-d tensor index argument")), at=span,
                related=[(p, ln, 0, f"`{v}` changes here, an element of a tensor a loop iterates") for p, ln, v in rows],
                pattern="0-d tensor index",
                guard=(inner.lineno, indexed.id) if inner is not None and isinstance(indexed, ast.Name) else ())
        for qual, param, kind, calls in loop_values(self.ctx, self.tensors):
            guard = self.GUARD.get(kind)
            guard = self._int_use(qual, param) if guard == "int argument" else guard
            span = self.guard_span(qual, param, at_entry=False)
            if span is None or (guard and not recompiles(guard)):
                continue
            related = [(p, ln, 0, f"`{v}` changes here") for p, ln, v in calls]
            info = self.ctx.index.functions.get(qual)
            self.ctx.report(self, None, self.format_message(
                callee=qual, var=calls[0][2], kind=kind, effect=effect(guard) if guard else "new values recompile"),
                at=span, related=related, guard=(info.def_line, param) if info else ())
            if kind in ("int", "float"):
                self._specialised(qual, param, kind, qual, calls[0][2], related)

    def visit_Call(self, node: cst.Call) -> None:
        loops = [b for b in self.ctx.blocks if isinstance(b, cst.For)]
        if isinstance(node.func, cst.Name) and self.shadowed(node.func.value):
            self._handed_on(node, loops)        # the calling function's own function (a factory of closures)
            return
        method = self.compiled_method(node)
        held = compiled_parameter(self, node.func.value) if method is None and isinstance(node.func, cst.Name) and \
            node.func.value not in self.compiled_names() else None
        if method is None and held is None and \
                (not isinstance(node.func, cst.Name) or node.func.value not in self.compiled_names()):
            self._handed_on(node, loops)
            return
        if method is None and loops:
            self._comes_back_with_grad(node)        # (its other arguments are guarded each on its own)
        callee = f"{node.func.value.value}.{node.func.attr.value}" if method else node.func.value
        entry = method or held or self.compiled_entry(callee)
        for arg in node.args:
            value = arg.value
            if arg.star or isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
                continue
            if self.tensors.kind(value) == TENSOR:
                if (method is None and self._tensor_argument(callee, value, loops)) or \
                        self._index_argument(node, arg, callee, entry, loops):
                    return
                continue
            self._scalar_argument(node, arg, callee, entry, loops)

    def _method_elsewhere(self, callee: str) -> bool:
        """`callee` is compiled from a method of a class in another file of the project (`step =
        torch.compile(module.training_step)`): the method's file reports what its calls pass, at the guard."""
        from dynlint.analysis.regions import targets_of_value
        wrapped, ix, project = compile_call(self.ctx, callee), self.ctx.index, self.ctx.project
        value = guard_lines.dotted(wrapped.args[0]) if wrapped is not None and wrapped.args else None
        if not value or project is None:
            return False
        here = ix.functions.get(self.ctx.qualname or "")
        return any(path != self.ctx.path and "." in qual
                   for path, qual in targets_of_value(project, ix, here, value))

    def _handed_on(self, node: cst.Call, loops) -> None:
        """A call of a function of the file that hands its parameter on to a compiled call: each argument it hands
        on is checked as an argument of that compiled call (`handed.handed_arguments`)."""
        line, col = self.ctx.position(node)[:2]
        fields: dict = {}
        for arg, entry, param, inner, field in handed_on(self, node) if loops else ():
            also = [(line, col, f"`{source_of(node.func)}(...)` hands it to `{inner}` here")]
            if field:
                fields.setdefault((arg.value, entry, inner), {})[field] = param
            elif self.tensors.kind(arg.value) != TENSOR:
                self._scalar_argument(node, arg, inner, entry, loops, param=param, also=also)
        for (value, entry, inner), params in fields.items():
            # the fields of the records a loop hands over, each handed on to a parameter (`cfg.top_k`)
            rows = record_rows(self.ctx, value, loops,
                               lambda attr: self._read_at(entry, params[attr]) if attr in params else None)
            for var, attr, kind in rows:
                handed = [(line, col, f"`{source_of(node.func)}(...)` hands `{var}.{attr}` to `{inner}` here")]
                self._found_argument(node, cst.Arg(value), value, (f"{var}.{attr}", kind, None, None), inner, entry,
                                     loops, params[attr], handed)

    def _scalar_argument(self, node: cst.Call, arg: cst.Arg, callee: str, entry: Optional[str], loops,
                         param: Optional[str] = None, also=()) -> bool:
        """Report `arg` of the call where it changes between calls and the compiled code reads it (each such
        argument: Dynamo guards each at its own first read; `param`, when given, is the entry's parameter it
        reaches through a function that hands it on); True when reported."""
        value = bound_in_loop(self.ctx, arg.value, loops, node) or arg.value
        found = self._changing(node, arg, value, loops)
        if found is None:       # each field that differs between the records a loop hands over
            info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
            param = param or (bound_parameter(info, node, arg) if info else None)
            def first_read(attr: str) -> Optional[Tuple[int, int]]:
                return self._read_at(entry, f"{param}.{attr}")
            rows = (record_rows(self.ctx, value, loops, first_read) or
                    built_fields(self.ctx, value, loops, first_read)) if param and entry else []
            return any([self._found_argument(node, arg, value, (var, kind, None, (attr, value)), callee, entry,
                                             loops, param, also) for var, attr, kind in rows])
        return self._found_argument(node, arg, value, found, callee, entry, loops, param, also)

    def _found_argument(self, node: cst.Call, arg: cst.Arg, value, found, callee: str, entry: Optional[str], loops,
                        param: Optional[str], also) -> bool:
        """`_scalar_argument` of an argument whose change `found` (`_changing`) tells."""
        var, kind, key, kept = found
        if entry is None and self._method_elsewhere(callee):
            return False            # reported at its guard, in the method's file (`rows.loop_values`)
        info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
        param = param or (bound_parameter(info, node, arg) if info else None)
        guard = self.GUARD.get(kind)
        if guard == "int argument":
            guard = self._int_use(entry, param)
        if guard and not recompiles(guard) or (guard in SYMBOLIC and self.compiled_dynamic(callee)):
            return False            # (numbers are symbolic from the start under `dynamic=True`)
        if kept is not None:
            if not param:
                return False
            param = f"{param}.{kept[0]}"
        if not self.reads(entry, param) or (entry is None and self._unread_by_methods(callee, node, arg)):
            return False            # an argument the compiled function never reads is not guarded
        if key is not None:
            return self._item_argument(value, entry, param, key, callee, var, kind, guard)
        if kind in ("tuple", "list") and self._element_argument(value, entry, param, callee, var, kind, guard):
            return True
        self.report_at_guard(value, entry, param, f"`{var}` changes here", also=also, callee=callee, var=var,
                             kind=f"{kind}, kept as `{param}`" if kept else kind,
                             effect=effect(guard) if guard else "new values recompile")
        if kind in ("int", "float") and not kept:
            self._specialised(entry, param, kind, callee, var,
                              [(*self.ctx.position(value)[:2], f"`{var}` changes here")], _descends(loops, var))
        return True

    def _changing(self, node: cst.Call, arg: cst.Arg, value: cst.BaseExpression, loops):
        """(the changing name, the kind of value the argument carries, the dict display's key it is the item of,
        the (attribute, argument) of an object built from it that keeps it) for an argument that changes
        between calls; None for one that does not, or is built from it in a way not known here (`batches[i]`)."""
        read = changing_number(self.ctx, arg.value, node) or drawn_number(self.ctx, arg.value, loops)
        found = read or varying(self.ctx, value, loops) or loop_origin(self.ctx, value, loops, node) or \
            carried_number(self.ctx, arg.value)
        state = None if found else object_state(self.ctx, arg.value) or set_by_callers(self.ctx, arg.value) or \
            self._arithmetic_of_state(arg.value) or helper_of_state(self.ctx, arg.value)
        found = found or state
        if found is None:
            return None
        var, var_kind = found
        key = item_key(value, var)         # `{"domain": d}`: the dict's item is the changing value
        kind = self._kind_of(value, var, var_kind, bool(read or state) or key is not None)
        kept = kept_attribute(self.ctx.source or "", value, var) if kind is None else None
        if kept is not None:       # `Cfg(temperature=t)`: the object's attribute is the changing value
            kind = value_kind(kept[1], var_kind, enum_classes(self.ctx.source or ""))
        return (var, kind, key, kept) if kind is not None else None

    def _read_at(self, entry: str, value: str) -> Optional[Tuple[int, int]]:
        """(line, column) of the compiled function's guard on `value` (`guard_span`); None where it is not read."""
        span = self.guard_span(entry, value, at_entry=False)
        return span[:2] if span else None

    def _unread_by_methods(self, callee: str, node: cst.Call, arg: cst.Arg) -> bool:
        """`step = torch.compile(module.training_step)` with `module` of a class not known here: True when the
        file's classes define that method and none of them reads the parameter `arg` binds (`batch_idx`), so no
        guard is installed on it whichever of them it runs."""
        wrapped, ix = compile_call(self.ctx, callee), self.ctx.index
        target = guard_lines.dotted(wrapped.args[0]) if wrapped is not None and wrapped.args else None
        method = target.rpartition(".")[2] if target and "." in target else None
        found = [info for q, info in ix.functions.items() if info.cls and q == f"{info.cls}.{method}"] \
            if method and ix is not None else []
        params = [bound_parameter(info, node, arg) for info in found]
        return bool(found) and all(p is not None and not self.reads(info.qualname, p) for info, p in zip(found, params))

    def _arithmetic_of_state(self, value: cst.BaseExpression) -> Optional[Tuple[str, str]]:
        """Arithmetic on a number an object the loop changes keeps (`1.0 / scaler.scale`): a new value whenever
        it is ((`scaler.scale`, its kind), a float where the arithmetic divides or has a float literal)."""
        if not isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
            return None
        for n in descendants(value):
            found = object_state(self.ctx, n) if isinstance(n, cst.Attribute) else None
            if found is not None:
                return found[0], "float" if float_expr(value) else found[1]
        return None

    def _kind_of(self, value: cst.BaseExpression, var: str, var_kind: str, direct: bool) -> Optional[str]:
        """The kind of value an argument built from the changing `var` has (`direct`: `var`'s own)."""
        carried = isinstance(value, cst.Attribute) and dotted(value) == var     # (`self.step`, carried)
        return var_kind if direct or carried else \
            value_kind(value, var_kind, enum_classes(self.ctx.source or "")) or self._returned_number(value)

    def _element_argument(self, value, entry, param, callee: str, var: str, kind: str, guard) -> bool:
        """A list or tuple of numbers that the compiled code first reads by iterating it (`for img, (h, w) in
        zip(images, image_sizes)`): the guard stands where an element is first used (`guard_lines.element_use`).
        True when reported."""
        info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        span = guard_lines.element_use(self.ctx.source or "", fn, param) if fn is not None and param else None
        if span is None:
            return False
        line, col = self.ctx.position(value)[:2]
        self.ctx.report(self, value, self.format_message(
            callee=callee, var=var, kind=kind, effect=effect(guard) if guard else "new values recompile"), at=span,
            related=[(line, col, f"`{var}` changes here")])
        return True

    def _item_argument(self, value, entry, param, key, callee: str, var: str, kind: str, guard) -> bool:
        """A dict display handed to the compiled code with the changing value as an item (`model(x, {"domain":
        d})`): Dynamo guards that item where the code first uses it (`self.scale[extras["domain"]]`: `extras[
        'domain'] == 'a'`, measured on torch 2.13), as it guards an argument of that kind. True when reported."""
        info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        span = guard_lines.item_use(self.ctx.source or "", fn, param, key) if fn is not None and param else None
        if span is None:
            return False
        line, col = self.ctx.position(value)[:2]
        self.ctx.report(self, value, self.format_message(
            callee=callee, var=var, kind=f"{kind}, the item {key!r} of `{param}`",
            effect=effect(guard) if guard else "new values recompile"), at=span,
            related=[(line, col, f"`{var}` changes here")])
        return True

    def _specialised(self, entry: Optional[str], param: Optional[str], kind: str, callee: str, var: str,
                     related, descending: bool = False) -> None:
        """A second guard of a varying number, after its first change made it dynamic: where the compiled code
        specialises it again, every new value recompiles. An int indexing a Python list (`changing.list_index`),
        a number handed to a `math` function (`changing.math_call`): the first of them in the function."""
        found = [(span, what) for span, what in
                 ((list_index(self.ctx, entry, param) if kind == "int" else None, "indexing a Python list"),
                  (math_call(self.ctx, entry, param), "through a `math` function")) if span is not None]
        first = self.guard_span(entry, param, at_entry=False)
        if found:
            span, what = min(found)
            if first is None or span[0] != first[0]:
                self.ctx.report(self, None, self.format_message(
                    callee=callee, var=var, kind=f"{kind}, {what}", effect=effect("number argument specialised again")),
                    at=span, related=related)
        # (only where the loop counts down, as a sampler's steps do: its values cross a test of the int after it
        # became dynamic; one counting up from 0 is dynamic from 1 on, on one side of `t > 0` for good. An int
        # specialised again before the branch, indexing a Python list, is a constant there: no guard of its own)
        branch = branch_guard(self.ctx, entry, param) if kind == "int" and descending else None
        if branch is not None and (first is None or branch[0] != first[0]) and \
                not any(span[0] <= branch[0] for span, _ in found):
            self.ctx.report(self, None, self.format_message(
                callee=callee, var=var, kind=f"{kind}, in a branch once dynamic",
                effect=effect("int argument in condition")), at=branch, related=related)

    def _returned_number(self, value: cst.BaseExpression) -> Optional[str]:
        """"float" or "int" for a call of a function of this file that returns a Python number computed from its
        arguments (`beta_schedule(step)` returning `min(1.0, step / warmup)`): a float where a return has a float
        literal or a true division, an int where every return is integer arithmetic; None otherwise."""
        ix = self.ctx.index
        info = ix.functions.get(value.func.value) if isinstance(value, cst.Call) and \
            isinstance(value.func, cst.Name) and ix is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info and not info.cls else None
        returns = [n.value for n in body_nodes(fn) if isinstance(n, ast.Return)] if fn else []
        if not returns or any(r is None or not number_expr(r) for r in returns):
            return None
        return "float" if any(float_number(r) for r in returns) else "int"

    TENSOR_KEYWORDS = {("dtype", "dtype"): "tensor dtype argument", ("requires_grad", "bool"): "tensor requires_grad argument"}

    FACTORY = re.compile(r"torch\.(randn|rand|zeros|ones|empty|full|normal|randint)(_like)?\(")

    def _comes_back_with_grad(self, node: cst.Call) -> bool:
        """`x = step(model, x, t)` in a loop with grad mode on: the compiled function runs a module it is handed
        (`model(...)`), so what it returns requires grad, and the loop hands that back as `x`. The first call
        saw `x` made by a torch factory (no grad), the second sees `requires_grad=True`: Dynamo guards on it
        and compiles again, once (`tensor 'x' requires_grad mismatch`)."""
        fed_back = self._fed_back(node)
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        ix = self.ctx.index
        info = ix.functions.get(self.compiled_entry(node.func.value) or "") if ix is not None else None
        if fed_back is None or fn is None or info is None or self._grad_mode_set_here(fn) or \
                not self._runs_module_with_grad(info):
            return False
        var, arg = fed_back
        if not self._first_made_by_factory(fn, var, self.ctx.position(node)[0]):
            return False
        self.report_at_guard(arg.value, self.compiled_entry(node.func.value), None,
                             f"`{var}` comes back requiring grad here",
                             message=f"compiled `{node.func.value}` gets back `{var}`, which it returns requiring "
                                       f"grad (grad mode is on and it runs the module it is handed): the second "
                                       f"call sees `requires_grad=True` where the first saw False, so "
                                       f"{effect('tensor requires_grad argument')}")
        return True

    def _fed_back(self, node: cst.Call) -> Optional[Tuple[str, cst.Arg]]:
        """(name, argument) of a call whose result is assigned to a name it is also passed (`x = step(model,
        x)`); None for any other call."""
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if not (isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1 and
                isinstance(parent.targets[0].target, cst.Name)):
            return None
        var = parent.targets[0].target.value
        arg = next((a for a in node.args if isinstance(a.value, cst.Name) and a.value.value == var and not a.star), None)
        return (var, arg) if arg is not None else None

    def _grad_mode_set_here(self, fn: cst.FunctionDef) -> bool:
        """The calling function's decorators, or a `with` around the call, turn grad mode off or set it
        (`@torch.no_grad()`, `with torch.set_grad_enabled(train):`)."""
        setters = [d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator for d in fn.decorators]
        setters += [i.item.func if isinstance(i.item, cst.Call) else i.item for b in self.ctx.blocks
                    if isinstance(b, cst.With) for i in b.items]
        return any(self.ctx.qualify(n) in GRAD_OFF | {"torch.set_grad_enabled"} for n in setters) or \
            self._called_without_grad(fn.name.value)

    def _called_without_grad(self, name: str) -> bool:
        """Every call of the file's function `name` in the file is made with grad mode off (inside `with
        torch.no_grad():`, or in a function decorated so): what it runs runs without grad too."""
        tree = guard_lines.parsed(self.ctx.source or "")
        calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and guard_lines.dotted(c.func) == name] \
            if tree is not None else []
        return bool(calls) and all(self._under_grad_off(tree, c) for c in calls)

    def _under_grad_off(self, tree: ast.Module, call: ast.Call) -> bool:
        """`call` stands inside a `with` that turns grad mode off, or in a function decorated so."""
        ix = self.ctx.index
        return grad_off_around(tree, call, lambda d: ix.qualify(d) if ix is not None else d)

    def _runs_module_with_grad(self, info) -> bool:
        """The compiled function (a function of this file) calls one of its parameters (`model(x)`) and sets
        no grad mode itself."""
        lines = (self.ctx.source or "").splitlines()
        callee = "\n".join(lines[info.start - 1:info.end])
        if "no_grad" in callee or "inference_mode" in callee or "set_grad_enabled" in callee:
            return False
        return any(re.search(rf"\b{re.escape(p)}\(", callee) for p in info.params if p not in ("self", "cls"))

    def _first_made_by_factory(self, fn: cst.FunctionDef, var: str, call_line: int) -> bool:
        """The first assignment of `var` in the calling function, before the call, is a torch factory that
        does not ask for grad (`x = torch.randn(2, 4)`)."""
        lines = (self.ctx.source or "").splitlines()
        made = re.compile(rf"^\s*{re.escape(var)}\s*=\s*(.*)$")
        first = next((m.group(1) for ln in lines[self.ctx.position(fn)[0]:call_line - 1] for m in [made.match(ln)]
                      if m), None)
        return first is not None and bool(self.FACTORY.match(first)) and "requires_grad" not in first

    def _index_argument(self, node: cst.Call, arg: cst.Arg, callee: str, entry: Optional[str], loops) -> bool:
        """The loop variable of a loop over a 1-d tensor (`for t in sched.timesteps`), a 0-d tensor, passed to
        a compiled function that indexes a tensor with it (`self.alphas_cumprod[t]`): Dynamo turns the index
        into a Python int and guards on its value (`t.item() == 900`) at that subscript."""
        loop = next((lp for lp in reversed(loops) if isinstance(arg.value, cst.Name) and
                     isinstance(lp.target, cst.Name) and lp.target.value == arg.value.value), None)
        info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
        source, tree = self.ctx.source or "", guard_lines.parsed(self.ctx.source or "")
        if loop is None or info is None or tree is None:
            return False
        line = self.ctx.position(loop)[0]
        here = self.ctx.index.functions.get(self.ctx.qualname or "")
        try:
            iterated = ast.parse(source_of(loop.iter).strip(), mode="eval").body
        except SyntaxError:
            return False
        if tensor_rank(iterated, self._resolver(tree, line, here, self.ctx.class_name)) != 1:
            return False
        param = bound_parameter(info, node, arg)
        fn = guard_lines.function_at(source, info.def_line)
        resolve = self._resolver(tree, info.def_line, None, info.cls)
        index = next((n for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name) and
                      n.slice.id == param and made_by_torch(n.value, resolve)), None) if fn else None
        if index is None:
            return False
        var = arg.value.value
        at = self.ctx.position(arg.value)
        self.ctx.report(self, arg.value, self.format_message(
            callee=callee, var=var, kind=f"a 0-d tensor, the index of `{ast.unparse(index)}`",
            effect=effect("0-d tensor index argument")), at=guard_lines.span_of(source, index),
            related=[(at[0], at[1], f"`{var}` changes here")], pattern="0-d tensor index",
            guard=(info.def_line, param))
        return True

    def _resolver(self, tree: ast.Module, line: int, here, cls: Optional[str]):
        """For `tensor_rank`: the expression a name holds at `line` (its last plain assignment), or what a
        class of this file assigns to an attribute read through `self` (in a method of `cls`) or through a local
        instance the function `here` builds (`sched.timesteps`), when it assigns it once."""
        ix = self.ctx.index

        def resolve(node: ast.AST) -> Optional[ast.AST]:
            if isinstance(node, ast.Name):
                return guard_lines.last_binding(tree, node.id, line)
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
                return None
            owner = node.value.id
            made = [cls] if owner == "self" else ix.built(owner, here)
            return attribute_value(tree, made[0], node.attr) if len(made) == 1 and made[0] else None
        return resolve

    def _tensor_argument(self, callee: str, value: cst.BaseExpression, loops) -> bool:
        """A tensor made for the call with a `dtype=` or `requires_grad=` built from the loop variable
        (`torch.ones(3, dtype=(torch.float32, torch.float64)[i % 2])`), or set on it by a method (`x.requires_grad_(
        i % 2 == 0)`, `x.to(dtype)`): Dynamo guards on both."""
        for keyword, arg in _tensor_keywords(value):
            found = varying(self.ctx, arg, loops)
            guard = self.TENSOR_KEYWORDS.get((keyword, value_kind(arg, found[1]))) if found else None
            if guard:
                self.report_at_guard(arg, self.compiled_entry(callee), None, f"`{found[0]}` changes here",
                                     callee=callee, var=found[0], kind=f"the `{keyword}` of a tensor argument",
                                     effect=effect(guard))
                return True
        return False


def _tensor_keywords(value: cst.BaseExpression):
    """(keyword, argument) for what a tensor expression says of its dtype and `requires_grad`: a factory's
    keywords (`torch.ones(3, dtype=dt)`), `.requires_grad_(flag)`, `.to(dtype)` / `.type(dtype)`."""
    if not isinstance(value, cst.Call):
        return []
    if isinstance(value.func, cst.Attribute) and len(value.args) == 1 and value.args[0].keyword is None:
        method = value.func.attr.value
        if method == "requires_grad_":
            return [("requires_grad", value.args[0].value)]
        if method in ("to", "type"):
            return [("dtype", value.args[0].value)]
    return [(a.keyword.value, a.value) for a in value.args if a.keyword is not None]


@register
class RangeOverIntArgument(TorchRule):
    """Checks for `range(n)` in a compiled function where `n` is one of its own (non-tensor) parameters."""
    code = "DYN502"
    name = "range-over-int-argument"
    message = "`range({var})` over an argument of the compiled function: every new value of `{var}` recompiles"
    fix = "Loop over a size Dynamo can keep symbolic (a tensor dimension), pass a fixed bound, or move the loop into the caller"
    recompiles = True
    preview = ("a recompile needs callers that pass different values; one that always passes the same count "
               "(a config's `order`) compiles once, and the code here cannot tell which")
    why = """
        A Python loop is unrolled while tracing, so Dynamo must know exactly how many iterations to trace: it
        specialises on `n` (`n == 3`). Unlike other int arguments, which become dynamic after one recompile,
        an int that drives `range()` stays specialised, so every distinct value compiles a new graph until
        `recompile_limit` (8) is hit.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def smooth(x, steps: int):
            for _ in range(steps):
                x = 0.5 * (x + x.roll(1))
            return x
    """, "for n in (1, 2, 3): smooth(torch.ones(4), n)")]
    VALID = [Example("""
        import torch

        STEPS = 3

        @torch.compile
        def smooth(x):
            for _ in range(STEPS):
                x = 0.5 * (x + x.roll(1))
            for _ in range(x.shape[0] // 4):
                x = x * 1.0
            return x
    """, "for n in (1, 2, 3): smooth(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "range" and self.call_name(node) == "range"):
            return
        fn = self.ctx.function
        if not isinstance(fn, cst.FunctionDef) or len(self.ctx.functions) != 1:
            return
        chain = self.ctx.region_chain()
        if not (len(chain) == 1 and chain[0] == self.ctx.qualname):
            return                  # only a compile root's parameters are guarded inputs
        params = parameter_names(fn) - {"self", "cls"}
        for arg in call_args(node)[0]:
            if isinstance(arg, cst.Name) and arg.value in params and self.tensors.kind(arg) != TENSOR:
                self.report(node, var=arg.value)
                return
