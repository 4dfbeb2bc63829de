"""DYN615: module hooks registered or removed while Dynamo traces."""
from __future__ import annotations

import ast
from typing import Set

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.tensors.kinds import TENSOR, WEAK
from dynlint.linter.rule import Example, register
from dynlint.rules.common import TorchRule

# A module's hook registrations: each returns a `RemovableHandle` (a tensor's own `register_hook` is traced).
MODULE_HOOKS = frozenset({"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                          "register_full_backward_pre_hook", "register_backward_hook"})


@register
class HookChangedInCompiledCode(TorchRule):
    """Checks for traced code that registers a hook on a module (`mod.register_forward_hook(fn)`) or removes
    one (`handle.remove()` on what a registration returned)."""
    code = "DYN615"
    name = "module-hook-changed-in-compiled-code"
    message = "{what} inside compiled code: Dynamo cannot trace the hook handle and breaks the graph"
    fix = ("Register hooks once, outside the compiled code (in `__init__` or before compiling), and switch them "
           "with a flag they read, instead of adding and removing them on every call")
    gb_types = ("setattr() on unsupported type", "Attempted to represent unregistered RemovableHandle")
    why = """
        A module hook registration makes a `torch.utils.hooks.RemovableHandle`, whose class counts handles
        (`RemovableHandle.next_id += 1`): Dynamo cannot set an attribute of a class it did not make and breaks
        the graph there (`setattr() on unsupported type`), and a handle made before the frame cannot be
        represented in the graph, so its `.remove()` breaks too (`Attempted to represent unregistered
        RemovableHandle`, which Dynamo cannot resume from: it runs the whole function eagerly). After a
        registration inside a loop the whole function runs eagerly, so a `.remove()` after it is not reported.
        A tensor's own `t.register_hook(fn)` is traced (a backward hook of the graph) and not reported.
    """
    INVALID = [Example("""
        import torch
        from torch import nn

        class Tap(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
                self.feats = {}

            def forward(self, x):
                handle = self.body[0].register_forward_hook(self._save)
                out = self.body(x)
                handle.remove()
                return out

            def _save(self, mod, inp, out):
                self.feats["first"] = out.detach()

        model = torch.compile(Tap())
    """, "model(torch.ones(2, 4))"), Example("""
        import torch
        from torch import nn

        class Probe(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.handle = self.body.register_forward_hook(lambda m, i, o: None)

            def forward(self, x):
                out = self.body(x)
                self.handle.remove()            # made in __init__, removed while tracing
                return out

        model = torch.compile(Probe())
    """, "model(torch.ones(2, 4))")]
    VALID = [Example("""
        import torch
        from torch import nn

        class Tap(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
                self.body[0].register_forward_hook(self._scale)    # once, outside the traced code

            def forward(self, x, scale):
                x = x * scale
                x.register_hook(lambda g: g * 0.5)                  # a tensor's hook: traced
                return self.body(x)

            def _scale(self, mod, inp, out):
                return out * 0.5

        model = torch.compile(Tap())
    """, "model(torch.ones(2, 4, requires_grad=True), 2.0).sum().backward()")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._handles: Set[str] = set()         # names and `self.` attributes bound to a registration's handle
        self._skipped: Set[int] = set()         # functions whose registration in a loop makes Dynamo skip them

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method, receiver = func.attr.value, func.value
        fn = self.ctx.functions[-1] if self.ctx.functions else None
        if method in MODULE_HOOKS and self.tensors.kind(receiver) not in (TENSOR, WEAK):
            self.report(node, what=f"`.{method}()` on a module")
            if any(isinstance(b, (cst.For, cst.While)) for b in self.ctx.blocks):
                self._skipped.add(id(fn))       # a break in a loop: Dynamo runs the whole function eagerly
        elif method == "remove" and not node.args and id(fn) not in self._skipped and \
                _text(receiver) in self._handles | self._kept_handles():
            self.report(node, what="removing a hook (`.remove()` on its handle)")
        elif method == "append" and node.args and _registers(node.args[0].value) and _text(receiver):
            self._handles.add(_text(receiver))      # `handles.append(m.register_forward_hook(...))`

    def visit_Assign(self, node: cst.Assign) -> None:
        if _registers(node.value):
            self._handles.update(_text(t.target) for t in node.targets)

    def visit_For(self, node: cst.For) -> None:
        # `for h in handles: h.remove()` where `handles` holds registrations' handles
        if _text(node.iter) in self._handles | self._kept_handles() and isinstance(node.target, cst.Name):
            self._handles.add(node.target.value)

    def _kept_handles(self) -> Set[str]:
        """`self.<attr>` that a method of the class binds to a registration's handle (`self.handle =
        m.register_forward_hook(...)`) or appends one to (`self.handles.append(...)`): the class's own source."""
        cls = self.ctx.class_name
        return self.ctx.analysis(_class_handles, cls) if cls else set()


def _class_handles(ctx, cls: str) -> Set[str]:
    """An analysis: the `self.<attr>` names that methods of the file's class `cls` bind to a hook handle or
    append handles to."""
    tree = guard_lines.parsed(ctx.source or "")
    out: Set[str] = set()
    for c in (n for n in (tree.body if tree is not None else ()) if isinstance(n, ast.ClassDef) and n.name == cls):
        for n in ast.walk(c):
            if isinstance(n, ast.Assign) and _registers_ast(n.value):
                out.update(d for d in (guard_lines.dotted(t) or "" for t in n.targets) if d.startswith("self."))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append" and \
                    n.args and _registers_ast(n.args[0]) and (guard_lines.dotted(n.func.value) or "").startswith("self."):
                out.add(guard_lines.dotted(n.func.value))
    return out


def _registers_ast(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MODULE_HOOKS


def _registers(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in MODULE_HOOKS


def _text(node: cst.CSTNode) -> str:
    """`a`, `self.a`, `a.b` as text; "" for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _text(node.value)
        return f"{inner}.{node.attr.value}" if inner else ""
    return ""
