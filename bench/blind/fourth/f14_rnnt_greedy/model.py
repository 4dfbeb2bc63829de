from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class RNNTConfig:
    input_dim: int = 20
    encoding_dim: int = 32
    num_symbols: int = 12
    symbol_embedding_dim: int = 16
    num_lstm_layers: int = 1
    lstm_hidden_dim: int = 32
    time_reduction_stride: int = 4
    blank: int = 0


class _TimeReduction(nn.Module):
    def __init__(self, stride: int):
        super().__init__()
        self.stride = stride

    def forward(self, input: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        B, T, D = input.shape
        num_frames = T - (T % self.stride)
        input = input[:, :num_frames, :]
        lengths = lengths.div(self.stride, rounding_mode="trunc")
        T_max = num_frames // self.stride
        output = input.reshape(B, T_max, D * self.stride)
        output = output.contiguous()
        return output, lengths


class _Transcriber(nn.Module):
    def __init__(self, cfg: RNNTConfig):
        super().__init__()
        self.input_linear = nn.Linear(cfg.input_dim, cfg.encoding_dim // cfg.time_reduction_stride)
        self.time_reduction = _TimeReduction(cfg.time_reduction_stride)
        self.layer = nn.TransformerEncoderLayer(cfg.encoding_dim, 4, cfg.encoding_dim * 2, dropout=0.0, batch_first=True)
        self.output_linear = nn.Linear(cfg.encoding_dim, cfg.encoding_dim)
        self.layer_norm = nn.LayerNorm(cfg.encoding_dim)

    def forward(self, input: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        x = self.input_linear(input)
        x, lengths = self.time_reduction(x, lengths)
        x = self.layer(x)
        return self.layer_norm(self.output_linear(x)), lengths


class _Predictor(nn.Module):
    def __init__(self, cfg: RNNTConfig):
        super().__init__()
        self.embedding = nn.Embedding(cfg.num_symbols, cfg.symbol_embedding_dim)
        self.input_layer_norm = nn.LayerNorm(cfg.symbol_embedding_dim)
        self.lstm = nn.LSTM(cfg.symbol_embedding_dim, cfg.lstm_hidden_dim, cfg.num_lstm_layers, batch_first=True)
        self.linear = nn.Linear(cfg.lstm_hidden_dim, cfg.encoding_dim)
        self.output_layer_norm = nn.LayerNorm(cfg.encoding_dim)

    def forward(self, input: torch.Tensor, state: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        embedding_out = self.input_layer_norm(self.embedding(input))
        lstm_out, new_state = self.lstm(embedding_out, state)
        return self.output_layer_norm(self.linear(lstm_out)), new_state


class _Joiner(nn.Module):
    def __init__(self, input_dim: int, output_dim: int, activation: str = "relu"):
        super().__init__()
        self.linear = nn.Linear(input_dim, output_dim, bias=True)
        if activation == "relu":
            self.activation = nn.ReLU()
        elif activation == "tanh":
            self.activation = nn.Tanh()
        else:
            raise ValueError(f"Unsupported activation {activation}")

    def forward(self, source_encodings: torch.Tensor, target_encodings: torch.Tensor) -> torch.Tensor:
        joint_encodings = source_encodings.unsqueeze(2).contiguous() + target_encodings.unsqueeze(1).contiguous()
        activation_out = self.activation(joint_encodings)
        return self.linear(activation_out)


class RNNT(nn.Module):
    def __init__(self, cfg: RNNTConfig):
        super().__init__()
        self.cfg = cfg
        self.blank = cfg.blank
        self.transcriber = _Transcriber(cfg)
        self.predictor = _Predictor(cfg)
        self.joiner = _Joiner(cfg.encoding_dim, cfg.num_symbols)

    def transcribe(self, sources: torch.Tensor, source_lengths: torch.Tensor):
        return self.transcriber(sources, source_lengths)

    def predict(self, targets: torch.Tensor, state=None):
        return self.predictor(targets, state)

    def join(self, source_encodings: torch.Tensor, target_encodings: torch.Tensor) -> torch.Tensor:
        return self.joiner(source_encodings, target_encodings)
