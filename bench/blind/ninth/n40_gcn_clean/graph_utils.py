import torch


def normalized_edges(edge_index, num_nodes):
    """Symmetric GCN normalisation computed once, eagerly, before training."""
    loops = torch.arange(num_nodes).unsqueeze(0).repeat(2, 1)
    edge_index = torch.cat([edge_index, loops], dim=1)
    row, col = edge_index
    deg = torch.zeros(num_nodes).index_add_(0, col, torch.ones(col.shape[0]))
    dinv = deg.pow(-0.5)
    dinv[torch.isinf(dinv)] = 0
    return edge_index, dinv[row] * dinv[col]


def random_graph(num_nodes, num_edges, generator):
    src = torch.randint(0, num_nodes, (num_edges,), generator=generator)
    dst = torch.randint(0, num_nodes, (num_edges,), generator=generator)
    return torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
