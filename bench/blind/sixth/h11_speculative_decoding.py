"""Greedy speculative decoding: a tiny draft LM proposes, a bigger LM verifies."""
import torch
import torch.nn as nn

VOCAB = 40
EOS = 0


class TinyLM(nn.Module):
    def __init__(self, dim, layers, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, 2, dim * 2, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, ids):
        T = ids.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        x = self.tok(ids) + self.pos(torch.arange(T))
        return self.out(self.blocks(x, mask=mask))


class SpeculativeDecoder:
    def __init__(self, draft, target, k=4):
        self.draft, self.target = draft, target
        self.k = k
        self.accepted, self.proposed = 0, 0

    @torch.compile
    def propose(self, ids, k):
        for _ in range(k):
            nxt = self.draft(ids)[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], dim=1)
        return ids

    @torch.compile
    def verify(self, ids, n_prompt, k):
        logits = self.target(ids)
        pred = logits[:, n_prompt - 1:-1].argmax(-1)
        drafted = ids[:, n_prompt:]
        match = (pred == drafted).long().cumprod(-1)
        n_ok = int(match.sum())
        fix = pred[:, n_ok:n_ok + 1]
        return torch.cat([ids[:, :n_prompt + n_ok], fix], dim=1), n_ok

    def generate(self, prompt, max_len=24):
        ids = prompt
        while ids.shape[1] < max_len:
            n = ids.shape[1]
            drafted = self.propose(ids, self.k)
            ids, n_ok = self.verify(drafted, n, self.k)
            self.accepted += n_ok
            self.proposed += self.k
            # adapt the draft length to the acceptance rate
            rate = self.accepted / self.proposed
            self.k = max(1, min(6, self.k + (1 if rate > 0.6 else -1)))
            if (ids[:, n:] == EOS).any():
                break
        return ids


def main():
    torch.manual_seed(0)
    draft = TinyLM(16, 1).eval()
    target = TinyLM(32, 2).eval()
    dec = SpeculativeDecoder(draft, target)
    outs = []
    with torch.no_grad():
        for seed in range(2):
            g = torch.Generator().manual_seed(seed)
            prompt = torch.randint(1, VOCAB, (1, 5), generator=g)
            outs.append(dec.generate(prompt))
    return outs, dec.accepted / max(dec.proposed, 1)
