"""`dynlint server` end to end: pytest-lsp starts it as a subprocess and speaks the Language Server Protocol to
it over stdio, as an editor does."""
import asyncio
import sys
import textwrap
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

BRANCHY = textwrap.dedent('''
    import torch
    from torch import nn


    class Gate(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x * 2
            return x
''').lstrip()
FIXED = BRANCHY.replace("        if x.sum() > 0:\n            return x * 2\n        return x\n",
                        "        return torch.where(x.sum() > 0, x * 2, x)\n")
assert FIXED != BRANCHY
HELPER = "import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef scale(x):\n    log.info('scaling')\n    return x * 2\n"
MODEL = textwrap.dedent('''
    from torch import nn

    from helpers import scale


    class Net(nn.Module):
        def forward(self, x):
            return scale(x)
''').lstrip()


RECOMPILING = textwrap.dedent('''
    import torch


    @torch.compile
    def shift(x, n):
        return x + n


    def main(x):
        shift(x, 1)
        shift(x, 2)
''').lstrip()


@pytest.fixture()
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (tmp_path / "gate.py").write_text(BRANCHY)
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "net.py").write_text(MODEL)
    (tmp_path / "shift.py").write_text(RECOMPILING)
    return tmp_path


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "dynlint", "server"]))
async def client(lsp_client: LanguageClient, project):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")]))
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, path, text=None):
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text() if text is None else text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


async def _until(condition, timeout: float = 60.0) -> None:
    """Wait for the server's publications to make `condition()` true (they arrive after a debounce)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "no such diagnostics were published"
        await asyncio.sleep(0.05)


def _codes(client: LanguageClient, uri: str):
    return [d.code for d in client.diagnostics.get(uri, [])]


@pytest.mark.asyncio
async def test_a_data_dependent_branch_is_a_diagnostic_at_its_range(client: LanguageClient, project):
    uri = await _open(client, project / "gate.py")
    found = [d for d in client.diagnostics[uri] if d.code == "DYN101"]
    assert len(found) == 1
    d = found[0]
    line = BRANCHY.splitlines().index("        if x.sum() > 0:")
    assert (d.range.start.line, d.range.start.character) == (line, 11)
    assert (d.range.end.line, d.range.end.character) == (line, 22)
    assert d.source == "dynlint" and d.severity == types.DiagnosticSeverity.Warning


@pytest.mark.asyncio
async def test_fixing_the_unsaved_buffer_clears_the_diagnostic(client: LanguageClient, project):
    uri = await _open(client, project / "gate.py")
    assert any(d.code == "DYN101" for d in client.diagnostics[uri])
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=FIXED)]))
    await _until(lambda: _codes(client, uri) == [])
    assert (project / "gate.py").read_text() == BRANCHY        # the file on disk was not touched


@pytest.mark.asyncio
async def test_a_helper_is_checked_because_another_files_forward_calls_it(client: LanguageClient, project):
    uri = await _open(client, project / "helpers.py")
    assert [d.code for d in client.diagnostics[uri]] == ["DYN302"]
    # the caller stops calling it (unsaved, in another open buffer): the helper is no longer traced
    net = await _open(client, project / "net.py")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=net, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=MODEL.replace("scale(x)", "x * 2"))]))
    await _until(lambda: _codes(client, uri) == [])     # republished although helpers.py did not change


@pytest.mark.asyncio
async def test_code_actions_apply_the_fix_and_add_a_noqa(client: LanguageClient, project):
    uri = await _open(client, project / "helpers.py")
    d = client.diagnostics[uri][0]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))
    by_title = {a.title: a for a in actions}
    noqa = next(a for t, a in by_title.items() if "noqa" in t)
    (edit,) = noqa.edit.changes[uri]
    assert edit.new_text == "  # noqa: DYN302" and edit.range.start.line == d.range.start.line
    fix = next(a for t, a in by_title.items() if "noqa" not in t)
    # safe fixes are the preferred quick fix; an unsafe one says so in its title
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred == ("unsafe" not in fix.title)
    (edit,) = fix.edit.changes[uri]
    fixed = edit.new_text
    assert "torch.compiler.is_compiling()" in fixed and "log.info('scaling')" in fixed
    # the fixed text, checked as the buffer, has no finding left
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
    await _until(lambda: _codes(client, uri) == [])


@pytest.mark.asyncio
async def test_hover_on_a_diagnostic_shows_its_rule(client: LanguageClient, project):
    uri = await _open(client, project / "gate.py")
    d = next(d for d in client.diagnostics[uri] if d.code == "DYN101")
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start))
    assert result is not None and "DYN101" in result.contents.value and "Why is this bad?" in result.contents.value


@pytest.mark.asyncio
async def test_a_recompile_diagnostic_stands_at_the_guard_with_the_calls_related(client: LanguageClient, project):
    """The editor shows the finding where Dynamo guards (`return x + n`) and lists the calls that pass `n`
    different values as the diagnostic's related information."""
    uri = await _open(client, project / "shift.py")
    (d,) = [d for d in client.diagnostics[uri] if d.code == "DYN508"]
    assert d.range.start.line == RECOMPILING.splitlines().index("    return x + n")
    assert [(r.location.uri, r.location.range.start.line) for r in d.related_information] == \
        [(uri, 10), (uri, 9)]
    assert d.related_information[0].message == "`n` is passed to `shift` here"
