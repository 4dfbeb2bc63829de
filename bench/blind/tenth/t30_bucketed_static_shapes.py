"""Sentence encoder compiled with dynamic=False, fed length-bucketed batches and an fp64 evaluation pass."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BUCKETS = (8, 16, 24, 32)


def pad_to_bucket(seqs, pad_id=0):
    longest = max(len(s) for s in seqs)
    target = next(b for b in BUCKETS if b >= longest)
    out = torch.full((len(seqs), target), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out, out != pad_id


class SentenceEncoder(nn.Module):
    def __init__(self, vocab=500, dim=32, pooling="mean"):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 2, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.default_pooling = pooling

    def forward(self, ids, mask, pooling=None):
        pooling = pooling or self.default_pooling
        h = self.encoder(self.emb(ids).to(self.emb.weight.dtype), src_key_padding_mask=~mask)
        m = mask[..., None].to(h.dtype)
        if pooling == "mean":
            out = (h * m).sum(1) / m.sum(1).clamp(min=1)
        elif pooling == "max":
            out = h.masked_fill(m == 0, -1e4).max(1).values
        else:
            out = h[:, 0]
        return F.normalize(out, dim=-1)


def random_batch(n, lo, hi):
    lengths = torch.randint(lo, hi + 1, (n,)).tolist()
    return [torch.randint(1, 500, (l,)).tolist() for l in lengths]


def main():
    torch.manual_seed(0)
    model = SentenceEncoder().eval()
    encode = torch.compile(model, dynamic=False)
    with torch.no_grad():
        for lo, hi in [(3, 8), (3, 8), (9, 15), (17, 23), (25, 30)]:
            ids, mask = pad_to_bucket(random_batch(4, lo, hi))
            emb = encode(ids, mask)
            assert emb.shape == (4, 32)
        ids, mask = pad_to_bucket(random_batch(4, 3, 8))
        encode(ids, mask, pooling="cls")
        encode(ids, mask, pooling="max")
        model.double()
        encode(ids, mask)


if __name__ == "__main__":
    main()
