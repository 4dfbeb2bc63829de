"""Text classifier trained on length-bucketed batches with a statically compiled model."""
from __future__ import annotations

import random
from typing import Dict, List, Tuple

import torch
import torch.nn as nn

BUCKETS = (8, 16, 24)


class ConvTextClassifier(nn.Module):
    def __init__(self, vocab: int = 200, dim: int = 32, n_cls: int = 3) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.conv = nn.Conv1d(dim, dim, 3, padding=1)
        self.out = nn.Linear(dim, n_cls)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.conv(self.emb(ids).transpose(1, 2)))
        return self.out(h.amax(dim=-1))


def bucketize(examples: List[Tuple[List[int], int]], batch_size: int) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    by_bucket: Dict[int, List] = {b: [] for b in BUCKETS}
    for toks, label in examples:
        b = next(b for b in BUCKETS if len(toks) <= b)
        by_bucket[b].append((toks, label))
    batches = []
    for b, items in by_bucket.items():
        for i in range(0, len(items), batch_size):
            chunk = items[i:i + batch_size]
            ids = torch.zeros(len(chunk), b, dtype=torch.long)
            for j, (toks, _) in enumerate(chunk):
                ids[j, :len(toks)] = torch.tensor(toks)
            batches.append((ids, torch.tensor([lab for _, lab in chunk])))
    random.shuffle(batches)
    return batches


def main() -> None:
    random.seed(0)
    torch.manual_seed(0)
    examples = [([random.randint(1, 199) for _ in range(random.randint(3, 24))], random.randint(0, 2))
                for _ in range(40)]
    model = ConvTextClassifier()
    cmodel = torch.compile(model, dynamic=False)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(2):
        for ids, y in bucketize(examples, batch_size=8):
            loss = nn.functional.cross_entropy(cmodel(ids), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, round(loss.item(), 4))


if __name__ == "__main__":
    main()
