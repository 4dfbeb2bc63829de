from typing import Dict, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def ema_inplace(moving_avg: torch.Tensor, new: torch.Tensor, decay: float):
    moving_avg.data.mul_(decay).add_(new, alpha=(1 - decay))


def laplace_smoothing(x: torch.Tensor, n_categories: int, epsilon: float = 1e-5):
    return (x + epsilon) / (x.sum() + n_categories * epsilon)


def sample_vectors(samples: torch.Tensor, num: int) -> torch.Tensor:
    num_samples, device = samples.shape[0], samples.device
    if num_samples >= num:
        indices = torch.randperm(num_samples, device=device)[:num]
    else:
        indices = torch.randint(0, num_samples, (num,), device=device)
    return samples[indices]


class EuclideanCodebook(nn.Module):
    def __init__(self, dim: int, codebook_size: int, decay: float = 0.99, epsilon: float = 1e-5,
                 threshold_ema_dead_code: float = 2.0):
        super().__init__()
        self.decay = decay
        self.codebook_size = codebook_size
        self.epsilon = epsilon
        self.threshold_ema_dead_code = threshold_ema_dead_code
        embed = torch.randn(codebook_size, dim)
        self.register_buffer("inited", torch.Tensor([True]))
        self.register_buffer("cluster_size", torch.zeros(codebook_size))
        self.register_buffer("embed", embed)
        self.register_buffer("embed_avg", embed.clone())

    def replace_(self, samples: torch.Tensor, mask: torch.Tensor):
        modified_codebook = torch.where(mask[..., None], sample_vectors(samples, self.codebook_size), self.embed)
        self.embed.data.copy_(modified_codebook)

    def expire_codes_(self, batch_samples: torch.Tensor):
        if self.threshold_ema_dead_code == 0:
            return
        expired_codes = self.cluster_size < self.threshold_ema_dead_code
        if not torch.any(expired_codes):
            return
        self.replace_(batch_samples, mask=expired_codes)

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        embed = self.embed.t()
        dist = -(x.pow(2).sum(1, keepdim=True) - 2 * x @ embed + embed.pow(2).sum(0, keepdim=True))
        return dist.max(dim=-1).indices

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])
        embed_ind = self.quantize(flat)
        embed_onehot = F.one_hot(embed_ind, self.codebook_size).type(x.dtype)
        embed_ind = embed_ind.view(*shape[:-1])
        quantize = F.embedding(embed_ind, self.embed)
        if self.training:
            ema_inplace(self.cluster_size, embed_onehot.sum(0), self.decay)
            embed_sum = flat.t() @ embed_onehot
            ema_inplace(self.embed_avg, embed_sum.t(), self.decay)
            cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.epsilon) * self.cluster_size.sum()
            embed_normalized = self.embed_avg / cluster_size.unsqueeze(1)
            self.embed.data.copy_(embed_normalized)
            self.expire_codes_(flat)
        return quantize, embed_ind


class VectorQuantization(nn.Module):
    def __init__(self, dim: int, codebook_size: int, commitment_weight: float = 1.0, **kwargs):
        super().__init__()
        self._codebook = EuclideanCodebook(dim, codebook_size, **kwargs)
        self.commitment_weight = commitment_weight
        self.stats: Dict[str, float] = {}

    def forward(self, x: torch.Tensor):
        x = x.permute(0, 2, 1)
        quantize, embed_ind = self._codebook(x)
        if self.training:
            quantize = x + (quantize - x).detach()
        loss = torch.tensor([0.0], device=x.device, requires_grad=self.training)
        if self.training and self.commitment_weight > 0:
            commit_loss = F.mse_loss(quantize.detach(), x)
            loss = loss + commit_loss * self.commitment_weight
        counts = torch.bincount(embed_ind.flatten(), minlength=self._codebook.codebook_size).float()
        probs = counts / counts.sum()
        self.stats["perplexity"] = torch.exp(-(probs * torch.log(probs + 1e-10)).sum()).item()
        return quantize.permute(0, 2, 1), embed_ind, loss


class ConvEncoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, dim, 4, stride=2, padding=1), nn.ELU(), nn.Conv1d(dim, dim, 4, stride=2, padding=1))

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    encoder = ConvEncoder()
    vq = VectorQuantization(16, codebook_size=32, threshold_ema_dead_code=1.0)
    vq_c = torch.compile(vq)
    optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    vq.train()
    for _ in range(3):
        z = encoder(torch.randn(4, 1, 64))
        q, idx, commit = vq_c(z)
        loss = F.mse_loss(q, z.detach()) + commit.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return vq.stats


if __name__ == "__main__":
    main()
