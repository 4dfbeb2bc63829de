"""Whole-project lookups over the index: resolve dotted names to functions and classes across files,
walk class hierarchies. Plain Python semantics; nothing here knows about torch.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from dynlint.core.index import ClassInfo, FunctionInfo, ModuleIndex

FuncRef = Tuple[str, str]    # (project-relative path, qualname)


class _ByModule(Mapping):
    """module name -> index, through a rel -> index mapping (which may load indexes lazily)."""

    def __init__(self, by_path: Mapping, modules: Dict[str, str]):
        self._by_path, self._modules = by_path, modules

    def __getitem__(self, module: str) -> ModuleIndex:
        return self._by_path[self._modules[module]]

    def __iter__(self):
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


class Project:
    def __init__(self, indexes: Iterable[ModuleIndex] = (), *, by_path: Optional[Mapping] = None,
                 modules: Optional[Dict[str, str]] = None):
        """From indexes, or from a (lazy) mapping rel -> index plus module name -> rel."""
        self._resolved: Dict[Tuple[str, str, str], object] = {}
        self._bases: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
        if by_path is not None:
            self.by_path = by_path
            self.by_module = _ByModule(by_path, modules or {})
            return
        self.by_path: Dict[str, ModuleIndex] = {}
        self.by_module: Dict[str, ModuleIndex] = {}
        for ix in indexes:
            self.by_path[ix.path] = ix
            self.by_module.setdefault(ix.module, ix)

    def function(self, ref: FuncRef) -> FunctionInfo:
        return self.by_path[ref[0]].functions[ref[1]]

    def _split(self, dotted: str, _seen: FrozenSet[str] = frozenset()) -> Optional[Tuple[ModuleIndex, str]]:
        """'pkg.mod.Name.attr' -> (index of pkg.mod, 'Name.attr'), longest module prefix first.
        Also follows re-export hops (`from .mod import Name` in a package __init__). Hops that come back to a
        name already seen, or go on and on (`from .a import a` in a package whose module `a` is not in the
        project makes `pkg.a.f` -> `pkg.a.a.f` -> ...), resolve to None."""
        if dotted in _seen or len(_seen) > 32:
            return None
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            ix = self.by_module.get(".".join(parts[:i]))
            if ix is not None:
                rest = ".".join(parts[i:])
                head = parts[i]
                if head not in ix.functions and head not in ix.classes and head in ix.imports:
                    target = ix.imports[head] + rest[len(head):]
                    if target != dotted:
                        return self._split(target, _seen | {dotted})
                return ix, rest
        return None

    def resolve(self, ix: ModuleIndex, dotted: str, scope: str = ""):
        """Resolve a dotted name seen in module `ix` (inside function `scope`) to
        ("function", FuncRef) or ("class", (path, ClassInfo)) or None. Memoised: the region pass asks the same
        questions hundreds of thousands of times on a large project."""
        key = (ix.path, dotted, scope)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(ix, dotted, scope)
        return self._resolved[key]

    def _resolve(self, ix: ModuleIndex, dotted: str, scope: str):
        head = dotted.split(".")[0]
        # nested functions: `inner()` inside `outer` is `outer.inner`
        while scope:
            if f"{scope}.{dotted}" in ix.functions:
                return "function", (ix.path, f"{scope}.{dotted}")
            scope = scope.rpartition(".")[0]
        if head in ix.functions or head in ix.classes:
            found: Optional[Tuple[ModuleIndex, str]] = (ix, dotted)
        else:
            found = self._split(ix.qualify(dotted))
        if not found:
            return None
        mix, rest = found
        if rest in mix.functions and "." not in rest:
            return "function", (mix.path, rest)
        if rest in mix.classes:
            return "class", (mix.path, mix.classes[rest])
        cls, _, meth = rest.partition(".")
        if cls in mix.classes and meth:
            ref = self.method(mix.path, cls, meth)
            return ("function", ref) if ref else None
        return None

    def class_info(self, path: str, name: str) -> Optional[ClassInfo]:
        return self.by_path[path].classes.get(name)

    def bases(self, path: str, cls: str) -> List[Tuple[str, str]]:
        """Project base classes of `cls` (path, name), nearest first (depth-first, like a simple MRO)."""
        key = (path, cls)
        if key not in self._bases:
            self._bases[key] = list(self._walk_bases(path, cls))
        return self._bases[key]

    def _walk_bases(self, path: str, cls: str) -> Iterator[Tuple[str, str]]:
        seen = set()
        stack = [(path, cls)]
        while stack:
            p, c = stack.pop(0)
            info = self.class_info(p, c)
            if not info:
                continue
            for b in info.bases:
                r = self.resolve(self.by_path[p], b)
                if r and r[0] == "class":
                    key = (r[1][0], r[1][1].name)
                    if key not in seen:
                        seen.add(key)
                        yield key
                        stack.append(key)

    def external_bases(self, path: str, cls: str) -> List[str]:
        """Dotted names of the non-project base classes reached from `cls`."""
        out = []
        for p, c in [(path, cls), *self.bases(path, cls)]:
            ix = self.by_path[p]
            info = ix.classes.get(c)
            for b in info.bases if info else ():
                r = self.resolve(ix, b)
                if not r:
                    out.append(ix.qualify(b))
        return out

    def method(self, path: str, cls: str, name: str) -> Optional[FuncRef]:
        for p, c in [(path, cls), *self.bases(path, cls)]:
            q = f"{c}.{name}"
            if q in self.by_path[p].functions:
                return p, q
        return None

    def attr_classes(self, path: str, cls: str, attr: str) -> List[Tuple[str, ClassInfo]]:
        """Project classes held by `self.<attr>` (assigned in this class or a base)."""
        out = []
        for p, c in [(path, cls), *self.bases(path, cls)]:
            ix = self.by_path[p]
            info = ix.classes.get(c)
            for ctor in (info.attrs.get(attr, []) if info else []):
                r = self.resolve(ix, ctor)
                if r and r[0] == "class":
                    out.append(r[1])
        return out
