"""Chunk-wise encoder: causal depthwise conv with left-context cache plus limited-history attention."""
from __future__ import annotations

from typing import NamedTuple, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class StreamState(NamedTuple):
    conv_cache: torch.Tensor      # (B, C, kernel - 1)
    attn_memory: torch.Tensor     # (B, M, C)


class ChunkEncoder(nn.Module):
    def __init__(self, n_mels: int = 20, dim: int = 32, kernel: int = 5, vocab: int = 30) -> None:
        super().__init__()
        self.inp = nn.Linear(n_mels, dim)
        self.dwconv = nn.Conv1d(dim, dim, kernel, groups=dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.ctc = nn.Linear(dim, vocab)
        self.kernel = kernel
        self.dim = dim

    def initial_state(self, batch: int) -> StreamState:
        return StreamState(torch.zeros(batch, self.dim, self.kernel - 1), torch.zeros(batch, 0, self.dim))


@torch.compile
def encode_chunk(model: ChunkEncoder, feats: torch.Tensor, state: Optional[StreamState],
                 memory_frames: int = 16, is_final: bool = False):
    """Encode one chunk of log-mel frames, returning CTC log-probs and the next state."""
    if state is None:
        state = model.initial_state(feats.shape[0])
    x = model.inp(feats)                                    # (B, T, C)
    xc = torch.cat([state.conv_cache, x.transpose(1, 2)], dim=-1)
    y = model.dwconv(xc).transpose(1, 2) + x
    ctx = torch.cat([state.attn_memory, y], dim=1)
    att, _ = model.attn(y, ctx, ctx, need_weights=False)
    y = y + att
    logp = F.log_softmax(model.ctc(y), dim=-1)
    if is_final:
        return logp, None
    new_state = StreamState(xc[..., -(model.kernel - 1):], ctx[:, -memory_frames:])
    return logp, new_state
