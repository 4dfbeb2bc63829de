"""Pipeline-style gradient accumulation: micro-batches come from a generator; batch dicts gain optional keys."""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F


def micro_batches(batch, chunk):
    n = batch["input_ids"].shape[0]
    for start in range(0, n, chunk):
        yield {k: v[start:start + chunk] for k, v in batch.items()}


class TokenClassifier(nn.Module):
    def __init__(self, vocab=200, dim=32, n_labels=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.enc = nn.GRU(dim, dim, batch_first=True)
        self.proj = nn.Linear(dim, dim)
        self.cls = nn.Linear(dim, n_labels)

    def forward(self, input_ids, attention_mask=None):
        h = self.emb(input_ids)
        if attention_mask is not None:
            h = h * attention_mask[..., None]
        return self.cls(torch.tanh(self.proj(h)))


def accumulate_loss(model, chunks):
    total, n_tokens = 0.0, 0
    for mb in chunks:
        logits = model(mb["input_ids"], mb.get("attention_mask"))
        labels = mb["labels"]
        total = total + F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100, reduction="sum")
        n_tokens += (labels != -100).sum()
    return total / n_tokens


def compute_loss(model, batch):
    logits = model(batch["input_ids"], batch.get("attention_mask"))
    loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
    if "label_weights" in batch:
        loss = loss * batch["label_weights"].mean()
    return loss


def make_batch(b, t, with_mask):
    batch = {"input_ids": torch.randint(0, 200, (b, t)), "labels": torch.randint(0, 5, (b, t))}
    if with_mask:
        batch["attention_mask"] = torch.ones(b, t)
        batch["attention_mask"][:, t - 2:] = 0
        batch["labels"][:, t - 2:] = -100
    return batch


def main():
    torch.manual_seed(0)
    model = TokenClassifier()
    acc_step = torch.compile(accumulate_loss)
    plain_step = torch.compile(compute_loss)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, with_mask in zip(range(3), itertools.cycle([False, True])):
        batch = make_batch(8, 12, with_mask)
        loss = acc_step(model, micro_batches(batch, chunk=4))
        loss.backward()
        opt.step()
        opt.zero_grad()
    for with_mask, weights in [(False, False), (True, False), (True, True)]:
        batch = make_batch(4, 12, with_mask)
        if weights:
            batch["label_weights"] = torch.rand(4)
        plain_step(model, batch).backward()


if __name__ == "__main__":
    main()
