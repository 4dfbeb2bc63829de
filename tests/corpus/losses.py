"""Losses with ignore indices, label smoothing and a focal term."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedCrossEntropy(nn.Module):
    def __init__(self, ignore_index: int = -100, smoothing: float = 0.0, reduction: str = "mean"):
        super().__init__()
        self.ignore_index = ignore_index
        self.smoothing = smoothing
        self.reduction = reduction

    def forward(self, logits, labels):
        logp = logits.log_softmax(dim=-1)
        valid = labels != self.ignore_index
        safe = labels.clamp(min=0)
        nll = -logp.gather(-1, safe[:, None]).squeeze(-1)
        if self.smoothing > 0:  # ok
            nll = (1 - self.smoothing) * nll - self.smoothing * logp.mean(dim=-1)
        if self.reduction == "none":  # ok
            return nll * valid
        return (nll * valid).sum() / valid.sum().clamp(min=1)


class FilteredCrossEntropy(nn.Module):
    """The same loss written the common way: select the valid positions first."""

    def forward(self, logits, labels):
        valid = labels != -100
        if valid.sum() == 0:  # expect: DYN101
            return logits.sum() * 0.0
        loss = F.cross_entropy(logits[valid], labels[valid])  # expect: DYN402
        return loss


class FocalLoss(nn.Module):
    def __init__(self, gamma: float = 2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, logits, target):
        p = logits.sigmoid()
        ce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        p_t = p * target + (1 - p) * (1 - target)
        loss = ce * (1 - p_t) ** self.gamma
        n_pos = int(target.sum())  # expect: DYN202
        return loss.sum() / max(n_pos, 1)  # expect: DYN510


def contrastive_loss(a, b, temperature: float = 0.1):
    a = F.normalize(a, dim=-1)
    b = F.normalize(b, dim=-1)
    logits = a @ b.T / temperature
    labels = torch.arange(a.shape[0], device=a.device)  # ok
    loss = F.cross_entropy(logits, labels)
    acc = (logits.argmax(-1) == labels).float().mean().item()  # expect: DYN201
    return loss, acc


compiled_contrastive = torch.compile(contrastive_loss)


def __dynlint_calls__():
    torch.manual_seed(0)
    logits = torch.randn(6, 5)
    labels = torch.tensor([1, -100, 3, 0, -100, 2])
    torch.compile(MaskedCrossEntropy(smoothing=0.1))(logits, labels)
    torch.compile(FilteredCrossEntropy())(logits, labels)
    focal = torch.compile(FocalLoss())
    focal(torch.randn(4), torch.tensor([1.0, 0.0, 1.0, 0.0]))
    focal(torch.randn(4), torch.tensor([1.0, 1.0, 1.0, 0.0]))  # another count of positives
    compiled_contrastive(torch.randn(4, 8), torch.randn(4, 8))
