"""Reformer-style LSH attention: hash into buckets, sort, attend within variable-sized buckets."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSHAttention(nn.Module):
    def __init__(self, dim=32, n_buckets=4, n_hashes=1):
        super().__init__()
        self.n_buckets = n_buckets
        self.n_hashes = n_hashes
        self.to_qk = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.register_buffer("rotations", torch.randn(dim, n_buckets // 2))

    def hash_vectors(self, qk):
        rotated = qk @ self.rotations
        rotated = torch.cat([rotated, -rotated], dim=-1)
        return rotated.argmax(dim=-1)

    def forward(self, x):
        qk = F.normalize(self.to_qk(x), dim=-1)
        v = self.to_v(x)
        buckets = self.hash_vectors(qk)
        order = buckets.argsort(stable=True)
        counts = torch.bincount(buckets, minlength=self.n_buckets)
        qk_sorted, v_sorted = qk[order], v[order]
        outs = []
        for q_chunk, v_chunk in zip(torch.split(qk_sorted, counts.tolist()), torch.split(v_sorted, counts.tolist())):
            if q_chunk.shape[0] == 0:
                continue
            attn = (q_chunk @ q_chunk.T) * q_chunk.shape[-1] ** -0.5
            outs.append(attn.softmax(-1) @ v_chunk)
        out_sorted = torch.cat(outs)
        out = torch.empty_like(out_sorted)
        out[order] = out_sorted
        bucket_ids = torch.repeat_interleave(torch.arange(self.n_buckets), counts)
        return self.to_out(out), bucket_ids


class ReversibleLiteBlock(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.attn = LSHAttention(dim)
        self.ff = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x1, x2):
        a, _ = self.attn(x2)
        y1 = x1 + a
        y2 = x2 + self.ff(y1)
        return y1, y2


def main():
    torch.manual_seed(0)
    block = torch.compile(ReversibleLiteBlock())
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(24, 32)
            y1, y2 = block(x, x)
            assert y1.shape == (24, 32)


if __name__ == "__main__":
    main()
