"""Every rule's VALID and INVALID examples, checked statically (the Dynamo proof lives in
test_rule_proofs.py). The examples are the rule's documentation too, so they must stay true."""
import pytest

from dynlint.api import check_source
from dynlint.rules import all_rules
from dynlint.testing import example_cases

RULES = all_rules()
CASES = [(r, kind, i, ex) for kind in ("INVALID", "VALID") for r, i, ex in example_cases(kind)]


@pytest.mark.parametrize("rule,kind,i,example", CASES, ids=[f"{r.code}-{k}-{i}" for r, k, i, _ in CASES])
def test_example(rule, kind, i, example):
    findings = check_source(example.code, preview=True).findings
    codes = [f.code for f in findings]
    if kind == "INVALID":
        assert rule.code in codes, f"{rule.code} did not fire on its INVALID example {i}:\n{example.code}"
    else:
        # a VALID example is compile-clean: no rule at all may fire on it
        assert codes == [], f"findings on VALID example {i} of {rule.code}: {findings}"


def test_every_rule_has_examples_and_docs():
    for r in RULES:
        assert r.INVALID and r.VALID, r.code
        assert r.summary() and r.why.strip() and r.fix and r.message, r.code
        assert r.code.startswith("DYN") and len(r.code) == 6, r.code
        assert r.name == r.name.lower() and " " not in r.name, r.code
