"""Lightning-flavoured module hooks: logging, per-epoch aggregation, image dumps."""
from collections import defaultdict

import torch

DEBUG_DUMPS = False


class LoggingMixin:
    def __init__(self):
        self._logged = defaultdict(list)
        self.dumped = []

    def log(self, name, value, on_step=False):
        if isinstance(value, torch.Tensor):
            value = value.detach()
        self._logged[name].append(value)
        if on_step:
            print(f"[step] {name}={float(value):.4f}")

    def epoch_metrics(self):
        out = {k: torch.stack([torch.as_tensor(v) for v in vs]).mean() for k, vs in self._logged.items()}
        self._logged.clear()
        return out

    def maybe_dump(self, batch_idx, tensor):
        if DEBUG_DUMPS and batch_idx == 0:
            self.dumped.append(tensor[:2].detach().clone())
