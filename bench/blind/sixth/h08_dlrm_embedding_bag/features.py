"""Synthetic click log and the batching code that turns it into jagged sparse features."""
import random

import torch

SPARSE_FEATURES = ["user_id", "item_id", "category", "hour"]
CARDINALITIES = {"user_id": 500, "item_id": 800, "category": 20, "hour": 24}


def synth_log(n, seed=0):
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        row = {
            "dense": [rng.random() for _ in range(6)],
            "sparse": {f: [rng.randrange(10_000) for _ in range(rng.randint(1, 3))] for f in SPARSE_FEATURES},
            "label": float(rng.random() < 0.3),
        }
        rows.append(row)
    return rows


def collate(rows):
    dense = torch.tensor([r["dense"] for r in rows])
    labels = torch.tensor([r["label"] for r in rows])
    sparse = {}
    for f in SPARSE_FEATURES:
        values, offsets = [], []
        for r in rows:
            offsets.append(len(values))
            values.extend(r["sparse"][f])
        sparse[f] = (torch.tensor(values), torch.tensor(offsets))
    return dense, sparse, labels


def batches(rows, batch_size):
    for i in range(0, len(rows), batch_size):
        yield collate(rows[i:i + batch_size])
