"""torchvision: every builder of `torchvision.models.list_models()` (classification, detection, segmentation,
video, optical flow, quantized) with `weights=None`; classification and segmentation at 10 classes, eval and
train, images batch 2 then 3; detection models in eval only (train needs targets), a list of two images at
two sizes. `sample`: one builder per module (family), all detection builders."""
from . import MODES, Case, Skip, count_params

PACKAGE = "torchvision"
MAX_PARAMS = 150_000_000             # torchvision's builders fix their sizes: nothing to shrink
BATCHES = (2, 3)
SIZE = {"vit": 224, "swin": 224, "maxvit": 224, "inception": 96, "googlenet": 96, "raft": 128}
SMALL_FIRST = ("small", "tiny", "mobilenet", "x0_5", "18", "s", "b0", "b_16", "t", "400mf")


def versions():
    import torchvision

    return {"torchvision": torchvision.__version__}


def _family(name):
    import torchvision.models as tvm

    return tvm.get_model_builder(name).__module__


def jobs(sample=False):
    import torchvision.models as tvm

    names = tvm.list_models()
    if sample:
        groups = {}
        for name in names:
            groups.setdefault(_family(name), []).append(name)
        rank = lambda n: (min((i for i, t in enumerate(SMALL_FIRST) if t in n), default=99), len(n), n)  # noqa: E731
        names = sorted({min(g, key=rank) for g in groups.values()} |
                       {n for n in names if _family(n).startswith("torchvision.models.detection")})
    return [(name, name, ("eval",) if _kind(name) in ("detection", "optical_flow") else MODES) for name in names]


def _kind(name):
    parts = _family(name).split(".")
    return parts[2] if len(parts) > 3 else "classification"


def build(name, cls_name, mode):
    import torch
    import torchvision.models as tvm

    kind = _kind(name)
    kwargs = {"weights": None}
    if kind == "detection":
        kwargs.update(weights_backbone=None, num_classes=3)
        if "ssd" not in name:
            kwargs.update(min_size=64, max_size=96)
    elif kind in ("classification", "segmentation", "quantization"):
        kwargs.update(num_classes=10)
        if kind == "segmentation":
            kwargs.update(weights_backbone=None)
    if kind == "quantization":
        kwargs.update(quantize=False)

    def make():
        return tvm.get_model(name, **kwargs)
    n_params = count_params(make)
    if n_params > MAX_PARAMS:
        raise Skip(f"too large: {n_params} parameters")
    model = make().eval()
    gen = torch.Generator().manual_seed(0)
    size = next((s for prefix, s in SIZE.items() if name.startswith(prefix)), 64)
    if kind == "detection":
        calls = [(([torch.rand(3, 64, 80, generator=gen), torch.rand(3, 72, 64, generator=gen)],), {}),
                 (([torch.rand(3, 96, 96, generator=gen), torch.rand(3, 80, 88, generator=gen)],), {})]
    elif kind == "video":
        calls = [((torch.randn(b, 3, 4, 64, 64, generator=gen),), {}) for b in BATCHES]
    elif kind == "optical_flow":
        calls = [((torch.randn(b, 3, size, size, generator=gen), torch.randn(b, 3, size, size, generator=gen)),
                  {"num_flow_updates": 2}) for b in BATCHES]
    else:
        calls = [((torch.randn(b, 3, size, size, generator=gen),), {}) for b in BATCHES]
    return Case(fn=model, calls=calls, module=model, params=n_params)
