"""PyTorch3D-like mesh deformation: edges from faces at init, uniform Laplacian smoothing and edge loss (compile-clean)."""
import torch
import torch.nn as nn


def ico_like_mesh():
    verts = torch.tensor([[0.0, 0.0, 1.0], [0.94, 0.0, -0.33], [-0.47, 0.82, -0.33], [-0.47, -0.82, -0.33],
                          [0.5, 0.5, 0.5], [-0.5, 0.5, 0.5]])
    faces = torch.tensor([[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2], [0, 4, 1], [0, 2, 5]])
    return verts, faces


def edges_from_faces(faces):
    e = torch.cat([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]], 0)
    e, _ = e.sort(1)
    return torch.unique(e, dim=0)


class Meshes:
    def __init__(self, verts, faces):
        self.verts = verts
        self.faces = faces
        self.edges = edges_from_faces(faces)
        deg = torch.zeros(len(verts)).index_add_(0, self.edges.flatten(), torch.ones(self.edges.numel()))
        self.inv_degree = 1.0 / deg.clamp(min=1)

    def offset_verts(self, offsets):
        return Meshes(self.verts + offsets, self.faces)


def mesh_laplacian_smoothing(verts, edges, inv_degree):
    v0, v1 = edges[:, 0], edges[:, 1]
    nbr_sum = torch.zeros_like(verts)
    nbr_sum = nbr_sum.index_add(0, v0, verts[v1]).index_add(0, v1, verts[v0])
    lap = nbr_sum * inv_degree[:, None] - verts
    return lap.norm(dim=1).mean()


def mesh_edge_loss(verts, edges, target_length=0.0):
    v0, v1 = verts[edges[:, 0]], verts[edges[:, 1]]
    return ((v0 - v1).norm(dim=1) - target_length).pow(2).mean()


def chamfer_to_points(verts, target):
    d = torch.cdist(verts, target)
    return d.min(1).values.pow(2).mean() + d.min(0).values.pow(2).mean()


class DeformObjective(nn.Module):
    def __init__(self, w_chamfer=1.0, w_edge=0.5, w_lap=0.1):
        super().__init__()
        self.w_chamfer, self.w_edge, self.w_lap = w_chamfer, w_edge, w_lap

    def forward(self, verts, edges, inv_degree, target):
        return (self.w_chamfer * chamfer_to_points(verts, target)
                + self.w_edge * mesh_edge_loss(verts, edges)
                + self.w_lap * mesh_laplacian_smoothing(verts, edges, inv_degree))


def main():
    torch.manual_seed(0)
    src = Meshes(*ico_like_mesh())
    target = torch.randn(50, 3)
    target = target / target.norm(dim=1, keepdim=True)
    deform = torch.zeros_like(src.verts, requires_grad=True)
    opt = torch.optim.SGD([deform], lr=0.5, momentum=0.9)
    objective = torch.compile(DeformObjective())
    for _ in range(4):
        mesh = src.offset_verts(deform)
        loss = objective(mesh.verts, src.edges, src.inv_degree, target)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
