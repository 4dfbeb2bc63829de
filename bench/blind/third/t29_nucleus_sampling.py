"""Autoregressive sampling utilities: temperature, top-k and top-p (nucleus) filtering, repetition penalty."""
import torch
import torch.nn as nn


def top_k_top_p_filtering(logits, top_k=0, top_p=1.0, min_tokens_to_keep=1):
    if top_k > 0:
        top_k = min(max(top_k, min_tokens_to_keep), logits.size(-1))
        kth = torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, sorted_idx = torch.sort(logits, descending=True)
        cum_probs = sorted_logits.softmax(-1).cumsum(-1)
        remove = cum_probs > top_p
        remove[..., :min_tokens_to_keep] = False
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        mask = remove.scatter(-1, sorted_idx, remove)
        logits = logits.masked_fill(mask, float("-inf"))
    return logits


def apply_repetition_penalty(logits, prev_tokens, penalty):
    score = torch.gather(logits, 1, prev_tokens)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return logits.scatter(1, prev_tokens, score)


@torch.compile(backend="eager")
def sample_next(logits, prev_tokens, temperature=1.0, top_k=0, top_p=1.0, repetition_penalty=1.0):
    if repetition_penalty != 1.0:
        logits = apply_repetition_penalty(logits, prev_tokens, repetition_penalty)
    logits = logits / max(temperature, 1e-5)
    logits = top_k_top_p_filtering(logits, top_k=top_k, top_p=top_p)
    probs = logits.softmax(-1)
    return torch.multinomial(probs, num_samples=1)


class CharRNN(nn.Module):
    def __init__(self, vocab=30, dim=24):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, x, h=None):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y[:, -1]), h


def generate(model, prompt, steps, **sampling):
    tokens = prompt
    logits, h = model(prompt)
    for _ in range(steps):
        nxt = sample_next(logits, tokens, **sampling)
        tokens = torch.cat([tokens, nxt], dim=1)
        logits, h = model(nxt, h)
    return tokens


def main():
    torch.manual_seed(0)
    model = CharRNN().eval()
    prompt = torch.randint(0, 30, (2, 4))
    with torch.no_grad():
        generate(model, prompt, 3, temperature=0.8, top_p=0.9)
        generate(model, prompt, 3, temperature=1.0, top_k=5, repetition_penalty=1.2)
