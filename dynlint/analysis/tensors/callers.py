"""The kinds of a method's or helper's plain parameters, read from its calls (`Tensors`' part that judges
callers: `self.block(x, h, w)` tells what `Block.forward`'s `x`, `h`, `w` are), in this file and, through
foreign.py, in the others; and what a parameter that callers hand a module runs when called (`model(x)`)."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.held import held_by_name
from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors.assignments import calls_through, read_file_facts
from dynlint.analysis.tensors.foreign import compiled_kinds, foreign_kinds, passed_kinds, receiver_kinds
from dynlint.analysis.tensors.kinds import TENSOR, UNKNOWN, VALUE, combined


class CallerKinds:
    """Mixed into `Tensors`: uses its context (`ctx`), per-run facts (`_run`), its memo of callers (`_callers`),
    `kind`, `within`, `_within`, `_helper_def`, `_read_once` and `_self_class`."""

    def _from_callers(self, fn: cst.FunctionDef) -> Optional[Dict[str, str]]:
        """The kinds of a method's plain parameters (no annotation, no default) from every call of it in this file:
        `self.block(x, h, w)` where `__init__` made `block` an instance of the method's class (directly, in a
        ModuleList, called in a loop over it, or indexed), for `forward`; `self.method(x, h)` in the class itself,
        for its other methods; `helper(x, n)` for a function of the file's top level. A parameter is what all the
        arguments passed to it are (`combine`): a tensor, a Python value, or unknown when they disagree or one is
        not known; unknown stays unknown. None (not known: the parameter keeps its default) when the class may be
        used where this file cannot see: subclassed, named anywhere but in the calls that build it, imported by
        another file, or a call passes `*args` / `**kw`."""
        cls = self._self_class()
        ix, project = self.ctx.index, self.ctx.project
        if ix is None or project is None or (cls and cls not in ix.classes):
            return None
        if not cls:
            info = ix.functions.get(self._qualname_of(fn))
            if info is None or info.cls or (info.nested_in and self._compiled_alias(info) is None):
                return None     # a function of this file's top level, or one compiled where it is defined
        key = (cls, info.qualname if not cls else fn.name.value)
        if key in self._callers:
            return self._callers[key]
        shared = self._run.callers.get(ix, dict)                 # the same for every unit of the file: judged once
        if (key, self.strict) in shared:
            self._callers[key] = shared[(key, self.strict)]
            return self._callers[key]
        self._callers[key] = None                       # a call chain back to itself: not known
        if len(self._within) < 4:                       # callers' callers are judged too, to a depth
            self._callers[key] = self._read_callers(fn, cls)
            if not self._within:                        # (judged from the top: not cut short by the depth)
                shared[(key, self.strict)] = self._callers[key]
        return self._callers[key]

    def _plain_params(self, fn: cst.FunctionDef, cls: str,
                      shared: bool = False) -> Optional[Tuple[List[str], List[str]]]:
        """(the parameters bound by position, those of them and the keyword-only ones with no annotation and no
        default) of a function whose callers can be read; None when they cannot (`*args`, no `self`, a class used
        elsewhere)."""
        ix, project = self.ctx.index, self.ctx.project
        ordered = list(fn.params.posonly_params) + list(fn.params.params)
        skip = 1 if cls else 0                           # `self`
        # (a parameter annotated as a number too: Dynamo does not read annotations, a tensor passed is a tensor)
        plain = [p.name.value for p in ordered[skip:] + list(fn.params.kwonly_params) if p.default is None and
                 (p.annotation is None or self._annotation_kind(p.annotation.annotation) == VALUE)]
        if not plain or len(ordered) < skip or (cls and ordered[0].name.value != "self") or \
                isinstance(fn.params.star_arg, cst.Param):
            return None
        qual = f"{ix.module}.{cls or fn.name.value}"
        if cls and not shared and ((project.imported(qual) and not self._only_called_here(cls, fn.name.value)) or
                                   project.subclassed(ix.path, cls)):
            return None         # (a function imported elsewhere: `_read_callers` reads those files' calls too)
        return [p.name.value for p in ordered[skip:]], plain

    def _only_called_here(self, cls: str, method: str) -> bool:
        """No file importing the class (or its module) calls a method of that name, so its calls are all in this
        file: `self._get_variance(t, prev)` in the class (not `forward`, which calling an instance runs)."""
        ix, project = self.ctx.index, self.ctx.project
        if method == "forward" or method.startswith("__"):
            return False
        rels = set(project.facts.importers.get(f"{ix.module}.{cls}", ())) | \
            set(project.facts.importers.get(ix.module, ()))
        called = project.per_run(_called_names)
        for rel in rels:
            if rel not in called:
                other = project.by_path.get(rel)
                called[rel] = None if other is None else \
                    {c.target.rpartition(".")[2] for f in [*other.functions.values(), other] for c in
                     (f.calls if f is not other else other.module_calls)}
            if called[rel] is None or method in called[rel]:
                return False
        return True

    def _read_callers(self, fn: cst.FunctionDef, cls: str) -> Optional[Dict[str, str]]:
        ix, project = self.ctx.index, self.ctx.project
        method = fn.name.value
        params = self._plain_params(fn, cls)
        if params is None:
            # a method of a class used elsewhere: what the calls of `torch.compile(obj.method)` pass, if any
            params = self._plain_params(fn, cls, shared=True) if cls and method != "forward" else None
            return _combined(self._called_outside(cls, method, *params)) if params is not None else None
        positions, plain = params
        foreign = None
        if not cls and (project.imported(f"{ix.module}.{method}") or project.imported(ix.module)):
            foreign = foreign_kinds(self, method, positions, plain)    # what other files' calls pass
            if foreign is None:
                return None
        callers, holders, names, alias = self._callers_in_file(fn, cls)
        if alias is None and not callers and foreign is None:
            found = self._called_outside(cls, method, positions, plain) if method != "forward" else None
            return _combined(found) if found is not None else {}
        if alias is None and callers and not self._called_only_here(method, cls, holders):
            return None
        kinds = self._argument_kinds(callers, holders, names, positions, plain)
        if alias is not None and kinds is not None and not any(kinds.values()):
            kinds = compiled_kinds(self, cls, method, positions, plain)     # the alias is handed on, not called
        if kinds is None:
            return None
        for name, found in ((foreign or {}) if alias is None else {}).items():
            kinds[name] += found
        found = _combined(kinds)
        # through an alias or a local instance, what its calls do not tell keeps the parameter's own kind
        return {n: k for n, k in found.items() if k != UNKNOWN} if alias is not None else found

    def _called_outside(self, cls: str, method: str, positions: List[str],
                        plain: List[str]) -> Optional[Dict[str, List[str]]]:
        """Parameter -> the kinds passed by the calls of `step = torch.compile(sched.step)` and, for a method, by
        the calls in other files through what holds an instance (`self.sched.step(out, t, x)`); None when there
        are none or one cannot be read."""
        found = [compiled_kinds(self, cls, method, positions, plain)]
        if cls:
            found.append(receiver_kinds(self, cls, method, positions, plain))
        found = [f for f in found if f is not None]
        return {p: [k for f in found for k in f[p]] for p in plain} if found else None

    def _callers_in_file(self, fn: cst.FunctionDef, cls: str):
        """(the functions of this file calling it, the (class, attribute) pairs holding instances of its class,
        the names it is called by, the compiled alias or local instance its calls go through, or None)."""
        ix, project = self.ctx.index, self.ctx.project
        method = fn.name.value
        holders_of, sites = self._run.file_facts.get(ix, lambda: read_file_facts(project, ix))
        holders = holders_of.get(cls, set()) if method == "forward" else {(cls, method)} if cls else set()
        names = set() if cls else {method}
        callers = {q for key in [("self", c, attr) for c, attr in holders] + [("name", "", n) for n in names]
                   for q in sites.get(key, ())}
        alias = None if callers else self._instance_called(cls) if method == "forward" else \
            self._compiled_alias(ix.functions[self._qualname_of(fn) if not cls else f"{cls}.{method}"])
        if alias is not None:           # `opt = torch.compile(fn)` ... `opt(x, 2)`: what its calls pass
            callers, names = {alias[0]}, {alias[1]}
        return callers, holders, names, alias

    def _handed_module(self, name: str) -> Optional[Tuple[cst.FunctionDef, List[cst.BaseExpression], str]]:
        """`model(feats)` where `model` is a parameter every call passes an instance of one module class of this
        file: that class's `forward`, as `_submodule_forward` reads one (the unit's own function only)."""
        ix, project = self.ctx.index, self.ctx.project
        fn = next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        here = ix.functions.get(self.ctx.qualname) if ix is not None and fn is not None else None
        if here is None or self._within or name not in here.params or project is None:
            return None
        held = held_by_name(project, ix, here, name)
        r = project.resolve(ix, next(iter(held))) if len(held) == 1 else None
        if not r or r[0] != "class" or r[1][0] != ix.path:
            return None
        target = r[1][1]
        fwd = ix.functions.get(f"{target.name}.forward")
        if fwd is None or fwd.decorators or "__call__" in target.methods or \
                not is_module_class(project, ix.path, target.name) or project.subclassed(ix.path, target.name):
            return None
        return self._read_once(f"{target.name}.forward", fwd, target.name)

    def _qualname_of(self, fn: cst.FunctionDef) -> str:
        """The qualname of a function of the file: one of its top level, or one nested in the functions being
        walked (`test_mode.fn`)."""
        ix, name = self.ctx.index, fn.name.value
        top = ix.functions.get(name)
        if (top is not None and not top.nested_in) or fn not in self.ctx.functions:
            return name
        chain = self.ctx.functions[:self.ctx.functions.index(fn) + 1]
        return ".".join(f.name.value for f in chain if isinstance(f, cst.FunctionDef))

    def _compiled_alias(self, info) -> Optional[Tuple[str, str]]:
        """(caller, alias) when the function's one use is `alias = torch.compile(fn)` in one function of the file
        (its enclosing one, for a nested def), which binds `alias` once: that function's calls of `alias` are
        the function's only calls. A method likewise, compiled bound to an instance that function builds
        (`ps = Particles(16)`, `step = torch.compile(ps.step)`). None otherwise."""
        ix, lines = self.ctx.index, (self.ctx.source or "").splitlines()
        name = info.qualname.rsplit(".", 1)[-1]

        def compiled(f, arg: str) -> bool:
            if not info.cls:
                return arg == name
            head, _, attr = arg.partition(".")
            made = f.instances.get(head, [])
            return attr == name and len(made) == 1 and ix.qualify(made[0]) == ix.qualify(info.cls)
        hits = [(q, c) for q, f in ix.functions.items() if not info.nested_in or q == info.nested_in
                for c in f.calls if c.kind == "name" and c.args and compiled(f, c.args[0]) and
                ix.qualify(c.target) == "torch.compile"]
        if len(hits) != 1 or not 0 < hits[0][1].line <= len(lines):
            return None
        q, call = hits[0]
        m = re.match(r"\s*(\w+)\s*=\s*[\w.]*compile\(", lines[call.line - 1])
        caller = ix.functions[q]
        scope = lines[caller.def_line - 1:caller.end] if info.nested_in else lines
        # named elsewhere too (a method: read as an attribute elsewhere): called or handed on where this file cannot
        # follow
        named = rf"\.{re.escape(name)}\b" if info.cls else rf"\b{re.escape(name)}\b"
        if m is None or sum(len(re.findall(named, ln)) for ln in scope) != (1 if info.cls else 2):
            return None
        own = lines[caller.def_line - 1:caller.end]
        if sum(bool(re.match(rf"\s*{m.group(1)}\s*=", ln)) for ln in own) != 1:
            return None
        return q, m.group(1)

    def _instance_called(self, cls: str) -> Optional[Tuple[str, str]]:
        """(function, name) when the class is built once in this file, into a local of one function that only
        calls it (`tu = Truncated()`, `tu.compile()` or `tu = torch.compile(tu)`, `tu(x, 2)`): its forward's
        only calls. None otherwise (the instance may be handed on, or the class built elsewhere)."""
        ix, lines = self.ctx.index, (self.ctx.source or "").splitlines()
        refs = self._run.refs.get(ix, lambda: {n: (named, called) for n, named, called in getattr(ix, "refs", ())})
        if refs.get(cls, (0, 0)) != (1, 1):
            return None
        made = [(q, n) for q, f in ix.functions.items() for n, ctors in f.instances.items() if ix.qualify(ctors[0]) ==
                ix.qualify(cls) and len(ctors) == 1]
        if len(made) != 1 or ix.module_instances.get(made[0][1]):
            return None
        q, name = made[0]
        fn = ix.functions[q]
        for line in lines[fn.def_line:fn.end]:
            for m in re.finditer(rf"\b{re.escape(name)}\b", line):
                after, before = line[m.end():].lstrip(), line[:m.start()].rstrip()
                assigned = after.startswith("=") and not after.startswith("==") and not before
                if not (assigned or after.startswith("(") or re.match(r"\.(compile|eval|train|to|cuda)\(", after)
                        or before.endswith("torch.compile(")):
                    return None         # handed on, returned, stored: called where this file cannot see
        return q, name

    def _called_only_here(self, method: str, cls: str, holders: Set[Tuple[str, str]]) -> bool:
        """The calls `_read_callers` reads are all there are: a function of this file is called by its name, in
        this file only; a class is named only in the calls that build it, each an attribute of `holders`."""
        ix = self.ctx.index
        refs = self._run.refs.get(ix, lambda: {n: (named, called) for n, named, called in getattr(ix, "refs", ())})
        if not cls:
            return len(set(refs.get(method, (0, 0)))) == 1 and not any(c.target == method for c in ix.module_calls)
        if method == "forward":
            named, built = refs.get(cls, (0, 0))
            return named == built and sum(ix.classes[c].attrs[attr].count(cls) for c, attr in holders) == built
        return True

    def _argument_kinds(self, callers: Set[str], holders: Set[Tuple[str, str]], names: Set[str],
                        positions: List[str], plain: List[str]) -> Optional[Dict[str, List[str]]]:
        """Parameter -> the kinds of the arguments passed to it by every call in `callers` (qualnames of this
        file's functions) through `holders` or by `names`; None when a caller cannot be read or passes `*args`."""
        ix = self.ctx.index
        kinds: Dict[str, List[str]] = {name: [] for name in plain}
        for q in sorted(callers):
            info = ix.functions[q]
            caller = self._helper_def(info)
            if caller is None:
                return None
            calls = calls_through(caller, {attr for c, attr in holders if c == info.cls}, names)
            mine: Dict[str, List[str]] = {name: [] for name in plain}
            if not passed_kinds(self, caller, info.cls, calls, positions, mine):
                return None
            eager = q not in self.ctx.regions           # (a tensor it passes is no break in traced code)
            for name, found in mine.items():
                kinds[name] += [EAGER_TENSOR if eager and k == TENSOR else k for k in found]
        return kinds


# a tensor passed by a caller that runs eagerly (not traced): a tensor as any other, but no evidence that the
# traced code gets one
EAGER_TENSOR = "eager tensor"


def _combined(found: Optional[Dict[str, List[str]]]) -> Optional[Dict[str, str]]:
    """Parameter -> what all the kinds passed to it make (`combined`), for the parameters something is passed to;
    a tensor where some traced call passes a tensor and the others pass what is not known (none a Python value):
    that call makes the code break where a tensor does (local evidence, not lost to a caller this analysis
    cannot read)."""
    def kind(k: List[str]) -> str:
        if TENSOR in k and set(k) <= {TENSOR, EAGER_TENSOR, UNKNOWN}:
            return TENSOR
        return combined([TENSOR if x == EAGER_TENSOR else x for x in k])
    return {n: kind(k) for n, k in found.items() if k} if found is not None else None


def _called_names() -> Dict[str, Optional[Set[str]]]:
    """Per run: file -> the last names of everything it calls (`sched.step(...)`: "step"); None: not known."""
    return {}
