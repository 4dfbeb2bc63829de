import functools
import warnings
from copy import deepcopy
from typing import Any, Callable, Dict, Optional

import torch
import torch.nn as nn


def rank_zero_warn(message, category=UserWarning, stacklevel=2):
    warnings.warn(message, category=category, stacklevel=stacklevel)


def _safe_divide(num: torch.Tensor, denom: torch.Tensor) -> torch.Tensor:
    denom = denom.clone()
    denom[denom == 0.0] = 1
    return num / denom


def dim_zero_sum(x):
    return torch.sum(x, dim=0)


class Metric(nn.Module):
    full_state_update: Optional[bool] = None
    higher_is_better: Optional[bool] = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.compute_on_cpu = kwargs.pop("compute_on_cpu", False)
        self.dist_sync_on_step = kwargs.pop("dist_sync_on_step", False)
        self._update_signature = None
        self.update: Callable = self._wrap_update(self.update)
        self.compute: Callable = self._wrap_compute(self.compute)
        self._computed = None
        self._forward_cache = None
        self._update_count = 0
        self._to_sync = True
        self._should_unsync = True
        self._enable_grad = False
        self._defaults: Dict[str, Any] = {}
        self._persistent: Dict[str, bool] = {}
        self._reductions: Dict[str, Any] = {}
        self._is_synced = False
        self._cache = None

    def add_state(self, name: str, default, dist_reduce_fx=None, persistent: bool = False) -> None:
        if dist_reduce_fx == "sum":
            dist_reduce_fx = dim_zero_sum
        setattr(self, name, default)
        self._defaults[name] = deepcopy(default)
        self._persistent[name] = persistent
        self._reductions[name] = dist_reduce_fx

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self.full_state_update:
            self._forward_cache = self._forward_full_state_update(*args, **kwargs)
        else:
            self._forward_cache = self._forward_reduce_state_update(*args, **kwargs)
        return self._forward_cache

    def _forward_reduce_state_update(self, *args: Any, **kwargs: Any) -> Any:
        global_state = {attr: getattr(self, attr) for attr in self._defaults}
        _update_count = self._update_count
        self.reset()
        self._to_sync = self.dist_sync_on_step
        self._should_unsync = False
        self._enable_grad = True
        self.update(*args, **kwargs)
        batch_val = self.compute()
        self._update_count = _update_count + 1
        with torch.no_grad():
            self._reduce_states(global_state)
        self._is_synced = False
        self._should_unsync = True
        self._to_sync = True
        self._computed = None
        self._enable_grad = False
        return batch_val

    def _reduce_states(self, incoming_state: Dict[str, Any]) -> None:
        for attr in self._defaults:
            local_state = getattr(self, attr)
            global_state = incoming_state[attr]
            reduce_fn = self._reductions[attr]
            if reduce_fn == dim_zero_sum:
                reduced = global_state + local_state
            elif reduce_fn is None and isinstance(global_state, torch.Tensor):
                reduced = global_state + local_state
            else:
                reduced = torch.stack([global_state, local_state]).sum(0)
            setattr(self, attr, reduced)

    def _wrap_update(self, update: Callable) -> Callable:
        @functools.wraps(update)
        def wrapped_func(*args: Any, **kwargs: Any) -> None:
            self._computed = None
            self._update_count += 1
            with torch.set_grad_enabled(self._enable_grad):
                update(*args, **kwargs)
            if self.compute_on_cpu:
                self._move_list_states_to_cpu()

        return wrapped_func

    def _move_list_states_to_cpu(self) -> None:
        for key in self._defaults:
            current_val = getattr(self, key)
            if isinstance(current_val, list):
                setattr(self, key, [cur_v.to("cpu") for cur_v in current_val])

    def _wrap_compute(self, compute: Callable) -> Callable:
        @functools.wraps(compute)
        def wrapped_func(*args: Any, **kwargs: Any) -> Any:
            if self._update_count == 0:
                rank_zero_warn(
                    f"The ``compute`` method of metric {self.__class__.__name__}"
                    " was called before the ``update`` method which may lead to errors,"
                    " as metric states have not yet been updated.",
                )
            if self._computed is not None:
                return self._computed
            value = compute(*args, **kwargs)
            self._computed = value
            return value

        return wrapped_func

    def reset(self) -> None:
        self._update_count = 0
        self._forward_cache = None
        self._computed = None
        for attr, default in self._defaults.items():
            current_val = getattr(self, attr)
            if isinstance(default, torch.Tensor):
                setattr(self, attr, default.detach().clone().to(current_val.device))
            else:
                setattr(self, attr, [])
        self._cache = None
        self._is_synced = False

    def update(self, *_: Any, **__: Any) -> None:
        raise NotImplementedError

    def compute(self) -> Any:
        raise NotImplementedError


def _multiclass_stat_scores_format(preds: torch.Tensor, target: torch.Tensor, top_k: int = 1):
    if preds.ndim == target.ndim + 1:
        if preds.is_floating_point() and not ((preds >= 0) * (preds <= 1)).all():
            preds = preds.softmax(1)
        preds = preds.argmax(dim=1)
    return preds.flatten(), target.flatten()


def _multiclass_stat_scores_update(preds, target, num_classes: int):
    unique_mapping = target * num_classes + preds
    bins = torch.bincount(unique_mapping, minlength=num_classes**2)
    confmat = bins.reshape(num_classes, num_classes)
    tp = confmat.diag()
    fp = confmat.sum(0) - tp
    fn = confmat.sum(1) - tp
    tn = confmat.sum() - (fp + fn + tp)
    return tp, fp, tn, fn


class MulticlassAccuracy(Metric):
    full_state_update = False
    higher_is_better = True

    def __init__(self, num_classes: int, average: str = "macro", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_classes = num_classes
        self.average = average
        for s in ("tp", "fp", "tn", "fn"):
            self.add_state(s, default=torch.zeros(num_classes, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        preds, target = _multiclass_stat_scores_format(preds, target)
        tp, fp, tn, fn = _multiclass_stat_scores_update(preds, target, self.num_classes)
        self.tp += tp
        self.fp += fp
        self.tn += tn
        self.fn += fn

    def compute(self) -> torch.Tensor:
        score = _safe_divide(self.tp.float(), (self.tp + self.fn).float())
        if self.average == "macro":
            return score.mean()
        return score


def main():
    torch.manual_seed(0)
    metric = torch.compile(MulticlassAccuracy(num_classes=5))
    for _ in range(3):
        logits = torch.randn(16, 5)
        target = torch.randint(0, 5, (16,))
        batch_acc = metric(logits, target)
    return batch_acc


if __name__ == "__main__":
    main()
