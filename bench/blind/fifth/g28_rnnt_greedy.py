"""Greedy RNN-T (transducer) decoding with a stateful LSTM prediction network."""
from typing import List, Optional, Tuple

import torch
import torch.nn as nn


class PredictionNetwork(nn.Module):
    def __init__(self, vocab_size, blank_id, hidden=32, num_layers=1):
        super().__init__()
        self.blank_id = blank_id
        self.embed = nn.Embedding(vocab_size + 1, hidden)  # extra row for the start-of-sequence symbol
        self.lstm = nn.LSTM(hidden, hidden, num_layers=num_layers, batch_first=True)
        self.num_layers = num_layers
        self.hidden = hidden

    def forward(self, token: Optional[torch.Tensor], state: Optional[Tuple[torch.Tensor, torch.Tensor]], batch=1):
        if token is None:
            emb = torch.zeros(batch, 1, self.hidden)
        else:
            emb = self.embed(token).unsqueeze(1)
        if state is None:
            h = torch.zeros(self.num_layers, emb.shape[0], self.hidden)
            state = (h, torch.zeros_like(h))
        out, new_state = self.lstm(emb, state)
        return out, new_state


class JointNetwork(nn.Module):
    def __init__(self, enc_dim, pred_dim, joint_dim, vocab_size):
        super().__init__()
        self.enc_proj = nn.Linear(enc_dim, joint_dim)
        self.pred_proj = nn.Linear(pred_dim, joint_dim)
        self.out = nn.Linear(joint_dim, vocab_size + 1)

    def forward(self, enc: torch.Tensor, pred: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.enc_proj(enc) + self.pred_proj(pred))).log_softmax(-1)


class GreedyRNNTInfer:
    def __init__(self, decoder, joint, blank_index, max_symbols_per_step=3):
        self.decoder = decoder
        self.joint = joint
        self.blank_index = blank_index
        self.max_symbols = max_symbols_per_step

    def _pred_step(self, label, hidden):
        if label is not None and label == self.blank_index:
            label = None
        token = None if label is None else torch.tensor([label])
        return self.decoder(token, hidden)

    @torch.no_grad()
    def greedy_decode(self, x: torch.Tensor, out_len: int) -> List[int]:
        hidden = None
        hypothesis: List[int] = []
        last_label = None
        for time_idx in range(out_len):
            f = x[time_idx].view(1, 1, -1)
            not_blank = True
            symbols_added = 0
            while not_blank and (self.max_symbols is None or symbols_added < self.max_symbols):
                g, hidden_prime = self._pred_step(last_label, hidden)
                logp = self.joint(f, g)[0, 0]
                k = logp.argmax(-1).item()
                if k == self.blank_index:
                    not_blank = False
                else:
                    hypothesis.append(k)
                    hidden = hidden_prime
                    last_label = k
                symbols_added += 1
        return hypothesis

    def __call__(self, encoder_output: torch.Tensor, encoded_lengths: torch.Tensor):
        return [self.greedy_decode(encoder_output[b], int(encoded_lengths[b])) for b in range(encoder_output.shape[0])]


def main():
    torch.manual_seed(0)
    vocab_size = 16
    blank = vocab_size
    decoder = PredictionNetwork(vocab_size, blank)
    joint = JointNetwork(enc_dim=24, pred_dim=32, joint_dim=32, vocab_size=vocab_size)
    decoder.eval()
    joint.eval()
    infer = GreedyRNNTInfer(torch.compile(decoder), torch.compile(joint), blank_index=blank)

    enc = torch.randn(2, 10, 24)
    print(infer(enc, torch.tensor([10, 7])))
    infer.max_symbols = 1
    print(infer(torch.randn(1, 6, 24), torch.tensor([6])))


if __name__ == "__main__":
    main()
