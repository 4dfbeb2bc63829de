from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F

LABELS = ("-", "|", "a", "b", "c", "d", "e", "h", "i", "l", "n", "o", "r", "s", "t", "w")


class GreedyCTCDecoder(nn.Module):
    def __init__(self, labels, blank=0):
        super().__init__()
        self.labels = labels
        self.blank = blank

    def forward(self, emission: torch.Tensor) -> List[str]:
        indices = torch.argmax(emission, dim=-1)
        indices = torch.unique_consecutive(indices, dim=-1)
        indices = [i for i in indices if i != self.blank]
        joined = "".join([self.labels[i] for i in indices])
        return joined.replace("|", " ").strip().split()


class ConvSubsample(nn.Module):
    def __init__(self, in_dim, dim):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(in_dim, dim, 5, stride=2, padding=2), nn.GELU(),
                                  nn.Conv1d(dim, dim, 3, stride=2, padding=1), nn.GELU())

    def forward(self, x, lengths):
        x = self.conv(x.transpose(1, 2)).transpose(1, 2)
        lengths = torch.div(lengths + 1, 2, rounding_mode="floor")
        lengths = torch.div(lengths + 1, 2, rounding_mode="floor")
        return x, lengths


class AcousticModel(nn.Module):
    def __init__(self, n_mels=20, dim=32, num_labels=len(LABELS)):
        super().__init__()
        self.subsample = ConvSubsample(n_mels, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 2, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, num_labels)

    def forward(self, feats, lengths):
        x, lengths = self.subsample(feats, lengths)
        max_len = x.shape[1]
        pad_mask = torch.arange(max_len, device=x.device)[None, :] >= lengths[:, None]
        x = self.encoder(x, src_key_padding_mask=pad_mask)
        return self.head(x).log_softmax(-1), lengths


@torch.compile
def transcribe(model, decoder, feats, lengths):
    emissions, out_lengths = model(feats, lengths)
    hyps = []
    for emission, n in zip(emissions, out_lengths):
        hyps.append(decoder(emission[:n]))
    return hyps


@torch.compile
def ctc_loss_step(model, feats, lengths, targets, target_lengths):
    log_probs, out_lengths = model(feats, lengths)
    loss = F.ctc_loss(log_probs.transpose(0, 1), targets, out_lengths, target_lengths, blank=0, zero_infinity=True)
    loss.backward()
    return loss.detach()


def main():
    torch.manual_seed(0)
    model = AcousticModel().train()
    decoder = GreedyCTCDecoder(LABELS)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for T in (64, 64):
        feats = torch.randn(2, T, 20)
        lengths = torch.tensor([T, T - 8])
        targets = torch.randint(1, len(LABELS), (2, 6))
        optimizer.zero_grad()
        ctc_loss_step(model, feats, lengths, targets, torch.tensor([6, 5]))
        optimizer.step()
    model.eval()
    with torch.no_grad():
        for T in (48, 48):
            words = transcribe(model, decoder, torch.randn(2, T, 20), torch.tensor([T, T // 2]))
    return words


if __name__ == "__main__":
    main()
