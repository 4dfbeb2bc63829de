"""Tensor-ness inference shared by all rules: is this expression a tensor (`Tensors`, the queries)?

Light and explainable, per function and flow-insensitive: a local name's kind (`kinds`) is what all its
assignments (`assignments`) agree on, each judged by what torch's API returns (`torch_api`).
"""
from __future__ import annotations

import ast
import collections
import functools
import io
import re
from contextlib import contextmanager
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.guard_lines import parsed
from dynlint.analysis.regions import is_module_class
from dynlint.analysis.tensors.assignments import ENTRY, Assignments, Where, parse_lines, reaching
from dynlint.analysis.tensors.attributes import AttributeKinds
from dynlint.analysis.tensors.callers import CallerKinds
from dynlint.analysis.tensors.floating import Floating
from dynlint.analysis.tensors.kinds import TENSOR, TENSORS, UNKNOWN, VALUE, WEAK, combine, combined, merge
from dynlint.analysis.tensors.syntax import NON_TENSOR_TESTS, bound_arguments, int_literal, is_device, keyword_arg, \
    np_sized_draw, optional_param, type_comment
from dynlint.analysis.tensors.torch_api import (
    BOOL_CREATORS, BOOL_METHODS, BOOL_TORCH_FUNCS, CONTAINER_BUILTINS, EVIDENCE_METHODS, FULL_REDUCTIONS,
    INTEGER_DTYPES, LAYOUT_METHODS, MODULE_TENSORS, NP_TRACED_DRAWS, NP_VALUE_FUNCS, SCALAR_MATH,
    SCALAR_PRESERVING, SEQUENCE_ANNOTATIONS, TENSOR_ANNOTATIONS, TENSOR_METHODS, TORCH_OTHER_FUNCS,
    TORCH_TENSOR_CLASSES, TORCH_TENSOR_PREFIXES, TORCH_VALUE_FUNCS, VALUE_ANNOTATIONS, VALUE_BUILTINS, VALUE_METHODS)
from dynlint.linter.index import ITERATOR_WRAPPERS
from dynlint.linter.walker import walk

# forward() parameters named like counts, sizes, indices or switches are usually Python values, not tensors
INT_LIKE_PARAM = re.compile(r"^(num_|n_|max_|min_|use_|return_|output_|is_|do_|enable_|with_|only_)|"
                            r"(_size|_sizes|_shape|_shapes|_len|_length|_dim|_steps?|_idx|_index|_mode|_layer|"
                            r"_layers|_count|_device|_dtype)$|"
                            r"^(n|k|dim|step|steps|mode|idx|index|epoch|iteration|seq_len|length|layer|depth|"
                            r"shape|size|sizes|shapes|device|dtype)$")


class _PerFile:
    """A small cache keyed by a file's index object (unhashable: a dataclass), holding the newest few."""

    def __init__(self, size: int = 64):
        self.size, self.items = size, collections.OrderedDict()

    def get(self, ix, make):
        entry = self.items.get(id(ix))
        if entry is None or entry[0] is not ix:
            entry = self.items[id(ix)] = (ix, make())
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return entry[1]


class PerRun:
    """What the analysis learns of a file once and shares between its units (and the frame pass) for one check run
    (`Project.per_run`); a unit checked without a project keeps its own."""

    def __init__(self):
        self.file_facts = _PerFile()    # file index -> `read_file_facts`
        self.callers = _PerFile()       # file index -> {((class, method), strict): parameter kinds from the callers}
        self.parsed = _PerFile()        # file index -> {qualname: its def}
        self.refs = _PerFile()          # file index -> {name: (times named, times called)}
        self.foreign: Dict[Tuple[str, int], object] = {}    # (another file, depth) -> its analysis (foreign.py)

    @classmethod
    def of(cls, ctx) -> "PerRun":
        return ctx.project.per_run(cls) if ctx.project is not None else cls()


class Tensors(CallerKinds, AttributeKinds):
    """The shared analysis (one per unit, via `Tensors.of(ctx)`)."""

    def __init__(self, ctx, strict: bool = False):
        self.ctx = ctx
        self._run = PerRun.of(ctx)
        # strict: no guessing from names -- an unannotated parameter of `forward` is a tensor only when the body
        # uses it as one (`x.shape`, `x.view(...)`); what a fix needs before it rewrites `int(t)` as `t.long()`
        self.strict = strict
        self._envs: Dict[int, Dict[str, object]] = {}
        self._active: Set[object] = set()          # keys of names being judged (`_reaching`)
        self._returning: Set[int] = set()          # ids of the functions whose returns are being judged
        self._assumed: Dict[object, Optional[str]] = {}
        self._hit: Set[object] = set()
        self._taint: List[bool] = []                 # per name being judged: rests on an assumption (a cycle)?
        self._within: List[cst.FunctionDef] = []     # helpers of this file being judged (`within`)
        self._within_cls: List[str] = []             # ... and the class of each ("" for a function)
        # helper name -> (its def, its return values), or None; the defs stay alive: environments are keyed by id()
        self._helper_defs: Dict[str, Optional[Tuple[cst.FunctionDef, List[cst.BaseExpression]]]] = {}
        self._callers: Dict[Tuple[str, str], Optional[Dict[str, str]]] = {}   # (class, method) -> param kinds
        self._self_attrs: Dict[Tuple[str, str], Set[str]] = {}      # (path, class) -> its tensor attributes
        self._floats = Floating(self)

    @classmethod
    def of(cls, ctx) -> "Tensors":
        return ctx.analysis(cls)

    @classmethod
    def strict_of(cls, ctx) -> "Tensors":
        """The analysis without the guess that `forward`'s unannotated parameters are tensors (the rules warn on
        that guess; a fix that would break a non-tensor, `t.long()` of an int, must not rely on it)."""
        return ctx.analysis(cls, True)

    # ---- public --------------------------------------------------------------------------------
    def is_tensor(self, node: cst.CSTNode) -> bool:
        return self.kind(node) == TENSOR

    def kind(self, node: cst.CSTNode) -> str:
        try:
            return self._kind(node)
        except RecursionError:
            return UNKNOWN

    def assigned_values(self, name: str) -> list:
        """The expressions assigned to a local name in the current function ([] for parameters and names
        bound by loops, `with` or unpacking)."""
        entry = self._env().get(name)
        if not isinstance(entry, list):
            return []
        entry = [v for v in entry if not (isinstance(v, tuple) and v[0] == "either")]    # repeats of the others
        return [v for v in entry if not isinstance(v, (str, tuple))] if \
            all(not isinstance(v, (str, tuple)) for v in entry) else []

    def bound_in(self, fn: cst.FunctionDef, name: str) -> bool:
        """Whether `fn` itself binds `name` (a parameter or an assignment in its body)."""
        return name in self._env_of(fn) and name != " memo"

    def is_local(self, name: str) -> bool:
        """Bound in the current function: a parameter, an assignment, a loop or `with` target."""
        env = self._env()
        return name in env and name != " memo"

    def is_bool(self, node: cst.CSTNode, depth: int = 0) -> bool:
        """A boolean tensor (a mask): tensor comparisons, `~m`, `m1 & m2`, `torch.isnan(x)`, `x.bool()`, an
        item or row of one (`xc[xi]`), or a local every assignment of which is one. Integer index tensors are
        not masks."""
        if depth > 8:
            return False
        if isinstance(node, cst.Comparison):
            return not any(isinstance(c.operator, NON_TENSOR_TESTS) for c in node.comparisons) \
                and self.kind(node) in (TENSOR, WEAK)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return self.is_bool(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_bool(node.left, depth + 1) or self.is_bool(node.right, depth + 1)
        if isinstance(node, cst.Call):
            return self._bool_call(node, depth)
        if isinstance(node, cst.Name):
            return self._bool_name(node, depth)
        if isinstance(node, cst.Subscript):
            return self.is_bool(node.value, depth + 1)      # a row of a mask is a mask (`xc[xi]`)
        return False

    def _bool_call(self, node: cst.Call, depth: int) -> bool:
        q = self.ctx.qualify(node.func) or ""
        if q in BOOL_TORCH_FUNCS:
            return True
        if q.startswith("torch.") and q.rsplit(".", 1)[-1] in BOOL_CREATORS:
            return any(a.keyword and a.keyword.value == "dtype" and
                       (self.ctx.qualify(a.value) or "") == "torch.bool" for a in node.args)
        if isinstance(node.func, cst.Attribute) and not q.startswith("torch."):
            return self._bool_method(node, node.func, depth)
        return False

    def _bool_method(self, node: cst.Call, func: cst.Attribute, depth: int) -> bool:
        m = func.attr.value
        recv = self.kind(func.value) in (TENSOR, WEAK)
        if m in BOOL_METHODS and recv:
            return True
        if m == "to" and recv and node.args and (self.ctx.qualify(node.args[0].value) or "") == "torch.bool":
            return True
        if m == "to" and recv and node.args and all(is_device(self.ctx, a.value) for a in node.args):
            return self.is_bool(func.value, depth + 1)         # moved, still a mask
        if m in LAYOUT_METHODS and recv:
            return self.is_bool(func.value, depth + 1)
        return False

    def _bool_name(self, node: cst.Name, depth: int) -> bool:
        env = self._env()
        entry, _ = self._reaching(env, node.value, node)
        bools = node.value in env.get(" bools", ())
        if isinstance(entry, str):
            return bools                 # a parameter never rebound
        if not isinstance(entry, list) or not entry:
            return False
        return all((bools and isinstance(v, str)) or (not isinstance(v, (str, tuple)) and
                                                        self.is_bool(v, depth + 1)) for v in entry)

    def is_scalar(self, node: cst.CSTNode, depth: int = 0) -> bool:
        """A 0-d tensor computed from data: a full reduction (`x.sum()`, `x.argmax()`, `torch.max(x)`) or a
        cast of one, or a local every assignment of which is one."""
        if depth > 8:
            return False
        if isinstance(node, cst.Call):
            return self._scalar_call(node, depth)
        if isinstance(node, cst.BinaryOperation):
            sides = [node.left, node.right]
            return any(self.is_scalar(s, depth + 1) for s in sides) and \
                all(self.is_scalar(s, depth + 1) or self.kind(s) == VALUE for s in sides)
        if isinstance(node, cst.Name):
            entry, _ = self._reaching(self._env(), node.value, node)
            if not isinstance(entry, list) or not entry:
                return False
            return all(not isinstance(v, (str, tuple)) and self.is_scalar(v, depth + 1) for v in entry)
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            # an element of a 1-d tensor computed from data: `(ts == t).nonzero(as_tuple=True)[0][0]`
            return int_literal(node.slice[0].slice.value) and self._one_dim(node.value)
        return False

    def _one_dim(self, node: cst.CSTNode) -> bool:
        """A 1-d tensor computed from data: an element of what `nonzero(as_tuple=True)` or the one-argument
        `torch.where(cond)` give (one 1-d tensor per dimension)."""
        if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and
                isinstance(node.slice[0].slice, cst.Index) and int_literal(node.slice[0].slice.value)):
            return False
        call = node.value
        if not isinstance(call, cst.Call):
            return False
        q = self.ctx.qualify(call.func) or ""
        as_tuple = keyword_arg(call, "as_tuple")
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "nonzero" and not q.startswith("torch."):
            return isinstance(as_tuple, cst.Name) and as_tuple.value == "True" and \
                self.kind(call.func.value) in (TENSOR, WEAK)
        if q in ("torch.nonzero", "torch.where"):
            positional = [a for a in call.args if not a.keyword and not a.star]
            return len(positional) == 1 and len(call.args) == (1 if q == "torch.where" else 2) and \
                (q == "torch.where" or isinstance(as_tuple, cst.Name) and as_tuple.value == "True")
        return False

    def _scalar_call(self, node: cst.Call, depth: int) -> bool:
        positional = [a for a in node.args if not a.keyword and not a.star]
        dims = [a for a in node.args if a.keyword and a.keyword.value in ("dim", "axis")]
        q = self.ctx.qualify(node.func) or ""
        if q.startswith("torch.") and q[6:] in FULL_REDUCTIONS:
            return len(positional) == 1 and not dims
        if isinstance(node.func, cst.Attribute) and not q.startswith("torch."):
            m = node.func.attr.value
            recv = node.func.value
            if m in FULL_REDUCTIONS and not positional and not dims and self.kind(recv) in (TENSOR, WEAK):
                return True
            if m in SCALAR_PRESERVING and self.kind(recv) in (TENSOR, WEAK):
                return self.is_scalar(recv, depth + 1)
        return False

    def host_numel(self, node: cst.CSTNode, depth: int = 0) -> Optional[int]:
        """For an integer tensor built from Python values alone (`torch.tensor([-1, 2])`,
        `torch.as_tensor(x.shape[1:], dtype=torch.long)`,
        a `torch.cat` of such, or a local every assignment of which is one): its element count where the
        source shows it, else -1. None for every other tensor. Dynamo keeps such a tensor's values while it
        traces when it has at most one element, so its `.tolist()` does not break then."""
        if depth > 8:
            return None
        if isinstance(node, cst.Name):
            return self._host_numel_name(node, depth)
        if not isinstance(node, cst.Call) or not node.args or node.args[0].keyword or node.args[0].star:
            return None
        q, data = self.ctx.qualify(node.func), node.args[0].value
        if q == "torch.cat" and isinstance(data, (cst.List, cst.Tuple)):
            counts = [None if e.value is None or isinstance(e, cst.StarredElement) else
                      self.host_numel(e.value, depth + 1) for e in data.elements]
            return None if None in counts else (-1 if -1 in counts else sum(counts))
        if q not in ("torch.tensor", "torch.as_tensor"):
            return None
        dtype = keyword_arg(node, "dtype")
        numel = self._data_numel(data, dtype)
        # floating-point values always break (`Tensor.tolist() with non-integer tensor`)
        return numel if numel is not None and (dtype is None or (self.ctx.qualify(dtype) or "") in INTEGER_DTYPES) \
            else None

    def _host_numel_name(self, node: cst.Name, depth: int) -> Optional[int]:
        entry, _ = self._reaching(self._env(), node.value, node)
        if not isinstance(entry, list) or not entry or any(isinstance(v, (str, tuple)) for v in entry):
            return None
        counts = {self.host_numel(v, depth + 1) for v in entry}
        return None if None in counts else (counts.pop() if len(counts) == 1 else -1)

    def _data_numel(self, data: cst.BaseExpression, dtype: Optional[cst.BaseExpression]) -> Optional[int]:
        """The element count of `torch.tensor(data, dtype=dtype)` made of Python values alone (-1: not shown),
        integers unless a dtype is given; None for any other data."""
        if isinstance(data, (cst.List, cst.Tuple)):
            values = [e.value for e in data.elements]
            if any(isinstance(e, cst.StarredElement) or self._kind(v) != VALUE for e, v in zip(data.elements, values)):
                return None
            if dtype is None and not (values and all(int_literal(v) for v in values)):
                return None
            return -1 if any(isinstance(v, (cst.List, cst.Tuple)) for v in values) else len(values)
        if int_literal(data) or self._kind(data) == VALUE:
            if dtype is None and not int_literal(data):
                return None
            return 1 if int_literal(data) else -1
        return None

    def floating(self, node: cst.CSTNode) -> int:
        """What `node` is known to be, dtype-wise (`Floating.floating`): FLOAT_TENSOR, FLOAT_IF_TENSOR or NOT_FLOAT."""
        return self._floats.floating(node)

    def helper(self, func: cst.CSTNode) -> Optional[Tuple[cst.FunctionDef, List[cst.BaseExpression]]]:
        """The function of this file that the call `func(...)` runs, when it is plain enough to read: defined at
        the top of the file (not in a class, not decorated, no generator), its body ending in a `return`, the
        name bound nowhere else (not imported or assigned, not local to the caller or a function around it).
        Its `def` and its `return` values, to be judged `within` it; None otherwise."""
        if not isinstance(func, cst.Name):
            return None
        name = func.value
        ix = self.ctx.index
        info = ix.functions.get(name) if ix is not None else None
        if info is None or info.cls or info.nested_in or info.decorators or info.indent or \
                info.start != info.def_line or "self" in info.params or \
                name in ix.imports or name in ix.classes or name in ix.assigned_calls or \
                name in ix.module_instances:
            return None
        # what the name means where it is called: the caller's own bindings (its assignments, the `def`s in it)
        # come first; a caller nested in another function could see that one's locals too: not judged
        scope = [self._within[-1].name.value] if self._within else self.ctx.scope
        around = [".".join(scope[:k]) for k in range(1, len(scope) + 1)]
        caller = self._within[-1] if self._within else \
            next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        if caller is None or self.bound_in(caller, name) or any(f"{q}.{name}" in ix.functions for q in around) or \
                any(q in ix.functions for q in around[:-1]):
            return None
        if name not in self._helper_defs:
            self._helper_defs[name] = self._read_helper(info)
        return self._helper_defs[name]

    @contextmanager
    def within(self, fn: cst.FunctionDef, cls: str = ""):
        """Judge names (kinds, assignments, levels) as `fn`'s body binds them, while inside; `cls`: the class
        whose method it is (another class's `self` has other attributes: not judged)."""
        self._within.append(fn)
        self._within_cls.append(cls)
        try:
            yield
        finally:
            self._within.pop()
            self._within_cls.pop()

    def judged(self, node: cst.CSTNode, fn: Optional[cst.FunctionDef], cls: str, how):
        """`how(node)`, judged in `fn` (a binding's function, `bindings`) or here when None."""
        if fn is None:
            return how(node)
        with self.within(fn, cls):
            return how(node)

    def bindings(self, name: str) -> Optional[List[Tuple[cst.BaseExpression, Optional[cst.FunctionDef], str]]]:
        """Every value the local `name` is bound to, each with the function to judge it in (None: this one) and
        that function's class: its assignments, and for `a, b = f(x)` / `a, b = self.sub(x)` the element of
        every `return a, b` of that helper or submodule's `forward` (`callee`). None when one binding is not
        known (a parameter, a loop variable, an unpacking of anything else)."""
        entry = self._env().get(name)
        if not isinstance(entry, list) or not entry:
            return None
        out: List[Tuple[cst.BaseExpression, Optional[cst.FunctionDef], str]] = []
        for v in entry:
            if isinstance(v, cst.CSTNode):
                out.append((v, None, ""))
                continue
            if not (isinstance(v, tuple) and v[0] == "unpack" and len(v) == 4 and v[2] is not None and
                    isinstance(v[1], cst.Call)):
                return None
            found = self.callee(v[1].func)
            if found is None:
                return None
            fn, returns, cls = found
            for r in returns:
                if not (isinstance(r, cst.Tuple) and len(r.elements) == v[3] and
                        not any(isinstance(e, cst.StarredElement) for e in r.elements)):
                    return None
                out.append((r.elements[v[2]].value, fn, cls))
        return out

    def callee(self, func: cst.CSTNode) -> Optional[Tuple[cst.FunctionDef, List[cst.BaseExpression], str]]:
        """What `func(...)` runs, when plain enough to read: a helper of this file (`helper`), or, in a method
        of an nn.Module class, `self.sub(...)` where `__init__` made `sub` an instance of a module class of this
        file (not decorated, its name not rebound) that defines `forward` (and no `__call__`), `sub` assigned
        nowhere else in the class, its bases or a subclass, and no forward hook registered in the file. Its
        `def`, its `return` values and its class ("" for a helper)."""
        if isinstance(func, cst.Name):
            found = self.helper(func)
            return (found[0], found[1], "") if found is not None else self._handed_module(func.value)
        # `self.sub.method(...)` too: a method of the submodule's class (`self.pe_layer.forward_with_coords(x)`)
        chained = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and \
            isinstance(func.value.value, cst.Name) and func.value.value.value == "self"
        if not (chained or isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and
                func.value.value == "self") or self._within or chained and func.attr.value.startswith("__"):
            return None
        ix, cls = self.ctx.index, self.ctx.class_name
        info = ix.classes.get(cls) if ix is not None and cls else None
        attr, name = (func.value.attr.value, func.attr.value) if chained else (func.attr.value, "forward")
        ctors = info.attrs.get(attr, []) if info is not None else []
        method = ix.functions.get(f"{cls}.{attr}") if info is not None and not ctors and not chained else None
        if method is not None and not method.decorators and self.ctx.project is not None and \
                not self.ctx.project.subclassed(ix.path, cls):
            # `self.method(...)`: a method of this class, not overridden
            return self._read_once(f"{cls}.{attr}", method, cls)
        found = self._submodule_forward(info, cls, attr, ctors, name) if info is not None else None
        return self._read_once(f"{found[0]}.{name}", found[1], found[0]) if found is not None else None

    def _read_once(self, key: str, info, cls: str) -> Optional[Tuple[cst.FunctionDef, List[cst.BaseExpression], str]]:
        """The function `info` (`key`: its qualname) as `callee` gives it, read once."""
        if key not in self._helper_defs:
            self._helper_defs[key] = self._read_helper(info)
        found = self._helper_defs[key]
        return (found[0], found[1], cls) if found is not None else None

    def _submodule_forward(self, info, cls: str, attr: str, ctors: List[str], method: str = "forward"):
        """`self.<attr>` of class `cls` (`info`), which `__init__` builds with `ctors`: the class of this file it
        is an instance of and that class's `forward` (or `method`), when `callee` can read it; None otherwise."""
        project, ix = self.ctx.project, self.ctx.index
        if len(ctors) != 1 or ctors[0] not in ix.classes or project is None or \
                any(ctors[0] in names for names in (ix.imports, ix.assigned_calls, ix.module_instances)) or \
                "_forward_hook" in (self.ctx.source or "") or "_forward_pre_hook" in (self.ctx.source or "") or \
                len(project.attr_classes(ix.path, cls, attr)) != 1 or self._overridden(cls, attr):
            return None
        target = ix.classes[ctors[0]]
        fwd = ix.functions.get(f"{target.name}.{method}")
        lines = list(io.StringIO(self.ctx.source, newline=""))
        assigned = re.compile(r"\bself\.%s\s*(=(?!=)|:)|setattr\(" % re.escape(attr))
        if fwd is None or fwd.decorators or "__call__" in target.methods or \
                not lines[target.start - 1].lstrip().startswith("class ") or \
                len(assigned.findall("".join(lines[info.start - 1:info.end]))) != 1 or \
                not is_module_class(project, ix.path, target.name):
            return None                 # (a decorated class: the decorator may hand out something else)
        return target.name, fwd

    def _overridden(self, cls: str, attr: str) -> bool:
        """A subclass of `cls` anywhere in the project sets `self.<attr>` to something of its own."""
        project, path = self.ctx.project, self.ctx.index.path
        return any(attr in project.class_info(p, name).attrs for p, name in project.subclasses(path, cls))

    def _read_helper(self, info) -> Optional[Tuple[cst.FunctionDef, List[cst.BaseExpression]]]:
        fn = self._helper_def(info)
        body = fn.body.body if fn is not None and isinstance(fn.body, cst.IndentedBlock) else ()
        last = body[-1] if body else None
        if fn is None or fn.asynchronous is not None or \
                not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
            return None
        returns: List[cst.Return] = []
        generator: List[cst.CSTNode] = []

        def enter(node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(node, cst.Return):
                returns.append(node)
            elif isinstance(node, (cst.Yield, cst.Await)):
                generator.append(node)
            return True

        walk(fn.body, enter, lambda node: None)
        if generator or any(r.value is None for r in returns):
            return None
        return fn, [r.value for r in returns]

    def _helper_def(self, info) -> Optional[cst.FunctionDef]:
        """The helper's `def`, parsed from this file's source (`parse_lines`; once per file and function)."""
        parsed = self._run.parsed.get(self.ctx.index, dict) if self.ctx.index is not None else {}
        if info.qualname not in parsed:
            module = parse_lines(self.ctx, info.start, info.end, info.indent)
            fn = module.body[0] if module is not None and len(module.body) == 1 else None
            parsed[info.qualname] = fn if isinstance(fn, cst.FunctionDef) and \
                fn.name.value == info.qualname.rsplit(".", 1)[-1] else None
        return parsed[info.qualname]

    # ---- environment -----------------------------------------------------------------------------
    def _env(self) -> Dict[str, object]:
        """name -> list of value nodes / a kind string, for the innermost function (lambdas see their def), or
        for the helper being judged `within`."""
        fn = self._within[-1] if self._within else \
            next((f for f in reversed(self.ctx.functions) if isinstance(f, cst.FunctionDef)), None)
        return {} if fn is None else self._env_of(fn)

    def _env_of(self, fn: cst.FunctionDef) -> Dict[str, object]:
        """The environment of `fn`, built once. One too deeply nested to walk (RecursionError, which `kind`
        turns into UNKNOWN) keeps an empty one: rebuilt on every question, a 60 KB chain of conditional
        expressions walked its whole function once per node (3.6 GB and the time budget)."""
        key = id(fn)
        env = self._envs.get(key)
        if env is None:
            self._envs[key] = {}
            env = self._envs[key] = self._build_env(fn)
        return env

    def _param_kind(self, fn: cst.FunctionDef, p: cst.Param, first: bool) -> str:
        name = p.name.value
        if first and name in ("self", "cls"):
            return VALUE
        ann = p.annotation.annotation if p.annotation is not None else type_comment(fn).get(name)
        if ann is not None:
            kind = self._annotation_kind(ann)
            if kind == VALUE and p.annotation is not None and p.default is None and \
                    (self._from_callers(fn) or {}).get(name) == TENSOR:
                return TENSOR       # `t: int` where every call passes a tensor: Dynamo traces the tensor
            return kind
        if p.default is not None:
            if isinstance(p.default, cst.Name) and p.default.value == "None":
                return UNKNOWN
            return VALUE if isinstance(p.default, (cst.Integer, cst.Float, cst.SimpleString, cst.Name,
                                                   cst.Tuple, cst.List, cst.UnaryOperation)) else UNKNOWN
        given = (self._from_callers(fn) or {}).get(name)
        if given is not None and (given != UNKNOWN or fn.name.value == "forward"):
            return given        # (callers that disagree leave a helper's parameter as weak as it was)
        if fn.name.value == "forward" and not INT_LIKE_PARAM.search(name) and not self.strict:
            return TENSOR
        return WEAK

    def _annotation_kind(self, ann: cst.BaseExpression) -> str:
        if self._tensor_annotation(ann):
            return TENSOR
        if isinstance(ann, cst.Subscript):
            if self._tensor_sequence(ann):
                return TENSORS
            inner = self.ctx.qualify(ann.value) or ""
            if inner.endswith("Optional") or "Tensor" in cst.Module([]).code_for_node(ann):
                return UNKNOWN          # Optional[...], or another container of tensors
            return VALUE
        text = self.ctx.qualify(ann) or ""
        if text in VALUE_ANNOTATIONS or text.split(".")[-1] in VALUE_ANNOTATIONS:
            return VALUE
        return UNKNOWN

    def _tensor_sequence(self, ann: cst.Subscript) -> bool:
        """`List[Tensor]`, `list[torch.Tensor]`, `Tuple[Tensor, ...]`, `Sequence[Tensor]`, `Iterable[Tensor]` (also
        inside `Optional[...]`: iterated or indexed, it is not None): a sequence whose elements are tensors."""
        head = (self.ctx.qualify(ann.value) or "").rpartition(".")[2]
        args = [s.slice.value for s in ann.slice if isinstance(s.slice, cst.Index)]
        if head == "Optional" and len(args) == 1 and isinstance(args[0], cst.Subscript):
            return self._tensor_sequence(args[0])
        if head not in SEQUENCE_ANNOTATIONS or not args:
            return False
        if head in ("Tuple", "tuple") and len(args) == 2 and isinstance(args[1], cst.Ellipsis):
            args = args[:1]
        return all(self._tensor_annotation(a) for a in args)

    def _tensor_annotation(self, node: cst.BaseExpression) -> bool:
        text = self.ctx.qualify(node) or ""
        return text in TENSOR_ANNOTATIONS or self.ctx.index.qualify(text) in TENSOR_ANNOTATIONS

    def _self_class(self) -> str:
        """The class whose `self` is in view: that of the function judged `within`, else the unit's."""
        return self._within_cls[-1] if self._within_cls else self.ctx.class_name

    def _build_env(self, fn: cst.FunctionDef) -> Dict[str, object]:
        env: Dict[str, object] = {}
        params = fn.params
        ordered = list(params.posonly_params) + list(params.params)
        for i, p in enumerate(ordered + list(params.kwonly_params)):
            env[p.name.value] = self._param_kind(fn, p, i == 0 and p in ordered)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                env[star.name.value] = VALUE
        collector = Assignments()
        walk(fn.body, collector.enter, collector.leave)
        # a parameter the body uses as a tensor (`x.shape`, `x.view(...)`) is one; so is an optional
        # parameter (`mask=None`, `Optional[Tensor]`) used that way
        optional = {p.name.value for p in ordered + list(params.kwonly_params) if optional_param(p)}
        for name in collector.evidence:
            if env.get(name) == WEAK or (env.get(name) == UNKNOWN and name in optional):
                env[name] = TENSOR
        # `forward`'s parameters taken for tensors by the name guess alone (`_param_kind`): their elements are not
        # (`height, width = input_dimensions` is two ints as often as not)
        # parameters annotated as boolean tensors (`mask: torch.BoolTensor | None`) are masks
        # and those used where torch takes only a boolean tensor (`x.masked_fill(done, 0.0)`)
        env[" bools"] = {p.name.value for p in ordered + list(params.kwonly_params) if p.annotation is not None and
                         "BoolTensor" in cst.Module([]).code_for_node(p.annotation.annotation)} | \
            (collector.masks & {p.name.value for p in ordered + list(params.kwonly_params)})
        callers = self._from_callers(fn) or {}
        env[" guessed"] = {p.name.value for p in ordered + list(params.kwonly_params)
                           if env.get(p.name.value) == TENSOR and p.annotation is None and p.default is None and
                           p.name.value not in callers and p.name.value not in collector.evidence}
        where: Dict[str, List[Where]] = {}
        for name, values in collector.values.items():
            where[name] = collector.where[name]
            if name in env and isinstance(env[name], str):
                values = [env[name]] + values
                where[name] = [ENTRY] + where[name]
            env[name] = values
        env[" where"], env[" uses"], env[" narrowed"] = where, collector.uses, collector.narrowed
        env[" not tensor"] = collector.not_tensor
        return env

    def _reaching(self, env, name: str, use: Optional[cst.CSTNode]):
        """The bindings of `name` that reach `use` (`reaching`) and a key naming that set (the name itself when it
        is all of them)."""
        entry = env.get(name)
        if not isinstance(entry, list) or use is None:
            return entry, name
        defs = env[" where"].get(name)
        at = env[" uses"].get(id(use))
        if not defs or at is None or len(defs) != len(entry):
            return entry, name
        seen = env.setdefault(" reaching", {})          # (a name's uses are judged again and again)
        found = seen.get((name, id(use)))
        if found is None:
            keep = reaching(defs, at)
            if len(keep) == len(entry):
                found = entry, name
            else:                                       # the set's key: a small number, not a long tuple
                sets = env.setdefault(" sets", {})
                found = [entry[i] for i in keep], (name, sets.setdefault((name, tuple(keep)), len(sets)))
            seen[(name, id(use))] = found
        return found

    def _name_kind(self, name: str, use: Optional[cst.CSTNode] = None) -> str:
        if name in ("True", "False", "None"):
            return VALUE
        env = self._env()
        if use is not None and id(use) in env.get(" narrowed", ()):
            return TENSOR                   # inside `if isinstance(name, torch.Tensor):`
        if use is not None and id(use) in env.get(" not tensor", ()):
            return UNKNOWN                  # in its `else`, or after it when it returns: something else
        entry, key = self._reaching(env, name, use)
        memo = env.setdefault(" memo", {})
        if key in memo:
            return memo[key]
        # A judgement made mid-recursion is memoised unless it rests on an assumption (a cycle of assignments
        # that refer to each other, or the budget): so a chain `x = x + a` of any length is judged once per
        # link. Cycles still cost more: past a budget, say "unknown" (no warning) rather than spend minutes.
        budget = env.setdefault(" budget", [20000])
        if budget[0] <= 0:
            if self._taint:
                self._taint[-1] = True
            return UNKNOWN
        budget[0] -= 1
        self._taint.append(False)
        try:
            kind = self._compute_name_kind(entry, (id(env), key))     # a name of another function is another name
        finally:
            tainted = self._taint.pop()
        if tainted and self._taint:
            self._taint[-1] = True
        if not self._active or not tainted:
            memo[key] = kind
        return kind

    def _compute_name_kind(self, entry, name) -> str:
        """The kind of a name whose reaching bindings are `entry`; `name`: the key of that set (`_reaching`)."""
        if entry is None:
            return UNKNOWN
        if isinstance(entry, str):
            return entry
        if name in self._active:
            # x = f(x): judged first by x's other assignments (the assumed kind), see below
            self._taint[-1] = True
            assumed = self._assumed.get(name)
            if assumed is None:
                self._hit.add(name)
                return UNKNOWN
            return assumed
        given = [v for v in entry if isinstance(v, str)]
        self._active.add(name)
        try:
            # pass 1: assignments that do not refer to the name itself; pass 2: the others, assuming pass 1
            self._assumed[name] = given[0] if len(given) == 1 and given[0] in (TENSOR, WEAK) else None
            kinds, later = [], []
            for v in entry:
                if isinstance(v, str):
                    kinds.append(v)
                    continue
                self._hit.discard(name)
                k = self._binding_kind(v)
                (later if name in self._hit else kinds).append(v if name in self._hit else k)
            first = combined(kinds) if kinds else UNKNOWN
            if later and kinds:
                self._assumed[name] = first
                kinds += [self._element(v) if isinstance(v, tuple) else self._kind(v) for v in later]
            elif later:
                kinds = [UNKNOWN]
        finally:
            self._active.discard(name)
            self._assumed.pop(name, None)
        return combined(kinds) if kinds else UNKNOWN

    def _binding_kind(self, value) -> str:
        """The kind of one binding's value, memoised per binding unless it rests on an assumption: every use of
        a name judges all the bindings that reach it, so a long chain of conditional `x = x + a` would be judged
        again for each link."""
        memo = self._env().setdefault(" bound", {})
        if id(value) in memo:
            return memo[id(value)]
        self._taint.append(False)
        try:
            kind = self._element(value) if isinstance(value, tuple) else self._kind(value)
        finally:
            tainted = self._taint.pop()
        if tainted:
            self._taint[-1] = True
        else:
            memo[id(value)] = kind
        return kind

    def _element(self, entry) -> str:
        if entry[0] == "either":        # bound on every path of an if/else: any of its arms' values
            return combined([v if isinstance(v, str) else self._element(v) if isinstance(v, tuple) else self._kind(v)
                             for v in entry[1]])
        return self._one_element(entry)

    def _one_element(self, entry) -> str:
        """An ("unpack", whole) or ("iter", whole) binding: the rows of a tensor are tensors. (A parameter only
        guessed to be a tensor, which may as well be a list of anything, gives unknown elements: `_unpacked`.)
        `a, b = self.method(x)` / `self.sub(x)` / `helper(x)`: the element of every `return a, b` there."""
        if entry[0] == "unpack" and isinstance(entry[1], tuple):
            return self._nested_element(entry)
        if entry[0] == "unpack" and len(entry) == 4 and entry[2] is not None and isinstance(entry[1], cst.Call):
            found = self.callee(entry[1].func)
            if found is not None:
                fn, returns, cls = found
                if returns and all(isinstance(r, cst.Tuple) and len(r.elements) == entry[3] and
                                   not any(isinstance(e, cst.StarredElement) for e in r.elements) for r in returns):
                    return combined([self.judged(r.elements[entry[2]].value, fn, cls, self._kind) for r in returns])
        return self._unpacked(entry[1])

    def _nested_element(self, entry) -> str:
        """`x, (h, w) = self.embed(x)`: an element of an element. A nested target says the value holds containers,
        so a guess that the whole is a tensor tells nothing of it: only the `return x, (h, w)` of the callee
        does, else unknown."""
        outer = entry[1]
        if entry[2] is None or not (outer[0] == "unpack" and len(outer) == 4 and outer[2] is not None and
                                    isinstance(outer[1], cst.Call)):
            return UNKNOWN
        found = self.callee(outer[1].func)
        if found is None:
            return UNKNOWN
        fn, returns, cls = found
        inner = [r.elements[outer[2]].value for r in returns if isinstance(r, cst.Tuple) and
                 len(r.elements) == outer[3] and not any(isinstance(e, cst.StarredElement) for e in r.elements)]
        if not returns or len(inner) != len(returns) or not all(
                isinstance(v, cst.Tuple) and len(v.elements) == entry[3] and
                not any(isinstance(e, cst.StarredElement) for e in v.elements) for v in inner):
            return UNKNOWN
        return combined([self.judged(v.elements[entry[2]].value, fn, cls, self._kind) for v in inner])

    def _unpacked(self, whole: cst.CSTNode) -> str:
        """One element of `a, b = whole`: a tensor when the whole is (t.chunk(2), torch.split(...)), not known
        when the whole is a parameter only guessed to be a tensor."""
        if isinstance(whole, cst.Name) and whole.value in self._env().get(" guessed", ()):
            return UNKNOWN
        wrapped = self._iterated(whole)
        if wrapped is not None:
            return self._unpacked(wrapped)
        k = self._kind(whole)
        if k == TENSORS:
            return TENSOR
        if k == VALUE:
            # `b, t = x.shape` holds sizes; `a, b = zip(...)` / `sorted(...)` may hold anything; a display of
            # literals (`for horizon in (3, 5, 7)`) holds those
            containers = isinstance(whole, cst.Call) and isinstance(whole.func, cst.Name) and \
                whole.func.value in CONTAINER_BUILTINS
            if isinstance(whole, (cst.List, cst.Tuple)) and whole.elements and all(
                    isinstance(e, cst.Element) and _literal(e.value) for e in whole.elements):
                return VALUE
            return UNKNOWN if containers or isinstance(whole, (cst.List, cst.Tuple, cst.ListComp)) else VALUE
        return k if k in (TENSOR, WEAK) else UNKNOWN

    def is_sequence(self, node: cst.CSTNode) -> bool:
        """`node` is a Python list, tuple or string: a display or a literal, a list of tensors, a local every
        binding of which is one, or a constant the module binds once to one (`LABELS = ("a", "b")`)."""
        if isinstance(node, (cst.List, cst.Tuple, cst.ListComp, cst.SimpleString)) or self.kind(node) == TENSORS:
            return True
        if not isinstance(node, cst.Name):
            return False
        entry, _ = self._reaching(self._env(), node.value, node)
        if isinstance(entry, list):
            return bool(entry) and all(isinstance(v, (cst.List, cst.Tuple, cst.ListComp, cst.SimpleString))
                                       for v in entry)
        if entry is not None:
            return False
        tree = parsed(self.ctx.source or "")                # (the module's own constants)
        values = [n.value for n in (tree.body if tree is not None else ()) if isinstance(n, ast.Assign)
                  for t in n.targets if isinstance(t, ast.Name) and t.id == node.value]
        return len(values) == 1 and (isinstance(values[0], (ast.List, ast.Tuple)) or
                                     isinstance(values[0], ast.Constant) and isinstance(values[0].value, str))

    def iterated_element(self, node: cst.CSTNode) -> bool:
        """`node` is a name every binding of which that reaches it is the target of a Python loop over a tensor
        (`for t in timesteps`, `enumerate(...)`, a progress bar over it): an element of that tensor."""
        if not isinstance(node, cst.Name):
            return False
        entry, _ = self._reaching(self._env(), node.value, node)
        if not isinstance(entry, list) or not entry:
            return False
        for value in entry:
            if not (isinstance(value, tuple) and value[0] == "iter"):
                return False
            whole, inner = value[1], self._iterated(value[1])
            while inner is not None:                # (a progress bar over it: what it wraps)
                whole, inner = inner, self._iterated(inner)
            if self.kind(whole) != TENSOR:
                return False
        return True

    def _iterated(self, whole: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """What iterating `whole` iterates over, where it is a progress bar over it: `tqdm(xs)`, or a call of a
        function or method of the project that returns one over its parameter (`self.progress_bar(xs)`,
        `FunctionInfo.iterates`); None otherwise."""
        if not isinstance(whole, cst.Call):
            return None
        func, project, ix = whole.func, self.ctx.project, self.ctx.index
        positional = [a for a in whole.args if a.keyword is None and not a.star]
        if (self.ctx.qualify(func) or "") in ITERATOR_WRAPPERS:
            return positional[0].value if positional and positional[0] is whole.args[0] else None
        if project is None or ix is None:
            return None
        ref = None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and \
                self._self_class() in ix.classes:
            ref = project.method(ix.path, self._self_class(), func.attr.value)
        elif isinstance(func, cst.Name):
            r = project.resolve(ix, func.value)
            ref = r[1] if r and r[0] == "function" else None
        info = project.function(ref) if ref else None
        if info is None or not info.iterates or any(a.star for a in whole.args):
            return None
        params = [p for p in info.params if p not in ("self", "cls")] if info.cls else list(info.params)
        return bound_arguments(whole, params).get(info.iterates)

    # ---- expressions -----------------------------------------------------------------------------
    def _kind(self, node: cst.CSTNode) -> str:
        if isinstance(node, cst.Name):
            return self._name_kind(node.value, node)
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                             cst.FormattedString, cst.Set, cst.DictComp, cst.SetComp, cst.Ellipsis)):
            return VALUE
        if isinstance(node, (cst.Tuple, cst.List, cst.ListComp, cst.Dict)):
            return self._display_kind(node)
        if isinstance(node, cst.Attribute):
            return self._attribute_kind(node)
        if isinstance(node, cst.Subscript):
            base = self._kind(node.value)
            if base == TENSORS:         # xs[0] is a tensor, xs[1:] a shorter list of them
                return TENSORS if any(isinstance(s.slice, cst.Slice) for s in node.slice) else TENSOR
            return base if base in (TENSOR, WEAK, VALUE) else UNKNOWN
        if isinstance(node, cst.Call):
            return self._call_kind(node)
        if isinstance(node, cst.BinaryOperation):
            left, right = self._kind(node.left), self._kind(node.right)
            if left == right == TENSORS and isinstance(node.operator, cst.Add):
                return TENSORS          # `xs + ys`: one list of tensors
            return merge(left, right)
        if isinstance(node, cst.UnaryOperation):
            return VALUE if isinstance(node.operator, cst.Not) else self._kind(node.expression)
        if isinstance(node, cst.Comparison):
            if all(isinstance(c.operator, NON_TENSOR_TESTS) for c in node.comparisons):
                return VALUE
            kinds = [self._kind(node.left)] + [self._kind(c.comparator) for c in node.comparisons]
            return functools.reduce(merge, kinds)
        if isinstance(node, cst.BooleanOperation):
            left, right = self._kind(node.left), self._kind(node.right)
            return TENSOR if TENSOR in (left, right) else (VALUE if left == right == VALUE else UNKNOWN)
        if isinstance(node, cst.IfExp):
            return combine(self._kind(node.body), self._kind(node.orelse))
        if isinstance(node, cst.NamedExpr):
            return self._kind(node.value)
        return UNKNOWN

    def _display_kind(self, node) -> str:
        """A list or tuple display: of tensors (TENSORS), of Python values (VALUE, so are its items), or of
        anything else (UNKNOWN: indexing it may give a tensor, `pair = [x.sum(), y]; pair[1]`); a comprehension
        of tensors (TENSORS, else VALUE); a dict display by its values (what indexing it gives)."""
        if isinstance(node, cst.ListComp):
            return TENSORS if self._kind(node.elt) == TENSOR else VALUE
        if isinstance(node, cst.Dict):
            return VALUE if all(isinstance(e, cst.DictElement) and self._kind(e.value) == VALUE
                                for e in node.elements) else UNKNOWN
        if node.elements and all(self._holds_tensors(e) for e in node.elements):
            return TENSORS
        if all(not isinstance(e, cst.StarredElement) and self._kind(e.value) == VALUE for e in node.elements):
            return VALUE
        return UNKNOWN

    def _holds_tensors(self, e: cst.BaseElement) -> bool:
        """An element of a list or tuple display that puts only tensors in it: `t`, or `*xs` of tensors."""
        return self._kind(e.value) == (TENSORS if isinstance(e, cst.StarredElement) else TENSOR)

    def _call_kind(self, node: cst.Call) -> str:
        kind = self._method_call_kind(node, node.func) if isinstance(node.func, cst.Attribute) else \
            self._function_call_kind(node, node.func)
        if kind in (UNKNOWN, WEAK):
            # a function of the project that the code calls returns what its `return`s give (judged in it, its
            # parameters as its callers pass them): what the call is known to give stays as it is
            returned = self._returned_kind(node)
            if returned in (TENSOR, TENSORS, VALUE):
                return returned
        return kind

    def _returned_kind(self, node: cst.Call) -> Optional[str]:
        """The kinds of what a helper of this file, a method of `self`'s class or a submodule's `forward`
        (`callee`) returns, combined; None when that is not read (or it is being judged already: recursion)."""
        found = self.callee(node.func)
        if found is None or not found[1] or id(found[0]) in self._returning or len(self._within) >= 4:
            return None
        fn, returns, cls = found
        self._returning.add(id(fn))
        try:
            return combined([self.judged(r, fn, cls, self._kind) for r in returns])
        finally:
            self._returning.discard(id(fn))

    def _method_call_kind(self, node: cst.Call, func: cst.Attribute) -> str:
        """`a.b(...)`: a torch or numpy function, a method of `self`, or a method of a tensor or anything else."""
        method = func.attr.value
        q = self.ctx.qualify(func)
        by_module = self._module_call_kind(node, q) if q else None
        if by_module is not None:
            return by_module
        recv = func.value
        if isinstance(recv, cst.Name) and recv.value == "self":
            if self._submodule(method):
                return TENSOR
            return WEAK if any(self._kind(a.value) == TENSOR for a in node.args) else UNKNOWN
        if method in MODULE_TENSORS and not node.args and not self._names_module(recv):
            return TENSORS          # `model.parameters()`, `model.buffers()`: nn.Module's tensors, one by one
        base = self._kind(recv)
        if isinstance(recv, cst.Comparison) and method in EVIDENCE_METHODS and not \
                any(isinstance(c.operator, NON_TENSOR_TESTS) for c in recv.comparisons):
            base = TENSOR           # `(mask == 0).all()`: a Python bool has no .all(); this is a tensor
        if method in VALUE_METHODS and not (method == "type" and node.args):   # x.type(torch.half)
            return VALUE if base in (TENSOR, WEAK) else UNKNOWN
        if base == TENSOR or (base == UNKNOWN and method in EVIDENCE_METHODS and not self._names_module(recv)):
            return TENSOR           # (a method only tensors have, of a value, not of a module: `math.sqrt`)
        if base == WEAK:
            return TENSOR if method in TENSOR_METHODS else WEAK
        return UNKNOWN

    def _names_module(self, recv: cst.BaseExpression) -> bool:
        """Is `recv` (`math`, `np.linalg`, `F`) reached from an import, a class or a function of the file,
        rather than a value?"""
        while isinstance(recv, cst.Attribute):
            recv = recv.value
        ix = self.ctx.index
        return isinstance(recv, cst.Name) and ix is not None and (
            recv.value in ix.imports or recv.value in ix.classes or recv.value in ix.functions)

    def _module_call_kind(self, node: cst.Call, q: str) -> Optional[str]:
        """`math.*`, `torch.*` and `numpy.*` functions called through their module; None for anything else."""
        if q in SCALAR_MATH and self._python_numbers(node):
            return WEAK
        if q.startswith("torch."):
            return self._torch_call(q)
        if q.startswith("numpy.random.") and q[13:] in NP_TRACED_DRAWS:
            return TENSOR if np_sized_draw(node, q[13:]) else VALUE
        if q.startswith("numpy.") and q not in NP_VALUE_FUNCS and \
                any(not a.star and self._kind(a.value) == TENSOR for a in node.args):
            return TENSOR           # `np.min(t.numpy())`: an array of an array Dynamo traces, a tensor to it
        return None

    def _function_call_kind(self, node: cst.Call, func: cst.BaseExpression) -> str:
        """`f(...)`: a builtin, a torch function imported by name, or anything else."""
        q = self.ctx.qualify(func) if isinstance(func, cst.Name) else None
        if q is None or (q not in VALUE_BUILTINS and not q.startswith("torch.") and q not in ("abs", "max", "min")):
            # an unknown callable fed a tensor (a submodule held in a local, a project helper) probably
            # returns one
            return WEAK if any(self._kind(a.value) in (TENSOR, WEAK) for a in node.args) else UNKNOWN
        if q in SCALAR_MATH and self._python_numbers(node):
            return WEAK
        if q.startswith("torch."):
            return self._torch_call(q)
        if q in ("list", "tuple") and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star \
                and self._kind(node.args[0].value) == TENSORS:
            return TENSORS          # `list(model.parameters())`: the same tensors, in a list
        if q in VALUE_BUILTINS:
            return VALUE
        if q in ("abs", "max", "min"):
            kinds = [self._kind(a.value) for a in node.args]
            return TENSOR if TENSOR in kinds else (VALUE if kinds and all(k == VALUE for k in kinds) else UNKNOWN)
        return UNKNOWN

    def _python_numbers(self, node: cst.Call) -> bool:
        """No positional argument is known to be a tensor (they may all be Python numbers: sizes, constants)."""
        positional = [a for a in node.args if a.keyword is None]
        return bool(positional) and all(not a.star and self._kind(a.value) != TENSOR for a in positional)

    @staticmethod
    def _torch_call(q: str) -> str:
        if q in TORCH_VALUE_FUNCS or q.startswith("torch.sym_"):
            return VALUE
        if q.startswith(TORCH_TENSOR_PREFIXES) or q in TORCH_TENSOR_CLASSES:
            return TENSOR
        head, _, last = q.rpartition(".")
        if head == "torch" and last[:1].islower() and q not in TORCH_OTHER_FUNCS:
            return TENSOR            # torch.cat, torch.where, torch.isnan, ...
        # torch.nn.Linear(...), torch.cuda.*, torch.distributed.*, torch._C.*, torch.Generator(...): not known
        return UNKNOWN


def _literal(node: cst.BaseExpression) -> bool:
    """A number or string literal (`3`, `-0.5`, `"relu"`), or True/False/None."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or \
        (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))
