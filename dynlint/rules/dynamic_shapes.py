"""DYN4xx: data-dependent shapes — ops whose output size depends on tensor values."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.tensors.kinds import TENSOR, VALUE, WEAK
from dynlint.analysis.tensors.syntax import keyword_arg, np_sized_draw
from dynlint.analysis.tensors.torch_api import NP_TRACED_DRAWS
from dynlint.linter.rule import Example, register
from dynlint.rules.common import SPLITS, TorchRule, call_args, source_of
from dynlint.rules.held_objects import NUMPY_CLASSES, measured_call, methods_of

DYNAMIC = "Dynamic shape operator"
DATA_OP = "Data dependent operator"
VALUE_SHAPED = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere", "bincount"})
TENSOR_ONLY_SHAPED = frozenset({"nonzero", "argwhere"})      # no Python value has these methods
# NumPy's, which Dynamo runs as torch (`torch._numpy`) whatever the array, a module's constant one included
# (measured: each breaks at the call, `Dynamic shape operator`); `numpy.where` with one argument too
NUMPY_VALUE_SHAPED = frozenset({"numpy.unique", "numpy.nonzero", "numpy.flatnonzero", "numpy.bincount"})


@register
class DataDependentShapeOp(TorchRule):
    """Checks for ops whose output shape depends on tensor values: `nonzero`, `masked_select`, `unique`,
    `argwhere`, `bincount`, one-argument `torch.where(cond)`, `repeat_interleave` with tensor repeats, and
    `F.ctc_loss` with tensor lengths."""
    code = "DYN401"
    name = "data-dependent-shape-op"
    message = "`{op}` returns a tensor whose size depends on its values: Dynamo breaks the graph"
    fix = "Keep shapes static: use a mask (`torch.where(mask, x, 0)`) instead of selecting, or set `torch._dynamo.config.capture_dynamic_output_shape_ops = True`"
    gb_types = (DYNAMIC,)
    fullgraph_raises = False         # fullgraph=True silently enables dynamic output shapes
    why = """
        The output size of these ops is only known after running them. With the default
        `capture_dynamic_output_shape_ops=False` Dynamo ends the graph at the op (`Dynamic shape operator`)
        and everything after it is traced again per call with new sizes. `.nonzero()` and `.argwhere()` are
        methods of tensors alone (a NumPy array in traced code is a tensor to Dynamo), so their receiver need
        not be known to be one: only a known Python value is left alone. NumPy's own (`np.unique`,
        `np.nonzero`, `np.flatnonzero`, `np.bincount`, one-argument `np.where`) break the same way: Dynamo runs
        NumPy in traced code as torch, on any array.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def active(x):
                idx = torch.nonzero(x > 0)
                return idx.float().mean()
        """, "active(torch.tensor([1.0, -1.0, 2.0]))"),
        Example("""
            import torch

            @torch.compile
            def distinct(x):
                return x.unique().sum()
        """, "distinct(torch.tensor([1.0, 1.0, 2.0]))"),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def occupied_cells(points):
                grid = np.floor(points.numpy() * 4)
                return torch.from_numpy(np.unique(grid, axis=0))     # NumPy runs as torch here
        """, "occupied_cells(torch.rand(16, 2))"),
        Example("""
            import torch

            def position(schedule, t):
                return (schedule == t).nonzero()

            @torch.compile
            def locate(schedule, t):
                return position(schedule, t).sum()
        """, "locate(torch.arange(5), torch.tensor(3))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def active(x):
            mask = x > 0
            return torch.where(mask, x, 0.0).sum() / mask.sum()
    """, "active(torch.tensor([1.0, -1.0, 2.0]))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        method = self.method_name(node)
        if name.startswith("torch.") and name[6:] in VALUE_SHAPED:
            self.report(node, op=name)
        elif name == "torch.where" and len(node.args) == 1:
            self.report(node, op="torch.where(cond)")
        elif name in NUMPY_VALUE_SHAPED or (name == "numpy.where" and len(node.args) == 1):
            self.report(node, op=f"{name}{'(cond)' if name == 'numpy.where' else ''}")
        elif name in ("torch.nn.functional.ctc_loss", "torch.ctc_loss"):
            pos, kw = call_args(node)
            lengths = pos[2:4] + [kw[k] for k in ("input_lengths", "target_lengths") if k in kw]
            if any(self.tensors.kind(a) in (TENSOR, WEAK) for a in lengths):
                self.report(node, op=name)
        elif name == "torch.repeat_interleave" and len(node.args) >= 2 and self.tensors.is_tensor(node.args[1].value):
            self.report(node, op=name)
        elif method in TENSOR_ONLY_SHAPED and self.tensors.kind(self.receiver(node)) != VALUE:
            # only tensors have it (a NumPy array in traced code is one to Dynamo): whatever the receiver's
            # inferred kind, unless it is known to be a Python value
            self.report(node, op=f".{method}()")
        elif method and not name.startswith("torch.") and self.tensors.kind(self.receiver(node)) in (TENSOR, WEAK):
            if method in VALUE_SHAPED:
                self.report(node, op=f".{method}()")
            elif method == "repeat_interleave" and node.args and self.tensors.is_tensor(node.args[0].value):
                self.report(node, op=".repeat_interleave()")


@register
class BooleanMaskIndexing(TorchRule):
    """Checks for reading a tensor through a boolean mask, `x[x > 0]` (assigning through a mask is fine)."""
    code = "DYN402"
    name = "boolean-mask-indexing"
    message = "indexing with a boolean mask gives a value-dependent shape: Dynamo breaks the graph"
    fix = "Keep the shape: `torch.where(mask, x, 0)` and reduce, or assign through the mask (`x[mask] = 0` does not break)"
    gb_types = (DYNAMIC,)
    fullgraph_raises = False         # fullgraph=True silently enables dynamic output shapes
    why = """
        `x[mask]` has as many elements as `mask` has `True` values, which Dynamo cannot know while tracing;
        it breaks the graph like `nonzero` (`Dynamic shape operator`). Assigning through a mask
        (`x[mask] = 0`) keeps the shape and is traced without a break; `x[mask] += 1` reads `x[mask]`
        first and breaks. A tensor indexed by a comparison against a number (`emb[labels == -1]`) is
        read through a mask even where the compared value's kind is not known here: were it a Python
        number, the index would be a bool, which only adds a dimension.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def positive_mean(x):
                return x[x > 0].mean()
        """, "positive_mean(torch.tensor([1.0, -1.0, 3.0]))"),
        Example("""
            import torch

            @torch.compile
            def masked_loss(loss, labels):
                valid = (labels != -100) & ~torch.isnan(loss)
                return loss[valid].mean()
        """, "masked_loss(torch.ones(4), torch.tensor([1, -100, 2, 3]))"),
        Example("""
            import torch

            @torch.compile
            def drop_small(boxes, min_size: float):
                wh = boxes[:, 2:] - boxes[:, :2]
                return boxes[(wh >= min_size).all(dim=1)]       # all/any give a boolean tensor
        """, "drop_small(torch.rand(6, 4), 0.1)"),
        Example("""
            import torch
            from torch import nn

            class LevelFilter(nn.Module):
                def forward(self, levels):
                    kept = []
                    for logits in levels:           # what the list holds is not known here,
                        scores = logits.sigmoid()   # but only a tensor has `.sigmoid()`
                        keep = scores > 0.5
                        kept.append(scores[keep])
                    return kept
        """, "torch.compile(LevelFilter())([torch.randn(4), torch.randn(6)])"),
        Example("""
            import torch

            @torch.compile
            def embed_points(points, table):
                coords, labels = points             # a pair the caller packs: its items' kinds not known here
                emb = coords @ table
                emb[labels == -1] += 1.0            # reads emb[mask] before it writes
                return emb
        """, "embed_points((torch.randn(4, 2), torch.tensor([0, -1, 1, -1])), torch.randn(2, 3))"),
        Example("""
            import torch

            @torch.compile
            def confident(prediction, conf_thres: float):
                xc = prediction[..., 4] > conf_thres
                out = []
                for xi, x in enumerate(prediction):
                    out.append(x[xc[xi]].sum(0))        # a row of the mask is a mask
                return out
        """, "confident(torch.rand(2, 6, 5), 0.5)"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def clamp_negative(x, labels):
            x = x.clone()
            x[x < 0] = 0
            low, high = x < 0.5, x > 2
            x[low], x[high] = 0.5, 2.0
            valid = labels != -100
            idx = labels.clamp(min=0)
            return (x * valid).sum() / valid.sum(), x[idx]
    """, "clamp_negative(torch.tensor([1.0, -1.0, 3.0]), torch.tensor([0, -100, 2]))")]

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self.tensors.kind(node.value) not in (TENSOR, WEAK):
            return
        if not any(isinstance(e.slice, cst.Index) and (self.tensors.is_bool(e.slice.value) or
                                                       self._compared(e.slice.value)) for e in node.slice):
            return
        level = 0
        while isinstance(self.ctx.parent(level), (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
            level += 1      # `a[mask], b[mask] = ...`
        if isinstance(self.ctx.parent(level), cst.AssignTarget):
            return          # x[mask] = v writes through the mask: no new shape (x[mask] += v reads it first)
        self.report(node)

    def _compared(self, index: cst.BaseExpression) -> bool:
        """`x[labels == 1]` with `labels` of a kind not known here (unpacked from a tuple argument): a tensor's
        index that is an (in)equality against a number is a mask; were `labels` a Python number, `x[True]`
        would add a dimension, which no code means. Not for operands known to be Python values."""
        return isinstance(index, cst.Comparison) and len(index.comparisons) == 1 and \
            isinstance(index.comparisons[0].operator, (cst.Equal, cst.NotEqual, cst.LessThan, cst.GreaterThan,
                                                      cst.LessThanEqual, cst.GreaterThanEqual)) and \
            isinstance(index.comparisons[0].comparator, (cst.Integer, cst.Float, cst.UnaryOperation)) and \
            isinstance(index.left, (cst.Name, cst.Attribute, cst.Subscript)) and \
            self.tensors.kind(index.left) not in (VALUE,) and self.tensors.kind(index) != VALUE


CREATORS = frozenset({"zeros", "ones", "empty", "rand", "randn", "arange", "eye", "randperm"})
SIZE_METHODS = frozenset({"view", "reshape", "expand", "repeat", "tile", "new_zeros", "new_ones", "new_empty",
                          "topk", "kthvalue"})


@register
class SizeFromTensorValue(TorchRule):
    """Checks for shapes and sizes taken from tensor values: `torch.arange(lengths.max())`,
    `torch.zeros(n)` / `x.view(n, -1)` / `x.topk(k)` with `n`, `k` tensors."""
    code = "DYN403"
    name = "size-from-tensor-value"
    message = "size argument `{expr}` is a tensor value: Dynamo needs it as an int and breaks the graph"
    fix = "Derive sizes from shapes (`x.shape[0]`), or allocate the maximum size and mask (`torch.arange(max_len) < lengths[:, None]`)"
    gb_types = (DATA_OP,)
    fullgraph_raises = False         # fullgraph=True captures the value as an unbacked size
    why = """
        A tensor's shape must be known while tracing. A size read from a tensor's values (a max length, a
        count) is a data-dependent integer: with the default `capture_scalar_outputs=False` Dynamo breaks
        the graph to read it (`Data dependent operator`), and every new value means new shapes downstream.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def padding_mask(lengths):
                positions = torch.arange(lengths.max())
                return positions[None, :] < lengths[:, None]
        """, "padding_mask(torch.tensor([2, 3]))"),
        Example("""
            import torch

            @torch.compile
            def top_half(scores):
                k = (scores > 0).sum()
                return scores.topk(k).values
        """, "top_half(torch.tensor([1.0, -1.0, 2.0]))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def padding_mask(lengths, tokens):
            positions = torch.arange(tokens.shape[1])
            return positions[None, :] < lengths[:, None]
    """, "padding_mask(torch.tensor([2, 3]), torch.ones(2, 3))"), Example("""
        import torch
        from torch import nn


        class Block(nn.Module):
            def forward(self, hidden_states, height, width):     # every caller passes ints from a shape
                return hidden_states.reshape(-1, height, width) + torch.zeros(height, width)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(2)])

            def forward(self, x):
                h, w = x.shape[-2:]
                for block in self.blocks:
                    x = block(x, h, w)
                return x
    """, "torch.compile(Net())(torch.randn(2, 3, 4))")]

    def _sizes(self, args):
        for a in args:
            if isinstance(a, (cst.Tuple, cst.List)):
                yield from (e.value for e in a.elements)
            else:
                yield a

    def _check(self, node: cst.Call, args) -> None:
        for a in self._sizes(args):
            if self.tensors.kind(a) == TENSOR:
                self.report(node, expr=source_of(a))      # Dynamo breaks at the call (its first line)
                return

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        pos, kw = call_args(node)
        if name.startswith("torch.") and name[6:] in CREATORS:
            self._check(node, pos + ([kw["size"]] if "size" in kw else []))
        elif name in ("torch.full", "torch.empty_strided") and pos:
            self._check(node, pos[:1])
        elif not name.startswith("torch.") and isinstance(node.func, cst.Attribute) and \
                self.tensors.kind(node.func.value) in (TENSOR, WEAK):
            m = node.func.attr.value
            if m in SIZE_METHODS:
                self._check(node, pos[:1] if m in ("topk", "kthvalue") else pos)
            elif m == "new_full" and pos:
                self._check(node, pos[:1])
            elif m == "narrow" and len(pos) == 3:
                self._check(node, pos[2:])


@register
class SplitSizesFromTensor(TorchRule):
    """Checks for `split` / `split_with_sizes` / `tensor_split` with sizes read from a tensor
    (`x.split(counts.tolist())`), the usual way to group tokens per expert."""
    code = "DYN404"
    name = "split-sizes-from-tensor"
    message = "split sizes `{expr}` come from tensor values: Dynamo breaks the graph to read them"
    fix = ("Keep fixed-size groups: pad each group to a capacity and use `x.view(n_groups, capacity, -1)`, or "
           "sort by group and use `torch.segment_reduce`/`index_add_` with the group ids")
    gb_types = (DATA_OP, "Tensor.tolist() with non-integer tensor")
    why = """
        Each chunk's size is a value in the counts tensor, so the output shapes are only known after the
        counts are computed. Dynamo breaks at `.tolist()` (`Data dependent operator` for integer counts;
        float counts always break), and everything after the split sees new shapes on every call.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def per_expert_sums(tokens, expert_ids):
            counts = torch.bincount(expert_ids, minlength=4)
            groups = tokens[expert_ids.argsort()].split(counts.tolist())
            return [g.sum(0) for g in groups]
    """, "per_expert_sums(torch.ones(6, 2), torch.tensor([0, 1, 1, 3, 0, 2]))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def per_expert_sums(tokens, expert_ids):
            sums = tokens.new_zeros(4, tokens.shape[1])
            return sums.index_add(0, expert_ids, tokens)
    """, "per_expert_sums(torch.ones(6, 2), torch.tensor([0, 1, 1, 3, 0, 2]))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        pos, kw = call_args(node)
        if name.startswith("torch.") and name[6:] in SPLITS:
            sizes = pos[1:2] or [kw.get(k) for k in ("split_size_or_sections", "split_sizes", "indices_or_sections")
                                 if k in kw]
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in SPLITS and \
                not name.startswith("torch.") and self.tensors.kind(node.func.value) in (TENSOR, WEAK):
            sizes = pos[:1] or [kw[k] for k in ("split_size", "split_sizes", "indices_or_sections") if k in kw]
        else:
            return
        for s in sizes:
            if isinstance(s, cst.Call) and isinstance(s.func, cst.Attribute) and s.func.attr.value == "tolist" \
                    and self.tensors.kind(s.func.value) in (TENSOR, WEAK):
                self.report(s, expr=source_of(s))
                return


NP_TRACED_OTHER = frozenset({"seed", "shuffle"})


_GENERATOR_METHODS = methods_of(NUMPY_CLASSES)


@register
class NumpyRandomInCompiledCode(TorchRule):
    """Checks for `np.random` calls Dynamo cannot keep in the graph: scalar draws (`np.random.rand()`,
    `np.random.uniform(a, b)`), `np.random.choice`, and the functions torch's NumPy layer does not implement
    (`np.random.permutation`, `np.random.default_rng`, `np.random.binomial`, ...)."""
    code = "DYN405"
    name = "numpy-random-in-compiled-code"
    message = "`{call}` {why}: Dynamo breaks the graph"
    fix = "Use torch's generators (`torch.rand`, `torch.randn`, `torch.randperm`, `torch.multinomial`) so the draw is a graph op"
    gb_types = (DATA_OP, "attempted to trace numpy function unsupported by PyTorch", "Unsupported method call")
    why = """
        Dynamo traces NumPy by translating it to torch (`torch._numpy`). Array draws with a `size` become
        torch random ops, but a scalar draw returns a Python float read from a tensor (`Data dependent
        operator`), `np.random.choice` checks its probabilities on the host, and the rest of `np.random`
        (`permutation`, `default_rng`, `binomial`, ...) is not implemented (`attempted to trace numpy
        function unsupported by PyTorch`): each breaks the graph. So does every draw from a generator made
        outside the compiled code (`rng = np.random.default_rng(0)`, a `RandomState`): its methods are C
        methods Dynamo cannot call (`Unsupported method call`, measured per method by
        `bench/torch_methods.py`).
    """
    INVALID = [
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def augment(x):
                scale = np.random.uniform(0.8, 1.2)
                return x * scale
        """, "augment(torch.ones(4))"),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def shuffled(x):
                order = np.random.permutation(x.shape[0])
                return x[torch.from_numpy(order)]
        """, "shuffled(torch.ones(4))"),
        Example("""
            import numpy as np
            import torch

            class CutMix:
                def __init__(self, seed=0):
                    self.rng = np.random.default_rng(seed)

                @torch.compile
                def __call__(self, x):
                    lam = float(self.rng.beta(1.0, 1.0))
                    return lam * x + (1 - lam) * x.flip(0)
        """, "CutMix()(torch.ones(4))"),
    ]
    VALID = [Example("""
        import numpy as np
        import torch

        @torch.compile
        def augment(x):
            noise = torch.from_numpy(np.random.uniform(0.8, 1.2, size=x.shape[0]))
            return x * noise + torch.from_numpy(np.random.randn(x.shape[0]))
    """, "augment(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if not name.startswith("numpy.random."):
            hit = measured_call(self, node, NUMPY_CLASSES, _GENERATOR_METHODS)
            if hit is not None:         # a draw from a generator made outside: `rng.integers(0, n)`
                self.report(node, call=f"{source_of(node.func.value)}.{node.func.attr.value}()",
                            why="is a method of a NumPy random generator, which Dynamo cannot call")
            return
        fn = name[len("numpy.random."):]
        if "." in fn or fn in NP_TRACED_OTHER:
            return
        pos, kw = call_args(node)
        if fn in NP_TRACED_DRAWS:
            if not np_sized_draw(node, fn):
                self.report(node, call=f"np.random.{fn}()", why="without a `size` returns a Python scalar")
        elif fn == "choice":
            self.report(node, call="np.random.choice()", why="checks its probabilities on the host")
        else:
            self.report(node, call=f"np.random.{fn}()", why="is not implemented by torch's NumPy layer")


@register
class OneHotWithoutNumClasses(TorchRule):
    """Checks for `F.one_hot(t)` (and `torch.nn.functional.one_hot`) in traced code without `num_classes`."""
    code = "DYN406"
    name = "one-hot-without-num-classes"
    message = "`{call}` has no `num_classes`: its width is the largest label plus one, a value Dynamo cannot know, so it breaks the graph"
    fix = "Pass `num_classes=` (the vocabulary or label count, a Python int)"
    gb_types = ("Attempted to use `torch.nn.functional.one_hot` with data-dependent output shape",)
    why = """
        Without `num_classes`, `one_hot` makes as many columns as the largest label plus one: the output's shape
        depends on the values of the input, which a traced graph cannot express, so Dynamo breaks the graph at
        the call (`Attempted to use torch.nn.functional.one_hot with data-dependent output shape`). With
        `num_classes` given as an int, the shape is known and the call traces.
    """
    INVALID = [Example("""
        import torch
        import torch.nn.functional as F

        @torch.compile
        def class_counts(logits):
            labels = logits.argmax(-1)
            return F.one_hot(labels).sum(0) + 1
    """, "class_counts(torch.randn(6, 4))")]
    VALID = [Example("""
        import torch
        import torch.nn.functional as F

        @torch.compile
        def class_counts(logits):
            labels = logits.argmax(-1)
            return F.one_hot(labels, num_classes=logits.shape[-1]).sum(0) + 1
    """, "class_counts(torch.randn(6, 4))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        if name in ("torch.nn.functional.one_hot", "torch._C._nn.one_hot"):
            positional = [a for a in node.args if a.keyword is None]
            if len(positional) < 2 and not any(a.star for a in node.args) and keyword_arg(node, "num_classes") is None:
                self.report(node, call=source_of(node))
