"""Keystroke to diagnostics: how long `dynlint server` takes, warm, to publish new diagnostics after an edit.

    python bench/server_latency.py [--tree DIR] [--file REL] [--edits N]

Starts `dynlint server` over stdio with pygls's client, opens one file of the tree (transformers 5.4.0 by
default, fetched by bench/speed.py), waits for its first diagnostics (the cold start and the warm-up), then
sends N edits (a comment line appended: a one-file edit) one at a time and measures, for each, the time from
the didChange notification to the publication of that version's diagnostics. The server waits for a pause in
typing (server.DEBOUNCE) before it checks; that wait is part of what a user sees, so it is included. Prints
one line per edit and the median; bench/speed.py puts the median in docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from dynlint.server import DEBOUNCE

HERE = Path(__file__).resolve().parent
DEBOUNCE_NOTE = f"server's wait for a pause in typing ({DEBOUNCE} s) included"


async def measure(tree: Path, rel: str, edits: int) -> dict:
    client = LanguageClient("bench", "1")
    published: dict = {}
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams):
        published[(params.uri, params.version)] = (time.perf_counter(), len(params.diagnostics))
        arrived.set()

    async def wait_for(uri, version, timeout=600.0):
        deadline = time.perf_counter() + timeout
        while (uri, version) not in published:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), max(deadline - time.perf_counter(), 0.01))
        return published[(uri, version)]

    await client.start_io(sys.executable, "-m", "dynlint", "server", cwd=str(tree))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        workspace_folders=[types.WorkspaceFolder(uri=tree.as_uri(), name="tree")]))
    client.initialized(types.InitializedParams())
    path = tree / rel
    uri, text = path.as_uri(), path.read_text()
    start = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    first, n = await wait_for(uri, 1)
    opened = first - start
    times = []
    for i in range(edits):
        text += f"\n# edit {i}\n"
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))
        at, _ = await wait_for(uri, i + 2)
        times.append(at - sent)
        print(f"edit {i + 1}: {times[-1]:.3f} s", file=sys.stderr)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"open": opened, "edits": times, "median": statistics.median(times), "diagnostics": n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, default=HERE / ".data" / "transformers-5.4.0")
    ap.add_argument("--file", default="transformers/models/llama/modeling_llama.py")
    ap.add_argument("--edits", type=int, default=5)
    args = ap.parse_args()
    r = asyncio.run(measure(args.tree.resolve(), args.file, args.edits))
    print(f"open (first diagnostics): {r['open']:.2f} s; keystroke to diagnostics, one-file edit, warm: median "
          f"{r['median']:.3f} s over {len(r['edits'])} edits ({' / '.join(f'{t:.3f}' for t in r['edits'])})")


if __name__ == "__main__":
    main()
