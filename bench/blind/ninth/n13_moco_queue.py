"""MoCo v2: momentum key encoder and a FIFO queue of negatives, the whole forward compiled."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallConvEncoder(nn.Module):
    def __init__(self, dim=16, mlp=True):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, dim)) if mlp else nn.Linear(16, dim)

    def forward(self, x):
        return self.fc(self.features(x))


class MoCo(nn.Module):
    def __init__(self, dim=16, K=64, m=0.999, T=0.07):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = SmallConvEncoder(dim)
        self.encoder_k = SmallConvEncoder(dim)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch_size = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % batch_size == 0
        self.queue[:, ptr:ptr + batch_size] = keys.T
        ptr = (ptr + batch_size) % self.K
        self.queue_ptr[0] = ptr

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels


def two_crops(x, g):
    flip = torch.flip(x, dims=[3])
    noise = 0.1 * torch.randn(x.shape, generator=g)
    return x + noise, flip


def main():
    torch.manual_seed(0)
    random.seed(0)
    g = torch.Generator().manual_seed(0)
    model = MoCo()
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9, weight_decay=1e-4)
    for step in range(5):
        images = torch.rand(8, 3, 16, 16, generator=g)
        im_q, im_k = two_crops(images, g)
        logits, labels = cmodel(im_q, im_k)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item(), int(model.queue_ptr)


if __name__ == "__main__":
    print(main())
