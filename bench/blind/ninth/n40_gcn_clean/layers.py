import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.compile
def propagate(x, edge_index, edge_weight, num_nodes: int):
    row, col = edge_index[0], edge_index[1]
    msg = x.index_select(0, row) * edge_weight.unsqueeze(-1)
    out = x.new_zeros(num_nodes, x.shape[-1])
    return out.index_add(0, col, msg)


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out, activation=True, dropout=0.5):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.activation = activation
        self.dropout = dropout

    def forward(self, x, edge_index, edge_weight):
        x = F.dropout(x, self.dropout, self.training)
        h = propagate(self.lin(x), edge_index, edge_weight, x.shape[0])
        return F.relu(h) if self.activation else h
