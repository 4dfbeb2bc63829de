"""Greedy CTC decoding for a small conformer-ish acoustic model."""
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = ["<blank>", " ", "a", "b", "c", "d", "e", "h", "l", "o", "r", "w"]


class ConvSubsampling(nn.Module):
    def __init__(self, in_feats, dim):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(in_feats, dim, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv1d(dim, dim, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, feats, lengths):
        out = self.conv(feats.transpose(1, 2)).transpose(1, 2)
        for _ in range(2):
            lengths = torch.div(lengths - 1, 2, rounding_mode="floor") + 1
        return out, lengths


class CTCModel(nn.Module):
    def __init__(self, in_feats=20, dim=32, vocab_size=len(VOCAB)):
        super().__init__()
        self.subsample = ConvSubsampling(in_feats, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True, bidirectional=True)
        self.ctc_head = nn.Linear(2 * dim, vocab_size)

    def forward(self, feats, feat_lengths):
        x, lengths = self.subsample(feats, feat_lengths)
        x, _ = self.encoder(x)
        return F.log_softmax(self.ctc_head(x), dim=-1), lengths


class GreedyCTCDecoder:
    def __init__(self, vocabulary: List[str], blank_id: int = 0, preserve_alignments: bool = False):
        self.vocabulary = vocabulary
        self.blank_id = blank_id
        self.preserve_alignments = preserve_alignments

    def __call__(self, log_probs: torch.Tensor, lengths: Optional[torch.Tensor] = None):
        if lengths is None:
            lengths = torch.full((log_probs.shape[0],), log_probs.shape[1], dtype=torch.long)
        best = log_probs.argmax(dim=-1)
        hypotheses, alignments = [], []
        for b, length in enumerate(lengths.tolist()):
            ids = best[b, :length]
            collapsed = torch.unique_consecutive(ids)
            tokens = collapsed[collapsed != self.blank_id]
            score = log_probs[b, :length].max(dim=-1).values.sum()
            hypotheses.append({"tokens": tokens, "score": score})
            if self.preserve_alignments:
                alignments.append(ids.clone())
        return hypotheses, alignments

    def to_text(self, tokens):
        return "".join(self.vocabulary[t] for t in tokens.tolist())


def batch_features(utterances):
    lengths = torch.tensor([u.shape[0] for u in utterances])
    feats = nn.utils.rnn.pad_sequence(utterances, batch_first=True)
    return feats, lengths


def main():
    torch.manual_seed(0)
    model = CTCModel().eval()
    model = torch.compile(model)
    decoder = GreedyCTCDecoder(VOCAB)
    decode = torch.compile(decoder)

    requests = [
        [torch.randn(40, 20), torch.randn(33, 20)],
        [torch.randn(52, 20), torch.randn(17, 20), torch.randn(29, 20)],
    ]
    with torch.no_grad():
        for utterances in requests:
            feats, lengths = batch_features(utterances)
            log_probs, out_lengths = model(feats, lengths)
            hyps, _ = decode(log_probs, out_lengths)
            print([(decoder.to_text(h["tokens"]), round(h["score"].item(), 2)) for h in hyps])
        decoder.preserve_alignments = True
        log_probs, _ = model(*batch_features([torch.randn(24, 20)]))
        hyps, align = decode(log_probs)
        print(len(align), align[0].shape)


if __name__ == "__main__":
    main()
