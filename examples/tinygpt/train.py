"""Training: the step is compiled; the loop around it is ordinary Python and is left alone."""
import copy

import torch
import torch.nn.functional as F

from tinygpt.model import GPTConfig, TinyGPT


def loss_fn(logits, targets):
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
    scale = loss.detach().item()            # a host sync inside the compiled step
    return loss / max(scale, 1.0)


@torch.compile
def train_step(model, tokens, targets):
    logits = model(tokens)
    return loss_fn(logits, targets)


def make_ema(model):
    return copy.deepcopy(model)             # outside compiled code: fine


def train(steps=3):
    model = TinyGPT(GPTConfig())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(steps):
        tokens = torch.randint(0, 256, (4, 32))
        loss = train_step(model, tokens, tokens.roll(-1, 1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"step {step}: loss {loss.item():.3f}")   # logging in the loop: not compiled, fine
    return model
