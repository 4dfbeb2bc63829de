"""Segmentation model whose forward takes an Enum mode (train / val / predict) and returns mode-specific dicts."""
from enum import Enum

import torch
import torch.nn as nn
import torch.nn.functional as F


class Mode(Enum):
    TRAIN = "train"
    VAL = "val"
    PREDICT = "predict"


class SegHead(nn.Module):
    def __init__(self, in_ch=3, num_classes=4, ignore_index=255):
        super().__init__()
        self.ignore_index = ignore_index
        self.backbone = nn.Sequential(nn.Conv2d(in_ch, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.classifier = nn.Conv2d(16, num_classes, 1)

    def forward(self, images, mode: Mode, targets=None):
        logits = self.classifier(self.backbone(images))
        if mode is Mode.TRAIN:
            loss = F.cross_entropy(logits, targets, ignore_index=self.ignore_index)
            return {"loss": loss}
        preds = logits.argmax(1)
        if mode is Mode.VAL:
            valid = targets != self.ignore_index
            correct = ((preds == targets) & valid).sum()
            return {"val_loss": F.cross_entropy(logits, targets, ignore_index=self.ignore_index),
                    "pixel_acc": correct.float() / valid.sum().clamp(min=1)}
        classes_present = torch.unique(preds).tolist()
        return {"masks": preds, "classes": classes_present}


def run_epoch(model, step, mode, loader, optimizer=None):
    model.train(mode is Mode.TRAIN)
    outs = []
    for images, targets in loader:
        with torch.set_grad_enabled(mode is Mode.TRAIN):
            out = step(images, mode, targets)
        if optimizer is not None:
            optimizer.zero_grad()
            out["loss"].backward()
            optimizer.step()
        outs.append(out)
    return outs


def main():
    torch.manual_seed(0)
    model = SegHead()
    step = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = [(torch.randn(2, 3, 16, 16), torch.randint(0, 4, (2, 16, 16))) for _ in range(2)]
    run_epoch(model, step, Mode.TRAIN, loader, opt)
    run_epoch(model, step, Mode.VAL, loader)
    preds = run_epoch(model, step, Mode.PREDICT, [(loader[0][0], None)])
    assert preds[0]["masks"].shape == (2, 16, 16)


if __name__ == "__main__":
    main()
