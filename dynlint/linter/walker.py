"""One walk over a parsed unit: keeps the context every rule asks about (which function we are in, is it
traced, which loops/try/with enclose us, what a dotted name resolves to) and dispatches each node to the
rules that visit its type, in one pass (like libcst's batched visitors, plus region filtering).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import traceback
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Type, TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from dynlint.linter.codes import INTERNAL_ERROR, InternalError
from dynlint.linter.finding import Edit, Finding, Fix
from dynlint.linter.positions import fast_position


@dataclass(frozen=True)
class Unit:
    text: str
    line_offset: int          # unit line 1 is file line 1 + line_offset
    col_offset: int           # every unit line had this many leading characters removed
    scope: Tuple[str, ...]    # enclosing class/function names of the unit's first statement
    site: bool = False        # a top-level statement holding compile set-up or compiled calls


T = TypeVar("T")


@functools.lru_cache(maxsize=64)
def parse(text: str) -> cst.Module:
    """libcst's parse of a unit's text, shared: a def the analysis reads to judge its callers (a caller's
    `forward`) is usually a unit of the same file too, parsed once for both (libcst trees are immutable)."""
    return cst.parse_module(text)


def dotted(node: cst.CSTNode) -> Optional[str]:
    """`a.b.c` for Name/Attribute chains, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def internal_error(path: str, where: str, exc: BaseException, debug: bool, line: int = 1, column: int = 0) -> Finding:
    """A DYN001 finding for an exception of dynlint's own (a bug): names where it happened; the traceback with
    --debug."""
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)) if debug else \
        f"{type(exc).__name__}: {exc}"
    return Finding(path=path, line=max(line, 1), column=max(column, 0), code=INTERNAL_ERROR, name=InternalError.name,
                   message=InternalError.message.format(where=where, detail=detail), severity="error")


FAST_POSITIONS = 8          # per unit; past that, positions come from libcst's metadata for the whole unit


class Context:
    """What rules may ask while the walk is at a node. One per unit."""

    def __init__(self, unit: Unit, path: str, index, project, regions: Dict[str, Tuple[str, ...]],
                 source: str = ""):
        self.unit = unit
        self.source = source                        # the whole file's text
        self.path = path
        self.index = index
        self.project = project
        self.regions = regions
        self.scope: List[str] = list(unit.scope)
        self.functions: List[cst.CSTNode] = []      # FunctionDef / Lambda nodes, innermost last
        self.region_depth: List[bool] = []          # per entered function: traced?
        self.blocks: List[cst.CSTNode] = []         # For/While/Try/With enclosing, in the current function
        self.block_stack: List[List[cst.CSTNode]] = []
        self.parents: List[cst.CSTNode] = []
        self._analyses: Dict[tuple, object] = {}    # (provider, args) -> its result for this unit
        self.findings: List[Finding] = []
        self._qualified: Dict[cst.CSTNode, Optional[str]] = {}     # libcst nodes hash by identity
        self.current: Optional[cst.CSTNode] = None      # the node being visited (or left)
        # id(loop) -> id(statement of its body) where a reported break makes Dynamo skip the whole frame on
        # every iteration: nothing later in that body is traced (rules/common.py, TorchRule.report)
        self.skipping: Dict[int, int] = {}
        self._ast = None                                # the unit's `ast` tree, for fast_position
        self._wrapper: Optional[MetadataWrapper] = None
        self._positions = None
        self._fast_positions = 0                        # positions found the fast way in this unit so far

    # ---- questions rules ask ------------------------------------------------------------------
    def analysis(self, provider: Callable[..., T], *args) -> T:
        """`provider(ctx, *args)`, built once per unit and shared by every rule that asks (the tensor analysis,
        the names compiled in the file, ...). Keyed by the provider itself, so each has one typed answer;
        libcst nodes among `args` count by identity."""
        key = (provider, *args)
        if key not in self._analyses:
            self._analyses[key] = provider(self, *args)
        return self._analyses[key]

    @property
    def qualname(self) -> str:
        return ".".join(self.scope)

    @property
    def in_region(self) -> bool:
        return bool(self.region_depth) and self.region_depth[-1]

    @property
    def function(self) -> Optional[cst.CSTNode]:
        return self.functions[-1] if self.functions else None

    @property
    def class_name(self) -> str:
        """The top-level class around the code in view: the unit's (a method checked on its own), or the one the
        walk is in (a unit holding a whole class, as a site statement's does)."""
        if self.unit.scope:
            return self.unit.scope[0]
        classes = self.index.classes if self.index is not None else {}
        return self.scope[0] if self.scope and self.scope[0] in classes else ""

    def region_chain(self) -> Tuple[str, ...]:
        scope = self.qualname
        while scope:
            if scope in self.regions:
                return self.regions[scope]
            scope = scope.rpartition(".")[0]
        return ()

    def qualify(self, node: cst.CSTNode) -> Optional[str]:
        """Fully qualified dotted name of a Name/Attribute through the file's imports, e.g. `F.relu` ->
        `torch.nn.functional.relu`."""
        if node in self._qualified:             # asked many times per node (every rule's visit_Call)
            return self._qualified[node]
        d = dotted(node)
        q = self._qualified[node] = self.index.qualify(d) if d and self.index else d
        return q

    def parent(self, level: int = 0) -> Optional[cst.CSTNode]:
        """The node's parent (level 0), grandparent (1), ... Rules are called before the node is pushed."""
        return self.parents[-1 - level] if len(self.parents) > level else None

    # ---- reporting ----------------------------------------------------------------------------
    def position(self, node: cst.CSTNode):
        """(line, column, end line, end column) of a node of this unit in the file."""
        span = None
        # a few findings: skip whole-unit metadata; many: compute it once (each fast position generates the code
        # of its whole statement, so many findings in one big statement would be quadratic)
        if self._positions is None and self.current is not None and self._fast_positions < FAST_POSITIONS:
            self._fast_positions += 1
            if self._ast is None:
                try:
                    self._ast = ast.parse(self.unit.text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    self._ast = False
            if self._ast:
                try:
                    span = fast_position(self._wrapper.module, self._ast, self.parents + [self.current], node)
                except Exception:          # a shortcut only: any surprise means the slow, sure way below
                    span = None
        if span is None:
            if self._positions is None:
                self._positions = self._wrapper.resolve(PositionProvider)
            r = self._positions[node]
            span = (r.start.line, r.start.column, r.end.line, r.end.column)
        u = self.unit
        return (span[0] + u.line_offset, span[1] + u.col_offset, span[2] + u.line_offset, span[3] + u.col_offset)

    def report(self, rule, node: cst.CSTNode, message: str, gb_types: Optional[Sequence[str]] = None,
               autofix=None, at: Optional[Tuple[int, int, int, int]] = None,
               related: Sequence[tuple] = (), pattern: str = "", through: Optional[cst.CSTNode] = None,
               guard: Tuple[int, str] = ()) -> None:
        """`autofix`: a rule's fix plan (title, safety, edits as (node of this unit, replacement) pairs,
        imports), turned into file edits here. `at`: the finding's span in the file when it stands elsewhere
        than `node` (a recompile finding at the guard Dynamo names); `related`: (line, column, what happens
        there) of this file, or (path, line, column, what) of another (findings at one place are merged per
        file: linter/finding.merge_related). `through`: the span runs on to the end of this node (a decorated
        class: from its first decorator, where the class body's own frame starts, to its name). `guard`: see
        Finding.guard."""
        line, col, end_line, end_col = at or self.position(node)
        if through is not None and at is None:
            end_line, end_col = self.position(through)[2:]
        more = tuple(r if len(r) == 4 else (self.path, *r) for r in related)   # (path,) line, column, what
        chain = self.region_chain() if at is None else ()
        self.findings.append(Finding(
            path=self.path, line=line, column=col, end_line=end_line, end_column=end_col, code=rule.code,
            name=rule.name, message=message, fix=rule.fix, severity=rule.severity,
            gb_types=tuple(gb_types if gb_types is not None else rule.gb_types),
            chain=chain if len(chain) > 1 else (), related=more, pattern=pattern, guard=guard,
            autofix=self.render_fix(autofix) if autofix else None))

    def render_fix(self, plan) -> Fix:
        """File edits for a fix plan: each target node's file span, and its replacement rendered as source (an
        expression, or a list of statements at column 0, indented by the fixer where the target stands). A fix
        that needs a module the file does not import at its top level (`import torch` in a file that imports
        torch lazily, or not at all) is unsafe whatever the rule says: importing the file would import more."""
        module = self._wrapper.module
        edits = []
        for target, replacement in plan.edits:
            line, col, end_line, end_col = self.position(target)
            many = isinstance(replacement, (list, tuple))
            code = "".join(module.code_for_node(s) for s in replacement) if many else \
                module.code_for_node(replacement)
            edits.append(Edit(line, col, end_line, end_col, type(target).__name__, code, many))
        top = top_level_imports(self.source)
        new = [m for m, _ in plan.imports if not any(t == m or t.startswith(m + ".") for t in top)]
        safety, title = plan.safety, plan.title
        if new:
            safety, title = "unsafe", f"{title}; adds `import {', '.join(new)}`"
        return Fix(title, safety, tuple(edits) + tuple(plan.file_edits), tuple(plan.imports))


@functools.lru_cache(maxsize=4)
def top_level_imports(source: str) -> frozenset:
    """The modules a file imports in its top-level statements (`import a.b`, `from a import b` give "a.b",
    "a"): what importing the file imports for sure, not under an `if` or `try`."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    out = set()
    for stmt in body:
        if isinstance(stmt, ast.Import):
            out.update(a.name for a in stmt.names)
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            out.add(stmt.module)
    return frozenset(out)


# Fields that hold only whitespace, punctuation or operators: no rule looks inside them, and skipping them
# is most of what makes this walk several times faster than libcst's own visitor machinery (which also
# rebuilds every node it visits).
_SKIP = frozenset({"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
                   "footer", "newline", "trailing_whitespace", "operator", "dot", "colon", "equal", "star",
                   "lbracket", "rbracket", "lbrace", "rbrace", "asynchronous", "default_comma", "whitespace"})
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def child_fields(cls: type) -> Tuple[str, ...]:
    f = _FIELDS.get(cls)
    if f is None:
        f = _FIELDS[cls] = tuple(x.name for x in dataclasses.fields(cls)
                                 if x.name not in _SKIP and not x.name.startswith("whitespace"))
    return f


_IS_NODE: Dict[type, bool] = {}


def _is_node(cls: type) -> bool:
    """issubclass(cls, CSTNode), memoised: libcst's nodes are ABCs, and isinstance on an ABC is slow."""
    r = _IS_NODE.get(cls)
    if r is None:
        r = _IS_NODE[cls] = issubclass(cls, cst.CSTNode)
    return r


def children(node: cst.CSTNode):
    """The semantic children of a node (no whitespace or punctuation), in field order."""
    for name in child_fields(type(node)):
        v = getattr(node, name)
        t = type(v)
        if t is tuple or t is list:
            for c in v:
                if _is_node(type(c)):
                    yield c
        elif _is_node(t):
            yield v


def walk(node: cst.CSTNode, enter: Callable[[cst.CSTNode], bool], leave: Callable[[cst.CSTNode], None]) -> None:
    """Depth-first walk calling enter (return False to skip the subtree) and leave."""
    if enter(node) is False:
        return
    for child in children(node):
        walk(child, enter, leave)
    leave(node)


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node under it (an explicit stack: deep nesting costs no Python frames)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(children(n))


# What a node is to the walk's context, by type (memoised for the same reason as _is_node)
_PLAIN, _CLASS, _DEF, _LAMBDA, _BLOCK = range(5)
_KINDS: Dict[type, int] = {}


def _kind(cls: type) -> int:
    k = _KINDS.get(cls)
    if k is None:
        k = _KINDS[cls] = _CLASS if issubclass(cls, cst.ClassDef) else _DEF if issubclass(cls, cst.FunctionDef) \
            else _LAMBDA if issubclass(cls, cst.Lambda) else \
            _BLOCK if issubclass(cls, (cst.For, cst.While, cst.Try, cst.With)) else _PLAIN
    return k


_HOOKS: Dict[type, Tuple[Tuple[str, str, bool], ...]] = {}


def _hooks(cls: type) -> Tuple[Tuple[str, str, bool], ...]:
    """A rule class's (method, node type name, is a visit) triples, found once per class."""
    h = _HOOKS.get(cls)
    if h is None:
        h = _HOOKS[cls] = tuple((attr, attr.split("_", 1)[1], attr.startswith("visit_")) for attr in dir(cls)
                                if attr.startswith(("visit_", "leave_")))
    return h


class _Walker:
    def __init__(self, ctx: Context, rules, debug: bool):
        self.ctx = ctx
        self.debug = debug
        self.region_visit: Dict[str, List[Tuple[object, Callable]]] = {}
        self.region_leave: Dict[str, List[Tuple[object, Callable]]] = {}
        self.site_visit: Dict[str, List[Tuple[object, Callable]]] = {}
        self.site_leave: Dict[str, List[Tuple[object, Callable]]] = {}
        self.broken = set()
        for rule in rules:
            site = rule.scope == "site"
            for attr, name, visit in _hooks(type(rule)):
                table = (self.site_visit if visit else self.site_leave) if site else \
                    (self.region_visit if visit else self.region_leave)
                table.setdefault(name, []).append((rule, getattr(rule, attr)))

    def _dispatch(self, table, name: str, node: cst.CSTNode) -> None:
        for rule, fn in table.get(name, ()):
            if rule in self.broken:
                continue
            try:
                fn(node)
            except RecursionError:      # input nested too deeply for any recursive analysis: the engine says so
                raise
            except Exception as e:      # a rule's bug must not lose other rules' findings
                self.broken.add(rule)
                line, col, _, _ = self.ctx.position(node)
                self.ctx.findings.append(internal_error(self.ctx.path, f"rule {rule.code} ({rule.name})", e,
                                                        self.debug, line, col))

    def on_visit(self, node: cst.CSTNode) -> bool:
        ctx = self.ctx
        cls = type(node)
        ctx.current = node
        # Rules see the node with the context of where it stands (a def is visited in its enclosing scope).
        if ctx.region_depth and ctx.region_depth[-1] and self.region_visit:
            self._dispatch(self.region_visit, cls.__name__, node)
        if ctx.unit.site and self.site_visit:
            self._dispatch(self.site_visit, cls.__name__, node)
        kind = _kind(cls)
        if kind == _CLASS:
            ctx.scope.append(node.name.value)
        elif kind == _DEF or kind == _LAMBDA:
            if kind == _DEF:
                ctx.scope.append(node.name.value)
            ctx.functions.append(node)
            # closures and lambdas defined inside traced code are traced with it
            ctx.region_depth.append(ctx.in_region or ctx.qualname in ctx.regions)
            ctx.block_stack.append(ctx.blocks)
            ctx.blocks = []
        elif kind == _BLOCK:
            ctx.blocks.append(node)
        ctx.parents.append(node)
        return True

    def on_leave(self, node: cst.CSTNode) -> None:
        ctx = self.ctx
        ctx.parents.pop()
        cls = type(node)
        kind = _kind(cls)
        if kind == _CLASS:
            ctx.scope.pop()
        elif kind == _DEF or kind == _LAMBDA:
            if kind == _DEF:
                ctx.scope.pop()
            ctx.functions.pop()
            ctx.region_depth.pop()
            ctx.blocks = ctx.block_stack.pop()
        elif kind == _BLOCK:
            ctx.blocks.pop()
        ctx.current = node
        if ctx.region_depth and ctx.region_depth[-1] and self.region_leave:
            self._dispatch(self.region_leave, cls.__name__, node)
        if ctx.unit.site and self.site_leave:
            self._dispatch(self.site_leave, cls.__name__, node)


def walk_unit(module: cst.Module, unit: Unit, sf, rule_classes: Sequence[Type], regions, project,
              debug: bool = False) -> List[Finding]:
    ctx = Context(unit, sf.path, sf.index, project, regions, sf.text)
    ctx._wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    rules = []
    for cls in rule_classes:
        try:
            rules.append(cls(ctx))
        except Exception as e:      # a rule that cannot even start is reported, the others still run
            ctx.findings.append(internal_error(sf.path, f"rule {cls.code} ({getattr(cls, 'name', '')})", e, debug,
                                               unit.line_offset + 1))
    w = _Walker(ctx, rules, debug)
    walk(module, w.on_visit, w.on_leave)
    for rule in rules:            # the post-passes see every rule's findings of the unit
        try:
            rule.finish(tuple(ctx.findings))
        except Exception as e:      # one rule's bug: a DYN001, the other findings kept
            ctx.findings.append(internal_error(sf.path, f"rule {rule.code} ({getattr(rule, 'name', '')})", e,
                                               debug, unit.line_offset + 1))
    return ctx.findings
