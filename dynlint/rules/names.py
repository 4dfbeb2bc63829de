"""Names of torch APIs the analysis and the rules match on (fully qualified, however imported)."""

COMPILE = frozenset({"torch.compile", "torch._dynamo.optimize"})
DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo",
                     "torch._dynamo.eval_frame.disable"})
# Functions Dynamo treats as one opaque op: their bodies are not traced.
OPAQUE = frozenset({"torch.library.custom_op", "torch.library.register_fake", "torch.library.impl",
                    "torch._dynamo.allow_in_graph", "torch.compiler.allow_in_graph", "torch.jit.script",
                    "torch._library.custom_ops.custom_op"})
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
MODULE_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"})


def strip_call(dotted: str) -> str:
    return dotted[:-2] if dotted.endswith("()") else dotted


def is_module_base(dotted: str) -> bool:
    """torch.nn.Module itself, or any torch.nn class (torch.nn.Linear, ...) a user class may extend."""
    if dotted in MODULE_BASES:
        return True
    head, _, last = dotted.rpartition(".")
    return head.startswith("torch.nn") and last[:1].isupper() and not head.startswith("torch.nn.parameter")
