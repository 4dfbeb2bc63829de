"""Test-time augmentation for a segmentation-ish classifier, with per-sample abstention."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def augment(x, name):
    if name == "identity":
        return x
    if name == "hflip":
        return x.flip(-1)
    if name == "vflip":
        return x.flip(-2)
    if name == "rot90":
        return torch.rot90(x, 1, dims=(-2, -1))
    if name.startswith("scale"):
        factor = float(name[len("scale"):])
        size = [int(s * factor) for s in x.shape[-2:]]
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)
    raise ValueError(name)


class TTAPredictor:
    def __init__(self, model, transforms, min_confidence=0.3):
        self.model = model.eval()
        self.transforms = transforms
        self.min_confidence = min_confidence
        self.n_abstained = 0

    @torch.compile
    def predict(self, x):
        probs = torch.stack([self.model(augment(x, t)).softmax(-1) for t in self.transforms]).mean(0)
        conf, label = probs.max(-1)
        low = conf < self.min_confidence
        label = torch.where(low, torch.full_like(label, -1), label)
        self.n_abstained += int(low.sum())
        return label, conf


def main():
    torch.manual_seed(0)
    model = ConvNet()
    tta = TTAPredictor(model, ["identity", "hflip"])
    images = [torch.randn(4, 3, 24, 24) for _ in range(3)]
    results = []
    with torch.no_grad():
        for batch in images:
            results.append(tta.predict(batch))
        # heavier TTA for the hard split
        tta.transforms = ["identity", "hflip", "vflip", "scale1.25"]
        for batch in images[:2]:
            results.append(tta.predict(batch))
    return tta.n_abstained, len(results)
