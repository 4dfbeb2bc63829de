"""DYN7xx: compile set-up — how `torch.compile` is applied (wrapping order, flags, deprecated APIs)."""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.names import COMPILE
from dynlint.linter.rule import REGISTRY, Example, FixExample, register
from dynlint.fixes.common import SAFE, Autofix, torch_imports, torch_name
from dynlint.rules import torch_release
from dynlint.rules.common import TorchRule, call_args, source_of
from dynlint.rules.recompiles.common import SiteBookkeeping, compile_call, loop_scalar_kind, names_in

DDP = frozenset({"torch.nn.parallel.DistributedDataParallel",
                 "torch.nn.parallel.distributed.DistributedDataParallel"})
DEPRECATED_AMP = {
    "torch.cuda.amp.autocast": "torch.amp.autocast('cuda', ...)",
    "torch.cpu.amp.autocast": "torch.amp.autocast('cpu', ...)",
    "torch.cuda.amp.GradScaler": "torch.amp.GradScaler('cuda', ...)",
    "torch.cuda.amp.custom_fwd": "torch.amp.custom_fwd(device_type='cuda')",
    "torch.cuda.amp.custom_bwd": "torch.amp.custom_bwd(device_type='cuda')",
}
_DIST_INIT = ("import tempfile, torch.distributed as dist",
              "dist.is_initialized() or dist.init_process_group('gloo', init_method='file://' + tempfile.mktemp(), "
              "rank=0, world_size=1)")


def _kwarg(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _is_const(node: Optional[cst.BaseExpression], value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


@register
class CompileAfterDDPWrap(TorchRule):
    """Checks for `torch.compile` applied to a `DistributedDataParallel` wrapper (`torch.compile(DDP(model))`)."""
    code = "DYN701"
    name = "compile-after-ddp-wrap"
    message = "`torch.compile` of a DDP wrapper also traces DDP's Python pre-forward, which breaks the graph on every call"
    fix = "Compile the module and wrap the result: `DDP(torch.compile(model))` (or call `model.compile()` before wrapping)"
    gb_types = ("Unsupported method call", "Attempted to call function marked as skipped")
    scope = "site"
    precision = "medium"
    why = """
        `DDP.forward` itself is excluded from tracing, but the bookkeeping it runs before your module's
        forward (runtime statistics logging, join hooks) is reached by Dynamo and breaks the graph inside
        `torch/nn/parallel/distributed.py` (measured on torch 2.13 with the gloo backend: three breaks per
        call). Compiling the inner module and wrapping that in DDP gives a single graph.
    """
    INVALID = [Example("""
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def build(model):
            return torch.compile(DDP(model))
    """, *_DIST_INIT, "m = build(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()))",
        "m(torch.ones(2, 8)).sum().backward()")]
    VALID = [Example("""
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def build(model):
            return DDP(torch.compile(model))
    """, *_DIST_INIT, "m = build(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()))",
        "m(torch.ones(2, 8)).sum().backward()")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._wrapped: Set[str] = set()

    def _is_ddp(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call):
            return (self.call_name(node) or "") in DDP
        return isinstance(node, cst.Name) and node.value in self._wrapped

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._is_ddp(node.value):
            self._wrapped.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_Call(self, node: cst.Call) -> None:
        if (self.call_name(node) or "") in COMPILE and node.args and self._is_ddp(node.args[0].value):
            self.report(node)


@register
class FullgraphWithKnownBreak(TorchRule):
    """Checks for functions compiled with `fullgraph=True` that contain a line dynlint predicts to break the
    graph."""
    code = "DYN702"
    reads_breaks = True
    name = "fullgraph-with-known-break"
    message = "`fullgraph=True`, but line {line} breaks the graph ({code} {name}): the first call raises"
    fix = "Fix the break first, or drop `fullgraph=True` while it remains"
    scope = "site"
    severity = "error"
    tags = ("hard-error",)
    why = """
        With `fullgraph=True` a graph break is an error (`torch._dynamo.exc.Unsupported`) instead of a split
        graph. Breaks that fullgraph mode resolves by itself (`.item()`, `float(t)`, `nonzero`, boolean
        masks: it turns on scalar and dynamic-shape capture) are not counted here.
    """
    INVALID = [Example("""
        import torch

        @torch.compile(fullgraph=True)
        def step(x):
            y = x * 2
            print("step", y.shape)
            return y + 1
    """, "step(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile(fullgraph=True)
        def step(x):
            y = x * 2
            return y + 1

        def run(x):
            out = step(x)
            print("step", out.shape)
            return out
    """, "run(torch.ones(4))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._strict: List[Tuple[cst.Decorator, int, int]] = []     # (decorator, first line, last line)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for d in node.decorators:
            call = d.decorator
            if isinstance(call, cst.Call) and (self.call_name(call) or "") in COMPILE and \
                    _is_const(_kwarg(call, "fullgraph"), "True"):
                start, _, end, _ = self.ctx.position(node)
                self._strict.append((d, start, end))

    def finish(self, findings) -> None:
        for deco, start, end in self._strict:
            for f in sorted(findings, key=lambda f: f.line):
                rule = REGISTRY.get(f.code)
                if rule is None or not start <= f.line <= end or rule.recompiles or rule.scope != "region" or \
                        not getattr(rule, "fullgraph_raises", False) or rule.tags:
                    continue
                self.ctx.report(self, deco, self.message.format(line=f.line, code=f.code, name=f.name), (),
                                pattern=f"{f.code} {f.pattern}")
                break

    @classmethod
    def on_release(cls, finding, release: str, settings: frozenset = frozenset()):
        """Stands where the break it names does, and raises under fullgraph=True, on the release."""
        code, _, pattern = finding.pattern.partition(" ")
        rule = REGISTRY.get(code)
        if rule is None:
            return finding
        per = torch_release.behaviour(code, pattern)
        here = [per[r] for r in (torch_release.RELEASES if release == torch_release.ALL else (release,)) if r in per]
        if here and not any(torch_release.holds(w) for w, _ in here):
            return None
        return finding if torch_release.fullgraph_raises(code, release, rule.fullgraph_raises) else None


@register
class DynamicFalseWithVaryingShapes(SiteBookkeeping):
    """Checks for functions compiled with `dynamic=False` that are called in a loop with inputs whose shape
    follows the loop variable."""
    code = "DYN703"
    name = "dynamic-false-with-varying-shapes"
    message = "`{callee}` is compiled with `dynamic=False` but called with shapes that change each iteration: every new shape recompiles"
    fix = "Drop `dynamic=False` (automatic dynamic shapes recompile once, then generalise), or pad inputs to a few fixed sizes"
    recompiles = True
    why = """
        `dynamic=False` forbids symbolic shapes, so Dynamo specialises on every input size (`tensor 'x' size
        mismatch at index 0. expected 2, actual 3`). Each new length compiles a new graph until
        `recompile_limit` (8) is hit; after that, new shapes silently run eagerly. Without the flag, the
        second shape makes the dimension dynamic and one graph serves all lengths.
    """
    INVALID = [Example("""
        import torch

        def double(x):
            return x * 2

        def lengths():
            fast = torch.compile(double, dynamic=False)
            out = []
            for n in range(2, 6):
                out.append(fast(torch.ones(n)))
            return out
    """, "lengths()"), Example("""
        import torch

        @torch.compile(dynamic=False)
        def normalise(x):
            return x / x.norm()

        def run():
            out = []
            for n in range(2, 5):
                out.append(normalise(torch.ones(n)))
            return out
    """, "run()")]
    VALID = [Example("""
        import torch

        def double(x):
            return x * 2

        def lengths():
            fast = torch.compile(double, dynamic=False)
            out = []
            for n in range(2, 6):
                out.append(fast(torch.ones(4) * n))
            return out
    """, "lengths()")]

    def _static_names(self) -> Set[str]:
        """Names bound to `torch.compile(..., dynamic=False)`, in this statement or anywhere in the file."""
        out = set()
        for target, value in self.assignments():
            if isinstance(value, cst.Call) and (self.call_name(value) or "") in COMPILE and \
                    _is_const(_kwarg(value, "dynamic"), "False"):
                out.add(target)
        ix = self.ctx.index
        for name in self.compiled_names():
            info = ix.functions.get(name) if ix is not None else None
            fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
            # `torch.compile(f, dynamic=False)`, or `@torch.compile(dynamic=False)` on the def
            calls = [compile_call(self.ctx, name)] + [d for d in (fn.decorator_list if fn is not None else ())
                                                      if isinstance(d, ast.Call)]
            if any(call is not None and any(k.arg == "dynamic" and isinstance(k.value, ast.Constant) and
                                            k.value.value is False for k in call.keywords) for call in calls):
                out.add(name)
        return out

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in self._static_names():
            return
        loops = [b for b in self.ctx.blocks if isinstance(b, cst.For)]
        for arg in node.args:
            value = arg.value
            if not isinstance(value, (cst.Call, cst.Subscript)):
                continue              # a scalar argument is DYN501's business
            shaped = self._shape_args(value)
            for var in shaped:
                if any(loop_scalar_kind(loop, var) == "int" for loop in loops):
                    # a size guard has no source line: Dynamo's log names the compiled frame's first line
                    self.report_at_guard(node, self.compiled_entry(node.func.value), None,
                                         f"`{var}` changes the shape here", callee=node.func.value)
                    return

    def _shape_args(self, value: cst.CSTNode) -> Set[str]:
        """Names that decide the shape of `torch.ones(n, 3)` / `x[:n]` (not the values: `torch.ones(4) * n`)."""
        if isinstance(value, cst.Call) and (self.call_name(value) or "").startswith("torch."):
            return set().union(*[names_in(a) for a in call_args(value)[0]]) if value.args else set()
        if isinstance(value, cst.Subscript):
            names = set()
            for el in value.slice:
                if isinstance(el.slice, cst.Slice):
                    for b in (el.slice.lower, el.slice.upper):
                        if b is not None:
                            names |= names_in(b)
            return names
        return set()


@register
class DeprecatedAmpAPI(TorchRule):
    """Checks for the deprecated device-specific AMP entry points: `torch.cuda.amp.autocast`,
    `torch.cpu.amp.autocast`, `torch.cuda.amp.GradScaler`, `torch.cuda.amp.custom_fwd/custom_bwd`."""
    code = "DYN704"
    name = "deprecated-amp-api"
    message = "`{call}` is deprecated: use `{new}`"
    fix = "Use the device-generic `torch.amp` API: `torch.amp.autocast('cuda', dtype=...)`, `torch.amp.GradScaler('cuda')`"
    scope = "site"
    severity = "note"
    tags = ("deprecation",)
    why = """
        Since torch 2.4 the `torch.cuda.amp` / `torch.cpu.amp` entry points only forward to `torch.amp` and
        emit a `FutureWarning` on every use; they will be removed. Inside compiled code Dynamo handles both
        spellings alike, so switching costs nothing.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def step(x):
            return x * 2

        def train_step(x):
            with torch.cuda.amp.autocast(enabled=False):
                return step(x)
    """, "train_step(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def step(x):
            return x * 2

        def train_step(x):
            with torch.amp.autocast("cpu", enabled=False):
                return step(x)
    """, "train_step(torch.ones(4))")]

    fix_safety = "safe"
    fix_title = ("Rewrites the call to the `torch.amp` API the deprecated one forwards to: `torch.cuda.amp.autocast"
                 "(...)` -> `torch.autocast(\"cuda\", ...)` (positional arguments become keywords: the signatures "
                 "differ), `torch.cpu.amp.autocast` likewise with `\"cpu\"`, `torch.cuda.amp.GradScaler(...)` -> "
                 "`torch.amp.GradScaler(\"cuda\", ...)`, `torch.cuda.amp.custom_fwd/custom_bwd(...)` -> "
                 "`torch.amp.custom_fwd/custom_bwd(..., device_type=\"cuda\")`.")
    fix_note = ("The old `autocast` passed `dtype=torch.float16` (`bfloat16` on CPU) and `cache_enabled=True` "
                "explicitly; the new one reads the defaults, which are the same unless the program changed them "
                "with `torch.set_autocast_dtype` / `torch.set_autocast_cache_enabled`.")
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def step(x):
                return x * 2

            def train_step(x):
                with torch.cuda.amp.autocast(False, torch.bfloat16):
                    return step(x)
        """, """
            import torch

            @torch.compile
            def step(x):
                return x * 2

            def train_step(x):
                with torch.autocast("cuda", enabled=False, dtype=torch.bfloat16):
                    return step(x)
        """, "train_step(torch.ones(4))"),
    ]
    # deprecated name -> (new attribute of torch, device, how positional arguments map)
    REPLACEMENTS = {
        "torch.cuda.amp.autocast": ("autocast", "cuda", ("enabled", "dtype", "cache_enabled")),
        "torch.cpu.amp.autocast": ("autocast", "cpu", ("enabled", "dtype", "cache_enabled")),
        "torch.cuda.amp.GradScaler": ("amp.GradScaler", "cuda", "after-device"),
        "torch.cuda.amp.custom_fwd": ("amp.custom_fwd", "cuda", "device-keyword"),
        "torch.cuda.amp.custom_bwd": ("amp.custom_bwd", "cuda", "device-keyword"),
    }

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if name in DEPRECATED_AMP:
            self.report(node, call=name, new=DEPRECATED_AMP[name])

    def autofix(self, node: cst.Call):
        name = self.call_name(node) or ""
        if name not in self.REPLACEMENTS or any(a.star for a in node.args):
            return None
        attr, device, mapping = self.REPLACEMENTS[name]
        t = torch_name(self.ctx)
        dev = cst.SimpleString(f'"{device}"')
        args = list(node.args)
        if isinstance(mapping, tuple):
            positional = [a for a in args if a.keyword is None]
            if len(positional) > len(mapping):
                return None
            no_space = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                       whitespace_after=cst.SimpleWhitespace(""))
            args = [cst.Arg(dev)] + [a.with_changes(keyword=cst.Name(mapping[i]), equal=no_space) if i < len(positional)
                                     else a for i, a in enumerate(args)]
        elif mapping == "after-device":
            args = [cst.Arg(dev)] + args
        else:
            args = args + [cst.Arg(dev, keyword=cst.Name("device_type"),
                                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                         whitespace_after=cst.SimpleWhitespace("")))]
        new = node.with_changes(func=cst.parse_expression(f"{t}.{attr}"), args=args)
        return Autofix(f"Use `{t}.{attr}(\"{device}\", ...)`", SAFE, ((node, new),), torch_imports(self.ctx))


@register
class CompileResultDiscarded(TorchRule):
    """Checks for `torch.compile(model)` used as a statement, its result thrown away."""
    code = "DYN705"
    name = "compile-result-discarded"
    message = "the result of `{call}` is discarded: nothing is compiled, the original keeps running eagerly"
    fix = "Keep the returned wrapper (`model = torch.compile(model)`), or compile in place with `model.compile()`"
    scope = "site"
    tags = ("not-compiled",)
    why = """
        `torch.compile` does not modify its argument: it returns a new callable (an `OptimizedModule` for a
        module) and only calls through that object are compiled. A bare `torch.compile(model)` statement
        therefore has no effect at all; `model.compile()` is the in-place form.
    """
    INVALID = [Example("""
        import torch

        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        torch.compile(model)
    """, "model(torch.ones(2, 4))")]
    VALID = [Example("""
        import torch

        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        model = torch.compile(model)
    """, "model(torch.ones(2, 4))")]

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value
        if isinstance(value, cst.Call) and (self.call_name(value) or "") in COMPILE and value.args:
            self.report(value, call=source_of(value))
