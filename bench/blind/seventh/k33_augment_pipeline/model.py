import torch.nn as nn

from .augment import BatchAugment


class AugmentedClassifier(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.augment = BatchAugment()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, n_classes)

    def forward(self, x):
        if self.training:
            x = self.augment(x)
        return self.fc(self.features(x).flatten(1))
