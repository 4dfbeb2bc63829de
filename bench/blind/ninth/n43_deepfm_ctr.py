"""DeepFM click-through-rate model over fixed categorical fields; compiled with fullgraph=False."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

FIELD_DIMS = (10, 20, 5, 8)


class FeaturesEmbedding(nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.embedding = nn.Embedding(sum(field_dims), embed_dim)
        offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)
        self.register_buffer("offsets", torch.from_numpy(offsets), persistent=False)
        nn.init.xavier_uniform_(self.embedding.weight)

    def forward(self, x):
        return self.embedding(x + self.offsets.unsqueeze(0))


class FactorizationMachine(nn.Module):
    def __init__(self, reduce_sum=True):
        super().__init__()
        self.reduce_sum = reduce_sum

    def forward(self, x):
        square_of_sum = torch.sum(x, dim=1) ** 2
        sum_of_square = torch.sum(x ** 2, dim=1)
        ix = square_of_sum - sum_of_square
        if self.reduce_sum:
            ix = torch.sum(ix, dim=1, keepdim=True)
        return 0.5 * ix


class DeepFM(nn.Module):
    def __init__(self, field_dims=FIELD_DIMS, embed_dim=8, mlp_dims=(32, 16), dropout=0.2):
        super().__init__()
        self.num_fields = len(field_dims)
        self.linear = nn.Embedding(sum(field_dims), 1)
        self.bias = nn.Parameter(torch.zeros(1))
        self.register_buffer("offsets", torch.tensor((0, *np.cumsum(field_dims)[:-1].tolist())), persistent=False)
        self.embedding = FeaturesEmbedding(field_dims, embed_dim)
        self.fm = FactorizationMachine()
        layers, d = [], self.num_fields * embed_dim
        for h in mlp_dims:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(dropout)]
            d = h
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x, dense_weight=None):
        assert x.shape[1] == self.num_fields
        if not isinstance(dense_weight, torch.Tensor):
            dense_weight = torch.ones(x.shape[0], 1)
        emb = self.embedding(x)
        lin = self.linear(x + self.offsets.unsqueeze(0)).sum(dim=1) + self.bias
        logit = lin + self.fm(emb) + self.mlp(emb.flatten(1))
        logit = torch.where(dense_weight > 0, logit, torch.zeros_like(logit))
        return logit.squeeze(1)


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(0)
    model = DeepFM()
    cmodel = torch.compile(model, fullgraph=False)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    X = torch.from_numpy(np.stack([rng.randint(0, d, 256) for d in FIELD_DIMS], 1))
    y = torch.from_numpy((rng.rand(256) < 0.3).astype(np.float32))
    aucs = []
    for epoch in range(2):
        model.train()
        for i in range(0, 256, 64):
            loss = F.binary_cross_entropy_with_logits(cmodel(X[i:i + 64]), y[i:i + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
        aucs.append(loss.item())
    return aucs


if __name__ == "__main__":
    print(main())
