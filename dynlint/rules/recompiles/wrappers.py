"""A decorator's wrapper (or a base class's Python `__call__`) around several functions Dynamo compiles as
frames of their own: one code object, compiled again for each function it wraps (DYN513)."""
from __future__ import annotations

from typing import Set

import libcst as cst

from dynlint.analysis.frames import SUPER_CALL
from dynlint.analysis.guards import effect
from dynlint.linter.rule import Example, register
from dynlint.rules.common import TorchRule, source_of


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
    """, "with torch.no_grad(): torch.compile(Model())(torch.ones(2, 4))")]
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
