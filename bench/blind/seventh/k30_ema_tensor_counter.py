"""Weight EMA whose warmup counter lives in a tensor buffer, updated by a compiled in-place step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TensorEMA(nn.Module):
    def __init__(self, model, decay=0.999, warmup=10.0):
        super().__init__()
        self.decay = decay
        self.warmup = warmup
        self.shadow = nn.ParameterList([nn.Parameter(p.detach().clone(), requires_grad=False)
                                        for p in model.parameters()])
        self.register_buffer("num_updates", torch.zeros((), dtype=torch.float32))

    @torch.no_grad()
    def forward(self, params):
        self.num_updates.add_(1)
        d = torch.clamp((1 + self.num_updates) / (self.warmup + self.num_updates), max=self.decay)
        for s, p in zip(self.shadow, params):
            s.mul_(d).add_((1 - d) * p.detach())
        return d


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
    ema = TensorEMA(model)
    update = torch.compile(ema)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    params = list(model.parameters())
    for _ in range(5):
        x = torch.randn(16, 6)
        loss = F.mse_loss(model(x), x.sum(-1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        d = update(params)
    print(d)


if __name__ == "__main__":
    main()
