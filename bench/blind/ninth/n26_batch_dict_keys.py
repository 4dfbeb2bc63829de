"""Multi-task text model fed dict batches from two data sources with different optional fields."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class TextEncoder(nn.Module):
    def __init__(self, vocab=64, d=16, max_len=32, n_types=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.typ = nn.Embedding(n_types, d)
        self.layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.cls_head = nn.Linear(d, 3)
        self.tag_head = nn.Linear(d, 5)

    def forward(self, batch):
        ids = batch["input_ids"]
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        if "token_type_ids" in batch:
            x = x + self.typ(batch["token_type_ids"])
        pad_mask = None
        if "attention_mask" in batch:
            pad_mask = batch["attention_mask"] == 0
        h = self.layer(x, src_key_padding_mask=pad_mask)
        out = {"cls_logits": self.cls_head(h[:, 0])}
        labels = batch.get("labels")
        if labels is not None:
            out["loss"] = F.cross_entropy(out["cls_logits"], labels)
        if "tags" in batch:
            tag_logits = self.tag_head(h)
            out["tag_loss"] = F.cross_entropy(tag_logits.flatten(0, 1), batch["tags"].flatten())
        return out


def nli_batch(bs=4, L=12):
    ids = torch.randint(1, 64, (bs, L))
    return {"input_ids": ids, "token_type_ids": (torch.arange(L) >= L // 2).long().expand(bs, L),
            "attention_mask": torch.ones(bs, L, dtype=torch.long), "labels": torch.randint(0, 3, (bs,))}


def ner_batch(bs=4, L=12):
    ids = torch.randint(1, 64, (bs, L))
    mask = torch.ones(bs, L, dtype=torch.long)
    mask[:, -3:] = 0
    return {"input_ids": ids, "attention_mask": mask, "tags": torch.randint(0, 5, (bs, L))}


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = TextEncoder()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sources = [nli_batch, ner_batch]
    for step in range(6):
        batch = sources[step % 2]()
        out = cmodel(batch)
        loss = out.get("loss", 0.0) + out.get("tag_loss", 0.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        preds = cmodel({"input_ids": torch.randint(1, 64, (4, 12))})["cls_logits"].argmax(-1)
    return preds.tolist()


if __name__ == "__main__":
    print(main())
