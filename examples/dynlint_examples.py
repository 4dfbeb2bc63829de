"""Example inputs for `dynlint check --verify`: each factory returns (callable, [argument tuples])."""
import torch

import dynlint
from tinygpt.layers import RMSNorm, apply_rope, bias_gelu
from tinygpt.model import GPTConfig, TinyGPT


@dynlint.example
def tinygpt_forward():
    torch.manual_seed(0)
    model = TinyGPT(GPTConfig()).eval()
    tokens = torch.randint(0, 256, (2, 16))
    return model, [(tokens,), (tokens,)]


@dynlint.example
def tinygpt_moe():
    torch.manual_seed(0)
    model = TinyGPT(GPTConfig(experts=4, layers=1)).eval()
    return model, [(torch.randint(0, 256, (2, 16)),)]


@dynlint.example
def rmsnorm_batches():
    """Pointwise-heavy and compile-clean; batch 8 then 16 exercises a shape recompile."""
    torch.manual_seed(0)
    norm = RMSNorm(256)
    return norm, [(torch.randn(8, 128, 256),), (torch.randn(16, 128, 256),)]


@dynlint.example
def pointwise_gelu(device="cpu"):
    """Pointwise-heavy: where compiling pays most (one fused kernel instead of nine)."""
    n = 8192 if device.startswith("cuda") else 1024
    torch.manual_seed(0)
    x = torch.randn(n, n, device=device)
    bias = torch.randn(n, device=device)
    return bias_gelu, [(x, bias)]


@dynlint.example(training=True)
def mlp_training():
    """Timed as training compiles it: each call is a step (forward, loss, backward, AdamW step)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(RMSNorm(256), torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                torch.nn.Linear(1024, 256))
    x = torch.randn(16, 64, 256)
    return {"fn": model, "inputs": [(x,), (x,)], "optimizer": lambda params: torch.optim.AdamW(params, lr=1e-3)}


@dynlint.example
def rope():
    q, k = torch.randn(2, 4, 16, 16), torch.randn(2, 4, 16, 16)
    cos, sin = torch.randn(16, 16), torch.randn(16, 16)
    return apply_rope, [(q, k, cos, sin)]


@dynlint.example
def train_step_example():
    """The compiled training step (already decorated with torch.compile in train.py)."""
    from tinygpt.train import train_step

    torch.manual_seed(0)
    model = TinyGPT(GPTConfig(layers=1))
    tokens = torch.randint(0, 256, (2, 16))
    return train_step, [(model, tokens, tokens.roll(-1, 1)), (model, tokens.flip(0), tokens.roll(-2, 1))]
