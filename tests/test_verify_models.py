"""`dynlint check --verify` on a transformers model, as people compile them (issue 37): a tiny Llama built from
its config with random weights (nothing downloaded), called with `use_cache=True` so its output holds a
`DynamicCache`, in float32 and in bfloat16. Neither is an output mismatch (DYN903) under the default tolerances:
the cache is compared by its tensors, and the bfloat16 logits, outside bfloat16's allclose, are as close to a
float64 run as eager's own. A real difference (the compiled model shifts one cache tensor) is still DYN903,
naming that tensor.

initializer_range=0.3 gives logits of a few units, as a trained model's are (the default 0.02 gives ~0.3,
where bfloat16 rounding stays inside allclose and the float64 rule would not be exercised)."""
import json
import re
import textwrap

import pytest

from conftest import run_cli, write_tree

pytestmark = [pytest.mark.dynamo, pytest.mark.slow]     # three tiny Llamas compiled on CPU: ~45 s

EXAMPLES = textwrap.dedent('''
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    import dynlint

    CONFIG = dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=4,
                  intermediate_size=64, vocab_size=99, initializer_range=0.3)


    def llama(dtype):
        return LlamaForCausalLM(LlamaConfig(**CONFIG)).eval().to(dtype)


    def prompt():
        return torch.randint(0, 99, (2, 16))


    @dynlint.example
    def llama_fp32():
        return llama(torch.float32), [{"input_ids": prompt(), "use_cache": True}]


    @dynlint.example
    def llama_bf16():
        return llama(torch.bfloat16), [{"input_ids": prompt(), "use_cache": True}]


    class ShiftsItsCache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = llama(torch.float32)

        def forward(self, input_ids):
            out = self.model(input_ids=input_ids, use_cache=True)
            if torch.compiler.is_compiling():        # constant-folded to True while tracing: compiled differs
                layer = (out["cache"] if "cache" in out else out["past_key_values"]).layers[1]   # renamed in 5.x
                layer.values = layer.values + 0.5
            return out


    @dynlint.example
    def cache_differs():
        return ShiftsItsCache(), [(prompt(),)]
''')


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    project = write_tree(tmp_path_factory.mktemp("models"), {"pyproject.toml": "[tool.dynlint]\n",
                                                            "dynlint_examples.py": EXAMPLES})
    r = run_cli("check", ".", "--verify", "--device", "cpu", "--timing-budget", "0.2", "--format", "json",
                "-o", "out.json", "--exit-zero", cwd=project, timeout=600,
                env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"})
    assert r.returncode == 0, r.stderr
    document = json.loads((project / "out.json").read_text())
    examples = {e["name"]: e for e in document["verify"]["examples"]}
    for e in examples.values():
        assert e["outcome"] == "ok", e["message"]
    return examples, [f for f in document["findings"] if f["code"] == "DYN903"]


def test_use_cache_outputs_agree_in_float32(run):
    examples, mismatches = run
    assert examples["llama_fp32"]["agreement"]["status"] == "match"
    assert not [f for f in mismatches if "llama_fp32" in f["message"]]


def test_bfloat16_outputs_outside_allclose_are_accepted_against_float64(run):
    examples, mismatches = run
    agreement = examples["llama_bf16"]["agreement"]
    assert agreement["status"] == "match" and not [f for f in mismatches if "llama_bf16" in f["message"]]
    assert agreement["max_abs_diff"] > 0.05                       # beyond bfloat16's allclose on these logits
    assert "accepted by the float64 reference: RMSE from float64" in agreement["detail"]


def test_a_real_difference_is_dyn903_naming_the_cache_tensor(run):
    examples, mismatches = run
    agreement = examples["cache_differs"]["agreement"]
    # the first problem, and the only one: the logits and the other cache tensors agree
    assert agreement["status"] == "mismatch" and "more)" not in agreement["detail"]
    assert re.fullmatch(r"call 0: out\.(cache|past_key_values)\.layers\[1\]\.values", agreement["where"])
    assert agreement["max_abs_diff"] == pytest.approx(0.5, abs=1e-3)
    (f,) = mismatches
    assert agreement["where"] in f["message"] and "RMSE from float64: compiled 0.5 > 2 x eager" in f["message"]
