"""Automatic fixes (`dynlint check --fix`), proven.

* Every rule's FIX_EXAMPLES: the fixer turns `before` into exactly `after` (with `--unsafe-fixes` only for the
  unsafe ones, which the safe tier leaves alone), the result is stable and no longer has the rule's finding.
* Every example with calls runs under real Dynamo (eager backend, bench/fix_effect.py), before and after: the
  break (or deprecation warning) the rule predicts is there before and gone after, with no more graphs, and
  every output of a compiled callable equals the original code's eager output.
* The fixer on its own: overlapping fixes, added imports, encodings and newlines kept.
* The CLI as a user runs it: --fix, --diff, --unsafe-fixes, a file with a syntax error left alone, comments
  and permissions kept, a fix in a helper file reached from another file.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import textwrap
import warnings
from pathlib import Path

import pytest

from conftest import skip_unless_importable, write_tree
from dynlint.api import check_source, fix_source
from dynlint.linter.finding import FIX_SAFETIES, Edit, Finding, Fix
from dynlint.linter.fixer import apply_fixes, ensure_imports
from dynlint.rules import all_rules
from dynlint.testing import case_ids, example_cases

ROOT = Path(__file__).resolve().parent.parent
RULES = all_rules()
EXAMPLES = example_cases("FIX")
RUN = example_cases("FIX", runnable=True)


def _ids(cases):
    return case_ids(cases, "FIX")


# ---- the examples, statically ------------------------------------------------------------------------------
def test_fixable_rules_have_examples():
    for r in RULES:
        if r.fix_safety:
            assert r.fix_safety in FIX_SAFETIES and r.fix_title, r.code
            assert any(ex.calls and ex.safety == r.fix_safety for ex in r.FIX_EXAMPLES), \
                f"{r.code}: no {r.fix_safety} fix example that runs under Dynamo"
        else:
            assert not r.FIX_EXAMPLES, f"{r.code} has fix examples but no fix_safety"
        assert all(ex.safety in FIX_SAFETIES for ex in r.FIX_EXAMPLES), r.code
    assert len({r.code for r in RULES if r.fix_safety}) >= 8


@pytest.mark.parametrize("rule,i,example", EXAMPLES, ids=_ids(EXAMPLES))
def test_fix_example_text(rule, i, example):
    assert rule.code in {f.code for f in check_source(example.before, preview=True).findings}, "the example must need the fix"
    fixed = fix_source(example.before, unsafe=example.safety == "unsafe", preview=True)
    assert fixed == example.after
    if example.safety == "unsafe":
        assert fix_source(example.before, preview=True) == example.before, "the safe tier must leave an unsafe example alone"
    assert fix_source(fixed, unsafe=True, preview=True) == fixed, "fixing again must change nothing"
    assert rule.code not in {f.code for f in check_source(fixed, preview=True).findings}


def test_findings_carry_their_fix_in_json():
    example = next(ex for r, _, ex in EXAMPLES if r.code == "DYN301")
    f = next(f for f in check_source(example.before, preview=True).findings if f.code == "DYN301")
    assert f.autofix is not None and f.autofix.safety == "safe" and f.autofix.edits
    d = json.loads(json.dumps(f.to_dict()))
    assert d["autofix"]["safety"] == "safe" and "is_compiling" in d["autofix"]["edits"][0]["code"]
    assert Finding.from_dict(d).autofix == f.autofix


def test_rule_docs_show_the_fix():
    rule = next(r for r in RULES if r.code == "DYN301")
    md = rule.markdown()
    assert "### Automatic fix" in md and "*Fix safety:* safe" in md and "torch.compiler.is_compiling" in md
    assert "Automatic fix" in rule.text() and "```" not in rule.text()


# ---- the examples under Dynamo ------------------------------------------------------------------------------
@pytest.mark.dynamo
@pytest.mark.parametrize("rule,i,example", RUN, ids=_ids(RUN))
def test_fix_example_under_dynamo(rule, i, example, tmp_path):
    pytest.importorskip("torch")
    skip_unless_importable(example.before, example.after)
    from dynlint.compiler import harness as fe
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(example.before, encoding="utf-8")
    after.write_text(example.after, encoding="utf-8")
    lines = {f.line for f in check_source(example.before, preview=True).findings if f.code == rule.code}

    reference = fe.run_file(before, example.calls, compiled=False)
    original = fe.run_file(before, example.calls, compiled=True)
    fixed = fe.run_file(after, example.calls, compiled=True)
    detail = (f"before: {[(b.line, b.gb_types) for b in original.breaks]} graphs {original.graphs}\n"
              f"after:  {[(b.line, b.gb_types) for b in fixed.breaks]} graphs {fixed.graphs}")
    assert reference.error is None and original.error is None and fixed.error is None, \
        (reference.error, original.error, fixed.error)
    wanted = set(rule.gb_types)
    if "deprecation" in rule.tags:
        def deprecations(run, path):
            return [w for w in run.warnings if w[0] in ("FutureWarning", "DeprecationWarning")
                    and os.path.realpath(w[1]) == os.path.realpath(path)]
        assert any(w[2] in lines for w in deprecations(original, before)), original.warnings
        assert not deprecations(fixed, after), fixed.warnings
    elif rule.recompiles:
        detail += f"\nrecompiles: {original.recompiles} -> {fixed.recompiles}"
        assert original.recompiles > 0 and fixed.recompiles == 0, detail
        assert len(fixed.breaks) <= len(original.breaks), detail
    else:
        assert any(wanted & set(b.gb_types) and b.line in lines for b in original.breaks), detail
        assert not any(wanted & set(b.gb_types) for b in fixed.breaks), detail
        assert len(fixed.breaks) < len(original.breaks), detail
    assert fixed.graphs <= original.graphs, detail
    assert reference.outputs, "the calls must exercise a compiled callable"
    # an unsafe fix may turn a returned Python number into a 0-d tensor; the values must still be the same
    assert fe.compare(reference, fixed, exact_types=example.safety == "safe") == [], "outputs changed"


# ---- where the where-fixes stop being safe ------------------------------------------------------------------
def _fn(body: str) -> str:
    return "import torch\n\n@torch.compile\ndef f(x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") \
        + "\n"


# bodies both tables below use: the static verdict, and what the caller sees under Dynamo
INT_SCALED = "y = x + 1\nif y.sum() > 0:\n    y = y * 0.5\nreturn y\n"        # an int tensor would become float
FLOAT_SCALED = "y = x - x.mean()\nif y.sum() > 0:\n    y = y * 0.5\nreturn y\n"  # floating whatever x is
CALLERS_X = "if x.sum() > 0:\n    x = x * 2\nreturn x\n"                          # hands back the caller's x


@pytest.mark.parametrize("body,safe,unsafe", [
    # else-form of the early return: the same fix
    ("""
        y = x + 1
        if y.sum() > 0:
            return y * 2
        else:
            return y.clamp(min=0)
     """, "    y = x + 1\n    return torch.where(y.sum() > 0, y * 2, y.clamp(min=0))\n", None),
    # the caller's own tensor came back unchanged before; torch.where returns a new one: unsafe only
    ("""
        if x.sum() > 0:
            return x * 2
        return x
     """, None, "    return torch.where(x.sum() > 0, x * 2, x)\n"),
    # an integer `y` would come back as a float tensor from the arm not taken: no safe fix
    ("""
        y = x + 1
        if y.abs().max() > 10:
            return y * 0.5
        return y
     """, None, None),
    # the assignment between the returns changes what the condition reads: no fix at all
    ("""
        y = x * 2
        if y.abs().max() > 10:
            return y / 10
        y = y.clamp(min=-1)
        return y * 2
     """, None, None),
    # 1 / y in the arm not selected would turn a zero gradient into NaN: the branch fix is unsafe only
    ("""
        y = x * 2
        if (y != 0).all():
            y = 1 / y
        return y
     """, None, "    y = x * 2\n    y = torch.where((y != 0).all(), 1 / y, y)\n    return y\n"),
    # the branch fix, dtype: an integer `y` came back as it was from the arm not taken, now as float: unsafe only
    (INT_SCALED, None, "    y = x + 1\n    y = torch.where(y.sum() > 0, y * 0.5, y)\n    return y\n"),
    # ... a float bound of clamp promotes too; the fill value of nan_to_num takes the tensor's dtype
    ("""
        y = x * 2
        if y.sum() > 0:
            y = y.clamp(min=0.5)
        return y
     """, None, "    y = x * 2\n    y = torch.where(y.sum() > 0, y.clamp(min=0.5), y)\n    return y\n"),
    ("""
        y = x * 2
        if y.isnan().any():
            y = y.nan_to_num(neginf=-1e4)
        return y
     """, "    y = x * 2\n    y = torch.where(y.isnan().any(), y.nan_to_num(neginf=-1e4), y)\n    return y\n", None),
    # ... a floating tensor stays floating whichever arm is selected: safe
    (FLOAT_SCALED, "    y = x - x.mean()\n    y = torch.where(y.sum() > 0, y * 0.5, y)\n    return y\n", None),
    # the branch fix, identity: the caller's own `x` came back when the branch was not taken: unsafe only
    (CALLERS_X, None, "    x = torch.where(x.sum() > 0, x * 2, x)\n    return x\n"),
    # ... the same when the result is updated in place afterwards (the caller's `x` used to change)
    ("""
        if x.sum() > 0:
            x = x * 2
        x.add_(1)
        return x.sum()
     """, None, "    x = torch.where(x.sum() > 0, x * 2, x)\n    x.add_(1)\n    return x.sum()\n"),
    # ... but only new tensors computed from it leave: safe
    ("""
        if x.sum() > 0:
            x = x * 2
        return x.softmax(-1)
     """, "    x = torch.where(x.sum() > 0, x * 2, x)\n    return x.softmax(-1)\n", None),
    # ... and `x` rebound to a new tensor before the branch is not the caller's: safe
    ("""
        x = x + 1
        if x.isnan().any():
            x = torch.nan_to_num(x)
        return x
     """, "    x = x + 1\n    x = torch.where(x.isnan().any(), torch.nan_to_num(x), x)\n    return x\n", None),
    # an arm updating the caller's tensor in place: the fix binds a new tensor, the caller's stays: unsafe only
    ("""
        if x.sum() > 0:
            x += 1
        return x * 2
     """, None, "    x = torch.where(x.sum() > 0, x + (1), x)\n    return x * 2\n"),
    # ... a local of its own updated in place is nobody else's: safe; one also bound to `z` is: unsafe only
    ("""
        y = x * 2
        if y.sum() > 0:
            y += 1
        return y
     """, "    y = x * 2\n    y = torch.where(y.sum() > 0, y + (1), y)\n    return y\n", None),
    ("""
        y = x * 2
        z = y
        if y.sum() > 0:
            y += 1
        return z
     """, None, "    y = x * 2\n    z = y\n    y = torch.where(y.sum() > 0, y + (1), y)\n    return z\n"),
    # the conditional expression, identity: `x` itself was returned: unsafe only; a new tensor: safe
    ("""
        return x if (x > 0.5).any() else torch.zeros_like(x)
     """, None, "    return torch.where((x > 0.5).any(), x, torch.zeros_like(x))\n"),
    ("""
        y = x * 2
        return y if (y > 0.5).any() else torch.zeros_like(y)
     """, "    y = x * 2\n    return torch.where((y > 0.5).any(), y, torch.zeros_like(y))\n", None),
])
def test_where_fix_safety_edges(body, safe, unsafe):
    src = _fn(body)
    tail = lambda text: text.split("def f(x):\n", 1)[1]          # noqa: E731
    assert tail(fix_source(src)) == (safe if safe is not None else tail(src))
    assert tail(fix_source(src, unsafe=True)) == (unsafe or safe or tail(src))


# Under real Dynamo, what the caller of `f(a)` gets: (dtype, whether it is `a` itself, `a` afterwards).
@pytest.mark.dynamo
@pytest.mark.parametrize("body,arg,changed", [
    (INT_SCALED, "-torch.arange(4)", "dtype"),               # int64 -> float32
    (FLOAT_SCALED, "torch.arange(4.0)", None),               # float stays float: the safe fix keeps all
    (CALLERS_X, "-torch.ones(3)", "identity"),               # `f(a) is a` was true
    ("""
        if x.sum() > 0:
            x += 1
        return x * 2
     """, "torch.ones(3)", "caller's tensor"),                # `a` was updated in place
    ("""
        return x if (x > 0.5).any() else torch.zeros_like(x)
     """, "torch.ones(3)", "identity"),
])
def test_where_fix_conditions_under_dynamo(body, arg, changed, tmp_path, monkeypatch):
    """Each condition a where-fix needs to be safe guards something the caller really sees: the fix (applied
    with --unsafe-fixes where it is unsafe) removes the break, and changes exactly that; the safe one nothing."""
    torch = pytest.importorskip("torch")
    from dynlint.compiler import harness as fe
    src = _fn(body)
    safe = fix_source(src)
    fixed = fix_source(src, unsafe=True)
    assert fixed != src and (safe == src) == (changed is not None), safe
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(src, encoding="utf-8")
    after.write_text(fixed, encoding="utf-8")
    calls = [f"f({arg})"]
    assert any("Data-dependent branching" in b.gb_types for b in fe.run_file(before, calls).breaks)
    assert fe.run_file(after, calls).breaks == []

    compile_ = torch.compile
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: compile_(fn, backend="eager"))

    def seen(path):
        spec = importlib.util.spec_from_file_location(f"where_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        a = eval(arg, {"torch": torch})
        out = module.f(a)
        torch._dynamo.reset()
        return {"dtype": out.dtype, "identity": out is a, "caller's tensor": a.tolist()}

    original, new = seen(before), seen(after)
    assert {k for k in original if original[k] != new[k]} == ({changed} if changed else set()), (original, new)


# ---- a fix never rests on the guess that `forward`'s parameters are tensors -----------------------------------
# The rules take an unannotated parameter of `forward` for a tensor (most are); a fix that turns `int(v)` into
# `v.long()` or a branch into `torch.where` would break or retype a Python number there. Found on transformers
# (bench/fix_sweep.py): `int(self.padding_idx + num_input_ids)` with `num_input_ids` built from `inputs_shape[1]`.
def _forward(params: str, body: str) -> str:
    return ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, " + params + "):\n" +
            textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n\n\nm = torch.compile(M())\n")


@pytest.mark.parametrize("params,body,code,fixed", [
    # a parameter nothing shows to be a tensor: the finding stays (it usually is one), the fix is unsafe only
    ("x, count", "return x * int(count)", "DYN202", None),
    ("x, scale", "y = x * 2\nif y.sum() > 0:\n    scale = scale * 0.5\nreturn y * scale", "DYN101", None),
    # used as a tensor in the body: a tensor, the fix is safe
    ("x, count", "n = count.sum()\nreturn x * int(n)", "DYN202", "        return x * n.long()\n"),
    ("x, count", "return x * int(count.sum())", "DYN202", "        return x * count.sum().long()\n"),
])
def test_fixes_do_not_rely_on_forward_parameters_being_tensors(params, body, code, fixed):
    src = _forward(params, body)
    assert code in {f.code for f in check_source(src).findings}
    safe, unsafe = fix_source(src), fix_source(src, unsafe=True)
    assert unsafe != src
    if fixed is None:
        assert safe == src
    else:
        assert fixed in safe, safe


@pytest.mark.parametrize("param", ["inputs_shape", "input_sizes", "target_device", "device", "dtype"])
def test_shape_and_device_parameters_of_forward_are_not_taken_for_tensors(param):
    src = _forward(f"x, {param}", f"return x * int({param}[0] if isinstance({param}, tuple) else 1)")
    assert "DYN202" not in {f.code for f in check_source(src).findings}


# ---- why two unsafe fixes stay unsafe: what the caller would see --------------------------------------------
@pytest.mark.dynamo
def test_unsafe_guard_fix_raises_another_exception_when_compiled(tmp_path, monkeypatch):
    """`if (x < 0).any(): raise ValueError(...)` -> `torch._assert_async` while compiling: no break, but a
    caller's `except ValueError` no longer catches it (RuntimeError; on CUDA a device-side assertion)."""
    torch = pytest.importorskip("torch")
    src = _fn("""
        if (x < 0).any():
            raise ValueError("negative input")
        return x * 2
    """)
    fixed = fix_source(src, unsafe=True)
    assert fix_source(src) == src and "_assert_async" in fixed
    compile_ = torch.compile
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: compile_(fn, backend="eager"))

    def raised(text, name):
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"guard_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        try:
            assert module.f(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]
            module.f(-torch.ones(3))
        except Exception as e:          # noqa: BLE001 - which exception is the point
            return type(e), str(e)
        finally:
            torch._dynamo.reset()
        return None, ""

    assert raised(src, "before") == (ValueError, "negative input")
    kind, message = raised(fixed, "after")
    assert kind is RuntimeError and "negative input" in message


def test_unsafe_early_return_fix_gives_nan_gradients():
    """The early return of a weight-standardised conv (normalization.py in the corpus) as `torch.where`: both
    paths are computed, and the one not taken (std over one element per filter: NaN) poisons the gradient
    through where's backward (0 * NaN), where the original had a finite one."""
    torch = pytest.importorskip("torch")
    src = textwrap.dedent("""
        import torch
        import torch.nn.functional as F


        class WSConv2d(torch.nn.Conv2d):
            def forward(self, x):
                w = self.weight
                if w.std() == 0:
                    return F.conv2d(x, w, self.bias)
                w = (w - w.mean(dim=(1, 2, 3), keepdim=True)) / (w.std(dim=(1, 2, 3), keepdim=True) + 1e-5)
                return F.conv2d(x, w, self.bias)
    """).lstrip()
    fixed = fix_source(src, unsafe=True)
    assert fix_source(src) == src and ".where(" in fixed

    def weight_grad(text):
        ns: dict = {}
        exec(compile(text, "ws.py", "exec"), ns)
        conv = ns["WSConv2d"](1, 2, 1)
        with torch.no_grad():
            conv.weight.fill_(0.5)                   # every weight equal: the early return is taken
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # std() over one element warns
            conv(torch.randn(1, 1, 3, 3)).sum().backward()
        return conv.weight.grad

    assert torch.isfinite(weight_grad(src)).all()
    assert torch.isnan(weight_grad(fixed)).all()


# ---- counters into buffers (DYN306) -------------------------------------------------------------------------
def _module(init: str, forward: str, extra: str = "") -> str:
    def block(text: str, indent: int) -> str:
        return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * indent) + "\n"
    return ("import torch\n\nclass M(torch.nn.Module):\n    def __init__(self):\n" + block(init, 8) +
            "\n    def forward(self, x):\n" + block(forward, 8) + (block(extra, 4) if extra else "") +
            "\nm = torch.compile(M())\n")


@pytest.mark.parametrize("init,forward,extra,fixed", [
    # the counter: `__init__` sets it, `forward` adds to it
    ("super().__init__()\nself.steps = 0", "self.steps += 1\nreturn x * 2", "", "0"),
    ("super(M, self).__init__()\nself.steps = -1", "self.steps -= 2\nreturn x * 2", "", "-1"),
    # read as a number somewhere: it would become a tensor condition (a new break): no fix
    ("super().__init__()\nself.steps = 0", "self.steps += 1\nif self.steps % 10 == 0:\n    x = x + 1\nreturn x",
     "", None),
    # reset to an int by another method: assigning an int to a buffer's name raises: no fix
    ("super().__init__()\nself.steps = 0", "self.steps += 1\nreturn x * 2",
     "def reset(self):\n    self.steps = 0", None),
    # set before nn.Module.__init__ ran (register_buffer needs it), or not to an integer, or twice: no fix
    ("self.steps = 0\nsuper().__init__()", "self.steps += 1\nreturn x * 2", "", None),
    ("super().__init__()\nself.steps = 0\nself.steps = 1", "self.steps += 1\nreturn x * 2", "", None),
    ("super().__init__()\nif True:\n    self.steps = 0", "self.steps += 1\nreturn x * 2", "", None),
    # a float: no fix (it recompiles once, then is a graph input)
    ("super().__init__()\nself.steps = 0.0", "self.steps += 1\nreturn x * 2", "", None),
    ("super().__init__()\nself.steps = 0", "self.steps += 0.5\nreturn x * 2", "", None),
])
def test_counter_buffer_fix_only_for_plain_counters(init, forward, extra, fixed):
    src = _module(init, forward, extra)
    assert "DYN306" in {f.code for f in check_source(src).findings}
    out = fix_source(src, unsafe=True)
    assert fix_source(src) == src, "the counter fix is unsafe: --fix alone leaves it"
    if fixed is None:
        assert out == src
    else:
        assert out == src.replace(f"self.steps = {fixed}\n",
                                  f'self.register_buffer("steps", torch.tensor({fixed}), persistent=False)\n')
        assert "DYN306" not in {f.code for f in check_source(out).findings}


def test_an_attribute_forward_sets_afresh_before_changing_it_is_not_reported():
    # every call starts from the same value: the guard always holds (docs/guards.md)
    src = _module("super().__init__()\nself.steps = 0", "self.reset()\nself.steps += 1\nreturn x * 2",
                  "def reset(self):\n    self.steps = 0")
    assert "DYN306" not in {f.code for f in check_source(src).findings}
    # a reset that forward does not call (the user calls it between epochs) leaves the hazard
    src = src.replace("self.reset()\n        ", "")
    assert "DYN306" in {f.code for f in check_source(src).findings}


# ---- the fixer alone ----------------------------------------------------------------------------------------
def _edit(text: str, needle: str, code: str, node_type: str = "Name") -> Edit:
    for n, line in enumerate(text.splitlines(), 1):
        col = line.find(needle)
        if col >= 0:
            return Edit(n, col, n, col + len(needle), node_type, code)
    raise AssertionError(needle)


def test_overlapping_fixes_apply_the_smallest_first():
    text = "x = a + b  # keep me\ny = c\n"
    inner = Fix("inner", "safe", (_edit(text, "a", "aa"),))
    outer = Fix("outer", "safe", (_edit(text, "a + b", "zz", "BinaryOperation"),))
    other = Fix("other", "safe", (_edit(text, "c", "cc"),))
    new, applied = apply_fixes(text, [outer, inner, other])
    assert new == "x = aa + b  # keep me\ny = cc\n" and applied == [inner, other]


def test_a_fix_whose_node_is_gone_is_skipped():
    text = "x = a\n"
    stale = Fix("stale", "safe", (Edit(1, 4, 1, 9, "Name", "b"),))
    assert apply_fixes(text, [stale]) == (text, [])


@pytest.mark.parametrize("source,expected", [
    ("x = 1\n", "import torch\nx = 1\n"),
    ('"""doc"""\n\nimport os\nfrom torch import nn\n\nx = 1\n',
     '"""doc"""\n\nimport os\nimport torch\nfrom torch import nn\n\nx = 1\n'),
    ("#!/usr/bin/env python\n# licence\nfrom __future__ import annotations\n\nfrom torch import nn\n",
     "#!/usr/bin/env python\n# licence\nfrom __future__ import annotations\n\nimport torch\nfrom torch import nn\n"),
    ("import torch.nn as nn\n", "import torch.nn as nn\nimport torch\n"),
    ("import torch.nn\n", "import torch.nn\n"),          # binds `torch` already
])
def test_ensure_imports(source, expected):
    import libcst as cst
    assert ensure_imports(cst.parse_module(source), [("torch", "torch")]).code == expected


def test_alias_of_torch_is_used():
    src = textwrap.dedent("""
        import torch as th

        @th.compile
        def step(x):
            print(x)
            return x * 2
    """).lstrip()
    assert "    if not th.compiler.is_compiling():\n        print(x)\n" in fix_source(src)


def test_crlf_tabs_and_comments_are_kept(tmp_path):
    src = "import torch\r\n\r\n# header comment\r\n@torch.compile\r\ndef f(x):\r\n\ty = x * 2  # why\r\n" \
          "\tprint(y)  # debug\r\n\treturn y\r\n"
    fixed = fix_source(src)
    assert fixed == ("import torch\r\n\r\n# header comment\r\n@torch.compile\r\ndef f(x):\r\n\ty = x * 2  # why\r\n"
                     "\tif not torch.compiler.is_compiling():\r\n\t\tprint(y)  # debug\r\n\treturn y\r\n")


@pytest.mark.parametrize("header,safe", [
    ("import torch\n", True),
    ("import torch.nn as nn\nimport torch\n", True),
    ("import torch as th\ntorch = th\n", True),                  # `th`: the fix spells torch as the file does
    # torch bound only lazily: the guard would add a top-level `import torch`, which importing the file never did
    ("try:\n    import torch\nexcept ImportError:\n    torch = None\n", False),
    ("import importlib\ntorch = importlib.import_module('torch')\n", False),
])
def test_a_fix_that_adds_an_import_is_unsafe(header, safe):
    src = header + "\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"
    assert "DYN301" in {f.code for f in check_source(src).findings}
    assert (fix_source(src) != src) == safe
    assert "is_compiling()" in fix_source(src, unsafe=True)


def test_top_level_imports():
    from dynlint.linter.walker import top_level_imports
    src = "import a.b\nfrom c import d\nfrom . import e\nif x:\n    import f\ntry:\n    import g\nexcept Exception:\n" \
          "    pass\n\ndef h():\n    import i\n"
    assert top_level_imports(src) == {"a.b", "c"}
    assert top_level_imports("def (") == frozenset()


# ---- the command line ---------------------------------------------------------------------------------------
MODEL = textwrap.dedent("""
    # model code: this comment must survive
    import torch

    from pkg.helpers import report


    @torch.compile
    def step(x):
        y = x * 2   # double it
        print("step", y.shape)
        if (y < 0).any():
            raise ValueError("negative input")
        report(y)
        return y + 1
""").lstrip()
HELPERS = textwrap.dedent("""
    import logging

    logger = logging.getLogger(__name__)


    def report(y):
        logger.info("mean %s", y.mean())
""").lstrip()
BROKEN = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x +\n"


@pytest.fixture
def project(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "pkg/__init__.py": "", "pkg/model.py": MODEL,
                          "pkg/helpers.py": HELPERS, "pkg/broken.py": BROKEN})
    os.chmod(tmp_path / "pkg" / "model.py", 0o640)
    return tmp_path


def test_diff_prints_and_writes_nothing(cli, project):
    before = {p: p.read_bytes() for p in project.rglob("*.py")}
    r = cli("check", ".", "--diff", "--no-cache", cwd=project)
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith("--- a/pkg/model.py\n+++ b/pkg/model.py\n")
    assert "+    if not torch.compiler.is_compiling():\n+        print(\"step\", y.shape)\n" in r.stdout
    # helpers.py does not import torch: guarding its log call would add `import torch` -- unsafe
    assert "pkg/helpers.py" not in r.stdout and "_assert_async" not in r.stdout    # the raise guard: unsafe
    assert "Would apply 1 fix to 1 file. 2 more fixes with --unsafe-fixes" in r.stderr
    assert {p: p.read_bytes() for p in project.rglob("*.py")} == before


def test_paths_are_shown_from_the_working_folder_so_a_diff_applies_there(cli, project):
    """The configuration sits in a sub-folder of the repository; from the repository's root, the text output
    and the diff name files from there (as ruff does), and `git apply` takes the diff."""
    import shutil
    import subprocess

    repo = project.parent / "repo"
    shutil.copytree(project, repo / "sub")
    git = shutil.which("git")
    r = cli("check", "sub", "--no-cache", cwd=repo)
    assert "sub/pkg/model.py:" in r.stdout and "\npkg/model.py:" not in "\n" + r.stdout
    r = cli("check", "sub", "--diff", "--no-cache", cwd=repo)
    assert r.stdout.startswith("--- a/sub/pkg/model.py\n+++ b/sub/pkg/model.py\n"), r.stdout[:200]
    r2 = cli("check", ".", "--no-cache", cwd=repo / "sub" / "pkg")       # below the configuration: ../ free
    assert "model.py:" in r2.stdout and "pkg/model.py" not in r2.stdout
    if git:
        subprocess.run([git, "init", "-q"], cwd=repo, check=True)
        applied = subprocess.run([git, "apply", "--check", "-"], cwd=repo, input=r.stdout, text=True,
                                 capture_output=True)
        assert applied.returncode == 0, applied.stderr


def test_diff_unsafe_and_clean(cli, project):
    r = cli("check", "pkg/model.py", "--diff", "--unsafe-fixes", "--no-cache", cwd=project)
    assert r.returncode == 1 and "+        torch._assert_async(" in r.stdout
    r = cli("check", "pkg/__init__.py", "--diff", "--no-cache", cwd=project)
    assert r.returncode == 0 and r.stdout == "" and "No fixes available." in r.stderr


def test_fix_rewrites_reports_the_rest_and_keeps_comments_and_mode(cli, project):
    r = cli("check", ".", "--fix", "--no-cache", cwd=project)
    assert r.returncode == 1, r.stderr                # the raise guard and the syntax error remain
    model = (project / "pkg" / "model.py").read_text()
    assert model.startswith("# model code: this comment must survive\nimport torch\n")
    assert "    y = x * 2   # double it\n    if not torch.compiler.is_compiling():\n        print(" in model
    assert stat.S_IMODE(os.stat(project / "pkg" / "model.py").st_mode) == 0o640
    assert (project / "pkg" / "helpers.py").read_text() == HELPERS   # would need a new `import torch`: unsafe
    assert (project / "pkg" / "broken.py").read_text() == BROKEN      # a syntax error: never touched
    assert "pkg/model.py:12:8: DYN101" in r.stdout and "DYN000" in r.stdout and "DYN301" not in r.stdout
    assert "Applied 1 fix to 1 file: 1 finding fewer, 3 remaining. 2 more fixes with --unsafe-fixes" in r.stdout
    assert not list(project.rglob("*.dynlint-fix"))    # no temporary files left behind
    # fixed code is clean for the rules fixed, and fixing again changes nothing
    r = cli("check", "pkg/model.py", "pkg/helpers.py", "--diff", "--no-cache", cwd=project)
    assert r.returncode == 0 and r.stdout == "" and "No fixes available. 2 more fixes with --unsafe-fixes" in r.stderr


def test_unsafe_fixes_apply_too(cli, project):
    r = cli("check", "pkg/model.py", "pkg/helpers.py", "--fix", "--unsafe-fixes", "--no-cache", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Applied 3 fixes to 2 files: 3 findings fewer, 0 remaining." in r.stdout
    model = (project / "pkg" / "model.py").read_text()
    assert "    if torch.compiler.is_compiling():\n        torch._assert_async(" in model
    assert "    elif (y < 0).any():\n        raise ValueError(\"negative input\")\n" in model
    helpers = (project / "pkg" / "helpers.py").read_text()
    assert helpers.startswith("import logging\nimport torch\n") and \
        "    if not torch.compiler.is_compiling():\n        logger.info(" in helpers


def test_fix_with_json_output_keeps_stdout_a_document(cli, project):
    r = cli("check", "pkg/model.py", "--fix", "--format", "json", "--no-cache", cwd=project)
    doc = json.loads(r.stdout)
    assert [f["code"] for f in doc["findings"]] == ["DYN101"]
    assert doc["findings"][0]["autofix"]["safety"] == "unsafe"
    assert "Applied 1 fix to 1 file: 1 finding fewer, 1 remaining." in r.stderr


def test_fix_keeps_encoding_and_bom(cli, tmp_path):
    latin = "# -*- coding: latin-1 -*-\nimport torch\n\n@torch.compile\ndef f(x):\n    print('\xe9t\xe9', x)\n" \
            "    return x\n"
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "latin.py": latin.encode("latin-1"),
                          "bom.py": b"\xef\xbb\xbf" + latin.replace("latin-1", "utf-8").encode("utf-8")})
    r = cli("check", ".", "--fix", "--no-cache", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    fixed = (tmp_path / "latin.py").read_bytes()
    assert fixed.decode("latin-1").count("is_compiling") == 1 and "\xe9t\xe9".encode("latin-1") in fixed
    bom = (tmp_path / "bom.py").read_bytes()
    assert bom.startswith(b"\xef\xbb\xbf") and b"is_compiling" in bom


def test_later_passes_see_the_whole_project(cli, tmp_path):
    """The where-fix in a helper needs a second pass (after the logging guard), and the helper is compiled only
    because a compiled function in another file calls it: the re-check must keep the package structure."""
    write_tree(tmp_path, {
        "pyproject.toml": "[tool.dynlint]\n", "pkg/__init__.py": "",
        "pkg/model.py": "import torch\n\nfrom pkg.util import clean\n\n\n@torch.compile\ndef step(x):\n"
                        "    return clean(x) * 2\n",
        "pkg/util.py": "import logging\n\nimport torch\n\nlog = logging.getLogger(__name__)\n\n\ndef clean(x):\n"
                       "    if torch.isnan(x).any():\n        log.warning('NaN')\n        x = torch.nan_to_num(x)\n"
                       "    return x.clamp(min=0)\n"})
    r = cli("check", ".", "--fix", "--no-cache", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "pkg" / "util.py").read_text().endswith(
        "def clean(x):\n    if not torch.compiler.is_compiling():\n        if torch.isnan(x).any():\n"
        "            log.warning('NaN')\n    x = torch.where(torch.isnan(x).any(), torch.nan_to_num(x), x)\n"
        "    return x.clamp(min=0)\n")
    assert "Applied 2 fixes to 1 file: 2 findings fewer, 0 remaining." in r.stdout


def test_show_fixes_lists_the_applied_fixes_per_file_and_rule(cli, project):
    """`--fix --show-fixes` (ruff's): each fixed file, named from the working folder, with a line per rule whose
    fixes were applied and how many; without --show-fixes, the summary alone."""
    r = cli("check", "pkg", "--fix", "--show-fixes", "--no-cache", cwd=project)
    listed = r.stdout.split("- pkg/model.py:\n", 1)
    assert len(listed) == 2, r.stdout
    rows = [ln for ln in listed[1].splitlines() if ln.startswith("    ")]
    assert rows and all(re.fullmatch(r"    \d+ × DYN\d{3} \([a-z0-9-]+\)", ln) for ln in rows), rows
    assert sum(int(ln.split()[0]) for ln in rows) == int(re.search(r"Applied (\d+) fix", r.stdout).group(1))
    assert "- pkg/helpers.py:" not in r.stdout                    # its only fix is unsafe: not applied
    plain = cli("check", "pkg", "--fix", "--no-cache", cwd=project)
    assert "- pkg/" not in plain.stdout


def test_unfixable_rules_are_reported_but_not_fixed(cli, project):
    """`unfixable` (ruff's): the rule's findings stay, without the fix marker or the fix; `fixable` narrows what
    --fix applies the same way; the longest matching prefix wins between them."""
    (project / "pyproject.toml").write_text('[tool.dynlint]\nunfixable = ["DYN3"]\nfixable = ["ALL"]\n')
    before = (project / "pkg" / "model.py").read_text()
    r = cli("check", "pkg", "--fix", "--no-cache", "--output-format", "json", cwd=project)
    doc = json.loads(r.stdout)
    assert any(f["code"].startswith("DYN3") and "autofix" not in f for f in doc["findings"]), doc["findings"]
    assert (project / "pkg" / "model.py").read_text() == before                  # its only safe fix is DYN301's
    r = cli("check", "pkg", "--fix", "--no-cache", "--extend-fixable", "DYN301", cwd=project)
    assert (project / "pkg" / "model.py").read_text() != before                   # DYN301 is longer than DYN3
