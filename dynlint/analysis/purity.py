"""Is evaluating an expression free of side effects? What a fix must know before it skips code while compiling,
moves it, or computes both arms of a branch."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.aliasing import nodes
from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import TENSOR, WEAK
from dynlint.analysis.tensors.torch_api import TENSOR_METHODS

PURE_BUILTINS = frozenset({"len", "str", "repr", "format", "tuple", "list", "dict", "set", "frozenset", "int",
                           "float", "bool", "round", "abs", "min", "max", "sum", "sorted", "type", "id",
                           "isinstance", "hasattr", "getattr", "any", "all", "range", "enumerate", "zip",
                           "reversed", "divmod", "pow", "hash", "callable", "chr", "ord", "hex", "bin"})
PURE_FUNCTIONS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.process_time",
                            "time.time_ns", "time.perf_counter_ns", "os.getpid", "os.environ.get", "os.getenv",
                            "os.path.join", "os.path.basename", "json.dumps"})
PURE_PREFIXES = ("math.", "operator.")
IMPURE_TORCH = frozenset({"torch.manual_seed", "torch.seed", "torch.save", "torch.load", "torch.set_rng_state",
                          "torch.set_default_dtype", "torch.set_default_device", "torch.set_printoptions",
                          "torch.set_grad_enabled", "torch.use_deterministic_algorithms", "torch.cuda.synchronize",
                          "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.empty_cache"})
MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "popleft", "appendleft", "update", "setdefault",
                              "add", "clear", "remove", "discard", "popitem", "write", "writelines", "send", "close",
                              "flush", "step", "backward", "zero_grad", "register_buffer", "register_parameter",
                              "put", "put_nowait", "get", "get_nowait", "set", "reset", "seed", "manual_seed",
                              "sort", "reverse", "__setitem__", "__delitem__", "train", "eval", "apply", "to_",
                              "next", "__next__", "read", "readline"})
# Random draws: skipping one (or drawing twice) changes every later random number.
RANDOM = frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
                    "multinomial", "normal", "poisson", "dropout", "dropout1d", "dropout2d", "dropout3d",
                    "alpha_dropout", "feature_alpha_dropout", "rrelu", "gumbel_softmax", "sample", "rsample",
                    "random", "uniform", "choice", "shuffle"})
SIDE_EFFECT_METHODS = frozenset({"register_hook", "retain_grad", "record_stream", "register_forward_hook",
                                 "register_forward_pre_hook", "register_full_backward_hook"})
STRING_METHODS = frozenset({"format", "join", "upper", "lower", "strip", "split", "replace", "startswith",
                            "endswith", "rjust", "ljust", "center", "zfill"})


def is_pure(ctx, node: cst.CSTNode) -> bool:
    """Evaluating `node` has no side effect a reader would miss if it were skipped or run twice: names,
    attributes, literals, operators, f-strings, tensor methods that are not in-place, `torch.*` / `math.*`
    functions and a few builtins and clock reads. Calls of user functions are not (they may do anything)."""
    tensors = Tensors.of(ctx)
    for n in nodes(node):
        if isinstance(n, (cst.Lambda, cst.Yield, cst.Await, cst.NamedExpr)):
            return False
        if isinstance(n, cst.Call) and not _pure_call(ctx, tensors, n):
            return False
    return True


def _pure_call(ctx, tensors: Tensors, call: cst.Call) -> bool:
    func = call.func
    q = ctx.qualify(func) or ""
    if q.rsplit(".", 1)[-1] in RANDOM or q.rsplit(".", 1)[-1] in SIDE_EFFECT_METHODS:
        return False
    if isinstance(func, cst.Name):
        return q in PURE_BUILTINS or q in PURE_FUNCTIONS or q.startswith(PURE_PREFIXES) or \
            (q.startswith("torch.") and q not in IMPURE_TORCH and not q.endswith("_"))
    if not isinstance(func, cst.Attribute):
        return False
    method = func.attr.value
    if q in PURE_FUNCTIONS or q.startswith(PURE_PREFIXES):
        return True
    if q.startswith("torch."):
        return q not in IMPURE_TORCH and not method.endswith("_")
    if method in MUTATING_METHODS or (method.endswith("_") and not method.endswith("__")):
        return False
    recv = func.value
    if isinstance(recv, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return method in STRING_METHODS
    return tensors.kind(recv) in (TENSOR, WEAK) or method in TENSOR_METHODS
