"""timm: every registered model built with random weights (`pretrained=False`, 10 classes), fed images at the
model's own default input size, batch 2 then 3. `sample`: one model per architecture module (the smallest by
its name: test_*, atto, femto, pico, nano, tiny, small first)."""
import re

from . import MODES, Case, Skip, count_params

PACKAGE = "timm"
MAX_PARAMS = 100_000_000             # timm has no small config to shrink to: the smallest variant per family
BATCHES = (2, 3)
SMALL_FIRST = ("test", "atto", "femto", "pico", "nano", "tiny", "xxs", "xs", "small", "s")


def versions():
    import timm
    import torchvision

    return {"timm": timm.__version__, "torchvision": torchvision.__version__}


def _size_rank(name):
    """Smaller variants first: a token `tiny`, `xxs24` (a size word and digits), then the shorter name."""
    tokens = re.split(r"[._]", name)
    ranks = [i for i, size in enumerate(SMALL_FIRST) for t in tokens if re.fullmatch(size + r"\d*", t)]
    return (min(ranks, default=len(SMALL_FIRST)), len(name), name)


def jobs(sample=False):
    import timm

    names = timm.list_models()
    if sample:
        by_module = {}
        for name in names:
            by_module.setdefault(_module(name), []).append(name)
        names = sorted(min(group, key=_size_rank) for group in by_module.values())
    return [(name, name, MODES) for name in names]


def _module(name):
    import timm

    return timm.models.model_entrypoint(name).__module__


def build(name, cls_name, mode):
    import timm
    import torch

    n_params = count_params(lambda: timm.create_model(name, pretrained=False, num_classes=10))
    if n_params > MAX_PARAMS:
        raise Skip(f"too large: {n_params} parameters")
    model = timm.create_model(name, pretrained=False, num_classes=10).eval()
    channels, height, width = model.pretrained_cfg.get("input_size", (3, 224, 224))
    gen = torch.Generator().manual_seed(0)
    calls = [((torch.randn(b, channels, height, width, generator=gen),), {}) for b in BATCHES]
    return Case(fn=model, calls=calls, module=model, params=n_params)
