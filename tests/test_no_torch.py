"""The static path depends on libcst only: it must run with `import torch` made impossible."""
import subprocess
import sys
import textwrap

from conftest import write_tree

BLOCKER = textwrap.dedent("""
    import sys

    class _NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError("torch is blocked in this test")
            return None

    sys.meta_path.insert(0, _NoTorch())
    from dynlint.cli import main
    code = main(sys.argv[1:])
    assert not any(m == "torch" or m.startswith("torch.") for m in sys.modules), "torch was imported"
    sys.exit(code)
""")


def test_static_run_without_torch(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          "m.py": "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n",
                          "run.py": BLOCKER})
    r = subprocess.run([sys.executable, "run.py", "check", ".", "--format", "json"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert '"code": "DYN301"' in r.stdout
