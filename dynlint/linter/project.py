"""Whole-project lookups over the index: resolve dotted names to functions and classes across files,
walk class hierarchies. Plain Python semantics; nothing here knows about torch.
"""
from __future__ import annotations

from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from dynlint.linter.index import ClassInfo, FunctionInfo, ModuleIndex

FuncRef = Tuple[str, str]    # (project-relative path, qualname)


class Project:
    def __init__(self, indexes: Iterable[ModuleIndex]):
        self.by_path: Dict[str, ModuleIndex] = {}
        self.by_module: Dict[str, ModuleIndex] = {}
        for ix in indexes:
            self.by_path[ix.path] = ix
            self.by_module.setdefault(ix.module, ix)

    def function(self, ref: FuncRef) -> FunctionInfo:
        return self.by_path[ref[0]].functions[ref[1]]

    def _split(self, dotted: str) -> Optional[Tuple[ModuleIndex, str]]:
        """'pkg.mod.Name.attr' -> (index of pkg.mod, 'Name.attr'), longest module prefix first.
        Also follows one re-export hop (`from .mod import Name` in a package __init__)."""
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            ix = self.by_module.get(".".join(parts[:i]))
            if ix is not None:
                rest = ".".join(parts[i:])
                head = parts[i]
                if head not in ix.functions and head not in ix.classes and head in ix.imports:
                    target = ix.imports[head] + rest[len(head):]
                    if target != dotted:
                        return self._split(target)
                return ix, rest
        return None

    def resolve(self, ix: ModuleIndex, dotted: str, scope: str = ""):
        """Resolve a dotted name seen in module `ix` (inside function `scope`) to
        ("function", FuncRef) or ("class", (path, ClassInfo)) or None."""
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

    def bases(self, path: str, cls: str) -> Iterator[Tuple[str, str]]:
        """Project base classes of `cls` (path, name), nearest first (depth-first, like a simple MRO)."""
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
