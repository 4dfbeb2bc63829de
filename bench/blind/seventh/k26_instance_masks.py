"""Semantic segmentation logits -> per-class instance masks with small-region filtering."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinySegNet(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, n_classes, 1))

    def forward(self, x):
        return self.body(x)


def masks_from_logits(logits, min_area=4, ignore_index=0):
    probs = F.softmax(logits, dim=0)
    labels = probs.argmax(0)
    present = torch.unique(labels)
    masks, classes, scores = [], [], []
    for c in present:
        if c == ignore_index:
            continue
        m = labels == c
        area = m.sum()
        if area < min_area:
            continue
        masks.append(m)
        classes.append(c)
        scores.append((probs[c] * m).sum() / area)
    if not masks:
        return torch.zeros(0, *labels.shape, dtype=torch.bool), torch.zeros(0, dtype=torch.long), torch.zeros(0)
    return torch.stack(masks), torch.stack(classes), torch.stack(scores)


def main():
    torch.manual_seed(0)
    net = torch.compile(TinySegNet().eval())
    post = torch.compile(masks_from_logits)
    with torch.no_grad():
        for size in (16, 16, 24):
            img = torch.randn(1, 3, size, size)
            logits = net(img)[0]
            m, c, s = post(logits, min_area=8 if size > 16 else 4)
            print(m.shape, c.tolist())


if __name__ == "__main__":
    main()
