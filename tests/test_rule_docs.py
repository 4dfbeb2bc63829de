"""docs/rules.md is generated from the rule classes; this fails when it is stale."""
from pathlib import Path

from dynlint.rules.docs import render_rules_markdown

DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def test_rules_markdown_is_up_to_date():
    expected = render_rules_markdown()
    actual = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert actual == expected, "docs/rules.md is stale: run `python -m dynlint.rules.docs > docs/rules.md`"


def test_every_rule_has_a_section_with_its_anchor():
    from dynlint.rules import all_rules

    text = render_rules_markdown()
    for rule in all_rules():
        assert f"## {rule.code} `{rule.name}`" in text
        assert f"(#{rule.doc_anchor()})" in text
