"""DYN614, DYN616: methods of objects that compiled code holds and Dynamo does not trace: a torch optimizer's and
a learning-rate scheduler's, and the standard library's locks, queues and events. Which method of which class
breaks, and how, is measured on the installed torch by `bench/torch_methods.py` (`analysis/torch_methods.py`);
the receiver's class comes from what the project builds into it (`analysis/held.py`)."""
from __future__ import annotations

from typing import Set

import libcst as cst

from dynlint.analysis.held import held_by_attribute, held_by_name
from dynlint.analysis.torch_methods import METHOD_BREAKS
from dynlint.linter.rule import Example, register
from dynlint.rules.common import TorchRule, source_of

# the measured classes of each rule: torch's own (optimizers, schedulers, the gradient scaler: DYN614), NumPy's
# random generators (DYN405), and the standard library's locks and queues (DYN616)
TORCH_CLASSES = frozenset(c for c in METHOD_BREAKS if c.startswith("torch."))
NUMPY_CLASSES = frozenset(c for c in METHOD_BREAKS if c.startswith("numpy."))
SYNC_CLASSES = frozenset(METHOD_BREAKS) - TORCH_CLASSES - NUMPY_CLASSES
# other names of a measured class (a deprecated alias, the class a factory builds)
ALIASES = {"torch.cuda.amp.GradScaler": "torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler":
           "torch.amp.GradScaler", "numpy.random.Generator": "numpy.random.default_rng"}


def held_classes(rule: TorchRule, receiver: cst.BaseExpression, among: frozenset) -> Set[str]:
    """The measured classes (of `among`) the receiver may hold, when every one it may hold is among them; else
    empty: a local or parameter (what the function or every caller builds, or its annotation), or `self.<attr>`."""
    ix, project = rule.ctx.index, rule.ctx.project
    if ix is None or project is None:
        return set()
    if isinstance(receiver, cst.Name):
        info = ix.functions.get(rule.ctx.qualname)
        held = held_by_name(project, ix, info, receiver.value)
        if not held and info is not None and receiver.value in info.annotations:
            held = {ALIASES.get(c, c) for c in (ix.qualify(a) for a in info.annotations[receiver.value])} & among
    elif isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and \
            receiver.value.value == "self" and rule.ctx.class_name:
        held = held_by_attribute(project, ix, rule.ctx.class_name, receiver.attr.value)
    else:
        return set()
    held = {ALIASES.get(c, c) for c in held}
    return held if held and held <= among else set()


def measured_call(rule: TorchRule, node: cst.Call, among: frozenset, methods: frozenset):
    """(receiver's classes, the gb_types their method breaks with) for a call of a measured method on a receiver
    known to hold only measured classes, each of which breaks there; None otherwise."""
    f = node.func
    if not isinstance(f, cst.Attribute) or f.attr.value not in methods:
        return None                                 # (most calls: no receiver to resolve)
    held = held_classes(rule, f.value, among)
    found = {METHOD_BREAKS.get(c, {}).get(f.attr.value) for c in held}
    if not held or None in found or "" in found:
        return None                                 # (every class it may hold breaks there, or no report)
    return held, found


def methods_of(classes: frozenset) -> frozenset:
    return frozenset(m for c in classes for m in METHOD_BREAKS[c])


def _gb_types(classes: frozenset) -> tuple:
    return tuple(sorted({gb for c in classes for gb in METHOD_BREAKS[c].values() if gb}))


STEP_BREAK = "Call to `torch._dynamo.graph_break()`"
_TORCH_METHODS = methods_of(TORCH_CLASSES)


@register
class OptimizerCallInCompiledCode(TorchRule):
    """Checks for calls of a torch optimizer's, learning-rate scheduler's or gradient scaler's methods from
    compiled code (`opt.zero_grad()`, `opt.step()`, `sched.step()`, `scaler.scale(loss)`), where the receiver is
    known to hold one: made in the function, passed by every caller in the project, captured from an enclosing
    function, built into `self.<attr>` or handed to `__init__`, or annotated as one. What Dynamo does with each method of each class is
    measured on the installed torch by `bench/torch_methods.py` (`analysis/torch_methods.py`)."""
    code = "DYN614"
    name = "optimizer-call-in-compiled-code"
    message = "`{call}` on a `{cls}` inside compiled code: {what}"
    fix = ("Compile the forward and the loss, and call `loss.backward()`, `opt.step()`, `opt.zero_grad()` and the "
           "scheduler's `step()` eagerly around it; to compile the update, compile a function that only calls "
           "`opt.step()` (PyTorch's recipe)")
    gb_types = _gb_types(TORCH_CLASSES)
    why = """
        Dynamo does not trace an optimizer's bookkeeping: `zero_grad`, `state_dict`, `load_state_dict` and
        `add_param_group` are wrapped in `torch._disable_dynamo` and a scheduler's file is skipped, so a call
        ends the graph and runs eagerly (`Attempted to inline function marked as skipped`). An optimizer's
        `step()` is traced, but it calls `torch._dynamo.graph_break()` before and after its update (so that
        the update compiles as a graph of its own, without autograd): the training step around it is split
        there. A function compiled to run only `opt.step()` is PyTorch's recipe for compiling the update, and
        its break is expected. A gradient scaler's file is skipped as well (`scaler.scale(loss)`,
        `scaler.step(opt)`, `scaler.update()`). Which method breaks, and how, is measured per class on the
        installed torch.
    """
    INVALID = [Example("""
        import torch
        from torch import nn

        model = nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        @torch.compile
        def train_step(x):
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            return loss
    """, "train_step(torch.randn(2, 4))"), Example("""
        import torch
        from torch import nn

        def make_update(model, opt):
            @torch.compile
            def update(x):
                y = model(x).detach() * 2
                opt.step()
                return y
            return update

        def main():
            model = nn.Linear(4, 4)
            model(torch.randn(2, 4)).sum().backward()
            opt = torch.optim.Adam(model.parameters(), lr=0.1)
            return make_update(model, opt)(torch.randn(2, 4))
    """, "main()"), Example("""
        import torch
        from torch import nn

        class Trainer:
            def __init__(self, model):
                self.model = model
                self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
                self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=2)

            @torch.compile
            def after_step(self, x):
                y = self.model(x) * 2
                self.sched.step()
                return y
    """, "Trainer(nn.Linear(4, 4)).after_step(torch.randn(2, 4))"), Example("""
        import torch
        from torch import nn

        model = nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")

        @torch.compile
        def scaled_loss(x):
            loss = model(x).pow(2).mean()
            return scaler.scale(loss)           # the scaler's file is skipped by Dynamo
    """, "scaled_loss(torch.randn(2, 4))")]
    VALID = [Example("""
        import torch
        from torch import nn

        model = nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        @torch.compile
        def loss_of(x):
            model.zero_grad()                   # nn.Module.zero_grad is traced
            return model(x).pow(2).mean()

        def train_step(x):
            opt.zero_grad()
            loss = loss_of(x)
            loss.backward()
            opt.step()
            return loss
    """, "train_step(torch.randn(2, 4))")]

    def visit_Call(self, node: cst.Call) -> None:
        hit = measured_call(self, node, TORCH_CLASSES, _TORCH_METHODS)
        if hit is None:
            return
        held, found = hit
        what = ("its update runs between two graph breaks (`torch._dynamo.graph_break()` in `step`)"
                if found == {STEP_BREAK} else "Dynamo skips this method and breaks the graph")
        self.report(node, call=f"{source_of(node.func.value)}.{node.func.attr.value}()", what=what,
                    cls="/".join(sorted(c.rpartition(".")[2] for c in held)))


_SYNC_METHODS = methods_of(SYNC_CLASSES)
_HOW = {"Unsupported context manager": "it takes a lock inside (a `with` over a `threading.Condition`), a context "
                                       "manager Dynamo does not model",
        "Unsupported method call": "it is a C method Dynamo cannot call"}


@register
class SynchronisationCallInCompiledCode(TorchRule):
    """Checks for calls of the standard library's locks, queues and events from compiled code (`q.put(t)`,
    `lock.acquire()`, `done.set()`), where the receiver is known to hold one, as DYN614 knows an optimizer.
    `with lock:` blocks are DYN607's."""
    code = "DYN616"
    name = "synchronisation-call-in-compiled-code"
    message = "`{call}` on a `{cls}` inside compiled code: {how}, so Dynamo breaks the graph"
    fix = ("Return the tensor from the compiled function and hand it to the queue, the lock or the event eagerly, "
           "after the call; a queue's consumer runs in another thread anyway")
    gb_types = _gb_types(SYNC_CLASSES)
    why = """
        A `queue.Queue`'s `put`, `get`, `qsize`, a `threading.Event`'s `set` and `wait` and a `Semaphore`'s
        `acquire` take a `threading.Condition` inside (`with self.mutex:`), a context manager Dynamo does not
        model (`Unsupported context manager`); a `Lock`'s or `RLock`'s `acquire`/`release` and every method of
        a `queue.SimpleQueue` are C methods it cannot call (`Unsupported method call`). Either way the graph
        ends at the call and resumes after it, on every call. Which method breaks, and how, is measured on the
        installed torch (`bench/torch_methods.py`); `Event.is_set()` is traced.
    """
    INVALID = [Example("""
        import queue

        import torch

        class AsyncLogger:
            def __init__(self):
                self.q = queue.Queue()

            @torch.compile
            def push(self, x):
                y = x.relu()
                self.q.put(y.detach())
                return y * 2
    """, "AsyncLogger().push(torch.randn(4))"), Example("""
        import threading

        import torch

        LOCK = threading.Lock()

        @torch.compile
        def guarded(x):
            LOCK.acquire()
            y = x * 2
            LOCK.release()
            return y + 1
    """, "guarded(torch.ones(4))")]
    VALID = [Example("""
        import queue
        import threading

        import torch

        Q = queue.Queue()
        DONE = threading.Event()

        @torch.compile
        def step(x):
            if DONE.is_set():                   # traced: a plain attribute read
                return x
            return x.relu() * 2

        def push(x):
            y = step(x)
            Q.put(y.detach())                   # handed over eagerly, after the compiled call
            return y
    """, "push(torch.randn(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        hit = measured_call(self, node, SYNC_CLASSES, _SYNC_METHODS)
        if hit is None:
            return
        held, found = hit
        self.report(node, call=f"{source_of(node.func.value)}.{node.func.attr.value}()",
                    cls="/".join(sorted(held)), how=" / ".join(_HOW.get(gb, gb) for gb in sorted(found)))
