"""A CTC acoustic model head: length masks, subsampling, CTC loss and greedy decoding."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def lengths_to_mask(lengths, max_len: int):
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]  # ok


class Subsample(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, kernel_size=3, stride=2, padding=1)

    def forward(self, feats, lengths):
        out = self.conv(feats.transpose(1, 2)).transpose(1, 2)
        new_lengths = torch.div(lengths + 1, 2, rounding_mode="floor")  # ok
        return out, new_lengths


class CTCHead(nn.Module):
    def __init__(self, dim: int = 8, vocab: int = 6, blank: int = 0):
        super().__init__()
        self.sub = Subsample(dim)
        self.proj = nn.Linear(dim, vocab)
        self.blank = blank

    def forward(self, feats, lengths, targets=None, target_lengths=None):  # expect: DYN505
        x, lengths = self.sub(feats, lengths)
        mask = lengths_to_mask(lengths, x.shape[1])
        x = x.masked_fill(~mask[..., None], 0.0)
        logp = self.proj(x).log_softmax(-1)
        if targets is None:  # ok
            return logp, lengths
        if (target_lengths > lengths).any():  # expect: DYN101
            raise ValueError("targets longer than inputs")
        loss = F.ctc_loss(logp.transpose(0, 1), targets, lengths, target_lengths, blank=self.blank,  # expect: DYN401
                          zero_infinity=True)
        return logp, loss


def greedy_decode(logp, lengths, blank: int = 0):
    best = logp.argmax(-1)
    outs = []
    for b in range(best.shape[0]):
        seq = best[b, : lengths[b]]  # miss: `lengths` is an unannotated parameter, not known to be a tensor
        keep = torch.ones_like(seq, dtype=torch.bool)
        keep[1:] = seq[1:] != seq[:-1]
        keep &= seq != blank
        outs.append(seq[keep])
    return outs


compiled_decode = torch.compile(greedy_decode)


def __dynlint_calls__():
    torch.manual_seed(0)
    head = torch.compile(CTCHead())
    feats = torch.randn(2, 10, 8)
    lengths = torch.tensor([10, 7])
    targets = torch.tensor([[1, 2, 3], [2, 2, 0]])
    head(feats, lengths, targets, torch.tensor([3, 2]))
    logp, out_lengths = head(feats, lengths)
    compiled_decode(logp, out_lengths)
