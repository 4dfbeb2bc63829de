"""The labelled corpus, statically: dynlint's findings on every corpus file equal its inline markers,
line by line. `# expect: DYN101, DYN302` lines get exactly those codes; every other line (`# ok` look-alikes,
`# miss: ...` known misses, unmarked code) gets none. Whether Dynamo agrees with the markers is measured by
bench/accuracy.py (docs/accuracy.md)."""
from pathlib import Path

import pytest

from dynlint import testing as accuracy

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = sorted(p for p in CORPUS.glob("*.py") if not p.name.startswith("_"))


def test_corpus_size():
    assert 10 <= len(FILES) <= 20


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_findings_match_markers(path):
    markers = accuracy.parse_markers(path)
    expected = {line: codes for line, (kind, codes, _) in markers.items() if kind == "expect"}
    found = accuracy.findings_by_line(accuracy.static_findings(path))
    lines = sorted(set(expected) | set(found))
    diff = [f"{path.name}:{ln}: expected {sorted(expected.get(ln, ()))}, found {sorted(found.get(ln, ()))}"
            for ln in lines if expected.get(ln, set()) != found.get(ln, set())]
    assert not diff, "\n".join(diff)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_file_has_entry_point_and_lookalikes(path):
    text = path.read_text(encoding="utf-8")
    assert f"def {accuracy.ENTRY}(" in text, f"{path.name} has no {accuracy.ENTRY}() to run it under Dynamo"
    kinds = [kind for kind, _, _ in accuracy.parse_markers(path).values()]
    assert "ok" in kinds, f"{path.name} has no `# ok` look-alike"
