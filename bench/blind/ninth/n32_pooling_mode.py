"""Sentence-embedding pooling (sentence-transformers style) evaluated for several pooling modes."""
import enum
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class Similarity(enum.Enum):
    COSINE = "cosine"
    DOT = "dot"


@torch.compile
def pool(token_embeddings, attention_mask, mode: str = "mean"):
    mask = attention_mask.unsqueeze(-1).to(token_embeddings.dtype)
    if mode == "cls":
        return token_embeddings[:, 0]
    if mode == "max":
        return token_embeddings.masked_fill(mask == 0, -1e9).max(dim=1).values
    if mode == "mean_sqrt_len":
        return (token_embeddings * mask).sum(1) / mask.sum(1).sqrt().clamp(min=1e-9)
    return (token_embeddings * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


@torch.compile
def score(a, b, sim):
    if sim is Similarity.COSINE:
        return F.cosine_similarity(a, b, dim=-1)
    return (a * b).sum(-1)


class TinyEncoder(nn.Module):
    def __init__(self, vocab=64, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)

    def forward(self, ids, mask):
        return self.layer(self.emb(ids), src_key_padding_mask=mask == 0)


def main():
    torch.manual_seed(0)
    random.seed(0)
    enc = TinyEncoder().eval()
    ids_a, ids_b = torch.randint(0, 64, (6, 10)), torch.randint(0, 64, (6, 10))
    mask = torch.ones(6, 10, dtype=torch.long)
    mask[:, 7:] = 0
    results = {}
    with torch.no_grad():
        ha, hb = enc(ids_a, mask), enc(ids_b, mask)
        for mode in ("mean", "max", "cls", "mean_sqrt_len"):
            for sim in Similarity:
                s = score(pool(ha, mask, mode), pool(hb, mask, mode), sim)
                results[(mode, sim.value)] = s.mean().item()
    return max(results, key=results.get)


if __name__ == "__main__":
    print(main())
