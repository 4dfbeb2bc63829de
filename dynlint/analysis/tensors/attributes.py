"""What an attribute is (`Tensors`' part for `a.b`): a tensor a class makes its own (`self.timesteps =
torch.from_numpy(...)` in any method, a registered buffer, an inherited parameter), read through `self`, through
a name bound to an instance (`sched.timesteps`), through an attribute of `self` holding one
(`self.scheduler.timesteps`), or a field a parameter's annotated class declares (`batch.tokens`)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from dynlint.analysis.held import held_by_attribute, held_by_name, passed_constructions
from dynlint.analysis.names import is_module_base
from dynlint.analysis.tensors.kinds import TENSOR, TENSORS, UNKNOWN, VALUE, WEAK
from dynlint.analysis.tensors.syntax import tensor_field
from dynlint.analysis.tensors.torch_api import (INHERITED_PARAMS, NP_ARRAY_CTORS, PARAMETRISED_LAYERS,
                                                TENSOR_ANNOTATIONS, TENSOR_CTORS, VALUE_ATTRS)
from dynlint.analysis.torch_returns import RETURN_FIELDS


class AttributeKinds:
    """Mixed into `Tensors`: uses its context (`ctx`), `_kind`, `_within`, `_self_class`, `_qualname_of`,
    `_env_of`, `_torch_call` and its memo of classes' tensor attributes (`_self_attrs`)."""

    def _attribute_kind(self, node: cst.Attribute) -> str:
        attr = node.attr.value
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            return VALUE if attr == "training" else self._self_attr_kind(attr)
        if attr in VALUE_ATTRS:
            return VALUE
        q = self.ctx.qualify(node)
        if q and q.startswith("torch.") and q.split(".")[-1][:1].islower() and q.count(".") >= 1:
            # torch.float32, torch.pi: constants are values
            return VALUE
        if isinstance(node.value, cst.Name):
            field = self._field_kind(node.value.value, attr)
            if field is not None:
                return field
            if self._instance_attr_kind(node.value.value, attr) == TENSOR:
                return TENSOR
        if self._held_attr_kind(node.value, attr) == TENSOR:
            return TENSOR
        base = self._kind(node.value)
        if attr in ("T", "mT", "H", "mH", "data", "grad", "real", "imag") and base in (TENSOR, WEAK):
            return base
        if attr in RETURN_FIELDS and (base == TENSORS or base == TENSOR and isinstance(node.value, cst.Call)):
            return TENSOR           # a field of a named tuple torch returns: `x.topk(k).values`, `x.max(1).indices`
        return UNKNOWN if base != VALUE else VALUE

    def _self_attr_kind(self, attr: str) -> str:
        return self._class_attr_kind(self._self_class(), attr)

    def _instance_attr_kind(self, name: str, attr: str) -> str:
        """`sched.timesteps` where the function (or the module) binds `sched` once, to an instance of a class of
        this file (`sched = Scheduler()`): what the class's methods make `self.timesteps`."""
        ix = self.ctx.index
        fn = self._within[-1] if self._within else None         # a caller being judged, else the unit's own
        here = ix.functions.get(self._qualname_of(fn) if fn is not None else self.ctx.qualname or "") \
            if ix is not None else None
        made = ix.built(name, here) if ix is not None else []
        if len(made) == 1:
            return self._class_attr_kind(made[0], attr)
        project = self.ctx.project
        held = held_by_name(project, ix, here, name) if here is not None and project is not None else ()
        # a parameter every caller passes an instance of one class to, of this file or another
        return self._held_kind(held, attr)

    def _held_attr_kind(self, node: cst.BaseExpression, attr: str) -> str:
        """`self.scheduler.timesteps` where `self.scheduler` holds instances of project classes (what the class
        builds into it, what its constructions pass, else the type its `__init__` declares): a tensor when each
        of them makes `timesteps` one."""
        project, ix = self.ctx.project, self.ctx.index
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"
                and project is not None and ix is not None and self._self_class() in ix.classes):
            return UNKNOWN
        return self._held_kind(held_by_attribute(project, ix, self._self_class(), node.attr.value), attr)

    def _held_kind(self, held, attr: str) -> str:
        """TENSOR when every one of the qualified classes `held` (at least one) makes `attr` a tensor."""
        project, ix = self.ctx.project, self.ctx.index
        refs = [project.resolve(ix, q) for q in held]
        if not refs or any(not r or r[0] != "class" for r in refs):
            return UNKNOWN
        kinds = {self._class_attr_kind(r[1][1].name, attr, r[1][0]) for r in refs}
        return TENSOR if kinds == {TENSOR} else UNKNOWN

    def _class_attr_kind(self, cls: str, attr: str, path: str = "") -> str:
        project, ix = self.ctx.project, self.ctx.index
        path = path or (ix.path if ix is not None else "")
        if not (cls and ix and project and cls in project.by_path[path].classes):
            return UNKNOWN
        if (path, cls) not in self._self_attrs:
            found = self._self_attrs[(path, cls)] = set()
            for p, c in [(path, cls), *project.bases(path, cls)]:
                info = project.by_path[p].classes.get(c)
                if not info:
                    continue
                found.update(info.registered)
                for a, ctors in info.attrs.items():
                    q = [project.by_path[p].qualify(x) for x in ctors]
                    # the first assignment makes a tensor, or every one a tensor or a NumPy array (which a
                    # module attribute read in traced code is to Dynamo: `self.timesteps = np.arange(n)` in
                    # one method, `torch.from_numpy(...)` in another)
                    if q and (self._makes_tensor(q[0]) or
                              all(self._makes_tensor(x) or x in NP_ARRAY_CTORS for x in q)):
                        found.add(a)
            # a subclass of nn.Linear / nn.Conv2d / nn.LayerNorm ... inherits its parameters
            for base in project.external_bases(path, cls):
                head, _, last = base.rpartition(".")
                if head.startswith("torch.nn") and last in PARAMETRISED_LAYERS:
                    found.update(INHERITED_PARAMS)
        return TENSOR if attr in self._self_attrs[(path, cls)] else UNKNOWN

    def _makes_tensor(self, q: str) -> bool:
        return q in TENSOR_CTORS or (q.startswith("torch.") and self._torch_call(q) == TENSOR)

    def _submodule(self, attr: str) -> bool:
        project, ix, cls = self.ctx.project, self.ctx.index, self._self_class()
        if not (cls and ix and project and cls in ix.classes):
            return False
        for p, c in [(ix.path, cls), *project.bases(ix.path, cls)]:
            info = project.by_path[p].classes.get(c)
            for ctor in (info.attrs.get(attr, []) if info else []):
                q = project.by_path[p].qualify(ctor)
                if is_module_base(q):
                    return True
                r = project.resolve(project.by_path[p], ctor)
                if r and r[0] == "class":
                    return True
            if info is not None and attr in info.param_attrs and self._modules_passed(p, c, info.param_attrs[attr]):
                return True
        return False

    def _modules_passed(self, path: str, cls: str, param: str) -> bool:
        """Every call of the class that the project makes passes a module for `__init__`'s `param` (`BYOL(Encoder())`,
        `self.student = student`): an `nn.*` layer or a class of the project (at least one such call)."""
        project = self.ctx.project
        ix = project.by_path[path]
        init = ix.functions.get(f"{cls}.__init__")
        passed = passed_constructions(project, ix, init, param) if init is not None else None
        if not passed:
            return False
        for caller, ctor in passed:
            r = project.resolve(caller, ctor)
            if not (is_module_base(caller.qualify(ctor)) or r and r[0] == "class"):
                return False
        return True

    def _field_kind(self, name: str, attr: str) -> Optional[str]:
        """`batch.tokens` where `batch` is a parameter annotated with a class of this file (a dataclass, a
        NamedTuple, any class) that annotates `tokens: torch.Tensor` in its body: a tensor. None otherwise."""
        fn = self._within[-1] if self._within else \
            next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if fn is None or self.ctx.index is None:
            return None
        params = list(fn.params.posonly_params) + list(fn.params.params) + list(fn.params.kwonly_params)
        p = next((p for p in params if p.name.value == name and p.annotation is not None), None)
        entry = self._env_of(fn).get(name) if p is not None else None
        if p is None or (isinstance(entry, list) and entry):
            return None                 # (rebound in the body: not only the parameter any more)
        cls = (self.ctx.qualify(p.annotation.annotation) or "").rpartition(".")[2]
        if cls not in self.ctx.index.classes:
            return None
        return TENSOR if tensor_field(self.ctx.source or "", cls, attr, TENSOR_ANNOTATIONS) else None
