import torch
import torch.nn.functional as F

from .model import VOCAB, ByteLM, encode


def train_batch(model, texts, seq_len):
    rows = []
    for t in texts:
        ids = encode(t)[: seq_len + 1]
        rows.append(F.pad(ids, (0, seq_len + 1 - ids.numel()), value=0))
    batch = torch.stack(rows)
    logits = model(batch[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1), ignore_index=0)


def main():
    torch.manual_seed(0)
    model = ByteLM()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    step = torch.compile(train_batch, backend="eager")
    corpus = [["hello world", "tokenizer free"], ["byte level models", "read raw utf-8"]]
    for texts in corpus:
        loss = step(model, texts, 16)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    bpb = torch.compile(model.bits_per_byte, backend="eager")
    with torch.no_grad():
        for text in ("the quick brown fox", "jumps over", "naïve café"):
            bpb(text)
