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
