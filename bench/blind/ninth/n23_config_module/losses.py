import torch
import torch.nn.functional as F

from . import config as cfg


def dice_loss(logits, target, smooth):
    probs = logits.softmax(dim=1)
    valid = (target != cfg.IGNORE_INDEX).unsqueeze(1)
    onehot = F.one_hot(target.clamp(max=cfg.NUM_CLASSES - 1), cfg.NUM_CLASSES).permute(0, 3, 1, 2)
    inter = (probs * onehot * valid).sum(dim=(0, 2, 3))
    union = (probs * valid).sum(dim=(0, 2, 3)) + (onehot * valid).sum(dim=(0, 2, 3))
    return 1.0 - ((2 * inter + smooth) / (union + smooth)).mean()


@torch.compile
def segmentation_loss(main_logits, aux_logits, target):
    loss = F.cross_entropy(main_logits, target, ignore_index=cfg.IGNORE_INDEX)
    loss = loss + cfg.AUX_LOSS_WEIGHT * F.cross_entropy(aux_logits, target, ignore_index=cfg.IGNORE_INDEX)
    if cfg.USE_DICE:
        loss = loss + dice_loss(main_logits, target, cfg.DICE_SMOOTH)
    return loss
