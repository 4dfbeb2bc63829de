import torch
import torch.nn.functional as F


def focal_loss(logits, target, gamma=2.0, reduction="mean"):
    ce = F.cross_entropy(logits, target, reduction="none")
    pt = torch.exp(-ce)
    loss = (1 - pt) ** gamma * ce
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def dice_loss(prob, mask, eps=1e-6):
    inter = (prob * mask).sum()
    denom = prob.sum() + mask.sum()
    if denom.item() == 0:
        return prob.sum() * 0.0
    return 1 - (2 * inter + eps) / (denom + eps)


def label_smoothing_ce(logits, target, smoothing=0.1):
    n = logits.shape[-1]
    logp = logits.log_softmax(-1)
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    smooth = -logp.mean(-1)
    return ((1 - smoothing) * nll + smoothing * smooth).mean()


def info_nce(z1, z2, temperature=0.1):
    z1 = F.normalize(z1, dim=-1)
    z2 = F.normalize(z2, dim=-1)
    z = torch.cat([z1, z2])
    sim = z @ z.t() / temperature
    n = z1.shape[0]
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, target)


def hard_negative_mining(loss_per_item, ratio=3):
    pos = loss_per_item > 0.5
    n_neg = min(int(pos.sum()) * ratio, loss_per_item.numel())
    return loss_per_item.topk(n_neg).values.mean()
