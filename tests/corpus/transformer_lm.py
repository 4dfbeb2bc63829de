"""A decoder-only language model in the style of HuggingFace Transformers (config object, optional
masks and caches, output flags, loss on shifted labels)."""
import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LMConfig:
    vocab_size: int = 32
    hidden_size: int = 16
    num_heads: int = 4
    num_layers: int = 2
    max_position_embeddings: int = 16
    dropout: float = 0.0
    pad_token_id: int = 0
    use_cache: bool = False
    output_attentions: bool = False


class LMAttention(nn.Module):
    def __init__(self, config: LMConfig, layer_idx: int):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.head_dim = config.hidden_size // config.num_heads
        self.q = nn.Linear(config.hidden_size, config.hidden_size)
        self.k = nn.Linear(config.hidden_size, config.hidden_size)
        self.v = nn.Linear(config.hidden_size, config.hidden_size)
        self.o = nn.Linear(config.hidden_size, config.hidden_size)

    def _shape(self, x, bsz: int, seq: int):
        return x.view(bsz, seq, self.config.num_heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        past_key_value: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        output_attentions: bool = False,
    ):
        bsz, q_len, _ = hidden_states.size()
        q = self._shape(self.q(hidden_states), bsz, q_len)
        k = self._shape(self.k(hidden_states), bsz, q_len)
        v = self._shape(self.v(hidden_states), bsz, q_len)
        if past_key_value is not None:  # ok
            k = torch.cat([past_key_value[0], k], dim=2)
            v = torch.cat([past_key_value[1], v], dim=2)
        kv_len = k.shape[-2]
        attn = (q @ k.transpose(2, 3)) / math.sqrt(self.head_dim)  # ok
        if attn.size() != (bsz, self.config.num_heads, q_len, kv_len):  # ok
            raise ValueError(f"bad attention shape {attn.size()}")
        if attention_mask is not None:  # ok
            attn = attn + attention_mask
        attn = F.softmax(attn, dim=-1, dtype=torch.float32).to(q.dtype)
        attn = F.dropout(attn, p=self.config.dropout, training=self.training)  # ok
        out = (attn @ v).transpose(1, 2).reshape(bsz, q_len, -1)
        present = (k, v) if self.config.use_cache else None  # ok
        return self.o(out), (attn if output_attentions else None), present  # ok


class LMLayer(nn.Module):
    def __init__(self, config: LMConfig, layer_idx: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.hidden_size)
        self.attn = LMAttention(config, layer_idx)
        self.ln2 = nn.LayerNorm(config.hidden_size)
        self.mlp = nn.Sequential(nn.Linear(config.hidden_size, 4 * config.hidden_size), nn.GELU(),
                                 nn.Linear(4 * config.hidden_size, config.hidden_size))

    def forward(self, hidden_states, attention_mask=None, output_attentions: bool = False):
        residual = hidden_states
        h, weights, present = self.attn(self.ln1(hidden_states), attention_mask, None, output_attentions)
        hidden_states = residual + h
        hidden_states = hidden_states + self.mlp(self.ln2(hidden_states))
        return hidden_states, weights


class TinyLM(nn.Module):
    def __init__(self, config: LMConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.pos = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.layers = nn.ModuleList([LMLayer(config, i) for i in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.hidden_size)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def _prepare_mask(self, attention_mask, input_shape, dtype):
        bsz, seq = input_shape
        causal = torch.full((seq, seq), torch.finfo(dtype).min).triu(1)  # ok
        mask = causal[None, None, :, :].expand(bsz, 1, seq, seq)
        if attention_mask is not None:  # ok
            padding = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
            mask = mask + padding
        return mask

    def forward(self, input_ids, attention_mask=None, labels=None, output_attentions=None):
        output_attentions = output_attentions if output_attentions is not None else self.config.output_attentions  # expect: DYN505
        bsz, seq = input_ids.shape
        if seq > self.config.max_position_embeddings:  # ok
            raise ValueError("sequence too long")
        if attention_mask is not None and (attention_mask == 0).all():  # expect: DYN101
            raise ValueError("all tokens are padding")
        positions = torch.arange(seq, device=input_ids.device)[None, :]  # ok
        hidden = self.embed(input_ids) + self.pos(positions)
        mask = self._prepare_mask(attention_mask, (bsz, seq), hidden.dtype)
        all_attentions = () if output_attentions else None  # expect: DYN505
        for layer in self.layers:
            hidden, weights = layer(hidden, mask, output_attentions)
            if output_attentions:  # ok
                all_attentions = all_attentions + (weights,)
        logits = self.lm_head(self.norm(hidden))
        loss = None
        if labels is not None:  # ok
            shift_logits = logits[:, :-1].reshape(-1, logits.size(-1))
            shift_labels = labels[:, 1:].reshape(-1)
            loss = F.cross_entropy(shift_logits, shift_labels, ignore_index=-100)
        return {"loss": loss, "logits": logits, "attentions": all_attentions}


def __dynlint_calls__():
    torch.manual_seed(0)
    config = LMConfig()
    model = torch.compile(TinyLM(config).eval())
    ids = torch.randint(1, config.vocab_size, (2, 6))
    mask = torch.ones(2, 6, dtype=torch.long)
    model(ids, attention_mask=mask, labels=ids)
    model(ids, attention_mask=mask, labels=ids, output_attentions=True)
