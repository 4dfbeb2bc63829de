import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class MoCo(nn.Module):
    def __init__(self, encoder, dim=32, queue_size=128, temperature=0.07):
        super().__init__()
        self.encoder_q = encoder
        self.encoder_k = copy.deepcopy(encoder)
        for p in self.encoder_k.parameters():
            p.requires_grad_(False)
        self.T = temperature
        self.K = queue_size
        self.register_buffer("queue", F.normalize(torch.randn(dim, queue_size), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def momentum_update(self, m):
        for pk, pq in zip(self.encoder_k.parameters(), self.encoder_q.parameters()):
            pk.mul_(m).add_(pq.detach(), alpha=1 - m)

    @torch.no_grad()
    def dequeue_and_enqueue(self, keys):
        bs = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % bs == 0
        self.queue[:, ptr:ptr + bs] = keys.T
        self.queue_ptr[0] = (ptr + bs) % self.K

    def forward(self, im_q, im_k, m):
        q = self.encoder_q(im_q)
        with torch.no_grad():
            self.momentum_update(m)
            k = self.encoder_k(im_k)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = q @ self.queue.clone().detach()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self.dequeue_and_enqueue(k)
        return F.cross_entropy(logits, labels)
