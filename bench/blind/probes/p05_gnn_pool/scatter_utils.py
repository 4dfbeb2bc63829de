"""Tiny torch_scatter replacements used by the GAT layer and readout."""
import torch


def scatter_sum(src, index, dim_size=None):
    if dim_size is None:
        dim_size = int(index.max()) + 1
    out = src.new_zeros((dim_size,) + src.shape[1:])
    return out.index_add_(0, index, src)


def scatter_max(src, index, dim_size):
    out = src.new_full((dim_size,) + src.shape[1:], float("-inf"))
    idx = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
    return out.scatter_reduce(0, idx, src, reduce="amax", include_self=True)


def segment_softmax(scores, index, num_nodes):
    smax = scatter_max(scores, index, num_nodes)
    scores = (scores - smax[index]).exp()
    denom = scatter_sum(scores, index, num_nodes)
    return scores / (denom[index] + 1e-16)


def global_mean_pool(x, batch):
    num_graphs = batch.max().item() + 1
    sums = scatter_sum(x, batch, num_graphs)
    counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1)
    return sums / counts[:, None].to(x.dtype)
