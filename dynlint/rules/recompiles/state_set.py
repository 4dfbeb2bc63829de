"""State that set-up code changes between two calls of a compiled function and the compiled code reads
(DYN514): a global, a closure cell, an attribute or item of a module-level object (a config), an attribute of an
object a compiled module keeps or whose bound method is compiled, directly or through a setter."""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.guards import effect, recompiles
from dynlint.analysis.held import held_by_name
from dynlint.analysis.regions import is_module_class
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import descendants, dotted
from dynlint.rules.common import source_of
from dynlint.rules.recompiles.call_sites import LIST_CHANGES
from dynlint.rules.recompiles.growing import binds
from dynlint.rules.recompiles.handed import compiled_attribute
from dynlint.rules.recompiles.common import SiteBookkeeping, call_bindings, float_expr, parameter_names
from dynlint.rules.recompiles.foreign_setters import (assigned_elsewhere, global_setters_called_elsewhere,
                                                      module_globals_set_elsewhere, set_elsewhere)
from dynlint.rules.recompiles.handed import compiled_parameter, having, passed_values


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
class StateSetBetweenCalls(SiteBookkeeping):
    """Checks for set-up code that changes, between calls, a global, a closure cell or an attribute of a
    module-level object (a config) that compiled code reads: `global SCALE; SCALE = 0.5 + i`, `cfg.scale = 0.5 + i`, `CONFIG["scale"] = 0.5 + i` before each
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
        guards.md, "global" and "object attribute"); an item of a module-level dict or list is guarded the
        same way, where the compiled code first looks its key up (`G['CONFIG']['scale'] == 1.0`). The change can also be a call, between two calls, of a
        function of the file that assigns such state (a setter: `set_fast_path(True)` with `global
        _USE_FAST_PATH` inside, or `CONFIG["max_len"] = ...`), including an attribute of a compiled module, called
        in this file or in another one of the project (reported at the guard, in the setter's file). A
        settings module's global that a loop in another file assigns (`config.TEMPERATURE = t`) is guarded as
        `G['config'].TEMPERATURE` where the traced code reads it, and reported there. Module attributes set directly
        are DYN506's; state that the compiled code itself changes is DYN305's and DYN306's. Only values whose
        kind the source shows (float arithmetic, an int loop counter, a bool flag set between two calls) are
        reported. The finding stands at the read that installs the guard; the change is its related location.
        A method compiled in another file (`step_fn = torch.compile(scheduler.step)` in a sampling script),
        and a call there of a setter of the same object with a new value (`scheduler.set_timesteps(steps)`
        in a loop, or with a parameter its callers pass differently), or an assignment of a number to an
        attribute it reads (`scheduler.eta = 0.5`), between two compiled calls, is reported in the class's
        file, at the guard. A closure cell of any Python scalar kind counts when another function of the same
        closure sets it (`def set_weight(w): nonlocal weight; weight = w`) and a loop calls that setter: a
        float or bool cell recompiles once, a string on every new value (docs/guards.md, "closure" rows).
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
    """, "run(torch.ones(3))"), Example("""
        import torch

        CONFIG = {"scale": 1.0, "shift": 1}


        @torch.compile
        def scaled(x):
            return x * CONFIG["scale"] + CONFIG["shift"]


        def run(x):
            for step in range(4):
                CONFIG["scale"] = 0.5 + step
                x = scaled(x)
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch


        def make_stepper():
            count = 0

            @torch.compile
            def body(x):
                return x + count

            def step(x):
                nonlocal count
                out = body(x)
                count += 1
                return out

            return step


        def run(x):
            step = make_stepper()
            for _ in range(3):
                x = step(x)
            return x
    """, "run(torch.zeros(3))"), Example("""
        import torch

        class Config:
            def __init__(self):
                self.act = "relu"
                self.depth = 2

        class Net(torch.nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.cfg = cfg                      # the module keeps the object it was built with
                self.fc = torch.nn.Linear(4, 4)

            def forward(self, x):
                h = self.fc(x)
                if self.cfg.act == "relu":
                    h = h.relu()
                for _ in range(self.cfg.depth):
                    h = h * 2
                return h

        def run(x):
            cfg = Config()
            model = torch.compile(Net(cfg))
            model(x)
            cfg.act = "gelu"                        # through the caller's name: guarded as `self.cfg.act`
            model(x)
            model.cfg.depth = 3                     # through the module's
            return model(x)
    """, "run(torch.ones(2, 4))"), Example("""
        import torch

        USE_FAST = False

        def configure(fast: bool):
            global USE_FAST
            USE_FAST = fast

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 4)

            def forward(self, x):
                if USE_FAST:
                    return self.fc(x)
                return self.fc(x).relu()

        def run(x):
            model = Net()
            model.forward = torch.compile(model.forward)    # `model(x)` runs the instance's compiled forward
            model(x)
            configure(True)
            return model(x)
    """, "run(torch.ones(2, 4))"), Example("""
        import torch

        class Ema:
            def __init__(self, decay):
                self.decay = decay
                self.skip_buffers = False
                self.shadow = torch.zeros(4)

            def update(self, value):
                if self.skip_buffers:
                    return self.shadow
                return self.shadow.mul_(self.decay).add_(value, alpha=1 - self.decay)

        def train():
            ema = Ema(0.99)
            update = torch.compile(ema.update)      # a bound method: guarded as `fn.__self__.skip_buffers`
            update(torch.ones(4))
            ema.skip_buffers = True
            return update(torch.ones(4))
    """, "train()"), Example("""
        import torch

        class Buffer:
            def __init__(self, capacity):
                self.capacity = capacity
                self.prios = torch.rand(capacity)
                self.size = 0

            def add(self, prio):
                self.prios[self.size % self.capacity] = prio
                self.size = min(self.size + 1, self.capacity)

            def sample(self, n):
                return torch.multinomial(self.prios[: self.size], n, replacement=True)

        def main():
            buf = Buffer(64)
            for _ in range(8):
                buf.add(0.5)
            sample = torch.compile(buf.sample)
            sample(4)
            buf.add(1.0)                            # a method of the object sets what the compiled one reads
            return sample(4)
    """, "main()"), Example("""
        import torch

        class Scheduler:
            def __init__(self, num_train_timesteps=1000):
                self.num_train_timesteps = num_train_timesteps
                self.num_inference_steps = None
                self.timesteps = None

            def set_timesteps(self, n):
                self.num_inference_steps = n
                self.timesteps = torch.arange(n).flip(0) * (self.num_train_timesteps // n)

            def step(self, eps, t, x):
                prev_t = t - self.num_train_timesteps // self.num_inference_steps
                return x - 0.1 * eps + 0.001 * prev_t

        def sample(model, scheduler, step_fn, steps):
            scheduler.set_timesteps(steps)          # each run of the sampler sets what the compiled step reads
            x = torch.randn(2, 4)
            for t in scheduler.timesteps:
                x = step_fn(model(x), t, x)
            return x

        def main():
            scheduler = Scheduler()
            model = torch.nn.Linear(4, 4)
            step_fn = torch.compile(scheduler.step)
            with torch.no_grad():
                sample(model, scheduler, step_fn, 3)
                sample(model, scheduler, step_fn, 4)
    """, "main()")]
    VALID = [Example("""
        import torch


        @torch.compile
        def scaled(x, scale):
            return x * scale


        def run(x):
            for step in range(4):
                x = scaled(x, torch.tensor(0.5 + step))
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch

        CONFIG = {"scale": 1.0}


        @torch.compile
        def scaled(x):
            return x * CONFIG["scale"]


        def run(x):
            CONFIG["scale"] = 2.0
            for _ in range(4):
                x = scaled(x)
            return x
    """, "run(torch.ones(3))"), Example("""
        import torch

        class Scheduler:
            def __init__(self):
                self.num_inference_steps = None

            def set_timesteps(self, n):
                self.num_inference_steps = n

            def step(self, eps, x):
                return x - eps / self.num_inference_steps

        def sample(model, scheduler, step_fn, steps):
            scheduler.set_timesteps(steps)          # every run asks for as many steps: the same value
            x = torch.randn(2, 4)
            for _ in range(steps):
                x = step_fn(model(x), x)
            return x

        def main():
            scheduler = Scheduler()
            model = torch.nn.Linear(4, 4)
            step_fn = torch.compile(scheduler.step)
            with torch.no_grad():
                sample(model, scheduler, step_fn, 4)
                sample(model, scheduler, step_fn, 4)
    """, "main()")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.declared: Set[Tuple[int, str]] = set()    # (id of the function, name) declared `global`
        self.cells: Set[Tuple[int, str]] = set()       # ... declared `nonlocal`

    def finish(self, findings) -> None:
        """A method of this unit compiled in another file, whose calls there are preceded by a call of a setter of
        the same object with a new value (`foreign_setters`): reported here, at the guard."""
        for qual, read, span, related in set_elsewhere(self):
            setter = related[0][3].split("`")[1]
            self.ctx.report(self, None, self.format_message(
                expr=setter, name=read, func=qual, effect="the next call compiles again"), at=span, related=related)
        for _, qual, attr, kind, span, related in assigned_elsewhere(self, modules=False):
            what = f"object {kind} attribute set between calls"
            if recompiles(what):
                self.ctx.report(self, None, self.format_message(
                    expr=related[3].split("`")[1], name=f"self.{attr}", func=qual, effect=effect(what)), at=span,
                    related=[related])
        for reader, read, kind, span, related in module_globals_set_elsewhere(self):
            what = f"global {kind}"
            if recompiles(what):
                self.ctx.report(self, None, self.format_message(
                    expr=f"{read} = ...", name=read, func=reader, effect=effect(what)), at=span, related=[related])
        for reader, read, kind, span, related in global_setters_called_elsewhere(self):
            what = f"global {kind}"
            if recompiles(what):
                self.ctx.report(self, None, self.format_message(
                    expr=related[3].split("`")[1], name=read, func=reader, effect=effect(what)), at=span,
                    related=[related])

    def visit_Global(self, node: cst.Global) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        for n in node.names:
            self.declared.add((id(fn), n.name.value))

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        """A closure cell the function changes (`nonlocal count; count += 1` after calling a compiled function
        of the same closure that reads `count`): Dynamo guards on the cell's value."""
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        for n in node.names:
            self.cells.add((id(fn), n.name.value))

    def _kind(self, node, fn: cst.FunctionDef, target) -> Optional[str]:
        """float, int, bool or None (not known) for what an assignment makes. A bool constant changes the value
        only between two calls of compiled code (it is set once otherwise); a parameter of the function (a
        setter, `set_debug(on)`) changes it whenever that is called, with the kind of the global's first value."""
        value = node.value
        if float_expr(value):
            return "float"
        if isinstance(node, cst.AugAssign) and isinstance(value, cst.Integer):
            return "int"
        if isinstance(node, cst.AugAssign):
            return None
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return "bool" if self.between_calls(node, constant=True) else None
        if isinstance(node, cst.Assign) and isinstance(value, (cst.SimpleString, cst.Integer)):
            # a constant set between two calls: the guarded value differs from the one before
            return ("str" if isinstance(value, cst.SimpleString) else "int") \
                if self.between_calls(node, constant=True) else None
        if isinstance(value, (cst.Comparison, cst.BooleanOperation)) or \
                (isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not)):
            return "bool"
        if isinstance(value, cst.Name) and value.value in parameter_names(fn) and isinstance(target, cst.Name):
            if (id(fn), target.value) in self.cells:        # a closure's setter, called again and again
                return self._cell_kind(target.value) if _called_in_a_loop(self.ctx.source or "", fn.name.value) \
                    else None
            return _first_value_kind(self.ctx.source or "", target.value)
        return None

    def _cell_kind(self, name: str) -> Optional[str]:
        """"bool", "int", "float" or "str" for a closure cell that the enclosing function binds to a literal in its
        own body (`aux_weight = 0.5` before `def set_aux_weight(w): nonlocal aux_weight; aux_weight = w`), or to
        a parameter of its own with a literal default (`T = temperature`, `temperature=4.0`)."""
        outer = [f for f in self.ctx.functions if isinstance(f, cst.FunctionDef)][-2:-1]
        defaults = {p.name.value: p.default for p in outer[0].params.params if p.default is not None} if outer else {}
        for stmt in outer[0].body.body if outer and isinstance(outer[0].body, cst.IndentedBlock) else ():
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
                    value = small.value
                    return _literal_kind(defaults.get(value.value, value) if isinstance(value, cst.Name) else value)
        return None

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        if len(node.targets) == 1:
            self._check(node, node.targets[0].target)

    def _check(self, node, target) -> None:
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if self.ctx.qualname in self.ctx.regions:
            return          # (state that traced code changes itself is DYN305's and DYN306's)
        kind = self._kind(node, fn, target) if fn is not None else None
        if kind is None:
            return
        if isinstance(target, cst.Subscript):
            self._check_item(node, fn, target, kind)
            return
        found = self._module_state(fn, target, kind)
        if found is not None:
            name, what = found
            readers = traced_reads(self.ctx, name)
            if readers and recompiles(what):
                self.report_at_guard(node, readers[0], name, f"`{name}` changes here", at_entry=False,
                                     expr=source_of(node), name=name, func=readers[0], effect=effect(what))
            return
        held = self._held_by_module(fn, target) or self._bound_reader(target) or self._own_compiled_reader(fn, target) \
            if isinstance(target, cst.Attribute) else None
        what = f"object {kind} attribute set between calls"
        if held is not None and recompiles(what):
            reader, read = held
            self.report_at_guard(node, reader, read, f"`{source_of(target)}` changes here", at_entry=False,
                                 expr=source_of(node), name=read, func=reader, effect=effect(what))

    def _own_compiled_reader(self, fn: cst.FunctionDef, target: cst.Attribute) -> Optional[Tuple[str, str]]:
        """(the compiled method, `self.<attr>`) when a method changes `self.<attr>` and calls, through `self`, an
        attribute holding a compiled method of its class that reads it (`self.updates += 1` then
        `self._apply(...)`, `self._apply = torch.compile(self._lerp_all)`, which reads `self.updates` through
        `self.current_decay()`): every call of the method hands the compiled one a new value."""
        ix, cls = self.ctx.index, self.ctx.class_name
        if not (isinstance(target.value, cst.Name) and target.value.value == "self") or ix is None or not cls:
            return None
        read = f"self.{target.attr.value}"
        for n in descendants(fn.body):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and \
                    isinstance(n.func.value, cst.Name) and n.func.value.value == "self":
                entry = compiled_attribute(ix, cls, n.func.attr.value, self.ctx.source)
                if entry is not None and self.guard_span(entry, read, at_entry=False) is not None:
                    return entry, read
        return None

    def _module_state(self, fn: cst.FunctionDef, target, kind: str) -> Optional[Tuple[str, str]]:
        """(name, guard-model kind) when the assignment's target is state every call reads by name: a global
        the function declares, a closure cell, an attribute of a class of the file used as a namespace of
        settings (`Cfg.temperature`), of a module-level object, or of an imported module (`settings.DEBUG`)."""
        ix = self.ctx.index
        if isinstance(target, cst.Name) and (id(fn), target.value) in self.declared:
            return target.value, f"global {kind}"
        if isinstance(target, cst.Name) and (id(fn), target.value) in self.cells:
            return target.value, f"closure {kind}"
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)) or ix is None:
            return None
        obj, name = target.value.value, f"{target.value.value}.{target.attr.value}"
        if obj in ix.classes and obj not in parameter_names(fn) and not self.tensors.bound_in(fn, obj) and \
                not is_module_class(self.ctx.project, self.ctx.path, obj):
            return name, f"object {kind} attribute set between calls"     # guarded as a global's attribute is
        if obj in ix.module_instances and not any(is_module_class(self.ctx.project, p, c.name)
                                                  for p, c in self.module_classes(obj)):
            return name, f"object {kind} attribute set between calls"
        if obj in ix.imports and kind in ("bool", "float", "int"):
            return name, f"global {kind}"                                   # guarded as a global is
        return None

    def _held_by_module(self, fn: cst.FunctionDef, target: cst.Attribute) -> Optional[Tuple[str, str]]:
        """(the compiled forward, `self.<holder>.<attr>`) when `target` is an attribute of an object that a
        compiled module of this file keeps and its forward reads: `model.cfg.activation`, or `cfg.activation`
        where `cfg` was handed to the module's constructor, which keeps it (`self.cfg = cfg`). Dynamo guards
        the attribute by the path the traced code reads it through, whatever name changes it."""
        ix, attr = self.ctx.index, target.attr.value
        if ix is None:
            return None
        inner = target.value
        if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name):
            holders = [(inner.value.value, inner.attr.value)]          # `model.cfg.activation`
        elif isinstance(inner, cst.Name):
            holders = _handed_to(fn, inner.value, ix)                 # `cfg.activation`, `model = Net(cfg)`
        else:
            return None
        for instance, holder in holders:
            entry = self.compiled_entry(instance) if instance in self.compiled_names() else None
            cls = entry.split(".")[0] if entry and entry.endswith((".forward", ".__call__")) else None
            if cls is None or holder == "self":
                continue
            info = ix.classes.get(cls)
            if info is not None and (holder in info.param_attrs or holder in info.attrs) and \
                    self.guard_span(entry, f"self.{holder}.{attr}", at_entry=False) is not None:
                return entry, f"self.{holder}.{attr}"
        return None

    def _bound_reader(self, target: cst.Attribute) -> Optional[Tuple[str, str]]:
        """(the compiled method, `self.<attr>`) when `target` is `obj.<attr>` and the function being checked
        compiles a method of `obj` (`update = torch.compile(ema.update)`, `agent.act = torch.compile(agent.act)`),
        `obj` built there from a class of the file, and that method reads the attribute: Dynamo guards it as
        `fn.__self__.<attr>`, at that read."""
        ix = self.ctx.index
        here = ix.functions.get(self.ctx.qualname or "") if ix is not None else None
        if here is None or not isinstance(target.value, cst.Name) or target.value.value == "self":
            return None
        obj = target.value.value
        read = f"self.{target.attr.value}"
        for what in here.compiled.values():
            head, _, method = what.partition(".")
            made = self._classes_of(obj, here, method) if head == obj else []
            entry = f"{made[0]}.{method}" if len(made) == 1 else None
            if entry in ix.functions and self.guard_span(entry, read, at_entry=False):
                return entry, read
        for entry in self._handed_entries(here):    # `step_fn(...)`: a parameter holding `obj.step` compiled
            cls, _, method = entry.partition(".")
            if self._classes_of(obj, here, method) == [cls] and self.guard_span(entry, read, at_entry=False):
                return entry, read
        for entry, param in self._passed_to_compiled(here, obj):     # `opt(x, sched)`: the function reads `sched.t`
            if self.guard_span(entry, f"{param}.{target.attr.value}", at_entry=False):
                return entry, f"{param}.{target.attr.value}"
        for name in self.compiled_names():          # `norm(x)` in a compiled function that closes over `norm`
            for method in _methods_called(self.ctx.source or "", ix.functions.get(self.compiled_entry(name) or ""),
                                          obj):
                made = self._classes_of(obj, here, method)
                entry = f"{made[0]}.{method}" if len(made) == 1 else None
                if entry in ix.functions and self.guard_span(entry, read, at_entry=False) and \
                        not is_module_class(self.ctx.project, self.ctx.path, made[0]):
                    return entry, read
        return None

    def _passed_to_compiled(self, here, obj: str) -> List[Tuple[str, str]]:
        """(compiled entry, its parameter) for each call of a compiled function of this file, in the function
        `here`, that passes the object `obj` (`opt(x, sched)`): Dynamo guards the attributes of that parameter
        it reads."""
        out = []
        for name in self.compiled_names():
            entry = self.compiled_entry(name)
            span = (here.start, here.end) if here is not None else None
            for _, _, bound in call_bindings(self.ctx, name, entry, span) if entry else ():
                out.extend((entry, p) for p, (e, passed) in bound.items()
                           if passed and isinstance(e, ast.Name) and e.id == obj)
        return list(dict.fromkeys(out))

    def _classes_of(self, obj: str, here, method: str) -> List[str]:
        """The file's classes with a method `method` that `obj` is built from in the function `here` (or at the
        top level), or that the callers pass it as an instance of, when it is a parameter (`sample(model,
        scheduler, ...)`)."""
        ix, project = self.ctx.index, self.ctx.project
        made = [c for c in ix.built(obj, here) if c in ix.classes]
        if not made and here is not None and obj in here.params and project is not None:
            held = held_by_name(project, ix, here, obj)     # (`DDIMScheduler(DDIMConfig())` holds both)
            made = [c for c in ix.classes if ix.qualify(c) in held]
        return having(ix, made, method)

    def _handed_entries(self, here) -> List[str]:
        """The compiled entries that the parameters of the function `here` which it calls hold (every caller
        passes the same compiled callable: `handed.compiled_parameter`)."""
        return [e for c in here.calls if c.kind == "name" and c.target in here.params
                for e in [compiled_parameter(self, c.target)] if e]

    def _bound_setter(self, node: cst.Call, func: cst.Attribute) -> None:
        """`buffer.add(...)` between two calls of a compiled method of `buffer` (`sample = torch.compile(
        buffer.sample)`), where `add`, a method of its class, assigns a Python number to an attribute that the
        compiled method reads (`self.size = min(self.size + 1, self.capacity)`): guarded at that read."""
        ix = self.ctx.index
        made = self._classes_of(func.value.value, ix.functions.get(self.ctx.qualname or ""), func.attr.value) \
            if isinstance(func.value, cst.Name) and ix is not None else []
        setter = ix.functions.get(f"{made[0]}.{func.attr.value}") if len(made) == 1 else None
        fdef = guard_lines.function_at(self.ctx.source or "", setter.def_line) if setter is not None else None
        info = ix.classes.get(made[0]) if made else None
        for attr in _numbers_assigned(fdef) if fdef is not None else ():
            if info is not None and attr in info.scalars and attr in info.reads and \
                    is_module_class(self.ctx.project, self.ctx.path, info.name):
                continue                # a literal number a compiled module's forward reads: DYN506's
            found = self._bound_reader(cst.Attribute(value=func.value, attr=cst.Name(attr)))
            if found is not None and found[0] != f"{made[0]}.{func.attr.value}":
                reader, read = found
                self.report_at_guard(node, reader, read, f"`{source_of(node)}` changes `{read}` here",
                                     at_entry=False, expr=source_of(node), name=read, func=reader,
                                     effect="the next call compiles again")
                return

    def _set_for_each_run(self, node: cst.Call) -> bool:
        """`scheduler.set_timesteps(steps)` in a function that then calls compiled code, where `steps` is a
        parameter that the file's calls of that function give different values (`sample(..., 3)`,
        `sample(..., 4)`): each run of the function changes the state before its compiled calls."""
        ix = self.ctx.index
        here = ix.functions.get(self.ctx.qualname or "") if ix is not None else None
        if here is None or not self.ctx.qualname:
            return False
        line = self.ctx.position(node)[0]
        compiled = self.compiled_names()
        if not any(c.line > line and c.kind == "name" and (c.target in compiled or (
                c.target in here.params and compiled_parameter(self, c.target))) for c in here.calls):
            return False
        for p in {a.value.value for a in node.args if isinstance(a.value, cst.Name)} & set(here.params):
            given = passed_values(self.ctx, self.ctx.qualname, p)
            if len({ast.dump(g) if g is not None else "" for g in given}) > 1:
                return True
        return False

    def _check_item(self, node, fn: cst.FunctionDef, target: cst.Subscript, kind: str) -> None:
        """An item of a module-level dict or list (`CONFIG["scale"] = 0.5 + step`) set between two calls:
        Dynamo guards the item it read as it guards a global (`G['CONFIG']['scale'] == 1.0`), where the
        compiled code first looks it up."""
        key = _constant_key(target)
        if key is None or not isinstance(target.value, cst.Name) or not self.between_calls(node):
            return
        name = target.value.value
        if name in parameter_names(fn) or name not in _module_level_names(self.ctx.source or "") or \
                binds(fn, name):
            return
        self._item_read(node, name, key, f"global {kind}", "")

    def visit_Call(self, node: cst.Call) -> None:
        """`set_fast_path(True)` between two calls, where the file's `set_fast_path` assigns a global (or an
        attribute of a module-level object) that compiled code reads: the state changes there."""
        func = node.func
        if self._global_list_changed(node):
            return
        if isinstance(func, cst.Attribute) and (self.between_calls(node) or self._set_for_each_run(node)):
            self._bound_setter(node, func)
            return
        if not isinstance(func, cst.Name) or func.value in self.compiled_names() or func.value in self.ctx.regions \
                or not self.between_calls(node):
            return                      # (state that compiled code changes itself is DYN305's and DYN306's)
        setter = guard_lines.top_function(guard_lines.parsed(self.ctx.source or ""), func.value)
        reported = False
        for name, kind in _state_set_by(self.ctx.source or "", setter) if setter is not None else ():
            if _left_as_is(setter, name, node):
                continue                        # `configure(fast=True)` leaves what `numerics=` would set
            obj, _, attr = name.partition(".")
            entry = self.compiled_entry(obj) if attr else None
            if entry is not None:               # `scaler.temperature = t` on a compiled module: forward reads it
                reader, read = entry, f"self.{attr}"
            else:
                readers = traced_reads(self.ctx, name)
                reader, read = (readers[0], name) if readers else (None, None)
            what = f"global {kind}" if kind and not attr else None
            if reader is None or (what and not recompiles(what)) or \
                    self.guard_span(reader, read, at_entry=False) is None:
                continue
            self.report_at_guard(node, reader, read, f"`{func.value}(...)` changes `{name}` here", at_entry=False,
                                 expr=source_of(node), name=name, func=reader.split(".")[0],
                                 effect=effect(what) if what else "the next call compiles again")
            reported = True             # (each global it sets has a guard of its own)
        if reported:
            return
        for name, key, kind in _items_set_by(self.ctx.source or "", setter) if setter is not None else ():
            if self._item_read(node, name, key, f"global {kind}", f"`{func.value}(...)` changes"):
                return

    def _global_list_changed(self, node: cst.Call) -> bool:
        """`HOOKS.append(fn)` between two calls, on a list the module binds at its top level and the traced
        code reads (`for h in HOOKS:`): Dynamo guards its length there (`len(G['HOOKS']) == 1`, measured on
        torch 2.13), so each new length compiles again. True when reported."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and
                func.attr.value in LIST_CHANGES) or not self.between_calls(node):
            return False
        name = func.value.value
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if name not in _module_level_names(self.ctx.source or "") or \
                (fn is not None and self.tensors.bound_in(fn, name)):
            return False                # (a local of the same name is another list)
        for reader in traced_reads(self.ctx, name):
            span = self.guard_span(reader, name, at_entry=False)
            if span is not None and not self._changed_by(reader, name):
                self.report_at_guard(node, reader, name, f"`{source_of(node)}` changes `{name}` here", at_entry=False,
                                     expr=source_of(node), name=name, func=reader.split(".")[0],
                                     effect=effect("global list"))
                return True
        return False

    def _changed_by(self, reader: str, name: str) -> bool:
        """The traced function `reader` changes the list `name` itself (`LOSS_HISTORY.append(loss)`): each call
        fails its guard anyway, which is DYN305's finding."""
        info = self.ctx.index.functions.get(reader) if self.ctx.index is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        return fn is not None and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                                      n.func.attr in LIST_CHANGES and guard_lines.dotted(n.func.value) == name
                                      for n in ast.walk(fn))

    def _item_read(self, node, name: str, key, what: str, change: str) -> bool:
        """Report the first read of `name[key]` in the file's traced functions, where Dynamo guards the item
        (`G['CONFIG']['scale'] == 1.0`), `node` changing it; True when reported."""
        source, ix = self.ctx.source or "", self.ctx.index
        for reader in traced_reads(self.ctx, name) if recompiles(what) else ():
            info = ix.functions.get(reader) if ix is not None else None
            tree = guard_lines.function_at(source, info.def_line) if info is not None else None
            span = guard_lines.key_read(source, tree, name, key) if tree is not None else None
            if span is not None:
                line, col = self.ctx.position(node)[:2]
                label = f"{name}[{key!r}]"
                self.ctx.report(self, node, self.format_message(
                    expr=source_of(node), name=label, func=reader, effect=effect(what)), at=span,
                    related=[(line, col, f"{change} `{label}` here" if change else f"`{label}` changes here")])
                return True
        return False


def _methods_called(source: str, info, obj: str) -> List[str]:
    """The methods of `obj` that the function `info` calls on it, `obj` being none of its own names (a closure
    cell or a global, read by the compiled code as it is when called): `obj(x)` calls `__call__`, `obj.m(x)`
    calls `m`. (A module's attributes are DYN506's.)"""
    fn = guard_lines.function_at(source, info.def_line) if info is not None else None
    if fn is None or obj in {a.arg for a in fn.args.args} or any(
            isinstance(n, ast.Name) and n.id == obj and isinstance(n.ctx, ast.Store) for n in ast.walk(fn)):
        return []
    out = []
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        if isinstance(call.func, ast.Name) and call.func.id == obj:
            out.append("__call__")
        elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and \
                call.func.value.id == obj:
            out.append(call.func.attr)
    return list(dict.fromkeys(out))


def _numbers_assigned(fn: ast.AST) -> List[str]:
    """The attributes of `self` a method assigns a Python number to: a constant, a parameter, arithmetic,
    `min`/`max`/`len`/`int`/`float`/`round` of such (`self.size = min(self.size + 1, self.capacity)`,
    `self.step += 1`); not what a call of anything else makes (a tensor, a list)."""
    def number(e) -> bool:
        if isinstance(e, (ast.Constant, ast.Name, ast.Attribute)):
            return not isinstance(e, ast.Constant) or type(e.value) in (int, float, bool)
        if isinstance(e, ast.BinOp):
            return number(e.left) and number(e.right)
        if isinstance(e, ast.UnaryOp):
            return number(e.operand)
        return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and \
            e.func.id in ("min", "max", "len", "int", "float", "round", "abs") and all(number(a) for a in e.args)
    out = []
    for n in ast.walk(fn):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" and \
                    number(n.value) and t.attr not in out:
                out.append(t.attr)
    return out


def _left_as_is(setter: ast.FunctionDef, name: str, call: cst.Call) -> bool:
    """The setter assigns `name` only from a parameter defaulting to None, under a test that it is not None
    (`if fast is not None: FAST = fast`), and `call` does not pass that parameter: the global keeps its value."""
    args = setter.args
    params = [a.arg for a in args.posonlyargs + args.args]
    defaults = dict(zip(params[len(params) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    sources = {n.value.id for n in ast.walk(setter) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
               and any(isinstance(t, ast.Name) and t.id == name.partition(".")[0] and "." not in name
                       for t in n.targets)}
    if len(sources) != 1:
        return False
    param = sources.pop()
    default = defaults.get(param)
    if not (isinstance(default, ast.Constant) and default.value is None):
        return False
    passed = {a.keyword.value for a in call.args if a.keyword is not None} | \
        {params[i] for i, a in enumerate(call.args) if a.keyword is None and not a.star and i < len(params)}
    return param not in passed and not any(a.star for a in call.args)


def _state_set_by(source: str, fn: ast.FunctionDef) -> List[Tuple[str, Optional[str]]]:
    """(name, kind of its first value) of the module state a function assigns: the globals it declares and
    assigns, and attributes of module-level names (`scaler.temperature = t`)."""
    declared = {n for st in ast.walk(fn) if isinstance(st, ast.Global) for n in st.names}
    local = {a.arg for a in fn.args.args} | {t.id for st in ast.walk(fn) if isinstance(st, ast.Assign)
                                             for t in st.targets if isinstance(t, ast.Name)} - declared
    out = []
    for st in ast.walk(fn):
        for t in st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AugAssign) else []:
            if isinstance(t, ast.Name) and t.id in declared:
                out.append((t.id, _first_value_kind(source, t.id)))
            elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id not in local:
                out.append((f"{t.value.id}.{t.attr}", None))
    return out


def _handed_to(fn: cst.FunctionDef, name: str, ix) -> List[Tuple[str, str]]:
    """(instance, attribute) for each `instance = Cls(..., name, ...)` in `fn` where `Cls`, a class of the file,
    keeps that argument of its `__init__` as `self.<attribute>`."""
    out = []
    for n in descendants(fn):
        if not (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)):
            continue
        value = n.value
        if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Call) and \
                ix.qualify(dotted(value.func) or "") == "torch.compile":
            value = value.args[0].value         # `post = torch.compile(PostProcessor(cfg))`
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            continue
        cls = ix.classes.get(value.func.value)
        init = ix.functions.get(f"{cls.name}.__init__") if cls is not None else None
        if init is None:
            continue
        params = init.params[1:]
        for i, arg in enumerate(a for a in value.args if not a.star):
            if isinstance(arg.value, cst.Name) and arg.value.value == name:
                param = arg.keyword.value if arg.keyword else params[i] if i < len(params) else None
                out += [(n.targets[0].target.value, attr) for attr, p in cls.param_attrs.items() if p == param]
    return out


def _constant_key(target: cst.Subscript) -> object:
    """The constant key of `d["k"]` / `d[0]` (None for a slice, a computed key, several)."""
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return None
    value = target.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value
    if isinstance(value, cst.Integer):
        return int(value.value, 0)
    return None


def _module_level_names(source: str) -> Set[str]:
    """Names a module binds at its top level with a plain assignment."""
    tree = guard_lines.parsed(source)
    return {t.id for st in (tree.body if tree is not None else ()) if isinstance(st, ast.Assign)
            for t in st.targets if isinstance(t, ast.Name)}


def _called_in_a_loop(source: str, name: str) -> bool:
    """Does a loop of the file call the function `name` by that name (a setter handed out by a closure factory,
    `set_weight(w)` in a training loop)?"""
    tree = guard_lines.parsed(source)
    return tree is not None and any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name
        for loop in ast.walk(tree) if isinstance(loop, (ast.For, ast.While))
        for stmt in loop.body for call in ast.walk(stmt))


def _literal_kind(value: cst.BaseExpression) -> Optional[str]:
    """The kind of a literal: `0.5`, `3`, `True`, `"gelu"`."""
    if isinstance(value, cst.Float):
        return "float"
    if isinstance(value, cst.Integer):
        return "int"
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return "bool"
    return "str" if isinstance(value, cst.SimpleString) else None


def _first_value_kind(source: str, name: str) -> Optional[str]:
    """"bool", "int" or "float" for a global whose module-level assignment is a literal of that type."""
    tree = guard_lines.parsed(source)
    for stmt in tree.body if tree is not None else ():
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets) \
                and isinstance(stmt.value, ast.Constant):
            return {bool: "bool", int: "int", float: "float"}.get(type(stmt.value.value))
    return None


def _items_set_by(source: str, fn: ast.FunctionDef) -> List[Tuple[str, object, str]]:
    """(name, key, kind of its value) of each item of a module-level dict that a function assigns with a constant
    key (`CURRICULUM["max_len"] = min(8 * (epoch + 1), 32)`), its kind read from the module-level display
    (`CURRICULUM = {"max_len": 8, ...}`)."""
    tree = guard_lines.parsed(source)
    displays = {t.id: st.value for st in (tree.body if tree is not None else ()) if isinstance(st, ast.Assign)
                and isinstance(st.value, ast.Dict) for t in st.targets if isinstance(t, ast.Name)}
    local = {a.arg for a in fn.args.args}
    out = []
    for st in ast.walk(fn):
        for t in st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AugAssign) else []:
            if not (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in displays and
                    t.value.id not in local and isinstance(t.slice, ast.Constant)):
                continue
            display = displays[t.value.id]
            value = next((v for k, v in zip(display.keys, display.values)
                          if isinstance(k, ast.Constant) and k.value == t.slice.value), None)
            kind = {bool: "bool", int: "int", float: "float"}.get(type(value.value)) \
                if isinstance(value, ast.Constant) else None
            if kind:
                out.append((t.value.id, t.slice.value, kind))
    return out
