"""fairseq-style incremental decoding with an ``incremental_state`` dictionary."""
import uuid
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

IncrementalState = Dict[str, Dict[str, Optional[torch.Tensor]]]


class FairseqIncrementalState:
    def init_incremental_state(self):
        self._incremental_state_id = str(uuid.uuid4())

    def _get_full_incremental_state_key(self, key: str) -> str:
        return f"{self._incremental_state_id}.{key}"

    def get_incremental_state(self, incremental_state: Optional[IncrementalState], key: str):
        full_key = self._get_full_incremental_state_key(key)
        if incremental_state is None or full_key not in incremental_state:
            return None
        return incremental_state[full_key]

    def set_incremental_state(self, incremental_state: Optional[IncrementalState], key: str, value):
        if incremental_state is not None:
            incremental_state[self._get_full_incremental_state_key(key)] = value
        return incremental_state


class MultiheadAttention(nn.Module, FairseqIncrementalState):
    def __init__(self, embed_dim, num_heads, dropout=0.0):
        super().__init__()
        self.init_incremental_state()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.dropout = dropout
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, key_padding_mask=None, incremental_state=None, attn_mask=None):
        tgt_len, bsz, embed_dim = query.size()
        q, k, v = self.in_proj(query).chunk(3, dim=-1)
        q = (q * self.scaling).contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        saved_state = self.get_incremental_state(incremental_state, "attn_state")
        if saved_state is not None:
            if saved_state.get("prev_key") is not None:
                k = torch.cat([saved_state["prev_key"], k], dim=1)
                v = torch.cat([saved_state["prev_value"], v], dim=1)
            if key_padding_mask is not None and saved_state.get("prev_key_padding_mask") is not None:
                key_padding_mask = torch.cat([saved_state["prev_key_padding_mask"], key_padding_mask], dim=1)
        if incremental_state is not None:
            self.set_incremental_state(incremental_state, "attn_state",
                                       {"prev_key": k, "prev_value": v, "prev_key_padding_mask": key_padding_mask})
        src_len = k.size(1)
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if attn_mask is not None:
            attn_weights = attn_weights + attn_mask
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_probs = F.dropout(attn_weights.softmax(-1), p=self.dropout, training=self.training)
        attn = torch.bmm(attn_probs, v).transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn)


def buffered_future_mask(tensor, cache: dict):
    dim = tensor.size(0)
    if "mask" not in cache or cache["mask"].size(0) < dim:
        cache["mask"] = torch.triu(torch.full((dim, dim), float("-inf")), 1)
    return cache["mask"][:dim, :dim]


class TransformerDecoder(nn.Module):
    def __init__(self, vocab=30, embed_dim=32, heads=4, layers=2, padding_idx=0):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed = nn.Embedding(vocab, embed_dim, padding_idx=padding_idx)
        self.layers = nn.ModuleList(MultiheadAttention(embed_dim, heads) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(embed_dim) for _ in range(layers))
        self.output_projection = nn.Linear(embed_dim, vocab)
        self._future_mask_cache = {}

    def forward(self, prev_output_tokens, incremental_state: Optional[IncrementalState] = None):
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
        x = self.embed(prev_output_tokens).transpose(0, 1)
        padding_mask = prev_output_tokens.eq(self.padding_idx)
        if not padding_mask.any():
            padding_mask = None
        for attn, norm in zip(self.layers, self.norms):
            self_attn_mask = buffered_future_mask(x, self._future_mask_cache) if incremental_state is None else None
            x = x + attn(norm(x), key_padding_mask=padding_mask, incremental_state=incremental_state,
                         attn_mask=self_attn_mask)
        return self.output_projection(x.transpose(0, 1))


@torch.no_grad()
def greedy_generate(decoder, bos, bsz, max_len, eos=2):
    incremental_state: IncrementalState = {}
    tokens = torch.full((bsz, 1), bos, dtype=torch.long)
    finished = torch.zeros(bsz, dtype=torch.bool)
    for step in range(max_len):
        logits = decoder(tokens, incremental_state)
        next_tok = logits[:, -1].argmax(-1).masked_fill(finished, 1)
        tokens = torch.cat([tokens, next_tok[:, None]], dim=1)
        finished |= next_tok.eq(eos)
        if finished.all():
            break
    return tokens


def main():
    torch.manual_seed(0)
    decoder = TransformerDecoder()
    compiled = torch.compile(decoder)
    opt = torch.optim.Adam(decoder.parameters(), lr=1e-3)
    for seq_len in (7, 10):
        batch = torch.randint(3, 30, (4, seq_len))
        batch[0, -2:] = 0
        logits = compiled(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    decoder.eval()
    print(greedy_generate(compiled, bos=1, bsz=2, max_len=5).tolist())


if __name__ == "__main__":
    main()
