"""DYN6xx: calls Dynamo cannot trace — functions marked as skipped, C extensions, introspection, custom
operators without a fake implementation."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.dynamo_skips import NOT_SKIPPED_ON, SKIPPED_TORCH_FUNCTIONS
from dynlint.analysis.non_tensor_returns import NON_TENSOR_RETURNS
from dynlint.analysis.held import held_by_attribute, held_by_name
from dynlint.analysis.names import DISABLE, SKIPS_FRAME, strip_call
from dynlint.analysis.regions import is_disabled
from dynlint.analysis.tensors.kinds import TENSOR, WEAK
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import dotted
from dynlint.rules import torch_release
from dynlint.rules.common import NamedCallRule, TorchRule, source_of
from dynlint.rules.numpy_untraced import NUMPY_UNTRACED
from dynlint.rules.side_effects.randomness import RngStateInCompiledCode
from dynlint.rules.side_effects.tensor_state import AUTOGRAD_CALLS

SKIPPED = "Attempted to call function marked as skipped"
BUILTIN = "Failed to trace builtin operator"
UNSUPPORTED_METHOD = "Unsupported method call"
CUSTOM_OP = frozenset({"torch.library.custom_op", "torch._library.custom_ops.custom_op"})
DISABLED = "Skip calling `torch.compiler.disable()`d function"


@register
class CallToDisabledFunction(TorchRule):
    """Checks for calls from traced code into functions marked `@torch.compiler.disable` (or
    `torch._dynamo.disable`), methods so marked of the objects the code holds (`MONITOR.record(x)`), and for
    `torch.compiler.disable(fn)(...)` called inline."""
    code = "DYN601"
    name = "call-to-disabled-function"
    message = "`{callee}` is marked `torch.compiler.disable`: calling it from compiled code breaks the graph"
    fix = "Move the call out of the compiled code, or drop the decorator if the function is traceable (use `torch.compiler.allow_in_graph` for an opaque but graph-safe call)"
    gb_types = (DISABLED, "Skip inlining `torch.compiler.disable()`d function", SKIPPED)
    why = """
        A disabled function always runs eagerly, so Dynamo ends the graph before the call and resumes after
        it (`Skip calling torch.compiler.disable()d function`; `Skip inlining ...` for a disabled method). That is the point of the decorator, but a
        disabled helper called on a hot path of a compiled model splits it in two on every call.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compiler.disable
            def debug_stats(x):
                return x.mean(), x.std()

            @torch.compile
            def layer(x):
                y = x.relu()
                stats = debug_stats(y)
                return y * 2, stats
        """, "layer(torch.ones(4))"),
        Example("""
            import torch

            class Block(torch.nn.Module):
                @torch._dynamo.disable
                def check(self, x):
                    return x.isfinite().all()

                def forward(self, x):
                    ok = self.check(x)
                    return x * 2, ok

            block = torch.compile(Block())
        """, "block(torch.ones(4))"),
        Example("""
            import torch

            class Monitor:
                def __init__(self):
                    self.means = []

                @torch.compiler.disable
                def record(self, x):
                    self.means.append(x.mean().item())

            MONITOR = Monitor()                  # one instance the whole program shares

            @torch.compile
            def layer(x):
                y = x.relu()
                MONITOR.record(y)
                return y * 2
        """, "layer(torch.ones(4))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compiler.disable
        def debug_stats(x):
            return x.mean(), x.std()

        @torch.compile
        def layer(x):
            return x.relu() * 2

        def run(x):
            y = layer(x)
            return y, debug_stats(y)
    """, "run(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Call) and (self.call_name(func) or "") in DISABLE:
            self.report(node, callee=source_of(func))
            return
        project, ix = self.ctx.project, self.ctx.index
        if not project or not ix:
            return
        target = None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            if self.ctx.class_name:
                target = project.method(ix.path, self.ctx.class_name, func.attr.value)
        else:
            dotted = self.ctx.qualify(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
            if dotted and not (isinstance(func, cst.Name) and self.is_local(func.value)):
                r = project.resolve(ix, cst.Module([]).code_for_node(func), self.ctx.qualname)
                target = r[1] if r and r[0] == "function" else None
        if target is None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            target = self._method_of_held(func.value.value, func.attr.value)
        if target:
            tix = project.by_path[target[0]]
            info = tix.functions.get(target[1])
            if info and is_disabled(tix, info):
                self.report(node, callee=source_of(func))

    def _method_of_held(self, name: str, method: str):
        """`MONITOR.record(...)`: the method of the class whose instance `name` holds where the traced code reads
        it (a module-level instance, a local or a parameter's construction: analysis/held.held_by_name), when
        every construction is of one class of the project."""
        project, ix = self.ctx.project, self.ctx.index
        here = ix.functions.get(self.ctx.qualname or "")
        ctors = held_by_name(project, ix, here, name)
        found = [project.resolve(ix, c) for c in ctors]
        if not found or any(f is None or f[0] != "class" for f in found):
            return None
        classes = {(f[1][0], f[1][1].name) for f in found}
        return project.method(*classes.pop(), method) if len(classes) == 1 else None


@register
class IntrospectionCall(NamedCallRule):
    """Checks for stack and module introspection (`inspect.stack()`, `inspect.currentframe()`,
    `sys._getframe()`, `traceback.extract_stack()`, `importlib.import_module()`, `globals()`, `dir()`) inside
    traced code."""
    code = "DYN602"
    name = "introspection-call"
    message = "`{call}()` inspects the interpreter: Dynamo cannot trace it and breaks the graph"
    fix = "Resolve what you need once, outside the compiled code (at import or construction time)"
    gb_types = (SKIPPED, BUILTIN, UNSUPPORTED_METHOD, "invalid call to builtin op handler")
    why = """
        While Dynamo traces, the real Python frames do not exist yet, so frame and stack introspection is
        marked as skipped (`Attempted to call function marked as skipped`), and `globals()` / `dir()` cannot
        be traced either (`Failed to trace builtin operator`). Importing modules by name at run time is
        skipped too. `inspect.signature` of a Python function and `importlib.util.find_spec` are fine.
    """
    INVALID = [Example("""
        import inspect

        import torch

        @torch.compile
        def traced_caller(x):
            caller = inspect.stack()[1].function
            return x * 2, caller
    """, "traced_caller(torch.ones(4))")]
    VALID = [Example("""
        import inspect

        import torch

        def helper(x, scale=2.0):
            return x * scale

        @torch.compile
        def traced(x):
            params = inspect.signature(helper).parameters
            return helper(x, scale=float(len(params)))
    """, "traced(torch.ones(4))")]
    exact = frozenset({"inspect.stack", "inspect.currentframe", "inspect.getframeinfo", "inspect.getouterframes",
                       "inspect.getsource", "inspect.getsourcelines", "inspect.trace", "sys._getframe",
                       "traceback.extract_stack", "traceback.format_stack", "traceback.print_stack",
                       "importlib.import_module", "importlib.reload", "__import__", "globals", "dir"})


@register
class SkippedStdlibCall(TorchRule):
    """Checks for standard-library functions Dynamo skips or cannot trace: `copy.copy` of tensors and
    containers, `uuid`, `gc`, `bisect`, `heapq`, `secrets`, `statistics`, `decimal.Decimal`, `array.array`,
    `warnings.simplefilter`."""
    code = "DYN603"
    name = "skipped-stdlib-call"
    message = "`{call}()` is not traceable by Dynamo: it breaks the graph"
    fix = "Call it outside the compiled code, or use a torch / plain-Python equivalent (`t.clone()`, `list(xs)`, `sorted`)"
    gb_types = (SKIPPED, BUILTIN, "Unsupported function call", "torch.* op returned non-Tensor",
                "Attempted to inline function marked as skipped", "Unsupported arguments for itertools.groupby")
    why = """
        Dynamo keeps a list of modules it does not trace into (C implementations such as `_bisect`,
        `_heapq`, `_uuid`, `gc`) and breaks the graph at their calls (`Attempted to call function marked
        as skipped`); some others fail inside (`Unsupported function call`). `copy.copy` of a list or dict
        is skipped, and of a tensor returns a non-tensor Dynamo cannot model. `copy.copy` of plain objects,
        `functools`, `itertools`, `operator`, `collections` and `math` on numbers are traced.
    """
    INVALID = [
        Example("""
            import bisect

            import torch

            BOUNDARIES = [0.1, 0.5, 0.9]

            @torch.compile
            def bucketed(x, p: float):
                bucket = bisect.bisect_left(BOUNDARIES, p)
                return x * bucket
        """, "bucketed(torch.ones(4), 0.3)"),
        Example("""
            import copy

            import torch

            @torch.compile
            def with_extra(x, layers: list):
                layers = copy.copy(layers)
                layers.append(x.sum())
                return x * 2, layers
        """, "with_extra(torch.ones(4), [torch.ones(1)])"),
        Example("""
            import heapq

            import torch

            @torch.compile
            def smallest(x, heap: list):
                heapq.heappush(heap, 3)
                return x * heapq.heappop(heap)
        """, "smallest(torch.ones(4), [1, 2])"),
    ]
    VALID = [Example("""
        import torch

        BOUNDARIES = torch.tensor([0.1, 0.5, 0.9])

        @torch.compile
        def bucketed(x, p):
            bucket = torch.bucketize(p, BOUNDARIES)
            return x * bucket, sorted([3, 1, 2])
    """, "bucketed(torch.ones(4), torch.tensor(0.3))")]

    PREFIXES = ("uuid.", "gc.", "bisect.", "heapq.", "secrets.", "unicodedata.", "statistics.", "zipfile.")
    EXACT = frozenset({"decimal.Decimal", "array.array", "warnings.simplefilter", "warnings.filterwarnings",
                       "warnings.resetwarnings"})

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if name in self.EXACT or name.startswith(self.PREFIXES):
            self.report(node, call=name)
        elif name == "copy.copy" and node.args:
            arg = node.args[0].value
            if self.tensors.kind(arg) == TENSOR or isinstance(arg, (cst.List, cst.Dict, cst.Set)) or \
                    self._container_param(arg):
                self.report(node, call=name)

    def _container_param(self, arg: cst.CSTNode) -> bool:
        """A parameter annotated as a list/dict/set."""
        fn = self.ctx.function
        if not isinstance(arg, cst.Name) or not isinstance(fn, cst.FunctionDef):
            return False
        for p in list(fn.params.params) + list(fn.params.kwonly_params):
            if p.name.value == arg.value and p.annotation is not None:
                ann = p.annotation.annotation
                base = ann.value if isinstance(ann, cst.Subscript) else ann
                text = (self.ctx.qualify(base) or "").rsplit(".", 1)[-1]
                return text in ("list", "dict", "set", "List", "Dict", "Set")
        return False


@register
class ThirdPartyExtensionCall(NamedCallRule):
    """Checks for SciPy calls inside traced code (C-extension ufuncs and array code Dynamo cannot trace), and for
    the NumPy functions torch's NumPy layer does not implement (`np.argpartition`, `np.isin`)."""
    code = "DYN604"
    name = "third-party-extension-call"
    message = "`{call}()` is {what}: it breaks the graph"
    fix = "Use the torch equivalent (`torch.special.*`, `torch.linalg.*`, `torch.distributions`), or wrap the call in a `torch.library.custom_op`"
    gb_types = (UNSUPPORTED_METHOD, "attempted to trace numpy function unsupported by PyTorch",
                "Unsupported ndarray attribute access")
    why = """
        Dynamo traces torch and (through `torch._numpy`) NumPy, but not other compiled extensions. SciPy's
        special functions are C ufuncs (`Unsupported method call`) and its array code calls NumPy functions
        torch does not implement (`attempted to trace numpy function unsupported by PyTorch`); the graph
        breaks at each call. Plain NumPy (`np.sin(t)`, `np.where`, `np.argsort`) is traced and fine; the NumPy
        functions with no `torch._numpy` twin (`np.argpartition`, `np.isin`, `np.lexsort`: the catalogue in
        `rules/numpy_untraced.py`, generated from torch's own map by `bench/numpy_catalogue.py`) break it too
        (`np.random` is DYN405's).
    """
    INVALID = [Example("""
        import scipy.special
        import torch

        @torch.compile
        def gelu_exact(x):
            cdf = torch.as_tensor(scipy.special.ndtr(x.numpy()))
            return x * cdf
    """, "gelu_exact(torch.ones(4))"), Example("""
        import numpy as np
        import torch

        @torch.compile
        def top_k(sims, k):
            idx = np.argpartition(-sims.numpy(), k, axis=1)[:, :k]
            return torch.from_numpy(idx)
    """, "top_k(torch.randn(3, 6), 2)")]
    VALID = [Example("""
        import numpy as np
        import torch

        @torch.compile
        def gelu_exact(x):
            cdf = torch.special.ndtr(x)
            return x * cdf + torch.from_numpy(np.sin(x.numpy()))
    """, "gelu_exact(torch.ones(4))")]
    prefixes = ("scipy.",)
    exact = frozenset(n for n in NUMPY_UNTRACED if not n.startswith("numpy.random."))

    def report(self, node: cst.CSTNode, message=None, **fmt) -> None:
        call = fmt.get("call", "")
        super().report(node, message, what="SciPy code Dynamo cannot trace" if call.startswith("scipy.") else
                       "a NumPy function torch's NumPy layer does not implement, so Dynamo cannot trace it", **fmt)


@register
class CustomOpWithoutFake(TorchRule):
    """Checks for calls, in traced code, to `torch.library.custom_op` functions that have no fake (meta)
    implementation registered in their file."""
    code = "DYN605"
    name = "custom-op-without-fake"
    message = "custom op `{op}` has no `register_fake`: compiling a call to it fails with an error"
    fix = "Register a fake implementation that computes the output's shape and dtype: `@{fn}.register_fake`"
    gb_types = ("RuntimeError when making fake tensor call",)
    severity = "error"
    tags = ("hard-error",)
    why = """
        Dynamo runs every op on fake tensors (shapes, no data) to trace it. A custom op without a fake
        implementation cannot run that way, and this is not a graph break: compilation fails with
        `TorchRuntimeError` (`RuntimeError when making fake tensor call`) on the first call.
    """
    INVALID = [Example("""
        import torch

        @torch.library.custom_op("dynlint_demo::scale", mutates_args=())
        def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
            return x * factor

        @torch.compile
        def model(x):
            return scale(x, 2.0) + 1
    """, "model(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.library.custom_op("dynlint_demo::scale_ok", mutates_args=())
        def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
            return x * factor

        @scale.register_fake
        def _(x, factor):
            return torch.empty_like(x)

        @torch.compile
        def model(x):
            return scale(x, 2.0) + 1
    """, "model(torch.ones(4))")]

    @staticmethod
    def _has_fake(ix, fn_name: str) -> bool:
        fake_suffixes = (f"{fn_name}.register_fake", f"{fn_name}.register_abstract", f"{fn_name}.impl_abstract")
        generic = ("torch.library.register_fake", "torch.library.impl_abstract", "torch.library.register_fake()",
                   "torch.library.impl_abstract()")
        for f in ix.functions.values():
            for d in f.decorators:
                if strip_call(d) in fake_suffixes or ix.qualify(d) in generic or ix.qualify(strip_call(d)) in generic:
                    return True
        calls = list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]
        return any(c.target in fake_suffixes or ix.qualify(c.target) in generic for c in calls)

    def visit_Call(self, node: cst.Call) -> None:
        """At the call in traced code: the op's body is never traced, but calling it is what fails."""
        name = dotted(node.func)
        project, ix = self.ctx.project, self.ctx.index
        if not name or not project or not ix:
            return
        found = project.resolve(ix, name, self.ctx.qualname)
        if not found or found[0] != "function":
            return
        path, qual = found[1]
        cix = project.by_path[path]
        fn = cix.functions[qual]
        if any(cix.qualify(strip_call(d)) in CUSTOM_OP for d in fn.decorators) and not self._has_fake(cix, qual):
            self.report(node, op=qual, fn=qual)


@register
class RecurrentModuleCall(TorchRule):
    """Checks for calls of `nn.LSTM` / `nn.GRU` / `nn.RNN` submodules in traced code (`self.rnn(x)`, where
    `__init__` made `rnn` one, in this class or a base, or in a subclass whose instances run this method)."""
    code = "DYN606"
    name = "recurrent-module-call"
    message = "`{call}` calls a `{cls}`, which Dynamo does not trace: it " + SKIPS_FRAME
    fix = "Compile the layers around the recurrent module (or set `torch._dynamo.config.allow_rnn = True`, experimental)"
    gb_types = ("Attempted to wrap RNN, GRU, or LSTM",)
    why = """
        Dynamo refuses to wrap `nn.RNN`, `nn.GRU` and `nn.LSTM` (`Attempted to wrap RNN, GRU, or LSTM`, unless
        the experimental `torch._dynamo.config.allow_rnn` is set). The break cannot be resumed, so the whole
        function that calls the module runs eagerly: everything else in it loses its graph too.
    """
    INVALID = [Example("""
        import torch
        from torch import nn


        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.rnn = nn.LSTM(4, 4, batch_first=True)

            def forward(self, x):
                out, _ = self.rnn(self.proj(x))
                return out.relu()
    """, "torch.compile(Tagger())(torch.randn(2, 3, 4))"), Example("""
        import torch
        from torch import nn


        class Mixer(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.rnn = nn.Identity()

            def forward(self, x):
                out = self.rnn(self.proj(x))
                return out[0].relu()


        class LSTMMixer(Mixer):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(4, 4, batch_first=True)
    """, "torch.compile(LSTMMixer())(torch.randn(2, 3, 4))")]
    VALID = [Example("""
        import torch
        from torch import nn


        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.rnn = nn.LSTM(4, 4, batch_first=True)
                self.head = torch.compile(nn.Linear(4, 2))

            def forward(self, x):
                out, _ = self.rnn(self.proj(x))
                return self.head(out)
    """, "Tagger()(torch.randn(2, 3, 4))")]

    RECURRENT = {f"torch.nn.{c}": c for c in ("LSTM", "GRU", "RNN")}
    RECURRENT.update({f"torch.nn.modules.rnn.{c}": c for c in ("LSTM", "GRU", "RNN")})

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if not (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self"):
            return
        ix, project, cls = self.ctx.index, self.ctx.project, self.ctx.class_name
        if not (ix and project and cls):
            return
        for p, c in [(ix.path, cls), *project.bases(ix.path, cls)]:
            kinds = self._recurrent(p, c, f.attr.value)
            if kinds:                               # every value it is given is a recurrent module
                self.report(node, call=source_of(node), cls="/".join(sorted(kinds)))
                return
            if kinds is not None:
                break
        # `self` may be a subclass's instance: one that makes the attribute a recurrent module breaks here
        for p, c in project.subclasses(ix.path, cls):
            kinds = self._recurrent(p, c, f.attr.value)
            if kinds:
                self.report(node, call=source_of(node), cls="/".join(sorted(kinds)) + f"` in a `{c}")
                return

    def _recurrent(self, path: str, cls: str, attr: str):
        """The recurrent classes `cls`'s own assignments of `self.<attr>` make, when every one makes one (an
        empty set when some do not); None when the class does not assign it."""
        project = self.ctx.project
        info = project.by_path[path].classes.get(cls)
        ctors = info.attrs.get(attr, []) if info else []
        if not ctors:
            return None
        kinds = {self.RECURRENT.get(project.by_path[path].qualify(x) or "") for x in ctors}
        return set() if None in kinds else kinds


@register
class UnsupportedContextManager(TorchRule):
    """Checks for `with` blocks over context managers Dynamo cannot trace: locks (`threading.Lock()`, a
    `self.lock` built from one), `contextlib.redirect_stdout`, `tempfile.TemporaryDirectory()`, and objects of
    the project's own context-manager classes made before the traced code runs (`with self.timer:`)."""
    code = "DYN607"
    name = "unsupported-context-manager"
    message = "`with {ctx}` is a context manager Dynamo cannot trace: it " + SKIPS_FRAME
    fix = "Take locks and redirect streams around the compiled call, not inside it; `contextlib.nullcontext`, `contextlib.suppress` and torch's own contexts are fine"
    gb_types = ("Unsupported context manager", UNSUPPORTED_METHOD, SKIPPED, "unsupported contextlib.* API")
    why = """
        Dynamo only traces context managers it models (grad modes, autocast, `nullcontext`, user
        `@contextmanager` generators without breaks). Entering any other one fails (`Unsupported context
        manager`), and because a break inside a `with` block cannot be resumed, Dynamo gives up on the whole
        function: it runs eagerly, with no graph at all. An object of a class of your own with `__enter__`
        and `__exit__` (a timer, a profiling scope) is traced when the compiled code makes it (`with
        Scope("attn"):`), but not when it existed before the call: a module-level or closure object, an
        argument, `self.timer` built in `__init__` (measured on torch 2.13).
    """
    INVALID = [
        Example("""
            import threading

            import torch

            LOCK = threading.Lock()

            @torch.compile
            def guarded(x):
                with LOCK:
                    y = x * 2
                return y + 1
        """, "guarded(torch.ones(4))"),
        Example("""
            import threading

            import torch

            @torch.compile
            def guarded(x):
                with threading.RLock():
                    y = x * 2
                return y + 1
        """, "guarded(torch.ones(4))"),
        Example("""
            import time

            import torch

            class Timer:
                def __enter__(self):
                    self.start = time.perf_counter()
                    return self

                def __exit__(self, *exc):
                    self.elapsed = time.perf_counter() - self.start
                    return False

            class Block(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.timer = Timer()            # made before any call: Dynamo cannot enter it

                def forward(self, x):
                    with self.timer:
                        y = x * 2
                    return y + 1

            model = torch.compile(Block())
        """, "model(torch.ones(4))"),
    ]
    VALID = [Example("""
        import contextlib

        import torch

        @torch.compile
        def guarded(x):
            with contextlib.suppress(KeyError), torch.no_grad():
                y = x * 2
            with contextlib.nullcontext():
                return y + 1
    """, "guarded(torch.ones(4))"), Example("""
        import torch

        class Scope:
            def __init__(self, name):
                self.name = name

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        @torch.compile
        def guarded(x):
            with Scope("double"):                   # made by the compiled code: traced
                y = x * 2
            return y + 1
    """, "guarded(torch.ones(4))")]

    CTORS = frozenset({"threading.Lock", "threading.RLock", "threading.Condition", "threading.Semaphore",
                       "threading.BoundedSemaphore", "multiprocessing.Lock", "multiprocessing.RLock",
                       "contextlib.redirect_stdout", "contextlib.redirect_stderr", "tempfile.TemporaryDirectory",
                       "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile"})

    def _lock_name(self, item: cst.BaseExpression) -> bool:
        ix, project = self.ctx.index, self.ctx.project
        if not ix:
            return False
        if isinstance(item, cst.Name) and not self.is_local(item.value):
            ctor = ix.assigned_calls.get(item.value)
            return bool(ctor) and ix.qualify(ctor) in self.CTORS
        if isinstance(item, cst.Attribute) and isinstance(item.value, cst.Name) and item.value.value == "self" \
                and self.ctx.class_name and project:
            for p, c in [(ix.path, self.ctx.class_name), *project.bases(ix.path, self.ctx.class_name)]:
                info = project.by_path[p].classes.get(c)
                for ctor in (info.attrs.get(item.attr.value, []) if info else []):
                    if project.by_path[p].qualify(ctor) in self.CTORS:
                        return True
        return False

    def _user_manager(self, item: cst.BaseExpression) -> bool:
        """An instance of a project class with `__enter__` (a timer, a profiler scope) made before the traced
        code runs: a module-level or closure object, a parameter's argument, `self.<attr>` built in
        `__init__`. Dynamo traces `with Scope(...)` over one made in the traced code, but entering one that
        already existed fails (measured, torch 2.13: `Unsupported context manager`)."""
        ix, project = self.ctx.index, self.ctx.project
        if ix is None or project is None:
            return False
        here = ix.functions.get(self.ctx.qualname or "")
        if isinstance(item, cst.Name):
            name = item.value
            if here is not None and (name in here.instances or (self.is_local(name) and name not in here.params)):
                return False            # made by the traced code itself
            held = held_by_name(project, ix, here, name)
        elif isinstance(item, cst.Attribute) and isinstance(item.value, cst.Name) and item.value.value == "self" \
                and self.ctx.class_name:
            held = held_by_attribute(project, ix, self.ctx.class_name, item.attr.value)
        else:
            return False
        for ctor in held:
            found = project.resolve(ix, ctor)
            if found and found[0] == "class" and project.method(found[1][0], found[1][1].name, "__enter__"):
                return True
        return False

    def visit_WithItem(self, node: cst.WithItem) -> None:
        item = node.item
        if isinstance(item, cst.Call) and (self.call_name(item) or "") in self.CTORS:
            self.report(item, ctx=source_of(item))
        elif self._lock_name(item) or self._user_manager(item):
            self.report(item, ctx=source_of(item))


@register
class ExplicitGraphBreak(TorchRule):
    """Checks for explicit `torch._dynamo.graph_break()` calls."""
    code = "DYN608"
    name = "explicit-graph-break"
    message = "`torch._dynamo.graph_break()` splits the graph here on purpose"
    fix = "Remove it once the code after it traces; to keep a region eager, move it into a `@torch.compiler.disable` function"
    gb_types = ("Call to `torch._dynamo.graph_break()`",)
    severity = "note"
    why = """
        The call exists to force a break (`Call to torch._dynamo.graph_break()`), typically left over from
        debugging. Every break costs a graph boundary, lost fusion, and a resume function; inside a loop it
        makes Dynamo skip the whole function.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def two_halves(x):
            y = x.sin()
            torch._dynamo.graph_break()
            return y.cos()
    """, "two_halves(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def one_graph(x):
            y = x.sin()
            return y.cos()
    """, "one_graph(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        if self.call_name(node) in ("torch._dynamo.graph_break", "torch.compiler.graph_break"):
            self.report(node)


@register
class SkippedTorchCall(NamedCallRule):
    """Checks for calls to the torch functions Dynamo's own trace rules mark as skipped (`torch.nn.utils.rnn.
    pack_padded_sequence`, `torch.jit.isinstance`, `torch.set_anomaly_enabled`, `torch.cuda.set_device`, ...),
    read from `torch._dynamo.trace_rules` into a generated table (`analysis/dynamo_skips.py`). Seeding and RNG
    state (DYN317) and autograd calls (DYN315) have rules of their own."""
    code = "DYN612"
    name = "skipped-torch-call"
    message = "`{call}()` is marked skipped in Dynamo's trace rules: calling it from compiled code breaks the graph"
    fix = "Call it before or after the compiled code; for packed sequences, run the recurrent part outside the compiled function or pad and mask instead of packing"
    gb_types = (SKIPPED,)
    why = """
        Dynamo keeps, for every torch callable it knows, how to model a call: put it in the graph, inline its
        Python, or skip it. The ones it skips (packing padded sequences, `torch.jit.isinstance`, anomaly
        detection and autocast setters, device selection) run eagerly: the graph ends before the call and
        resumes after it (`Attempted to call function marked as skipped`). The list is Dynamo's own, read
        from the installed torch by `bench/dynamo_skips.py`, so it follows the release.
    """
    INVALID = [Example("""
        import torch
        from torch.nn.utils.rnn import pack_padded_sequence

        @torch.compile
        def packed_total(x, lengths):
            y = x * 2
            packed = pack_padded_sequence(y, lengths, batch_first=True)
            return packed.data.sum()
    """, "packed_total(torch.ones(2, 3, 4), torch.tensor([3, 2]))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def masked_total(x, lengths):
            y = x * 2
            keep = torch.arange(x.shape[1]) < lengths[:, None]
            return (y * keep[..., None]).sum()
    """, "masked_total(torch.ones(2, 3, 4), torch.tensor([3, 2]))")]
    exact = SKIPPED_TORCH_FUNCTIONS - RngStateInCompiledCode.exact - AUTOGRAD_CALLS

    @classmethod
    def on_release(cls, finding, release: str, settings: frozenset = frozenset()):
        """Where the release skips the function (the table holds what each measured release skips)."""
        per = {r: (("break", ()) if finding.pattern not in NOT_SKIPPED_ON.get(r, ()) else ("nothing", ()))
               for r in torch_release.RELEASES}
        return torch_release.on_release(finding, release, per)


@register
class TorchCallReturningPythonValue(NamedCallRule):
    """Checks for calls to the torch functions that answer with a Python value Dynamo cannot put in a graph
    (`torch.cuda.device_count()`, `torch.cuda.max_memory_allocated()`, `torch.get_num_threads()`,
    `torch.backends.mps.is_available()`), measured under real Dynamo into a generated table
    (`analysis/non_tensor_returns.py`)."""
    code = "DYN617"
    name = "torch-call-returns-python-value"
    message = "`{call}()` answers with a Python value Dynamo cannot keep in the graph: it breaks the graph"
    fix = ("Ask once, outside the compiled code, and pass the answer in (a device count, a memory figure, a "
           "backend's availability); log memory after the compiled call returns")
    gb_types = ("torch.* op returned non-Tensor",)
    why = """
        Dynamo puts a torch function in the graph by running it on fake tensors; one that answers with a Python
        value (a device count, a number of threads, bytes allocated, whether a backend is built) and that
        Dynamo has no constant rule for ends the graph: `torch.* op returned non-Tensor`. The graph resumes
        after the call. Device and memory queries in a compiled training step or forward (logging peak memory,
        choosing a path by device count) do this on every call; `torch.cuda.is_available()` is folded to a
        constant and does not. The table is measured from the installed torch by
        `bench/non_tensor_returns.py`, not written by hand.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def scaled(x):
            workers = max(1, torch.get_num_threads())
            return x / workers
    """, "scaled(torch.ones(4))")]
    VALID = [Example("""
        import torch

        WORKERS = max(1, torch.get_num_threads())       # asked once, outside

        @torch.compile
        def scaled(x):
            return x / WORKERS
    """, "scaled(torch.ones(4))")]
    exact = NON_TENSOR_RETURNS


# Tensor methods Dynamo does not trace, each with the gb_type it breaks with
UNSUPPORTED_TENSOR_METHODS = {
    "random_": "Tensor.random_ op", "resize_": "Unsupported Tensor.resize_() call",
    "resize_as_": "Unsupported Tensor.resize_as_() call", "set_": "Unsupported Tensor.set_() call",
    "share_memory_": "Unsupported Tensor.share_memory_() call", "is_inference": "Encountered tensor.is_inference() during tracing",
}
UNSUPPORTED_TORCH_CALLS = {"torch.is_inference_mode_enabled": "Encountered torch.is_inference_mode_enabled during tracing",
                           "torch.Generator": "An opaque object was created in the middle of the program."}
GENERATOR_ARGUMENT = "Failed to convert args/kwargs to proxy"


@register
class UnsupportedTensorCall(TorchRule):
    """Checks for tensor methods and torch functions Dynamo's registry names as unsupported in a graph:
    `t.random_()`, `t.resize_()`, `t.resize_as_()`, `t.set_()`, `t.share_memory_()`, `t.is_inference()`,
    `torch.is_inference_mode_enabled()`, a `torch.Generator()` made there, or one handed to a torch call
    (`torch.randn(shape, generator=gen)`)."""
    code = "DYN613"
    name = "unsupported-tensor-call"
    message = "`{call}` is not supported inside a graph: Dynamo breaks the graph here"
    fix = "Call it outside the compiled code (resize or share storage before; query inference mode once, outside, and pass the answer in); for random integers use `torch.randint`"
    gb_types = tuple(UNSUPPORTED_TENSOR_METHODS.values()) + tuple(UNSUPPORTED_TORCH_CALLS.values()) + \
        (GENERATOR_ARGUMENT,)
    why = """
        These calls change a tensor's storage in place (`resize_`, `set_`, `share_memory_`), draw into it in a
        way the compiler does not model (`random_`), or ask whether autograd is off for good
        (`is_inference()`, `torch.is_inference_mode_enabled()`), which a graph cannot answer once for every
        call; a `torch.Generator` made while tracing is an object the graph cannot hold, nor can a torch
        call take one made outside (`generator=gen`: "Failed to convert args/kwargs to proxy"; `generator=None`
        is fine). Dynamo's registry lists each as unsupported, and it breaks the graph at the call.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def noisy_ids(x):
            ids = torch.empty(x.shape[0], dtype=torch.long)
            ids.random_(0, 10)
            return x[ids % x.shape[0]] * 2
    """, "noisy_ids(torch.randn(4, 3))"), Example("""
        import torch

        @torch.compile
        def head(x):
            y = x * 2
            if torch.is_inference_mode_enabled():
                return y
            return y.relu()
    """, "head(torch.randn(4))"), Example("""
        import torch

        @torch.compile
        def seeded_noise(x):
            y = x * 2
            gen = torch.Generator()
            return y + torch.rand(x.shape, generator=gen)
    """, "seeded_noise(torch.randn(4))"), Example("""
        import torch

        GEN = torch.Generator().manual_seed(0)

        @torch.compile
        def jitter(x, gen):
            y = x + torch.randn(x.shape, generator=GEN)
            return y[torch.randperm(x.shape[0], generator=gen)]
    """, "jitter(torch.randn(4), torch.Generator())")]
    VALID = [Example("""
        import torch

        @torch.compile
        def noisy_ids(x, gen=None):
            ids = torch.randint(0, 10, (x.shape[0],), generator=gen)
            return x[ids % x.shape[0]] * 2
    """, "noisy_ids(torch.randn(4, 3))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if name in UNSUPPORTED_TORCH_CALLS:
            self.report(node, call=f"{name}()")
        elif self.method_name(node) in UNSUPPORTED_TENSOR_METHODS and \
                self.tensors.kind(self.receiver(node)) in (TENSOR, WEAK):
            self.report(node, call=f".{self.method_name(node)}()")
        gen = next((a.value for a in node.args if a.keyword and a.keyword.value == "generator"), None)
        if gen is not None and (name.startswith("torch.") or self.method_name(node)) and not self._none(gen):
            self.report(gen, call=f"generator={source_of(gen)}", pattern="generator=")

    def _none(self, value: cst.BaseExpression) -> bool:
        """`None`, or (an item of) a parameter of the traced function that may be None: one defaulting to None
        or annotated optional (`generator: torch.Generator | None`), which callers may leave None."""
        while isinstance(value, cst.Subscript):
            value = value.value
        if isinstance(value, cst.Name) and value.value == "None":
            return True
        fn = self.ctx.function
        params = fn.params.params + fn.params.kwonly_params if isinstance(fn, cst.FunctionDef) else ()
        return isinstance(value, cst.Name) and any(
            p.name.value == value.value and ((isinstance(p.default, cst.Name) and p.default.value == "None") or (
                p.annotation is not None and any(w in source_of(p.annotation.annotation) for w in ("None", "Optional"))))
            for p in params)
