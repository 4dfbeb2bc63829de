"""gpt-fast style decoding with a preallocated KV cache and a compiled single-token step.

The cache is a fixed-size buffer written with ``index_copy_`` and the position
is passed as a tensor, so the decode step keeps the same shapes every token.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelArgs:
    vocab_size: int = 64
    dim: int = 32
    n_layers: int = 2
    n_heads: int = 4
    max_seq_len: int = 32

    @property
    def head_dim(self):
        return self.dim // self.n_heads


class KVCache(nn.Module):
    def __init__(self, batch, max_seq_len, n_heads, head_dim):
        super().__init__()
        shape = (batch, n_heads, max_seq_len, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape))
        self.register_buffer("v_cache", torch.zeros(shape))

    def update(self, input_pos, k_val, v_val):
        self.k_cache.index_copy_(2, input_pos, k_val)
        self.v_cache.index_copy_(2, input_pos, v_val)
        return self.k_cache, self.v_cache


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.wqkv = nn.Linear(args.dim, 3 * args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)
        self.kv_cache = None

    def forward(self, x, mask, input_pos):
        B, T, _ = x.shape
        q, k, v = self.wqkv(x).split(self.args.dim, dim=-1)
        q, k, v = (t.view(B, T, self.args.n_heads, self.args.head_dim).transpose(1, 2) for t in (q, k, v))
        k, v = self.kv_cache.update(input_pos, k, v)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.wo(y.transpose(1, 2).reshape(B, T, self.args.dim))


class TransformerBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.attn = Attention(args)
        self.norm1 = nn.LayerNorm(args.dim)
        self.norm2 = nn.LayerNorm(args.dim)
        self.ff = nn.Sequential(nn.Linear(args.dim, 4 * args.dim), nn.SiLU(), nn.Linear(4 * args.dim, args.dim))

    def forward(self, x, mask, input_pos):
        x = x + self.attn(self.norm1(x), mask, input_pos)
        return x + self.ff(self.norm2(x))


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.pos_embeddings = nn.Embedding(args.max_seq_len, args.dim)
        self.layers = nn.ModuleList(TransformerBlock(args) for _ in range(args.n_layers))
        self.norm = nn.LayerNorm(args.dim)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        self.register_buffer("causal_mask", torch.tril(torch.ones(args.max_seq_len, args.max_seq_len, dtype=torch.bool)))

    def setup_caches(self, batch):
        for layer in self.layers:
            layer.attn.kv_cache = KVCache(batch, self.args.max_seq_len, self.args.n_heads, self.args.head_dim)

    def forward(self, idx, input_pos):
        mask = self.causal_mask[None, None, input_pos]
        x = self.tok_embeddings(idx) + self.pos_embeddings(input_pos)
        for layer in self.layers:
            x = layer(x, mask, input_pos)
        return self.output(self.norm(x))


def sample(logits, temperature):
    probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
    q = torch.empty_like(probs).exponential_(1)
    return torch.argmax(probs / q, dim=-1, keepdim=True)


def prefill(model, idx, input_pos, temperature):
    return sample(model(idx, input_pos), temperature)


def decode_one_token(model, cur_token, input_pos, temperature):
    return sample(model(cur_token, input_pos), temperature)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, decode_fn, temperature):
    B, T = prompt.shape
    model.setup_caches(B)
    next_token = prefill(model, prompt, torch.arange(T), temperature)
    tokens = [next_token]
    input_pos = torch.tensor([T])
    for _ in range(max_new_tokens - 1):
        next_token = decode_fn(model, next_token, input_pos, temperature)
        input_pos += 1
        tokens.append(next_token)
    return torch.cat([prompt] + tokens, dim=1)


def main():
    torch.manual_seed(0)
    model = Transformer(ModelArgs()).eval()
    decode_fn = torch.compile(decode_one_token)
    temperature = torch.tensor(0.8)
    for prompt in (torch.randint(0, 64, (2, 5)), torch.randint(0, 64, (2, 9))):
        out = generate(model, prompt, max_new_tokens=6, decode_fn=decode_fn, temperature=temperature)
        print(out.tolist()[0])


if __name__ == "__main__":
    main()
