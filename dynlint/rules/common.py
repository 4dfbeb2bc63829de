"""Helpers shared by the torch rules: the tensor analysis, call-name matching (`NamedCallRule`), and the severity
escalation Dynamo applies to a break inside a loop, `try` or `with` (it skips the whole function)."""
from __future__ import annotations

import re
from typing import ClassVar, Optional, Sequence, Set

import libcst as cst

from dynlint.analysis.names import COMPILING_FALSE, COMPILING_TRUE, SKIPS_FRAME
from dynlint.linter.walker import descendants, dotted, walk
from dynlint.analysis.regions import compiled_in
from dynlint.analysis.tensors.inference import Tensors
from dynlint.linter.rule import Rule
from dynlint.rules import torch_release

LOOP_SKIP = "graph break in loop"
CONTEXT_SKIP = "Graph break under GenericContextWrappingVariable"
# Calls whose value Dynamo knows while tracing: branches on them are resolved, not traced.
# Context managers Dynamo traces natively: a break under them is an ordinary break.
TRACED_CONTEXTS = ("torch.",)
# The splits by sizes (`x.split(sizes)`, `torch.split(x, sizes)`): DYN404 reports a `.tolist()` as their sizes,
# which DYN203 therefore leaves alone.
SPLITS = frozenset({"split", "split_with_sizes", "tensor_split"})


class TorchRule(Rule):
    """A rule about code torch.compile traces.

    `fullgraph_raises`: whether `torch.compile(fullgraph=True)` turns the predicted break into an error
    (False where fullgraph silently enables scalar / dynamic-shape capture instead: `.item()`, `nonzero`).
    DYN702 reads it; the proof test checks it against Dynamo.
    """
    fullgraph_raises: ClassVar[bool] = True

    @property
    def tensors(self) -> Tensors:
        return Tensors.of(self.ctx)

    @classmethod
    def on_release(cls, finding, release: str, settings: frozenset = frozenset()):
        """What the table measured on each release (rules/torch_release.py)."""
        return torch_release.on_release(finding, release, settings=settings)

    @classmethod
    def on_releases(cls) -> list:
        return torch_release.markdown(cls.code, cls.gb_types)

    def call_name(self, node: cst.Call) -> Optional[str]:
        """Qualified name of the called function (`F.relu(x)` -> `torch.nn.functional.relu`)."""
        return self.ctx.qualify(node.func)

    def method_name(self, node: cst.Call) -> Optional[str]:
        return node.func.attr.value if isinstance(node.func, cst.Attribute) else None

    def receiver(self, node: cst.Call) -> Optional[cst.CSTNode]:
        return node.func.value if isinstance(node.func, cst.Attribute) else None

    def is_local(self, name: str) -> bool:
        """Whether `name` is bound in the current function (a parameter or an assignment)."""
        return self.tensors.is_local(name)

    def compiled_names(self) -> Set[str]:
        """Names in this file that hold compiled callables (`@torch.compile def f`, `m = torch.compile(...)`)."""
        return self.ctx.analysis(compiled_names)

    def in_untraced_function(self) -> bool:
        """Inside a function Dynamo does not trace although it is reached from a region (a custom op's body,
        an `allow_in_graph` function): Dynamo treats it as one opaque call."""
        for fn in self.ctx.functions:
            if isinstance(fn, cst.FunctionDef):
                for d in fn.decorators:
                    target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                    q = self.ctx.qualify(target) or ""
                    if q.startswith(NOT_TRACED_DECORATORS) or q.endswith((".register_fake", ".register_kernel",
                                                                           ".register_autograd")):
                        return True
        return False

    def dead_under_dynamo(self, node: cst.CSTNode) -> bool:
        """Inside a branch Dynamo never traces: `if not torch.compiler.is_compiling(): ...`, the body of
        `if torch.jit.is_scripting():`, the `else` of `if torch.compiler.is_compiling():`, the `b` of
        `not is_compiling() and b` (a project helper that returns such a check counts as the check)."""
        chain = self._chain(node)
        for parent, child in zip(chain, chain[1:]):
            if isinstance(parent, (cst.If, cst.IfExp)):
                value = self._value_under_dynamo(parent.test)
                if value is False and child is parent.body or value is True and child is parent.orelse:
                    return True
            if isinstance(parent, (cst.If, cst.IfExp, cst.While)) and self._unevaluated(parent.test, node):
                return True
            if isinstance(parent, cst.BooleanOperation) and self._unevaluated(parent, child):
                return True
        return False

    def _unevaluated(self, expr: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """`node` is in an operand of `expr` that Dynamo never evaluates: the `b` of `False and b`, `True or b`."""
        stack = [expr]
        while stack:
            e = stack.pop()
            if isinstance(e, cst.BooleanOperation):
                value = self._value_under_dynamo(e.left)
                if value is not None and value is (not isinstance(e.operator, cst.And)) and _contains(e.right, node):
                    return True
                stack += [e.left, e.right]
            elif isinstance(e, cst.UnaryOperation):
                stack.append(e.expression)
        return False

    def _value_under_dynamo(self, test: cst.BaseExpression, depth: int = 0) -> Optional[bool]:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._value_under_dynamo(test.expression, depth)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left, right = self._value_under_dynamo(test.left, depth), self._value_under_dynamo(test.right, depth)
            stop = isinstance(test.operator, cst.Or)          # `True or ...` / `False and ...`
            if stop in (left, right):
                return stop
            return None if None in (left, right) else not stop
        if isinstance(test, cst.Call):
            name = self.ctx.qualify(test.func) or ""
            if not test.args and name in COMPILING_TRUE:
                return True
            if not test.args and name in COMPILING_FALSE:
                return False
            return True if self._returns_compiling(self.ctx.index, dotted(test.func), depth) else None
        return None

    def _returns_compiling(self, ix, name: Optional[str], depth: int) -> bool:
        """A project function that returns a check true while Dynamo traces (`FunctionInfo.true_if_any`), to a
        depth: transformers' `is_torchdynamo_compiling()` returns `torch.compiler.is_compiling()`."""
        project = self.ctx.project
        if not name or ix is None or project is None or depth > 3:
            return False
        found = project.resolve(ix, name)
        if not found or found[0] != "function":
            return False
        path, q = found[1]
        fix = project.by_path[path]
        for call in fix.functions[q].true_if_any:
            if (fix.qualify(call) or "") in COMPILING_TRUE or self._returns_compiling(fix, call, depth + 1):
                return True
        return False

    def report(self, node: cst.CSTNode, message: Optional[str] = None, **fmt) -> None:
        """`fmt`: the message's placeholders, and optionally `pattern`, the key of the finding's per-release
        behaviour (by default the call the message names: call_pattern), and `through`, a node the span runs
        on to."""
        if self.scope in ("region", "frame") and (self.in_untraced_function() or self.dead_under_dynamo(node) or
                                       self._after_skip(node)):
            return
        pattern = fmt.pop("pattern", None)
        through = fmt.pop("through", None)          # the span runs on to this node's end (walker.report)
        pattern = call_pattern(fmt) if pattern is None else pattern
        message = message or self.format_message(**fmt)
        gb_types: Sequence[str] = self.gb_types
        if not self.recompiles and self.scope == "region":
            where = self._whole_frame_skip(node)
            if where:
                kind, extra = where
                message += f" — inside {kind}, so Dynamo {SKIPS_FRAME} and runs it eagerly"
                gb_types = tuple(gb_types) + ((extra,) if extra else ())
                self._mark_skip(node)
        self.ctx.report(self, node, message, gb_types, autofix=self.plan_fix(node), pattern=pattern, through=through)

    def _chain(self, node: cst.CSTNode) -> list:
        """The ancestors of `node`, the node being visited (an `if`, reporting its test) included, and `node`."""
        current = self.ctx.current
        return list(self.ctx.parents) + ([current] if current is not None and current is not node else []) + [node]

    def _loop_statement(self, chain: list, loop: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement of `loop`'s body that holds the end of `chain`."""
        at = next((i for i, n in enumerate(chain) if n is loop), None)
        if at is None or len(chain) < at + 3 or chain[at + 1] is not loop.body:
            return None
        return chain[at + 2]

    def _mark_skip(self, node: cst.CSTNode) -> None:
        """A break at `node` skips the frame; when it runs on every iteration of the innermost loop (in a plain
        statement of the loop's body, or in the first operand of an `if` test there), remember it."""
        loop = next((b for b in reversed(self.ctx.blocks) if isinstance(b, (cst.For, cst.While))), None)
        chain = self._chain(node)
        stmt = self._loop_statement(chain, loop) if loop is not None else None
        if stmt is None:
            return
        if isinstance(stmt, cst.If):
            first = stmt.test
            while isinstance(first, (cst.BooleanOperation, cst.UnaryOperation)):
                first = first.left if isinstance(first, cst.BooleanOperation) else first.expression
            if not (first is node or _contains(first, node)):
                return
        elif not isinstance(stmt, cst.SimpleStatementLine):
            return
        self.ctx.skipping.setdefault(id(loop), id(stmt))

    def _after_skip(self, node: cst.CSTNode) -> bool:
        """Later in a loop body than a break that skips the frame on every iteration (`_mark_skip`): Dynamo
        never traces it, so it never breaks there (the first break is the one to fix)."""
        if not self.ctx.skipping:
            return False
        chain = self._chain(node)
        for block in self.ctx.blocks:
            mark = self.ctx.skipping.get(id(block))
            if mark is not None:
                stmt = self._loop_statement(chain, block)
                if stmt is not None and id(stmt) != mark:
                    return True
        return False

    def _before_last_operand(self, header: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """`node` is in an operand of `and`/`or` in `header` that another operand follows."""
        ops = [header] if isinstance(header, cst.BooleanOperation) else []
        ops += [n for n in descendants(header) if isinstance(n, cst.BooleanOperation)]
        return any(node is b.left or any(n is node for n in descendants(b.left)) for b in ops)

    def _whole_frame_skip(self, node: cst.CSTNode):
        """(description, extra gb_type) when a break at `node` makes Dynamo skip the frame."""
        parents = self.ctx.parents
        tests = [n.test for n in [*parents, self.ctx.current] if isinstance(n, cst.While)]
        if tests and self._before_last_operand(tests[-1], node):
            # (`while x.any() and it < n:`: the rest of the test is code in the loop, where Dynamo cannot resume;
            # measured on torch 2.13)
            return "a `while` loop's test, before its last operand", LOOP_SKIP
        for block in reversed(self.ctx.blocks):
            if isinstance(block, (cst.For, cst.While)):
                header = block.iter if isinstance(block, cst.For) else block.test
                if node is header or any(p is header for p in parents):
                    continue       # the loop's own header is not in the loop body
                return ("a `for` loop" if isinstance(block, cst.For) else "a `while` loop"), LOOP_SKIP
            if isinstance(block, cst.Try):
                return "a `try` block", None
            if isinstance(block, cst.With):
                names = [self.ctx.qualify(i.item.func if isinstance(i.item, cst.Call) else i.item) or ""
                         for i in block.items]
                if all(n.startswith(TRACED_CONTEXTS) for n in names):
                    continue
                if any(node is i.item or any(p is i.item for p in parents) for i in block.items):
                    continue
                return "a `with` block", CONTEXT_SKIP
        return None


def _calls_listed(name: str, exact, prefixes=()) -> bool:
    return name in exact or name.startswith(tuple(prefixes))


class NamedCallRule(TorchRule):
    """A rule that reports calls of listed (qualified) names: `exact` names and every function of the
    modules in `prefixes`, minus `allowed`."""
    exact: frozenset = frozenset()
    prefixes: tuple = ()
    allowed: frozenset = frozenset()

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node)
        if not name or name in self.allowed:
            return
        if isinstance(node.func, cst.Name) and name == node.func.value and name not in self.exact:
            return                                   # a local function that happens to share a name
        if _calls_listed(name, self.exact, self.prefixes):
            self.report(node, call=name)


# ---- helpers shared by several families ---------------------------------------------------------------
_CALLED = re.compile(r"\.?[A-Za-z_][\w.]*(\(\))?")


def call_pattern(fmt: dict) -> str:
    """The key of a finding's per-release behaviour (rules/releases.py): the name of the call it reports
    (`random.random`, `.tolist`), "" where the message quotes no call by name."""
    call = fmt.get("call")
    return call.removesuffix("()") if isinstance(call, str) and _CALLED.fullmatch(call) else ""


NOT_TRACED_DECORATORS = ("torch.library.custom_op", "torch.library.register_fake", "torch.library.impl_abstract",
                         "torch.library.register_kernel", "torch.library.impl", "torch.compiler.allow_in_graph",
                         "torch._dynamo.allow_in_graph")


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    found = []
    walk(tree, lambda n: not found and (found.append(n) if n is node else True), lambda n: None)
    return bool(found)


def source_of(node: cst.CSTNode, limit: int = 60) -> str:
    """Short source text of a node, for messages."""
    code = " ".join(cst.Module([]).code_for_node(node).split())
    return code if len(code) <= limit else code[:limit - 3] + "..."


def is_not(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)


def truth_operands(test: cst.BaseExpression):
    """The expressions whose truth value Python asks for when `test` is a condition: `a and not b` -> a, b."""
    if isinstance(test, cst.BooleanOperation):
        yield from truth_operands(test.left)
        yield from truth_operands(test.right)
    elif is_not(test):
        yield from truth_operands(test.expression)
    else:
        yield test


def value_truth_operands(expr: cst.BaseExpression):
    """The operands whose truth Python asks for when `expr` is used as a value (`y = a or b` tests `a` only:
    `b` is returned as it is)."""
    if isinstance(expr, cst.BooleanOperation):
        yield from truth_operands(expr.left)
        yield from value_truth_operands(expr.right)
    elif is_not(expr):
        yield from truth_operands(expr.expression)


def call_args(node: cst.Call):
    """(positional argument values, {keyword: value})."""
    pos = [a.value for a in node.args if a.keyword is None and not a.star]
    kw = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    return pos, kw


def compiled_names(ctx) -> Set[str]:
    """An analysis (ctx.analysis): the names of the unit's file that hold compiled callables."""
    return compiled_in(ctx.index) if ctx.index else set()
