"""Call sites that pass different constants for the same parameter of a compiled function (DYN508): each
constant is a value Dynamo guards on where the compiled code first reads it."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.guards import effect, recompiles
from dynlint.analysis.regions import compiled_elsewhere
from dynlint.linter.rule import Example, register
from dynlint.rules.recompiles.regional import instances_compiled_apart
from dynlint.rules.recompiles.common import (SiteBookkeeping, call_bindings, defaults_of,
                                             forwarded_keywords, literal_value)
from dynlint.rules.recompiles.common import enum_classes
from dynlint.rules.recompiles.scalars import SYMBOLIC


class EnumMember(str):
    """A member of an Enum class of the file, `Reduction.MEAN`, as its dotted name."""

    def __repr__(self) -> str:
        return str(self)


@register
class ScalarArgumentDiffersBetweenCallSites(SiteBookkeeping):
    """Checks for a compiled function of the file that its call sites pass different int, float, string or
    bool constants for the same parameter (`temperature=0.7` here, `temperature=1.0` there; `act(x, "gelu")`
    and `act(x)` with the default `"relu"`)."""
    code = "DYN508"
    name = "scalar-argument-differs-between-call-sites"
    message = ("compiled `{callee}` gets `{param}={value}` at line {line} and `{param}={other}` at line "
               "{other_line}: {kind} {held} is guarded on its value, so {effect}")
    fix = ("Pass the value as a tensor (`torch.tensor(0.7)`) when it changes, or compile one function per "
           "setting (`functools.partial` before `torch.compile`)")
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on the value of an int, float, string or bool argument (`temperature == 0.7`), at the
        first line of the compiled function that reads it. Call sites that pass different constants make the
        second one fail the guard and compile again: an int or a float then becomes a graph input (one
        recompile), a string or a bool compiles one graph per value. The finding stands at the guard, the
        line Dynamo's recompile log names; the calls are its related locations, in this file or in another
        that compiles the function (`fl = torch.compile(losses.focal_loss)` in a script). Constants reach it
        through the calling function too: a parameter handed on, or `**sampling` handed on (each keyword its
        callers pass, or leave to the compiled function's default). An object built at the call, or bound
        once to a name, with constants it keeps as attributes (`self.low = low`, a dataclass's fields) is
        guarded the same way on each such attribute, where the compiled code, or a method it calls on the
        object, first reads it (`Clip(0.0)` here, `Clip(-0.5)` there). Instances of one module class compiled
        one by one (`for block in blocks: block.compile()`) share forward's code and Dynamo's cache: built with
        other constants (`Gate(0.5)`, `Gate(2.0)`), they fail each other's guards where forward first reads the
        attribute (compiling the whole model instead inlines each under its own name).
    """
    INVALID = [Example("""
        import torch

        class Resampler(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)

            @torch.compile
            def forward(self, x, rate: int):          # calling an instance runs the compiled forward
                return self.proj(x) * rate

        def augment(x):
            resample = Resampler()
            return resample(x, 16000), resample(x, 8000)
    """, "augment(torch.ones(2, 4))"), Example("""
        import torch
        from dataclasses import dataclass

        @dataclass
        class Sampling:
            temperature: float = 1.0
            top_k: int = 0

        @torch.compile
        def sample(logits, params):
            if params.top_k > 0:                    # guarded on `params.top_k`
                logits = logits.topk(params.top_k).values
            return torch.softmax(logits / params.temperature, dim=-1)

        def generate(logits):
            return sample(logits, Sampling(0.7)), sample(logits, Sampling(0.7, top_k=3))
    """, "generate(torch.randn(8))"), Example("""
        import torch

        @torch.compile
        def sample(logits, temperature=1.0):
            return torch.softmax(logits / temperature, dim=-1)

        def generate(logits):
            greedy = sample(logits, temperature=0.1)
            creative = sample(logits, temperature=1.3)
            return greedy, creative
    """, "generate(torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def shift(x, n):
            return x + n

        def run(x):
            return shift(x, 1), shift(x, 2)
    """, "run(torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def pool(x, reduce="max"):
            y = x * 2
            return y.amax(-1) if reduce == "max" else y.mean(-1)

        def summarize(x):
            return pool(x), pool(x, "mean")
    """, "summarize(torch.ones(2, 4))"), Example("""
        import torch

        class Critic:
            def __init__(self):
                self.q = torch.nn.Linear(4, 2)

            def target(self, reward, obs, gamma=0.99):
                return reward + gamma * self.q(obs).amax(-1)

        def train(reward, obs):
            critic = Critic()
            td = torch.compile(critic.target)       # a method, bound to an instance built here
            return td(reward, obs), td(reward, obs, 0.9)
    """, "train(torch.ones(3), torch.ones(3, 4))"), Example("""
        import torch

        class Sampler:
            def step(self, x, eta=0.0):
                return x + eta * torch.randn_like(x)

        def denoise(sampler, x, eta):
            step = torch.compile(sampler.step)      # a method of what every caller passes
            return step(x, eta=eta)

        def main():
            sampler = Sampler()
            return denoise(sampler, torch.ones(3), 0.0), denoise(sampler, torch.ones(3), 0.5)
    """, "main()"), Example("""
        import torch

        @torch.compile
        def sample(logits, temperature=1.0, top_k=0):
            if top_k > 0:
                logits = logits.topk(top_k).values
            return torch.softmax(logits / temperature, dim=-1)

        def generate(logits, **sampling):
            return sample(logits, **sampling)       # each keyword of generate's callers reaches `sample`

        def main():
            return generate(torch.randn(8)), generate(torch.randn(8), top_k=3)
    """, "main()")]
    VALID = [Example("""
        import torch

        @torch.compile
        def sample(logits, temperature=1.0):
            return torch.softmax(logits / temperature, dim=-1)

        def generate(logits):
            greedy = sample(logits, temperature=torch.tensor(0.1))
            creative = sample(logits, temperature=torch.tensor(1.3))
            return greedy, creative
    """, "generate(torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def pool(x, reduce="max"):
            return x.amax(-1) if reduce == "max" else x.mean(-1)

        def summarize(x):
            return pool(x), pool(x, "max"), pool(x, reduce="max")   # the same value, however it is passed
    """, "summarize(torch.ones(2, 4))")]

    KINDS = {int: ("an int", "int argument"), float: ("a float", "float argument"),
             str: ("a string", "str argument"), bool: ("a bool", "bool argument"),
             tuple: ("a tuple", "tuple argument"), EnumMember: ("an Enum member", "enum argument")}

    def visit_Call(self, node: cst.Call) -> None:
        compared = self.calls_compared(node, _constant_arguments, self.compiled_names())
        if compared is None:
            return
        callee, entry, here, mine, calls = compared
        for param, value in mine.items():
            earlier = [(ln, col, b[param]) for ln, col, b in calls if (ln, col) < here and param in b]
            if self._differs(node, callee, entry, param, (*here, value), earlier):
                return
        # an argument that is a parameter of the calling function: the constants that function's callers pass
        # flow through it (`run(batch, "nhwc")`, `run(batch, "nchw")` -> `preprocess(batch, layout)`)
        for param, passed in self.through_caller(node, entry, _constant_arguments):
            if self._differs(node, callee, entry, param, passed[-1], passed[:-1]):
                return
        info = self.ctx.index.functions.get(entry or "") if self.ctx.index is not None else None
        caller = self.ctx.qualname if self.ctx.qualname in (self.ctx.index.functions if self.ctx.index else {}) \
            else None
        if info is None or caller is None or "." in caller:
            return
        # `**sampling` of the calling function handed on: each keyword its callers pass (or leave to the
        # compiled function's default) reaches the parameter of that name, each guarded at its own first read
        for param, passed in forwarded_keywords(self.ctx, caller, info, node).items():
            if len(passed) > 1:
                self._differs(node, callee, entry, param, passed[-1], passed[:-1])

    def finish(self, findings) -> None:
        """A function of this unit compiled in another file (`fl = torch.compile(losses.focal_loss)` in a
        script), or compiled here by its own `@torch.compile` and called from another file: the constants that
        the calls there pass, or leave to the defaults here, are guarded here, at the first read."""
        ix, project, unit = self.ctx.index, self.ctx.project, self.ctx.unit
        if ix is None or project is None:
            return
        first, last = unit.line_offset + 1, unit.line_offset + unit.text.count("\n") + 1
        for qual, info in ix.functions.items():
            if first <= info.def_line <= last and not info.nested_in:
                self._compiled_elsewhere(qual, info)
        for qual, attr, value, other, related in instances_compiled_apart(self):
            kind = self.KINDS.get(type(other))
            span = self.guard_span(qual, attr, at_entry=False) if kind and recompiles(kind[1]) else None
            if span is not None and first <= span[0] <= last:
                self.ctx.report(self, None, self.format_message(
                    callee=f"{qual} (instances compiled one by one share its code)", param=attr, value=repr(value),
                    line=f"{related[0][1]} of {related[0][0]}", other=repr(other),
                    other_line=f"{related[1][1]} of {related[1][0]}", kind=kind[0], held="attribute",
                    effect=effect(kind[1])), at=span, related=related)

    def _compiled_elsewhere(self, qual: str, info) -> None:
        elsewhere = compiled_elsewhere(self.ctx.project, (self.ctx.path, qual))
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if elsewhere else None
        params = [p for p in info.params if p not in ("self", "cls")] if info.cls else list(info.params)
        for path, alias, calls in elsewhere if fn else ():
            bound = [(c.line, _bound_constants(c, params, fn)) for c in calls if path != self.ctx.path and
                     not c.unpacks]
            for param in params:
                seen = [(line, b[param]) for line, b in bound if param in b]
                other = next(((ln, v) for ln, v in seen if v != seen[0][1] or type(v) is not type(seen[0][1])),
                             None)
                kind = self.KINDS.get(type(other[1])) if other else None
                span = self.guard_span(qual, param, at_entry=False) if kind and recompiles(kind[1]) else None
                if span is None:
                    continue
                (line, value), (other_line, changed) = seen[0], other
                self.ctx.report(self, None, self.format_message(
                    callee=alias, param=param, value=repr(changed), line=f"{other_line} of {path}",
                    other=repr(value), other_line=f"{line} of {path}", kind=kind[0], held="argument",
                    effect=effect(kind[1])),
                    at=span, related=[(path, other_line, 0, f"`{param}={changed!r}` is passed to `{alias}` here"),
                                      (path, line, 0, f"`{param}={value!r}` is passed here")])

    def _differs(self, node, callee: str, entry: str, param: str, this: tuple, earlier: list) -> bool:
        """Report when an earlier call passed `param` another constant than `this` (line, column, value)."""
        line, col, value = this
        kind = self.KINDS.get(type(value))
        function, read = self._read_of(entry, param) if "." in param else (entry, param)
        if kind is None or not recompiles(kind[1]) or function is None or not self.reads(function, read) or \
                (kind[1] in SYMBOLIC and self.compiled_dynamic(callee)):
            return False
        other = next(((ln, c, v) for ln, c, v in earlier if v != value or type(v) is not type(value)), None)
        if other is None:
            return False
        other_line, other_col, other_value = other
        also = [(other_line, other_col, f"`{param}={other_value!r}` is passed here")]
        if (line, col) != self.ctx.position(node)[:2]:      # passed through the calling function's parameter
            also.insert(0, (line, col, f"`{param}={value!r}` is passed here"))
        self.report_at_guard(node, function, read, f"`{param}` is passed to `{callee}` here", also=also,
                             callee=callee, param=param, value=repr(value), line=line, other=repr(other_value),
                             other_line=other_line, kind=kind[0], effect=effect(kind[1]),
                             held="attribute of an argument" if "." in param else "argument")
        return True


    def _read_of(self, entry: str, value: str) -> Tuple[Optional[str], str]:
        """(function, what it reads) where Dynamo guards `value`, an attribute of a parameter (`op.k`): the
        compiled function's own read of it, or the first read of `self.k` in a method of a class of the file
        that the compiled function calls on the parameter (`op.apply(x)`); (None, value) when neither reads it."""
        if self.reads(entry, value) and self.guard_span(entry, value, at_entry=False) is not None:
            return entry, value
        ix, source = self.ctx.index, self.ctx.source or ""
        info = ix.functions.get(entry) if ix is not None else None
        fn = guard_lines.function_at(source, info.def_line) if info is not None else None
        param, _, attr = value.partition(".")
        for call in sorted((n for n in ast.walk(fn) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)) \
                if fn is not None else ():
            f = call.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == param:
                for q, m in ix.functions.items():
                    if m.cls and q == f"{m.cls}.{f.attr}" and \
                            self.guard_span(q, f"self.{attr}", at_entry=False) is not None:
                        return q, f"self.{attr}"
        return None, value


def _bound_constants(call, params: List[str], fn: ast.AST) -> dict:
    """{parameter: value} for the constants a call (an index `CallSite`) passes by position or keyword, and the
    literal defaults of the parameters it leaves out."""
    out = {}
    for i, text in call.constants.items():
        if i < len(params):
            out[params[i]] = text
    out.update({k: v for k, v in call.kwargs.items() if k in params})
    given = set(out) | {params[i] for i in range(min(len(call.args), len(params)))}
    for p, d in defaults_of(fn.args).items():
        if p not in given and p in params and isinstance(d, ast.Constant):
            out[p] = repr(d.value)
    values = {}
    for p, text in out.items():
        try:
            values[p] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            pass
    return values


def _constant_arguments(ctx, callee: str, entry: str, span=None) -> List[Tuple[int, int, dict]]:
    """An analysis: each call `callee(...)` of the file (line, column, {parameter: constant}), the constants
    bound by position or keyword (members of the file's Enum classes too), and the literal defaults of the
    parameters a call leaves out."""
    enums = enum_classes(ctx.source or "")
    out = []
    tree = guard_lines.parsed(ctx.source or "")
    for line, col, given in call_bindings(ctx, callee, entry, span):
        bound = {p: literal_value(e) for p, (e, _) in given.items()}
        bound.update({p: enum_member(e, enums) for p, (e, _) in given.items() if bound[p] is None})
        for p, (e, _) in given.items():
            if bound[p] is None and tree is not None:
                bound.update({f"{p}.{attr}": v for attr, v in _kept_constants(ctx, tree, e, line).items()})
        out.append((line, col, {p: v for p, v in bound.items() if v is not None}))
    return out


def _kept_constants(ctx, tree: ast.Module, node: Optional[ast.expr], line: int) -> dict:
    """{attribute: constant} for an object of a class of the file built with constants it keeps as attributes:
    `Scale(2.0)` whose `__init__` does `self.k = k`, a dataclass's fields, the defaults of what the call leaves
    out; at the call or through a name the calling function binds once (`op = Scale(2.0)`). Dynamo guards a
    Python number on an object where the compiled code first reads it, as it guards an argument's."""
    if isinstance(node, ast.Name):
        info = ctx.index.function_at(line) if ctx.index is not None else None
        here = guard_lines.function_at(ctx.source or "", info.def_line) if info is not None else None
        bound = [n.value for n in ast.walk(here) if isinstance(n, ast.Assign) and
                 any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)] if here is not None else []
        node = bound[0] if len(bound) == 1 else None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return {}
    cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == node.func.id), None)
    fields = class_fields(cls) if cls is not None else None
    if fields is None:
        return {}
    names = list(fields)
    passed = {names[i]: a for i, a in enumerate(node.args) if i < len(names) and not isinstance(a, ast.Starred)}
    passed.update({k.arg: k.value for k in node.keywords if k.arg in fields})
    if len(passed) < len(node.args) + len(node.keywords):
        return {}               # (`*args`, `**kw`, or what `__init__` does not keep: not known here)
    out = {}
    for param, attr in fields.items():
        value = literal_value(passed.get(param, attr[1]))
        if value is not None and attr[0]:
            out[attr[0]] = value
    return out


def class_fields(cls: ast.ClassDef) -> Optional[dict]:
    """{`__init__` parameter: (the attribute it is kept as, or "", its default)} of a class: a dataclass's
    fields in order, or the parameters of its `__init__` and the `self.<attr> = <parameter>` it does."""
    if any(guard_lines.dotted(d.func if isinstance(d, ast.Call) else d) in ("dataclass", "dataclasses.dataclass")
           for d in cls.decorator_list):
        return {s.target.id: (s.target.id, s.value) for s in cls.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and
                "ClassVar" not in ast.unparse(s.annotation)}
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return None
    params = [a.arg for a in init.args.args[1:]]
    defaults = defaults_of(init.args)
    kept = {n.value.id: n.targets[0].attr for n in ast.walk(init) if isinstance(n, ast.Assign) and
            len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) and
            isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "self" and
            isinstance(n.value, ast.Name) and n.value.id in params}
    return {p: (kept.get(p, ""), defaults.get(p)) for p in params}


def enum_member(node: Optional[ast.expr], enums: frozenset) -> Optional[EnumMember]:
    name = guard_lines.dotted(node) if isinstance(node, ast.Attribute) else None
    return EnumMember(name) if name and name.count(".") == 1 and name.split(".")[0] in enums else None
