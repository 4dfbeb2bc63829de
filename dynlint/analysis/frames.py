"""Frames of their own: the functions Dynamo compiles separately because something they run breaks the graph.

When a function called from traced code breaks the graph (itself, or anything it calls), Dynamo does not
inline it into its caller's graph: the caller's graph ends at the call, the function runs, and Dynamo
compiles the function's own frame when it starts, with guards on what that frame reads: its arguments, the
attributes of `self`. A function entered several times per call of the model (every layer's `forward`, a
helper called from two places) then compiles again whenever what it reads differs from the last entry: a
layer index (`self.layer_idx`, a new value for every layer: a recompile per layer, until `recompile_limit`
makes the rest run eagerly), a flag that differs between layers, an argument that is None for the first
layer and a tensor for the others, a flag the frame itself sets on an object every layer shares.

Measured on torch 2.13 (bench/guards.py, "frame" rows of docs/guards.md). This module finds those functions
from the break findings of the check pass and says, per frame, what differs between its entries; the rule
that reports them is DYN509 (rules/recompiles/frames.py). It also follows the Python values such a break makes
when its function returns them (`expert_size = counts.tolist()` in a router): into the caller that unpacks
them and the function it hands them to next, code Dynamo resumes after the call and guards on those values
(`Frame.host`, read by DYN511).
"""
from __future__ import annotations

import ast
import builtins
from collections import deque
from dataclasses import dataclass, replace
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from dynlint.analysis.defs import (Defs, after_short_circuit, argument, body_nodes, is_training, loop_targets,
                                  param_defaults, param_of, value_kind)
from dynlint.analysis.names import COMPILE, SKIPS_FRAME, strip_call
from dynlint.analysis.grad_entries import grad_entries
from dynlint.analysis.ragged import first_read, ragged, runs_down
from dynlint.analysis.host_flow import host_flow, numbers_held
from dynlint.linter.index import CallSite, dotted_name
from dynlint.linter.project import FuncRef, Project


@dataclass(frozen=True)
class Frame:
    """What differs between the entries of one function that Dynamo compiles as a frame of its own."""
    why: Tuple[str, int, bool]                  # the break that makes it a frame: (path, line, in training only)
    per_instance: Tuple[Tuple[str, str], ...]   # (attribute of self, "int" | "bool" | "value") set per instance
    none_or_value: Tuple[Tuple[str, int], ...]  # (parameter, line of a call) None at some entries, not at others
    repeated: bool                              # entered more than once per call (a layer among many)
    ints: Tuple[Tuple[str, int], ...] = ()      # (parameter, line of a call) int constants that differ
    strs: Tuple[Tuple[str, int], ...] = ()      # ... str constants that differ (`log("loss", v)`, `log("acc", a)`)
    via: str = ""                               # not a frame itself: inlined into this frame function
    # (name, path, line): a local or parameter holding Python values that the graph break at path:line made
    # (`sizes = counts.tolist()` in a function that returns them), in code Dynamo resumes after that break
    host: Tuple[Tuple[str, str, int], ...] = ()
    # a decorator's wrapper entered as a frame for several functions it wraps: the closure variable holding
    # the wrapped function (`func`), and those functions' qualnames; or a base class's `__call__` entered for
    # several subclasses' `forward` (SUPER_CALL, their qualnames)
    wraps: Tuple[str, Tuple[str, ...]] = ()
    # a method of an object that the frame (`via`) receives as an argument, every entry the same object: how
    # the frame reaches it (`past_key_values`, or `past_key_values.layers[...]` for one item per layer)
    shared: str = ""
    # parameters defaulting to None that no project code passes a value for (`key_value_states` of an
    # attention that only a composite model, or a user, calls with one): what a test of them guards never runs
    unsupplied: Tuple[str, ...] = ()
    # a decorator's wrapper: the numbers of positional arguments its entries' calls pass (two or more: its
    # `*args` has another length at some entry, and Dynamo guards on the length where it is read)
    arities: Tuple[int, ...] = ()
    # (parameter, line of a call, (path, line, column) of the frame's first work with it, whether the call hands it
    # the rows of a tensor a loop runs down): a tensor whose size depends on data, handed to this frame by code
    # Dynamo runs eagerly (analysis/ragged.py); the first work may be in a function the frame passes it to,
    # inlined: there an entry of 0 or 1 rows fails `2 <= x.size()[0]`
    sizes: Tuple[Tuple[str, int, Tuple[str, int, int], bool], ...] = ()
    # (name, line, line of the next break): a Python number the break at `line` makes in this function, still
    # needed where the graph breaks next: the frame Dynamo resumes after `line` guards it there (DYN520)
    held: Tuple[Tuple[str, int, int], ...] = ()
    # (parameter, line of a call): a tensor that requires grad at some entries, not at others (grad_entries.py)
    grads: Tuple[Tuple[str, int], ...] = ()


BUILTINS = frozenset(dir(builtins))

# `Frame.wraps`' closure for a base class's `__call__`: what differs between its entries is the class of `self`,
# whose `forward` its `super().__call__(...)` runs
SUPER_CALL = "super().__call__"


# methods that may return None: a value from them is not known to be one
MAYBE_NONE = frozenset({"get", "pop", "setdefault", "getattr", "forward", "__call__"})




def _none_at_some(seen: Dict[Tuple, int]) -> Optional[int]:
    """The first line where an argument is None at some entries and a value at others (see Frames._entry_states),
    or None on a loop's first iteration only."""
    first = [line for (_, state), line in seen.items() if state == "none first"]
    both = [line for (c, state), line in seen.items() if state == "none" and (c, "value") in seen]
    return min(first or both) if first or both else None


def _ints_differ(seen: Dict[Tuple, int], kind: str = "int") -> Optional[int]:
    """The first line of an int (or `kind`) constant argument that differs between one caller's entries."""
    values: Dict[object, Dict[int, int]] = {}
    for (c, state), line in seen.items():
        if isinstance(state, tuple) and state[0] == kind:
            values.setdefault(c, {}).setdefault(state[1], line)
    differ = [line for v in values.values() if len(v) > 1 for line in v.values()]
    return min(differ) if differ else None


class Frames:
    """The frame model of one run: `find` gives each frame function and what differs between its entries."""

    def __init__(self, project: Project, regions: Iterable[FuncRef], text: Callable[[str], Optional[str]],
                 edges: Callable, graph: Optional[Dict] = None, kept: Optional[Dict] = None,
                 digest: Optional[Callable[[str], Optional[str]]] = None):
        """edges(project, ref, nested): the region analysis's call graph (regions.call_edges); graph, kept:
        what an earlier run found (`graph`, `made`), reused where still valid; digest(rel): a file's digest."""
        self.project = project
        self.graph: Dict[str, dict] = dict(graph or {})      # what depends on the indexes alone
        self._nested: Dict[str, Dict[str, List[str]]] = {}
        self._edges = edges
        self.regions = set(regions)
        self.defs = Defs(project, text)
        self._held: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
        self._scanned: Dict[Tuple[str, str], Dict[Tuple[str, str], List[Dict[str, str]]]] = {}
        self._multi: Dict[Tuple[str, str], bool] = {}
        self._multi_reads: Dict[Tuple[str, str], Set[str]] = {}
        # what an earlier run worked out from files' text, kept while those files are unchanged: each frame's
        # facts (ref -> (what it was computed for, {file: digest}, Frame)), the function holding a break
        # ((path, line) -> (digest, qualname)), whether every run reaches a line (("runs", ref, line) -> ...)
        self.kept: Dict[FuncRef, tuple] = dict(kept or {})
        self.made: Dict[FuncRef, tuple] = {}
        self.fresh = False          # anything worked out anew (else `graph` and `made` are what was kept)
        self.entered: List[Tuple[str, int]] = []     # (path, line) of the calls that enter a breaking function
        self._digest = digest or (lambda rel: None)

    # ---- the frames ---------------------------------------------------------------------------------------
    def callers(self) -> Dict[FuncRef, List[Tuple[FuncRef, CallSite]]]:
        """Each region function's callers in traced code, with the call sites: the region graph reversed
        (kept from an earlier run while the indexes are unchanged, as `graph`)."""
        if "callers" not in self.graph:
            callers: Dict[FuncRef, List[Tuple[FuncRef, CallSite]]] = {}
            for ref in sorted(self.regions):
                for site, callee in self.edges(ref):
                    if callee != ref:
                        callers.setdefault(callee, []).append((ref, site))
            self.graph["callers"] = callers
            self.fresh = True
        return self.graph["callers"]

    def edges(self, ref: FuncRef) -> List[Tuple[Optional[CallSite], FuncRef]]:
        """The region functions `ref` calls, with the call sites (regions.call_edges, kept in `graph`)."""
        out = self.graph.setdefault("edges", {})
        if ref not in out:
            out[ref] = self._edges(self.project, ref, self._nested)
            self.fresh = True
        return [(site, callee) for site, callee in out[ref] if callee in self.regions]

    def _owner(self, path: str, line: int) -> Optional[str]:
        """The innermost function holding a line (kept while the file is unchanged)."""
        key, digest = (path, line), self._digest(path)
        old = self.kept.get(key)
        if old is None or old[0] != digest or digest is None:
            ix = self.project.by_path.get(path)
            inner = [(fn.start, q) for q, fn in ix.functions.items() if fn.def_line < line <= fn.end] if ix else []
            old = (digest, max(inner)[1] if inner else None)
            self.fresh = True
        self.made[key] = old
        return old[1]

    def find(self, breaks: Iterable, compiled: Callable[[], List[FuncRef]] = list) -> Dict[FuncRef, Frame]:
        """breaks: the check pass's graph-break findings (`path`, `line`, `message`); compiled(): the functions
        the code compiles explicitly (`@torch.compile`, `torch.compile(f)`), entered as frames by their callers
        (asked once while the indexes are unchanged: kept in `graph`)."""
        found, frames, skipped = self._breaking(breaks)
        callers = self.callers()
        self._spread(frames, callers)
        # the calls in traced code that enter a frame of its own: each ends its caller's graph, as a break does
        self.entered = sorted({(c[0], site.line) for ref in frames for c, site in callers.get(ref, ()) if site})
        # A function that breaks is entered as a frame from every traced call of it (the caller's graph ends at
        # the call). One that does not is inlined wherever traced code calls it, and entered as a frame only
        # from the functions Dynamo runs eagerly (skipped): those calls are its entries.
        eager = self._eager_entries(skipped, frames)
        out = self._entry_frames(frames, eager, callers)
        out.update(self._inlined(out))
        self._through_arguments(out)
        self._pass_on(out)
        self._mark_unsupplied(out)
        for ref, frame in self._wrapper_frames(frames, eager, callers, compiled).items():
            out.setdefault(ref, frame)
        for ref, host in host_flow(self, found, callers).items():
            frame = out.get(ref)
            out[ref] = replace(frame, host=frame.host + host) if frame else \
                Frame((host[0][1], host[0][2], False), (), (), False, host=host)
        for ref, held in numbers_held(self, found, frames, callers).items():
            frame = out.get(ref)
            out[ref] = replace(frame, held=frame.held + held) if frame else \
                Frame((ref[0], held[0][1], False), (), (), False, held=held)
        # the parsed defs are done with: free them before the check of the frames forks its workers
        self.defs.clear()
        self._scanned.clear()
        return out

    def _reuse(self, key, asked, compute: Callable):
        """compute(), or what an earlier run computed for the same `asked` while the files it read are unchanged
        (kept as `made[key]` either way)."""
        old = self.kept.get(key) or self.made.get(key)
        if old and old[0] == asked and all(self._digest(rel) == d for rel, d in old[1].items()):
            self.made[key] = old
            for rel in old[1]:
                self.defs.note(rel)         # what it read, a computation around it read too
            return old[2]
        self.defs.reading.append(set())
        value = compute()
        self.made[key] = (asked, {rel: self._digest(rel) for rel in self.defs.reading.pop()}, value)
        self.fresh = True
        return value

    def _breaking(self, breaks: Iterable):
        """The breaks in region functions that every run (or every training step) of the function reaches, as
        (in training only, function, finding); each such function -> its break (path, line, in training only),
        those reached on every run first; and those of them that Dynamo skips (run eagerly: what they call
        starts frames)."""
        found = []
        for f in sorted(breaks, key=lambda f: (f.path, f.line)):
            owner = self._owner(f.path, f.line)
            if owner is None:
                continue
            ref = (f.path, owner)
            runs = self._runs(ref, f.line, f.column) if ref in self.regions else None
            if runs:
                found.append((runs == "training", ref, f))
        frames: Dict[FuncRef, Tuple[str, int, bool]] = {}
        skipped: Dict[FuncRef, Tuple[str, int, bool]] = {}
        for training, ref, f in sorted(found, key=lambda t: t[0]):     # breaks every run reaches first
            why = (f.path, f.line, training)
            if SKIPS_FRAME in f.message:
                skipped.setdefault(ref, why)
            frames.setdefault(ref, why)
        return found, frames, skipped

    def _spread(self, frames: Dict[FuncRef, Tuple[str, int, bool]], callers) -> None:
        """A caller whose call runs a frame breaks there too: a frame of its own (added to `frames`)."""
        queue = deque(frames)
        while queue:
            ref = queue.popleft()
            for caller, site in callers.get(ref, ()):
                runs = self._runs(caller, site.line) if site is not None and caller not in frames else None
                if runs:
                    path, line, training = frames[ref]
                    frames[caller] = (path, line, training or runs == "training")
                    queue.append(caller)

    def _eager_entries(self, skipped, frames) -> Dict[FuncRef, Tuple[Tuple[str, int], List[Tuple[FuncRef, CallSite]]]]:
        """The functions that do not break called from those Dynamo skips: -> (the break, those calls)."""
        eager: Dict[FuncRef, Tuple[Tuple[str, int], List[Tuple[FuncRef, CallSite]]]] = {}
        for ref, why in skipped.items():
            for site, callee in self.edges(ref):
                if site is not None and callee not in frames:
                    eager.setdefault(callee, (why, []))[1].append((ref, site))
        return eager

    def _entry_frames(self, frames, eager, callers) -> Dict[FuncRef, Frame]:
        """The frames whose entries differ (instances, arguments) or that are entered repeatedly, each from its
        entries' calls (kept between runs while the files read for it are unchanged)."""
        out: Dict[FuncRef, Frame] = {}
        todo = [(ref, why, [(c, s) for c, s in callers.get(ref, ()) if s is not None], False)
                for ref, why in frames.items()]
        todo += [(ref, why, entries, True) for ref, (why, entries) in eager.items()]
        for ref, why, entries, eager_only in todo:
            if not entries:
                continue            # a root: entered from outside traced code, with the user's values
            asked = (why, eager_only, tuple((c, s.line, s.kind, s.target) for c, s in entries))
            frame = self._reuse(ref, asked, lambda: self._frame(ref, why, entries, eager_only))
            if frame.per_instance or frame.none_or_value or frame.repeated or frame.ints or frame.strs or \
                    frame.sizes or frame.grads:
                out[ref] = frame
        return out

    def _inlined(self, out: Dict[FuncRef, Frame]) -> Dict[FuncRef, Frame]:
        """What a frame entered once per layer calls is inlined into it: its reads are that frame's guards."""
        inlined: Dict[FuncRef, Frame] = {}
        for ref, frame in sorted(out.items()):
            if not frame.repeated or frame.via:
                continue
            seen, level = {ref}, [ref]
            for _ in range(3):
                nxt = []
                for r in level:
                    for site, callee in self.edges(r):
                        if callee not in seen and callee not in out and callee not in inlined:
                            seen.add(callee)
                            nxt.append(callee)
                            inlined[callee] = Frame(frame.why, (), (), True, via=ref[1])
                level = nxt
        return inlined

    def _wrapper_frames(self, frames, eager, callers, compiled: Callable[[], List[FuncRef]]) -> Dict[FuncRef, Frame]:
        """The decorators' wrappers and shared `__call__`s entered for several frame functions (`_wrappers`),
        among these the functions compiled explicitly (entered as frames by their callers)."""
        entered = {ref: (why, {c[0] for c, s in callers.get(ref, ()) if s is not None})
                   for ref, why in frames.items()}
        entered.update({ref: (why, {c[0] for c, _ in entries}) for ref, (why, entries) in eager.items()})
        if self.graph.get("compiled") is None:
            self.graph["compiled"] = compiled()
            self.fresh = True
        for ref in self.graph["compiled"]:
            ix = self.project.by_path.get(ref[0])
            if ref not in entered and ix is not None and ref[1] in ix.functions:
                entered[ref] = ((ref[0], self.project.function(ref).def_line, False), {ref[0]})
        asked = tuple(sorted((ref, why, tuple(sorted(rels))) for ref, (why, rels) in entered.items()))
        wrappers = self.graph.setdefault("wrappers", {})    # (from the indexes and the frames alone)
        if asked not in wrappers:
            wrappers.clear()
            wrappers[asked] = self._wrappers(entered)
            self.fresh = True
        return wrappers[asked]

    def _wrappers(self, entered) -> Dict[FuncRef, Frame]:
        """Decorators' wrappers (`@wraps(func) def wrapper(*args, **kwargs): ... func(*args, **kwargs)`) around
        two or more functions that Dynamo enters as frames from one file's code (one model: a project holds
        many, compiled apart): the frame Dynamo compiles is the wrapper's code, one code for all of them,
        guarded on which function its closure holds (`func.__code__`). From the indexes alone: the decorator
        resolved in the project, its nested function (one level down for `@decorator`, two for a factory
        `@decorator(...)`). Likewise a base class's Python `__call__` entered for the `forward` of two or more
        of its subclasses: one code, guarded on the class of `self`. entered: frame function -> (the break
        that makes it one, the files entering it)."""
        groups: Dict[Tuple[Tuple[FuncRef, str], str], List[FuncRef]] = {}
        for ref in sorted(entered):
            fn = self.project.function(ref)
            ix = self.project.by_path.get(ref[0])
            wrappers = [self._wrapper_of(ix, d) for d in traced_decorators(ix, fn)] if ix is not None else []
            wrappers.append(self._shared_call(ref))
            for wrapper in filter(None, wrappers):
                for rel in sorted(entered[ref][1]):
                    groups.setdefault((wrapper, rel), []).append(ref)
        out: Dict[FuncRef, Frame] = {}
        for ((wrapper, closure), _), refs in sorted(groups.items()):
            names = tuple(dict.fromkeys(q for _, q in refs))
            known = out[wrapper].wraps[1] if wrapper in out else ()
            if len(refs) > 1 and len(names) > len(known):        # the file entering the most of them
                always = [r for r in refs if not entered[r][0][2]]     # frames outside training too
                why = entered[always[0]][0] if len(always) > 1 else entered[refs[0]][0][:2] + (True,)
                callers = self.callers()
                arities = tuple(sorted({len(site.args) for r in refs for _, site in callers.get(r, ()) if site}))
                out[wrapper] = Frame(why, (), (), True, wraps=(closure, names),
                                     arities=arities if closure != SUPER_CALL else ())
        return out

    def _shared_call(self, ref: FuncRef) -> Optional[Tuple[FuncRef, str]]:
        """A module's `forward` entered as a frame is entered through the Python `__call__` its class inherits
        from a project base (`def __call__(self, *args, **kwargs): ... super().__call__(*args, **kwargs)`),
        whose code every subclass shares: (that `__call__`, SUPER_CALL)."""
        fn = self.project.function(ref)
        if not fn.cls or ref[1] != f"{fn.cls}.forward":
            return None
        call = self.project.method(ref[0], fn.cls, "__call__")
        if call is None or call[1] == f"{fn.cls}.__call__" or not any(
                c.kind == "super" and c.target == "__call__" for c in self.project.function(call).calls):
            return None
        return call, SUPER_CALL

    def _wrapper_of(self, ix, decorator: str) -> Optional[Tuple[FuncRef, str]]:
        return decorator_wrapper(self.project, ix, decorator)

    # ---- objects every entry shares: the methods a frame runs on what its arguments hold ---------------------
    SUBCLASSES = 16     # overriding subclasses followed for one method (more: an interface too wide to follow)

    def _through_arguments(self, out: Dict[FuncRef, Frame]) -> None:
        """What a frame entered once per layer runs on the objects it receives (`past_key_values.update(...)`
        on a parameter annotated with a project class: that class's method and its subclasses' overrides), and
        what those call on `self` and on an item of `self.<attr>` (`self.layers[i].update(...)`, the items'
        class from the annotation of `__init__`'s parameter of that name): inlined into the frame, run on an
        object that every entry shares. Added to `out`, `via` the frame, with `shared` saying how it is
        reached. From the indexes alone: kept in `graph` for the same frames."""
        asked = tuple(sorted((ref, frame) for ref, frame in out.items()
                             if frame.repeated and not frame.wraps and not frame.shared))
        kept = self.graph.setdefault("shared", {})
        if asked not in kept:
            kept.clear()
            kept[asked] = self._shared_methods(asked)
            self.fresh = True
        for ref, frame in kept[asked].items():
            out.setdefault(ref, frame)

    def _shared_methods(self, frames) -> Dict[FuncRef, Frame]:
        added: Dict[FuncRef, Frame] = {}
        for ref, frame in frames:
            fn = self.project.function(ref)
            for c in fn.calls:
                if c.kind != "name" or c.target.count(".") != 1:
                    continue
                param, method = c.target.split(".")
                for cls in self._annotated(ref, fn, param):
                    for target in self._methods(cls, method):
                        self._walk_shared(target, replace(frame, via=frame.via or ref[1], shared=param), added, 0)
        return added

    def _walk_shared(self, ref: FuncRef, frame: Frame, added, depth: int) -> None:
        if ref in added:
            return
        added[ref] = frame
        fn = self.project.function(ref)
        if depth >= 3 or not fn.cls:
            return
        for c in fn.calls:
            if c.kind == "self" and "." not in c.target:
                m = self.project.method(ref[0], fn.cls, c.target)
                if m:
                    self._walk_shared(m, frame, added, depth + 1)
            elif c.kind == "element":
                attr, method = c.target.split(".", 1)
                init = self.project.method(ref[0], fn.cls, "__init__")
                for cls in self._annotated(init, self.project.function(init), attr) if init else ():
                    for target in self._methods(cls, method):
                        item = replace(frame, shared=f"{frame.shared}.{attr}[...]")
                        self._walk_shared(target, item, added, depth + 1)

    def _annotated(self, ref: FuncRef, fn, param: str) -> List[Tuple[str, str]]:
        """The project classes a parameter's annotation names (none for `type[...]`: a class, not an instance)."""
        names = fn.annotations.get(param, ())
        if any(n.rsplit(".", 1)[-1] in ("type", "Type") for n in names):
            return []
        ix = self.project.by_path[ref[0]]
        out = []
        for n in names:
            r = self.project.resolve(ix, n)
            if r and r[0] == "class":
                out.append((r[1][0], r[1][1].name))
        return out

    def _methods(self, cls: Tuple[str, str], name: str) -> List[FuncRef]:
        """The method an instance of the class (or of a project subclass) runs for `name`."""
        own = self.project.method(cls[0], cls[1], name)
        overrides = []
        for path, sub in self.project.subclasses(*cls):
            if f"{sub}.{name}" in self.project.by_path[path].functions:
                overrides.append((path, f"{sub}.{name}"))
                if len(overrides) > self.SUBCLASSES:
                    return [own] if own else []
        return ([own] if own else []) + overrides

    def _pass_on(self, out: Dict[FuncRef, Frame]) -> None:
        """A parameter that is None at some entries of a frame (or an int that differs), handed unchanged to a
        function the frame calls and inlines (`self.attention(x, position_bias=position_bias)`), is that
        function's to test: the guard it installs is on the frame's input. Added to `out` as the callee's,
        `via` the frame."""
        for ref, frame in sorted(out.items()):
            if frame.via or not (frame.none_or_value or frame.ints):
                continue
            edges = tuple((site, callee) for site, callee in self.edges(ref)
                          if site is not None and not (callee in out and not out[callee].via))
            # each frame's kept while the files it read are unchanged (an edit re-reads what it touches)
            for callee, moved in self._reuse(("pass on", ref), (frame, edges), lambda: self._handed(ref, frame, edges)):
                old = out.get(callee) or Frame(frame.why, (), (), frame.repeated, via=ref[1])
                out[callee] = replace(old, none_or_value=tuple(dict.fromkeys(old.none_or_value + moved[0])),
                                      ints=tuple(dict.fromkeys(old.ints + moved[1])))

    def _handed(self, ref: FuncRef, frame: Frame, edges) -> List[Tuple[FuncRef, tuple]]:
        """What `ref`'s frame hands on to each function it calls: (callee, (none_or_value, ints))."""
        rebound = self.defs.bindings(ref)[1]
        out = []
        for site, callee in edges:
            call = self.defs.call(ref, site)[0]
            gdef = self.defs.definition(callee)
            if call is None or gdef is None:
                continue
            method = bool(self.project.function(callee).cls)
            moved = tuple(tuple((q, line) for p, line in getattr(frame, kind)
                                if all(v.lineno >= call.lineno for v in rebound.get(p, ()))
                                for q in [param_of(gdef, call, p, method)] if q)
                          for kind in ("none_or_value", "ints"))
            if any(moved):
                out.append((callee, moved))
        return out

    def _mark_unsupplied(self, out: Dict[FuncRef, Frame]) -> None:
        """Each frame entered per layer (and what it inlines): its parameters defaulting to None, tested `is
        None` / `is not None` in it, that no project code calls it with a value for (`unsupplied`)."""
        for ref, frame in sorted(out.items()):
            if not frame.repeated or frame.wraps:
                continue
            # each function's kept while the files it read are unchanged (an edit re-reads what it touches)
            unsupplied = self._reuse(("unsupplied", ref), (), lambda: self._unsupplied(ref))
            if unsupplied:
                out[ref] = replace(frame, unsupplied=unsupplied)

    def _unsupplied(self, ref: FuncRef) -> Tuple[str, ...]:
        fdef = self.defs.definition(ref)
        if fdef is None:
            return ()
        optional = {p for p, d in param_defaults(fdef.args).items() if isinstance(d, ast.Constant) and d.value is None}
        tested = {n.left.id for n in ast.walk(fdef) if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name)
                  and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Is, ast.IsNot)) and
                  isinstance(n.comparators[0], ast.Constant) and n.comparators[0].value is None}
        return tuple(sorted(p for p in optional & tested if not self._supplied(ref, p)))

    def _supplied(self, ref: FuncRef, param: str, depth: int = 4, seen: frozenset = frozenset()) -> bool:
        """Does project code call `ref` with a value for `param` other than None: an expression it computes, or
        its own parameter that its callers supply so (an encoder-decoder's forward hands its decoder
        `encoder_outputs[0]`)? A parameter left to the user at an entry point (`encoder_hidden_states=None`
        of a causal LM's forward) is not; nor is one only a `**kwargs` splat could carry."""
        fdef = self.defs.definition(ref)
        if fdef is None or depth == 0 or ref in seen:
            return False
        names = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        if self.project.function(ref).cls and names:
            names = names[1:]
        index = names.index(param) if param in names else None
        for caller, site in self.callers().get(ref, ()):
            call = self.defs.call(caller, site)[0] if site is not None else None
            if call is None:
                continue
            expr = argument(call, param, index)
            if expr is None or (isinstance(expr, ast.Constant) and expr.value is None):
                continue
            if not isinstance(expr, ast.Name):
                return True
            params, bound, _ = self.defs.bindings(caller)
            values = bound.get(expr.id, [])
            if any(not (isinstance(v, ast.Constant) and v.value is None) for v in values):
                return True
            if expr.id in params and self._supplied(caller, expr.id, depth - 1, seen | {ref}):
                return True
        return False

    def _runs(self, ref: FuncRef, line: int, column: Optional[int] = None) -> Optional[str]:
        key, digest = ("runs", ref, line, column), self._digest(ref[0])
        old = self.kept.get(key)
        if old is None or old[0] != digest or digest is None:
            old = (digest, self._runs_now(ref, line, column))
            self.fresh = True
        self.made[key] = old
        return old[1]

    def _runs_now(self, ref: FuncRef, line: int, column: Optional[int] = None) -> Optional[str]:
        """"always" when every run of the function runs this line, "training" when every training step does
        (it is under `if self.training:`), else None: in a branch of any other `if` (a Python flag such as
        gradient checkpointing, or anything else), an `else`, an exception handler. Loop bodies count as run
        (a layer loop runs). A break that only some runs reach is not taken to make a frame."""
        fdef = self.defs.definition(ref)
        if fdef is None:
            return None
        if column is not None:
            column -= self.project.function(ref).indent        # (the def is parsed dedented)
        body, runs = fdef.body, "always"
        while True:
            stmt = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
            if stmt is None:
                return None
            if isinstance(stmt, ast.If):
                if line <= (stmt.test.end_lineno or stmt.lineno):
                    # (the right of an `and`/`or` runs only when the left says so: `x.dtype == torch.float16 and
                    # torch.isinf(x).any()` breaks only in half precision)
                    return None if column is not None and after_short_circuit(stmt.test, line, column) else runs
                if not is_training(stmt.test) or (stmt.orelse and line >= stmt.orelse[0].lineno):
                    return None
                body, runs = stmt.body, "training"
            elif isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)) and stmt.body and line >= stmt.body[0].lineno:
                if stmt.orelse and line >= stmt.orelse[0].lineno:
                    return None
                body = stmt.body
            elif isinstance(stmt, (ast.With, ast.AsyncWith)) and line >= stmt.body[0].lineno:
                body = stmt.body
            elif isinstance(stmt, ast.Try):
                if stmt.handlers and line >= stmt.handlers[0].lineno and not (
                        stmt.finalbody and line >= stmt.finalbody[0].lineno):
                    return None
                body = stmt.body + stmt.orelse + stmt.finalbody
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            else:
                return runs

    def _frame(self, ref: FuncRef, why: Tuple[str, int], entries: List[Tuple[FuncRef, CallSite]],
               eager_only: bool) -> Frame:
        fn = self.project.function(ref)
        per_instance: Tuple[Tuple[str, str], ...] = ()
        repeated = False
        if fn.cls:
            per_instance = tuple(sorted(self._per_instance(ref[0], fn.cls).items()))
            repeated = self._is_multi(ref[0], fn.cls)
        calls = [(c, s, self.defs.call(c, s)) for c, s in entries]
        repeated = repeated or any(loop for _, _, (_, loop) in calls)
        none_or_value, ints, strs = self._arguments(ref, calls, eager_only)
        sizes = self._sizes(ref, calls) if eager_only else ()
        return Frame(why, per_instance, none_or_value, repeated, ints, strs=strs, sizes=sizes,
                     grads=grad_entries(self, ref, calls))

    # ---- tensors whose size depends on data, from eager callers (analysis/ragged.py) ----------------------------
    def _sizes(self, ref: FuncRef, calls) -> Tuple[Tuple[str, int, Tuple[str, int, int], bool], ...]:
        fdef = self.defs.definition(ref)
        if fdef is None:
            return ()
        names = [a.arg for a in fdef.args.posonlyargs + fdef.args.args][1 if self.project.function(ref).cls else 0:]
        out = []
        for k, p in enumerate(names + [a.arg for a in fdef.args.kwonlyargs]):
            for caller, site, (call, _) in calls:
                expr = argument(call, p, k if k < len(names) else None) if call is not None else None
                if expr is not None and ragged(expr, self.defs.bindings(caller)[1],
                                               self.project.by_path[caller[0]].qualify):
                    work = self._first_work(ref, p)
                    if work is not None:
                        out.append((p, site.line, work, runs_down(self.defs.definition(caller), call, expr)))
                    break
        return tuple(out)

    def _first_work(self, ref: FuncRef, param: str, depth: int = 3) -> Optional[Tuple[str, int, int]]:
        """(path, line, column from 0): where the frame first works with a parameter, following a first read that only
        passes it on into a function Dynamo inlines."""
        fdef = self.defs.definition(ref)
        node, call, where = first_read(fdef, param) if fdef is not None else (None, None, None)
        if node is None:
            return None
        for site, callee in self.edges(ref) if call is not None and depth else ():
            if site is None or site.line != call.lineno or self.defs.call(ref, site)[0] is not call:
                continue
            gdef = self.defs.definition(callee)
            params = [a.arg for a in gdef.args.posonlyargs + gdef.args.args] if gdef is not None else []
            params = params[1:] if self.project.function(callee).cls and site.kind != "name" else params
            name = where if isinstance(where, str) else params[where] if where < len(params) else None
            if name is not None:
                return self._first_work(callee, name, depth - 1)
        return ref[0], node.lineno, node.col_offset + self.project.function(ref).indent

    # ---- arguments: None at one entry, a value at another ------------------------------------------------------
    def _arguments(self, ref: FuncRef, calls, eager_only: bool):
        """The parameters that differ between entries: None at one and a value at another (tested `is None` in
        the function or what it hands them to), and int constants (read in it). Entries from different callers count
        for a function that breaks (each traced call of it is an entry); for one entered from eager callers only,
        the calls of one caller, or None from a caller that a common caller runs before the one passing a
        tensor (different callers may reach it inlined, not as an entry)."""
        fdef = self.defs.definition(ref)
        if fdef is None:
            return (), (), ()
        args = fdef.args
        positional = args.posonlyargs + args.args
        defaults = param_defaults(args)
        names = [a.arg for a in positional]
        if self.project.function(ref).cls and names:
            names = names[1:]           # self: calls through an instance do not pass it
        read = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        nones, ints, strs, across = [], [], [], []
        builtin = False
        annotations = {a.arg: a.annotation for a in positional + args.kwonlyargs}
        for p in names + [a.arg for a in args.kwonlyargs]:
            if p not in read:
                continue
            seen = self._entry_states(calls, p, names.index(p) if p in names else None, defaults.get(p), eager_only)
            if any(state == "builtin" for _, state in seen):    # a tensor parameter's guard, checked first
                note = annotations.get(p)
                builtin = builtin or note is None or "Tensor" in ast.unparse(note)
            # (tested `is None` here, or handed on to a function that tests it: _pass_on)
            line = _none_at_some(seen)
            if line is not None:
                nones.append((p, line))
            elif eager_only:                # callers that run eagerly one after the other: None from the first
                line = self._none_from_earlier(seen)
                if line is not None:
                    across.append((p, line))
            line = _ints_differ(seen)
            if line is not None:
                ints.append((p, line))
            line = _ints_differ(seen, "str")
            if line is not None:
                strs.append((p, line))
        # Between entries from different callers, the `is None` guard is the one a recompile names unless a
        # guard Dynamo checks before it fails too: a builtin at one entry for a parameter meant for a tensor (a
        # tensor argument's guard is checked on entry, before those of the tests in the code; a `torch.Size`
        # parameter's is not), or the decorator's wrapper the function is entered through (its own guards)
        fn = self.project.function(ref)
        ix = self.project.by_path.get(ref[0])
        if across and not builtin and not (ix is not None and any(self._wrapper_of(ix, d) for d in fn.decorators)):
            nones += across
        return tuple(nones), tuple(ints), tuple(strs)

    def _entry_states(self, calls, param: str, index: Optional[int], default: Optional[ast.expr],
                      eager_only: bool) -> Dict[Tuple, int]:
        """(caller, or None when entries from any caller count together; what its call passes as `param`, see
        `_passes`) -> the line of the first such call."""
        seen: Dict[Tuple, int] = {}
        for caller, site, (call, _) in calls:
            state = self._passes(caller, call, param, index, default)
            if state:
                seen.setdefault((caller if eager_only else None, state), site.line)
        return seen

    def _none_from_earlier(self, seen: Dict[Tuple, int]) -> Optional[int]:
        """The first line where a caller passes None, when another caller, called after it, passes a value."""
        later = [line for (c, state), line in seen.items() if state == "none" and any(
            state2 == "value" and c2 != c and self._before(c, c2) for c2, state2 in seen)]
        return min(later) if later else None

    def _before(self, first: FuncRef, then: FuncRef) -> bool:
        """Does one function call `first` before `then` (an encoder-decoder's forward calls its encoder, then
        its decoder)? Then an argument None at `first`'s entry and a tensor at `then`'s is guarded `is None` at
        the test (a tensor first is guarded on its type instead, at no line of the source)."""
        callers = self.callers()
        later = {c: site.line for c, site in callers.get(then, ()) if site is not None}
        for c, site in callers.get(first, ()):
            if site is not None and c in later and site.line < later[c]:
                self.defs.note(c[0])
                return True
        return False

    def _passes(self, caller: FuncRef, call: Optional[ast.Call], param: str, index: Optional[int],
                default: Optional[ast.expr]) -> Optional[str]:
        """"none", "value", "none first" (a name that is None on a loop's first iteration, then set), "builtin",
        ("int", n) for an int constant, or None (not known) for what a call passes as `param`."""
        if call is None:
            return None
        expr = argument(call, param, index)
        if expr is None:
            if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
                return None
            expr = default
            if not isinstance(expr, ast.Constant):
                return None
        if isinstance(expr, ast.Constant):
            if type(expr.value) in (int, str):
                return (type(expr.value).__name__, expr.value)
            return "none" if expr.value is None else "value"
        if isinstance(expr, ast.Name):
            return self._name_state(caller, expr.id, call)
        return "value" if self._tensor(caller, expr) else None

    def _name_state(self, caller: FuncRef, name: str, call: ast.Call) -> Optional[str]:
        params, bound, loops = self.defs.bindings(caller)
        if name in params:
            return None         # a parameter of the caller: whatever its callers pass
        values = bound.get(name, [])
        nones = [v for v in values if isinstance(v, ast.Constant) and v.value is None]
        if not values:
            # a name the caller never binds: a builtin (`input`, passed by mistake for `input_ids`) is no tensor
            ix = self.project.by_path.get(caller[0])
            bound_here = ix is not None and (name in ix.imports or name in ix.functions or name in ix.classes)
            return "builtin" if name in BUILTINS and not bound_here else None
        if len(nones) == len(values):
            return "none"
        if nones:
            for first, last, names in loops:
                if first < call.lineno <= last and name in names and any(v.lineno < first for v in nones):
                    return "none first"
            return None
        return "value" if all(self._tensor(caller, v) for v in values) else None

    def _tensor(self, ref: FuncRef, expr: ast.expr, seen: frozenset = frozenset()) -> bool:
        """Surely not None: arithmetic, a `torch.*` call, a tensor method (`x.view(...)`), a method or submodule
        of `self` that never returns None, a local only ever bound to such values."""
        if isinstance(expr, ast.BinOp):
            return True
        if isinstance(expr, ast.Name):
            if expr.id in seen:
                return True         # `pos = pooled_pos` ... `pooled_pos = pos`: no value of another kind
            values = self.defs.bindings(ref)[1].get(expr.id, []) if len(seen) < 4 else []
            return bool(values) and all(self._tensor(ref, v, seen | {expr.id}) for v in values)
        k = None
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and \
                type(expr.slice.value) is int and isinstance(expr.value, ast.Call):
            k, expr = expr.slice.value, expr.value  # `out, scale = self.act(x)`: an element of what it returns
        if not isinstance(expr, ast.Call):
            return False
        name = dotted_name(expr.func) or ""
        ix = self.project.by_path[ref[0]]
        if k is None and ix.qualify(name).startswith("torch."):
            return True
        if name.startswith("self.") and name.count(".") == 1:
            fn = self.project.function(ref)
            if not fn.cls:
                return False
            method = self.project.method(ref[0], fn.cls, name[5:])
            if method is not None:
                return self._never_none(method, k, seen)
            info = self.project.class_info(ref[0], fn.cls)
            ctors = info.attrs.get(name[5:], []) if info else []
            held = self.project.attr_classes(ref[0], fn.cls, name[5:])
            if held:        # a submodule of the project: its forward never returns None
                forwards = [self.project.method(p, c.name, "forward") for p, c in held]
                return all(f is not None and self._never_none(f, k, seen) for f in forwards)
            return k is None and bool(ctors) and all(ix.qualify(c).startswith("torch.nn.") for c in ctors)
        return k is None and isinstance(expr.func, ast.Attribute) and expr.func.attr not in MAYBE_NONE and \
            not name.startswith("self.")

    def _never_none(self, ref: FuncRef, k: Optional[int] = None, seen: frozenset = frozenset()) -> bool:
        """Every return of the def gives a value (k None), or a tuple whose k-th element is surely one."""
        fdef = self.defs.definition(ref)
        returns = [n.value for n in body_nodes(fdef) if isinstance(n, ast.Return)] if fdef else []
        if k is None:
            return bool(returns) and all(r is not None and not (isinstance(r, ast.Constant) and r.value is None)
                                         and not isinstance(r, ast.IfExp) for r in returns)
        key = ("return", ref, k)
        return bool(returns) and key not in seen and len(seen) < 4 and all(
            isinstance(r, ast.Tuple) and len(r.elts) > k and self._tensor(ref, r.elts[k], seen | {key})
            for r in returns)

    # ---- instances: attributes set from constructor arguments that differ between them ----------------------
    def _holders(self, key: Tuple[str, str]) -> List[Tuple[str, str]]:
        """The classes whose attributes hold instances of class `key` ((path, name)): looked for in its own file
        and the files that import it or its module (the project's import facts: no other index is loaded)."""
        if key not in self._held:
            path, cls = key
            module = self.project.by_path[path].module
            facts = self.project.facts
            rels = {path} | set(facts.importers.get(f"{module}.{cls}", ())) | set(facts.importers.get(module, ()))
            found = []
            for rel in sorted(rels):
                ix = self.project.by_path.get(rel)
                for holder in (ix.classes.values() if ix is not None else ()):
                    if (rel, holder.name) != key and any(
                            (r := self.project.resolve(ix, ctor)) and r[0] == "class" and (r[1][0], r[1][1].name) == key
                            for ctors in holder.attrs.values() for ctor in ctors):
                        found.append((rel, holder.name))
            self._held[key] = found
        return self._held[key]

    def _constructions(self, key: Tuple[str, str]) -> List[Dict[str, str]]:
        """The constructions of a class inside a loop or a comprehension of a class that holds it: for each,
        {argument: kind} of the arguments built from the loop variable (positions as "0", "1", ...)."""
        out: List[Dict[str, str]] = []
        for rel, holder in self._holders(key):
            self.defs.note(rel)
            if (rel, holder) not in self._scanned:
                self._scanned[(rel, holder)] = self._scan(rel, holder)
            out += self._scanned[(rel, holder)].get(key, [])
        return out

    def _scan(self, rel: str, holder: str) -> Dict[Tuple[str, str], List[Dict[str, str]]]:
        ix = self.project.by_path[rel]
        init = ix.functions.get(f"{holder}.__init__")       # where layers are built
        node = self.defs.node_at(rel, init.def_line, init.end, (ast.FunctionDef, ast.AsyncFunctionDef)) if init else None
        built: Dict[Tuple[str, str], List[Dict[str, str]]] = {}

        def walk(n, loops: Set[str]) -> None:
            for child in ast.iter_child_nodes(n):
                inner = loops | loop_targets(child)
                if isinstance(child, ast.Call) and inner:
                    name = dotted_name(child.func)
                    r = self.project.resolve(ix, name) if name else None
                    if r and r[0] == "class":
                        varying = {}
                        for i, a in enumerate(child.args):
                            if {x.id for x in ast.walk(a) if isinstance(x, ast.Name)} & inner:
                                varying[str(i)] = value_kind(a)
                        for k in child.keywords:
                            if k.arg and {x.id for x in ast.walk(k.value) if isinstance(x, ast.Name)} & inner:
                                varying[k.arg] = value_kind(k.value)
                        built.setdefault((r[1][0], r[1][1].name), []).append(varying)
                walk(child, inner)
        if node is not None:
            walk(node, set())
        return built

    def _is_multi(self, path: str, cls: str, depth: int = 0) -> bool:
        """Are there several instances of the class: built in a loop, or held by a class that has several?"""
        key = (path, cls)
        if key not in self._multi:
            self._multi[key] = False            # (a cycle of holders)
            self.defs.reading.append(set())
            self._multi[key] = bool(self._constructions(key)) or (depth < 4 and any(
                self._is_multi(rel, holder, depth + 1) for rel, holder in self._holders(key)))
            self._multi_reads[key] = self.defs.reading.pop()
        for rel in self._multi_reads.get(key, ()):
            self.defs.note(rel)
        return self._multi[key]

    def _per_instance(self, path: str, cls: str) -> Dict[str, str]:
        """Attributes `__init__` sets from constructor arguments that differ between instances -> their kind."""
        sites = self._constructions((path, cls))
        ref = self.project.method(path, cls, "__init__")
        if not sites or ref is None:
            return {}
        init = self.defs.definition(ref)
        if init is None:
            return {}
        params = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
        varying: Dict[str, str] = {}
        for args in sites:
            for key, kind in args.items():
                name = params[int(key)] if key.isdigit() and int(key) < len(params) else key
                varying.setdefault(name, kind)
        out: Dict[str, str] = {}
        for n in ast.walk(init):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) and \
                    isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "self":
                used = {x.id for x in ast.walk(n.value) if isinstance(x, ast.Name)} & set(varying)
                if not used or any(isinstance(x, (ast.Call, ast.Lambda)) for x in ast.walk(n.value)):
                    continue            # a submodule built per layer, not a value the frame is guarded on
                if isinstance(n.value, ast.Name):
                    kind = varying[n.value.id]
                elif isinstance(n.value, (ast.Compare, ast.BoolOp)) or (
                        isinstance(n.value, ast.UnaryOp) and isinstance(n.value.op, ast.Not)):
                    kind = "bool"
                else:
                    kind = "value"
                out.setdefault(n.targets[0].attr, kind)
        return out


def decorator_wrapper(project: Project, ix, decorator: str) -> Optional[Tuple[FuncRef, str]]:
    """(the wrapper a project decorator puts around a function, the closure variable that holds the function):
    the decorator's one nested function (one level down for `@decorator`, two for a factory `@decorator(...)`);
    None when not known."""
    factory = decorator.endswith("()")
    r = project.resolve(ix, decorator[:-2] if factory else decorator)
    if not r or r[0] != "function":
        return None
    path, qual = r[1]
    dix = project.by_path[path]

    def nested(q: str) -> List[str]:
        return [n for n, f in dix.functions.items() if f.nested_in == q]
    outer = qual
    if factory:
        inner = nested(qual)
        if len(inner) != 1:
            return None
        outer = inner[0]
    params = dix.functions[outer].params
    wrappers = nested(outer)
    if len(wrappers) != 1 or not params or params[0] in dix.functions[wrappers[0]].params:
        return None             # (a decorator that takes the function as its own argument returns it)
    return (path, wrappers[0]), params[0]


def traced_decorators(ix, fn) -> List[str]:
    """The decorators of `fn` whose wrappers run where torch.compile traces: those under an `@torch.compile` of
    it, or all of them when it has none (it is entered through all of them)."""
    compiles = [i for i, d in enumerate(fn.decorators) if ix.qualify(strip_call(d)) in COMPILE]
    return fn.decorators[compiles[0] + 1:] if compiles else list(fn.decorators)
