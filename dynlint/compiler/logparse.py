"""Parse Dynamo's `graph_breaks` and `recompiles` log messages into records (pure text; no torch import).

Message layouts (measured on torch 2.13 and 2.11; tests/test_compiler.py holds real ones):

    Graph break in user code at FILE:LINE
    Graph Break Reason: [prefix]
    <gb_type>
      Explanation: ...
      Hint: ...
      Developer debug context: ...
     For more details ... /gb/gbNNNN.html
    [*** While handling this graph break, another graph break occurred: ***  + another gb_type block]
    User code traceback:
      File "...", line N, in fn

    Recompiling function f in FILE:LINE
        triggered by the following guard failure(s):
        - 3/0: mode == 'a'     # return x * len(mode)  # ...e/file.py:21 in f
        - User stack trace:                             (2.13+: full path of the guard's source line)
        -   File "/full/file.py", line 21, in f

Older torch (2.6) has no gb_type blocks ("Reason: Unsupported: ..."); the reason text then becomes the
explanation and gb_types stays empty, which the cross-check treats as "any type".
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

from dynlint.compiler.records import GraphBreak, GuardFailure, Recompile, parent_function

_LOC = re.compile(r"Graph break(?: \(user stack suppressed[^)]*\))? in user code at (.+?):(\d+)\s*$", re.M)
_FRAME = re.compile(r'^\s*(?:-\s+)?File "(.+?)", line (\d+), in (.+?)\s*$', re.M)
_DOC_LINK = re.compile(r"/gb/gb(\d+)\.html")
_RECOMPILE = re.compile(r"Recompiling function (\S+) in (.+?):(\d+)\s*$", re.M)
_FAILURE = re.compile(
    r"^\s*- (?P<entry>\d+/\d+): (?P<guard>.*?)"
    r"(?:\s+# (?P<source>.*?)\s+# (?P<path>\S+):(?P<line>\d+) in \S+)?(?:\s+\([^#]*\))?\s*$")


def parse_graph_break(msg: str, is_user: Callable[[str], bool], gb_ids: Dict[str, str]) -> GraphBreak:
    """One `graph_breaks` record. `is_user(path)` says whether a file belongs to the user's project."""
    m = _LOC.search(msg)
    reported = (m.group(1), int(m.group(2))) if m else ("", 0)
    if "Graph Break Reason:" in msg:
        body = msg.split("Graph Break Reason:", 1)[1]
    else:                                                    # torch < 2.7: "Reason: Unsupported: ..."
        body = msg.split("Reason:", 1)[-1] if "Reason:" in msg else ""
    reason, _, traceback = body.partition("User code traceback:")
    blocks = _gb_blocks(reason)
    gb_types = tuple(b[0] for b in blocks)
    links = ["GB" + n for n in _DOC_LINK.findall(reason)]    # one link per block; a fallback for old registries
    ids = tuple(gb_ids.get(t) or (links[i] if len(links) == len(blocks) else "") for i, t in enumerate(gb_types))
    if blocks:
        explanation, hints = blocks[0][1], blocks[0][2]
    else:
        explanation, hints = " ".join(reason.split()), ()
    frames = [(f, int(n), fn) for f, n, fn in _FRAME.findall(traceback)]
    user = [fr for fr in frames if is_user(fr[0])]
    if not user and reported[0] and is_user(reported[0]):
        user = [(reported[0], reported[1], "")]              # duplicates come without a traceback
    path, line, function = user[-1] if user else ("", 0, "")
    return GraphBreak(
        gb_types=gb_types, gb_ids=ids, explanation=explanation, hints=hints,
        path=path, line=line, function=function, reported_path=reported[0], reported_line=reported[1],
        frame_skipped="falling back to eager" in msg or "skip tracing the frame" in msg,
        duplicate="user stack suppressed" in msg,
    )


def _gb_blocks(reason: str) -> List[Tuple[str, str, Tuple[str, ...]]]:
    """(gb_type, explanation, hints) per block; the gb_type is the line right above "  Explanation:"."""
    lines = reason.splitlines()
    blocks = []
    for i in range(1, len(lines)):
        if not lines[i].startswith("  Explanation:"):
            continue
        explanation, hints, current = [lines[i].split(":", 1)[1].strip()], [], None
        for text in lines[i + 1:]:
            if text.startswith("  Hint:"):
                hints.append(text.split(":", 1)[1].strip())
                current = hints
            elif text.startswith("  Developer debug context:") or not text.startswith("  ") or text.strip() == "":
                if text.strip() == "" and current is None:
                    continue                                 # a blank line inside a multi-line explanation
                break
            elif current is None:
                explanation.append(text.strip())             # continuation of a multi-line explanation
        blocks.append((lines[i - 1].strip(), "\n".join(explanation), tuple(hints)))
    return blocks


def parse_recompile(msg: str) -> Optional[Recompile]:
    """One `recompiles` record, or None when the message is not a recompile."""
    m = _RECOMPILE.search(msg)
    if not m:
        return None
    failures: List[GuardFailure] = []
    for text in msg.splitlines():
        f = _FAILURE.match(text)
        if f and "User stack trace" not in text:
            failures.append(GuardFailure(entry=f["entry"], guard=f["guard"].strip(), source=(f["source"] or "").strip(),
                                         path=f["path"] or "", line=int(f["line"] or 0)))
            continue
        frame = _FRAME.match(text)
        if frame and failures:                               # "- User stack trace:" of the failure above
            last = failures[-1]
            failures[-1] = GuardFailure(last.entry, last.guard, last.source, frame.group(1), int(frame.group(2)))
    code_name = m.group(1)
    return Recompile(function=parent_function(code_name), code_name=code_name, path=m.group(2),
                     line=int(m.group(3)), failures=tuple(failures))


def is_recompile_limit_warning(msg: str) -> bool:
    return "hit config.recompile_limit" in msg or "hit config.cache_size_limit" in msg
