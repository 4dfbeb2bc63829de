"""Whole-project lookups over the index: resolve dotted names to functions and classes across files,
walk class hierarchies. Plain Python semantics; nothing here knows about torch.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, TypeVar

from dynlint.linter.index import ClassInfo, FunctionInfo, ModuleIndex

FuncRef = Tuple[str, str]    # (project-relative path, qualname)
T = TypeVar("T")


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


def class_bases(ix: ModuleIndex) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """Each class of a file with the last part of its bases' names as the file imports them
    (`from a import Foo as Bar; class X(Bar[int])` -> ("X", ("Foo",))): enough to tell, without loading other
    files' indexes, which classes may derive from a given one."""
    return tuple((name, tuple(ix.qualify(b).split("[", 1)[0].rsplit(".", 1)[-1] for b in info.bases))
                 for name, info in ix.classes.items())


class Facts:
    """What the whole project imports and which classes name which bases, read from every file's summary
    (the cache keeps it without the file's index): rel -> (module, dotted imports, class_bases)."""

    def __init__(self, files: Mapping[str, Tuple[str, Sequence[str], Sequence[Tuple[str, Sequence[str]]]]]):
        self.imported: Set[str] = set()
        self.by_parent: Dict[str, Set[str]] = {}              # "pkg.mod" -> {"pkg.mod.Name", ...} imported
        self.named: Dict[str, List[Tuple[str, str]]] = {}     # base name -> (rel, class) naming it as a base
        self.classes: Dict[str, List[str]] = {}
        self.importers: Dict[str, List[str]] = {}             # "pkg.mod.Name" / "pkg.mod" -> rels importing it
        for rel, (_, imports, classes) in files.items():
            self.imported.update(imports)
            for target in imports:
                self.importers.setdefault(target, []).append(rel)
            for target in imports:
                self.by_parent.setdefault(target.rpartition(".")[0], set()).add(target)
            self.classes[rel] = [name for name, _ in classes]
            for name, bases in classes:
                for base in bases:
                    self.named.setdefault(base, []).append((rel, name))

    @classmethod
    def of(cls, indexes: Iterable[ModuleIndex]) -> "Facts":
        return cls({ix.path: (ix.module, tuple(ix.imports.values()), class_bases(ix)) for ix in indexes})

    def maybe_derived(self, names: Iterable[str]) -> Iterator[Tuple[str, str]]:
        """The classes that may derive from classes named `names`, directly or not (by name only: a superset),
        nearest first."""
        seen, todo = set(), list(names)
        while todo:
            for ref in self.named.get(todo.pop(0), ()):
                if ref not in seen:
                    seen.add(ref)
                    yield ref
                    todo.append(ref[1].rsplit(".", 1)[-1])

    def outside(self, rel: str, module: str) -> tuple:
        """What other files say about this one's names (its imported names, the classes that may derive from
        its own): part of the file's check key, since its findings depend on them."""
        return (sorted(self.by_parent.get(module, ())),
                sorted(self.maybe_derived(c.rsplit(".", 1)[-1] for c in self.classes.get(rel, ()))))


class Project:
    def __init__(self, indexes: Iterable[ModuleIndex] = (), *, by_path: Optional[Mapping] = None,
                 modules: Optional[Dict[str, str]] = None, facts: Optional[Facts] = None):
        """From indexes, or from a (lazy) mapping rel -> index plus module name -> rel (and the project's
        Facts, so that no question below needs every file's index)."""
        self._resolved: Dict[Tuple[str, str, str], object] = {}
        self._bases: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
        self._subclassed: Dict[Tuple[str, str], bool] = {}
        self._facts = facts
        # (path, qualname) -> analysis/frames.Frame: the functions Dynamo compiles on their own, set by the
        # engine's frame pass (after the check pass has found the graph breaks) for the frame rules
        self.frames: Dict[Tuple[str, str], object] = {}
        # (path, line) of the calls in traced code that enter one of those functions (set by the same pass)
        self.entered: List[Tuple[str, int]] = []
        self._per_run: Dict[Callable, object] = {}     # `per_run`
        # rel -> the file's text as the index pass read it, or None: set by the engine (a picklable callable, for
        # worker processes), for analyses that read other files' code (analysis/tensors/foreign.py)
        self.sources: Optional[Callable[[str], Optional[str]]] = None
        if by_path is not None:
            self.by_path = by_path
            self.by_module = _ByModule(by_path, modules or {})
            return
        self.by_path: Dict[str, ModuleIndex] = {}
        self.by_module: Dict[str, ModuleIndex] = {}
        for ix in indexes:
            self.by_path[ix.path] = ix
            self.by_module.setdefault(ix.module, ix)

    def per_run(self, make: Callable[[], T]) -> T:
        """`make()`, built once per check run (one project) and shared by every unit of every file this process
        checks: the caches of an analysis, which a language server running many checks must not carry over."""
        if make not in self._per_run:
            self._per_run[make] = make()
        return self._per_run[make]

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_per_run": {}}      # a worker process fills its own

    @property
    def facts(self) -> Facts:
        if self._facts is None:
            self._facts = Facts.of(self.by_path.values())
        return self._facts

    def imported(self, dotted: str) -> bool:
        """Some file of the project imports exactly `dotted`."""
        return dotted in self.facts.imported

    def subclasses(self, path: str, cls: str) -> Iterator[Tuple[str, str]]:
        """The project classes deriving from `cls` (path, name), directly or not, lazily. Loads only the
        indexes of the files whose classes name a base like it."""
        key = (path, cls)
        for ref in self.facts.maybe_derived([cls.rsplit(".", 1)[-1]]):
            if ref[0] in self.by_path and key in self.bases(*ref):
                yield ref

    def subclassed(self, path: str, cls: str) -> bool:
        key = (path, cls)
        if key not in self._subclassed:
            self._subclassed[key] = next(self.subclasses(path, cls), None) is not None
        return self._subclassed[key]

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
