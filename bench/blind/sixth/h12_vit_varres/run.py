import torch
import torch.nn.functional as F

from .vit import ViT

# progressive resizing: train small first, finish at full resolution
RESOLUTION_SCHEDULE = {0: 32, 1: 32, 2: 48}


def fake_batch(res, n=8, gen=None):
    x = torch.randn(n, 3, res, res, generator=gen)
    y = torch.randint(0, 10, (n,), generator=gen)
    return x, y


def evaluate(model, res, gen):
    model.eval()
    with torch.no_grad():
        x, y = fake_batch(res, gen=gen)
        acc = (model(x).argmax(-1) == y).float().mean()
    model.train()
    return acc


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    vit = ViT()
    model = torch.compile(vit, dynamic=False)
    opt = torch.optim.AdamW(vit.parameters(), lr=1e-3)
    accs = []
    total_iters, it = 2 * len(RESOLUTION_SCHEDULE), 0
    for epoch, res in RESOLUTION_SCHEDULE.items():
        for _ in range(2):
            # ramp stochastic depth up over training
            vit.set_drop_path(0.1 * (it + 1) / total_iters)
            it += 1
            x, y = fake_batch(res, gen=gen)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        accs.append(evaluate(model, res, gen))
    # attention rollout for a couple of images
    vit.eval()
    with torch.no_grad():
        _, attns = model(fake_batch(48, n=2, gen=gen)[0], return_attention=True)
    return accs, [a.shape for a in attns]
