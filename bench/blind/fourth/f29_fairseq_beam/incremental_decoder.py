import itertools
import math
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


_STATE_IDS = itertools.count()


class FairseqIncrementalState:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.init_incremental_state()

    def init_incremental_state(self):
        self._incremental_state_id = "{}_{}".format(type(self).__name__.lower(), next(_STATE_IDS))

    def _get_full_incremental_state_key(self, key: str) -> str:
        return "{}.{}".format(self._incremental_state_id, key)

    def get_incremental_state(self, incremental_state, key: str):
        full_key = self._get_full_incremental_state_key(key)
        if incremental_state is None or full_key not in incremental_state:
            return None
        return incremental_state[full_key]

    def set_incremental_state(self, incremental_state, key: str, value):
        if incremental_state is not None:
            full_key = self._get_full_incremental_state_key(key)
            incremental_state[full_key] = value
        return incremental_state


def with_incremental_state(cls):
    cls.__bases__ = (FairseqIncrementalState,) + tuple(b for b in cls.__bases__ if b != FairseqIncrementalState)
    return cls


@with_incremental_state
class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, encoder_decoder_attention=False):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim**-0.5
        self.encoder_decoder_attention = encoder_decoder_attention
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def _get_input_buffer(self, incremental_state) -> Dict[str, Optional[Tensor]]:
        result = self.get_incremental_state(incremental_state, "attn_state")
        if result is not None:
            return result
        return {}

    def _set_input_buffer(self, incremental_state, buffer: Dict[str, Optional[Tensor]]):
        return self.set_incremental_state(incremental_state, "attn_state", buffer)

    def reorder_incremental_state(self, incremental_state, new_order: Tensor):
        input_buffer = self._get_input_buffer(incremental_state)
        if input_buffer is not None:
            for k in input_buffer.keys():
                input_buffer_k = input_buffer[k]
                if input_buffer_k is not None:
                    if self.encoder_decoder_attention and input_buffer_k.size(0) == new_order.size(0):
                        break
                    input_buffer[k] = input_buffer_k.index_select(0, new_order)
            incremental_state = self._set_input_buffer(incremental_state, input_buffer)
        return incremental_state

    def forward(self, query, key, value, incremental_state=None, static_kv: bool = False):
        bsz, tgt_len, _ = query.size()
        if incremental_state is not None:
            saved_state = self._get_input_buffer(incremental_state)
            if saved_state is not None and "prev_key" in saved_state:
                if static_kv:
                    key = value = None
        else:
            saved_state = None

        q = self.q_proj(query) * self.scaling
        k = self.k_proj(key) if key is not None else None
        v = self.v_proj(value) if value is not None else None

        if saved_state is not None:
            if "prev_key" in saved_state:
                prev_key = saved_state["prev_key"]
                k = prev_key if static_kv else torch.cat([prev_key, k], dim=1)
            if "prev_value" in saved_state:
                prev_value = saved_state["prev_value"]
                v = prev_value if static_kv else torch.cat([prev_value, v], dim=1)
            saved_state["prev_key"] = k
            saved_state["prev_value"] = v
            incremental_state = self._set_input_buffer(incremental_state, saved_state)

        src_len = k.size(1)
        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        attn_weights = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        attn = (attn_weights @ v).transpose(1, 2).reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(attn)


class SinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, embedding_dim, padding_idx, init_size=64):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.register_buffer("weights", SinusoidalPositionalEmbedding.get_embedding(init_size, embedding_dim, padding_idx), persistent=False)

    @staticmethod
    def get_embedding(num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None):
        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
        if padding_idx is not None:
            emb[padding_idx, :] = 0
        return emb

    def forward(self, input, incremental_state=None):
        bsz, seq_len = input.shape
        if incremental_state is not None:
            pos = self.padding_idx + seq_len
            return self.weights[pos, :].expand(bsz, 1, -1)
        mask = input.ne(self.padding_idx).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.padding_idx
        return self.weights.index_select(0, positions.view(-1)).view(bsz, seq_len, -1)


class TransformerDecoderLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.self_attn = MultiheadAttention(dim, heads)
        self.self_attn_layer_norm = nn.LayerNorm(dim)
        self.encoder_attn = MultiheadAttention(dim, heads, encoder_decoder_attention=True)
        self.encoder_attn_layer_norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 2, dim)
        self.final_layer_norm = nn.LayerNorm(dim)

    def forward(self, x, encoder_out, incremental_state=None):
        residual = x
        x = self.self_attn_layer_norm(x)
        x = residual + self.self_attn(x, x, x, incremental_state=incremental_state)
        residual = x
        x = self.encoder_attn_layer_norm(x)
        x = residual + self.encoder_attn(x, encoder_out, encoder_out, incremental_state=incremental_state, static_kv=True)
        residual = x
        x = self.final_layer_norm(x)
        return residual + self.fc2(F.relu(self.fc1(x)))


class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size, dim=32, heads=4, layers=2, padding_idx=1):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_scale = math.sqrt(dim)
        self.embed_tokens = nn.Embedding(vocab_size, dim, padding_idx=padding_idx)
        self.embed_positions = SinusoidalPositionalEmbedding(dim, padding_idx)
        self.layers = nn.ModuleList([TransformerDecoderLayer(dim, heads) for _ in range(layers)])
        self.layer_norm = nn.LayerNorm(dim)
        self.output_projection = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, prev_output_tokens, encoder_out, incremental_state=None):
        positions = self.embed_positions(prev_output_tokens, incremental_state=incremental_state)
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
            positions = positions[:, -1:]
        x = self.embed_scale * self.embed_tokens(prev_output_tokens) + positions
        for layer in self.layers:
            x = layer(x, encoder_out, incremental_state)
        return self.output_projection(self.layer_norm(x))

    def reorder_incremental_state(self, incremental_state, new_order):
        for module in self.modules():
            if hasattr(module, "reorder_incremental_state") and module is not self:
                module.reorder_incremental_state(incremental_state, new_order)
