import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args, cwd=None, env=None, input=None, timeout=120):
    """Run `python -m dynlint ...` in a real subprocess, as a user would."""
    full_env = dict(os.environ, NO_COLOR="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "dynlint", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, input=input, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli


def load_bench(name: str):
    """bench/NAME.py as a module, for the tests that share a bench script's code: the guard probes
    (test_guards.py checks the guard model against what they measure), the headless-browser driving
    (test_html_report.py) and the generated table of Dynamo's skipped torch functions (test_rule_proofs.py)."""
    key = f"bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / "bench" / f"{name}.py")
        module = sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[key]


def write_tree(root: Path, files: dict) -> Path:
    """Create files {relative path: text} under root."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
    return root


def skip_unless_importable(*sources: str) -> None:
    """Skip, saying why, a test whose example code imports a library that is not installed (the `test` extra
    installs every one the examples use; a partial environment skips rather than fails)."""
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if importlib.util.find_spec(top) is None:
                    pytest.skip(f"the example imports {top}, which is not installed")


def line_of(source: str, text: str) -> int:
    """The number of the first line of `source` that holds `text`."""
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def dynamo_breaks(tmp_path: Path, source: str, call: str = "main()") -> set:
    """Run `call` of `source` under real Dynamo; (line, gb_types) of each graph break, at the innermost frame in
    the source (a break inside a library it calls, `copy.deepcopy`, stands at the line that called it)."""
    from dynlint.compiler import harness
    path = tmp_path / "probe.py"
    path.write_text(source)
    obs = harness.observe(str(path), [call])
    assert obs.error is None, obs.error
    return {(b.line, b.gb_types) for b in obs.breaks if b.path == str(path)}


def dynamo_guard_lines(tmp_path: Path, source: str, call: str = "main()", lineless: bool = True) -> list:
    """Run `call` of `source` under real Dynamo; the lines of the guards that failed, over every recompile. A
    guard with no line of its own (a tensor's dtype or size) counts at the frame's first line, or, with
    `lineless=False`, not at all (a probe whose tensors grow on purpose)."""
    from dynlint.compiler import harness
    path = tmp_path / "probe.py"
    path.write_text(source)
    obs = harness.observe(str(path), [call])
    assert obs.error is None, obs.error
    if not lineless:
        return sorted({g.line for r in obs.recompiles for g in r.failures if g.line})
    return sorted(set().union(*obs.guard_lines(str(path))))


def observe_package(tmp_path: Path, monkeypatch, path: Path, call: str):
    """Real Dynamo on `call`, run in the namespace of the file `path` of a project under `tmp_path` (its package
    `pkg`, or its module `run`, imported fresh and forgotten afterwards: other tests import modules of those
    names); the observation of what Dynamo did in `path`."""
    from dynlint.compiler import harness
    monkeypatch.syspath_prepend(str(tmp_path))

    def forget():
        for name in [m for m in sys.modules if m in ("pkg", "run") or m.startswith("pkg.")]:
            del sys.modules[name]
    forget()
    try:
        obs = harness.observe(str(path), [call])
    finally:
        forget()
    assert obs.error is None, obs.error
    return obs
