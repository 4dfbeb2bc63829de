"""Acoustic model + CTC greedy decoding to text; decoding helpers are compiled with the model."""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = ["<blank>", " ", "a", "b", "c", "d", "e", "'"]


class ConvSubsampler(nn.Module):
    def __init__(self, feat_dim, dim):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(feat_dim, dim, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv1d(dim, dim, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x, lengths):
        x = self.conv(x.transpose(1, 2)).transpose(1, 2)
        for _ in range(2):
            lengths = torch.div(lengths + 1, 2, rounding_mode="floor")
        return x, lengths


class CTCModel(nn.Module):
    def __init__(self, feat_dim=20, dim=32, vocab=len(VOCAB)):
        super().__init__()
        self.sub = ConvSubsampler(feat_dim, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * dim, vocab)

    def forward(self, feats, lengths):
        x, lengths = self.sub(feats, lengths)
        x, _ = self.rnn(x)
        return F.log_softmax(self.out(x), -1), lengths


def ctc_greedy(log_probs, lengths, blank=0):
    best = log_probs.argmax(-1)
    hyps = []
    for b in range(best.size(0)):
        seq = best[b, : lengths[b]]
        seq = torch.unique_consecutive(seq)
        seq = seq[seq != blank]
        hyps.append("".join(VOCAB[i] for i in seq))
    return hyps


@torch.compile
def transcribe(model, feats, lengths):
    log_probs, out_lens = model(feats, lengths)
    return ctc_greedy(log_probs, out_lens)


def main():
    torch.manual_seed(0)
    model = CTCModel().eval()
    outs = []
    with torch.no_grad():
        for T in (40, 56):
            feats = torch.randn(2, T, 20)
            outs.append(transcribe(model, feats, torch.tensor([T, T - 8])))
    return outs


if __name__ == "__main__":
    print(main())
