import torch

from .features import batches, synth_log
from .model import DLRM


def main():
    torch.manual_seed(0)
    model = DLRM()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    train_step = torch.compile(model.loss, dynamic=False)
    rows = synth_log(88)
    opts = {}
    for epoch in range(2):
        for dense, sparse, labels in batches(rows, 32):
            loss = train_step(dense, sparse, labels, opts)
            opt.zero_grad()
            loss.backward()
            opt.step()
        # second epoch: ablate the user tower to check the model leans on item features
        opts = {"drop_features": ("user_id",)}
    return model.stats
