"""The realistic fixture project: every `# expect: CODE` marker must be found, and nothing else."""
import re
from pathlib import Path

from dynlint.api import check
from dynlint.linter.config import Config

FIXTURE = Path(__file__).parent / "fixtures" / "project"
EXPECT = re.compile(r"#\s*expect:\s*(DYN\d{3}(?:\s*,\s*DYN\d{3})*)")


def expected(root: Path):
    out = set()
    for p in sorted(root.rglob("*.py")):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            m = EXPECT.search(line)
            if m:
                for code in re.split(r"\s*,\s*", m.group(1)):
                    out.add((p.relative_to(root).as_posix(), n, code))
    return out


def test_fixture_findings_match_markers_line_by_line():
    result = check([str(FIXTURE)], Config(root=FIXTURE.resolve()))
    found = {(f.path, f.line, f.code) for f in result.findings}
    want = expected(FIXTURE)
    assert want, "fixture has no markers"
    assert found - want == set(), "unexpected findings"
    assert want - found == set(), "missed findings"


def test_cross_file_chain_is_reported():
    result = check([str(FIXTURE)], Config(root=FIXTURE.resolve()))
    (f,) = [f for f in result.findings if f.path == "pkg/utils.py"]
    assert f.chain == ("Block.forward", "normalise")
