import torch
import torch.nn.functional as F

from .qat import QuantMLP, disable_fake_quant, freeze_observers, set_bits


def main():
    torch.manual_seed(0)
    model = QuantMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    cmodel = torch.compile(model)
    x = torch.randn(64, 16)
    y = torch.randint(0, 4, (64,))
    # phase 1: 8-bit QAT with observers; phase 2: frozen ranges; phase 3: 4-bit fine-tune
    phases = [("8bit", 2), ("frozen", 2), ("4bit", 2)]
    losses = []
    for name, steps in phases:
        if name == "frozen":
            freeze_observers(model)
        elif name == "4bit":
            set_bits(model, 4)
        for _ in range(steps):
            loss = F.cross_entropy(cmodel(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
    # float baseline for the report
    disable_fake_quant(model)
    with torch.no_grad():
        fp_acc = (cmodel(x).argmax(-1) == y).float().mean()
    return losses, fp_acc
