"""Test cases: indexing, selection and counting operators."""
import torch
import torch.nn.functional as F


def test_nonzero_indices():
    def fn(x):
        idx = torch.nonzero(x > 0).squeeze(-1)
        return x.index_select(0, idx).sum()

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(8))
    opt(torch.randn(8))


def test_boolean_mask():
    def fn(scores, labels):
        pos = scores[labels == 1]
        neg = scores[labels == 0]
        return pos.mean() - neg.mean()

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(10), torch.randint(0, 2, (10,)))
    opt(torch.randn(10), torch.randint(0, 2, (10,)))


def test_unique_classes():
    def fn(labels, feats):
        classes = torch.unique(labels)
        return feats.new_zeros(classes.numel(), feats.shape[1])

    opt = torch.compile(fn, backend="eager")
    opt(torch.tensor([0, 1, 1, 3]), torch.randn(4, 2))
    opt(torch.tensor([2, 2, 2, 2]), torch.randn(4, 2))


def test_repeat_interleave_counts():
    def fn(x, counts):
        return torch.repeat_interleave(x, counts, dim=0)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3, 2), torch.tensor([1, 2, 0]))
    opt(torch.randn(3, 2), torch.tensor([3, 1, 1]))


def test_masked_select():
    def fn(x, keep):
        return torch.masked_select(x, keep).pow(2).sum()

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(6), torch.rand(6) > 0.5)
    opt(torch.randn(6), torch.rand(6) > 0.5)


def test_one_hot_inferred_classes():
    def fn(y):
        return F.one_hot(y).float().mean(0)

    opt = torch.compile(fn, backend="eager")
    opt(torch.tensor([0, 2, 1]))
    opt(torch.tensor([1, 0, 2]))


def test_bincount_histogram():
    def fn(ids, weights):
        return torch.bincount(ids, weights=weights)

    opt = torch.compile(fn, backend="eager")
    opt(torch.tensor([0, 1, 1, 2]), torch.rand(4))
    opt(torch.tensor([0, 0, 3, 2]), torch.rand(4))


def test_masked_fill_static():
    def fn(x):
        y = x.clone()
        y[y < 0] = 0.0
        return y.masked_fill(y > 2, 2.0)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(6))
    opt(torch.randn(6))


def main():
    torch.manual_seed(0)
    test_nonzero_indices()
    test_boolean_mask()
    test_unique_classes()
    test_repeat_interleave_counts()
    test_masked_select()
    test_one_hot_inferred_classes()
    test_bincount_histogram()
    test_masked_fill_static()
