"""Python state changed by traced code: module-level and closure variables (`global`, `nonlocal`, shared
containers) and Python attributes of an nn.Module. Dynamo guards on them, so each change recompiles."""
from __future__ import annotations

import ast
import re
from typing import List, Optional

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.guards import effect, module_int, recompiles
from dynlint.analysis.held import held_by_attribute, held_by_name
from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors.kinds import TENSOR, TENSORS, VALUE
from dynlint.linter.rule import Example, FixExample, register
from dynlint.linter.walker import descendants, dotted, walk
from dynlint.fixes.buffers import counter_to_buffer
from dynlint.rules.common import TorchRule, source_of
from dynlint.rules.recompiles.caches import handed_item, made_per_call

MUTATORS = frozenset({"append", "extend", "insert", "pop", "popleft", "appendleft", "update", "setdefault",
                      "add", "clear", "remove", "discard", "popitem"})
TAKE_NOTHING = frozenset({"pop", "popleft", "clear", "popitem"})    # the mutators a container calls bare


def _declared(fn: cst.FunctionDef, kind) -> set:
    """Names a function declares `global` (kind=cst.Global) or `nonlocal` (not counting nested defs)."""
    names = set()

    def enter(node) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not fn:
            return False
        if isinstance(node, kind):
            names.update(n.name.value for n in node.names)
        return True

    walk(fn, enter, lambda node: None)
    return names


@register
class MutableGlobalState(TorchRule):
    """Checks for traced code that mutates module-level or closure state: `global n; n += 1`, `nonlocal`
    counters, `HISTORY.append(x)`, `CACHE[key] = value` on containers the function does not own, a class's or a
    module's attribute (`Tracker.calls += 1`)."""
    code = "DYN305"
    name = "mutable-global-state"
    message = "`{expr}` mutates {where} state: Dynamo guards on it, so {effect}"
    fix = "Return the value and let the caller keep the state, or keep counters in a tensor buffer"
    recompiles = True
    why = """
        Dynamo does not break here: it replays the mutation after the graph and installs guards on the
        state it read (`G['COUNT'] == 3`, `len(G['HISTORY']) == 2`). The next call fails those guards and
        recompiles: a growing list or a global counter recompiles on every call until
        `recompile_limit` (8) is hit, after which the function silently runs eagerly. A `nonlocal` int
        counter recompiles once, then becomes dynamic (unless it bounds a `range(...)`: then every value
        recompiles). Measured per kind of value in docs/guards.md.
    """
    INVALID = [
        Example("""
            import torch

            SEEN = []

            @torch.compile
            def record(x):
                SEEN.append(x.detach())
                return x * 2
        """, "for _ in range(4): record(torch.ones(3))"),
        Example("""
            import torch

            CALLS = 0

            @torch.compile
            def counted(x):
                global CALLS
                CALLS += 1
                return x * 2
        """, "for _ in range(4): counted(torch.ones(3))"),
        Example("""
            import torch

            def make_counter():
                calls = 0

                @torch.compile
                def counted(x):
                    nonlocal calls
                    calls += 1
                    return x * 2
                return counted

            counted = make_counter()
        """, "for _ in range(4): counted(torch.ones(3))"),
        Example("""
            import torch

            class Tracker(torch.nn.Module):
                calls = 0                       # a class attribute: one for every instance, kept between calls

                def forward(self, x):
                    Tracker.calls += 1
                    return x / Tracker.calls

            model = torch.compile(Tracker())
        """, "for _ in range(4): model(torch.ones(3))"),
    ]
    VALID = [Example("""
        import torch

        SEEN = []

        @torch.compile
        def scaled(x):
            history = []
            history.append(x * 2)
            return history[-1]

        def record(x):
            y = scaled(x)
            SEEN.append(y.detach())
            return y
    """, "for _ in range(4): record(torch.ones(3))"), Example("""
        import torch

        class Scaled(torch.nn.Module):
            factor = 2.0                        # a class attribute read, never changed: one graph

            def forward(self, x):
                Scaled.last_batch = 3           # set, not read: nothing to guard
                return x * Scaled.factor

        model = torch.compile(Scaled())
    """, "for _ in range(4): model(torch.ones(3))")]

    _BUILTINS = frozenset(dir(__import__("builtins")))

    def _state(self, name: str):
        fn = self.ctx.function
        if not isinstance(fn, cst.FunctionDef):
            return None
        globals_, nonlocals = self.ctx.analysis(declared_names, fn)
        if name in globals_:
            return "global"
        if self._owned_by_traced_caller(name):
            return None         # a variable of an enclosing traced function: it lives and dies with the call
        if name in nonlocals:
            return "closure"
        ix = self.ctx.index
        if self.is_local(name) or name in self._BUILTINS or (ix and (name in ix.imports or name in ix.functions
                                                                     or name in ix.classes)):
            return None
        return "module-level" if len(self.ctx.functions) <= 1 else "module-level or closure"

    def _owned_by_traced_caller(self, name: str) -> bool:
        """`name` is bound by an enclosing function that is itself traced (a nested helper's `nonlocal`)."""
        fns, traced = self.ctx.functions, self.ctx.region_depth
        for fn, is_traced in zip(fns[:-1], traced[:-1]):
            if isinstance(fn, cst.FunctionDef) and is_traced and self.tensors.bound_in(fn, name):
                return True
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if isinstance(target, cst.Name):
            where = self._state(target.value)
            if where in ("global", "closure"):
                kind = "closure int" if where == "closure" and _number(node.value) else "global int"
                if where == "closure" and _in_range(self.ctx.function, target.value):
                    kind = "closure int in range"
                self.report(node, expr=source_of(node), where=where, effect=effect(kind), pattern=kind)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            where = self._state(target.value.value)
            if where:
                self.report(node, expr=source_of(node), where=where, effect=effect("global int"),
                            pattern="global dict store")
        elif self._shared_attribute(target):
            self.report(node, expr=source_of(node), where=self._shared_attribute(target), effect=effect("global int"),
                        pattern="class attribute")

    def _shared_attribute(self, target: cst.BaseExpression) -> Optional[str]:
        """"class" or "module-level" for `Cls.attr` / `mod.attr` / `obj.attr` where the head names a class of
        the file, an import or a module-level object: state that outlives the call, guarded by Dynamo where
        the traced code reads it (`G['Registry'].seen == 0`, measured on torch 2.13), so a change made in
        the traced code fails the guard at the next call."""
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return None
        head, ix = target.value.value, self.ctx.index
        if head in ("self", "cls") or self.is_local(head):
            return None
        if ix is not None and (head in ix.classes or head in ix.imports):
            return "class" if head in ix.classes or head[:1].isupper() else "module-level"
        return "module-level" if self._state(head) == "module-level" else None

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            where = self._shared_attribute(target)
            if where and any(dotted(n) == dotted(target) for n in descendants(node.value)
                             if isinstance(n, cst.Attribute)):
                self.report(node, expr=source_of(node), where=where, effect=effect("global int"),
                            pattern="class attribute")      # made from its old value: `Cls.n = Cls.n + 1`
                return
            where = self._state(target.value) if isinstance(target, cst.Name) else None
            if where in ("global", "closure") and self.tensors.kind(node.value) != TENSOR:
                kind = "closure int" if where == "closure" else "global int"
                self.report(node, expr=source_of(node), where=where, effect=effect(kind), pattern=kind)
                return
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                where = self._state(target.value.value)
                if where:
                    self.report(node, expr=source_of(node), where=where, effect=effect("global dict store"),
                                pattern="global dict store")
                    return

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS and isinstance(func.value, cst.Name):
            where = self._state(func.value.value)
            if where:
                self.report(node, expr=source_of(node), where=where, effect=effect("global list"),
                            pattern="global list")


@register
class ModulePythonStateMutation(TorchRule):
    """Checks for traced methods that update Python-valued attributes of their object: `self.steps += 1`,
    `self.flag = not self.flag`, `self.history.append(...)` in an `nn.Module`, a sampler's
    `self.step_index += 1`."""
    code = "DYN306"
    reads_breaks = True
    name = "module-python-state-mutation"
    message = "`{expr}` changes a Python value kept by the {owner}: Dynamo guards on it, so {effect}"
    fix = ("Keep counters in a registered buffer (`self.register_buffer('steps', torch.tensor(0), persistent=False)`) "
           "or outside the module; make a lazily set value in `__init__` or before the first compiled call")
    recompiles = True
    fix_safety = "unsafe"
    fix_title = "Keep an integer counter in a non-persistent buffer, registered in `__init__`"
    fix_note = """
        Unsafe: code that reads the attribute gets a 0-d tensor instead of an int (`f"{model.calls}"` shows
        `tensor(3)`), and the counter moves with `model.to(device)`. Offered only for a counter: `__init__`
        sets it once, to an integer, after `super().__init__()`, and the class does nothing else with it than
        add or subtract integers (a read such as `if self.calls % 100 == 0:` would become a tensor condition
        and break the graph). `persistent=False` keeps it out of the `state_dict`, so checkpoints still load.
    """
    why = """
        Integer and bool attributes of an `nn.Module` are treated as constants: Dynamo specialises the graph
        on their value (`self.steps == 3`). Changing them inside `forward` means the next call fails the
        guard and recompiles — on every call for a counter, until `recompile_limit` (8) makes the module run
        eagerly. A list attribute that grows is guarded on its length the same way. A tensor buffer updated
        in place (`self.steps += 1` on a buffer) is traced into the graph and does not recompile. A value
        made from the old one counts as a change however it is written (`self.count = self.count + n`, or
        through a local: `tot = self.count + n` ... `self.count = tot`). Not
        reported: an attribute that `forward` or a method it calls sets afresh (`self.mult = 1`) before changing
        it. A float attribute recompiles once, then is a graph input; a bool, one graph per value; an int
        attribute of a plain object (a sampler's step index), once, then it is dynamic. An attribute
        `__init__` leaves None and the compiled code sets on its first call (`if self.scales is None:
        self.setup_scales(...)`) is guarded at the test (`self.scales is None`): the next call compiles
        again, once. Measured per kind of value in docs/guards.md. An attribute the file never assigns by
        name but makes through `setattr(self, name, value)` (a metric's `add_state`) is not known to hold a
        Python value, and is left alone: a tensor updated in place is traced.
    """
    INVALID = [
        Example("""
            import torch

            class Agent:
                def __init__(self):
                    self.steps = 0
                    self.act = torch.compile(self.act)      # a method compiled in __init__

                def act(self, obs):
                    self.steps += 1
                    return obs * 2
        """, "agent = Agent()\nfor _ in range(3): agent.act(torch.ones(3))"),
        Example("""
            import torch

            class Ring:
                def __init__(self):
                    self.ptr = 0
                    self.buf = torch.zeros(4)

                @torch.compile
                def add(self, x):
                    i = self.ptr
                    y = x + 1
                    self.buf[i] = y.sum()           # Dynamo guards `self.ptr` here, where `i` is used
                    self.ptr = (self.ptr + 1) % 4
                    return y
        """, "ring = Ring()\nfor _ in range(3): ring.add(torch.ones(()))"),
        Example("""
            import torch

            class Counter(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.calls = 0

                def forward(self, x):
                    self.calls += 1
                    return x * 2

            model = torch.compile(Counter())
        """, "for _ in range(4): model(torch.ones(3))"),
        Example("""
            import torch

            class Tracker(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norms = []

                def forward(self, x):
                    self.norms.append(x.norm().detach())
                    return x * 2

            model = torch.compile(Tracker())
        """, "for _ in range(4): model(torch.ones(3))"),
        Example("""
            import torch

            class Sampler:
                def __init__(self, sigmas):
                    self.sigmas = sigmas
                    self._step_index = None

                @property
                def step_index(self):
                    return self._step_index

                def step(self, x):
                    if self.step_index is None:
                        self._step_index = 0
                    sigma = self.sigmas[self.step_index]
                    self._step_index += 1
                    return x * sigma

            def denoise(x, sampler):
                step = torch.compile(sampler.step)
                for _ in range(4):
                    x = step(x)
                return x

            sampler = Sampler(torch.linspace(1.0, 0.0, 5))

            def run():
                return denoise(torch.ones(3), sampler)
        """, "run()"),
        Example("""
            import torch

            class RunningCount:
                def __init__(self, epsilon=1e-4):
                    self.count = epsilon

                def update(self, x):
                    tot = self.count + x.shape[0]     # the new value made from the old one
                    self.count = tot
                    return tot

            class Policy(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.seen = RunningCount()
                    self.mu = torch.nn.Linear(5, 2)

                def forward(self, obs):
                    return self.mu(obs) / self.seen.update(obs)

            model = torch.compile(Policy())
        """, "for _ in range(4): model(torch.randn(3, 5))"),
        Example("""
            import torch

            class Particles:
                def __init__(self):
                    self.t = 0.0
                    self.pos = torch.zeros(4)

                def step(self, dt):
                    self.t += dt                # the time so far: a float, whatever the caller's `dt`
                    self.pos = self.pos + dt
                    return self.pos

            def simulate():
                ps = Particles()
                step = torch.compile(ps.step)
                for _ in range(3):
                    step(0.01)
        """, "simulate()"),
        Example("""
            import torch

            class Pool(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scales = None

                def setup_scales(self, x):
                    self.scales = [1.0 / x.shape[-1], 0.5 / x.shape[-1]]

                def forward(self, x):
                    if self.scales is None:         # set on the first call: guarded here
                        self.setup_scales(x)
                    return x * self.scales[0]

            model = torch.compile(Pool())
        """, "for _ in range(3): model(torch.ones(2, 4))"),
        Example("""
            import dataclasses

            import torch

            @dataclasses.dataclass
            class TrainerState:
                micro_step: int = 0

            class Trainer:
                def __init__(self):
                    self.state = TrainerState()
                    self.step = torch.compile(self._step)

                def _step(self, x):
                    loss = (x * 2).sum()
                    self.state.micro_step += 1      # an attribute of an object the trainer keeps
                    return loss
        """, "trainer = Trainer()\nfor _ in range(3): trainer.step(torch.ones(3))"),
    ]
    FIX_EXAMPLES = [FixExample("""
        import torch

        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 2.0
                self.calls = 0  # how many batches it saw

            def forward(self, x):
                self.calls += 1
                return x * self.scale

        model = torch.compile(Counter())
    """, """
        import torch

        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 2.0
                self.register_buffer("calls", torch.tensor(0), persistent=False)  # how many batches it saw

            def forward(self, x):
                self.calls += 1
                return x * self.scale

        model = torch.compile(Counter())
    """, "for i in range(4): model(torch.full((3,), float(i)))", safety="unsafe")]
    VALID = [Example("""
        import torch

        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("calls", torch.zeros((), dtype=torch.long))

            def forward(self, x):
                self.calls += 1
                self.last_batch = x.shape[0]
                return x * 2

        model = torch.compile(Counter())
    """, "for _ in range(4): model(torch.ones(3))"), Example("""
        import torch

        class Pooler(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.mult = None

            def start(self):
                self.mult = 1           # set afresh before each call reads it: the guard always sees 1

            def forward(self, x):
                self.start()
                self.mult *= 2
                return x * self.mult

        model = torch.compile(Pooler())
    """, "for _ in range(4): model(torch.ones(3))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._lazy: list = []       # (test, message, related, function, class) of lazily set attributes

    def _module_attr(self, node: cst.CSTNode):
        """`self.<attr>` in a method of a class of the file (an nn.Module or a plain object: a sampler), not a
        tensor or submodule: the attribute name."""
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"):
            return None
        ix, cls = self.ctx.index, self.ctx.class_name
        if not (cls and ix is not None and cls in ix.classes):
            return None
        attr = node.attr.value
        if attr == "training" or self.tensors.kind(node) == TENSOR or self.tensors._submodule(attr):
            return None
        return attr

    def _in_module(self) -> bool:
        return self.ctx.analysis(in_module_class)

    def _held_attr(self, node: cst.CSTNode) -> Optional[str]:
        """`self.<holder>.<attr>`, a Python attribute of a plain object the traced object keeps (a trainer's
        `self.state.micro_step`), not of a tensor or a submodule: `holder.attr`."""
        ix, project, cls = self.ctx.index, self.ctx.project, self.ctx.class_name
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute) and
                _is_self(node.value.value)) or ix is None or project is None or not cls or cls not in ix.classes:
            return None
        holder = node.value.attr.value
        found = [project.resolve(ix, c) for c in held_by_attribute(project, ix, cls, holder)]
        if not found or not all(f and f[0] == "class" and not is_module_class(project, f[1][0], f[1][1].name)
                                for f in found):
            return None             # (a submodule's attribute, or what it holds is not known)
        return f"{holder}.{node.attr.value}"

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        attr = self._module_attr(node.target) or self._held_attr(node.target)
        if attr and "." not in attr and self._set_by_name_only(attr):
            return          # `self.total += n` where `self.total` is made by `setattr(self, name, default.clone())`
        if attr and self.tensors.kind(node.value) in (VALUE, TENSORS):     # `self.n += 1`, `self.outs += [t]`
            self._report(node, self._kind(attr, node.value))
        elif self._handed_counter(node):                                   # `state.step += 1`, `state` passed in
            self.report(node, expr=source_of(node), effect=effect("object int attribute"), owner="object")
        elif self.ctx.in_region and (kept := handed_item(self.ctx, node)):   # `meta["steps"] += 1`, `meta` passed in
            self.report(node, expr=source_of(node), effect=effect("object int attribute"),
                        owner=f"container `{kept}` the caller keeps")

    def _set_by_name_only(self, attr: str) -> bool:
        """The file never assigns `self.<attr>` by name, and sets attributes through `setattr(self, name,
        value)` (a metric base class's `add_state`): what the attribute holds (a tensor state, a list) is not
        known here, and a tensor updated in place is traced, not guarded."""
        text = self.ctx.source or ""
        named = re.compile(rf"\bself\.{re.escape(attr)}\s*(=(?!=)|:)")
        return "setattr(self," in text and not named.search(text)

    def _handed_counter(self, node: cst.AugAssign) -> bool:
        """`state.step += 1` in traced code, `state` a parameter that every caller passes an instance of a plain
        class of the project, whose `__init__` sets `step` to a number: the caller keeps the object, so the next
        call reads the new number, which Dynamo guarded (measured: once, then dynamic)."""
        target, fn, ix, project = node.target, self.ctx.function, self.ctx.index, self.ctx.project
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and
                isinstance(node.value, (cst.Integer, cst.Float)) and isinstance(fn, cst.FunctionDef)) or \
                ix is None or project is None or not self.ctx.in_region:
            return False
        name = target.value.value
        here = ix.functions.get(self.ctx.qualname)
        if name == "self" or here is None or name not in here.params:
            return False
        fdef = guard_lines.function_at(self.ctx.source or "", here.def_line)
        if fdef is None or made_per_call(self.ctx, fdef, name):
            return False                # an object made for each call: its numbers start afresh
        found = [project.resolve(ix, c) for c in held_by_name(project, ix, here, name)]
        return bool(found) and all(
            f and f[0] == "class" and not is_module_class(project, f[1][0], f[1][1].name) and
            f[1][1].scalars.get(target.attr.value) in ("int", "float") for f in found)

    def _report(self, node, kind: str) -> None:
        if not recompiles(kind):
            return
        read = self._read_before(node) if kind == "object int attribute" else None
        if read is not None:        # Dynamo's guard is on the first read: say so there, naming the change
            line = self.ctx.position(node)[0]
            message = (f"`{source_of(read)}` is guarded here, and `{source_of(node)}` at line {line} changes this "
                       f"Python attribute of the object on every call: {effect(kind)}")
            span = self._use_of_alias(read)
            if span is not None:    # `i = self.ptr` ... `self.buf[i] = x`: guarded where `i` is used
                self.ctx.report(self, read, message.replace(
                    " is guarded here", f" (read into a local at line {self.ctx.position(read)[0]}) is guarded here, "
                                        "where its value is first used", 1), at=span)
            elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Name):
                # `tot = self.count + n` ... `self.count = tot`: torch 2.13 names the read as the guard's line,
                # 2.14 and later the store (measured): the finding spans both
                start, end = self.ctx.position(read), self.ctx.position(node)
                self.ctx.report(self, read, message, at=(start[0], start[1], end[2], end[3]))
            else:                   # (a frame resumed after a break guards it again at its own first read)
                info = self.ctx.index.functions.get(self.ctx.qualname or "") if self.ctx.index else None
                self.ctx.report(self, read, message, guard=(info.def_line, source_of(read)) if info else ())
            self._math_use(node, kind)
            return
        self.report(node, expr=source_of(node), effect=effect(kind),
                    owner="object" if kind.startswith("object") else "module")
        self._math_use(node, kind)

    def _math_use(self, node, kind: str) -> None:
        """The counter is dynamic after its first change, but a `math` function of it (`math.exp(-self.updates /
        tau)`) in the compiled method, or in a method of the class it calls as `self.m()`, runs on a concrete
        value: Dynamo specialises it again there, and every new value fails that guard."""
        target = node.target if isinstance(node, cst.AugAssign) else None
        if not (isinstance(target, cst.Attribute) and _is_self(target.value)) or not self.ctx.class_name or \
                not kind.startswith("object"):
            return                  # (a module's int attribute is specialised at every value anyway)
        attr, tree = target.attr.value, guard_lines.parsed(self.ctx.source or "")
        cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == self.ctx.class_name),
                   None) if tree is not None else None
        methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)} if cls is not None else {}
        here = methods.get((self.ctx.qualname or "").rpartition(".")[2])
        run = [here] + [methods[n.func.attr] for n in ast.walk(here) if isinstance(n, ast.Call) and
                        isinstance(n.func, ast.Attribute) and _is_self_ast(n.func.value) and
                        n.func.attr in methods] if here is not None else []
        for fn in run:
            calls = _math_calls_on(fn, attr)
            if calls:
                self.ctx.report(self, node, f"`self.{attr}`, which the compiled code changes on every call, goes "
                                f"through `{guard_lines.dotted(calls[0].func)}` here, which runs on a concrete value: "
                                f"Dynamo specialises it again, and {effect('number argument specialised again')}",
                                at=guard_lines.span_of(self.ctx.source or "", calls[0]))
                return

    def _report_cache(self, node: cst.Assign, cache: cst.Attribute) -> None:
        """`self._cache[key] = y`, a dict `__init__` made, filled by the compiled method: Dynamo guards the dict's
        keys at the method's first read of it (`if key in self._cache:`; the store itself when nothing reads it
        before), and the next call, which finds the new key, fails that guard (measured)."""
        ix = self.ctx.index
        info = ix.functions.get(self.ctx.qualname) if ix is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        span = guard_lines.guard_read(self.ctx.source or "", fn, source_of(cache)) if fn is not None else None
        line, col = self.ctx.position(node)[:2]
        if span is None or span[0] == line or self.in_untraced_function() or self.dead_under_dynamo(node):
            self._report(node, "module dict cache")
            return
        message = (f"`{source_of(cache)}` is filled at line {line} (`{source_of(node)}`) and Dynamo guards its keys "
                   f"here, where the compiled code first reads it: {effect('module dict cache')}")
        self.ctx.report(self, node, message, at=span, related=[(line, col, f"`{source_of(cache)}` gains a key here")])

    def _read_before(self, node) -> Optional[cst.Attribute]:
        """The first read of the changed `self.<attr>` in the compiled method, before the change (directly, or
        through a property of the class that returns it: a sampler's `self.step_index`)."""
        target = node.target if isinstance(node, cst.AugAssign) else \
            node.targets[0].target if isinstance(node, cst.Assign) and len(node.targets) == 1 else None
        if not isinstance(target, cst.Attribute) or not isinstance(self.ctx.function, cst.FunctionDef):
            return None
        line = self.ctx.position(node)[0]
        attr = source_of(target)[len("self."):]
        names = {attr} | self._properties_of(attr)
        reads, last = {f"self.{n}" for n in names}, {n.rsplit(".", 1)[-1] for n in names}
        first = None
        for n in descendants(self.ctx.function.body):
            if isinstance(n, cst.Attribute) and n.attr.value in last and n is not target and \
                    source_of(n) in reads:
                at = self.ctx.position(n)[0]
                if at < line and (first is None or at < first[0]):
                    first = (at, n)
        return first[1] if first else None

    def _use_of_alias(self, read: cst.Attribute):
        """Where Dynamo guards a value first read into a local (`i = self.ptr`): at the local's first use, where
        the value is needed (`guard_lines.guard_read`, which follows such names); None when the read is used
        where it stands."""
        ix = self.ctx.index
        info = ix.functions.get(self.ctx.qualname) if ix is not None else None
        if info is None or not any(isinstance(n, cst.Assign) and n.value is read
                                   for n in descendants(self.ctx.function.body)):
            return None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line)
        return guard_lines.guard_read(self.ctx.source or "", fn, source_of(read)) if fn is not None else None

    def _properties_of(self, attr: str) -> set:
        """The class's properties whose getter is `return self.<attr>`."""
        ix, cls = self.ctx.index, self.ctx.class_name
        lines = (self.ctx.source or "").splitlines()
        out = set()
        for q, info in (ix.functions.items() if ix is not None and cls else ()):
            if info.cls == cls and "property" in info.decorators and any(
                    re.fullmatch(rf"\s*return self\.{re.escape(attr)}\s*", ln) for ln in lines[info.def_line:info.end]):
                out.add(q.rsplit(".", 1)[-1])
        return out

    def _kind(self, attr: str, value: cst.BaseExpression) -> str:
        """The guard model's kind of `self.<attr>` changed by `value`: an int, a float, a bool (as `__init__`
        sets it, ClassInfo.scalars, or as `value` makes it), or one that `forward` or a method it calls sets
        afresh (each call starts from the same value)."""
        ix, cls, text = self.ctx.index, self.ctx.class_name, self.ctx.source or ""
        lines = text.splitlines()
        fns = {q: info for q, info in (ix.functions.items() if ix is not None and cls else ()) if info.cls == cls}
        # the method each call runs: forward, or (a class without one: a sampler's `step`) the method that makes
        # the change where it is compiled itself; else none is known (a helper whose methods other modules call,
        # not known when: any of its methods may set it afresh)
        entry = fns.get(f"{cls}.forward") or (fns.get(self.ctx.qualname) if len(self.ctx.region_chain()) == 1
                                              else None)
        calls = lines[entry.start - 1:entry.end] if entry else []
        for q, info in fns.items():
            name = q.rsplit(".", 1)[-1]
            # the entry itself, or a method it calls on every call (not one it calls under an `if`: a lazy
            # first value, `if self.step_index is None: self._init_step_index()`; not one that code outside
            # calls between calls, `set_timesteps`, which changes the value rather than resetting it)
            if name == "__init__" or not (entry is None or q == entry.qualname or any(
                    f"self.{name}(" in line and not (i and _conditional(calls[i - 1])) for i, line in enumerate(calls))):
                continue
            if self._resets(lines[info.start - 1:info.end], attr):
                return "module attribute reset each call"
        if not self._in_module():
            return "object int attribute"       # a plain object's number: specialised once, then dynamic
        scalar = ix.classes[cls].scalars.get(attr) if ix is not None and cls in ix.classes else None
        if scalar == "bool" or _bool(value):
            return "module bool attribute"
        return "module float attribute" if scalar == "float" or _float(value) else module_int(text)

    def _resets(self, body: List[str], attr: str) -> bool:
        """Does one of the method's lines (`body`) set `self.<attr>` afresh: to a value not made from its old one,
        and not as a first value under a test of it (`if self.index is None: self.index = 0` sets it once)?"""
        assigned = re.compile(rf"\bself\.{re.escape(attr)}\s*=(?!=)\s*(.*)")
        for i, line in enumerate(body):
            m = assigned.search(line)
            if m and f"self.{attr}" not in m.group(1) and not _made_from(body[:i], m.group(1), attr) and not (i and any(
                    _guarded_by(body[i - 1], name) for name in {attr} | self._properties_of(attr))):
                return True
        return False

    def _init_sets(self, attr: str, value: "re.Pattern") -> bool:
        """`__init__` of the class sets `self.<attr>` to something `value` matches (`{}`, `dict()`)."""
        ix, cls = self.ctx.index, self.ctx.class_name
        info = ix.functions.get(f"{cls}.__init__") if ix is not None and cls else None
        if info is None:
            return False
        assigned = re.compile(rf"\bself\.{re.escape(attr)}\s*(?::[^=]+)?=(?!=)\s*(.*)")
        for line in (self.ctx.source or "").splitlines()[info.start - 1:info.end]:
            m = assigned.search(line)
            if m and value.fullmatch(m.group(1).split("#")[0].strip()):
                return True
        return False

    def _builds_module(self, call: cst.Call) -> bool:
        """A call that builds an nn.Module: a `torch.nn` layer, or a module class of the project."""
        q = self.call_name(call) or ""
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and ".functional." not in q:
            return q.rsplit(".", 1)[-1] not in ("Parameter", "Buffer")
        project, ix = self.ctx.project, self.ctx.index
        r = project.resolve(ix, q) if project is not None and ix is not None and q else None
        return bool(r and r[0] == "class" and is_module_class(project, r[1][0], r[1][1].name))

    def autofix(self, node: cst.CSTNode):
        return counter_to_buffer(self.ctx, node) if isinstance(node, cst.AugAssign) and self._in_module() else None

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Subscript) and self._module_attr(target.value) and \
                    self._init_sets(target.value.attr.value, _DICT):
                self._report_cache(node, target.value)          # a cache filled by forward: once per new key
                return
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                    target.value.value == "self" and self._in_module() and isinstance(node.value, cst.Call) and \
                    self._builds_module(node.value):
                self._report(node, "module lazy submodule")     # a submodule made by forward, on its first call
                return
            attr = self._module_attr(target)
            if not attr or self.tensors.kind(node.value) == TENSOR:
                continue
            if _reads_attr(node.value, attr) or self._local_reads_attr(node, attr):
                self._report(node, self._kind(attr, node.value))
                return

    def visit_If(self, node: cst.If) -> None:
        """A lazily set attribute: `if self.scales is None:` whose None branch sets `self.scales` (directly, or
        through a method of the class it calls), or `if self.pe is not None and ...: return` before code that
        sets it, `__init__` having set it to None. The first call sets it; the next fails the guard Dynamo
        installed at the test (`self.scales is None`) and compiles again, once."""
        if self.ctx.class_name is None or not isinstance(self.ctx.function, cst.FunctionDef):
            return
        for test, attr, is_none in _none_tests(node.test):
            if not self._init_sets(attr, _NONE) or self._init_fills(attr) or self._counted(attr):
                continue
            if is_none:
                where = self._sets(node.body, attr)
            else:
                where = self._sets(node.orelse, attr) if node.orelse is not None else None
                if where is None and _returns(node.body):       # (the code after an early return sets it)
                    end = self.ctx.position(node)[2]
                    where = next((n for n in self._setters(self.ctx.function.body, attr)
                                  if self.ctx.position(n)[0] > end), None)
            if where is not None and not (isinstance(where, cst.Assign) and isinstance(where.value, cst.Call) and (
                    self._builds_module(where.value) or self.call_name(where.value) == "torch.nn.Parameter")):
                # (a lazy submodule or parameter: Dynamo guards the module's own state, at no line)
                line, col = self.ctx.position(where)[:2]
                message = (f"`self.{attr}` is None until the compiled code sets it (line {line}): Dynamo guards "
                           f"`{source_of(test)}` here, so {effect('lazily set attribute')}")
                self._lazy.append((test, message, [(line, col, f"`self.{attr}` is set here")], self.ctx.function,
                                   self.ctx.class_name))
                return

    def finish(self, findings) -> None:
        """The lazily set attributes, unless a graph break above the test leaves it to code Dynamo does not
        compile: a break in a loop skips the whole frame, and a frame resumed after a break with no tensor work
        left is not compiled (measured, torch 2.13): nothing there is guarded."""
        from dynlint.analysis.resumed import resumes_after
        from dynlint.linter.rule import REGISTRY
        for test, message, related, fn, cls in self._lazy:
            line, start = self.ctx.position(test)[0], self.ctx.position(fn)[0]
            breaks = [f.line for f in findings if start <= f.line < line and f.gb_types and
                      f.code in REGISTRY and not REGISTRY[f.code].recompiles]
            info = self.ctx.index.function_at(line) if breaks and self.ctx.index is not None else None
            tree = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
            if breaks and (tree is None or not resumes_after(tree, max(breaks)) or
                           not self._works_after(fn, cls, max(breaks))):
                continue
            self.ctx.report(self, test, message, related=related)

    def _works_after(self, fn: cst.FunctionDef, cls: Optional[str], line: int) -> bool:
        """Tensor work (a call, an operator or a subscript whose value is a tensor) in `fn` below `line`."""
        with self.tensors.within(fn, cls):
            return any(isinstance(n, (cst.Call, cst.BinaryOperation, cst.Subscript)) and
                       self.ctx.position(n)[0] > line and self.tensors.kind(n) == TENSOR
                       for n in descendants(fn.body))

    def _counted(self, attr: str) -> bool:
        """The function also changes `self.<attr>` from its old value (`self.index += 1`): the counter's
        finding stands at this same first read."""
        return any(isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Attribute) and
                   n.target.attr.value == attr and _is_self(n.target.value)
                   for n in descendants(self.ctx.function.body))

    def _init_fills(self, attr: str) -> bool:
        """`__init__` sets `self.<attr>` to a value after all: it calls a method of the class that does
        (`self.pe = None` then `self.extend_pe(...)`), or assigns it again."""
        ix, cls = self.ctx.index, self.ctx.class_name
        info = ix.functions.get(f"{cls}.__init__") if ix is not None and cls else None
        if info is None:
            return False
        lines = (self.ctx.source or "").splitlines()
        setters = {q.rsplit(".", 1)[1] for q, f in ix.functions.items() if f.cls == cls and q != f"{cls}.__init__"
                   and any(_setting(attr).search(ln) for ln in lines[f.def_line:f.end])}
        body = lines[info.def_line:info.end]
        return any(_setting(attr).search(ln) for ln in body) or \
            any(f"self.{m}(" in ln for m in setters for ln in body)

    def _sets(self, block, attr: str):
        """The first statement of `block` that sets `self.<attr>` to something other than None: an assignment,
        or a call of a method of the class that assigns it (`self.setup_scales(...)`)."""
        return next(iter(self._setters(block, attr)), None)

    def _setters(self, block, attr: str) -> list:
        ix, cls, lines = self.ctx.index, self.ctx.class_name, (self.ctx.source or "").splitlines()
        assigned = _setting(attr)
        out = []
        for n in descendants(block):
            if isinstance(n, cst.Assign) and any(_sets_attr(t.target, attr) for t in n.targets) and \
                    not _none(n.value):
                out.append(n)
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and _is_self(n.func.value):
                info = ix.functions.get(f"{cls}.{n.func.attr.value}") if ix is not None else None
                if info is not None and any(assigned.search(ln) for ln in lines[info.def_line:info.end]):
                    out.append(n)
        return out

    def _local_reads_attr(self, node: cst.Assign, attr: str) -> bool:
        """`self.count = tot` where the function's one binding of `tot`, before it, reads `self.count`
        (`tot = self.count + n`): the new value is made from the old one, as `self.count += n` makes it."""
        if not isinstance(node.value, cst.Name) or not isinstance(self.ctx.function, cst.FunctionDef):
            return False
        name, line = node.value.value, self.ctx.position(node)[0]
        bound = [n for n in descendants(self.ctx.function.body) if isinstance(n, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets)]
        return len(bound) == 1 and self.ctx.position(bound[0])[0] < line and _reads_attr(bound[0].value, attr)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS and self._module_attr(func.value) and \
                (node.args or func.attr.value in TAKE_NOTHING):     # (`self.handle.remove()`: a hook's handle)
            self._report(node, "module list attribute" if self._in_module() else "object list attribute")


def _made_from(before: List[str], value: str, attr: str) -> bool:
    """`value` is a local that one of the lines `before` computes from `self.<attr>` (`tot = self.count + n`
    ... `self.count = tot`): a change of the attribute, not a reset."""
    name = value.strip()
    return bool(re.fullmatch(r"\w+", name)) and any(
        re.search(rf"^\s*{re.escape(name)}\s*=(?!=).*\bself\.{re.escape(attr)}\b", line) for line in before)


def _reads_attr(node: cst.CSTNode, attr: str) -> bool:
    """Does the expression read `self.<attr>`?"""
    return any(isinstance(n, cst.Attribute) and n.attr.value == attr and isinstance(n.value, cst.Name) and
               n.value.value == "self" for n in descendants(node))


_DICT = re.compile(r"\{\}|dict\(\)|(collections\.)?OrderedDict\(\)")
_NONE = re.compile(r"None")


def _setting(attr: str) -> "re.Pattern":
    """`self.<attr> = <something other than None>` on a line, alone or among the targets of a tuple
    (`self.scales, self.map_levels = setup(...)`)."""
    return re.compile(rf"\bself\.{re.escape(attr)}\s*(?::[^=]+|(?:,\s*[\w.]+\s*)+)?=(?!=)\s*(?!None\b)\S")


def _sets_attr(target: cst.BaseExpression, attr: str) -> bool:
    """The assignment target is `self.<attr>`, or a tuple or list of targets that holds it."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_sets_attr(e.value, attr) for e in target.elements)
    return isinstance(target, cst.Attribute) and target.attr.value == attr and _is_self(target.value)


def _none_tests(test: cst.BaseExpression):
    """(comparison, attribute, is-None) for each `self.<attr> is None` / `is not None` that an `if` tests, alone
    or as an operand of `and`/`or`."""
    stack = [test]
    while stack:
        e = stack.pop()
        if isinstance(e, cst.BooleanOperation):
            stack += [e.right, e.left]
        elif isinstance(e, cst.Comparison) and len(e.comparisons) == 1 and isinstance(e.left, cst.Attribute) and \
                _is_self(e.left.value) and _none(e.comparisons[0].comparator) and \
                isinstance(e.comparisons[0].operator, (cst.Is, cst.IsNot)):
            yield e, e.left.attr.value, isinstance(e.comparisons[0].operator, cst.Is)


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _returns(block) -> bool:
    """The block only returns (`if ...: return`)."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and \
        isinstance(body[0].body[0], cst.Return)


def _conditional(line: str) -> bool:
    """`line` opens a block that runs only sometimes (`if`, `elif`, `else`, `except`)."""
    code = line.split("#", 1)[0].strip()
    return code.startswith(("if ", "elif ", "else", "except")) and code.endswith(":")


def _guarded_by(line: str, attr: str) -> bool:
    """`line` is an `if` that tests `self.<attr>` (a lazy first value: `if self.index is None:`)."""
    stripped = line.strip()
    return stripped.startswith(("if ", "elif ")) and (f"self.{attr}" in stripped or f'"{attr}"' in stripped)


def _number(node: cst.BaseExpression) -> bool:
    node = node.expression if isinstance(node, cst.UnaryOperation) else node
    return isinstance(node, (cst.Integer, cst.Float))


def _float(node: cst.BaseExpression) -> bool:
    node = node.expression if isinstance(node, cst.UnaryOperation) else node
    return isinstance(node, cst.Float)


def _bool(node: cst.BaseExpression) -> bool:
    """`not ...`, `True`, `False`: a bool."""
    return (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)) or \
        (isinstance(node, cst.Name) and node.value in ("True", "False"))


def _in_range(fn, name: str) -> bool:
    """`name` is an argument of a `range(...)` call in `fn`."""
    return fn is not None and any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and
                                  n.func.value == "range" and any(isinstance(a.value, cst.Name) and
                                                                  a.value.value == name for a in n.args)
                                  for n in descendants(fn))


def declared_names(ctx, fn: cst.FunctionDef):
    """An analysis (ctx.analysis): the names `fn` declares `global` and `nonlocal`."""
    text = ctx.unit.text          # no keyword in the source, no declaration: skip the walks
    return (_declared(fn, cst.Global) if "global" in text else set(),
            _declared(fn, cst.Nonlocal) if "nonlocal" in text else set())


def in_module_class(ctx) -> bool:
    """An analysis (ctx.analysis): whether the unit's class is an nn.Module."""
    cls, ix, project = ctx.class_name, ctx.index, ctx.project
    return bool(cls and ix and project and cls in ix.classes and is_module_class(project, ix.path, cls))


def _is_self_ast(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _math_calls_on(fn: ast.AST, attr: str) -> list:
    """The calls of a `math` function in `fn` whose arguments read `self.<attr>`, in source order."""
    return sorted((n for n in ast.walk(fn) if isinstance(n, ast.Call) and
                   (guard_lines.dotted(n.func) or "").startswith("math.") and
                   any(isinstance(m, ast.Attribute) and m.attr == attr and _is_self_ast(m.value)
                       for a in n.args for m in ast.walk(a))), key=lambda n: (n.lineno, n.col_offset))
