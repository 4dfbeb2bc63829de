"""What the tensor analysis knows of torch's API (and of the Python builtins around it): hand-written tables,
pure data, no logic.

Organised by the question each table answers, so that the torch ones could later be generated from torch's own
signatures (`torch._C._VariableFunctions`, `Tensor` methods, `torch.nn.functional`): what a function or method
returns (a tensor, a Python value, something else), of which dtype (floating, boolean, its input's, its `dtype=`),
and of which shape (a 0-d tensor). The others are not torch's to say: the Python builtins, the annotations that
name tensors, and the names only tensors have (evidence that a value is one).
"""
from __future__ import annotations

import libcst as cst

# ---- what torch functions, methods and attributes return: a tensor or a Python value
# Tensor attributes that are not tensors.
VALUE_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "is_sparse", "is_quantized", "is_meta",
                         "requires_grad", "layout", "names", "is_leaf", "training", "grad_fn", "itemsize",
                         "nbytes", "is_mps", "is_cpu", "is_nested"})
# Tensor methods that return Python values (not tensors).
VALUE_METHODS = frozenset({"size", "dim", "numel", "nelement", "ndimension", "item", "tolist", "is_contiguous",
                           "is_floating_point", "is_complex", "data_ptr", "element_size", "stride", "get_device",
                           "storage_offset", "type", "untyped_storage", "is_pinned", "is_shared",
                           "is_set_to", "numpy", "__len__", "has_names", "is_signed", "is_inference",
                           "equal", "allclose", "is_nonzero", "is_same_size", "dim_order"})
# Methods that exist on tensors and hardly anything else, so they are evidence that a WEAK value is a tensor.
TENSOR_METHODS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "any", "all", "norm", "abs", "argmax", "argmin", "std", "var",
    "prod", "cumsum", "exp", "log", "sqrt", "pow", "sigmoid", "softmax", "relu", "tanh", "float", "half",
    "double", "int", "long", "bool", "to", "cpu", "cuda", "detach", "clone", "view", "reshape", "permute",
    "transpose", "contiguous", "unsqueeze", "squeeze", "expand", "flatten", "matmul", "masked_fill", "eq",
    "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "nonzero", "count_nonzero", "logical_and",
    "logical_or", "logical_not", "gather", "index_select", "chunk", "split", "narrow", "type_as", "new_zeros",
    "new_ones", "new_full", "new_empty", "new_tensor", "repeat", "clamp", "clip", "round", "floor", "ceil",
    "mul", "add", "sub", "div", "neg", "sign", "topk", "sort", "argsort", "unique", "masked_select", "where",
    "bmm", "mm", "softplus", "exp_", "add_", "mul_", "zero_", "fill_", "copy_", "bernoulli", "allclose",
    "equal", "isclose", "square", "rsqrt", "reciprocal", "item", "tolist", "numpy", "diff", "roll", "flip",
})
# torch.* callables that do not return tensors.
TORCH_VALUE_FUNCS = frozenset({
    "torch.is_tensor", "torch.is_floating_point", "torch.is_complex", "torch.is_grad_enabled", "torch.numel",
    "torch.get_default_dtype", "torch.finfo", "torch.iinfo", "torch.Size", "torch.device", "torch.dtype",
    "torch.is_autocast_enabled", "torch.is_inference_mode_enabled", "torch.compiler.is_compiling",
    "torch._dynamo.is_compiling", "torch.jit.is_scripting", "torch.jit.is_tracing", "torch.is_nonzero",
    "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.current_device", "torch.equal",
    "torch.are_deterministic_algorithms_enabled", "torch.get_num_threads", "torch.is_storage",
    "torch.backends.mps.is_available", "torch.cuda.get_device_name", "torch.cuda.get_device_capability",
    "torch.compiler.is_dynamo_compiling", "torch.fx._symbolic_trace.is_fx_tracing", "torch.allclose",
    "torch.result_type", "torch.promote_types", "torch.can_cast", "torch.broadcast_shapes", "torch.typename",
    "torch.get_default_device", "torch.is_autocast_cpu_enabled", "torch.get_autocast_gpu_dtype",
    "torch.get_autocast_dtype", "torch.is_anomaly_enabled", "torch.is_same_size", "torch.is_warn_always_enabled",
    "torch.is_deterministic_algorithms_warn_only_enabled", "torch.get_float32_matmul_precision",
    "torch.is_inference", "torch.is_conj", "torch.is_neg", "torch.is_signed", "torch.get_num_interop_threads",
})
# torch namespaces whose functions return tensors (top-level lowercase torch.<fn> do too, unless listed above)
TORCH_TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.",
                           "torch.sparse.", "torch.nested.", "torch.ops.", "torch.masked.")
TORCH_TENSOR_PREFIXES = TORCH_TENSOR_NAMESPACES + ("torch.functional.",)
TORCH_TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor",
                                  "torch.IntTensor", "torch.DoubleTensor", "torch.HalfTensor"})
# top-level torch callables that return neither tensors nor plain values (contexts, modules, generators...)
TORCH_OTHER_FUNCS = frozenset({
    "torch.compile", "torch.autocast", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
    "torch.set_grad_enabled", "torch.manual_seed", "torch.seed", "torch.initial_seed", "torch.load", "torch.save",
    "torch.use_deterministic_algorithms", "torch.set_default_dtype", "torch.set_default_device",
    "torch.set_printoptions", "torch.set_num_threads", "torch.set_float32_matmul_precision", "torch.device",
    "torch.get_rng_state", "torch.set_rng_state", "torch.vmap", "torch.cond", "torch.export",
})
VALUE_BUILTINS = frozenset({"len", "int", "float", "bool", "str", "isinstance", "hasattr", "range", "tuple",
                            "list", "dict", "set", "type", "id", "hash", "repr", "callable", "enumerate", "zip",
                            "sorted", "reversed", "print", "round", "math.sqrt", "math.ceil", "math.floor",
                            "math.log", "math.prod", "math.pi", "math.exp", "math.isclose", "divmod", "format"})
# torch.nn layers with parameters; a subclass's `self.weight` / `self.bias` are tensors
PARAMETRISED_LAYERS = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "SyncBatchNorm", "PReLU", "MultiheadAttention",
})
INHERITED_PARAMS = ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias")
TENSOR_CTORS = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
# torch arithmetic that Dynamo folds to a constant when its operands are Python numbers known while tracing
# (`torch.div(seq_len, w, rounding_mode="trunc")` on static sizes: no tensor, no break) but traces as a tensor
# when they are dynamic sizes: not known to be a tensor either way.
SCALAR_MATH = frozenset(f"torch.{n}" for n in ("div", "floor_divide", "true_divide", "remainder", "fmod", "mul",
                                                "add", "sub", "pow"))
# NumPy draws Dynamo traces as torch random ops (torch._numpy.random): draw -> index of its `size` parameter. With
# a size the draw is an array, which Dynamo holds as a tensor (so its `.item()` is a host read); without, a scalar.
NP_TRACED_DRAWS = {"rand": 0, "randn": 0, "random": 0, "random_sample": 0, "sample": 0, "uniform": 2,
                   "normal": 2, "randint": 2}


# ---- names only tensors have: a value used with one is a tensor (or, for TENSOR_METHODS, probably one)
# Attribute and method names that only tensors (or NumPy arrays, which Dynamo traces as tensors) have:
# a parameter used with one of them is a tensor. Stricter than TENSOR_METHODS (no `split`, `sort`, `to`).
EVIDENCE_ATTRS = frozenset({"shape", "ndim", "is_cuda", "mT", "grad", "requires_grad", "is_leaf", "grad_fn"})
EVIDENCE_METHODS = frozenset({
    "size", "dim", "numel", "view", "reshape", "permute", "transpose", "unsqueeze", "squeeze", "contiguous",
    "detach", "softmax", "log_softmax", "matmul", "masked_fill", "masked_fill_", "relu", "sigmoid", "argmax",
    "argmin", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "type_as", "expand", "expand_as",
    "long", "bool", "mul_", "add_", "sub_", "div_", "zero_", "fill_", "copy_", "clamp", "clamp_", "norm",
    "topk", "cumsum", "flatten", "unflatten", "narrow", "gather", "scatter", "index_select", "masked_select",
    "nonzero", "isnan", "isinf", "isfinite", "logical_not", "numpy", "tolist", "item", "any", "all", "sum",
    "mean", "amax", "amin", "std", "var", "exp", "abs", "sqrt", "rsqrt", "pow",
})

# ---- booleans and 0-d tensors
# Boolean-tensor producers (masks).
BOOL_TORCH_FUNCS = frozenset({"torch.isnan", "torch.isinf", "torch.isfinite", "torch.isposinf", "torch.isneginf",
                              "torch.logical_and", "torch.logical_or", "torch.logical_not", "torch.logical_xor",
                              "torch.eq", "torch.ne", "torch.gt", "torch.lt", "torch.ge", "torch.le",
                              "torch.greater", "torch.less", "torch.isin", "torch.isclose", "torch.isreal",
                              "torch.signbit"})
BOOL_METHODS = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_and", "logical_or",
                          "logical_not", "logical_xor", "eq", "ne", "gt", "lt", "ge", "le", "greater", "less",
                          "bool", "isclose", "signbit"})
BOOL_CREATORS = frozenset({"zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like",
                           "rand_like", "tensor", "as_tensor"})
# Methods that rearrange or copy a tensor's elements and keep their dtype: a mask stays a mask.
LAYOUT_METHODS = frozenset({"clone", "detach", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze",
                            "expand", "expand_as", "t", "transpose", "permute"})
# Reductions that give a 0-d tensor when called without a dim; casts that keep a 0-d tensor 0-d.
FULL_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "norm",
                             "count_nonzero", "std", "var", "median", "nansum", "nanmean"})
SCALAR_PRESERVING = frozenset({"long", "int", "float", "double", "half", "to", "clone", "detach", "abs", "round",
                               "floor", "ceil", "clamp", "clamp_min", "clamp_max", "sqrt", "exp", "log", "neg",
                               "cpu", "cuda", "squeeze", "type_as"})

# ---- Python builtins and annotations
# builtins that return containers: their elements can be anything
CONTAINER_BUILTINS = frozenset({"enumerate", "zip", "sorted", "reversed", "list", "tuple", "dict", "set", "map",
                                "filter", "iter"})
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "Tensor", "torch.FloatTensor", "torch.LongTensor",
                                "torch.BoolTensor", "torch.nn.Parameter"})
VALUE_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes", "torch.dtype", "torch.device",
                               "torch.Size", "list", "dict", "tuple", "List", "Dict", "Tuple", "typing.List",
                               "Sequence", "typing.Sequence", "Callable"})

# ---- floating point: which values are floating-point tensors (`Tensors.floating`). Every entry below is checked
# against torch in tests/test_fixes.py (`test_float_*`, `test_dtype_*`), for integer, boolean and float inputs.
FLOAT_DTYPES = frozenset({"torch.float", "torch.float32", "torch.float16", "torch.half", "torch.float64",
                          "torch.double", "torch.bfloat16", "float"})     # `float` as a dtype is float64
_PROMOTING = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
              "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "sigmoid", "erf", "erfc",
              "reciprocal", "logsumexp")
_FLOAT_ONLY = ("softmax", "log_softmax", "mean", "nanmean", "std", "var", "norm")
# Functions whose result is floating point whatever the input: an integer or boolean input is promoted to the
# default float dtype (`torch.exp(torch.arange(3))` is float32) or rejected (`torch.softmax`, `torch.mean`,
# `F.gelu`, `F.mse_loss` raise for one).
FLOAT_RESULT_FUNCS = frozenset(
    [f"torch.{n}" for n in _PROMOTING + _FLOAT_ONLY + ("true_divide", "rand_like", "randn_like")] +
    [f"torch.nn.functional.{n}" for n in ("softmax", "log_softmax", "gelu", "silu", "softplus", "elu", "selu",
                                          "mish", "sigmoid", "tanh", "logsigmoid", "leaky_relu", "normalize",
                                          "layer_norm", "rms_norm", "cosine_similarity", "cross_entropy",
                                          "nll_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "kl_div",
                                          "binary_cross_entropy", "binary_cross_entropy_with_logits")] +
    ["torch.special.expit"])          # not `l1_loss`: with reduction="none" it keeps an integer dtype
FLOAT_RESULT_METHODS = frozenset(_PROMOTING + _FLOAT_ONLY + ("float", "half", "double", "bfloat16"))
INTEGER_DTYPES = frozenset(f"torch.{n}" for n in ("long", "int", "int64", "int32", "int16", "int8", "uint8",
                                                   "short"))
# Factories that, without `dtype=`, make tensors of the default dtype (floating: torch.set_default_dtype takes
# nothing else). Not `torch.full` (its fill value decides: `torch.full((3,), 1)` is int64), `torch.arange`,
# `torch.tensor` (int64 for integers; see `float_data`).
FLOAT_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "empty", "rand", "randn", "linspace",
                                                    "logspace", "eye"))
# Calls whose `dtype=` is the dtype of their result.
DTYPE_ARG_FUNCS = frozenset(f"torch.{n}" for n in (
    "zeros", "ones", "empty", "full", "rand", "randn", "arange", "linspace", "logspace", "eye", "tensor",
    "as_tensor", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "sum", "cumsum",
    "prod", "mean", "softmax", "log_softmax")) | {"torch.nn.functional.softmax", "torch.nn.functional.log_softmax"}
DTYPE_ARG_METHODS = frozenset({"sum", "cumsum", "prod", "mean", "softmax", "log_softmax", "new_zeros", "new_ones",
                               "new_empty", "new_full", "new_tensor"})
# Functions (of their first argument) and methods whose result has their input's dtype.
DTYPE_KEEPING_FUNCS = frozenset(f"torch.{n}" for n in (
    "abs", "neg", "relu", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "square", "sum", "cumsum",
    "amax", "amin", "flip", "roll", "squeeze", "unsqueeze", "reshape", "flatten", "transpose", "permute",
    "zeros_like", "ones_like", "empty_like", "full_like")) | \
    {"torch.nn.functional.relu", "torch.nn.functional.pad", "torch.nn.functional.dropout"}
DTYPE_KEEPING_METHODS = frozenset({
    "detach", "clone", "contiguous", "abs", "neg", "relu", "square", "nan_to_num", "clamp", "clip", "clamp_min",
    "clamp_max", "sum", "cumsum", "amax", "amin", "max", "min", "squeeze", "unsqueeze", "reshape", "view",
    "flatten", "expand", "permute", "transpose", "t", "cpu", "flip", "roll", "masked_fill", "new_zeros",
    "new_ones", "new_empty", "new_full", "new_tensor"})
# The keywords of `Tensor.to(...)` besides `dtype=`: given only these (and a device), it keeps the dtype.
DEVICE_ONLY_KEYWORDS = ("device", "non_blocking", "copy", "memory_format")
# Functions joining a list of tensors: promoted to the highest dtype category, so one floating input makes the
# result floating.
CONCAT_FUNCS = frozenset(f"torch.{n}" for n in ("cat", "concat", "concatenate", "stack", "hstack", "vstack"))
# Arithmetic: a floating tensor on either side gives a floating tensor (or an error), whatever the other side.
FLOAT_ARITH = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
               cst.MatrixMultiply)
