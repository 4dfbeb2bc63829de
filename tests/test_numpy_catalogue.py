"""The catalogue of NumPy functions Dynamo cannot trace (dynlint/rules/numpy_untraced.py, written by
bench/numpy_catalogue.py) against the installed torch's own map of NumPy functions to their `torch._numpy` twins:
none it lists has a twin, and every public function of the mapped modules without one is listed."""
import pytest


def test_the_catalogue_is_what_torch_maps():
    pytest.importorskip("torch")
    import numpy
    from torch._dynamo.utils import NP_TO_TNP_MODULE
    from torch._dynamo.variables.misc import get_np_to_tnp_map

    from dynlint.rules.numpy_untraced import NUMPY_UNTRACED
    traced = set(get_np_to_tnp_map())
    modules = {m.__name__: m for m in NP_TO_TNP_MODULE}
    for name in NUMPY_UNTRACED:
        module, _, fn = name.rpartition(".")
        obj = getattr(modules[module], fn, None)
        assert obj is None or obj not in traced, name          # (None: this NumPy has no such function)
    missing = [f"{m.__name__}.{n}" for m in NP_TO_TNP_MODULE for n in dir(m)
               if not n.startswith("_") and callable(getattr(m, n)) and not isinstance(getattr(m, n), type)
               and getattr(m, n) not in traced and f"{m.__name__}.{n}" not in NUMPY_UNTRACED]
    assert not missing, f"run bench/numpy_catalogue.py (NumPy {numpy.__version__}): {missing[:5]}"
    assert "numpy.argpartition" in NUMPY_UNTRACED and "numpy.argsort" not in NUMPY_UNTRACED
