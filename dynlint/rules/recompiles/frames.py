"""Values that differ from one entry of compiled code to the next: per-layer values of a frame Dynamo compiles
on its own (DYN509), and flags of `self` that compiled code tests and sets for the next call (DYN512). Both read
`obj.attr` tests and the constants code assigns to them."""
from __future__ import annotations

import re
from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.guards import effect
from dynlint.analysis.resumed import no_work_before
from dynlint.analysis.regions import is_module_class
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import children, dotted
from dynlint.rules.common import TorchRule, source_of
from dynlint.rules.recompiles.common import parameter_names


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
    first layer and a tensor for the rest, for a string constant that differs between its calls (a logging
    helper called with each metric's name), or for a flag the frame itself sets on an object every layer
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
        of its caller's one trace (docs/guards.md, "frame" rows). Rows that a mask or `nonzero()` picks differ
        in number from entry to entry: the first new number recompiles with the size dynamic, and an entry of
        0 or 1 rows fails Dynamo's `2 <= x.size()[0]` where the frame first works with them; where a loop runs
        the tensor down (greedy non-maximum suppression, `order = order[1:][keep]` until it is empty), that
        entry comes in an ordinary run, and its guard is a finding of its own.
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
    """, "with torch.no_grad(): torch.compile(Model())(torch.ones(2, 4))"), Example("""
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
    """, "with torch.no_grad(): torch.compile(Model())(torch.ones(2, 4))"), Example("""
        import torch
        from torch import nn

        def pool(feats, rois):
            return feats.mean() * rois[:, 1:].mean(1)

        class Pooler(nn.Module):
            def forward(self, feats, rois, levels):
                out = torch.zeros(rois.shape[0])
                for level in range(4):
                    idx = torch.where(levels == level)[0]
                    out[idx] = pool(feats, rois[idx])
                return out
    """, "torch.compile(Pooler())(torch.ones(2, 3), torch.ones(10, 5), torch.tensor([0, 0, 0, 0, 1, 1, 2, 3, 3, 3]))"),
        Example("""
        import torch

        LOGGED = {}

        def log_metric(name, value):
            key = f"train/{name}"             # each string is a guard of the frame: one graph per name
            LOGGED[key] = float(value)
            return value

        @torch.compile
        def step(x):
            loss = log_metric("loss", x.sum())
            acc = log_metric("acc", x.mean())
            return loss + acc
    """, "step(torch.ones(4))")]
    VALID = [Example("""
        import torch
        from torch import nn

        def pool(feats, rois):
            return feats.mean() * rois[:, 1:].mean(1)

        class Pooler(nn.Module):
            def forward(self, feats, rois, levels):
                out = torch.zeros(rois.shape[0])
                for level in range(4):
                    keep = (levels == level).float()
                    out = out + pool(feats, rois) * keep
                return out
    """, "torch.compile(Pooler())(torch.ones(2, 3), torch.ones(10, 5), torch.tensor([0, 0, 0, 0, 1, 1, 2, 3, 3, 3]))"),
             Example("""
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
        if frame is None or not (frame.ints or frame.strs or frame.sizes or frame.grads):
            return
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if isinstance(parent, cst.Param) and parent.name is node:
            self._sized(node, frame)
            self._grads(node, frame)
        if isinstance(parent, (cst.Param, cst.AssignTarget)) or (
                isinstance(parent, cst.Arg) and parent.keyword is node) or (
                isinstance(parent, cst.Attribute) and parent.attr is node):
            return
        line = dict(frame.ints).get(node.value)
        if line is not None:
            self._report(node, node.value, f"`{node.value}` (an int constant that differs between calls, as at "
                         f"line {line})", "frame int argument", frame)
        line = dict(frame.strs).get(node.value)
        if line is not None:
            self._report(node, node.value, f"`{node.value}` (a string constant that differs between calls, as at "
                         f"line {line})", "frame str argument", frame)

    def _grads(self, node: cst.Name, frame) -> None:
        """A tensor parameter handed the caller's input at one entry and a module's output at another: its
        `requires_grad` guard has no line of its own, so the finding stands at the `def`."""
        line = dict(frame.grads).get(node.value)
        fn = self.ctx.function
        if line is None or not isinstance(fn, cst.FunctionDef) or f"grad {node.value}" in self.done:
            return
        self.done.add(f"grad {node.value}")
        what = (f"Whether `{node.value}` requires grad (the caller's input at one entry, a module's output, which "
                f"requires grad in grad mode, at the call on line {line})")
        at = self.ctx.position(fn.name)
        path, broken, _ = frame.why
        tree = guard_lines.function_at(self.ctx.source or "", at[0]) if path == self.ctx.path else None
        if tree is not None and tree.lineno < broken <= (tree.end_lineno or 0) and no_work_before(tree, broken):
            # no graph before the break: the frame Dynamo resumes there is the one guarded, at that line
            text = (self.ctx.source or "").splitlines()[broken - 1]
            at = (broken, len(text) - len(text.lstrip()), broken, len(text.rstrip()))
        self.ctx.report(self, node, self.format_message(
            what=what, func=self._func(frame, self.ctx.qualname), why=self._why(frame),
            effect=effect("frame requires_grad per entry")), at=at)

    def _sized(self, node: cst.Name, frame) -> None:
        """A parameter handed tensors whose rows depend on their values: the size guard of a tensor argument has no
        line of its own, so the finding stands at the `def`; the `2 <= x.size()[0]` guard is related."""
        sized = next((s for s in frame.sizes if s[0] == node.value), None)
        fn = self.ctx.function
        if sized is None or not isinstance(fn, cst.FunctionDef) or "sizes" in self.done:
            return
        self.done.add("sizes")
        param, call, (path, line, column), down = sized
        what = f"The size of `{param}` (a tensor whose rows depend on its values, passed at line {call} by code " \
               f"Dynamo runs eagerly)"
        func, why = self._func(frame, self.ctx.qualname), self._why(frame)
        at = self.ctx.position(fn.name)
        self.ctx.report(self, node, self.format_message(
            what=what, func=func, why=why, effect=effect("frame data-dependent size")), at=at,
            related=[(path, line, column, f"an entry with 0 or 1 rows fails `2 <= {param}.size()[0]` here")])
        if down and path == self.ctx.path:
            # the rows of a tensor a loop runs down: the entry with one row comes in an ordinary run, and its
            # guard has a line of its own (analysis/ragged.runs_down)
            text = self.ctx.source.splitlines()[line - 1] if line <= len(self.ctx.source.splitlines()) else ""
            name = re.match(r"\w*", text[column:]).group(0)
            self.ctx.report(self, node, self.format_message(
                what=what, func=func, why=why,
                effect=f"the loop around line {call} runs them down, so an entry gets one row (Dynamo's dynamic sizes "
                       f"assume at least 2) and fails `2 <= {param}.size()[0]` here, compiling the frame once more"),
                at=(line, column, line, column + max(len(name), 1)),
                related=[(at[0], at[1], "the frame's first new size recompiles at its `def`")])

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
        return parameter_names(self.ctx.function) - {"self"}

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
        """(object, attribute) -> [(target, constant)] of the `self.<attr> = <constant>` in a function: one walk
        per function, however many tests it has (positions are taken only for the attributes a test reads)."""
        key = id(fn)
        if key not in self.constants:
            found: dict = {}
            for target, value in _assigned_constants(fn):
                root = _root_attr(target)
                if root and root[0] == "self":
                    found.setdefault(root, []).append((target, source_of(value)))
            self.constants[key] = found
        return self.constants[key]

    def visit_If(self, node: cst.If) -> None:
        qual = self.ctx.qualname
        roots = [r for sub in [node.test, *_names_and_attrs(node.test)]
                 for r in [self.locals.get((qual, sub.value)) if isinstance(sub, cst.Name) else _root_attr(sub)]
                 if r and r[0] == "self" and r[1] != "training" and (qual, r) not in self.set_before and
                 (qual, r) not in self.done]
        if not roots or "self" not in parameter_names(self.ctx.function):
            return
        line = 0
        for root in roots:
            # set in the branch, or after it
            assigned = self._constants_set(self.ctx.function or node).get(root, ())
            line = line or (self.ctx.position(node)[0] if assigned else 0)
            where = min(((at, value) for target, value in assigned for at in [self.ctx.position(target)[0]]
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
