import torch
import torch.nn.functional as F

from .model import PointNet2Cls


def normalize_cloud(pc):
    centroid = pc.mean(dim=1, keepdim=True)
    pc = pc - centroid
    scale = pc.norm(dim=-1).max(dim=1, keepdim=True)[0].unsqueeze(-1)
    return pc / scale


def train_epoch(model, optimizer, batches):
    model.train()
    total = 0.0
    for xyz, label in batches:
        logits = model(normalize_cloud(xyz))
        loss = F.cross_entropy(logits, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(batches)


def main():
    torch.manual_seed(0)
    model = PointNet2Cls(num_classes=4)
    model.compile()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    batches = [(torch.randn(4, 64, 3), torch.randint(0, 4, (4,))) for _ in range(2)]
    print("epoch loss", train_epoch(model, optimizer, batches))

    # coarser sampling for the larger validation clouds
    model.eval()
    model.sa1.npoint = 48
    with torch.no_grad():
        out = model(normalize_cloud(torch.randn(2, 96, 3)))
    print("val logits", out.shape)


if __name__ == "__main__":
    main()
