"""What a name or attribute is bound to: in a function (its assignments and where each binding and each use of a
name sits, for `reaching`), in a class (the calls through `self.<attr>`) and in a file (which classes hold
instances of which, which functions call through them; a function's lines parsed on their own)."""
from __future__ import annotations

import io
from functools import lru_cache
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.tensors.kinds import UNKNOWN, VALUE
from dynlint.analysis.tensors.torch_api import CONTAINER_BUILTINS, EVIDENCE_ATTRS, EVIDENCE_METHODS
from dynlint.linter.walker import parse, walk


def read_file_facts(project, ix):
    """Once per file: class -> the (class, attribute) pairs of this file holding an instance of it, and
    ("self", class, attribute) / ("name", "", function) -> the functions of this file calling through it."""
    holders: Dict[str, Set[Tuple[str, str]]] = {}
    for c, info in ix.classes.items():
        for attr in info.attrs:
            for p, ci in project.attr_classes(ix.path, c, attr):
                if p == ix.path:
                    holders.setdefault(ci.name, set()).add((c, attr))
    sites: Dict[Tuple[str, str, str], Set[str]] = {}
    for q, fn in ix.functions.items():
        for site in fn.calls:
            if site.kind == "self":
                sites.setdefault(("self", fn.cls, site.target), set()).add(q)
            elif site.kind == "name":
                sites.setdefault(("name", "", site.target), set()).add(q)
    return holders, sites


def calls_through(fn: cst.FunctionDef, attrs: Set[str], names: Set[str] = frozenset()) -> List[cst.Call]:
    """The calls in `fn` of `self.<attr>(...)`, `self.<attr>[i](...)` and of a loop variable over `self.<attr>`
    (`for layer in self.layers:` / `enumerate(self.layers)`), for the attributes `attrs`; and of `name(...)`."""
    def holder(e) -> Optional[str]:
        if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == "self":
            return e.attr.value
        return None

    loops: Dict[str, str] = {}
    calls: List[cst.Call] = []

    def enter(node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not fn:
            return False
        if isinstance(node, cst.For):
            it, target = node.iter, node.target
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" and \
                    it.args and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                it, target = it.args[0].value, target.elements[1].value
            if isinstance(target, cst.Name) and holder(it) in attrs:
                loops[target.value] = holder(it)
        elif isinstance(node, cst.Call):
            f = node.func
            if holder(f) in attrs or (isinstance(f, cst.Subscript) and holder(f.value) in attrs) or \
                    (isinstance(f, cst.Name) and (f.value in loops or f.value in names)):
                calls.append(node)
        return True

    walk(fn, enter, lambda node: None)
    return calls


@lru_cache(maxsize=8)
def _lines(source: str) -> List[str]:
    """The file's lines, split where the tokenizer splits, once per file (split per function asked about, a file
    of n functions cost n times its size)."""
    return list(io.StringIO(source, newline=""))


def parse_lines(ctx, start: int, end: int, indent: int) -> Optional[cst.Module]:
    """Lines start..end of the checked file (a function or class of it, found by the index) parsed on their own
    with libcst, as the units are, the `indent` of their first line cut from every line (a method, a nested
    class); None where a line is indented less, a form feed or a construct too deep for the index's parser is
    in them, or they do not parse."""
    if not ctx.source or any(start <= d[0] <= end for d in getattr(ctx.index, "deep", ())):
        return None
    lines = _lines(ctx.source)[start - 1:end]
    prefix = " " * indent
    if not lines or any(line.strip() and not line.startswith(prefix) for line in lines):
        return None
    text = "".join(line[indent:] if line.strip() else line.lstrip(" ") for line in lines)
    if "\f" in text:
        return None
    try:
        return parse(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None


class Where:
    """Where a binding or a use sits in its function, enough to tell which bindings reach a use: `order`, the
    statement's place in the text; `blocks`, the ids of the suites around it, outermost first; `loops`, the ids of
    the `for` / `while` loops around it; `sure`: a binding that runs whenever its statement does (not one in a
    comprehension or a walrus inside an expression), so it hides the bindings before it from what follows."""
    __slots__ = ("order", "blocks", "loops", "sure")

    def __init__(self, order: int, blocks: tuple, loops: tuple, sure: bool = True):
        self.order, self.blocks, self.loops, self.sure = order, blocks, loops, sure


ENTRY = Where(-1, (), ())                   # a parameter: bound before the body runs


def reaching(defs: List[Where], use: Optional[Where]) -> List[int]:
    """The indices of the bindings in `defs` that can reach `use` (flow-sensitive, structured): the last binding
    before the use in a suite around it (it runs on every path to the use and hides the ones before it), the
    bindings between that one and the use, and the bindings later in a loop around the use that does not also
    hold that last binding (they reach it through the loop's next iteration). Without a `use`: all of them."""
    if use is None:
        return list(range(len(defs)))
    last, at, blocks = -1, use.order, use.blocks
    for i, d in enumerate(defs):
        if d.sure and d.order < at and (last < 0 or d.order >= defs[last].order) and \
                blocks[:len(d.blocks)] == d.blocks:
            last = i
    floor = defs[last].order if last >= 0 else -2
    around = set(use.loops) - set(defs[last].loops if last >= 0 else ())    # loops a later binding comes back by
    out = []
    for i, d in enumerate(defs):
        if i == last or floor < d.order < at or (not d.sure and d.order == at):
            out.append(i)
        elif around and d.order >= at and not around.isdisjoint(d.loops):
            out.append(i)
    return out


def _isinstance_tensor(test: cst.BaseExpression) -> str:
    """The name that `isinstance(name, torch.Tensor)` (as the test, or the first operand of an `and`) proves a
    tensor; "" for any other test."""
    while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        test = test.left
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" and \
            len(test.args) == 2 and isinstance(test.args[0].value, cst.Name):
        kind = cst.Module([]).code_for_node(test.args[1].value)
        if kind in ("torch.Tensor", "Tensor", "nn.Parameter", "torch.nn.Parameter"):
            return test.args[0].value.value
    return ""


def _simple_isinstance(test: cst.BaseExpression) -> bool:
    """The test is `isinstance(name, torch.Tensor)` alone (so its failing means: not a tensor)."""
    return not isinstance(test, cst.BooleanOperation) and bool(_isinstance_tensor(test))


def _ends_flow(body: cst.BaseSuite) -> bool:
    """The suite always leaves the function (its last statement returns or raises)."""
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
    if isinstance(body, cst.SimpleStatementSuite):
        last = body
    small = last.body[-1] if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and last.body \
        else None
    return isinstance(small, (cst.Return, cst.Raise))


# What a node type is to `Assignments` (found once per type: libcst's base classes are ABCs, slow to test)
_STMT, _SUITE, _EXPR, _NAME, _IF, _LOOP, _HEAD = 1, 2, 4, 8, 16, 32, 64
_ROLES: Dict[type, int] = {}
_VISITS: Dict[type, object] = {}


def _role(cls: type) -> int:
    role = 0
    if issubclass(cls, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        role |= _STMT
    elif issubclass(cls, cst.BaseSuite):
        role |= _SUITE
    elif issubclass(cls, (cst.CompFor, cst.BooleanOperation, cst.IfExp)):
        role |= _EXPR
    elif issubclass(cls, cst.Name):
        role |= _NAME
    if issubclass(cls, cst.If):
        role |= _IF
    if issubclass(cls, (cst.For, cst.While)):
        role |= _LOOP
    if issubclass(cls, (cst.For, cst.With, cst.ExceptHandler)):
        role |= _HEAD
    return role


# where torch's signatures take a boolean tensor (a mask, a condition): method -> (the argument's position in a
# tensor's method, in the `torch.` function), None where there is no such form
MASK_USES = {"masked_fill": (0, 1), "masked_fill_": (0, None), "masked_select": (0, 1), "masked_scatter": (0, None),
             "masked_scatter_": (0, None), "where": (None, 0)}


class Assignments:
    """Collect name -> assigned value nodes in a function body (not in nested functions), with where each binding
    and each use of a name is (`Where`), for `reaching`."""

    def __init__(self):
        self.values: Dict[str, list] = {}
        self.where: Dict[str, List[Where]] = {}
        self.uses: Dict[int, Where] = {}          # id(Name node) -> where it is read
        self.evidence: Set[str] = set()     # names used the way only tensors are: x.shape, x.view(...)
        self.masks: Set[str] = set()        # names torch's signatures require to be boolean tensors (MASK_USES)
        self._order = 0
        self._blocks: List[int] = []
        self._loops: List[int] = []
        self._expr: List[int] = []          # comprehensions, `and` / `or`, `a if c else b` being walked
        self._head: Optional[Where] = None  # where a `for` / `with` / `except` binds its targets
        self.narrowed: Set[int] = set()     # id(Name) read inside `if isinstance(name, torch.Tensor):`
        self.not_tensor: Set[int] = set()   # ... in its `else`, or after it when its body returns or raises
        self._narrow: Dict[int, Tuple[str, bool]] = {}   # id(suite) -> (name its `if` test decides, a tensor?)
        self._ends: Dict[int, int] = {}     # id(suite) -> the order of its last statement
        self._joined: Dict[int, Dict[str, tuple]] = {}   # id(If) -> names every arm of it binds: their values
        self._bound: List[Set[str]] = []    # names bound inside each `if` statement being walked
        self._tensors: List[str] = []       # names proven tensors where the walk stands (one per suite)
        self._others: List[List[str]] = []  # names proven not tensors (per suite)

    def here(self, sure: bool = True) -> Where:
        return Where(self._order, tuple(self._blocks), tuple(self._loops), sure and not self._expr)

    def enter(self, node: cst.CSTNode) -> bool:
        cls = type(node)
        role = _ROLES.get(cls)
        if role is None:
            role = _ROLES[cls] = _role(cls)
        if role & _STMT:
            self._order += 1
            self._head = None
        elif role & _SUITE:
            self._blocks.append(id(node))
            name, tensor = self._narrow.get(id(node), ("", True))
            self._tensors.append(name if tensor else "")
            self._others.append([name] if name and not tensor else [])
        elif role & _EXPR:
            self._expr.append(id(node))
        elif role & _NAME:
            self.uses[id(node)] = self.here()
            if node.value in self._tensors:
                self.narrowed.add(id(node))
            elif any(node.value in names for names in self._others):
                self.not_tensor.add(id(node))
        if role & _IF:
            self._bound.append(set())
            name = _isinstance_tensor(node.test)
            if name:
                self._narrow[id(node.body)] = (name, True)
                if isinstance(node.orelse, cst.Else) and _simple_isinstance(node.test):
                    self._narrow[id(node.orelse.body)] = (name, False)
        if role & _LOOP:
            self._loops.append(id(node))
        if role & _HEAD:
            # its targets are bound inside its body (a loop may run no time, an exception may not be raised)
            self._head = Where(self._order, tuple(self._blocks) + (id(node.body),), tuple(self._loops))
        visit = _VISITS.get(cls)
        if visit is None:
            visit = _VISITS[cls] = getattr(Assignments, "visit_" + cls.__name__, False)
        return visit(self, node) if visit else True

    def leave(self, node: cst.CSTNode) -> None:
        role = _ROLES[type(node)]
        if role & _SUITE:
            self._ends[id(node)] = self._order
            self._blocks.pop()
            self._tensors.pop()
            self._others.pop()
        elif role & _IF and node.orelse is None and _simple_isinstance(node.test) and \
                _ends_flow(node.body) and self._others:
            self._others[-1].append(_isinstance_tensor(node.test))     # `if isinstance(x, Tensor): return ...`
        elif role & _EXPR:
            self._expr.pop()
        if role & _LOOP:
            self._loops.pop()
        if role & _IF:
            bound = self._bound.pop()
            if self._bound:
                self._bound[-1] |= bound
            if node.orelse is not None and bound:
                self._join(node, bound)

    def _join(self, node: cst.If, bound: Set[str]) -> None:
        """`if c: m = a` / `else: m = b` (an `elif` chain ending in `else` too): every path binds `m`, so after
        the statement the bindings before it no longer reach. Recorded as one binding there, of either value
        (("either", values)), which `reaching` takes as the last sure one."""
        orelse = node.orelse
        inner = self._joined.pop(id(orelse), None) if isinstance(orelse, cst.If) else None
        if isinstance(orelse, cst.If) and inner is None:
            return                      # an `elif` chain with no `else`: some path binds nothing
        arms = [node.body] + ([orelse.body] if isinstance(orelse, cst.Else) else [])
        joined: Dict[str, tuple] = {}
        for name in sorted(bound):
            defs, values = self.where[name], []
            for arm in arms:
                found = self._bound_in(name, defs, arm)
                if found is None:
                    break
                values += found
            else:
                if inner is None or name in inner:
                    joined[name] = tuple(values) + (inner[name] if inner else ())
        if not joined:
            return
        self._joined[id(node)] = joined
        where = Where(self._order, tuple(self._blocks), tuple(self._loops), not self._expr)
        for name, values in joined.items():
            self._add(name, ("either", values), where)

    def _bound_in(self, name: str, defs: List[Where], arm: cst.BaseSuite) -> Optional[list]:
        """The values of `name` that reach the end of `arm` when the arm itself binds it on every path through it
        (the last sure binding reaching there is inside the arm); None when it may not."""
        end = Where(self._ends.get(id(arm), self._order) + 1, tuple(self._blocks) + (id(arm),), tuple(self._loops))
        keep = reaching(defs, end)
        if not any(defs[i].sure and id(arm) in defs[i].blocks and end.blocks[:len(defs[i].blocks)] == defs[i].blocks
                   for i in keep):
            return None
        return [self.values[name][i] for i in keep]

    def _add(self, name: str, value, where: Optional[Where] = None) -> None:
        if self._bound:
            self._bound[-1].add(name)
        self.values.setdefault(name, []).append(value)
        self.where.setdefault(name, []).append(where or self._head or self.here())

    def _bind(self, target: cst.CSTNode, value) -> None:
        if isinstance(target, cst.Name):
            self._add(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = [e.value for e in target.elements]
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elems):
                for t, v in zip(elems, value.elements):
                    self._bind(t, v.value)
            else:
                # a, b = t.chunk(2): each part is a tensor when the whole is; else unknown. The position (None
                # after a starred target) lets `a, b = helper(x)` read the helper's `return a, b`.
                starred = any(isinstance(e, cst.StarredElement) for e in target.elements)
                # (inside an unpacked element, `x, (h, w) = f()`: an element of that element, `_nested_element`)
                for i, t in enumerate(elems):
                    self._bind(t, ("unpack", value, None if starred else i, len(elems))
                               if isinstance(value, cst.CSTNode) or (isinstance(value, tuple) and value[0] == "unpack")
                               else value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, UNKNOWN)

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value in EVIDENCE_ATTRS:
            self.evidence.add(node.value.value)

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value in EVIDENCE_METHODS:
            self.evidence.add(f.value.value)
        if isinstance(f, cst.Attribute) and f.attr.value in MASK_USES:
            function = isinstance(f.value, cst.Name) and f.value.value == "torch"     # `torch.where(...)`
            position = MASK_USES[f.attr.value][function]
            args = [a for a in node.args if not a.keyword and not a.star]
            if position is not None and len(args) > position and isinstance(args[position].value, cst.Name) and \
                    (not function or f.attr.value != "where" or len(args) == 3):
                self.masks.add(args[position].value.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target, cst.BinaryOperation(left=node.target, operator=cst.Add(), right=node.value))

    def visit_For(self, node: cst.For) -> None:
        self._bind_loop(node.target, node.iter)

    def _bind_loop(self, target, it) -> None:
        """The target of a `for` statement or a comprehension's `for` over `it`."""
        func = it.func.value if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) else None
        if func == "range":
            self._bind(target, VALUE)
        elif func == "enumerate" and it.args and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            # for i, row in enumerate(x): i is an int, row is an element of x
            self._bind(target.elements[0].value, VALUE)
            self._bind_zipped(target.elements[1].value, it.args[0].value)
        else:
            self._bind_zipped(target, it)

    def _bind_zipped(self, target, iterable) -> None:
        """`for a, b in zip(x, y)`: `a` is an element of `x`, `b` of `y`."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and \
                iterable.func.value == "zip" and isinstance(target, (cst.Tuple, cst.List)) and \
                len(target.elements) == len(iterable.args) and not any(a.star or a.keyword for a in iterable.args):
            for t, a in zip(target.elements, iterable.args):
                self._bind_element(t.value, a.value)
        else:
            self._bind_element(target, iterable)

    def _bind_element(self, target, iterable) -> None:
        """`for row in x`: rows of a tensor are tensors (judged lazily, like `a, b = x.chunk(2)`)."""
        if isinstance(target, cst.Name) and not isinstance(iterable, cst.Call) or \
                isinstance(target, cst.Name) and isinstance(iterable, cst.Call) and \
                not (isinstance(iterable.func, cst.Name) and iterable.func.value in CONTAINER_BUILTINS):
            self._add(target.value, ("iter", iterable), self._head)
        else:
            self._bind_unknown(target)

    def _bind_unknown(self, target) -> None:
        if isinstance(target, cst.Name):
            self._add(target.value, UNKNOWN, self._head)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._bind_unknown(e.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_unknown(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_unknown(node.name.name)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._head = self.here(False)
        self._bind_loop(node.target, node.iter)
