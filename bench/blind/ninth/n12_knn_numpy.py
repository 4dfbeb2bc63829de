"""kNN-LM style retrieval: a flat numpy inner-product index queried from inside the compiled forward."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class FlatIPIndex:
    """A tiny stand-in for faiss.IndexFlatIP: exact inner-product search over float32 rows."""

    def __init__(self, dim):
        self.dim = dim
        self.xb = np.zeros((0, dim), dtype=np.float32)

    def add(self, x):
        self.xb = np.concatenate([self.xb, np.ascontiguousarray(x, dtype=np.float32)], axis=0)

    @property
    def ntotal(self):
        return self.xb.shape[0]

    def search(self, q, k):
        sims = q @ self.xb.T
        idx = np.argpartition(-sims, k, axis=1)[:, :k]
        part = np.take_along_axis(sims, idx, axis=1)
        order = np.argsort(-part, axis=1)
        return np.take_along_axis(part, order, axis=1), np.take_along_axis(idx, order, axis=1)


class KNNLM(nn.Module):
    def __init__(self, vocab=50, d=16, k=8, lmbda=0.25, temperature=1.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(d, vocab)
        self.vocab, self.k, self.lmbda, self.temperature = vocab, k, lmbda, temperature
        self.index = FlatIPIndex(d)
        self.values = np.zeros((0,), dtype=np.int64)

    def encode(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return F.normalize(h, dim=-1)

    def build_datastore(self, tokens):
        with torch.no_grad():
            keys = self.encode(tokens[:, :-1]).reshape(-1, self.index.dim)
        self.index.add(keys.numpy())
        self.values = np.concatenate([self.values, tokens[:, 1:].reshape(-1).numpy()])

    def forward(self, tokens):
        h = self.encode(tokens)
        lm_logprobs = F.log_softmax(self.out(h), dim=-1)
        q = h.reshape(-1, h.shape[-1]).detach().cpu().numpy()
        dists, knns = self.index.search(q, self.k)
        knn_tokens = torch.from_numpy(self.values[knns])
        knn_scores = torch.from_numpy(dists) / self.temperature
        knn_probs = torch.zeros(q.shape[0], self.vocab).scatter_add_(1, knn_tokens, F.softmax(knn_scores, dim=-1))
        knn_logprobs = torch.log(knn_probs.clamp_min(1e-10)).view_as(lm_logprobs)
        mix = torch.logsumexp(torch.stack([lm_logprobs + np.log(1 - self.lmbda),
                                           knn_logprobs + np.log(self.lmbda)]), dim=0)
        return mix


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    model = KNNLM().eval()
    corpus = torch.randint(0, 50, (16, 12))
    model.build_datastore(corpus)
    scorer = torch.compile(model)
    nll = 0.0
    with torch.no_grad():
        for i in range(4):
            batch = torch.randint(0, 50, (4, 10))
            logp = scorer(batch[:, :-1])
            nll += -logp.gather(-1, batch[:, 1:, None]).mean().item()
    return nll / 4


if __name__ == "__main__":
    print(main())
