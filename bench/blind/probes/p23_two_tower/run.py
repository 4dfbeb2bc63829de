"""Training with a temperature schedule, then top-k retrieval with a compiled retrieve() helper."""
import torch

from .towers import TwoTower


@torch.compile
def retrieve(model, q_ids, item_ids, item_names, k=3):
    q = model.query_tower(q_ids)
    items = model.item_tower(item_ids)
    scores = q @ items.t()
    top_scores, top_idx = scores.topk(k, dim=-1)
    results = []
    for row_scores, row_idx in zip(top_scores, top_idx):
        results.append([(item_names[i], s) for i, s in zip(row_idx.tolist(), row_scores)])
    return results


def main():
    torch.manual_seed(0)
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_step = torch.compile(model)
    for epoch, temp in enumerate((0.1, 0.07, 0.05)):
        model.temperature = temp
        q = torch.randint(1, 200, (8, 5))
        i = torch.randint(1, 200, (8, 4))
        freq = torch.rand(8) + 0.1 if epoch > 0 else None
        loss = train_step(q, i, freq)
        opt.zero_grad()
        loss.backward()
        opt.step()
    names = [f"item{j}" for j in range(20)]
    with torch.no_grad():
        for _ in range(2):
            res = retrieve(model, torch.randint(1, 200, (2, 5)), torch.randint(1, 200, (20, 4)), names)
    return res[0][0][0]
