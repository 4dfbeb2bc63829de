"""nanoGPT-style training loop: cosine lr schedule, grad accumulation, MFU estimate, periodic eval."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

learning_rate = 6e-4
min_lr = 6e-5
warmup_iters = 3
lr_decay_iters = 20
gradient_accumulation_steps = 2
log_interval = 2


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


class TinyGPT(nn.Module):
    def __init__(self, vocab=64, block=16, dim=32):
        super().__init__()
        self.block_size = block
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.shape
        assert t <= self.block_size, f"Cannot forward sequence of length {t}"
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        x = self.ln_f(self.blocks(x, mask=mask, is_causal=True))
        if targets is not None:
            logits = self.head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.head(x[:, [-1], :])
            loss = None
        return logits, loss

    def estimate_mfu(self, fwdbwd_per_iter, dt):
        N = sum(p.numel() for p in self.parameters())
        L, T = 2, self.block_size
        flops_per_iter = (6 * N + 12 * L * 4 * 8 * T) * T * fwdbwd_per_iter
        return flops_per_iter * (1.0 / dt) / 312e12


def train_step(model, X, Y, it):
    lr = get_lr(it)
    _, loss = model(X, Y)
    loss = loss / gradient_accumulation_steps
    loss.backward()
    if it % log_interval == 0:
        lossf = loss.item() * gradient_accumulation_steps
        print("iter", it, "loss", lossf)
    return loss.detach(), lr


def get_batch(block=16, batch=4):
    data = torch.randint(0, 64, (batch, block + 1))
    return data[:, :-1].contiguous(), data[:, 1:].contiguous()


def main():
    torch.manual_seed(1337)
    model = TinyGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    step = torch.compile(train_step)
    evaluate = torch.compile(model)
    for it in range(6):
        for micro_step in range(gradient_accumulation_steps):
            X, Y = get_batch()
            _, lr = step(model, X, Y, it)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if it % 3 == 2:
            model.eval()
            with torch.no_grad():
                logits, _ = evaluate(get_batch()[0])
            model.train()
            mfu = model.estimate_mfu(gradient_accumulation_steps * 4, dt=0.05)
            assert logits.shape[1] == 1 and mfu >= 0


if __name__ == "__main__":
    main()
