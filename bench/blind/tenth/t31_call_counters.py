"""Adaptive-computation module that counts its own calls and a trainer closure that counts optimizer steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScheduledSampler(nn.Module):
    """Seq2seq decoder step mixing teacher forcing and own predictions with a call-count-based schedule."""

    def __init__(self, vocab=40, dim=32, k=5.0, log_every=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)
        self.k = k
        self.log_every = log_every
        self.num_calls = 0
        self.history = []

    def teacher_forcing_ratio(self):
        return self.k / (self.k + torch.exp(torch.tensor(self.num_calls / self.k)))

    def forward(self, h, gold_prev, pred_prev):
        self.num_calls += 1
        ratio = self.teacher_forcing_ratio()
        use_gold = torch.rand(gold_prev.shape[0]) < ratio
        prev = torch.where(use_gold, gold_prev, pred_prev)
        h = self.cell(self.embed(prev), h)
        logits = self.out(h)
        if self.num_calls % self.log_every == 0:
            self.history.append(ratio.detach())
        return h, logits


def make_train_step(model, opt, clip=1.0):
    steps = 0

    def train_step(h0, gold):
        nonlocal steps
        steps += 1
        h, pred = h0, gold[:, 0]
        loss = 0.0
        for t in range(1, gold.shape[1]):
            h, logits = model(h, gold[:, t - 1], pred)
            pred = logits.argmax(-1)
            loss = loss + F.cross_entropy(logits, gold[:, t])
        warm = min(1.0, steps / 4)
        return loss * warm / (gold.shape[1] - 1)

    return train_step


def main():
    torch.manual_seed(0)
    model = ScheduledSampler()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step_fn = torch.compile(make_train_step(model, opt))
    cell_fn = torch.compile(model)
    for _ in range(3):
        gold = torch.randint(0, 40, (4, 4))
        loss = step_fn(torch.zeros(4, 32), gold)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        h = torch.zeros(2, 32)
        tok = torch.zeros(2, dtype=torch.long)
        for _ in range(4):
            h, logits = cell_fn(h, tok, tok)
            tok = logits.argmax(-1)


if __name__ == "__main__":
    main()
