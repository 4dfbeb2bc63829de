"""llama-style decoding with a KV cache object: prefill, then one token per step."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelArgs:
    dim: int = 64
    n_heads: int = 4
    n_layers: int = 2
    vocab_size: int = 128
    max_seq_len: int = 32
    max_batch_size: int = 2
    norm_eps: float = 1e-5


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class KVCache:
    def __init__(self, args, n_layers):
        head_dim = args.dim // args.n_heads
        shape = (args.max_batch_size, args.max_seq_len, args.n_heads, head_dim)
        self.k = [torch.zeros(shape) for _ in range(n_layers)]
        self.v = [torch.zeros(shape) for _ in range(n_layers)]
        self.seen_tokens = 0

    def update(self, layer_idx, start_pos, xk, xv):
        bsz, seqlen = xk.shape[:2]
        self.k[layer_idx][:bsz, start_pos:start_pos + seqlen] = xk
        self.v[layer_idx][:bsz, start_pos:start_pos + seqlen] = xv
        if layer_idx == 0:
            self.seen_tokens += seqlen
        end = self.seen_tokens
        return self.k[layer_idx][:bsz, :end], self.v[layer_idx][:bsz, :end]


class Attention(nn.Module):
    def __init__(self, args, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.n_heads = args.n_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.dim, bias=False)
        self.wk = nn.Linear(args.dim, args.dim, bias=False)
        self.wv = nn.Linear(args.dim, args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)

    def forward(self, x, start_pos, cache, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        keys, values = cache.update(self.layer_idx, start_pos, xk, xv)
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / self.head_dim ** 0.5
        if mask is not None:
            scores = scores + mask
        out = torch.matmul(F.softmax(scores.float(), dim=-1).type_as(xq), values)
        return self.wo(out.transpose(1, 2).contiguous().view(bsz, seqlen, -1))


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([Attention(args, i) for i in range(args.n_layers)])
        self.norms = nn.ModuleList([RMSNorm(args.dim, args.norm_eps) for _ in range(args.n_layers)])
        self.norm = RMSNorm(args.dim, args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens, start_pos, cache):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        mask = None
        if seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
            mask = torch.triu(mask, diagonal=1)
            mask = torch.hstack([torch.zeros((seqlen, start_pos)), mask]).type_as(h)
        for layer, norm in zip(self.layers, self.norms):
            h = h + layer(norm(h), start_pos, cache, mask)
        return self.output(self.norm(h)).float()


@torch.inference_mode()
def generate(forward, args, prompt, max_gen_len=5):
    cache = KVCache(args, args.n_layers)
    logits = forward(prompt, 0, cache)
    next_tok = logits[:, -1].argmax(-1, keepdim=True)
    pos = prompt.shape[1]
    for _ in range(max_gen_len):
        logits = forward(next_tok, pos, cache)
        next_tok = logits[:, -1].argmax(-1, keepdim=True)
        pos += 1
    return cache


def main():
    torch.manual_seed(0)
    args = ModelArgs()
    model = Transformer(args).eval()
    forward = torch.compile(model)
    prompt = torch.randint(0, args.vocab_size, (2, 5))
    cache = generate(forward, args, prompt)
    assert cache.seen_tokens == 10


if __name__ == "__main__":
    main()
