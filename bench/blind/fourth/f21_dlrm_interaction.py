from typing import List

import numpy as np
import torch
import torch.nn as nn


class DLRM(nn.Module):
    def create_mlp(self, ln: List[int], sigmoid_layer: int) -> nn.Sequential:
        layers = nn.ModuleList()
        for i in range(0, len(ln) - 1):
            n, m = int(ln[i]), int(ln[i + 1])
            LL = nn.Linear(n, m, bias=True)
            mean = 0.0
            std_dev = np.sqrt(2 / (m + n))
            W = np.random.normal(mean, std_dev, size=(m, n)).astype(np.float32)
            bt = np.random.normal(mean, np.sqrt(1 / m), size=m).astype(np.float32)
            LL.weight.data = torch.tensor(W, requires_grad=True)
            LL.bias.data = torch.tensor(bt, requires_grad=True)
            layers.append(LL)
            if i == sigmoid_layer:
                layers.append(nn.Sigmoid())
            else:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    def create_emb(self, m: int, ln: List[int]) -> nn.ModuleList:
        emb_l = nn.ModuleList()
        for n in ln:
            EE = nn.EmbeddingBag(int(n), m, mode="sum", sparse=False)
            W = np.random.uniform(low=-np.sqrt(1 / n), high=np.sqrt(1 / n), size=(int(n), m)).astype(np.float32)
            EE.weight.data = torch.tensor(W, requires_grad=True)
            emb_l.append(EE)
        return emb_l

    def __init__(self, m_spa: int, ln_emb: List[int], ln_bot: List[int], ln_top: List[int],
                 arch_interaction_op: str = "dot", arch_interaction_itself: bool = False, sigmoid_bot: int = -1,
                 sigmoid_top: int = -1, loss_threshold: float = 0.0):
        super().__init__()
        self.arch_interaction_op = arch_interaction_op
        self.arch_interaction_itself = arch_interaction_itself
        self.loss_threshold = loss_threshold
        self.emb_l = self.create_emb(m_spa, ln_emb)
        self.bot_l = self.create_mlp(ln_bot, sigmoid_bot)
        self.top_l = self.create_mlp(ln_top, sigmoid_top)
        num_fea = len(ln_emb) + 1
        offset = 1 if self.arch_interaction_itself else 0
        li = torch.tensor([i for i in range(num_fea) for j in range(i + offset)])
        lj = torch.tensor([j for i in range(num_fea) for j in range(i + offset)])
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)

    def apply_mlp(self, x: torch.Tensor, layers: nn.Sequential) -> torch.Tensor:
        return layers(x)

    def apply_emb(self, lS_o: List[torch.Tensor], lS_i: List[torch.Tensor]) -> List[torch.Tensor]:
        ly = []
        for k, sparse_index_group_batch in enumerate(lS_i):
            sparse_offset_group_batch = lS_o[k]
            E = self.emb_l[k]
            V = E(sparse_index_group_batch, sparse_offset_group_batch)
            ly.append(V)
        return ly

    def interact_features(self, x: torch.Tensor, ly: List[torch.Tensor]) -> torch.Tensor:
        if self.arch_interaction_op == "dot":
            (batch_size, d) = x.shape
            T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
            Z = torch.bmm(T, torch.transpose(T, 1, 2))
            Zflat = Z[:, self.li, self.lj]
            R = torch.cat([x] + [Zflat], dim=1)
        elif self.arch_interaction_op == "cat":
            R = torch.cat([x] + ly, dim=1)
        else:
            raise ValueError("unsupported interaction op: " + self.arch_interaction_op)
        return R

    def forward(self, dense_x: torch.Tensor, lS_o: List[torch.Tensor], lS_i: List[torch.Tensor]) -> torch.Tensor:
        x = self.apply_mlp(dense_x, self.bot_l)
        ly = self.apply_emb(lS_o, lS_i)
        z = self.interact_features(x, ly)
        p = self.apply_mlp(z, self.top_l)
        if 0.0 < self.loss_threshold and self.loss_threshold < 1.0:
            z = torch.clamp(p, min=self.loss_threshold, max=(1.0 - self.loss_threshold))
        else:
            z = p
        return z


def make_batch(batch_size: int, ln_emb: List[int], bag_size: int, dense_dim: int, rng: np.random.Generator):
    dense = torch.from_numpy(rng.standard_normal((batch_size, dense_dim)).astype(np.float32))
    offsets, indices = [], []
    for n in ln_emb:
        offsets.append(torch.arange(0, batch_size * bag_size, bag_size, dtype=torch.long))
        indices.append(torch.from_numpy(rng.integers(0, n, size=batch_size * bag_size)).long())
    return dense, offsets, indices


def main():
    np.random.seed(0)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    ln_emb = [50, 80, 30]
    m_spa = 8
    model = DLRM(m_spa, ln_emb, ln_bot=[6, 16, m_spa], ln_top=[m_spa + 6, 16, 1], sigmoid_top=1,
                 loss_threshold=1e-4).eval()
    compiled = torch.compile(model)
    with torch.no_grad():
        for _ in range(3):
            dense, offsets, indices = make_batch(16, ln_emb, 2, 6, rng)
            out = compiled(dense, offsets, indices)
    return out


if __name__ == "__main__":
    main()
