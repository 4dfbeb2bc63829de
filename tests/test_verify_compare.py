"""How --verify compares compiled outputs with eager ones (runtime_check/compare.py), on real tensors: leaf by
leaf through dataclasses, dicts, named tuples and arbitrary objects (a cache's tensors), the dtype's allclose,
then PyTorch's benchmark-harness rule against a float64 reference, and the leaf named in the verdict."""
import collections
import dataclasses

import pytest

torch = pytest.importorskip("torch")

from dynlint.runtime_check.compare import NoReference, compare_outputs, snapshot  # noqa: E402


class Layer:
    def __init__(self, keys, values):
        self.keys, self.values, self.is_initialized = keys, values, True


class Cache:                        # a DynamicCache's shape: layers of key/value tensors, identity ==
    def __init__(self, layers):
        self.layers = layers


class Slotted:
    __slots__ = ("state", "step")

    def __init__(self, state, step):
        self.state, self.step = state, step


@dataclasses.dataclass
class Output:                       # a ModelOutput's shape
    logits: torch.Tensor
    cache: Cache


def model_output(shift=0.0):
    torch.manual_seed(0)
    layers = [Layer(torch.randn(2, 4), torch.randn(2, 4)) for _ in range(2)]
    layers[1].values += shift
    return Output(torch.randn(3, 5), Cache(layers))


def test_a_cache_object_is_compared_by_its_tensors_and_the_leaf_is_named():
    assert compare_outputs([snapshot(model_output())], [snapshot(model_output())]).status == "match"
    a = compare_outputs([snapshot(model_output())], [snapshot(model_output(shift=0.5))])
    assert (a.status, a.where) == ("mismatch", "call 0: out.cache.layers[1].values")
    assert a.detail.startswith("values differ: max abs diff 0.5") and a.max_abs_diff == pytest.approx(0.5)


def test_a_snapshot_does_not_follow_later_in_place_updates():
    out = model_output()
    kept = snapshot(out)
    out.cache.layers[0].keys.add_(1.0)            # the cache is updated in place by the next call
    slotted = Slotted(torch.zeros(3), 1)
    kept_slotted = snapshot(slotted)
    slotted.state.add_(2.0)
    assert compare_outputs([kept, kept_slotted], [snapshot(model_output()), snapshot(Slotted(torch.zeros(3), 1))]
                           ).status == "match"
    a = compare_outputs([kept_slotted], [snapshot(Slotted(torch.zeros(3), 2))])
    assert (a.status, a.where, a.detail) == ("mismatch", "call 0: out.step", "1 vs 2")


def test_objects_without_tensors_or_a_usable_eq_are_skipped_and_containers_keep_their_paths():
    Pair = collections.namedtuple("Pair", "first second")
    eager = [{"out": Pair(torch.ones(2), object()), "name": "a"}]
    assert compare_outputs([snapshot(e) for e in eager], [snapshot({"out": Pair(torch.ones(2), object()),
                                                                    "name": "a"})]).status == "match"
    a = compare_outputs(eager, [{"out": Pair(torch.ones(2) * 2, object()), "name": "a"}])
    assert a.where == "call 0: out['out'][0]"


def reference_of(*outputs):
    calls = []

    def reference():
        calls.append(1)
        return list(outputs)
    return reference, calls


def test_outside_allclose_a_compiled_result_as_accurate_as_eager_is_accepted_against_float64():
    torch.manual_seed(0)
    exact = torch.randn(4096, dtype=torch.float64) * 4
    noise = torch.randn(4096, dtype=torch.float64) * 0.02
    eager, compiled = (exact + noise).to(torch.bfloat16), (exact - noise).to(torch.bfloat16)
    assert not torch.allclose(compiled, eager, rtol=1.6e-2, atol=1e-2)       # bf16's allclose fails
    reference, calls = reference_of(exact)
    a = compare_outputs([eager], [compiled], reference=reference)
    assert a.status == "match" and a.where == "call 0: out" and len(calls) == 1
    assert "accepted by the float64 reference: RMSE from float64: compiled" in a.detail and "<= 3 x eager" in a.detail
    # a compiled result further from float64 than eager's rounding explains is a mismatch, with the figures
    wrong = (exact + 0.2).to(torch.bfloat16)
    a = compare_outputs([eager], [wrong], reference=reference)
    assert a.status == "mismatch" and a.where == "call 0: out"
    assert "max abs diff" in a.detail and "RMSE from float64: compiled" in a.detail and "> 3 x eager" in a.detail


def test_the_reference_is_made_only_when_needed_and_a_user_tolerance_is_plain_allclose():
    x = torch.randn(8)
    reference, calls = reference_of(x.double())
    assert compare_outputs([x], [x.clone()], reference=reference).status == "match" and not calls
    a = compare_outputs([x], [x + 0.5], rtol=1e-3, atol=1e-3, reference=reference)
    assert a.status == "mismatch" and not calls and "RMSE" not in a.detail


def test_without_a_float64_reference_the_allclose_verdict_stands_and_says_so():
    x = torch.randn(8, dtype=torch.bfloat16)

    def fails():
        return [torch.nn.functional.linear(x.double(), torch.ones(8, 8, dtype=torch.bfloat16))]
    a = compare_outputs([x], [x + 1], reference=fails)
    assert a.status == "mismatch" and "no float64 reference could be made: RuntimeError: " in a.detail

    def cannot():
        raise NoReference("a training example's steps are not run again in float64")
    a = compare_outputs([x], [x + 1], reference=cannot)
    assert a.status == "mismatch" and "no float64 reference could be made: a training example's steps" in a.detail
    reference, _ = reference_of(x)                 # the float64 run gave no float64 tensor there
    a = compare_outputs([x], [x + 1], reference=reference)
    assert a.status == "mismatch" and "no float64 reference for this output" in a.detail
