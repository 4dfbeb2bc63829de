"""AllenNLP-style text classifier: TextFieldTensors dicts, get_text_field_mask, masked pooling, accuracy metric."""
from typing import Dict

import torch
import torch.nn as nn

TextFieldTensors = Dict[str, Dict[str, torch.Tensor]]


class ConfigurationError(Exception):
    pass


def get_text_field_mask(text_field_tensors: TextFieldTensors, padding_id=0):
    tensor_dims = [(t.dim(), t) for indexer in text_field_tensors.values() for t in indexer.values()]
    tensor_dims.sort(key=lambda x: x[0])
    smallest_dim = tensor_dims[0][0]
    if smallest_dim == 2:
        return tensor_dims[0][1] != padding_id
    if smallest_dim == 3:
        return (tensor_dims[0][1] != padding_id).any(dim=-1)
    raise ValueError("Expected a tensor with dimension 2 or 3, found {}".format(smallest_dim))


def masked_mean(vector, mask, dim):
    replaced = vector.masked_fill(~mask, 0.0)
    return replaced.sum(dim) / mask.sum(dim).clamp(min=1)


class BasicTextFieldEmbedder(nn.Module):
    def __init__(self, token_embedders):
        super().__init__()
        self._token_embedders = nn.ModuleDict(token_embedders)

    def forward(self, text_field_input: TextFieldTensors):
        outs = []
        for key in sorted(text_field_input):
            tensors = text_field_input[key]
            embedder = self._token_embedders[key]
            if key == "token_characters":
                outs.append(embedder(tensors["token_characters"]).max(dim=-2).values)
            else:
                outs.append(embedder(tensors["tokens"]))
        return torch.cat(outs, dim=-1)


class CategoricalAccuracy:
    def __init__(self):
        self.correct_count = 0.0
        self.total_count = 0.0

    def __call__(self, predictions, gold_labels):
        if gold_labels.dim() != predictions.dim() - 1:
            raise ConfigurationError("gold_labels must have dimension == predictions.dim() - 1")
        correct = predictions.argmax(-1).eq(gold_labels).float()
        self.correct_count += correct.sum()
        self.total_count += gold_labels.numel()

    def get_metric(self, reset=False):
        acc = float(self.correct_count) / max(self.total_count, 1.0)
        if reset:
            self.correct_count, self.total_count = 0.0, 0.0
        return acc


class BasicClassifier(nn.Module):
    def __init__(self, embedder, emb_dim, num_labels=3):
        super().__init__()
        self._embedder = embedder
        self._encoder = nn.Linear(emb_dim, 32)
        self._head = nn.Linear(32, num_labels)
        self._accuracy = CategoricalAccuracy()
        self._loss = nn.CrossEntropyLoss()

    def forward(self, tokens: TextFieldTensors, label=None):
        embedded = self._embedder(tokens)
        mask = get_text_field_mask(tokens)
        if (mask.sum(-1) == 0).any():
            raise ConfigurationError("empty instance in batch")
        pooled = masked_mean(torch.tanh(self._encoder(embedded)), mask[..., None], dim=1)
        logits = self._head(pooled)
        output = {"logits": logits, "probs": logits.softmax(-1)}
        if label is not None:
            output["loss"] = self._loss(logits, label)
            self._accuracy(logits, label)
        return output


def main():
    torch.manual_seed(0)
    embedder = BasicTextFieldEmbedder({"tokens": nn.Embedding(100, 16, padding_idx=0),
                                       "token_characters": nn.Embedding(30, 8, padding_idx=0)})
    model = BasicClassifier(embedder, 24)
    compiled = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        toks = torch.randint(1, 100, (4, 7))
        toks[0, 5:] = 0
        chars = torch.randint(1, 30, (4, 7, 5))
        out = compiled({"tokens": {"tokens": toks}, "token_characters": {"token_characters": chars}},
                       torch.randint(0, 3, (4,)))
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
    assert 0.0 <= model._accuracy.get_metric(reset=True) <= 1.0


if __name__ == "__main__":
    main()
