import math

import torch


class ModelEMA:
    """Exponential moving average of model weights with a warmup on the decay (YOLO-style)."""

    def __init__(self, model, decay=0.999, tau=20.0):
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.decay = decay
        self.tau = tau
        self.updates = 0
        self._update = torch.compile(self._update_impl)

    def current_decay(self):
        return self.decay * (1 - math.exp(-self.updates / self.tau))

    @torch.no_grad()
    def _update_impl(self, params):
        self.updates += 1
        d = self.current_decay()
        for k, v in params.items():
            if v.dtype.is_floating_point:
                self.shadow[k].mul_(d).add_(v.detach(), alpha=1 - d)

    def update(self, model):
        self._update(model.state_dict())
