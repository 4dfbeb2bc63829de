"""Training loop with a compiled forward/loss function and an eager optimizer.

Batches are padded to a fixed length and the loader drops ragged batches, so the
compiled function always sees the same shapes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
SEQ = 12
VOCAB = 50


class TokenClassifier(nn.Module):
    def __init__(self, vocab=VOCAB, dim=32, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens, attention_mask):
        h = self.embed(tokens)
        h = h + F.gelu(self.proj(self.norm(h)))
        mask = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.out(pooled)


def make_loader(num_batches, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(num_batches):
        tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
        lengths = torch.randint(3, SEQ + 1, (BATCH,), generator=g)
        mask = torch.arange(SEQ)[None, :] < lengths[:, None]
        labels = torch.randint(0, 4, (BATCH,), generator=g)
        yield tokens, mask, labels


def compute_loss(model, tokens, mask, labels, smoothing=0.05):
    logits = model(tokens, mask)
    return F.cross_entropy(logits, labels, label_smoothing=smoothing)


def main():
    torch.manual_seed(0)
    model = TokenClassifier()
    compute = torch.compile(compute_loss)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=6)

    for epoch in range(2):
        running = 0.0
        for tokens, mask, labels in make_loader(3, seed=epoch):
            loss = compute(model, tokens, mask, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            running += loss.detach()
        print(f"epoch {epoch} mean loss {(running / 3).item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")


if __name__ == "__main__":
    main()
