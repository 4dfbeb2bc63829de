"""Acoustic model + greedy CTC decoding for a small batch of padded utterances."""
import torch
import torch.nn as nn

VOCAB = ["_", " ", "a", "b", "c", "d", "e", "f", "g", "h"]


class ConvAcousticModel(nn.Module):
    def __init__(self, n_feats=20, hidden=32, vocab=len(VOCAB)):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(n_feats, hidden, 5, padding=2), nn.GELU(),
            nn.Conv1d(hidden, hidden, 5, padding=2), nn.GELU(),
        )
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, feats):
        h = self.conv(feats).transpose(1, 2)
        return self.proj(h).log_softmax(-1)


def ctc_greedy_decode(log_probs, lengths, blank=0):
    best = log_probs.argmax(-1)
    hyps = []
    for b in range(best.shape[0]):
        n = int(lengths[b])
        seq = best[b, :n]
        keep = torch.ones_like(seq, dtype=torch.bool)
        keep[1:] = seq[1:] != seq[:-1]
        keep &= seq != blank
        hyps.append(seq[keep])
    return hyps


def transcribe(model, decoder, feats, lengths):
    with torch.no_grad():
        log_probs = model(feats)
    ids = decoder(log_probs, lengths)
    return ["".join(VOCAB[i] for i in h.tolist()) for h in ids]


def main():
    torch.manual_seed(0)
    model = torch.compile(ConvAcousticModel().eval())
    decoder = torch.compile(ctc_greedy_decode)
    for T, lens in [(40, [40, 33]), (40, [38, 40]), (56, [56, 41, 20])]:
        feats = torch.randn(len(lens), 20, T)
        print(transcribe(model, decoder, feats, torch.tensor(lens)))


if __name__ == "__main__":
    main()
