import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from .experts import MoETransformerLayer


class TinyMoELM(nn.Module):
    def __init__(self, vocab=32, d_model=16, layers=2, aux_coef=0.01):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([MoETransformerLayer(d_model) for _ in range(layers)])
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab)
        self.aux_coef = aux_coef

    def forward(self, tokens, targets):
        x = self.embed(tokens)
        aux_total = x.new_zeros(())
        for layer in self.layers:
            x, aux = layer(x)
            aux_total = aux_total + aux
        logits = self.lm_head(self.norm(x))
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return loss + self.aux_coef * aux_total


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = TinyMoELM()
    model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randint(0, 32, (8, 13))
    for step in range(4):
        loss = model(data[:, :-1], data[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()
