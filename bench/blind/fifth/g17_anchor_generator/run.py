import torch
import torch.nn.functional as F
from torch import nn

from .anchor_utils import AnchorGenerator, ImageList


class TinyFPNBackbone(nn.Module):
    def __init__(self, out_channels=8):
        super().__init__()
        self.stem = nn.Conv2d(3, out_channels, 3, stride=4, padding=1)
        self.c2 = nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1)
        self.c3 = nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1)

    def forward(self, x):
        p1 = F.relu(self.stem(x))
        p2 = F.relu(self.c2(p1))
        p3 = F.relu(self.c3(p2))
        return [p1, p2, p3]


class RPNHead(nn.Module):
    def __init__(self, channels, num_anchors):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.cls_logits = nn.Conv2d(channels, num_anchors, 1)
        self.bbox_pred = nn.Conv2d(channels, num_anchors * 4, 1)

    def forward(self, features):
        logits, deltas = [], []
        for f in features:
            t = F.relu(self.conv(f))
            logits.append(self.cls_logits(t).permute(0, 2, 3, 1).flatten(1))
            deltas.append(self.bbox_pred(t).permute(0, 2, 3, 1).reshape(f.shape[0], -1, 4))
        return torch.cat(logits, 1), torch.cat(deltas, 1)


class ProposalNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyFPNBackbone()
        self.anchor_generator = AnchorGenerator()
        self.head = RPNHead(8, self.anchor_generator.num_anchors_per_location()[0])

    def forward(self, images, image_sizes):
        image_list = ImageList(images, image_sizes)
        features = self.backbone(images)
        objectness, deltas = self.head(features)
        anchors = self.anchor_generator(image_list, features)
        return objectness, deltas, anchors


def batch_images(images, size_divisible=32):
    max_h = max(img.shape[-2] for img in images)
    max_w = max(img.shape[-1] for img in images)
    max_h = (max_h + size_divisible - 1) // size_divisible * size_divisible
    max_w = (max_w + size_divisible - 1) // size_divisible * size_divisible
    batched = images[0].new_zeros(len(images), 3, max_h, max_w)
    for img, pad in zip(images, batched):
        pad[:, : img.shape[-2], : img.shape[-1]].copy_(img)
    return batched, [tuple(img.shape[-2:]) for img in images]


def main():
    torch.manual_seed(0)
    model = ProposalNetwork().eval()
    model = torch.compile(model)
    requests = [
        [torch.rand(3, 60, 64), torch.rand(3, 64, 50)],
        [torch.rand(3, 60, 64), torch.rand(3, 64, 50)],
        [torch.rand(3, 90, 100)],
    ]
    with torch.no_grad():
        for imgs in requests:
            batched, sizes = batch_images(imgs)
            objectness, deltas, anchors = model(batched, sizes)
            print(tuple(batched.shape), objectness.shape[1], anchors[0].shape[0])


if __name__ == "__main__":
    main()
