"""Examples for `dynlint check --verify`: each factory returns what to compile and the calls to make."""
import torch

import dynlint
from model import TinyMLP, by_mode, compile_sensitive, data_dependent, pointwise_heavy, print_break, print_in_loop


@dynlint.example
def print_graph_break():
    return print_break, [(torch.randn(8, 8),)]


@dynlint.example
def loop_skips_frame():
    return print_in_loop, [(torch.randn(4),)]


@dynlint.example
def data_dependent_branch():
    return data_dependent, [(torch.ones(16),)]


@dynlint.example(name="string_argument_recompiles")
def mode_strings():
    x = torch.randn(4)
    return by_mode, [(x, "a"), (x, "bb")]


@dynlint.example
def pointwise():
    # Batch 128, then 256: Dynamo recompiles once for the new size, then goes dynamic (expected: no DYN902).
    return pointwise_heavy, [(torch.randn(128, 1024),), (torch.randn(256, 1024),)]


@dynlint.example
def compiled_differs():
    return compile_sensitive, [(torch.randn(4),)]


@dynlint.example(rtol=1e-3, atol=1e-4)
def mlp(device="cpu"):
    # The dict form, and a factory that places its tensors itself.
    return {"fn": TinyMLP().to(device), "inputs": [(torch.randn(16, 32, device=device),)]}
