"""Tests for how compiled functions handle the shapes and kinds of their arguments."""
import torch


def same(a, b):
    return torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_dict_argument_keys_change():
    def fn(inputs):
        out = inputs["x"] * 2
        if "mask" in inputs:
            out = out * inputs["mask"]
        for key in sorted(inputs):
            if key.startswith("bias_"):
                out = out + inputs[key]
        return out

    opt_fn = torch.compile(fn)
    x = torch.randn(4)
    batches = [
        {"x": x},
        {"x": x, "mask": torch.tensor([1.0, 0.0, 1.0, 1.0])},
        {"x": x, "bias_a": torch.ones(4)},
        {"x": x, "bias_a": torch.ones(4), "bias_b": torch.ones(4), "mask": torch.ones(4)},
    ]
    for inputs in batches:
        assert same(opt_fn(inputs), fn(inputs))


def test_optional_tensor_argument():
    @torch.compile
    def attention_scores(q, k, mask=None):
        scores = q @ k.transpose(-1, -2) / q.size(-1) ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return scores.softmax(-1)

    q, k = torch.randn(2, 3, 8), torch.randn(2, 3, 8)
    mask = torch.tril(torch.ones(3, 3, dtype=torch.bool))
    a = attention_scores(q, k)
    b = attention_scores(q, k, mask)
    c = attention_scores(q, k, mask=None)
    assert same(a, c) and not same(a, b)


def test_dtype_and_requires_grad_changes():
    @torch.compile
    def fn(x):
        return (x * x).sum(-1)

    x = torch.randn(3, 4)
    fn(x)
    fn(x.double())
    fn(x.half().float())
    xr = x.clone().requires_grad_(True)
    fn(xr).sum().backward()
    assert same(xr.grad, 2 * x)


def test_rank_changes():
    def flatten_mean(x):
        return x.reshape(x.shape[0], -1).mean(dim=1)

    opt_fn = torch.compile(flatten_mean)
    for shape in [(2, 3), (2, 3, 4), (5, 1, 2, 2), (7,) + (1,) * 5]:
        x = torch.randn(shape)
        assert same(opt_fn(x), flatten_mean(x))


def test_int_and_float_args():
    def fn(x, n, alpha):
        for _ in range(n):
            x = x * alpha + 1
        return x

    opt_fn = torch.compile(fn)
    x = torch.zeros(2)
    for n, alpha in [(1, 0.5), (2, 0.5), (3, 0.25), (3, 0.75)]:
        assert same(opt_fn(x, n, alpha), fn(x, n, alpha))


def test_tuple_of_varying_length():
    @torch.compile
    def stack_sum(*tensors):
        return torch.stack(tensors).sum(0)

    for n in range(1, 5):
        ts = [torch.full((2,), float(i)) for i in range(n)]
        assert same(stack_sum(*ts), sum(ts))


def test_kwargs_with_defaults():
    @torch.compile
    def layer_norm(x, weight=None, bias=None, eps=1e-5):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        y = (x - mu) / torch.sqrt(var + eps)
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        return y

    x = torch.randn(2, 5)
    ref = torch.nn.functional.layer_norm(x, (5,))
    assert same(layer_norm(x), ref)
    assert same(layer_norm(x, torch.ones(5)), ref)
    assert same(layer_norm(x, bias=torch.zeros(5), eps=1e-6), torch.nn.functional.layer_norm(x, (5,), eps=1e-6))


def main():
    for name, test in list(globals().items()):
        if name.startswith("test_") and callable(test):
            test()
            print(name, "passed")


if __name__ == "__main__":
    main()
