"""Training-script patterns that make compiled code recompile."""
import torch
import torch.nn as nn

SEEN_SHAPES = []


class Classifier(nn.Module):
    def __init__(self, dim: int = 8, classes: int = 3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Dropout(0.2))
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.body(x))


@torch.compile
def scaled_activation(x, kind: str, scale: float):
    y = torch.relu(x) if kind == "relu" else torch.tanh(x)  # expect: DYN501
    return y * scale  # expect: DYN501


@torch.compile
def record_batch(x):
    SEEN_SHAPES.append(x.shape[0])  # expect: DYN305
    return x.sum()


def smooth(x):  # expect: DYN703
    return (x + x.roll(1, -1) + x.roll(-1, -1)) / 3


def sharpen(x):
    return 2 * x - smooth(x)


def train(model, data):
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        compiled.train()  # expect: DYN503
        for x, y in data:
            loss = nn.functional.cross_entropy(compiled(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
        compiled.eval()  # expect: DYN503
        val = compiled(data[0][0]).argmax(-1)  # ok
    return val


def evaluate(model, data):
    compiled = torch.compile(model.eval())
    with torch.no_grad():
        return [compiled(x).argmax(-1) for x, _ in data]  # expect: DYN504


def sweep(x):
    outs = []
    for kind in ["relu", "tanh", "gelu"]:
        outs.append(scaled_activation(x, kind, 1.0))
    for step in range(3):
        outs.append(scaled_activation(x, "relu", step * 0.5))
    return outs


def lengths():
    fast = torch.compile(smooth, dynamic=False)
    outs = []
    for n in range(3, 7):
        outs.append(fast(torch.ones(1, n)))
    return outs


def stable_lengths():
    fast = torch.compile(sharpen)
    return [fast(torch.ones(1, n)) for n in range(3, 7)]  # ok


def __dynlint_calls__():
    torch.manual_seed(0)
    data = [(torch.randn(4, 8), torch.tensor([0, 1, 2, 0])) for _ in range(2)]
    train(Classifier(), data)
    evaluate(Classifier(), data)
    sweep(torch.randn(4))
    for n in (2, 3, 4):
        record_batch(torch.ones(n))
    lengths()
    stable_lengths()
