"""`api.Session`, the editor's repeated checks of one project (the language server's engine): every check sees the
whole project, so a helper in another file that a compiled function calls keeps its findings after any number of
edits, and an undo brings back exactly what was there."""
from dynlint import api

from conftest import write_tree

MODEL = "import torch\nfrom utils import helper\n\n\n@torch.compile\ndef f(x):\n    return helper(x)\n"
UTILS = "def helper(x):\n    return x.item()\n"
EDITED = "def helper(x):\n    y = x + 1\n    return y.item()\n"


def _lines(result, path):
    return sorted((f.line, f.code) for f in result.findings if f.path == path)


def test_cross_file_findings_survive_edits_and_undo(tmp_path):
    project = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "model.py": MODEL, "utils.py": UTILS})
    session = api.Session(str(project / "model.py"))
    first = session.check()
    assert _lines(first, "utils.py") == [(2, "DYN201")]
    edited = session.check({"utils.py": EDITED.encode()})
    assert _lines(edited, "utils.py") == [(3, "DYN201")]
    again = session.check({"utils.py": EDITED.encode()})
    assert _lines(again, "utils.py") == [(3, "DYN201")]
    undone = session.check({"utils.py": UTILS.encode()})
    assert _lines(undone, "utils.py") == [(2, "DYN201")] and set(undone.files) == set(first.files)
    assert _lines(session.check(), "utils.py") == [(2, "DYN201")]


def test_what_a_frame_is_never_given_follows_a_caller_added_in_another_file(tmp_path):
    """Whether project code ever hands a per-layer frame a value for a parameter (frames.py `_unsupplied`) is
    kept per function between checks; a model added in a new file that passes the decoder encoder states makes
    the cross-attention's flag a recompile there (test_frames.py proves both cases under real Dynamo), and
    taking the file out again clears it: each check equals a fresh one."""
    from test_frames import CAUSAL_LM, ENCODER_DECODER, SEQ2SEQ, _line
    layers = ENCODER_DECODER.split("{models}")[0]
    head = "import torch\nfrom torch import nn\nfrom layers import Cache, Decoder, Encoder\n"
    project = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "layers.py": layers,
                                    "model.py": head + CAUSAL_LM})
    session = api.Session(str(project / "model.py"))
    flag = _line(layers, "if is_cross_attention and cache is not None and is_updated:")

    def dyn509(result):
        return sorted(f.line for f in result.findings if f.code == "DYN509" and f.path == "layers.py")
    assert flag not in dyn509(session.check())
    added = {"seq2seq.py": (head + SEQ2SEQ).encode()}
    assert flag in dyn509(session.check(added))
    assert dyn509(session.check(added)) == dyn509(api.check([str(project)], session.config, buffers=added))
    assert flag not in dyn509(session.check())


# helpers.py's finding depends on what model.py passes it (a tensor makes `t > 500` a tensor condition)
HELPERS = "def gate(x, t):\n    if t > 500:\n        return x * 2\n    return x\n"
CALLER = ("import torch\nfrom helpers import gate\n\n\n@torch.compile\ndef f(x):\n    t = {t}\n    return gate(x, t)\n")


def test_a_focused_check_keeps_the_other_files_cached_findings(tmp_path):
    """An editor shows the findings of its open documents only: a check focused on them checks those, and the
    other files keep their cached findings even where the edit could change them; an unfocused check (what
    `dynlint check` does) checks those again."""
    project = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "helpers.py": HELPERS,
                                    "model.py": CALLER.format(t="x.sum()")})
    session = api.Session(str(project / "model.py"))
    assert _lines(session.check(), "helpers.py") == [(2, "DYN101")]
    scalar = {"model.py": CALLER.format(t="x.shape[0] * 300").encode()}
    focused = session.check(scalar, focus={"model.py"})
    assert _lines(focused, "helpers.py") == [(2, "DYN101")]            # kept from the cache
    assert _lines(session.check(scalar), "helpers.py") == []           # checked again: an int, no finding
    # the open document itself is always checked: an edit that adds a break there shows at once
    broken = {"model.py": CALLER.format(t="x.sum()").replace("return gate", "print(x)\n    return gate").encode()}
    assert (8, "DYN301") in _lines(session.check(broken, focus={"model.py"}), "model.py")
