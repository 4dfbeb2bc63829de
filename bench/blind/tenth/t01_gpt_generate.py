"""minGPT-style autoregressive sampling: temperature / top-k vary per request."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size=97, block_size=32, n_layer=2, n_head=4, n_embd=32):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def sample_next(model, idx, temperature=1.0, top_k=None, do_sample=True):
    idx_cond = idx if idx.size(1) <= model.block_size else idx[:, -model.block_size:]
    logits = model(idx_cond)
    logits = logits[:, -1, :] / temperature
    if top_k is not None:
        v, _ = torch.topk(logits, top_k)
        logits[logits < v[:, [-1]]] = -float("Inf")
    probs = F.softmax(logits, dim=-1)
    if do_sample:
        idx_next = torch.multinomial(probs, num_samples=1)
    else:
        _, idx_next = torch.topk(probs, k=1, dim=-1)
    return idx_next


@torch.no_grad()
def generate(step_fn, model, idx, max_new_tokens, **sampling):
    for _ in range(max_new_tokens):
        idx_next = step_fn(model, idx, **sampling)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def main():
    torch.manual_seed(0)
    model = GPT().eval()
    step_fn = torch.compile(sample_next)
    prompt = torch.randint(0, 97, (2, 4))
    requests = [
        dict(temperature=1.0, top_k=None, do_sample=True),
        dict(temperature=0.8, top_k=10, do_sample=True),
        dict(temperature=1.0, top_k=5, do_sample=False),
        dict(temperature=0.7, top_k=20, do_sample=True),
    ]
    for req in requests:
        out = generate(step_fn, model, prompt, max_new_tokens=3, **req)
        assert out.shape == (2, 7)


if __name__ == "__main__":
    main()
