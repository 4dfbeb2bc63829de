"""Where a recompile finding stands: the line Dynamo's recompile log names. Each case is compiled under real
Dynamo (dynlint/compiler/harness.py) and dynlint's recompile finding must stand at a line of the log: the
source line of the guard that failed, or, for a guard with no source line (a tensor's dtype or rank, grad
mode, autocast), the recompiled function's first line (its first decorator). The line that changes the value
is a related location. Plus the output of related locations in every format."""
import json
import textwrap

import pytest

from conftest import write_tree
from dynlint import api
from dynlint.analysis import guard_lines

torch = pytest.importorskip("torch")

from dynlint.compiler.harness import observe  # noqa: E402

CASES = {
    # a value read first in a helper of the same file: the guard is in the helper
    "handed to a helper": ('''
        import torch

        def heads(n):
            return max(int(n), 1)

        @torch.compile
        def split(x, n):
            h = heads(n)
            return x.view(h, -1).sum(-1)

        def main():
            x = torch.ones(8)
            split(x, 2)
            split(x, 4)
    ''', "DYN508"),
    # `torch.is_tensor(t)` is answered from the kind of value, with no guard on it: the guard is at the next read
    "type test first": ('''
        import torch

        @torch.compile
        def embed(x, t):
            if not torch.is_tensor(t):
                t = torch.tensor([t]) * 1.0
            return x * t

        def main():
            x = torch.ones(2)
            embed(x, 999)
            embed(x, 666)
    ''', "DYN508"),
    # bound to other names first: guarded where an item is used, not at the unpacking
    "unpacked first": ('''
        import torch

        @torch.compile
        def crop(x, box):
            top, left = box
            return x[top:, left:] * 2

        def main():
            x = torch.ones(8, 8)
            crop(x, (1, 2))
            crop(x, (2, 3))
    ''', "DYN508"),
    # a flag set between two calls of straight-line code
    "flag set between calls": ('''
        import torch

        class Config:
            use_bias = False

        config = Config()

        @torch.compile
        def project(x):
            y = x * 2
            if config.use_bias:
                y = y + 1
            return y

        def main():
            x = torch.ones(4)
            project(x)
            config.use_bias = True
            project(x)
    ''', "DYN514"),
    # a guard with no source line: the decorated function's first line
    "dtype": ('''
        import torch

        @torch.compile
        def norm(x):
            return x / x.norm()

        def main():
            data = torch.arange(6.0)
            norm(data)
            norm(data.double())
    ''', "DYN516"),
    "autocast in another function": ('''
        import torch
        from torch import nn

        class Proj(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                return self.fc(x).sum(-1)

        net = torch.compile(Proj())

        def plain(x):
            return net(x)

        def mixed(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return net(x)

        def main():
            x = torch.ones(2, 8)
            plain(x)
            mixed(x)
    ''', "DYN515"),
    # constants flow through the calling function's parameter
    "through a caller's parameter": ('''
        import torch

        @torch.compile
        def prepare(x, layout):
            if layout == "nchw":
                return x.permute(0, 3, 1, 2) * 1.0
            return x * 1.0

        def run(batch, layout):
            return prepare(batch, layout)

        def main():
            batch = torch.ones(1, 2, 2, 3)
            run(batch, "nhwc")
            run(batch, "nchw")
    ''', "DYN508"),
    # a setter of the file called between two calls
    "setter": ('''
        import torch

        FAST = False

        def set_fast(on):
            global FAST
            FAST = on

        @torch.compile
        def act(x):
            if FAST:
                return x * torch.sigmoid(1.702 * x)
            return torch.tanh(x) * x

        def main():
            x = torch.ones(5)
            act(x)
            set_fast(True)
            act(x)
    ''', "DYN514"),
    # a number the outer loop computes through locals (`frac` from `update`, `coef` from `frac`), passed from
    # an inner loop: guarded at its first read
    "annealed through locals": ('''
        import torch

        @torch.compile
        def loss_fn(ratio, coef):
            return torch.clamp(ratio, 1 - coef, 1 + coef).mean()

        def main():
            for update in range(1, 3):
                frac = 1.0 - (update - 1.0) / 2
                coef = 0.2 * frac
                for _ in range(2):
                    loss_fn(torch.ones(4), coef)
    ''', "DYN501"),
    # an attribute that forward reads only through a method it calls (`self.forward_features(x)`), set between
    # calls by a method of the model: guarded where that method reads it
    "read in a method forward calls": ('''
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.grad_checkpointing = False

            def set_grad_checkpointing(self, enable=True):
                self.grad_checkpointing = enable

            def forward_features(self, x):
                if self.grad_checkpointing:
                    return self.lin(x) * 2
                return self.lin(x)

            def forward(self, x):
                return self.forward_features(x).relu()

        def main():
            model = torch.compile(Net())
            model(torch.ones(2, 4))
            model.set_grad_checkpointing(True)
            model(torch.ones(2, 4))
    ''', "DYN506"),
    # handed to a method of its own class (`self.get_decay(step)`): guarded where that method first reads it
    "handed to a method": ('''
        import torch

        class Ema:
            def get_decay(self, step):
                if step is None:
                    return 0.9
                return 1 - 1 / (step + 1)

            def update(self, x, step=None):
                decay = self.get_decay(step)
                return x * decay

        def main():
            ema = Ema()
            fast = torch.compile(ema.update)
            for step in range(1, 4):
                fast(torch.ones(3), step=step)
    ''', "DYN501"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_finding_stands_at_the_line_dynamo_names(name, tmp_path):
    code, rule = CASES[name]
    code = textwrap.dedent(code)
    path = write_tree(tmp_path, {"case.py": code}) / "case.py"
    findings = [f for f in api.check_source(code, preview=True).findings if f.code == rule]
    assert findings, f"{rule} does not fire"
    obs = observe(str(path), ["main()"])
    named = set().union(*[ls for ls in obs.guard_lines(str(path)) if ls])
    assert named, f"no recompile names a line of the case: {obs.recompiles}"
    spans = {n for f in findings for n in range(f.line, max(f.end_line, f.line) + 1)}
    assert spans & named, f"findings at {sorted(spans)}, Dynamo names {sorted(named)}"
    assert all(f.related for f in findings)


def test_an_argument_the_compiled_code_never_reads_is_not_guarded(tmp_path):
    """Dynamo guards only what the trace reads: different values for an unused parameter never recompile,
    and dynlint says nothing."""
    code = textwrap.dedent('''
        import torch

        @torch.compile
        def f(x, y=None, mode="a", scale=1.0):
            return x * 2

        def main():
            x = torch.ones(3)
            f(x)
            f(x, x, "b", 2.0)
            f(x, None, "c", {"k": 1})
    ''')
    path = write_tree(tmp_path, {"case.py": code}) / "case.py"
    assert observe(str(path), ["main()"]).recompiles == []
    assert [f.code for f in api.check_source(code, preview=True).findings if f.code.startswith("DYN5")] == []


def test_the_guard_read_follows_aliases_and_helpers():
    source = textwrap.dedent('''
        def helper(v):
            w = v
            return w + 1

        def f(x, n, box):
            a, b = box
            y = helper(n)
            return x[a:] * y
    ''')
    fn = guard_lines.function_at(source, 6)
    assert guard_lines.guard_read(source, fn, "n")[0] == 4       # `w + 1` in the helper
    assert guard_lines.guard_read(source, fn, "box")[0] == 9     # where an item is used
    assert guard_lines.guard_read(source, fn, "z") is None


RECOMPILING = '''import torch


@torch.compile
def shift(x, n):
    return x + n


def main():
    x = torch.ones(4)
    shift(x, 1)
    shift(x, 2){noqa}
'''


def test_related_locations_in_text_json_and_sarif(cli, tmp_path):
    write_tree(tmp_path, {"model.py": RECOMPILING.format(noqa="")})
    text = cli("check", ".", "--no-cache", cwd=tmp_path).stdout
    assert "model.py:6:16: DYN508" in text
    assert "= `n` is passed to `shift` here: model.py:12:5" in text
    assert "= `n=1` is passed here: model.py:11:5" in text
    (finding,) = json.loads(cli("check", ".", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"]
    assert (finding["line"], [(r["path"], r["line"]) for r in finding["related"]]) == \
        (6, [("model.py", 12), ("model.py", 11)])
    out = tmp_path / "out.sarif"
    cli("check", ".", "--no-cache", "--format", "sarif", "-o", out, cwd=tmp_path)
    from test_sarif import valid
    (result,) = valid(json.loads(out.read_text(encoding="utf-8")))["runs"][0]["results"]
    related = result["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [12, 11]
    assert related[0]["message"]["text"] == "`n` is passed to `shift` here"
    (flow,) = result["codeFlows"]           # the change, then the guard
    steps = [loc["location"]["physicalLocation"]["region"]["startLine"] for loc in flow["threadFlows"][0]["locations"]]
    assert steps == [11, 12, 6]


def test_a_noqa_on_the_line_that_changes_the_value_silences_the_finding(cli, tmp_path):
    write_tree(tmp_path, {"model.py": RECOMPILING.format(noqa="  # noqa: DYN508")})
    r = cli("check", ".", "--no-cache", "--format", "json", cwd=tmp_path)
    assert json.loads(r.stdout)["findings"] == []


def test_an_imported_modules_attribute_set_between_calls(cli, tmp_path, monkeypatch):
    """`settings.DEBUG = True` between two calls, where the compiled code reads `settings.DEBUG`: Dynamo
    guards on the module attribute's value, at the read."""
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/settings.py": "DEBUG = False\n", "pkg/run.py": textwrap.dedent('''
        import torch

        from pkg import settings


        @torch.compile
        def step(x):
            if settings.DEBUG:
                x = x.clamp(-1, 1)
            return x * 2


        def main():
            x = torch.ones(4)
            step(x)
            settings.DEBUG = True
            step(x)
    ''')})
    (finding,) = json.loads(cli("check", ".", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"]
    monkeypatch.syspath_prepend(str(tmp_path))
    obs = observe(str(tmp_path / "pkg" / "run.py"), ["main()"])
    assert (finding["code"], finding["line"]) == ("DYN514", 9)
    assert [9] == sorted(set().union(*[ls for ls in obs.guard_lines(str(tmp_path / "pkg" / "run.py")) if ls]))
    assert [r["line"] for r in finding["related"]] == [17]
