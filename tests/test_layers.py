"""The package's layers import one way (contracts in pyproject.toml's [tool.importlinter], checked by the real
import-linter): front ends -> report, api -> runtime_check -> rules -> fixes -> analysis -> linter; compiler/
stands alone and only runtime_check/ uses it; nothing the static pass imports is torch."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the console script installed beside this interpreter (the test extra's import-linter)
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports") if (Path(sys.executable).parent / "lint-imports").exists() \
    else shutil.which("lint-imports")


def test_import_contracts_are_kept():
    r = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout and "4 kept" in r.stdout


def test_a_broken_layer_is_caught(tmp_path):
    """The contract really bites: a copy of the package where linter imports the catalogue fails it."""
    shutil.copytree(ROOT / "dynlint", tmp_path / "dynlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "dynlint" / "linter" / "files.py", "a", encoding="utf-8") as f:
        f.write("\nfrom dynlint.rules import all_rules  # noqa: E402,F401\n")
    r = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={"PYTHONPATH": str(tmp_path), "PATH": os.environ.get("PATH", "")})
    assert r.returncode == 1 and "dynlint.linter.files -> dynlint.rules" in r.stdout, r.stdout + r.stderr


# ---- rooms a maintainer can hold in their head ----------------------------------------------------------
MAX_LINES = 1000           # per file of the package
MAX_COMPLEXITY = 30        # per function of the torch-free engine, the analysis and the rules (radon's measure)


def test_no_file_of_the_package_is_over_a_thousand_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "dynlint").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def test_no_function_of_the_engine_analysis_or_rules_is_too_complex():
    """Cyclomatic complexity measured with radon (a maintained tool), not by hand."""
    from radon.complexity import cc_visit

    complex_ = {}
    for folder in ("linter", "analysis", "rules"):
        for path in (ROOT / "dynlint" / folder).rglob("*.py"):
            for block in cc_visit(path.read_text(encoding="utf-8")):
                for b in [block] + list(getattr(block, "closures", [])) + list(getattr(block, "methods", [])):
                    if b.complexity > MAX_COMPLEXITY:
                        complex_[f"{path.relative_to(ROOT)}:{b.lineno} {b.name}"] = b.complexity
    assert not complex_, complex_
