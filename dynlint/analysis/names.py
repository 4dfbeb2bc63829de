"""Names of torch APIs the analysis and the rules match on (fully qualified, however imported)."""

COMPILE = frozenset({"torch.compile", "torch._dynamo.optimize"})
# what a break finding's message says when the break makes Dynamo run the whole function eagerly (a break in a
# loop, a `try` or a `with` block; an untraceable module or context manager): analysis/frames.py reads it
SKIPS_FRAME = "skips the whole function"
DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo",
                     "torch._dynamo.eval_frame.disable"})
# Functions Dynamo treats as one opaque op: their bodies are not traced. (Not `torch.jit.script`: Dynamo traces
# a scripted function's Python source, and breaks inside it.)
OPAQUE = frozenset({"torch.library.custom_op", "torch.library.register_fake", "torch.library.impl",
                    "torch._dynamo.allow_in_graph", "torch.compiler.allow_in_graph",
                    "torch._library.custom_ops.custom_op"})
# Calls that tell whether the code runs under Dynamo (true while tracing) or under another tracer (false).
COMPILING_TRUE = frozenset({"torch.compiler.is_compiling", "torch._dynamo.is_compiling",
                            "torch.compiler.is_dynamo_compiling", "torch._utils.is_compiling"})
COMPILING_FALSE = frozenset({"torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state",
                             "torch.fx._symbolic_trace.is_fx_tracing"})
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def strip_call(dotted: str) -> str:
    return dotted[:-2] if dotted.endswith("()") else dotted


def is_module_base(dotted: str) -> bool:
    """torch.nn.Module itself, or any torch.nn class (torch.nn.Linear, ...) a user class may extend."""
    if dotted in MODULE_BASES:
        return True
    head, _, last = dotted.rpartition(".")
    return head.startswith("torch.nn") and last[:1].isupper() and not head.startswith("torch.nn.parameter")
