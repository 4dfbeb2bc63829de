import math


class WarmupCosine:
    """Linear warmup followed by cosine decay; plain Python so it can be checkpointed as a dict."""

    def __init__(self, base_lr, warmup_steps, total_steps, min_lr=0.0):
        self.base_lr, self.warmup_steps, self.total_steps, self.min_lr = base_lr, warmup_steps, total_steps, min_lr

    def __call__(self, step):
        if step < self.warmup_steps:
            return self.base_lr * (step + 1) / self.warmup_steps
        progress = (step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps)
        return self.min_lr + 0.5 * (self.base_lr - self.min_lr) * (1 + math.cos(math.pi * min(progress, 1.0)))

    def state_dict(self):
        return dict(self.__dict__)
