"""Transfer-learning schedule: backbone frozen for the first epochs, then unfrozen; eval between epochs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.layer1 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU())
        self.out_channels = 32

    def forward(self, x):
        return self.layer1(self.stem(x))


class FineTuner(nn.Module):
    def __init__(self, n_classes=6, mixup_alpha=0.0):
        super().__init__()
        self.backbone = Backbone()
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(self.backbone.out_channels, n_classes)
        self.label_smoothing = 0.1
        self.frozen = False

    def set_frozen(self, frozen):
        self.frozen = frozen
        for p in self.backbone.parameters():
            p.requires_grad = not frozen

    def forward(self, x, y=None):
        if self.frozen:
            with torch.no_grad():
                feats = self.backbone(x)
        else:
            feats = self.backbone(x)
        logits = self.fc(self.dropout(feats.mean((2, 3))))
        if self.training:
            return F.cross_entropy(logits, y, label_smoothing=self.label_smoothing)
        return logits.softmax(-1)


def main():
    torch.manual_seed(0)
    model = FineTuner()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = [(torch.randn(4, 3, 16, 16), torch.randint(0, 6, (4,))) for _ in range(2)]
    for epoch in range(3):
        model.set_frozen(epoch == 0)
        model.train()
        for x, y in data:
            loss = compiled(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            probs = compiled(data[0][0])
        assert probs.shape == (4, 6)


if __name__ == "__main__":
    main()
