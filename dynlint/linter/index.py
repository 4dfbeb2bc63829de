"""The index pass: a fast, whole-project outline of every file built with Python's own `ast`.

It records, per module, what the region analysis needs and nothing more: imports, classes (bases and the
classes of their `self.<attr>` submodules), functions (decorators, calls made, lines) and module-level
call sites. Names are kept as dotted strings resolved through the module's imports, so `import torch as T;
T.compile` reads `torch.compile`. It knows nothing about torch: deciding what a name means is rules/ work.
Everything here is plain data (JSON-serialisable) so it can be cached.
"""
from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

# Longest `and`/`or` chain or dotted import name the check pass hands to libcst (it nests one level per part;
# its parser overflows an 8 MiB stack near 7,000, and dynlint's own walk stops near 1,000 anyway).
DEEP_LIMIT = 1000
# Expressions nested deeper are not handed to libcst: its parser and every recursive walk cost more than linearly
# in depth (1,500 levels of `x if c else ...`, 18 KB, took 7 s and 430 MB in the parser; 61 KB took 3.6 GB).
# Real code nests a few dozen levels (transformers' deepest statement: 28).
NESTING_LIMIT = 300


def _true_if_any(fn) -> Tuple[str, ...]:
    """FunctionInfo.true_if_any of one `def`."""
    def calls(e) -> List[str]:
        parts = e.values if isinstance(e, ast.BoolOp) and isinstance(e.op, ast.Or) else [e]
        return [d for d in (dotted_name(p.func) for p in parts if isinstance(p, ast.Call)) if d]

    first: Dict[str, Optional[ast.expr]] = {}
    returns: List[ast.expr] = []

    def visit(nodes, handler: bool) -> None:
        for n in nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(n, ast.Return) and not handler:
                returns.append(n.value)
            elif isinstance(n, ast.Assign):
                for t in n.targets:         # a name bound twice is not known
                    if isinstance(t, ast.Name):
                        first[t.id] = None if t.id in first else n.value
            if isinstance(n, ast.Try):
                visit(n.body + n.orelse + n.finalbody, handler)
                for h in n.handlers:
                    visit(h.body, True)
            else:
                visit([c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt)], handler)

    visit(fn.body, False)
    found: List[str] = []
    for r in returns:
        if isinstance(r, ast.Constant) and r.value is False:
            continue        # a fallback where the check is unavailable (`if hasattr(torch, "compiler"): ...`)
        r = first.get(r.id, r) if isinstance(r, ast.Name) else r
        got = calls(r) if r is not None else []
        if not got:
            return ()
        found += got
    return tuple(found)


def _paired(targets: List[ast.expr], value: ast.expr):
    """(targets, value) of an assignment, and each pair of an unpacking of a display of the same length
    (`self.unet, self.scheduler = unet, scheduler` binds as two assignments do)."""
    yield targets, value
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) and \
                len(t.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in t.elts + value.elts):
            for target, item in zip(t.elts, value.elts):
                yield from _paired([target], item)

@dataclass
class CallSite:
    kind: str            # "name": dotted callee; "self": self.<target>; "var": a local bound to an instance;
    #                      "element": a method of an item of self.<attr> (`self.layers[i].update()`: "layers.update")
    target: str          # dotted name, attribute name, or local name
    line: int
    args: List[str] = field(default_factory=list)   # dotted names of positional args (or "" if not a name)
    kwargs: Dict[str, str] = field(default_factory=dict)   # keyword -> repr of a constant value
    constants: Dict[int, str] = field(default_factory=dict)   # position -> repr of a constant positional arg
    unpacks: bool = False                                      # `*args` or `**kw` in the call: binding unknown


@dataclass
class FunctionInfo:
    qualname: str        # "f", "Class.method", "outer.inner"
    cls: str             # enclosing class name ("" for functions)
    start: int           # first line, decorators included
    def_line: int
    end: int
    indent: int          # column of the `def`
    top: Tuple[int, int]  # lines of the enclosing top-level statement
    decorators: List[str] = field(default_factory=list)   # dotted names (a call `@d(...)` gives "d()")
    calls: List[CallSite] = field(default_factory=list)
    params: List[str] = field(default_factory=list)
    # local name -> dotted constructor, for `m = Model(...)` (used to resolve `torch.compile(m)`)
    instances: Dict[str, List[str]] = field(default_factory=dict)
    # local name -> what it compiles, for `fl = torch.compile(losses.focal_loss, ...)` (its calls are that one's);
    # `model.forward = torch.compile(model.forward)` gives "model" -> "model.forward", and `agent.act =
    # torch.compile(agent.act)` "agent.act" -> "agent.act" (the instance's attribute holds the compiled method)
    compiled: Dict[str, str] = field(default_factory=dict)
    nested_in: str = ""  # qualname of the enclosing function, if nested
    # The calls whose truth the function returns (`return a() or b()`, `t = a() or b(); ...; t |= c(); return t`;
    # returns in `except` handlers and `return False` fallbacks aside): true when any of them is. Empty when it
    # returns anything else.
    true_if_any: Tuple[str, ...] = ()
    # parameter -> the dotted names its annotation mentions (`cache: Cache | None` gives ["Cache"];
    # `layers: list[Layer]` gives ["list", "Layer"]; a string annotation is read too)
    annotations: Dict[str, List[str]] = field(default_factory=dict)
    # `def register(self, **kwargs): for name, value in kwargs.items(): setattr(self, name, value)`: a call of it
    # sets the attributes its keywords name
    sets_keywords: bool = False
    # the parameter whose elements iterating what it returns yields: `return tqdm(iterable, **cfg)` (a progress
    # bar over it), `return iter(xs)`, `return xs`; "" when none
    iterates: str = ""
    # (line, target, value) of each `obj.attr = <number>` / `obj.sub.attr = <number>` the function makes on an
    # object other than `self` (`model.sa1.npoint = 48`), or `obj.attr = <anything>` in a loop (`trainer.lr =
    # sched(step)`): what it changes on objects of other files' classes. A
    # tuple default, so indexes pickled before this field existed still read it.
    attr_sets: Tuple[Tuple[int, str, str], ...] = ()
    # the function defined in this one that every `return` gives (`def make(): def step(x): ...; return step`, a
    # closure factory): what `torch.compile(make())` compiles; "" when none
    returns_def: str = ""
    # (line, alias, NAME, key or None) of each `alias.NAME = ...` / `alias.NAME[key] = ...` through an imported
    # name, made between calls (in a loop that calls something, or between two calls of one callee): another
    # module's globals changed while its compiled code runs (an outermost function's, nested ones included)
    module_sets: Tuple[Tuple[int, str, str, object], ...] = ()


@dataclass
class ClassInfo:
    name: str
    bases: List[str]
    start: int
    end: int
    methods: List[str] = field(default_factory=list)
    # self.<attr> -> dotted names of the classes it holds (ModuleList/Sequential items included)
    attrs: Dict[str, List[str]] = field(default_factory=dict)
    # attributes registered as buffers/parameters: self.register_buffer("name", ...)
    registered: List[str] = field(default_factory=list)
    # self.<attr> -> the `__init__` parameter it keeps (`self.reporter = reporter`): what the callers pass
    param_attrs: Dict[str, str] = field(default_factory=dict)
    # self.<attr> -> (method, parameter) for `self.register(attr=parameter)` in `__init__`: kept as `param_attrs`
    # where the method sets the attributes its keywords name (`FunctionInfo.sets_keywords`)
    keyword_params: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    # attributes `__init__` sets to an int, float or bool literal (-> "int" / "float" / "bool"), and those of
    # them that `forward` (and the methods it calls as `self.m(...)`) reads: the Python numbers a compiled
    # forward guards on
    scalars: Dict[str, str] = field(default_factory=dict)
    reads: List[str] = field(default_factory=list)
    # method -> those read scalars it changes (`self.step = step`, `self.step += 1`): the methods a training loop
    # or a scheduler calls between compiled calls (neither __init__ nor what forward calls)
    setters: Dict[str, List[str]] = field(default_factory=dict)
    # method -> the attributes it sets on the modules of the tree (`for m in self.modules(): m.calibrating =
    # flag`), each as `attr` or, under an `isinstance(m, Cls)` test, `attr:Cls`
    tree_setters: Dict[str, List[str]] = field(default_factory=dict)
    # self.<attr> -> the method it holds compiled (`self.compiled_forward = torch.compile(self.forward_loss)`):
    # calling the attribute runs that method as the frame
    compiled: Dict[str, str] = field(default_factory=dict)
    # self.<attr> -> the function or class (dotted, as written) it holds compiled, not a method of the class
    # (`self.step_fn = torch.compile(train_step)`, `self.policy = torch.compile(Policy(...))`)
    compiled_callables: Dict[str, str] = field(default_factory=dict)


@dataclass
class ModuleIndex:
    path: str                       # project-relative path
    module: str                     # dotted module name
    imports: Dict[str, str] = field(default_factory=dict)
    functions: Dict[str, FunctionInfo] = field(default_factory=dict)
    classes: Dict[str, ClassInfo] = field(default_factory=dict)
    # Calls made outside any function (module level), and module-level `x = Ctor(...)` bindings.
    module_calls: List[CallSite] = field(default_factory=list)
    module_instances: Dict[str, List[str]] = field(default_factory=dict)
    # Top-level statement spans (start, end) in order; used to cut parse units.
    top_spans: List[Tuple[int, int]] = field(default_factory=list)
    # Names bound at module level to a call of something (e.g. `fast = torch.compile(f)`): name -> callee
    assigned_calls: Dict[str, str] = field(default_factory=dict)
    # (line, parts, what) of constructs flat in `ast` but nested one level per part in libcst, longer than
    # DEEP_LIMIT: libcst's native parser would overflow the C stack (a segfault) on them. A tuple default, so
    # indexes pickled before this field existed still read it.
    deep: Tuple[Tuple[int, int, str], ...] = ()
    # (name, times named, times called) for the file's own top-level functions and classes: a name used only
    # in calls (`Block(...)`, `helper(x)`) never escapes the file's view
    refs: Tuple[Tuple[str, int, int], ...] = ()
    # Dynamo settings the file makes (`torch._dynamo.config.capture_scalar_outputs = True`: ("capture_scalar_
    # outputs", "True"); `...reorderable_logging_functions.add(print)`: ("reorderable_logging_functions", "print"))
    dynamo_config: Tuple[Tuple[str, str], ...] = ()

    def shape(self) -> tuple:
        """The index without its line numbers (but those of the calls of compiled aliases, which findings in the
        compiled function's file name): all that the whole-project pass and the checks of other files read. An
        edit that only moves code (a line added above a def) keeps it."""
        def calls(sites):
            return [(c.kind, c.target, c.args, c.kwargs, c.constants, c.unpacks) for c in sites]
        return (self.module, self.imports, self.module_instances, self.assigned_calls, calls(self.module_calls),
                {q: (f.cls, f.decorators, calls(f.calls), f.params, f.instances, f.nested_in, f.compiled,
                     f.annotations, f.sets_keywords, f.iterates, f.attr_sets, f.returns_def, f.module_sets)
                 for q, f in self.functions.items()},
                {n: (c.bases, c.methods, c.attrs, c.registered, c.scalars, c.reads, c.setters, c.tree_setters,
                      c.param_attrs, c.keyword_params)
                 for n, c in self.classes.items()},
                # where a compiled alias is called: other files' findings name these lines
                {q: [(c.target, c.line) for c in f.calls if c.target in f.compiled]
                 for q, f in self.functions.items() if f.compiled})

    def function_at(self, line: int) -> Optional["FunctionInfo"]:
        """The innermost function of the file whose lines hold `line` (None at the module level)."""
        return min((f for f in self.functions.values() if f.start <= line <= f.end), key=lambda f: f.end - f.start,
                   default=None)

    def built(self, name: str, function: Optional["FunctionInfo"] = None) -> List[str]:
        """The constructors a name is bound to in `function` (`sched = Scheduler()`), else at the module level."""
        return (function.instances.get(name) if function is not None else None) or \
            self.module_instances.get(name) or []

    def qualify(self, dotted: str) -> str:
        """Resolve the head of a dotted name through this module's imports and local definitions."""
        head, _, rest = dotted.partition(".")
        if head in self.imports:
            full = self.imports[head]
        elif head in self.functions or head in self.classes:
            full = f"{self.module}.{head}" if self.module else head
        else:
            return dotted
        return f"{full}.{rest}" if rest else full


DYNAMO_CONFIG = "torch._dynamo.config"
# progress bars: iterating `tqdm(xs)` yields the elements of `xs`
ITERATOR_WRAPPERS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.rich.tqdm",
                               "tqdm.std.tqdm", "tqdm.autonotebook.tqdm"})
# methods whose result is the same kind of thing as their receiver: a module's `.to()`/`.eval()` return it, a
# tensor's give a tensor
KEEPS_KIND = frozenset({"to", "cuda", "cpu", "eval", "train", "requires_grad_", "float", "double", "half", "long",
                        "int", "bool", "bfloat16", "contiguous", "clone", "detach", "flip", "reshape", "view",
                        "squeeze", "unsqueeze", "t"})


def _self_attr(node) -> Optional[str]:
    return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
        node.value.id == "self" else None


def _scalars_and_reads(node: ast.ClassDef) -> Tuple[Dict[str, str], List[str], Dict[str, List[str]]]:
    """ClassInfo.scalars, .reads and .setters of a class (reads only of the scalars: all that is asked).
    `__init__`'s statements are scanned without their expressions, and forward walked only when there are
    some: indexing every class of a large project must stay cheap."""
    methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    scalars = _init_scalars(methods["__init__"]) if "__init__" in methods else {}
    reads, seen = _forward_reads(methods, scalars)
    setters: Dict[str, List[str]] = {}
    for name, method in methods.items() if reads else ():
        if name in seen or name == "__init__":
            continue
        changed = {_self_attr(t) for n in ast.walk(method) if isinstance(n, (ast.Assign, ast.AugAssign))
                   for t in (n.targets if isinstance(n, ast.Assign) else [n.target])} & reads
        if changed:
            setters[name] = sorted(changed)
    return dict(sorted(scalars.items())), sorted(reads), setters


MODULE_TREE = frozenset({"modules", "children", "named_modules", "named_children"})


def _tree_setters(node: ast.ClassDef) -> Dict[str, List[str]]:
    """ClassInfo.tree_setters: per method, the attributes a `for` over `self.modules()` (`children()`,
    `named_modules()`, ...) assigns on the module it binds."""
    out: Dict[str, List[str]] = {}
    for method in node.body:
        if not isinstance(method, ast.FunctionDef) or method.name == "__init__":
            continue
        for loop in (n for n in ast.walk(method) if isinstance(n, ast.For)):
            it, target = loop.iter, loop.target
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in MODULE_TREE
                    and isinstance(it.func.value, ast.Name) and it.func.value.id == "self"):
                continue
            if isinstance(target, ast.Tuple) and target.elts:
                target = target.elts[-1]                    # `for name, m in self.named_modules()`
            if not isinstance(target, ast.Name):
                continue
            found = set()
            for n in ast.walk(loop):
                for t in n.targets if isinstance(n, ast.Assign) else []:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == target.id:
                        found.add(t.attr + _tested_class(loop, target.id))
            if found:
                out.setdefault(method.name, []).extend(sorted(found))
    return out


def _tested_class(loop: ast.For, name: str) -> str:
    """`:Cls` when the loop's body is one `if isinstance(name, Cls):` test, else ""."""
    first = loop.body[0] if len(loop.body) == 1 else None
    test = first.test if isinstance(first, ast.If) else None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and \
            len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id == name:
        cls = dotted_name(test.args[1])
        return f":{cls}" if cls else ""
    return ""


def _init_scalars(init: ast.AST) -> Dict[str, str]:
    """`self.x = <int, float, bool or str constant>` in `__init__`'s statements (blocks entered) -> the type's
    name."""
    scalars: Dict[str, str] = {}
    stack = list(init.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Assign):
            value = n.value.operand if isinstance(n.value, ast.UnaryOp) and isinstance(n.value.op, ast.USub) \
                else n.value
            if len(n.targets) == 1 and _self_attr(n.targets[0]) and isinstance(value, ast.Constant) and \
                    type(value.value) in (int, float, bool, str):
                scalars[_self_attr(n.targets[0])] = type(value.value).__name__
        elif isinstance(n, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            stack += n.body + getattr(n, "orelse", []) + getattr(n, "finalbody", []) + \
                [s for h in getattr(n, "handlers", []) for s in h.body]
    return scalars


def _forward_reads(methods: Dict[str, ast.AST], scalars: Dict[str, str]) -> Tuple[Set[str], Set[str]]:
    """The scalars that forward reads, itself or through the methods of self it calls; and those methods."""
    reads, seen, todo = set(), set(), ["forward"] if scalars and "forward" in methods else []
    while todo:
        name = todo.pop()
        seen.add(name)
        for n in ast.walk(methods[name]):
            attr = _self_attr(n)
            if attr in scalars and isinstance(n.ctx, ast.Load):
                reads.add(attr)
            elif isinstance(n, ast.Call) and _self_attr(n.func) in methods and _self_attr(n.func) not in seen:
                todo.append(_self_attr(n.func))
    return reads, seen


def _constant_text(value) -> str:
    """A constant's repr; a huge int in hex, since its decimal repr raises past sys.get_int_max_str_digits()."""
    return hex(value) if isinstance(value, int) and value.bit_length() > 4000 else repr(value)


def _annotation_names(node: ast.expr) -> List[str]:
    """The dotted names an annotation mentions, in order (a string annotation parsed first)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return []
    out: List[str] = []
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)):
            name = dotted_name(n)
            if name and not any(name != o and o.startswith(name + ".") for o in out):
                out.append(name)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n is not node:
            out += [m for m in _annotation_names(n) if m not in out]
    return [n for n in out if not any(o != n and o.startswith(n + ".") for o in out)]


def dotted_name(node: ast.AST) -> Optional[str]:
    """`a.b.c` for Name/Attribute chains; `f()` marks a call at the end (`torch.compile(...)` -> `torch.compile()`,
    `super().forward`). A loop, not recursion: `f()()()...` thousands deep is legal Python."""
    tail = []
    while True:
        if isinstance(node, ast.Call):
            tail.append("()")
            node = node.func
        elif isinstance(node, ast.Attribute):
            tail.append("." + node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id + "".join(reversed(tail))
        else:
            return None


def _resolve_relative(module: str, is_package: bool, level: int, name: Optional[str]) -> str:
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    return ".".join(p for p in (base, name) if p)


def _number(node: ast.expr) -> bool:
    """A literal int, float or bool (`48`, `-0.5`, `True`)."""
    node = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) else node
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


class _Indexer(ast.NodeVisitor):
    def __init__(self, index: ModuleIndex, is_package: bool):
        self.ix = index
        self.is_package = is_package
        self.stack: List[Tuple[str, str]] = []   # ("class"|"def", name)
        self.func_stack: List[FunctionInfo] = []
        self.returns: List[List[Optional[ast.expr]]] = []    # per function of func_stack: its `return`s' values
        self.top: Tuple[int, int] = (0, 0)
        self.loop_vars: List[Dict[str, str]] = [{}]   # loop variable -> "self.<attr>"
        self.loops = 0                                  # loops around the node, in the function being indexed
        self.named: Counter = Counter()                # name -> times it occurs as a name (`ModuleIndex.refs`)
        self.called: Counter = Counter()               # ... as the callee of a call

    # ---- imports (module level and inside functions alike: both are common in model code) ----
    def visit_Import(self, node: ast.Import) -> None:
        self._dotted_depth(node, [a.name for a in node.names])
        for a in node.names:
            if a.asname:
                self.ix.imports[a.asname] = a.name
            else:
                head = a.name.split(".")[0]
                self.ix.imports.setdefault(head, head)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._dotted_depth(node, [node.module or ""])
        base = node.module or ""
        if node.level:
            base = _resolve_relative(self.ix.module, self.is_package, node.level, node.module)
        for a in node.names:
            if a.name != "*":
                self.ix.imports[a.asname or a.name] = f"{base}.{a.name}" if base else a.name

    def _dotted_depth(self, node: ast.stmt, names: List[str]) -> None:
        n = max(name.count(".") + 1 for name in names)
        if n > DEEP_LIMIT:
            self.ix.deep += ((node.lineno, n, f"dotted name of {n} parts > {DEEP_LIMIT}"),)

    # ---- traversal: recursion only along statements (at most ~100 deep: Python's indentation limit) ----
    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._visit_expr(child)
            else:
                self.visit(child)

    def _visit_expr(self, root: ast.expr) -> None:
        """Expressions can nest ~3,000 deep (`a + a + ...`): walk them with an explicit stack, in the order
        the recursive visitor would (pre-order). Only calls, `and`/`or` chains and the depth matter inside them."""
        stack, deepest = [(root, 1)], 0
        while stack:
            node, depth = stack.pop()
            if depth > NESTING_LIMIT and not deepest:
                deepest = depth
                self.ix.deep += ((root.lineno, depth, f"an expression more than {NESTING_LIMIT} levels deep"),)
            if isinstance(node, ast.Call):
                self._call(node)
                if isinstance(node.func, ast.Name):
                    self.called[node.func.id] += 1
            elif isinstance(node, ast.Name):
                self.named[node.id] += 1
            elif isinstance(node, ast.BoolOp) and len(node.values) > DEEP_LIMIT:
                self.ix.deep += ((node.lineno, len(node.values), f"`{type(node.op).__name__.lower()}` chain of "
                                                                 f"{len(node.values)} parts > {DEEP_LIMIT}"),)
            stack.extend((child, depth + 1) for child in reversed(list(ast.iter_child_nodes(node))))

    def visit_If(self, node: ast.If) -> None:
        while True:         # an elif chain is nested Ifs: follow it with a loop
            self._visit_expr(node.test)
            for stmt in node.body:
                self.visit(stmt)
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                node = node.orelse[0]
                continue
            for stmt in node.orelse:
                self.visit(stmt)
            return

    # ---- definitions ----
    def _qual(self, name: str) -> str:
        return ".".join([n for _, n in self.stack] + [name])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if not self.stack:
            info = ClassInfo(name=node.name, bases=[b for b in map(dotted_name, node.bases) if b],
                             start=min([node.lineno] + [d.lineno for d in node.decorator_list]),
                             end=node.end_lineno or node.lineno)
            info.scalars, info.reads, info.setters = _scalars_and_reads(node)
            info.tree_setters = _tree_setters(node)
            self.ix.classes[node.name] = info
        self.stack.append(("class", node.name))
        self.generic_visit(node)
        self.stack.pop()
        if not self.stack:
            self._property_reads(node)

    def _property_reads(self, node: ast.ClassDef) -> None:
        """A read of one of the class's own properties (`self.state_in_first_order`) runs its getter: a call
        site of it, in the method that reads it (Dynamo traces the getter as part of that method)."""
        props = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and
                 any(dotted_name(d) == "property" for d in f.decorator_list)}
        if not props:
            return
        for f in node.body:
            info = self.ix.functions.get(f"{node.name}.{getattr(f, 'name', '')}")
            if info is None or not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in ast.walk(f):
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and n.attr in props and \
                        isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr != f.name:
                    info.calls.append(CallSite("self", n.attr, n.lineno, [], {}))

    def visit_FunctionDef(self, node) -> None:
        qual = self._qual(node.name)
        cls = self.stack[-1][1] if self.stack and self.stack[-1][0] == "class" else ""
        args = node.args
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        info = FunctionInfo(
            qualname=qual, cls=cls,
            start=min([node.lineno] + [d.lineno for d in node.decorator_list]),
            def_line=node.lineno, end=node.end_lineno or node.lineno, indent=node.col_offset, top=self.top,
            decorators=[d for d in map(dotted_name, node.decorator_list) if d], params=params,
            nested_in=self.func_stack[-1].qualname if self.func_stack else "",
        )
        self.ix.functions[qual] = info
        info.true_if_any = _true_if_any(node)
        info.sets_keywords = _sets_keywords(node)
        info.annotations = {a.arg: names for a in args.posonlyargs + args.args + args.kwonlyargs
                            if a.annotation is not None for names in [_annotation_names(a.annotation)] if names}
        if cls and len(self.stack) == 1 and cls in self.ix.classes:
            self.ix.classes[cls].methods.append(node.name)
        if not self.func_stack and self.ix.imports:
            info.module_sets = tuple(assigned_between_calls(node, set(self.ix.imports)))
        self.stack.append(("def", node.name))
        self.func_stack.append(info)
        self.loop_vars.append({})
        self.returns.append([])
        outer_loops, self.loops = self.loops, 0
        self.generic_visit(node)
        self.loops = outer_loops
        returns = self.returns.pop()        # the values of its own `return`s (visit_Return)
        info.iterates = self._iterates(returns, params)
        info.returns_def = _returns_def(node, returns)
        self.loop_vars.pop()
        self.func_stack.pop()
        self.stack.pop()

    def visit_Return(self, node: ast.Return) -> None:
        if self.returns:
            self.returns[-1].append(node.value)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _iterates(self, returns: List[Optional[ast.expr]], params: List[str]) -> str:
        """FunctionInfo.iterates of one `def`: every `return` gives the same parameter, itself, as `iter(p)` or
        wrapped in a progress bar (`tqdm(p, ...)`), or such a bar with no iterable (`tqdm(total=n)`)."""
        found: Set[str] = set()
        for r in returns:
            wraps = isinstance(r, ast.Call) and (dotted_name(r.func) == "iter" or
                                                 self.ix.qualify(dotted_name(r.func) or "") in ITERATOR_WRAPPERS)
            inner = (r.args[0] if r.args else None) if wraps else r
            if wraps and inner is None and not any(isinstance(a, ast.Starred) for a in r.args):
                continue
            if not (isinstance(inner, ast.Name) and inner.id in params):
                return ""
            found.add(inner.id)
        return found.pop() if len(found) == 1 else ""

    # ---- calls, bindings ----
    def visit_For(self, node: ast.For) -> None:
        target, it = node.target, node.iter
        src = dotted_name(it)
        if isinstance(target, ast.Name) and src and src.startswith("self."):
            self.loop_vars[-1][target.id] = src
        elif (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)
              and isinstance(it, ast.Call) and dotted_name(it.func) == "enumerate" and it.args):
            inner = dotted_name(it.args[0])
            if inner and inner.startswith("self."):
                self.loop_vars[-1][target.elts[1].id] = inner
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    def visit_While(self, node: ast.While) -> None:
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    def _dynamo_setting(self, target: str, values) -> None:
        """A Dynamo setting the file makes: `torch._dynamo.config.KEY = constant`, or functions added to a
        set-valued one (`= {print}`, `.add(print)`, `.update({print})`)."""
        full = self.ix.qualify(target)
        if not full.startswith(DYNAMO_CONFIG + ".") or full.count(".") != 3:
            return
        key = full.rsplit(".", 1)[1]
        for value in values:
            if isinstance(value, ast.Constant) and isinstance(value.value, (bool, int, float, str)):
                self.ix.dynamo_config += ((key, repr(value.value)),)
            elif isinstance(value, (ast.Set, ast.List, ast.Tuple)):
                self._dynamo_setting(target, value.elts)
            elif dotted_name(value):
                self.ix.dynamo_config += ((key, self.ix.qualify(dotted_name(value))),)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            name = dotted_name(t)
            if name and "config." in name:
                self._dynamo_setting(name, [node.value])
            # a number, or (in a loop: a new value each iteration) anything: its kind is the attribute's own
            if name and "." in name and not name.startswith("self.") and self.func_stack and \
                    (_number(node.value) or self.loops and not isinstance(node.value, (ast.List, ast.Dict))):
                fn = self.func_stack[-1]
                fn.attr_sets = fn.attr_sets + ((node.lineno, name, ast.unparse(node.value)),)
        for targets, value in _paired(node.targets, node.value):
            self._bind(targets, value)
        self.generic_visit(node)

    def _bind(self, targets: List[ast.expr], value: ast.expr) -> None:
        """Record what assigning `value` to `targets` tells: an `__init__` parameter kept (`self.x = x`), a
        construction held by an attribute or a name (`self.proj = nn.Linear(...)`, `m = Model()`)."""
        if isinstance(value, ast.Name) and self.func_stack and self.func_stack[-1].qualname.endswith(".__init__") \
                and value.id in self.func_stack[-1].params:
            cls = self._current_class()
            for t in targets:
                name = dotted_name(t)
                if cls and name and name.startswith("self.") and name.count(".") == 1:
                    cls.param_attrs[name[5:]] = value.id
        if isinstance(value, ast.IfExp):      # `step = torch.compile(f) if cfg.compile else f`: compiled when so
            value = next((v for v in (value.body, value.orelse) if isinstance(v, ast.Call) and
                          self.ix.qualify(dotted_name(v.func) or "") == "torch.compile"), value)
        if isinstance(value, ast.Call):
            for t in targets:
                name = dotted_name(t)
                if name:
                    self._bind_call(name, value)

    def _bind_attribute(self, attr: str, value: ast.Call, ctors: List[str], compiles: bool) -> None:
        """`self.<attr> = <call>` in a class: the classes it holds, and what it holds compiled (a method of the
        class, `torch.compile(self.m)`; a function or a module, `torch.compile(train_step)`,
        `torch.compile(Policy())`)."""
        cls = self._current_class()
        if not cls:
            return
        cls.attrs.setdefault(attr, []).extend(ctors)
        wrapped = dotted_name(value.args[0]) if compiles else None
        if wrapped and wrapped.startswith("self.") and wrapped.count(".") == 1:
            cls.compiled[attr] = wrapped[5:]
        elif self.ix.qualify(dotted_name(value.func) or "") == "torch.compile" and value.args:
            held = dotted_name(value.args[0].func if isinstance(value.args[0], ast.Call) else value.args[0])
            if held and not held.startswith("self."):
                cls.compiled_callables[attr] = held

    def _bind_call(self, name: str, value: ast.Call) -> None:
        """`name = <call>`: a construction held by `self.attr` or a local name, a compiled alias (`fl =
        torch.compile(f)`), or a method rebound to its compiled self (`model.forward = torch.compile(model.forward)`:
        the instance's own attribute holds the compiled method, and `nn.Module.__call__` looks `forward` up on the
        instance, so `model(x)` runs it too)."""
        ctors, callee = self._constructed(value), dotted_name(value.func)
        compiles = bool(callee and self.ix.qualify(callee) == "torch.compile" and value.args and
                        dotted_name(value.args[0]))
        if name.startswith("self.") and name.count(".") == 1 and ctors:
            self._bind_attribute(name[5:], value, ctors, compiles)
        elif name.count(".") == 1 and self.func_stack and compiles and dotted_name(value.args[0]) == name and \
                not name.startswith("self."):
            head, _, attr = name.partition(".")
            self.func_stack[-1].compiled[head if attr == "forward" else name] = name
        elif "." not in name:
            scope = self.func_stack[-1].instances if self.func_stack else self.ix.module_instances
            if self.func_stack and compiles:
                self.func_stack[-1].compiled[name] = dotted_name(value.args[0])
            if ctors:
                scope.setdefault(name, []).extend(c for c in ctors if c not in scope.get(name, []))
            if not self.func_stack and callee:
                self.ix.assigned_calls[name] = callee

    def _current_class(self) -> Optional[ClassInfo]:
        """The top-level class whose method we are in (only those are indexed)."""
        if self.stack and self.stack[0][0] == "class":
            return self.ix.classes.get(self.stack[0][1])
        return None

    def _constructed_in(self, expr: ast.expr) -> List[str]:
        """The classes an argument builds (`Layer(...)`, `[Layer(...) for ...]`): capitalised callees (class
        names are capitalised)."""
        return [name for sub in ast.walk(expr) if isinstance(sub, ast.Call)
                for name in [dotted_name(sub.func)] if name and name.rsplit(".", 1)[-1][:1].isupper()]

    def _constructed(self, call: ast.Call) -> List[str]:
        """Dotted names of the classes a constructor expression builds, containers included:
        `Block(...)`, `nn.ModuleList([Block(...) for _ in ...])`, `nn.Sequential(A(), B())`, `torch.compile(M())`."""
        out: List[str] = []
        while isinstance(call.func, ast.Attribute) and call.func.attr in KEEPS_KIND and \
                isinstance(call.func.value, ast.Call):
            call = call.func.value      # `torch.arange(n).flip(0)`, `Model(cfg).to(device)`: what it was built by
        callee = dotted_name(call.func)
        if callee:
            out.append(callee)
        for arg in list(call.args) + [k.value for k in call.keywords]:
            out += self._constructed_in(arg)
        return out

    def _call(self, node: ast.Call) -> None:
        name = dotted_name(node.func)
        if name and name.endswith((".add", ".update")) and DYNAMO_CONFIG in self.ix.qualify(name):
            self._dynamo_setting(name.rsplit(".", 1)[0], node.args)
        site = self._call_site(node, name)
        if name == "isinstance" and self.func_stack:
            self._narrowed(node)
        if name and name.startswith("self."):
            self._class_facts(node, name)
            self._kept_by_keyword(node, name)
        if site:
            (self.func_stack[-1].calls if self.func_stack else self.ix.module_calls).append(site)

    def _narrowed(self, node: ast.Call) -> None:
        """`isinstance(m, Observer)` (or a tuple of classes) on a local name: where the test holds, `m` is an
        instance of that class, as a type checker narrows it; its methods are what `m.method` names there
        (`torch.compile(m.calculate_qparams)` for the modules of a model that are observers)."""
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], ast.Name):
            return
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        names = [dotted_name(k) for k in kinds]
        if not all(n and n.rsplit(".", 1)[-1][:1].isupper() for n in names):
            return
        bound = self.func_stack[-1].instances.setdefault(node.args[0].id, [])
        bound.extend(n for n in names if n not in bound)

    def _call_site(self, node: ast.Call, name: Optional[str]) -> Optional[CallSite]:
        args = [dotted_name(a) or "" for a in node.args]
        kwargs = {k.arg: _constant_text(k.value.value) for k in node.keywords
                  if k.arg and isinstance(k.value, ast.Constant)}
        site = self._site(node, name, args, kwargs)
        if site is not None:
            site.constants = {i: _constant_text(a.value) for i, a in enumerate(node.args) if isinstance(a, ast.Constant)}
            site.unpacks = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        return site

    def _site(self, node: ast.Call, name: Optional[str], args: List[str], kwargs: Dict[str, str]
              ) -> Optional[CallSite]:
        if name:
            head, _, rest = name.partition(".")
            if head == "self" and rest:
                return CallSite("self", rest, node.lineno, args, kwargs)
            if head in self.loop_vars[-1] and not rest:
                return CallSite("self", self.loop_vars[-1][head][5:], node.lineno, args, kwargs)
            if head in self.loop_vars[-1] and "." not in rest and self.loop_vars[-1][head].count(".") == 1:
                # `for f in self.filters: f.apply(x)`: a method of an item, as `self.filters[i].apply(x)`
                return CallSite("element", f"{self.loop_vars[-1][head][5:]}.{rest}", node.lineno, args, kwargs)
            if head == "super()" and rest:
                return CallSite("super", rest, node.lineno, args, kwargs)
            return CallSite("name", name, node.lineno, args, kwargs)
        if isinstance(node.func, ast.Subscript):
            # self.layers[i](x)
            base = dotted_name(node.func.value)
            if base and base.startswith("self.") and base.count(".") == 1:
                return CallSite("self", base[5:], node.lineno, args, kwargs)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Subscript):
            # self.layers[i].update(x)
            base = dotted_name(node.func.value.value)
            if base and base.startswith("self.") and base.count(".") == 1:
                return CallSite("element", f"{base[5:]}.{node.func.attr}", node.lineno, args, kwargs)
        return None

    def _kept_by_keyword(self, node: ast.Call, name: str) -> None:
        """`self.register(scheduler=scheduler)` in `__init__`, handing it a parameter by keyword: what the class
        keeps as `self.scheduler` if the method sets the attributes its keywords name."""
        init, cls = self.func_stack[-1] if self.func_stack else None, self._current_class()
        if init is None or cls is None or not init.qualname.endswith(".__init__") or name.count(".") != 1:
            return
        for k in node.keywords:
            if k.arg and isinstance(k.value, ast.Name) and k.value.id in init.params:
                cls.keyword_params[k.arg] = (name[5:], k.value.id)

    def _class_facts(self, node: ast.Call, name: str) -> None:
        """What a call on self tells of its class: the items a container attribute holds, registered buffers."""
        if name.count(".") == 2 and name.rsplit(".", 1)[1] in ("append", "extend", "insert") and node.args:
            # self.layers.append(Layer(...)) in a loop of __init__: what the container holds
            cls = self._current_class()
            held = [c for a in node.args for c in self._constructed_in(a)]
            if cls and held:
                cls.attrs.setdefault(name.split(".")[1], []).extend(held)
        if (name in ("self.register_buffer", "self.register_parameter") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            cls = self._current_class()
            if cls:
                cls.registered.append(node.args[0].value)


def assigned_between_calls(tree: ast.AST, aliases) -> List[Tuple[int, str, str, object]]:
    """(line, alias, NAME, key or None) of each `alias.NAME = ...` / `alias.NAME[key] = ...` in `tree` made
    between calls: inside a loop that also calls something (what runs compiled code, directly or not), or in a
    function that calls one callee both before it and after it (`trainer.fit(a)`, the assignment,
    `trainer.fit(b)`)."""
    out = []
    if not any(isinstance(n, (ast.Assign, ast.AugAssign)) and
               any(_through(t, aliases) for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
               for n in ast.walk(tree)):
        return out          # (most functions: one walk, not one per loop)
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes:
        stores = [n for s in scope.body for n in ast.walk(s) if isinstance(n, (ast.Assign, ast.AugAssign)) and
                  any(_through(t, aliases) for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
        if not stores:
            continue
        calls = [(n.lineno, dotted_name(n.func)) for s in scope.body for n in ast.walk(s) if isinstance(n, ast.Call)]
        for n in stores:
            between = bool(calls) if isinstance(scope, (ast.For, ast.While)) else \
                bool({c for ln, c in calls if ln < n.lineno and c} & {c for ln, c in calls if ln > n.lineno})
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if between else ():
                found = _through(t, aliases)
                if found:
                    out.append((n.lineno, *found))
    return list(dict.fromkeys(out))


def _through(target: ast.expr, aliases) -> Optional[Tuple[str, str, object]]:
    """(alias, NAME, key or None) for a target `alias.NAME` or `alias.NAME[<constant>]`."""
    key = None
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and \
            isinstance(target.slice.value, (str, int)):
        target, key = target.value, target.slice.value
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in aliases:
        return target.value.id, target.attr, key
    return None


def _returns_def(fn, returns: List[Optional[ast.expr]]) -> str:
    """FunctionInfo.returns_def of one `def` whose own `return`s give `returns`: the name of a def in its body that
    every `return` gives."""
    defs = {n.name for n in fn.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = {r.id if isinstance(r, ast.Name) and r.id in defs else "" for r in returns} if defs else set()
    return found.pop() if len(found) == 1 else ""


def _sets_keywords(fn) -> bool:
    """The method sets on its instance the attributes its `**kwargs` name: `for name, value in kwargs.items():
    ... setattr(self, name, value)`."""
    args = fn.args
    if args.kwarg is None or not (args.posonlyargs + args.args):
        return False
    me = (args.posonlyargs + args.args)[0].arg
    for loop in ast.walk(fn):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and not loop.iter.args and
                dotted_name(loop.iter.func) == f"{args.kwarg.arg}.items" and isinstance(loop.target, ast.Tuple)
                and len(loop.target.elts) == 2 and all(isinstance(e, ast.Name) for e in loop.target.elts)):
            continue
        key, value = (e.id for e in loop.target.elts)
        if any(isinstance(c, ast.Call) and dotted_name(c.func) == "setattr" and len(c.args) == 3 and
               [dotted_name(a) for a in c.args] == [me, key, value] for c in ast.walk(loop)):
            return True
    return False


def build_index(tree: ast.Module, path: str, module: str, is_package: bool) -> ModuleIndex:
    ix = ModuleIndex(path=path, module=module)
    v = _Indexer(ix, is_package)
    for stmt in tree.body:
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        v.top = (start, stmt.end_lineno or stmt.lineno)
        ix.top_spans.append(v.top)
        v.visit(stmt)
    own = [q for q in ix.functions if "." not in q] + list(ix.classes)
    ix.refs = tuple((n, v.named[n], v.called[n]) for n in own if v.named[n])
    return ix
