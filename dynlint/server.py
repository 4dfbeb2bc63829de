"""`dynlint server`: a Language Server (LSP over stdio) for editors, built on pygls and lsprotocol.

Each open document is checked as that file of its project, unsaved text included: the whole project stays in
view (a helper is checked because a compiled `forward` in another file calls it), and the other open files of
the project get fresh diagnostics too, since an edit in one file can change what another's regions are. The
project's configuration comes from its pyproject.toml, as for `dynlint check`; the warm cache keeps a re-check
to the open files (the files it does not show keep their cached findings). Code actions: every autofix (safe ones as preferred quick fixes, unsafe ones
labelled) and a `# noqa: CODE` comment; hovering a diagnostic shows its rule's documentation.

Editor set-up: docs/editors.md.
"""
from __future__ import annotations

import asyncio
import gc
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from dynlint import api
from dynlint.linter.config import ConfigError, load_config
from dynlint.linter.files import relpath
from dynlint.linter.finding import Finding
from dynlint.linter.rule import REGISTRY
from dynlint.linter.version import __version__

SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "note": types.DiagnosticSeverity.Information}
CONFIG_FILES = ("pyproject.toml", ".dynlint.toml", "dynlint.toml")
DEBOUNCE = 0.25         # seconds of quiet after a keystroke before the project is checked again
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z0-9, ]+))?", re.IGNORECASE)


class DynlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("dynlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.findings: Dict[str, List[Finding]] = {}        # uri -> the findings its diagnostics show
        self.roots: Dict[str, Path] = {}                    # uri -> the root of its project
        self.sessions: Dict[Path, api.Session] = {}           # project root -> its configuration, files, cache
        self.first_check = False                                # a new session's first check is to come

    def session(self, path: str) -> "api.Session":
        """The project of a file, kept between checks (its root is where its configuration was found)."""
        config = load_config([path], api.known_codes())
        if config.root not in self.sessions:
            self.sessions[config.root] = api.Session(path)
            self.first_check = True
        return self.sessions[config.root]

    # ---- checking ----------------------------------------------------------------------------------
    def check(self, trigger_uri: str) -> None:
        """Check the project of `trigger_uri` with every open document of it as a buffer; publish the
        diagnostics of each of those documents."""
        path = to_fs_path(trigger_uri)
        if not path or not path.endswith(".py"):
            return
        try:
            session = self.session(path)
        except ConfigError as e:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"dynlint: {e}"))
            return
        root = session.config.root
        buffers: Dict[str, bytes] = {}
        uris: Dict[str, str] = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            fs = to_fs_path(uri)
            if not fs or not fs.endswith(".py"):
                continue
            rel = relpath(Path(fs).absolute(), root)
            if rel.startswith("../") or Path(rel).is_absolute():
                continue                    # another project's file
            buffers[rel] = doc.source.encode("utf-8")
            uris[rel] = uri
        # on the server's thread, the main one: the engine's time limits use signals. Only the open documents
        # show diagnostics: the other files keep what the cache holds for them (an edit of a model file would
        # otherwise check again every file it imports, whose findings can depend on its calls: 11 s on a
        # 4,000-line transformers model); `dynlint check` checks them again
        result = session.check(buffers, focus=set(buffers))
        by_rel: Dict[str, List[Finding]] = {rel: [] for rel in uris}
        for f in result.findings:
            if f.path in by_rel:
                by_rel[f.path].append(f)
        for rel, found in by_rel.items():
            uri = uris[rel]
            self.findings[uri] = found
            self.roots[uri] = root
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[diagnostic(f, root) for f in found],
                version=self.workspace.get_text_document(uri).version))
        if self.first_check:
            # what a project's first check loaded (its indexes, the frame model's facts) lives as long as the
            # server: out of the collector's sight (after the diagnostics are out), so that no full collection
            # over it stalls an edit's check
            self.first_check = False
            gc.collect()
            gc.freeze()


def diagnostic(f: Finding, root: Optional[Path] = None) -> types.Diagnostic:
    """The LSP diagnostic of a finding; its related lines (a recompile finding's changes of the guarded value)
    as `relatedInformation`, located under the project's `root`."""
    end_line = f.end_line or f.line
    end_col = f.end_column if f.end_line else f.column + 1
    related = [types.DiagnosticRelatedInformation(
        location=types.Location(uri=from_fs_path(str(root / rpath)) or "", range=types.Range(
            start=types.Position(line=max(rline - 1, 0), character=rcol),
            end=types.Position(line=max(rline - 1, 0), character=rcol + 1))), message=what)
        for rpath, rline, rcol, what in f.related] if root is not None else []
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=max(f.line - 1, 0), character=f.column),
                          end=types.Position(line=max(end_line - 1, 0), character=end_col)),
        message=f.message + (f"\nFix: {f.fix}" if f.fix else ""),
        severity=SEVERITY.get(f.severity, types.DiagnosticSeverity.Warning),
        code=f.code, source="dynlint", related_information=related or None)


server = DynlintServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: DynlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.check(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: DynlintServer, params: types.DidChangeTextDocumentParams) -> None:
    # once the typing pauses: a check per keystroke would queue behind itself
    uri, version = params.text_document.uri, params.text_document.version
    await asyncio.sleep(DEBOUNCE)
    if ls.workspace.get_text_document(uri).version == version:
        ls.check(uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: DynlintServer, params: types.DidSaveTextDocumentParams) -> None:
    if Path(to_fs_path(params.text_document.uri) or "").name in CONFIG_FILES:
        ls.sessions.clear()         # the configuration changed: read it again at the next check
        for uri in list(ls.findings):
            ls.check(uri)
        return
    ls.check(params.text_document.uri)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files(ls: DynlintServer, params: types.DidChangeWatchedFilesParams) -> None:
    """Files created or deleted: list the projects' files again; a configuration file changed: read it again."""
    if any(Path(to_fs_path(c.uri) or "").name in CONFIG_FILES for c in params.changes):
        ls.sessions.clear()
    for session in ls.sessions.values():
        session.refresh()


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: DynlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.findings.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                        diagnostics=[]))


def _inside(f: Finding, line: int, character: int) -> bool:
    """Is the 0-based position within the finding's span?"""
    start, end = (f.line - 1, f.column), ((f.end_line or f.line) - 1, f.end_column if f.end_line else f.column + 1)
    return start <= (line, character) <= end


def _overlaps(f: Finding, r: types.Range) -> bool:
    start, end = (f.line - 1, f.column), ((f.end_line or f.line) - 1, f.end_column if f.end_line else f.column + 1)
    return start <= (r.end.line, r.end.character) and (r.start.line, r.start.character) <= end


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_action(ls: DynlintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
    from dynlint.linter.fixer import apply_fixes     # libcst-heavy: only when asked
    uri = params.text_document.uri
    doc = ls.workspace.get_text_document(uri)
    actions: List[types.CodeAction] = []
    for f in ls.findings.get(uri, []):
        if not _overlaps(f, params.range):
            continue
        diag = diagnostic(f, ls.roots.get(uri))
        if f.autofix is not None:
            fixed, applied = apply_fixes(doc.source, [f.autofix])
            if applied:
                unsafe = f.autofix.safety == "unsafe"
                actions.append(types.CodeAction(
                    title=f"{f.autofix.title} ({f.code}{', unsafe: check the result' if unsafe else ''})",
                    kind=types.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=not unsafe,
                    edit=types.WorkspaceEdit(changes={uri: [_whole(doc.source, fixed)]})))
        edit = _noqa_edit(doc.lines, f.line - 1, f.code)
        if edit is not None:
            actions.append(types.CodeAction(title=f"Disable {f.code} for this line (# noqa)",
                                            kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                                            edit=types.WorkspaceEdit(changes={uri: [edit]})))
    return actions


def _whole(before: str, after: str) -> types.TextEdit:
    """One edit replacing the document (the fixer rewrites a whole module)."""
    lines = before.split("\n")
    return types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                            end=types.Position(line=len(lines) - 1, character=len(lines[-1]))),
                          new_text=after)


def _noqa_edit(lines: List[str], line: int, code: str) -> Optional[types.TextEdit]:
    """Add `code` to the line's `# noqa` comment, or append one."""
    if not 0 <= line < len(lines):
        return None
    text = lines[line].rstrip("\r\n")
    m = _NOQA.search(text)
    if m and not m.group("codes"):
        return None                     # a bare `# noqa` already silences everything
    if m:
        codes = [c.strip() for c in m.group("codes").split(",") if c.strip()]
        if code in codes:
            return None
        new, start, end = f"# noqa: {', '.join(codes + [code])}", m.start(), m.end()
    else:
        new, start, end = f"  # noqa: {code}", len(text), len(text)
    return types.TextEdit(range=types.Range(start=types.Position(line=line, character=start),
                                            end=types.Position(line=line, character=end)), new_text=new)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: DynlintServer, params: types.HoverParams) -> Optional[types.Hover]:
    pos = params.position
    docs: List[Tuple[str, str]] = []
    for f in ls.findings.get(params.text_document.uri, []):
        rule = REGISTRY.get(f.code)
        if rule is not None and _inside(f, pos.line, pos.character) and f.code not in dict(docs):
            docs.append((f.code, rule.markdown("###")))
    if not docs:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                    value="\n---\n".join(text for _, text in docs)))


def main() -> int:
    server.start_io()
    return 0

