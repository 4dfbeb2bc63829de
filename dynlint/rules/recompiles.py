"""DYN5xx: recompile hazards — Python values that change between calls of a compiled function.

Dynamo specialises a graph on the Python values it sees (ints, floats, bools, strings, module flags, grad
mode) and guards on them; a call that fails the guards compiles again. These rules find the call sites and
code shapes that make the guarded values change.
"""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.frames import SUPER_CALL
from dynlint.analysis.guards import effect, module_int, recompiles
from dynlint.analysis.names import COMPILE
from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors import TENSOR, WEAK
from dynlint.core.rule import Example, register
from dynlint.core.walker import children, dotted
from dynlint.rules.common import TorchRule, call_args, source_of

GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode"})        # what turns grad mode off for its block
TRAINING_DEPENDENT = ("Dropout", "BatchNorm", "SyncBatchNorm", "InstanceNorm", "AlphaDropout", "FeatureAlphaDropout",
                      "RReLU")


def _loop_scalar_kind(loop: cst.For, name: str) -> Optional[str]:
    """'int', 'str', 'float', 'bool' when `for <name> in ...` binds Python scalars, else None."""
    target, it = loop.target, loop.iter
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name):
        if it.func.value == "range" and isinstance(target, cst.Name) and target.value == name:
            return "int"
        if it.func.value == "enumerate" and isinstance(target, cst.Tuple) and target.elements and \
                isinstance(target.elements[0].value, cst.Name) and target.elements[0].value.value == name:
            return "int"
        return None
    if isinstance(it, (cst.List, cst.Tuple, cst.Set)) and isinstance(target, cst.Name) and target.value == name \
            and it.elements:
        kinds = set()
        for e in it.elements:
            v = e.value
            if isinstance(v, (cst.SimpleString, cst.ConcatenatedString)):
                kinds.add("str")
            elif isinstance(v, cst.Integer):
                kinds.add("int")
            elif isinstance(v, cst.Float):
                kinds.add("float")
            elif isinstance(v, cst.Name) and v.value in ("True", "False"):
                kinds.add("bool")
            else:
                return None
        return kinds.pop() if len(kinds) == 1 else "value"
    return None


def _constant(node: cst.BaseExpression) -> bool:
    """A literal number, string, bool or None: the same value each time it is evaluated."""
    node = node.expression if isinstance(node, cst.UnaryOperation) else node
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or \
        (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def _float_expr(node: cst.CSTNode) -> bool:
    """Arithmetic with a float literal or a true division: a float."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Float) or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)):
            return True
        if isinstance(n, (cst.BinaryOperation, cst.UnaryOperation)):
            stack.extend(children(n))
    return False


def _names_in(node: cst.CSTNode) -> Set[str]:
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
        stack.extend(children(n))
    return out


@register
class VaryingScalarArgument(TorchRule):
    """Checks for calls of a compiled function inside a loop that pass the loop variable: a float, bool or
    string that changes every iteration (an int becomes dynamic with the sizes: not reported); and a sampling
    loop that hands the compiled function back what it returned with grad mode on (`x = step(model, x)`):
    `x` requires grad from the second call on."""
    code = "DYN501"
    name = "varying-scalar-argument"
    message = "compiled `{callee}` gets the loop variable `{var}` ({kind}): {effect}"
    fix = "Pass varying numbers as tensors (`torch.tensor(step)`), or mark them dynamic; map strings to a small fixed set of modes or to separate compiled functions"
    recompiles = True
    scope = "site"
    why = """
        Dynamo guards on the value of every Python scalar argument (`step == 3`, `mode == 'train'`). A new
        int or float recompiles once, after which Dynamo makes it dynamic (a SymInt/SymFloat); a new bool
        compiles one graph per value; a new string recompiles on every value until `recompile_limit` (8)
        is hit, after which the function silently runs eagerly. An int loop variable is not reported: it
        recompiles once and becomes dynamic, as the sizes of a first new input do (docs/guards.md).
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
    ]
    VALID = [Example("""
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
            for factor in range(4):
                x = scale(x, factor)        # an int: one recompile, then a dynamic int
            return x
    """), Example("""
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
             "None or tensor": "None or tensor argument", "dtype": "dtype argument", "dict": "dict argument",
             "tuple": "tuple argument"}

    def _int_use(self, callee: str, call: cst.Call, arg: cst.Arg) -> str:
        """How `callee` (a function of this file) uses the int parameter that `arg` binds: "int argument in
        range" (a `range(...)` bound), "int argument in condition" (an `if` / `while` test reads it) or "int
        argument"."""
        ix = self.ctx.index
        info = ix.functions.get(callee) if ix is not None else None
        if info is None:
            return "int argument"
        if arg.keyword is not None:
            param = arg.keyword.value
        else:
            i = [a for a in call.args if a.keyword is None].index(arg)
            param = info.params[i] if i < len(info.params) else None
        if param is None:
            return "int argument"
        text = "\n".join((self.ctx.source or "").splitlines()[info.def_line - 1:info.end])
        name = re.escape(param)
        if re.search(rf"\brange\((\s*[^()]*,)?\s*{name}\s*[,)]", text):
            return "int argument in range"
        compared = rf"(\b{name}\s*(<|>|==|!=)|(<|>|==|!=)=?\s*{name}\b)"
        if re.search(rf"^\s*(el)?(if|while)\b[^\n#]*{compared}", text, re.M):
            return "int argument in condition"
        return "int argument"

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in self.compiled_names():
            return
        loops = [b for b in self.ctx.blocks if isinstance(b, cst.For)]
        if loops and self._comes_back_with_grad(node):
            return
        for arg in node.args:
            value = arg.value
            if arg.star or isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
                continue
            if self.tensors.kind(value) == TENSOR:
                if self._tensor_argument(node.func.value, value, loops):
                    return
                continue
            found = varying(self.ctx, value, loops)
            if found is None:
                continue
            var, var_kind = found
            kind = _value_kind(value, var_kind)
            if kind is None:
                continue            # built from the loop variable in a way not known here (`batches[i]`)
            guard = self.GUARD.get(kind)
            if guard == "int argument":
                guard = self._int_use(node.func.value, node, arg)
            if guard and not recompiles(guard):
                return          # an int: one recompile, then dynamic with the sizes
            self.report(value, callee=node.func.value, var=var, kind=kind,
                        effect=effect(guard) if guard else "new values recompile")
            return

    TENSOR_KEYWORDS = {("dtype", "dtype"): "tensor dtype argument", ("requires_grad", "bool"): "tensor requires_grad argument"}

    FACTORY = re.compile(r"torch\.(randn|rand|zeros|ones|empty|full|normal|randint)(_like)?\(")

    def _comes_back_with_grad(self, node: cst.Call) -> bool:
        """`x = step(model, x, t)` in a loop with grad mode on: the compiled function runs a module it is handed
        (`model(...)`), so what it returns requires grad, and the loop hands that back as `x`. The first call
        saw `x` made by a torch factory (no grad), the second sees `requires_grad=True`: Dynamo guards on it
        and compiles again, once (`tensor 'x' requires_grad mismatch`)."""
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if not (isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1 and
                isinstance(parent.targets[0].target, cst.Name)):
            return False
        var = parent.targets[0].target.value
        arg = next((a for a in node.args if isinstance(a.value, cst.Name) and a.value.value == var and not a.star), None)
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        ix = self.ctx.index
        info = ix.functions.get(node.func.value) if ix is not None else None
        if arg is None or fn is None or info is None:
            return False
        no_grad = [d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator for d in fn.decorators]
        no_grad += [i.item.func if isinstance(i.item, cst.Call) else i.item for b in self.ctx.blocks
                    if isinstance(b, cst.With) for i in b.items]
        if any(self.ctx.qualify(n) in GRAD_OFF | {"torch.set_grad_enabled"} for n in no_grad):
            return False
        lines = (self.ctx.source or "").splitlines()
        callee = "\n".join(lines[info.start - 1:info.end])
        if "no_grad" in callee or "inference_mode" in callee or "set_grad_enabled" in callee or not any(
                re.search(rf"\b{re.escape(p)}\(", callee) for p in info.params if p not in ("self", "cls")):
            return False
        call_line = self.ctx.position(node)[0]
        start = self.ctx.position(fn)[0]
        made = re.compile(rf"^\s*{re.escape(var)}\s*=\s*(.*)$")
        first = [m.group(1) for ln in lines[start:call_line - 1] for m in [made.match(ln)] if m]
        if not first or not self.FACTORY.match(first[0]) or "requires_grad" in first[0]:
            return False
        self.report(arg.value, message=f"compiled `{node.func.value}` gets back `{var}`, which it returns requiring "
                                       f"grad (grad mode is on and it runs the module it is handed): the second "
                                       f"call sees `requires_grad=True` where the first saw False, so "
                                       f"{effect('tensor requires_grad argument')}")
        return True

    def _tensor_argument(self, callee: str, value: cst.BaseExpression, loops) -> bool:
        """A tensor made for the call with a `dtype=` or `requires_grad=` built from the loop variable
        (`torch.ones(3, dtype=(torch.float32, torch.float64)[i % 2])`): Dynamo guards on both."""
        for a in value.args if isinstance(value, cst.Call) else ():
            found = varying(self.ctx, a.value, loops) if a.keyword is not None else None
            guard = self.TENSOR_KEYWORDS.get((a.keyword.value, _value_kind(a.value, found[1]))) if found else None
            if guard:
                self.report(a.value, callee=callee, var=found[0], kind=f"the `{a.keyword.value}` of a tensor argument",
                            effect=effect(guard))
                return True
        return False


def varying(ctx, value: cst.BaseExpression, loops) -> Optional[Tuple[str, str]]:
    """(name, kind of its values) of a name in `value` that changes between calls: the variable of an
    enclosing loop (`loops`: the `for` statements around it), or a parameter of the enclosing function that a
    loop of this file passes its loop variable to (`for step in range(n): train_step(step)`)."""
    names = {value.value} if isinstance(value, cst.Name) else _names_in(value)
    for var in sorted(names):
        for loop in reversed(loops):
            kind = _loop_scalar_kind(loop, var)
            if kind:
                return var, kind
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    ix = ctx.index
    if fn is None or ix is None or len(ctx.functions) > 1 or ctx.class_name:
        return None
    params = [p.name.value for p in fn.params.params]
    lines = (ctx.source or "").splitlines()
    calls = list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]
    for var in sorted(names & set(params)):
        i = params.index(var)
        for c in calls:
            if c.kind == "name" and c.target == fn.name.value and i < len(c.args) and c.args[i]:
                kind = _caller_loop_kind(lines, c.line, c.args[i])
                if kind:
                    return var, kind
    return None


def _headers_around(lines: List[str], line: int, first: int = 1):
    """The lines that open the blocks around line `line` (found by indentation), innermost first, stripped;
    none above line `first`."""
    if not 0 < line <= len(lines):
        return
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for text in reversed(lines[max(first, 1) - 1:line - 1]):
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#") or len(text) - len(stripped) >= indent:
            continue
        indent = len(text) - len(stripped)
        yield stripped
        if indent == 0:
            return


def _caller_loop_kind(lines: List[str], line: int, name: str) -> Optional[str]:
    """The kind of values `name` takes at line `line` when it is the variable of the `for` loop around that
    line (found by indentation; its header parsed and judged as `_loop_scalar_kind` judges any loop)."""
    for stripped in _headers_around(lines, line):
        if stripped.startswith("for ") and stripped.rstrip().endswith(":"):
            try:
                loop = cst.parse_statement(stripped.rstrip() + " pass\n")
            except cst.ParserSyntaxError:
                return None           # a header over several lines: not known here
            return _loop_scalar_kind(loop, name) if isinstance(loop, cst.For) else None
    return None


def _dict_keys(node: cst.BaseExpression) -> Optional[frozenset]:
    """The literal keys of a dict display (`{"clip": 1.0}`); None for anything else."""
    if not isinstance(node, cst.Dict) or not all(
            isinstance(e, cst.DictElement) and isinstance(e.key, (cst.SimpleString, cst.Integer)) for e in node.elements):
        return None
    return frozenset(e.key.value for e in node.elements)


def _value_kind(value: cst.BaseExpression, var_kind: str) -> Optional[str]:
    """The kind of an argument built from a varying name of kind `var_kind`; None when not known."""
    if isinstance(value, cst.Name):
        return var_kind
    if isinstance(value, cst.Dict) and all(isinstance(e, cst.DictElement) for e in value.elements):
        return "dict" if all(_value_kind(e.value, var_kind) in ("int", "float", None) for e in value.elements) \
            and any(_value_kind(e.value, var_kind) for e in value.elements) else None
    if isinstance(value, cst.Tuple):
        kinds = [_value_kind(e.value, var_kind) for e in value.elements]
        return "tuple" if any(kinds) and all(k in ("int", "float", None) for k in kinds) else None
    if isinstance(value, (cst.Comparison, cst.BooleanOperation)) or \
            (isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not)):
        return "bool"
    if isinstance(value, cst.IfExp) and any(isinstance(b, cst.Name) and b.value == "None"
                                                   for b in (value.body, value.orelse)):
        return "None or tensor"
    if isinstance(value, cst.IfExp) and _dict_keys(value.body) is not None and \
            _dict_keys(value.orelse) not in (None, _dict_keys(value.body)):
        return "dict"             # `{"clip": 1.0} if i % 2 else {}`: its key set changes
    if isinstance(value, cst.Subscript) and isinstance(value.value, (cst.Tuple, cst.List)):
        items = [e.value for e in value.value.elements]
        if items and all(isinstance(e, cst.SimpleString) for e in items):
            return "str"
        if items and all(isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == "torch"
                         for e in items):
            return "dtype"
        return None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "bool":
        return "bool"
    if _float_expr(value):
        return "float"            # `step * 0.5`: a float made of the int
    if _has_string(value):
        return "str"
    return var_kind if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)) else None


def _has_string(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.SimpleString, cst.FormattedString)):
            return True
        if isinstance(n, (cst.BinaryOperation, cst.UnaryOperation)):
            stack.extend(children(n))
    return False


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
        params = _parameters(fn) - {"self", "cls"}
        for arg in call_args(node)[0]:
            if isinstance(arg, cst.Name) and arg.value in params and self.tensors.kind(arg) != TENSOR:
                self.report(node, var=arg.value)
                return


def _is_compile_call(rule: TorchRule, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and (rule.call_name(node) or "") in COMPILE


class _SiteBookkeeping(TorchRule):
    """Helpers for site rules that follow names through one top-level statement."""
    scope = "site"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._assigned: List[Tuple[str, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        # seen in source order, before the uses that ask about them
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                self._assigned.append((t.target.value, node.value))

    def _assignments(self) -> List[Tuple[str, cst.BaseExpression]]:
        return self._assigned

    def compiled_here(self) -> Set[str]:
        """Compiled names, plus the modules handed to torch.compile in this statement (`cm =
        torch.compile(model)`: both `cm` and `model` are the compiled module)."""
        names = set(self.compiled_names())
        for target, value in self._assignments():
            if _is_compile_call(self, value):
                names.add(target)
                if value.args and isinstance(value.args[0].value, cst.Name):
                    names.add(value.args[0].value.value)
        return names

    def module_classes(self, name: str):
        """Project classes a local/module name was built from (following `torch.compile(...)`)."""
        project, ix = self.ctx.project, self.ctx.index
        if not project or not ix:
            return []
        ctors = list(ix.module_instances.get(name, []))
        for fn in ix.functions.values():
            ctors += fn.instances.get(name, [])
        for target, value in self._assignments():
            if target == name and _is_compile_call(self, value) and value.args:
                inner = value.args[0].value
                if isinstance(inner, cst.Name) and inner.value != name:
                    ctors += [c for c in self.module_classes_ctors(inner.value)]
                elif isinstance(inner, cst.Call):
                    ctors.append(self.ctx.qualify(inner.func) or "")
        out = []
        for c in ctors:
            if not c or c.split(".")[-1][:1].islower():
                continue
            r = project.resolve(ix, c)
            if r and r[0] == "class":
                out.append(r[1])
        return out

    def module_classes_ctors(self, name: str) -> List[str]:
        ix = self.ctx.index
        ctors = list(ix.module_instances.get(name, []))
        for fn in ix.functions.values():
            ctors += fn.instances.get(name, [])
        for target, value in self._assignments():
            if target == name and isinstance(value, cst.Call):
                ctors.append(self.ctx.qualify(value.func) or "")
        return ctors


@register
class TrainEvalToggleOnCompiledModel(_SiteBookkeeping):
    """Checks for `.train()` / `.eval()` on a compiled model whose behaviour depends on the mode (it holds
    dropout or batch-norm layers)."""
    code = "DYN503"
    name = "train-eval-toggle-on-compiled-model"
    message = "`{call}` flips `training` on a compiled model with {layer}: the next call recompiles for the new mode"
    fix = "Expected once per mode (both graphs stay cached); to avoid it, compile separate train and eval wrappers or evaluate without compiling"
    recompiles = True
    severity = "note"
    why = """
        Dropout and batch norm read `self.training`, so Dynamo guards on it (`self._modules['drop'].training
        == True`). After `model.eval()` the guard fails and the model recompiles; after `model.train()` the
        first graph is found again. One extra compile per mode — worth knowing when a short evaluation pass
        suddenly takes as long as a compile.
    """
    INVALID = [Example("""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)
                self.drop = torch.nn.Dropout(0.1)

            def forward(self, x):
                return self.drop(self.proj(x))

        def fit(x):
            model = torch.compile(Net())
            model.train()
            loss = model(x).sum()
            model.eval()
            return loss, model(x)
    """, "fit(torch.ones(2, 4))")]
    VALID = [Example("""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)

            def forward(self, x):
                return self.proj(x).relu()

        def fit(x):
            model = torch.compile(Net())
            model.train()
            loss = model(x).sum()
            model.eval()
            return loss, model(x)
    """, "fit(torch.ones(2, 4))")]

    def _training_layer(self, name: str) -> Optional[str]:
        """The first training-dependent layer the model holds; "" when its class is not known here (a
        parameter, a library model: most models hold dropout or batch norm); None when it holds none."""
        project = self.ctx.project
        seen = set()
        stack = list(self.module_classes(name))
        if not stack:
            return ""
        while stack:
            path, info = stack.pop()
            if (path, info.name) in seen:
                continue
            seen.add((path, info.name))
            ix = project.by_path[path]
            for _attr, ctors in info.attrs.items():
                for c in ctors:
                    q = ix.qualify(c)
                    last = q.rsplit(".", 1)[-1]
                    if q.startswith("torch.nn") and last.startswith(TRAINING_DEPENDENT):
                        return f"`{last}`"
                    r = project.resolve(ix, c)
                    if r and r[0] == "class":
                        stack.append(r[1])
            for p, base in project.bases(path, info.name):
                cinfo = project.by_path[p].classes.get(base)
                if cinfo:
                    stack.append((p, cinfo))
        return None

    def _handed_to_compile(self, line: int) -> Set[str]:
        """The names handed to `torch.compile` before `line`, at module level or in this function (`cm =
        torch.compile(model)`: a later `model.eval()` flips the mode of the module `cm` runs; one before it
        only picks the mode the first compile sees)."""
        ix = self.ctx.index
        if ix is None:
            return set()
        fn = ix.functions.get(self.ctx.qualname)
        calls = [c for c in ix.module_calls if fn is not None or c.line < line] + \
            [c for c in (fn.calls if fn else []) if c.line < line]
        return {c.args[0] for c in calls if c.kind == "name" and c.args and c.args[0].isidentifier() and
                ix.qualify(c.target) in COMPILE}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("train", "eval")
                and isinstance(func.value, cst.Name)):
            return
        name = func.value.value
        if name not in self.compiled_here() | self._handed_to_compile(self.ctx.position(node)[0]):
            return
        layer = self._training_layer(name)
        if layer is not None:
            self.report(node, call=source_of(node), layer=layer or "dropout or batch norm (if it holds any)")


class _ModeAroundCompiledCall(_SiteBookkeeping):
    """Calls of a compiled callable under a global mode that Dynamo guards on (grad mode, autocast): reported
    where one call site's mode changes between calls, else at the first call in the mode that is not the
    default when others run in the default."""
    DEFAULT = "on"
    NOT_DEFAULT = "off"

    def mode_of(self, call: cst.Call) -> Optional[str]:
        """"on", "off" or "varies" for a `with` item that sets the mode; None for one that does not."""
        raise NotImplementedError

    def flag_mode(self, flag: cst.BaseExpression) -> Optional[str]:
        """The mode a flag argument sets: "on", "off", "varies" (built from a loop variable, or from a parameter
        a loop passes one to), or "unknown" (another expression: a setting, not known to change)."""
        literal = _literal_bool(flag)
        if literal is not None:
            return "on" if literal else "off"
        loops = [b for b in self.ctx.blocks if isinstance(b, cst.For)]
        return "varies" if varying(self.ctx, flag, loops) else "unknown"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._calls: List[Tuple[cst.Call, str, str, str]] = []      # (call, compiled name, mode, the `with`)

    def _mode(self) -> Tuple[str, str]:
        for block in reversed(self.ctx.blocks):         # the innermost `with` that sets the mode
            for item in block.items if isinstance(block, cst.With) else ():
                mode = self.mode_of(item.item) if isinstance(item.item, cst.Call) else None
                if mode is not None:
                    return mode, source_of(item.item)
        return self.DEFAULT, ""

    def visit_Call(self, node: cst.Call) -> None:
        compiled = self.compiled_here()
        if isinstance(node.func, cst.Name) and node.func.value in compiled:
            self._calls.append((node, node.func.value, *self._mode()))
            return
        # a compiled name handed to a function of this file that calls it (`evaluate(cmodel, loader)`, its
        # `model(x)` under `@torch.no_grad()`): the mode of those calls, there
        callee = node.func.value if isinstance(node.func, cst.Name) else None
        info = self.ctx.index.functions.get(callee) if callee and self.ctx.index is not None else None
        if info is None or info.cls:
            return
        outer, where = self._mode()
        for i, arg in enumerate(node.args):
            if not (isinstance(arg.value, cst.Name) and arg.value.value in compiled) or arg.star:
                continue
            param = arg.keyword.value if arg.keyword is not None else \
                (info.params[i] if i < len(info.params) else None)
            modes = self.modes_inside(info, param) if param else set()
            if len(modes) == 1:
                mode, inner = next(iter(modes))
                self._calls.append((node, arg.value.value, mode if inner else outer,
                                    f"{inner} in `{callee}`" if inner else where))

    def modes_inside(self, info, param: str) -> Set[Tuple[str, str]]:
        """The modes (mode, what sets it, or "" for none) that the calls `param(...)` inside the function run
        under: its decorators, or a `with` around the call's line (found by indentation)."""
        lines = (self.ctx.source or "").splitlines()
        outer = next(((m, d) for d in info.decorators for m in [self.mode_of_text(d)] if m), None)
        out = set()
        for c in info.calls:
            if c.kind != "name" or c.target != param:
                continue
            found = outer
            for stripped in _headers_around(lines, c.line, info.def_line + 1):
                m = re.match(r"(?:async\s+)?with\s+([\w.]+\(.*?\))", stripped)
                mode = self.mode_of_text(m.group(1)) if m else None
                if mode:
                    found = (mode, m.group(1))
                    break
            out.add(found or (self.DEFAULT, ""))
        return out

    def mode_of_text(self, text: str) -> Optional[str]:
        """The mode a decorator or `with` item, as written (`torch.no_grad()`), sets; None for another."""
        return None

    def leave_Module(self, node: cst.Module) -> None:
        by_name: dict = {}
        for call, name, mode, where in self._calls:
            by_name.setdefault(name, []).append((call, mode, where))
        for name, entries in by_name.items():
            varies = [(call, where) for call, mode, where in entries if mode == "varies"]
            if varies:
                call, where = varies[0]
                self.report(call, callee=name, where=f"here under `{where}`, whose mode changes between calls")
            elif {mode for _, mode, _ in entries} - {"unknown"} == {"on", "off"}:
                call, where = next((call, where) for call, mode, where in entries if mode == self.NOT_DEFAULT)
                through = f" (`{where.split(' in `')[1][:-1]}` calls it under `{where.split(' in `')[0]}`)" \
                    if " in `" in where else ""
                self.report(call, callee=name, where=self.BOTH + through)


def _literal_bool(node: Optional[cst.BaseExpression]) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


@register
class GradModeToggleAroundCompiledCall(_ModeAroundCompiledCall):
    """Checks for a compiled callable called both under `torch.no_grad()` / `torch.inference_mode()` and
    with gradients enabled, or under `torch.set_grad_enabled(flag)` with a flag that changes; also when it is
    handed to functions of the file that call it (`train_epoch(compiled, ...)` with grad,
    `evaluate(compiled, ...)` under `@torch.no_grad()`), reported at the hand-off."""
    code = "DYN504"
    name = "grad-mode-toggle-around-compiled-call"
    message = "compiled `{callee}` is called {where}: each grad mode compiles its own graph"
    BOTH = "here with grad mode off and elsewhere with it on"
    fix = "Expected once per mode (both graphs stay cached); for an evaluation-only path, compile a separate wrapper or keep one grad mode"
    recompiles = True
    severity = "note"
    why = """
        Grad mode is part of Dynamo's global-state guard (`GLOBAL_STATE changed: grad_mode`): a graph traced
        with gradients on is not reused under `torch.no_grad()`, so the first call in the other mode
        recompiles. Mixing the two in a training loop with periodic evaluation costs one extra compile
        (docs/guards.md, "grad mode").
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def score(x):
            return (x * 2).sum()

        def train_then_eval(x):
            loss = score(x)
            with torch.no_grad():
                metric = score(x)
            return loss, metric
    """, "train_then_eval(torch.ones(3))"), Example("""
        import torch

        @torch.compile
        def score(x):
            return (x * 2).sum()

        def run(x, steps):
            for step in range(steps):
                with torch.set_grad_enabled(step % 2 == 0):
                    score(x)
    """, "run(torch.ones(3, requires_grad=True), 2)"), Example("""
        import torch
        from torch import nn

        def train_epoch(model, batches, opt):
            for x in batches:
                model(x).sum().backward()
                opt.step()

        @torch.no_grad()
        def evaluate(model, batches):
            return [model(x).sum() for x in batches]

        def fit(model, batches):
            compiled = torch.compile(model)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(2):
                train_epoch(compiled, batches, opt)
                evaluate(compiled, batches)
    """, "fit(nn.Linear(4, 2), [torch.ones(3, 4)])")]
    VALID = [Example("""
        import torch

        @torch.compile
        def score(x):
            return (x * 2).sum()

        def evaluate(x):
            with torch.no_grad():
                return score(x), score(x + 1)
    """, "evaluate(torch.ones(3))"), Example("""
        import torch
        from torch import nn

        @torch.no_grad()
        def evaluate(model, batches):
            return [model(x).sum() for x in batches]

        def predict(model, x):
            with torch.no_grad():
                return model(x).argmax(-1)

        def serve(model, batches):
            compiled = torch.compile(model)
            for epoch in range(2):
                evaluate(compiled, batches)       # both under no_grad: one graph
                predict(compiled, batches[0])
    """, "serve(nn.Linear(4, 2), [torch.ones(3, 4)])")]

    def mode_of_text(self, text: str) -> Optional[str]:
        name = text.split("(", 1)[0]
        q = self.ctx.index.qualify(name) if self.ctx.index is not None else name
        return "off" if q in GRAD_OFF and text.endswith(")") else \
            "on" if q == "torch.enable_grad" else None

    def mode_of(self, call: cst.Call) -> Optional[str]:
        q = self.call_name(call) or ""
        if q in GRAD_OFF:
            return "off"
        if q == "torch.enable_grad":
            return "on"
        if q == "torch.set_grad_enabled" and call.args:
            return self.flag_mode(call.args[0].value)
        return None


AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"})


@register
class AutocastToggleAroundCompiledCall(_ModeAroundCompiledCall):
    """Checks for a compiled callable called both inside and outside `torch.autocast(...)`, or under
    `torch.autocast(..., enabled=flag)` with a flag that changes."""
    code = "DYN515"
    name = "autocast-toggle-around-compiled-call"
    message = "compiled `{callee}` is called {where}: each autocast state compiles its own graph"
    BOTH = "here under autocast and elsewhere without it"
    DEFAULT = "off"
    NOT_DEFAULT = "on"
    fix = ("Expected once per state (both graphs stay cached); to avoid it, call the compiled function under one "
           "autocast state, or move `torch.autocast` inside it")
    recompiles = True
    severity = "note"
    why = """
        Autocast's state (enabled, its dtype) is part of Dynamo's global-state guard: a graph traced outside
        `torch.autocast` is not reused inside it, so the first call in the other state recompiles. Both
        graphs stay cached: one extra compile (docs/guards.md, "autocast").
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def project(x, w):
            return x @ w

        def run(x, w, steps):
            for step in range(steps):
                with torch.autocast("cpu", enabled=step % 2 == 1):
                    project(x, w)
    """, "run(torch.ones(2, 3), torch.ones(3, 3), 2)")]
    VALID = [Example("""
        import torch

        @torch.compile
        def project(x, w):
            return x @ w

        def run(x, w, steps):
            for step in range(steps):
                with torch.autocast("cpu"):
                    project(x, w)
    """, "run(torch.ones(2, 3), torch.ones(3, 3), 2)")]

    def mode_of(self, call: cst.Call) -> Optional[str]:
        if (self.call_name(call) or "") not in AUTOCAST:
            return None
        enabled = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "enabled"), None)
        return "on" if enabled is None else self.flag_mode(enabled)


def _call_shape(node: cst.Call) -> Tuple[int, Tuple[str, ...], Tuple[int, ...]]:
    """(positional count, keyword names, positions/keywords passed a literal None)."""
    pos = [a for a in node.args if a.keyword is None and not a.star]
    kws = tuple(sorted(a.keyword.value for a in node.args if a.keyword is not None))
    nones = tuple(i for i, a in enumerate(node.args) if isinstance(a.value, cst.Name) and a.value.value == "None")
    return len(pos), kws, nones


@register
class ArgumentSetChangesBetweenCalls(_SiteBookkeeping):
    """Checks for a compiled callable called with a different set of arguments at different call sites
    (an optional argument passed here, left out or `None` there)."""
    code = "DYN505"
    name = "argument-set-changes-between-calls"
    message = "compiled `{callee}` is called with other arguments than at line {line} ({diff}): this call recompiles"
    fix = "Call the compiled function the same way everywhere: pass optional tensors always (an all-ones mask instead of `None`), or compile one wrapper per calling convention"
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on the structure of the arguments: which ones are tensors and which are `None` or
        defaults (`expected type of 'mask' to be a tensor type, but found NoneType`). A call that leaves out
        an optional tensor, or passes `None` where another call passes a tensor, fails those guards and
        compiles a second graph.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def masked_mean(x, mask=None):
            if mask is not None:
                x = x * mask
            return x.mean()

        def evaluate(x, mask):
            full = masked_mean(x, mask)
            plain = masked_mean(x)
            return full, plain
    """, "evaluate(torch.ones(4), torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def masked_mean(x, mask=None):
            if mask is not None:
                x = x * mask
            return x.mean()

        def evaluate(x, mask):
            full = masked_mean(x, mask)
            plain = masked_mean(x, torch.ones_like(x))
            return full, plain
    """, "evaluate(torch.ones(4), torch.ones(4))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._seen = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in self.compiled_here():
            return
        if any(a.star for a in node.args):
            return
        shape = _call_shape(node)
        first = self._seen.setdefault(node.func.value, (node, shape))
        if first[1] != shape:
            line = self.ctx.position(first[0])[0]
            diff = self._describe(first[1], shape)
            self.report(node, callee=node.func.value, line=line, diff=diff)

    @staticmethod
    def _describe(a, b) -> str:
        if a[0] != b[0]:
            return f"{b[0]} positional instead of {a[0]}"
        if a[1] != b[1]:
            return f"keywords {list(b[1]) or 'none'} instead of {list(a[1]) or 'none'}"
        return "`None` in other places"


@register
class ModuleAttributeSetBetweenCalls(_SiteBookkeeping):
    """Checks for a training loop (or any repeated code) that changes an int, float or bool attribute of a
    compiled module whose `forward` reads it: `model.step = step`, `model.global_step += 1`, or a call of a method of the
    module that does (`model.advance()`, a scheduler's `set_step(i)`)."""
    code = "DYN506"
    name = "module-attribute-set-between-calls"
    message = ("`{expr}` changes `{attr}`{how}, {what} attribute that the compiled `{cls}.forward` reads: "
               "Dynamo guards on its value, so {effect}")
    fix = ("Pass the value to `forward` as an argument (an int argument becomes dynamic after one recompile), or "
           "keep it in a tensor buffer updated in place (`model.step.fill_(step)`)")
    recompiles = True
    why = """
        Integer attributes of an `nn.Module` are static to Dynamo: the graph is specialised on their value
        and guarded (`self.step == 3`). Changing one between calls (a warm-up schedule's step counter set by
        the training loop) fails that guard on every new value, so the model recompiles each step until
        `recompile_limit` (8) makes it run eagerly, silently. The same int passed as an argument recompiles
        once and then becomes dynamic; a tensor buffer is a graph input and never recompiles. A float
        attribute recompiles once and is then a graph input, a bool compiles one graph per value (both
        reported, with how often). An attribute that `forward` never reads is not guarded (docs/guards.md).
    """
    INVALID = [Example("""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)
                self.step = 0

            def forward(self, x):
                warmup = min(1.0, (self.step + 1) / 100)
                return self.proj(x) * warmup

        def fit(x):
            model = torch.compile(Net())
            for step in range(10):
                model.step = step
                model(x).sum().backward()
    """, "fit(torch.ones(2, 4))")]
    VALID = [Example("""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(4, 4)
                self.step = 0

            def forward(self, x):
                return self.proj(x) * 2

        def fit(x):
            model = torch.compile(Net())
            for step in range(10):
                model.step = step       # forward never reads it: not guarded
                model(x).sum().backward()
    """, "fit(torch.ones(2, 4))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._loops = 0

    def visit_For(self, node) -> None:
        self._loops += 1

    def leave_For(self, node) -> None:
        self._loops -= 1

    visit_While, leave_While = visit_For, leave_For

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        # a new value each time it runs: not a constant, in a loop or in a function (which a loop calls)
        if not _constant(node.value) and (self._loops or any(isinstance(f, cst.FunctionDef)
                                                             for f in self.ctx.functions)):
            for t in node.targets:
                self._check(node, t.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target)

    def visit_Call(self, node: cst.Call) -> None:
        """`model.advance()` in a loop, where `Net.advance` changes an int attribute forward reads."""
        func = node.func
        if not (self._loops or any(isinstance(f, cst.FunctionDef) for f in self.ctx.functions)) or \
                not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) or func.value.value == "self":
            return
        name, method = func.value.value, func.attr.value
        for path, info in self.module_classes(name):
            attrs = info.setters.get(method)
            if attrs and is_module_class(self.ctx.project, path, info.name) and \
                    self._report(node, name, attrs[0], info, f" (in `{info.name}.{method}`)"):
                return

    def _report(self, node, name: str, attr: str, info, how: str) -> bool:
        """Report the change of `name.<attr>` if the guard model says it recompiles."""
        scalar = info.scalars.get(attr)
        kind = {"float": "module float attribute", "bool": "module bool attribute"}.get(
            scalar or "", module_int(self.ctx.source or ""))
        if scalar is None or attr not in info.reads or not recompiles(kind):
            return False
        self.report(node, expr=source_of(node), attr=f"{name}.{attr}", cls=info.name, effect=effect(kind), how=how,
                    what={"int": "an int", "float": "a float", "bool": "a bool"}[scalar])
        return True

    def _check(self, node, target) -> None:
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return
        name, attr = target.value.value, target.attr.value
        if name == "self" or self.tensors.kind(node.value) == TENSOR:
            return
        for path, info in self.module_classes(name):
            if is_module_class(self.ctx.project, path, info.name) and self._report(node, name, attr, info, ""):
                return


def traced_reads(ctx, name: str) -> List[str]:
    """The traced functions of the unit's file whose source reads `name` (`SCALE`, `cfg.scale`)."""
    ix, lines = ctx.index, (ctx.source or "").splitlines()
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])(?!\s*(=(?!=)|[-+*/]=))")
    out = []
    for q in sorted(ctx.regions):
        info = ix.functions.get(q) if ix is not None else None
        if info and any(pattern.search(line) for line in lines[info.def_line:info.end]):
            out.append(q)
    return out


@register
class StateSetBetweenCalls(_SiteBookkeeping):
    """Checks for set-up code that changes, between calls, a global or an attribute of a module-level object
    (a config) that compiled code reads: `global SCALE; SCALE = 0.5 + i`, `cfg.scale = 0.5 + i` before each
    call. Dynamo guards on the value it read, so the next call with a new value compiles again."""
    code = "DYN514"
    name = "state-set-between-calls"
    message = ("`{expr}` changes `{name}`, which the compiled `{func}` reads: Dynamo guards on its value, so "
               "{effect}")
    fix = ("Pass the value to the compiled function as an argument (a float becomes a graph input after one "
           "recompile), or keep it in a tensor updated in place")
    recompiles = True
    severity = "note"
    why = """
        A global or an attribute of a module-level object that compiled code reads is a constant of its
        graph, guarded (`SCALE == 1.5`). Set-up code that assigns a new value before a call (a schedule
        written into a config, a global set by a training loop) fails the guard: a float recompiles once and
        is then a graph input, an int recompiles on every new value until `recompile_limit` (8) (docs/
        guards.md, "global" and "object attribute"). Module attributes are DYN506's; state that the compiled
        code itself changes is DYN305's and DYN306's. Only values whose kind the source shows (float
        arithmetic, an int loop counter) are reported.
    """
    INVALID = [Example("""
        import torch

        SCALE = 1.0


        @torch.compile
        def scaled(x):
            return x * SCALE


        def run(x):
            global SCALE
            for step in range(4):
                SCALE = 0.5 + step
                x = scaled(x)
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch


        class Config:
            scale = 1.0


        cfg = Config()


        @torch.compile
        def scaled(x):
            return x * cfg.scale


        def run(x):
            for step in range(4):
                cfg.scale = 0.5 + step
                x = scaled(x)
            return x
    """, "run(torch.ones(3))")]
    VALID = [Example("""
        import torch


        @torch.compile
        def scaled(x, scale):
            return x * scale


        def run(x):
            for step in range(4):
                x = scaled(x, torch.tensor(0.5 + step))
            return x
    """, "run(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.declared: Set[Tuple[int, str]] = set()    # (id of the function, name) declared `global`

    def visit_Global(self, node: cst.Global) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        for n in node.names:
            self.declared.add((id(fn), n.name.value))

    def _kind(self, node) -> Optional[str]:
        """float, int or None (not known) for what an assignment makes."""
        value = node.value
        if _float_expr(value):
            return "float"
        if isinstance(node, cst.AugAssign) and isinstance(value, cst.Integer):
            return "int"
        return None

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        if len(node.targets) == 1:
            self._check(node, node.targets[0].target)

    def _check(self, node, target) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        kind = self._kind(node)
        if fn is None or kind is None:
            return
        ix = self.ctx.index
        if isinstance(target, cst.Name) and (id(fn), target.value) in self.declared:
            name, what = target.value, f"global {kind}"
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and ix is not None and \
                target.value.value in ix.module_instances and not any(
                    is_module_class(self.ctx.project, p, c.name) for p, c in self.module_classes(target.value.value)):
            name, what = f"{target.value.value}.{target.attr.value}", f"object {kind} attribute set between calls"
        else:
            return
        readers = traced_reads(self.ctx, name)
        if readers and recompiles(what):
            self.report(node, expr=source_of(node), name=name, func=readers[0], effect=effect(what))


@register
class GrowingListArgument(_SiteBookkeeping):
    """Checks for a list that grows between calls and is passed to a compiled function each time: a history
    appended to in the loop that calls it, or a module-level list appended to before each call."""
    code = "DYN507"
    name = "growing-list-argument"
    message = ("`{name}` grows by `{grow}` before each call of compiled `{callee}`: Dynamo guards on the length "
               "of a list argument, so every new length recompiles")
    fix = ("Pass a tensor (`torch.stack(history)`, or a preallocated buffer filled in place), or a list of a fixed "
           "length (the last k items)")
    recompiles = True
    why = """
        A list argument is unpacked into its items: Dynamo traces one graph input per element and guards on
        the list's length (`len(past) == 3`). A list that grows by one item per call fails that guard every
        time, so each call recompiles until `recompile_limit` (8), after which the function runs eagerly.
        A list created afresh with the same length each call does not recompile (docs/guards.md).
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def smooth(x, past):
            for p in past:
                x = x + 0.1 * p
            return x

        def run(x):
            history = []
            for _ in range(10):
                history.append(x)
                x = smooth(x, history)
            return x
    """, "run(torch.ones(3))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def smooth(x, past):
            for p in past:
                x = x + 0.1 * p
            return x

        def run(x):
            history = []
            for _ in range(10):
                history.append(x)
                x = smooth(x, history[-2:])      # a fixed length once it has two items
            return x
    """)]

    GROW = frozenset({"append", "extend", "insert", "appendleft"})

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._grown = {}            # list name -> (the growing call, the loop it is in or None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in self.GROW and isinstance(func.value, cst.Name):
            loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
            self._grown[func.value.value] = (func.attr.value, loops[-1] if loops else None)
            return
        if not isinstance(func, cst.Name) or func.value not in self.compiled_names():
            return
        for arg in node.args:
            name = arg.value.value if isinstance(arg.value, cst.Name) and not arg.star else None
            if name in self._grown and self._grows_between_calls(name):
                grow, _ = self._grown[name]
                self.report(arg.value, name=name, grow=f"{name}.{grow}()", callee=func.value)
                return

    def _grows_between_calls(self, name: str) -> bool:
        """Bound outside the loop that grows it (and this call is in that loop), or not bound in this function
        at all (a module-level list or a parameter: each call of the function grows it further)."""
        _, loop = self._grown[name]
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if fn is None:
            return loop is not None and loop in self.ctx.blocks
        if not self.tensors.bound_in(fn, name) or name in (p.name.value for p in fn.params.params):
            return True
        return loop is not None and loop in self.ctx.blocks and not _binds(loop, name)


def _binds(loop: cst.CSTNode, name: str) -> bool:
    """`name = ...` somewhere inside `loop` (a list made afresh on each iteration)."""
    stack = [loop]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                             for t in n.targets):
            return True
        stack.extend(children(n))
    return False


@register
class ScalarArgumentDiffersBetweenCallSites(_SiteBookkeeping):
    """Checks for a compiled function that call sites of the file pass different float, string or bool
    constants for the same keyword (`temperature=0.7` here, `temperature=1.0` there; `act="gelu"` and
    `act="relu"`)."""
    code = "DYN508"
    name = "scalar-argument-differs-between-call-sites"
    message = ("compiled `{callee}` gets `{keyword}={value}` here and `{keyword}={other}` at line {line}: a {kind} "
               "argument is guarded on its value, so {effect}")
    fix = ("Pass the value as a tensor (`torch.tensor(0.7)`) when it changes, or compile one function per "
           "setting (`functools.partial` before `torch.compile`)")
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards on the value of a float, string or bool argument (`temperature == 0.7`). Call sites that
        pass different constants make the second one fail the guard and compile again: a float then becomes
        a graph input (one recompile), a string or a bool compiles one graph per value. Ints are not reported:
        they become dynamic with the sizes of a first new input (docs/guards.md).
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def sample(logits, temperature=1.0):
            return torch.softmax(logits / temperature, dim=-1)

        def generate(logits):
            greedy = sample(logits, temperature=0.1)
            creative = sample(logits, temperature=1.3)
            return greedy, creative
    """, "generate(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def sample(logits, temperature=1.0):
            return torch.softmax(logits / temperature, dim=-1)

        def generate(logits):
            greedy = sample(logits, temperature=torch.tensor(0.1))
            creative = sample(logits, temperature=torch.tensor(1.3))
            return greedy, creative
    """, "generate(torch.ones(4))")]

    KINDS = {float: ("float", "float argument"), str: ("string", "str argument"), bool: ("bool", "bool argument")}

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in self.compiled_names():
            return
        line = self.ctx.position(node)[0] if any(a.keyword is not None for a in node.args) else 0
        for arg in node.args:
            if arg.keyword is None or not isinstance(arg.value, (cst.Float, cst.SimpleString, cst.Name)):
                continue
            value = _literal(arg.value)
            kind = self.KINDS.get(type(value))
            if kind is None:
                continue
            for other_line, other in self.ctx.analysis(_constant_keywords, node.func.value, arg.keyword.value):
                if other_line < line and type(other) is type(value) and other != value and \
                        recompiles(kind[1]):
                    self.report(arg, callee=node.func.value, keyword=arg.keyword.value, value=repr(value),
                                other=repr(other), line=other_line, kind=kind[0], effect=effect(kind[1]))
                    return


def _literal(node: cst.BaseExpression):
    if isinstance(node, cst.Name):
        return {"True": True, "False": False}.get(node.value)
    try:
        return ast.literal_eval(node.value)
    except (ValueError, SyntaxError):
        return None


def _constant_keywords(ctx, callee: str, keyword: str) -> List[Tuple[int, object]]:
    """An analysis: the (line, value) of every constant `keyword=` that the file's calls of `callee` pass."""
    ix = ctx.index
    calls = (list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]) if ix is not None else []
    out = []
    for c in calls:
        if c.kind == "name" and c.target == callee and keyword in c.kwargs:
            try:
                out.append((c.line, ast.literal_eval(c.kwargs[keyword])))
            except (ValueError, SyntaxError):
                continue
    return sorted(out)


def _parameters(fn) -> Set[str]:
    """The parameter names of a def (not `*args` / `**kwargs`); none for anything else."""
    if not isinstance(fn, cst.FunctionDef):
        return set()
    ps = fn.params
    return {p.name.value for p in list(ps.params) + list(ps.kwonly_params) + list(ps.posonly_params)}


def _root_attr(node: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(name, attr) of `name.attr`, `name.attr[...]`, `name.attr.get(...)`."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value in ("get", "__getitem__"):
            node = node.func.value
        else:
            break
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return node.value.value, node.attr.value
    return None


@register
class ValueDiffersBetweenFrameEntries(TorchRule):
    """Checks for a value that differs between the entries of a function Dynamo compiles as a frame of its
    own: a function called from compiled code that breaks the graph (itself or in what it calls) is not
    inlined into its caller's graph but compiled on its own, and guarded on what it reads. A layer's
    `forward` entered once per layer then compiles again for every layer whose `self.layer_idx` (an int set
    per instance) differs, once for a flag that differs between layers, for an argument that is None for the
    first layer and a tensor for the rest, or for a flag the frame itself sets on an object every layer
    shares."""
    code = "DYN509"
    name = "value-differs-between-frame-entries"
    message = ("{what} differs between the entries of {func}, which Dynamo compiles as a frame of its own "
               "(the graph break at {why} stops it being inlined into its caller): {effect}")
    fix = ("Remove the graph break (then the function is inlined into its caller's graph, where these values are "
           "constants of one trace); or keep per-layer numbers out of Python (a buffer tensor), and pass the same "
           "kind of value at every call")
    recompiles = True
    scope = "frame"
    why = """
        When traced code calls a function that breaks the graph, Dynamo ends the caller's graph at the call,
        lets the function run and compiles the function's own frame as it starts, guarded on the Python values
        it reads: its arguments and the attributes of `self`. The frame is entered again for the next layer
        (or the next call site); any of those values that differs fails a guard and compiles again. A module's
        int attribute is specialised, so a layer index recompiles for every layer until `recompile_limit` (8),
        after which the remaining layers run eagerly on every call; a flag or a None-versus-tensor argument
        costs one recompile. The cost disappears with the break: an inlined function's values are constants
        of its caller's one trace (docs/guards.md, "frame" rows).
    """
    INVALID = [Example("""
        import torch
        from torch import nn

        class Layer(nn.Module):
            def __init__(self, index):
                super().__init__()
                self.index = index
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                print("layer", self.index)
                return self.proj(x) * self.index

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer(i) for i in range(10)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
    """, "torch.compile(Model())(torch.ones(2, 4))"), Example("""
        import torch
        from torch import nn

        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)

            def forward(self, x, bias=None):
                if bias is None:
                    bias = torch.zeros_like(x)
                print("layer")
                return self.proj(x) + bias

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer() for _ in range(4)])

            def forward(self, x):
                bias = None
                for layer in self.layers:
                    x = layer(x, bias)
                    bias = x
                return x
    """, "torch.compile(Model())(torch.ones(2, 4))"), Example("""
        import torch
        from torch import nn

        class Item:
            def __init__(self):
                self.ready = False
                self.value = None

            def start(self, x):
                self.value = x[:0]
                self.ready = True

            def update(self, x):
                if not self.ready:
                    self.start(x)
                self.value = torch.cat([self.value, x])
                return self.value

        class Cache:
            def __init__(self, items: list[Item]):
                self.items = items

            def update(self, x, index):
                return self.items[index].update(x)

        class Layer(nn.Module):
            def __init__(self, index):
                super().__init__()
                self.index = index
                self.proj = nn.Linear(4, 4)

            def forward(self, x, cache: Cache):
                print("layer")
                return cache.update(self.proj(x), self.index)[-2:]

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer(0) for _ in range(3)])

            def forward(self, x):
                cache = Cache([Item() for _ in self.layers])
                for layer in self.layers:
                    x = layer(x, cache)
                return x
    """, "with torch.no_grad(): torch.compile(Model())(torch.ones(2, 4))")]
    VALID = [Example("""
        import torch
        from torch import nn

        class Layer(nn.Module):
            def __init__(self, index):
                super().__init__()
                self.index = index
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                return self.proj(x) * self.index

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer(i) for i in range(10)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
    """, "torch.compile(Model())(torch.ones(2, 4))")]

    KINDS = {"int": "frame int attribute per instance", "bool": "frame bool attribute per instance",
             "value": "frame value attribute per instance"}

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.done: Set[str] = set()
        # per frame function: its locals read from an argument's attribute ((function, name) -> (argument,
        # attribute)), the `if` tests that read one, the attributes of arguments it sets
        self.locals: dict = {}
        self.tests: list = []
        self.writes: Set[tuple] = set()
        self.given: dict = {}           # (function, local) -> the parameter it tests `is not None`

    def frame(self):
        project = self.ctx.project
        return project.frames.get((self.ctx.path, self.ctx.qualname)) if project is not None else None

    def _why(self, frame) -> str:
        path, line, training = frame.why
        where = f"line {line}" if path == self.ctx.path else f"{path}:{line}"
        return f"{where}, in training" if training else where

    def _func(self, frame, qual: str) -> str:
        """The frame function, as the message names it."""
        return f"`{frame.via}` (this code is inlined into it)" if frame.via else f"`{qual}`"

    def _report(self, node, key: str, what: str, kind: str, frame) -> None:
        if key in self.done:
            return
        self.done.add(key)
        self.report(node, what=what, func=self._func(frame, self.ctx.qualname), why=self._why(frame),
                    effect=effect(kind))

    def visit_Name(self, node: cst.Name) -> None:
        frame = self.frame()
        line = dict(frame.ints).get(node.value) if frame is not None and frame.ints else None
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if line is None or isinstance(parent, (cst.Param, cst.AssignTarget)) or (
                isinstance(parent, cst.Arg) and parent.keyword is node) or (
                isinstance(parent, cst.Attribute) and parent.attr is node):
            return
        self._report(node, node.value, f"`{node.value}` (an int constant that differs between calls, as at line "
                     f"{line})", "frame int argument", frame)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        frame = self.frame()
        if frame is None or not isinstance(node.value, cst.Name) or node.value.value != "self":
            return
        kind = dict(frame.per_instance).get(node.attr.value)
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if kind is None or (isinstance(parent, cst.AssignTarget) and parent.target is node):
            return
        self._report(node, f"self.{node.attr.value}", f"`self.{node.attr.value}` (set per instance by "
                     f"`__init__`'s arguments)", self.KINDS[kind], frame)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        frame = self.frame()
        if frame is None or not isinstance(node.left, cst.Name) or len(node.comparisons) != 1 or \
                not isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)):
            return
        right = node.comparisons[0].comparator
        line = dict(frame.none_or_value).get(node.left.value)
        if line is None or not (isinstance(right, cst.Name) and right.value == "None"):
            return
        self._report(node, node.left.value, f"`{node.left.value}` (None at one entry, called at line {line}, "
                     f"not at another)", "frame None or tensor", frame)

    # ---- a flag the frame sets on an object that every entry shares
    def _params(self) -> Set[str]:
        return _parameters(self.ctx.function) - {"self"}

    def _flags(self, frame) -> bool:
        """Look for flags the frame sets: in a frame entered per layer (in training too: a layer-drop break
        makes every layer of an encoder-decoder a frame, whose cross-attention caches keep such flags)."""
        return frame is not None and frame.repeated

    def visit_Assign(self, node: cst.Assign) -> None:
        frame = self.frame()
        if not self._flags(frame):
            return
        params = self._params()
        for t in node.targets:
            root = _root_attr(t.target)
            if root and root[0] in params:
                self.writes.add((self.ctx.qualname, root))
        root = _root_attr(node.value)
        if root and root[0] in params and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.locals[(self.ctx.qualname, node.targets[0].target.value)] = (root, _per_layer_key(node.value))
        given = _not_none(node.value)
        if given in params and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.given[(self.ctx.qualname, node.targets[0].target.value)] = given

    def visit_If(self, node: cst.If) -> None:
        frame = self.frame()
        if not self._flags(frame):
            return
        if frame.shared and self._lazy_start(node, frame):
            return
        if self._never_given(node.test, frame) or (frame.via and frame.why[0] != self.ctx.path):
            return          # (inlined into another file's frame: which model a user compiles is not known here)
        params = self._params()
        for sub in [node.test, *_names_and_attrs(node.test)]:
            root, keyed = (_root_attr(sub), _per_layer_key(sub)) if not isinstance(sub, cst.Name) else \
                self.locals.get((self.ctx.qualname, sub.value), (None, False))
            if root and root[0] in params:
                self.tests.append((node.test, root, self.ctx.qualname, frame, keyed))
                return

    def _never_given(self, test: cst.BaseExpression, frame) -> bool:
        """A test that holds only when a parameter no project code passes is given (`if is_cross_attention and
        ... and is_updated:`, `is_cross_attention = key_value_states is not None`): the flag it reads is
        set and read only by callers this project does not have (a composite model, a user)."""
        for sub in _names_and_attrs(test) + [c for c in _comparisons(test)]:
            given = self.given.get((self.ctx.qualname, sub.value)) if isinstance(sub, cst.Name) else \
                _not_none(sub) if isinstance(sub, cst.Comparison) else None
            if given and given in frame.unsupplied:
                return True
        return False

    def _lazy_start(self, node: cst.If, frame) -> bool:
        """A method of an object every entry shares that tests a flag of `self` and sets it in the branch
        (`if not self.is_initialized: self.lazy_initialization(...)`): the next entry sees the new value."""
        for sub in [node.test, *_names_and_attrs(node.test)]:
            root = _root_attr(sub)
            if not root or root[0] != "self" or f"{self.ctx.class_name}.{root[1]}" in self.done:
                continue
            where = next(((self.ctx.position(t)[0], source_of(v)) for t, v in _assigned_constants(node.body)
                          if _root_attr(t) == root), None) or \
                next((w for m in _self_calls(node.body) for w in [method_sets(self.ctx, m, root[1])] if w), None)
            if where is None:
                continue
            self.done.add(f"{self.ctx.class_name}.{root[1]}")
            item = frame.shared.endswith("[...]")
            held = f"an item of `{frame.shared[:-5]}`, one per layer" if item else f"`{frame.shared}`"
            self.report(node.test, what=f"`self.{root[1]}` (of {held}, which every entry shares), which this code "
                        f"sets to `{where[1]}` at line {where[0]},", func=self._func(frame, self.ctx.qualname),
                        why=self._why(frame), effect=effect("frame item flag it sets" if item else "frame flag it sets"))
            return True
        return False

    def finish(self, findings) -> None:
        for test, root, qual, frame, keyed in self.tests:
            if (qual, root) in self.writes and f"{qual}:{'.'.join(root)}" not in self.done:
                self.done.add(f"{qual}:{'.'.join(root)}")
                each = " (one entry per layer)" if keyed else ""
                self.ctx.report(self, test, self.format_message(
                    what=f"`{'.'.join(root)}`{each}, which this code sets for the next entry,", func=self._func(frame, qual),
                    why=self._why(frame), effect=effect("frame item flag it sets" if keyed else "frame flag it sets")), ())


def _not_none(node: cst.BaseExpression) -> Optional[str]:
    """The name `node` tests `is not None` (`key_value_states is not None`), else None."""
    if isinstance(node, cst.Comparison) and isinstance(node.left, cst.Name) and len(node.comparisons) == 1:
        op, right = node.comparisons[0].operator, node.comparisons[0].comparator
        if isinstance(op, cst.IsNot) and isinstance(right, cst.Name) and right.value == "None":
            return node.left.value
    return None


def _comparisons(node: cst.BaseExpression) -> List[cst.Comparison]:
    """The comparisons an `and` chain holds (`a is not None and b`)."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
        return _comparisons(node.left) + _comparisons(node.right)
    return [node] if isinstance(node, cst.Comparison) else []


def _per_layer_key(node: cst.BaseExpression) -> bool:
    """`state.flags[self.layer_idx]`, `state.flags.get(self.layer_idx)`: an entry picked by an attribute of
    `self` (one per layer), not one flag for all."""
    if isinstance(node, cst.Subscript):
        keys = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get":
        keys = [a.value for a in node.args[:1]]
    else:
        return False
    return any(isinstance(k, cst.Attribute) and isinstance(k.value, cst.Name) and k.value.value == "self"
               for k in keys)


def _names_and_attrs(node: cst.CSTNode) -> List[cst.BaseExpression]:
    """The names and attribute reads in an expression (not in nested lambdas)."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute, cst.Subscript)) or (
                isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "get"):
            out.append(n)
        if isinstance(n, cst.Lambda):
            continue
        stack.extend(children(n))
    return out


HOST_VALUES = ("DYN201", "DYN202", "DYN203")       # .item(), int(t)/float(t), .tolist(): their breaks


def guarded_read(ctx, node: cst.Name, tensor=None) -> bool:
    """Is this read where the resumed code specialises on the value: an argument of a tensor method or a
    torch function (`x.split(sizes)`, `torch.arange(n)`), a `range()` bound, the test of an `if`/`while`?
    A value returned or handed to another function is guarded where that function uses it (not known
    here); one on the right of `and`/`or` may never be evaluated. `tensor(receiver)`: whether a local whose
    method is called is known to be a tensor (without it, any local's method is taken for a tensor's)."""
    chain = list(ctx.parents) + [node]
    for i in range(len(chain) - 2, -1, -1):
        n, child = chain[i], chain[i + 1]
        if isinstance(n, cst.BooleanOperation) and child is n.right:
            return False
        if isinstance(n, (cst.If, cst.While)):
            return child is n.test
        if isinstance(n, cst.Call) and child is not n.func:
            text = dotted(n.func) or ""
            name = ctx.qualify(n.func) or text
            return name.startswith("torch.") or name == "range" or (    # a method of a local: a tensor's
                isinstance(n.func, cst.Attribute) and name == text and not text.startswith("self.") and
                (tensor is None or tensor(n.func.value)))
        if isinstance(n, (cst.Return, cst.SimpleStatementLine, cst.Lambda, cst.FunctionDef)):
            return False
    return False


@register
class HostValueGuardedAfterBreak(TorchRule):
    """Checks for a Python value taken from a tensor where the graph breaks (`sizes = counts.tolist()`,
    `n = mask.sum().item()`) and then read by the code after it (`x.split(sizes)`, `if n:`): Dynamo
    resumes after the break in a new frame that receives the value as an input and guards on it."""
    code = "DYN510"
    name = "host-value-guarded-after-break"
    message = ("`{name}` comes from the graph break at line {line} and is read by the code Dynamo resumes after "
               "it, which is guarded on its value: {effect}")
    fix = ("Keep the value a tensor (`torch.split` with a tensor of sizes is not possible, but masks, `torch.where` "
           "and `index_select` often are), or mark the values dynamic; fixing the break removes both")
    recompiles = True
    severity = "note"
    why = """
        A `.tolist()`, `.item()` or `int(tensor)` that breaks the graph ends the graph there; Dynamo resumes
        the function after it in a frame of its own whose inputs include the Python values just made. The
        resumed code is specialised on them (split sizes, a loop bound, a condition) and guarded, so the first
        call whose data give other values recompiles; then they become dynamic (docs/guards.md, "values
        after a break"). Routing counts in mixture-of-experts layers change on every batch.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def per_expert(x, route):
            sizes = torch.bincount(route, minlength=4).tolist()
            return [part.sum() for part in x.split(sizes)]
    """, "per_expert(torch.ones(8, 2), torch.tensor([0, 0, 1, 1, 1, 2, 3, 3]))",
        "per_expert(torch.ones(8, 2), torch.tensor([0, 1, 1, 1, 1, 2, 2, 3]))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def per_expert(x, route):
            onehot = torch.nn.functional.one_hot(route, 4).to(x.dtype)
            return onehot.t() @ x
    """, "per_expert(torch.ones(8, 2), torch.tensor([0, 0, 1, 1, 1, 2, 3, 3]))",
        "per_expert(torch.ones(8, 2), torch.tensor([0, 1, 1, 1, 1, 2, 2, 3]))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.made: dict = {}        # (function, name) -> line of `name = <host value>`
        self.read: dict = {}        # (function, name) -> the first later read

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        host = isinstance(value, cst.Call) and (
            (isinstance(value.func, cst.Attribute) and value.func.attr.value in ("tolist", "item")) or
            (isinstance(value.func, cst.Name) and value.func.value in ("int", "float", "bool")))
        if host and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            key = (self.ctx.qualname, node.targets[0].target.value)
            self.made[key] = self.ctx.position(node)[0]
            self.read.pop(key, None)

    def visit_Name(self, node: cst.Name) -> None:
        key = (self.ctx.qualname, node.value)
        if key not in self.made or key in self.read:
            return
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if isinstance(parent, (cst.AssignTarget, cst.Param)) or (isinstance(parent, cst.Attribute) and
                                                                  parent.attr is node):
            return
        if self.ctx.position(node)[0] > self.made[key] and \
                guarded_read(self.ctx, node, lambda recv: self.tensors.kind(recv) in (TENSOR, WEAK)):
            self.read[key] = node

    def finish(self, findings) -> None:
        breaks = {f.line for f in findings if f.code in HOST_VALUES}
        for key, node in self.read.items():
            if self.made[key] in breaks:
                self.ctx.report(self, node, self.format_message(name=key[1], line=self.made[key],
                                                                effect=effect("values after a break")), ())


@register
class HostValueGuardedInResumedCode(TorchRule):
    """Checks for Python values a function makes where the graph breaks and returns (`sizes =
    counts.tolist()`, then `return x, sizes`), read by its caller's code after the call or by what that code
    passes them to: the caller's graph ends at the call, and the code Dynamo resumes after it is guarded on
    the values."""
    code = "DYN511"
    name = "host-value-guarded-in-resumed-code"
    message = ("`{name}` holds the Python values made at the graph break at {where} and returned from there; the "
               "code Dynamo resumes after that call reads them here and is guarded on them: {effect}")
    fix = ("Return the counts as a tensor and keep the code after the call on tensors (masks, `index_select`), or "
           "mark the values dynamic; fixing the break removes both")
    recompiles = True
    severity = "note"
    scope = "frame"
    why = """
        A function that breaks the graph with `.tolist()` (or `.item()`, `int(t)`) ends its caller's graph at
        the call: Dynamo runs the function, then resumes the caller after the call in a frame of its own,
        whose inputs include the values the function returned. Code of that resumed frame, the caller's own
        or a function it calls and Dynamo inlines, is specialised on those values where it reads them (split
        sizes, a loop bound, a condition), so the first call whose data give other values recompiles; then
        they become dynamic (docs/guards.md, "values after a break"). Mixture-of-experts layers that route with
        `expert_size = counts.tolist()` in a gating module and split by it in the experts' module do this on
        every batch.
    """
    INVALID = [Example("""
        import torch


        def route(x):
            counts = (x.argmax(-1)[:, None] == torch.arange(4)).sum(0)
            sizes = counts.tolist()
            return x * 2, sizes


        def per_expert(x, sizes):
            return torch.cat([part.sum(0, keepdim=True) for part in x.split(sizes)])


        @torch.compile
        def moe(x):
            y, sizes = route(x)
            return per_expert(y, sizes)
    """, "moe(torch.eye(4).repeat(2, 1))", "moe(torch.eye(4)[[0, 0, 0, 1, 1, 2, 3, 3]])")]
    VALID = [Example("""
        import torch


        def route(x):
            onehot = (x.argmax(-1)[:, None] == torch.arange(4)).to(x.dtype)
            return x * 2, onehot


        def per_expert(x, onehot):
            return onehot.t() @ x


        @torch.compile
        def moe(x):
            y, onehot = route(x)
            return per_expert(y, onehot)
    """, "moe(torch.eye(4).repeat(2, 1))", "moe(torch.eye(4)[[0, 0, 0, 1, 1, 2, 3, 3]])")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.done: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        project = self.ctx.project
        frame = project.frames.get((self.ctx.path, self.ctx.qualname)) if project is not None else None
        origin = {name: (path, line) for name, path, line in frame.host}.get(node.value) if frame else None
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if origin is None or node.value in self.done or isinstance(parent, (cst.AssignTarget, cst.Param)) or (
                isinstance(parent, cst.Attribute) and parent.attr is node) or \
                not guarded_read(self.ctx, node, lambda recv: self.tensors.kind(recv) in (TENSOR, WEAK)):
            return
        self.done.add(node.value)
        path, line = origin
        self.report(node, name=node.value, where=f"line {line}" if path == self.ctx.path else f"{path}:{line}",
                    effect=effect("values after a break"))


def _assigned_constants(node: cst.CSTNode):
    """`target = <constant>` statements inside a node (not in nested functions): (target, constant)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and n is not node:
            continue
        if isinstance(n, cst.Assign) and _literal_or_none(n.value):
            for t in n.targets:
                yield t.target, n.value
        stack.extend(children(n))


def method_sets(ctx, method: str, attr: str) -> Optional[Tuple[int, str]]:
    """(line, value) where a method of the class being checked (defined in this file) sets `self.<attr>` to a
    constant."""
    ix, cls = ctx.index, ctx.class_name
    info = ix.functions.get(f"{cls}.{method}") if ix is not None and cls else None
    if info is None:
        return None
    assigned = re.compile(rf"\bself\.{re.escape(attr)}\s*=(?!=)\s*(True|False|None|-?\d+)\s*(#.*)?$")
    lines = (ctx.source or "").splitlines()
    for n in range(info.def_line, min(info.end, len(lines)) + 1):
        m = assigned.search(lines[n - 1])
        if m:
            return n, m.group(1)
    return None


def _literal_or_none(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Name) and node.value in ("True", "False", "None")) or \
        isinstance(node, (cst.Integer, cst.SimpleString))


def _self_calls(node: cst.CSTNode) -> List[str]:
    """The methods of `self` called inside a node: `self.lazy_init(x)` gives "lazy_init"."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name) \
                and n.func.value.value == "self":
            out.append(n.func.attr.value)
        stack.extend(children(n))
    return out


@register
class FlagSetForTheNextCall(TorchRule):
    """Checks for a flag of `self` (a module, or an object whose method is compiled) that compiled code tests and
    then sets to a constant (`if not self.is_initialized: ...; self.is_initialized = True`): Dynamo guarded
    the graph on the flag's old value, so the next call compiles again. A flag tested through a property of
    the class (`return self.dt is None`, a two-stage sampler's order) is guarded at the property's line."""
    code = "DYN512"
    name = "flag-set-for-the-next-call"
    message = ("`{flag}` is tested here and set to {value} at line {line} by this compiled code: Dynamo guards on "
               "its value, so the next call of this {owner} compiles again ({effect})")
    fix = ("Set the flag before the first compiled call (initialise the object eagerly), or keep the state in a "
           "tensor")
    recompiles = True
    severity = "note"
    why = """
        Dynamo specialises compiled code on the Python values it tests and guards on them. When that code sets
        the flag it just tested (a lazy initialisation on the first call), the object leaves the call with a
        value the guards reject, and the next call compiles a second graph. Both values then have a graph,
        so it costs one recompile, not one per call (docs/guards.md, "flag set by compiled code"). Flags of
        objects passed in as arguments (a cache's `is_updated`) are not reported: whether the next call passes
        the same object is not known here, and one made afresh for every call does not recompile.
    """
    INVALID = [Example("""
        import torch
        from torch import nn


        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.is_initialized = False

            def initialize(self, x):
                self.scale = float(x.shape[-1]) ** -0.5
                self.is_initialized = True

            def forward(self, x):
                if not self.is_initialized:
                    self.initialize(x)
                return x * self.scale


        model = torch.compile(Scaled())
    """, "model(torch.ones(3))", "model(torch.ones(3))"), Example("""
        import torch


        class Sampler:
            def __init__(self):
                self.started = False

            def step(self, x):
                if not self.started:
                    self.started = True
                    return x * 0
                return x + 1


        sampler = Sampler()
        step = torch.compile(sampler.step)
    """, "step(torch.ones(3))", "step(torch.ones(3))"), Example("""
        import torch


        class TwoOrder:
            def __init__(self):
                self.dt = None

            @property
            def first_order(self):
                return self.dt is None

            def step(self, x):
                if self.first_order:
                    self.dt = x.mean()
                    return x * 2
                out = x + self.dt
                self.dt = None
                return out


        sampler = TwoOrder()
        step = torch.compile(sampler.step)
    """, "step(torch.ones(3))", "step(torch.ones(3))", "step(torch.ones(3))")]
    VALID = [Example("""
        import torch
        from torch import nn


        class Scaled(nn.Module):
            def __init__(self, features):
                super().__init__()
                self.scale = float(features) ** -0.5
                self.is_initialized = True

            def forward(self, x):
                if not self.is_initialized:
                    self.scale = float(x.shape[-1]) ** -0.5
                return x * self.scale


        model = torch.compile(Scaled(3))
    """, "model(torch.ones(3))", "model(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.locals: dict = {}      # (function, local) -> (object, attribute) it was read from
        self.set_before: Set[tuple] = set()     # (function, object, attribute) assigned before a test of it
        self.done: Set[tuple] = set()
        self.constants: dict = {}   # id(function) -> _constants_set; (class, method, attribute) -> _method_sets

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            root = _root_attr(t.target)
            if root:
                self.set_before.add((self.ctx.qualname, root))
        root = _root_attr(node.value)
        if root and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.locals[(self.ctx.qualname, node.targets[0].target.value)] = root

    def _module(self) -> bool:
        cls, ix, project = self.ctx.class_name, self.ctx.index, self.ctx.project
        return bool(cls and ix and project and cls in ix.classes and is_module_class(project, ix.path, cls))

    def _method_sets(self, method: str, attr: str) -> Optional[Tuple[int, str]]:
        """(line, value) where a method of this class sets `self.<attr>` to a constant."""
        key = (self.ctx.class_name, method, attr)
        if key not in self.constants:
            self.constants[key] = self._method_sets_now(method, attr)
        return self.constants[key]

    def _method_sets_now(self, method: str, attr: str) -> Optional[Tuple[int, str]]:
        return method_sets(self.ctx, method, attr)

    def _constants_set(self, fn: cst.CSTNode) -> dict:
        """(object, attribute) -> [(line, constant)] of the `self.<attr> = <constant>` in a function: one walk
        per function, however many tests it has."""
        key = id(fn)
        if key not in self.constants:
            found: dict = {}
            for target, value in _assigned_constants(fn):
                root = _root_attr(target)
                if root and root[0] == "self":
                    found.setdefault(root, []).append((self.ctx.position(target)[0], source_of(value)))
            self.constants[key] = found
        return self.constants[key]

    def visit_If(self, node: cst.If) -> None:
        qual = self.ctx.qualname
        roots = [r for sub in [node.test, *_names_and_attrs(node.test)]
                 for r in [self.locals.get((qual, sub.value)) if isinstance(sub, cst.Name) else _root_attr(sub)]
                 if r and r[0] == "self" and r[1] != "training" and (qual, r) not in self.set_before and
                 (qual, r) not in self.done]
        if not roots or "self" not in _parameters(self.ctx.function):
            return
        line = self.ctx.position(node)[0]
        for root in roots:
            # set in the branch, or after it
            where = min(((at, value) for at, value in self._constants_set(self.ctx.function or node).get(root, ())
                         if at > line), default=None)
            if where is None:
                where = next((w for m in _self_calls(node) for w in [self._method_sets(m, root[1])] if w), None)
            if where is None:
                continue
            self.done.add((qual, root))
            self.report(node.test, flag=".".join(root), value=f"`{where[1]}`", line=where[0],
                        owner="module" if self._module() else "object",
                        effect=effect("flag set by compiled code"))
            return

    def visit_Return(self, node: cst.Return) -> None:
        """A property returning a test of a flag (`def state_in_first_order(self): return self.dt is None`): its
        line is where Dynamo guards the flag for the compiled method that reads the property, reported when
        such a method of the class sets the flag to a constant (`self.dt = None` after a step that set a
        tensor: each call flips it)."""
        fn, ix, cls = self.ctx.function, self.ctx.index, self.ctx.class_name
        if fn is None or node.value is None or ix is None or not cls or not any(
                dotted(d.decorator) == "property" for d in fn.decorators):
            return
        root = next((r for sub in [node.value, *_names_and_attrs(node.value)] for r in [_root_attr(sub)]
                     if r and r[0] == "self"), None)
        if root is None or (self.ctx.qualname, root) in self.done:
            return
        lines = (self.ctx.source or "").splitlines()
        read = re.compile(rf"\bself\.{re.escape(fn.name.value)}\b")
        for q, info in sorted(ix.functions.items()):
            if info.cls != cls or q == self.ctx.qualname or not any(
                    read.search(ln) for ln in lines[info.def_line:info.end]):
                continue
            where = method_sets(self.ctx, q.rsplit(".", 1)[-1], root[1])
            if where:
                self.done.add((self.ctx.qualname, root))
                self.report(node.value, flag=".".join(root), value=f"`{where[1]}`", line=where[0],
                            owner="module" if self._module() else "object",
                            effect=effect("flag set by compiled code"))
                return


@register
class WrapperSharedByFrames(TorchRule):
    """Checks for a decorator's wrapper around several functions that Dynamo compiles as frames of their own
    (each breaks the graph, or is called from code that runs eagerly): the frame Dynamo compiles is the
    wrapper's code, one code object for every function it wraps, guarded on which function its closure
    holds. Each wrapped function entered after the first compiles that code again. A base class's Python
    `__call__` (`def __call__(self, *args, **kwargs): return super().__call__(*args, **kwargs)`) is the same
    for the subclasses whose `forward` Dynamo enters as frames: guarded on the class of `self`."""
    code = "DYN513"
    name = "wrapper-shared-by-frames"
    message = ("`{closure}` is a different function at the entries of `{wrapper}`, which wraps {count} functions "
               "Dynamo compiles as frames of their own ({names}{training}): they share this code, and Dynamo "
               "guards on which function it calls, so {effect}")
    fix = ("Remove the graph breaks inside the wrapped functions (then the wrapper is inlined into its caller's "
           "graph), or apply the decorator's work outside compiled code")
    recompiles = True
    severity = "note"
    scope = "frame"
    why = """
        Dynamo keeps its compiled code per code object. A decorator's wrapper (`@functools.wraps(func) def
        wrapper(*args, **kwargs): return func(*args, **kwargs)`) has one code object, whatever function it
        wraps. When the wrapped functions are compiled as frames of their own (a graph break inside them, or
        their caller runs eagerly), Dynamo compiles the wrapper's code for the first one with a guard on the
        function in its closure (`___check_obj_id(func.__code__)`), and again for each other one: one entry
        per wrapped function, counted against `recompile_limit` (8), after which the rest run eagerly. Inlined
        wrappers (no break inside) cost nothing (docs/guards.md, "wrapper around frames"). A Python `__call__`
        that a base module class defines is such a wrapper too: calling a layer from code that runs eagerly
        (or after a break) enters the `__call__` frame, guarded on the class of `self` and on the number of
        arguments, so each subclass compiles it again (two instances of one class share their entry).
    """
    INVALID = [Example("""
        import functools

        import torch


        def logged(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                return func(*args, **kwargs)
            return wrapper


        @logged
        def shift(x):
            print("shift")
            return x + 1


        @logged
        def scale(x):
            print("scale")
            return x * 2


        @torch.compile
        def step(x):
            return shift(x) + scale(x)
    """, "step(torch.ones(3))"), Example("""
        import torch
        from torch import nn


        class Layer(nn.Module):
            def __call__(self, *args, **kwargs):
                return super().__call__(*args, **kwargs)


        class Encoder(Layer):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                print("encoder")
                return self.proj(x)


        class Decoder(Layer):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                print("decoder")
                return self.proj(x) * 2


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = Encoder()
                self.decoder = Decoder()

            def forward(self, x):
                return self.decoder(self.encoder(x))
    """, "torch.compile(Model())(torch.ones(2, 4))")]
    VALID = [Example("""
        import functools

        import torch


        def logged(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                return func(*args, **kwargs)
            return wrapper


        @logged
        def shift(x):
            return x + 1


        @logged
        def scale(x):
            return x * 2


        @torch.compile
        def step(x):
            return shift(x) + scale(x)
    """, "step(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.done: Set[str] = set()
        self.varargs_done: Set[str] = set()
        self.varargs_seen: Set[str] = set()        # a read under an `if` reported: the next is one every path runs

    def _frame(self):
        project = self.ctx.project
        frame = project.frames.get((self.ctx.path, self.ctx.qualname)) if project is not None else None
        return frame if frame and frame.wraps and self.ctx.qualname not in self.done else None

    def _frame_of_wrapper(self):
        project = self.ctx.project
        frame = project.frames.get((self.ctx.path, self.ctx.qualname)) if project is not None else None
        return frame if frame and frame.wraps and self.ctx.qualname not in self.varargs_done else None

    def _conditional_here(self) -> bool:
        """Inside an `if` (or a conditional expression, a short-circuit) of the function being checked."""
        fn = self.ctx.function
        chain = list(self.ctx.parents)
        inner = chain[chain.index(fn) + 1:] if fn in chain else chain
        return any(isinstance(p, (cst.If, cst.IfExp, cst.BooleanOperation)) for p in inner)

    def _first_varargs_read(self, node: cst.Name) -> bool:
        """A read of the wrapper's own `*args` (not its declaration)."""
        fn = self.ctx.function
        star = fn.params.star_arg if isinstance(fn, cst.FunctionDef) else None
        if not isinstance(star, cst.Param) or star.name.value != node.value:
            return False
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        return not isinstance(parent, (cst.Param, cst.AssignTarget)) and not any(
            isinstance(p, cst.Decorator) for p in self.ctx.parents)

    def _report(self, node, closure: str, wrapper: str, frame) -> None:
        self.done.add(self.ctx.qualname)
        names = frame.wraps[1]
        shown = ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        self.report(node, closure=closure, wrapper=wrapper, count=len(names), names=shown,
                    training=", in training" if frame.why[2] else "", effect=effect("wrapper around frames"))

    def visit_Name(self, node: cst.Name) -> None:
        frame = self._frame_of_wrapper()
        if frame is not None and len(frame.arities) > 1 and self._first_varargs_read(node):
            counts = " and ".join(str(n) for n in frame.arities[:2]) + (" or more" if len(frame.arities) > 2 else "")
            # an entry whose path skips a read under an `if` is guarded at the next one every path runs
            if not self._conditional_here():
                self.varargs_done.add(self.ctx.qualname)
            elif self.ctx.qualname in self.varargs_seen:
                return
            self.varargs_seen.add(self.ctx.qualname)
            self.report(node, message=f"`{node.value}` (the wrapper's `*{node.value}`) has another length at other "
                                      f"entries of `{self.ctx.qualname.rsplit('.', 1)[-1]}` (its wrapped functions "
                                      f"are called with {counts} positional arguments): Dynamo guards on the "
                                      f"length where it is first read, so {effect('wrapper around frames')}")
        frame = self._frame()
        if not frame or node.value != frame.wraps[0]:
            return
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if isinstance(parent, (cst.AssignTarget, cst.Param, cst.Decorator)) or (
                isinstance(parent, cst.Attribute) and parent.attr is node):
            return
        if any(isinstance(p, cst.Decorator) for p in self.ctx.parents):
            return                      # `@functools.wraps(func)`: read once, when the wrapper is made
        self._report(node, node.value, self.ctx.qualname.rsplit(".", 1)[-1], frame)

    def visit_Call(self, node: cst.Call) -> None:
        """A base class's `__call__`: reported at its `super().__call__(...)`, which runs `self.forward`."""
        frame = self._frame()
        if frame and frame.wraps[0] == SUPER_CALL and source_of(node.func) == SUPER_CALL:
            self._report(node, "self.forward", self.ctx.qualname, frame)
