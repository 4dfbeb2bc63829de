"""Global modes Dynamo guards on, changed around a compiled call: `.train()` / `.eval()` (DYN503), grad mode
(DYN504), autocast (DYN515)."""
from __future__ import annotations

import re
import ast
from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.names import COMPILE
from dynlint.analysis.regions import compiled_in
from dynlint.linter.rule import Example, register
from dynlint.rules.common import source_of
from dynlint.rules.recompiles.common import GRAD_OFF, SiteBookkeeping, headers_around, varying


TRAINING_DEPENDENT = ("Dropout", "BatchNorm", "SyncBatchNorm", "InstanceNorm", "AlphaDropout", "FeatureAlphaDropout",
                      "RReLU")


@register
class TrainEvalToggleOnCompiledModel(SiteBookkeeping):
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
        compiled = self.compiled_here() | self._handed_to_compile(self.ctx.position(node)[0])
        if name not in compiled or self._no_flip(node, name) or self._grad_mode_differs(compiled | {name}):
            return
        entry = self.compiled_entry(name)
        reads = entry is not None and self.guard_span(entry, "self.training", at_entry=False) is not None
        layer = "a forward that reads `self.training`" if reads else self._training_layer(name)
        if layer is not None:
            # the guard is where the compiled forward reads `self.training`; where a torch layer reads it
            # instead, Dynamo's log names the recompiled forward's first line
            self.report_at_guard(node, entry, "self.training", f"`{source_of(node)}` here", call=source_of(node),
                                 layer=layer or "dropout or batch norm (if it holds any)")


    def _scope(self) -> Optional[ast.AST]:
        """The function this call is in (as `ast`), or the module."""
        ix, source = self.ctx.index, self.ctx.source or ""
        info = ix.functions.get(self.ctx.qualname or "") if ix is not None else None
        return guard_lines.function_at(source, info.def_line) if info is not None else guard_lines.parsed(source)

    def _no_flip(self, node: cst.Call, name: str) -> bool:
        """`model.train()` where nothing in its scope ever puts `model` in eval mode (`.eval()`, `.train(False)`
        or a flag): a module starts in training mode, so it changes nothing and nothing recompiles."""
        scope = self._scope()
        if scope is None or node.args or node.func.attr.value != "train":
            return False
        return not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                       guard_lines.dotted(n.func.value) == name and
                       (n.func.attr == "eval" or n.func.attr == "train" and (n.args or n.keywords))
                       for n in ast.walk(scope))

    def _grad_mode_differs(self, names: Set[str]) -> bool:
        """The compiled object is called both with grad mode off (`with torch.no_grad():`, as evaluation does)
        and on in this scope: Dynamo checks grad mode before any other guard, so the recompile after `.eval()`
        fails that guard (DYN504's), not `self.training`'s (measured, torch 2.13)."""
        scope = self._scope()
        if scope is None:
            return False
        off = {id(c) for w in ast.walk(scope) if isinstance(w, ast.With) and any(
            isinstance(i.context_expr, ast.Call) and
            (self.ctx.index.qualify(guard_lines.dotted(i.context_expr.func) or "") if self.ctx.index else "")
            in GRAD_OFF for i in w.items) for c in ast.walk(w) if isinstance(c, ast.Call)}
        calls = [c for c in ast.walk(scope) if isinstance(c, ast.Call) and guard_lines.dotted(c.func) in names]
        return any(id(c) in off for c in calls) and any(id(c) not in off for c in calls)


class _ModeAroundCompiledCall(SiteBookkeeping):
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
        a loop passes one to, or a local the loop sets from one above: `use_amp = epoch > 0`), or "unknown"
        (another expression: a setting, not known to change)."""
        literal = _literal_bool(flag)
        if literal is not None:
            return "on" if literal else "off"
        from dynlint.rules.recompiles.argument_values import bound_in_loop as _bound_in_loop
        loops = [b for b in self.ctx.blocks if isinstance(b, cst.For)]
        bound = _bound_in_loop(self.ctx, flag, loops, flag) if isinstance(flag, cst.Name) else None
        return "varies" if varying(self.ctx, flag, loops) or (bound is not None and varying(self.ctx, bound, loops)) \
            else "unknown"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._calls: List[Tuple[cst.Call, str, str, str]] = []      # (call, compiled name, mode, the `with`)
        self._held_entries: dict = {}       # `self.<attr>` holding a compiled module -> its forward here, or None
        self._set_by_statement: dict = {}   # function -> (mode, call) of the last statement that set the mode

    def _mode(self) -> Tuple[str, str]:
        for block in reversed(self.ctx.blocks):         # the innermost `with` that sets the mode
            for item in block.items if isinstance(block, cst.With) else ():
                mode = self.mode_of(item.item) if isinstance(item.item, cst.Call) else None
                if mode is not None:
                    return mode, source_of(item.item)
        # else the last statement above that set it in this function (`torch.set_grad_enabled(flag)`)
        return self._set_by_statement.get(self.ctx.qualname or "", (self.DEFAULT, ""))

    def visit_Call(self, node: cst.Call) -> None:
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        mode = self.mode_of(node) if isinstance(parent, cst.Expr) else None
        if mode is not None:            # a statement that sets the mode until it is set again
            self._set_by_statement[self.ctx.qualname or ""] = (mode, source_of(node))
            return
        compiled = self.compiled_here()
        if isinstance(node.func, cst.Name) and node.func.value in compiled:
            self._calls.append((node, node.func.value, *self._mode()))
            return
        held = self._held_compiled(node.func)
        if held:                        # `self.teacher(x)`, `self.teacher = torch.compile(teacher)` in __init__
            self._calls.append((node, held, *self._mode()))
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

    def _held_compiled(self, func: cst.BaseExpression) -> Optional[str]:
        """`self.<attr>` when the class's `__init__` keeps a compiled callable there (a compiled module or
        function, or a compiled method of its own): each method's calls of it run the same compiled code."""
        ix, cls = self.ctx.index, self.ctx.class_name
        info = ix.classes.get(cls) if ix is not None and cls else None
        if info is None or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and
                                func.value.value == "self"):
            return None
        attr = func.attr.value
        if attr not in info.compiled_callables and attr not in info.compiled:
            return None
        if f"self.{attr}" not in self._held_entries:         # the module's forward it runs, when in this file
            from dynlint.analysis.regions import targets_of_value
            here = ix.functions.get(self.ctx.qualname or "")
            refs = targets_of_value(self.ctx.project, ix, here, f"self.{attr}") \
                if here is not None and self.ctx.project is not None else []
            mine = [q for path, q in refs if path == ix.path] or self._handed_forward(info, attr)
            self._held_entries[f"self.{attr}"] = mine[0] if len(set(mine)) == 1 else None
        return f"self.{attr}"

    def _handed_forward(self, info, attr: str) -> List[str]:
        """The forward, in this file, of the modules the callers hand to `__init__` as what `self.<attr>` keeps
        compiled (`self.teacher = torch.compile(teacher.eval())`, `Distiller(MLP(...), ...)`)."""
        from dynlint.analysis.held import passed_constructions
        ix, project = self.ctx.index, self.ctx.project
        head = info.compiled_callables.get(attr, "").split(".")[0]
        init = ix.functions.get(f"{info.name}.__init__")
        if not head or init is None or head not in init.params or project is None:
            return []
        made = passed_constructions(project, ix, init, head) or []
        return [f"{ctor}.forward" for cix, ctor in made
                if cix.path == ix.path and f"{ctor}.forward" in ix.functions]

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
            for stripped in headers_around(lines, c.line, info.def_line + 1):
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
        # the calls of the other functions of the file: a compiled name called in the default mode there and
        # in the other here (`run_plain(x)`, `run_mixed(x)` under autocast)
        elsewhere = {}
        for _, name, mode in self.ctx.analysis(_file_modes, self.code, self.DEFAULT):
            elsewhere.setdefault(name, set()).add(mode)
        for name, entries in by_name.items():
            modes = {mode for _, mode, _ in entries}
            if modes == {self.NOT_DEFAULT} and self.DEFAULT in elsewhere.get(name, ()):
                entries.append((None, self.DEFAULT, ""))
        for name, entries in by_name.items():
            varies = [(call, where) for call, mode, where in entries if mode == "varies"]
            # Dynamo's guard on global state has no source line: its log names the compiled frame's first line
            entry = self._held_entries.get(name) or self.compiled_entry(name)
            if varies:
                call, where = varies[0]
                self.report_at_guard(call, entry, None, f"called under `{where}` here",
                                     callee=name, where=f"under `{where}`, whose mode changes between calls")
            elif {mode for _, mode, _ in entries} - {"unknown"} == {"on", "off"}:
                call, where = next((call, where) for call, mode, where in entries if mode == self.NOT_DEFAULT)
                through = f" (`{where.split(' in `')[1][:-1]}` calls it under `{where.split(' in `')[0]}`)" \
                    if " in `" in where else ""
                self.report_at_guard(call, entry, None, f"called under `{where}` here" if where else
                                     "called here", callee=name, where=self.BOTH + through)


def _literal_bool(node: Optional[cst.BaseExpression]) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


@register
class GradModeToggleAroundCompiledCall(_ModeAroundCompiledCall):
    """Checks for a compiled callable called both under `torch.no_grad()` / `torch.inference_mode()` and
    with gradients enabled, or under `torch.set_grad_enabled(flag)` with a flag that changes; also when it is
    handed to functions of the file that call it (`train_epoch(compiled, ...)` with grad,
    `evaluate(compiled, ...)` under `@torch.no_grad()`), reported at the hand-off; and a compiled callable an
    object keeps (`self.teacher = torch.compile(teacher)`) called in both modes by the class's methods."""
    code = "DYN504"
    name = "grad-mode-toggle-around-compiled-call"
    message = "compiled `{callee}` is called {where}: each grad mode compiles its own graph"
    BOTH = "with grad mode off at one call and on at another"
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
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)

        def fit(x):
            model = Net()
            model.compile()                 # nn.Module.compile: compiled in place
            model(x).sum().backward()
            with torch.no_grad():
                return model(x)
    """, "fit(torch.randn(2, 4))"), Example("""
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

        @torch.compile
        def score(x):
            return (x * 2).sum()

        def run(x, steps):
            for step in range(steps):
                torch.set_grad_enabled(step % 2 == 0)       # a statement: the mode holds until set again
                score(x)
            torch.set_grad_enabled(True)
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
    """, "serve(nn.Linear(4, 2), [torch.ones(3, 4)])"), Example("""
        import torch

        def sample(denoiser, x):                    # calls what its callers hand in, in their grad mode
            for _ in range(2):
                x = denoiser(x)
            return x

        def main():
            denoiser = torch.compile(torch.nn.Linear(4, 4))
            with torch.inference_mode():
                sample(denoiser, torch.ones(2, 4))
                return sample(denoiser, torch.ones(2, 4))
    """, "main()")]

    def mode_of_text(self, text: str) -> Optional[str]:
        return _grad_mode_of_text(self.ctx.index, text)

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


def _grad_mode_of_text(ix, text: str) -> Optional[str]:
    """The grad mode a decorator or `with` item, as written, sets: "off", "on", or None for another."""
    name = text.split("(", 1)[0]
    q = ix.qualify(name) if ix is not None else name
    return "off" if q in GRAD_OFF and text.endswith(")") else "on" if q == "torch.enable_grad" else None


def _autocast_mode_of_text(ix, text: str) -> Optional[str]:
    """"on" for an autocast `with` item written without `enabled=`; None for anything else."""
    name = text.split("(", 1)[0]
    q = ix.qualify(name) if ix is not None else name
    return "on" if q in AUTOCAST and "enabled" not in text else None


def _file_modes(ctx, code: str, default: str) -> List[Tuple[int, str, str]]:
    """An analysis: (line, compiled name, mode) of every call of a compiled name of the file, the mode (of the
    rule `code`: grad mode or autocast) set by the innermost `with` around it, else by its function's
    decorators, else the default: the calls of every function of the file, which the walk of one top-level
    statement does not see together."""
    tree = guard_lines.parsed(ctx.source or "")
    if tree is None or ctx.index is None:
        return []
    text_mode = _TEXT_MODES[code]
    compiled = compiled_in(ctx.index)
    blocks = [n for n in ast.walk(tree) if isinstance(n, (ast.With, ast.AsyncWith, ast.FunctionDef))]
    out = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in compiled):
            continue
        around = sorted((b for b in blocks if b.lineno <= call.lineno <= (b.end_lineno or 0)),
                        key=lambda b: b.lineno, reverse=True)
        fn = next((b for b in around if isinstance(b, ast.FunctionDef)), None)
        if fn is not None and call.func.id in {a.arg for a in fn.args.args + fn.args.kwonlyargs}:
            continue        # the function's own parameter (`def sample(denoiser, ...)`): its callers hand it in
        #                     under their mode, which their hand-off records
        mode = default
        for b in around:
            items = b.decorator_list if isinstance(b, ast.FunctionDef) else [i.context_expr for i in b.items]
            found = next((m for i in items for m in [text_mode(ctx.index, ast.unparse(i))] if m), None)
            if found:
                mode = found
                break
        out.append((call.lineno, call.func.id, mode))
    return out



@register
class AutocastToggleAroundCompiledCall(_ModeAroundCompiledCall):
    """Checks for a compiled callable called both inside and outside `torch.autocast(...)`, or under
    `torch.autocast(..., enabled=flag)` with a flag that changes."""
    code = "DYN515"
    name = "autocast-toggle-around-compiled-call"
    message = "compiled `{callee}` is called {where}: each autocast state compiles its own graph"
    BOTH = "under autocast at one call and without it at another"
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

    def mode_of_text(self, text: str) -> Optional[str]:
        return _autocast_mode_of_text(self.ctx.index, text)

    def mode_of(self, call: cst.Call) -> Optional[str]:
        if (self.call_name(call) or "") not in AUTOCAST:
            return None
        enabled = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "enabled"), None)
        return "on" if enabled is None else self.flag_mode(enabled)


_TEXT_MODES = {GradModeToggleAroundCompiledCall.code: _grad_mode_of_text,
               AutocastToggleAroundCompiledCall.code: _autocast_mode_of_text}
