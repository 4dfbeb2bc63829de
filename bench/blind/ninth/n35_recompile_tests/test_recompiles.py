import unittest

import torch
import torch.nn.functional as F

from .helpers import apply_rotary, rms_norm, same


class RecompileTests(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        torch._dynamo.reset()

    def test_int_arg_varies(self):
        @torch.compile
        def shift(x, k):
            return torch.roll(x, k, dims=-1) * k

        x = torch.randn(4, 8)
        for k in range(1, 5):
            self.assertTrue(same(shift(x, k), torch.roll(x, k, dims=-1) * k))

    def test_repeat_count_in_loop(self):
        @torch.compile
        def smooth(x, n_iters):
            for _ in range(n_iters):
                x = 0.5 * (x + torch.roll(x, 1, dims=-1))
            return x

        x = torch.randn(16)
        for n in (1, 2, 3, 4):
            self.assertEqual(smooth(x, n).shape, x.shape)

    def test_optional_tensor_arg(self):
        @torch.compile
        def linear(x, weight, bias=None):
            out = x @ weight.t()
            if bias is not None:
                out = out + bias
            return out

        x, w, b = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
        for use_bias in (False, True, False, True):
            ref = F.linear(x, w, b if use_bias else None)
            self.assertTrue(same(linear(x, w, b if use_bias else None), ref))

    def test_rank_changes(self):
        @torch.compile
        def normed(x, weight):
            return rms_norm(x, weight)

        w = torch.ones(8)
        for shape in [(8,), (2, 8), (2, 3, 8), (2, 8)]:
            self.assertEqual(normed(torch.randn(*shape), w).shape, shape)

    def test_seq_len_grows(self):
        @torch.compile
        def rope(q):
            return apply_rotary(q)

        for L in (4, 5, 6, 7, 8):
            self.assertEqual(rope(torch.randn(2, L, 8)).shape, (2, L, 8))

    def test_kwarg_flag(self):
        @torch.compile
        def softmax_xent(logits, target, label_smoothing=0.0, reduction="mean"):
            return F.cross_entropy(logits, target, label_smoothing=label_smoothing, reduction=reduction)

        logits, target = torch.randn(6, 3), torch.randint(0, 3, (6,))
        for reduction in ("mean", "sum", "none"):
            softmax_xent(logits, target, reduction=reduction)
        for ls in (0.0, 0.1, 0.2):
            softmax_xent(logits, target, label_smoothing=ls)

    def test_list_of_tensors_length(self):
        @torch.compile
        def concat_heads(heads):
            return torch.cat(heads, dim=-1).relu()

        for n in (2, 3, 4):
            self.assertEqual(concat_heads([torch.randn(2, 4) for _ in range(n)]).shape, (2, 4 * n))

    def test_dtype_sweep(self):
        @torch.compile
        def gelu_tanh(x):
            return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

        for dtype in (torch.float32, torch.float64, torch.bfloat16):
            x = torch.randn(10, dtype=dtype)
            self.assertEqual(gelu_tanh(x).dtype, dtype)
