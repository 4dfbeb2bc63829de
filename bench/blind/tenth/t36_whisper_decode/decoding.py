from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


@dataclass(frozen=True)
class DecodingOptions:
    temperature: float = 0.0
    sample_len: int = 6
    without_timestamps: bool = False
    suppress_blank: bool = True
    max_initial_timestamp: Optional[float] = 1.0


class TextDecoder(nn.Module):
    def __init__(self, n_vocab=60, n_ctx=32, n_state=32, n_audio=16):
        super().__init__()
        self.token_embedding = nn.Embedding(n_vocab, n_state)
        self.positional_embedding = nn.Parameter(torch.randn(n_ctx, n_state) * 0.02)
        self.query = nn.Linear(n_state, n_state)
        self.key = nn.Linear(n_state, n_state, bias=False)
        self.value = nn.Linear(n_state, n_state)
        self.cross = nn.MultiheadAttention(n_state, 4, batch_first=True, kdim=n_audio, vdim=n_audio)
        self.ln = nn.LayerNorm(n_state)

    def forward(self, x, xa, kv_cache=None):
        offset = next(iter(kv_cache.values())).shape[1] if kv_cache else 0
        h = self.token_embedding(x) + self.positional_embedding[offset: offset + x.shape[-1]]
        k, v = self.key(h), self.value(h)
        if kv_cache is not None:
            if "k" in kv_cache:
                k = torch.cat([kv_cache["k"], k], dim=1)
                v = torch.cat([kv_cache["v"], v], dim=1)
            kv_cache["k"], kv_cache["v"] = k.detach(), v.detach()
        q = self.query(h)
        att = (q @ k.transpose(1, 2)) / q.shape[-1] ** 0.5
        if x.shape[-1] > 1:
            n = x.shape[-1]
            causal = torch.full((n, k.shape[1]), float("-inf")).triu(k.shape[1] - n + 1)
            att = att + causal
        h = h + att.softmax(-1) @ v
        h = h + self.cross(h, xa, xa, need_weights=False)[0]
        return self.ln(h) @ self.token_embedding.weight.T


class GreedyDecoder:
    def __init__(self, temperature, eot):
        self.temperature = temperature
        self.eot = eot

    def update(self, tokens, logits, sum_logprobs):
        if self.temperature == 0:
            next_tokens = logits.argmax(dim=-1)
        else:
            next_tokens = Categorical(logits=logits / self.temperature).sample()
        logprobs = F.log_softmax(logits.float(), dim=-1)
        current_logprobs = logprobs[torch.arange(logprobs.shape[0]), next_tokens]
        sum_logprobs += current_logprobs * (tokens[:, -1] != self.eot)
        next_tokens[tokens[:, -1] == self.eot] = self.eot
        tokens = torch.cat([tokens, next_tokens[:, None]], dim=-1)
        completed = (tokens[:, -1] == self.eot).all()
        return tokens, completed
