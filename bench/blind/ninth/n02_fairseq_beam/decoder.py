import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class IncrementalMultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, incremental_state=None, key="self_attn"):
        bsz, tgt_len, _ = x.shape
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        if incremental_state is not None:
            saved = incremental_state.get(key)
            if saved is not None:
                k = torch.cat([saved["prev_key"], k], dim=1)
                v = torch.cat([saved["prev_value"], v], dim=1)
            incremental_state[key] = {"prev_key": k, "prev_value": v}
        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2) * self.scaling
        k = k.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)
        attn = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(out)


class TransformerDecoderLayer(nn.Module):
    def __init__(self, embed_dim, num_heads, ffn_dim):
        super().__init__()
        self.self_attn = IncrementalMultiheadAttention(embed_dim, num_heads)
        self.self_attn_layer_norm = nn.LayerNorm(embed_dim)
        self.fc1 = nn.Linear(embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, embed_dim)
        self.final_layer_norm = nn.LayerNorm(embed_dim)

    def forward(self, x, incremental_state=None, layer_idx=0):
        residual = x
        x = self.self_attn_layer_norm(x)
        x = self.self_attn(x, incremental_state, key=f"layer{layer_idx}")
        x = residual + x
        residual = x
        x = self.fc2(F.relu(self.fc1(self.final_layer_norm(x))))
        return residual + x


class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size, embed_dim=16, num_heads=2, ffn_dim=32, layers=2, padding_idx=1):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_tokens = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx)
        self.embed_scale = math.sqrt(embed_dim)
        self.layers = nn.ModuleList(
            [TransformerDecoderLayer(embed_dim, num_heads, ffn_dim) for _ in range(layers)])
        self.layer_norm = nn.LayerNorm(embed_dim)
        self.output_projection = nn.Linear(embed_dim, vocab_size, bias=False)

    def forward(self, prev_output_tokens, incremental_state=None):
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
        x = self.embed_scale * self.embed_tokens(prev_output_tokens)
        for i, layer in enumerate(self.layers):
            x = layer(x, incremental_state, layer_idx=i)
        x = self.layer_norm(x)
        return self.output_projection(x)

    def get_normalized_probs(self, logits, log_probs=True):
        return F.log_softmax(logits.float(), dim=-1) if log_probs else F.softmax(logits.float(), dim=-1)
