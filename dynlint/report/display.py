"""Text from the checked project (paths, source lines, messages that quote code) made safe to show: control
characters and bidi overrides escaped, workflow-command markers broken, long source lines cut to a window
around the span. The text and GitHub formats use `printable`; text and HTML use `clip`."""
from __future__ import annotations

import re
from typing import Tuple

SOURCE_WIDTH = 100          # characters of a source line shown around a finding's span, as a terminal fits

# C0 controls but tab (harmless whitespace), DEL, C1 (U+0085 NEL ends lines), the bidi embeddings, overrides
# and isolates that reorder what a reader sees (Trojan Source), and the Unicode line and paragraph separators;
# and `##[`, which the Actions runner reads as a (legacy) workflow command anywhere in a line of the log.
_OTHERS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_UNSAFE = re.compile(f"[\n\r{_OTHERS}]|##(?=\\[)")
_UNSAFE_BUT_BREAKS = re.compile(f"[{_OTHERS}]|##(?=\\[)")
_NAMED = {"\n": "\\n", "\r": "\\r", "##": "#\\x23"}


def _escape(m: re.Match) -> str:
    c = m.group(0)
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def printable(text: str, line_breaks: bool = False) -> str:
    """`text` with what would drive a terminal or a CI log (ESC sequences, line breaks, bidi overrides,
    workflow commands) shown escaped, as `\\x1b`, `\\n`, `\\u202e`. line_breaks: CR and LF kept, for a format
    that escapes them itself (GitHub's %0D, %0A)."""
    return (_UNSAFE_BUT_BREAKS if line_breaks else _UNSAFE).sub(_escape, text)


def clip(line: str, start: int, end: int, width: int = SOURCE_WIDTH) -> Tuple[str, int, int]:
    """A line longer than `width` cut to a window of `width` characters around the span start..end (its start,
    if the span is longer), with `...` at each cut; returns the window and the span's place in it."""
    if len(line) <= width:
        return line, start, end
    end = min(end, start + width)
    lo = max(0, min(start - (width - (end - start)) // 2, len(line) - width))
    text = ("..." if lo else "") + line[lo:lo + width] + ("..." if lo + width < len(line) else "")
    shift = (3 if lo else 0) - lo
    return text, start + shift, min(end, lo + width) + shift
