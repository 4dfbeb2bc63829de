"""Autoregressive decoding for a tiny single-layer attention LM with a preallocated KV cache."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GenerationConfig:
    max_new_tokens: int = 8
    temperature: float = 1.0
    top_k: Optional[int] = None


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 32, max_len: int = 64) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab)
        self.dim = dim
        self.max_len = max_len

    def new_cache(self, batch: int) -> Tuple[torch.Tensor, torch.Tensor]:
        shape = (batch, self.max_len, self.dim)
        return torch.zeros(shape), torch.zeros(shape)

    def forward(self, tokens: torch.Tensor, cache, pos: int) -> torch.Tensor:
        x = self.embed(tokens)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        cache_k, cache_v = cache
        t = tokens.shape[1]
        cache_k[:, pos:pos + t] = k
        cache_v[:, pos:pos + t] = v
        keys = cache_k[:, : pos + t]
        values = cache_v[:, : pos + t]
        scores = (q @ keys.transpose(1, 2)) / math.sqrt(self.dim)
        h = self.proj(scores.softmax(dim=-1) @ values) + x
        return self.head(h[:, -1])


@torch.compile
def sample_next(logits: torch.Tensor, temperature: float, top_k: Optional[int]) -> torch.Tensor:
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = F.softmax(logits, dim=-1)
    return torch.multinomial(probs, num_samples=1)


def generate(step_fn, model: TinyLM, prompt: torch.Tensor, cfg: GenerationConfig) -> torch.Tensor:
    cache = model.new_cache(prompt.shape[0])
    logits = step_fn(prompt, cache, 0)
    out = [prompt]
    pos = prompt.shape[1]
    for _ in range(cfg.max_new_tokens):
        nxt = sample_next(logits, cfg.temperature, cfg.top_k)
        out.append(nxt)
        logits = step_fn(nxt, cache, pos)
        pos += 1
    return torch.cat(out, dim=1)


def main() -> None:
    torch.manual_seed(0)
    model = TinyLM().eval()
    step_fn = torch.compile(model)
    prompt = torch.randint(0, 64, (2, 5))
    configs = [
        GenerationConfig(),
        GenerationConfig(temperature=0.7, top_k=8),
        GenerationConfig(temperature=1.3, top_k=4),
    ]
    with torch.no_grad():
        for cfg in configs:
            seq = generate(step_fn, model, prompt, cfg)
            print(cfg, tuple(seq.shape))


if __name__ == "__main__":
    main()
