"""Tests for compiled nn.Modules whose state changes between calls."""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, dim=8, p=0.5):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.drop = nn.Dropout(p)
        self.bn = nn.BatchNorm1d(dim)
        self.fc2 = nn.Linear(dim, 2)

    def forward(self, x):
        return self.fc2(self.bn(self.drop(torch.relu(self.fc1(x)))))


def test_train_eval_toggle():
    model = MLP()
    opt_model = torch.compile(model)
    x = torch.randn(4, 8)
    opt_model(x)
    model.eval()
    a = opt_model(x)
    b = opt_model(x)
    torch.testing.assert_close(a, b)
    model.train()
    opt_model(x)


class StepCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.num_calls = 0
        self.register_buffer("running_max", torch.zeros(4))

    def forward(self, x):
        self.num_calls += 1
        y = self.lin(x)
        self.running_max.copy_(torch.maximum(self.running_max, y.detach().amax(0)))
        if self.num_calls % 2 == 0:
            y = y * 0.5
        return y


def test_python_counter_on_module():
    m = StepCounter()
    m.compile()
    for _ in range(3):
        m(torch.randn(3, 4))
    assert m.num_calls == 3


def test_forward_hooks_added_between_calls():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    opt_model = torch.compile(model)
    x = torch.randn(2, 4)
    opt_model(x)
    captured = []
    handle = model[1].register_forward_hook(lambda mod, inp, out: captured.append(out.detach()))
    opt_model(x)
    handle.remove()
    opt_model(x)
    print("hook captured", len(captured), "outputs")


def test_freeze_parameters():
    model = MLP()
    opt_model = torch.compile(model)
    x = torch.randn(4, 8)
    opt_model(x).sum().backward()
    for p in model.fc1.parameters():
        p.requires_grad_(False)
    model.zero_grad()
    opt_model(x).sum().backward()
    assert model.fc1.weight.grad is None


def test_swap_submodule():
    model = MLP()
    opt_model = torch.compile(model)
    x = torch.randn(4, 8)
    opt_model(x)
    model.fc2 = nn.Linear(8, 3)
    assert opt_model(x).shape == (4, 3)


def test_dropout_probability_changed():
    model = MLP(p=0.1)
    opt_model = torch.compile(model)
    x = torch.randn(4, 8)
    for p in (0.1, 0.2, 0.3):
        model.drop.p = p
        opt_model(x)


def main():
    torch.manual_seed(0)
    test_train_eval_toggle()
    test_python_counter_on_module()
    test_forward_hooks_added_between_calls()
    test_freeze_parameters()
    test_swap_submodule()
    test_dropout_probability_changed()
    print("module state tests ok")


if __name__ == "__main__":
    main()
