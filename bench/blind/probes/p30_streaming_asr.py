"""Chunked streaming encoder with a Python state dict carried between compiled calls."""
import torch
import torch.nn as nn


class CausalConv(nn.Module):
    def __init__(self, d, kernel=3):
        super().__init__()
        self.kernel = kernel
        self.conv = nn.Conv1d(d, d, kernel)

    def forward(self, x, cache):
        # x: (B, T, D); cache: (B, D, kernel-1) left context
        xt = torch.cat([cache, x.transpose(1, 2)], dim=2)
        new_cache = xt[:, :, -(self.kernel - 1):]
        return self.conv(xt).transpose(1, 2), new_cache


class StreamingEncoder(nn.Module):
    def __init__(self, idim=8, d=16, layers=2, left_context=8):
        super().__init__()
        self.inp = nn.Linear(idim, d)
        self.convs = nn.ModuleList([CausalConv(d) for _ in range(layers)])
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.left_context = left_context
        self.d = d

    def init_state(self, batch):
        return {"conv": [torch.zeros(batch, self.d, c.kernel - 1) for c in self.convs],
                "attn_ctx": torch.zeros(batch, 0, self.d), "offset": 0, "chunks": 0}

    def forward_chunk(self, chunk, state):
        x = self.inp(chunk)
        new_conv = []
        for conv, cache in zip(self.convs, state["conv"]):
            y, c = conv(x, cache)
            x = x + torch.relu(y)
            new_conv.append(c)
        ctx = torch.cat([state["attn_ctx"], x], dim=1)
        y, _ = self.attn(x, ctx, ctx, need_weights=False)
        x = x + y
        state = dict(state)
        state["conv"] = new_conv
        state["attn_ctx"] = ctx[:, -self.left_context:]
        state["offset"] = state["offset"] + chunk.size(1)
        state["chunks"] += 1
        return x, state


def stream(encoder, feats, chunk_size):
    step = torch.compile(encoder.forward_chunk)
    state = encoder.init_state(feats.size(0))
    outs = []
    for start in range(0, feats.size(1), chunk_size):
        y, state = step(feats[:, start:start + chunk_size], state)
        outs.append(y)
    return torch.cat(outs, 1), state


def main():
    torch.manual_seed(0)
    enc = StreamingEncoder().eval()
    with torch.no_grad():
        out, state = stream(enc, torch.randn(1, 20, 8), chunk_size=4)
    return out.shape, state["offset"]


if __name__ == "__main__":
    print(main())
