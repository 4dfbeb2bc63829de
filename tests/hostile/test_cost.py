"""A repository built to make `dynlint check` slow or huge: its cost stays linear and bounded, and the real
findings are still reported. Each test is a proof of concept of the attack, run through the CLI; the sizes are
small enough for a quick test yet past what the previous code took (see each test)."""
import json
import subprocess
import sys

from conftest import write_tree

ITEMS = "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        y = [{}]\n        return y\n"


def _json(r):
    assert "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)["findings"]


def test_a_long_call_chain_costs_linear_time_and_a_bounded_cache(cli, tmp_path):
    """`root -> f0 -> ... -> f3999`: each region kept its whole chain (quadratic: 38 MB of cache here, 608 MB
    and 55 s at 16,000 functions); now one step of the chain per region, and the chain shown is capped."""
    n = 4000
    lines = ["import torch", "", "@torch.compile", "def root(x):", "    return f0(x)", ""]
    for i in range(n):
        lines += [f"def f{i}(x):", f"    return f{i + 1}(x)" if i < n - 1 else "    return x.item()"]
    project = write_tree(tmp_path / "repo", {"pyproject.toml": "[tool.dynlint]\n", "chain.py": "\n".join(lines) + "\n",
                                             "model.py": "import torch\n\n@torch.compile\ndef g(x):\n    return x.item()\n"})
    env = {"XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    r = cli("check", ".", "--format", "json", cwd=project, env=env, timeout=600)    # a hang guard, not a bound
    findings = _json(r)
    assert [(f["path"], f["line"], f["code"]) for f in findings] == [
        ("chain.py", 6 + 2 * n, "DYN201"), ("model.py", 5, "DYN201")]
    assert findings[0]["chain"] == ["root", f"... {n - 6} more ..."] + [f"f{i}" for i in range(n - 6, n)]
    cache = sum(p.stat().st_size for p in (project / ".dynlint_cache").rglob("*") if p.is_file())
    assert cache < 4 * 2 ** 20, cache                           # 38 MB before
    text = cli("check", ".", cwd=project, env=env, timeout=600).stdout     # from the cache
    assert "= reached through: root -> ... 3994 more ... -> f3994 -> f3995 -> f3996 -> f3997 -> f3998 -> f3999\n" \
        in text


def test_many_findings_in_one_statement_cost_linear_time(tmp_path, monkeypatch, capsys):
    """500 `.item()` in one statement: each finding's position generated the whole statement again (34.6 s
    before; 1,000 hit the 60 s limit, a DYN001); now positions come once for the unit. Bounded as work, not
    time (a loaded machine makes any time limit flaky): at most FAST_POSITIONS statement-sized position
    lookups, then one metadata pass for the unit."""
    from dynlint import cli
    from dynlint.linter import walker

    calls = {"fast": 0, "whole unit": 0}

    def counted(name, real):
        def call(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(walker, "fast_position", counted("fast", walker.fast_position))
    monkeypatch.setattr(walker.MetadataWrapper, "resolve", counted("whole unit", walker.MetadataWrapper.resolve))
    n = 500
    write_tree(tmp_path, {"model.py": ITEMS.format(", ".join(["x.item()"] * n))})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", ".", "--format", "json", "--no-cache", "-j", "1"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["code"], f["line"], f["column"], f["end_column"]) for f in findings] == [
        ("DYN201", 6, 13 + 10 * i, 21 + 10 * i) for i in range(n)]
    # each fast lookup resolves its statement's skeleton; then one pass for the unit: none of it grows with n
    assert calls["fast"] <= walker.FAST_POSITIONS and calls["whole unit"] <= calls["fast"] + 1, calls


SLOW_FILE = '''
import sys

from dynlint.linter import units
from dynlint.cli import main

units.FILE_TIME_LIMIT = 0.5     # the real budget is 60 s: the same attack, 120 times smaller
sys.exit(main(sys.argv[1:]))
'''


def test_a_file_of_many_slow_functions_spends_one_budget(tmp_path):
    """Twenty functions that each take a while: the time limit was per function, so a file could take 20 times
    the limit, on every run. Now the file's functions share one budget; what it leaves is one DYN001 naming
    the lines not checked, and the other file is still checked."""
    slow = ["import torch", ""]
    for i in range(20):
        slow += ["", "@torch.compile", f"def f{i}(x):", f"    return [{', '.join(['x.item()'] * 600)}]", ""]
    write_tree(tmp_path, {"slow.py": "\n".join(slow), "fast.py": "import torch\n\n@torch.compile\ndef g(x):\n"
                                                                  "    return x.item()\n"})
    r = subprocess.run([sys.executable, "-c", SLOW_FILE, "check", ".", "--format", "json", "--no-cache"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)   # a hang guard: the bound is
    assert r.returncode == 2                                         # a DYN001 is not a clean run
    findings = _json(r)
    budget = [f for f in findings if f["code"] == "DYN001"]        # one budget spent once, not one per function
    assert len(budget) == 1 and budget[0]["path"] == "slow.py", budget
    first = budget[0]["line"]
    assert budget[0]["message"] == (f"internal error in checking lines {first}-{len(slow) - 1}: AnalysisTimeout: the "
                                    f"file's analysis budget (0.5 s) was spent: these lines were not checked")
    assert all(f["line"] < first for f in findings if f["path"] == "slow.py" and f["code"] == "DYN201")
    assert [(f["path"], f["line"]) for f in findings if f["path"] == "fast.py"] == [("fast.py", 5)]


def test_a_huge_hex_literal_is_not_an_internal_error(cli, tmp_path):
    """`0x` and 5,000 hex digits: its decimal repr (in the index of keyword arguments) raised past Python's
    int-to-string limit, a DYN001 that lost the whole file."""
    huge = "0x" + "f" * 5000
    write_tree(tmp_path, {"model.py": f"import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                                      f"        k = {huge}\n        y = x.sum(dim={huge})\n        return y.item()\n"})
    r = cli("check", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert r.returncode == 1
    assert [(f["code"], f["line"]) for f in _json(r)] == [("DYN201", 8)]


def test_many_host_values_in_one_function_cost_one_walk_of_it(tmp_path, monkeypatch, capsys):
    """2,000 `name = x.item()` lines in one compiled function: the fix planning and the frame pass each walked
    the whole function once per finding (34.5 s of CPU in the frame pass alone; the per-file budget spent
    after 132 findings). Bounded as work: each function is walked once by each, whatever the findings."""
    from dynlint import cli
    from dynlint.analysis import aliasing, defs

    aliasing._names_of.cache_clear()
    defs._facts.cache_clear()
    n = 2000
    body = "\n".join(f"    a{i} = x.item()" for i in range(n))
    write_tree(tmp_path, {"m.py": f"import torch\n\n\n@torch.compile\ndef f(x):\n{body}\n    return x\n"})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", ".", "--format", "json", "--no-cache", "-j", "1"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [f["code"] for f in findings] == ["DYN201"] * n                 # all of them: no budget spent
    assert aliasing._names_of.cache_info().misses == 1                     # one function, one walk
    assert defs._facts.cache_info().misses <= 1


def test_a_name_rebound_under_many_conditions_is_judged_once_per_binding(tmp_path, monkeypatch, capsys):
    """`if self.flagK: x = x + aK` 1,000 times in one forward: every use of `x` is reached by all the bindings
    before it, and each was judged again for each use (and each name's reaching set built again), so the tensor
    analysis cost grew with the cube of the length (500 took 42 s; 2,000 spent the 60 s budget, a DYN001). Now
    a binding's kind is judged once unless it rests on an assumption (a cycle), and each use's reaching set once.
    Bounded as work: expression judgements grow linearly with the chain, and every `.item()` is reported."""
    from dynlint import cli
    from dynlint.analysis.tensors import inference

    judged = [0]
    real = inference.Tensors._kind

    def counted(self, node):
        judged[0] += 1
        return real(self, node)

    monkeypatch.setattr(inference.Tensors, "_kind", counted)
    monkeypatch.chdir(tmp_path)
    work = []
    for n in (200, 400):
        body = "".join(f"        a{i} = x.sum().item()\n        if self.flag{i % 7}:\n            x = x + a{i}\n"
                       for i in range(n))
        write_tree(tmp_path, {"m.py": f"import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                                      f"{body}        return x\n"})
        judged[0] = 0
        assert cli.main(["check", ".", "--format", "json", "--no-cache", "-j", "1"]) == 1
        findings = json.loads(capsys.readouterr().out)["findings"]
        assert [f["code"] for f in findings if f["code"] == "DYN201"] == ["DYN201"] * n
        assert not [f for f in findings if f["code"] == "DYN001"]
        work.append(judged[0])
    # a few dozen judgements per line, doubling with the chain (before: 241,000 for 200 links, where a budget
    # stopped the judging and answered "unknown")
    assert work[0] <= 40 * 200 and work[1] <= 2.5 * work[0], work


def test_a_deep_chain_of_conditional_expressions_is_refused_before_it_costs(tmp_path, monkeypatch, capsys):
    """`x if c else x if c else ...` 1,500 deep (18 KB): libcst's parser took 7 s and 430 MB on it and a 61 KB
    one 3.6 GB before the time budget fired. The index measures each expression's depth on Python's own tree
    (without recursion), and past NESTING_LIMIT that function is one DYN000 that says so; libcst never sees
    it, and the file's other functions are checked."""
    from dynlint import cli
    from dynlint.linter import index, walker

    parsed = []
    real = walker.cst.parse_module
    monkeypatch.setattr(walker.cst, "parse_module", lambda text, *a, **k: parsed.append(len(text)) or real(text, *a, **k))
    walker.parse.cache_clear()
    chain = " if c else ".join(["x"] * 1500)
    write_tree(tmp_path, {"deep.py": f"import torch\n\n@torch.compile\ndef f(x, c):\n    return {chain}\n",
                          "ok.py": "import torch\n\n@torch.compile\ndef g(x):\n    return x.item()\n"})
    with open(tmp_path / "deep.py", "a") as f:
        f.write("\n\n@torch.compile\ndef h(x):\n    return x.item()\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", ".", "--format", "json", "--no-cache", "-j", "1"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["path"], f["line"], f["code"]) for f in findings] == [
        ("deep.py", 5, "DYN000"), ("deep.py", 10, "DYN201"), ("ok.py", 5, "DYN201")]
    assert f"nesting too deep to analyse (an expression more than {index.NESTING_LIMIT} levels deep)" \
        in findings[0]["message"]
    assert parsed and max(parsed) < 1000                                   # the deep function never reached libcst
