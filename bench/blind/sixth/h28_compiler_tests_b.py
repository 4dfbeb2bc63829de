"""Unit tests for compiled module/controller code, in the style of a compiler test suite."""
import logging

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class Cfg:
    use_residual = True
    eps = 1e-5


def _check(a, b, tol=1e-5):
    assert torch.allclose(a, b, atol=tol, rtol=tol), (a - b).abs().max()


def test_print_debug():
    def fn(x):
        y = x.relu()
        print("activations", y.shape)
        return y * 2

    opt_fn = torch.compile(fn)
    for n in (3, 3):
        x = torch.randn(n)
        _check(opt_fn(x), fn(x))


def test_data_dependent_branch():
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    opt_fn = torch.compile(fn)
    for sign in (1.0, -1.0):
        x = sign * torch.rand(4)
        _check(opt_fn(x), fn(x))


def test_boolean_mask_select():
    def fn(x, thresh):
        kept = x[x > thresh]
        return kept.sum() / max(kept.numel(), 1)

    opt_fn = torch.compile(fn)
    x = torch.randn(16)
    for t in (0.0, 0.0):
        _check(opt_fn(x, t), fn(x, t))


def test_module_config_class_attr():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            if Cfg.use_residual:
                y = y + x
            return y

    m = Block()
    opt_m = torch.compile(m)
    x = torch.randn(2, 4)
    for flag in (True, False):
        Cfg.use_residual = flag
        _check(opt_m(x), m(x))
    Cfg.use_residual = True


def test_train_eval_dropout():
    m = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    opt_m = torch.compile(m)
    x = torch.randn(3, 4)
    m.train()
    opt_m(x)
    m.eval()
    _check(opt_m(x), m(x))


def test_growing_history_list():
    def fn(x, history):
        for h in history:
            x = x + 0.5 * h
        return x

    opt_fn = torch.compile(fn)
    history = []
    x = torch.zeros(3)
    for i in range(3):
        history.append(torch.full((3,), float(i)))
        _check(opt_fn(x, history), fn(x, history))


def test_option_dict_keys():
    def fn(x, opts):
        if "clip" in opts:
            x = x.clamp(-opts["clip"], opts["clip"])
        return x * opts.get("scale", 1.0)

    opt_fn = torch.compile(fn)
    x = torch.randn(5) * 3
    for opts in ({"scale": 2.0}, {"scale": 2.0, "clip": 1.0}):
        _check(opt_fn(x, opts), fn(x, opts))


def test_static_shapes_batch_sweep():
    lin = nn.Linear(3, 3)

    @torch.compile(dynamic=False)
    def fn(x):
        return lin(x).tanh()

    for b in (1, 2, 4):
        x = torch.randn(b, 3)
        _check(fn(x), lin(x).tanh())


def test_step_counter_on_object():
    class Warmup:
        def __init__(self, steps):
            self.steps = steps
            self.t = 0

        @torch.compile
        def scale(self, g):
            self.t += 1
            return g * min(1.0, self.t / self.steps)

    w = Warmup(4)
    g = torch.ones(2)
    outs = [w.scale(g) for _ in range(3)]
    _check(outs[-1], torch.full((2,), 0.75))


def test_logging_warning():
    def fn(x):
        y = x.exp()
        logger.warning("large activation")
        return y

    opt_fn = torch.compile(fn)
    for _ in range(2):
        x = torch.randn(4)
        _check(opt_fn(x), x.exp())


def test_no_grad_then_grad():
    w = torch.randn(3, requires_grad=True)

    def fn(x):
        return (x * w).sum()

    opt_fn = torch.compile(fn)
    x = torch.randn(3)
    with torch.no_grad():
        opt_fn(x)
    opt_fn(x).backward()
    assert w.grad is not None


def test_layernorm_eps_constant():
    def fn(x):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mu) / torch.sqrt(var + Cfg.eps)

    opt_fn = torch.compile(fn)
    for n in (4, 7):
        x = torch.randn(2, n)
        _check(opt_fn(x), fn(x))


def test_unique_counts():
    def fn(labels):
        vals, counts = torch.unique(labels, return_counts=True)
        return vals.float() @ counts.float()

    opt_fn = torch.compile(fn)
    for hi in (3, 5):
        labels = torch.randint(0, hi, (20,))
        _check(opt_fn(labels), fn(labels))


def test_rank_change():
    def fn(x):
        return x.flatten(1).norm(dim=1) if x.dim() > 1 else x.norm()

    opt_fn = torch.compile(fn)
    for shape in ((4,), (2, 4), (2, 2, 2)):
        x = torch.randn(shape)
        _check(opt_fn(x), fn(x))


def test_float_of_tensor_scale():
    def fn(x):
        amax = float(x.abs().max())
        return torch.round(x / amax * 127)

    opt_fn = torch.compile(fn)
    for _ in range(2):
        x = torch.randn(8)
        _check(opt_fn(x), fn(x))


def test_temperature_schedule():
    class Sampler:
        def __init__(self):
            self.temperature = 1.0

        def probs(self, logits):
            return (logits / self.temperature).softmax(-1)

    s = Sampler()
    opt_probs = torch.compile(s.probs)
    logits = torch.randn(2, 5)
    for temp in (1.0, 0.5, 0.25):
        s.temperature = temp
        _check(opt_probs(logits), s.probs(logits))


def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    for t in tests:
        torch._dynamo.reset()
        t()
    return len(tests)
