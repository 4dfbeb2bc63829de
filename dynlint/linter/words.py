"""Counted words in what dynlint says: `plural(2, "fix")` is "2 fixes", `plural(1, "file")` "1 file"."""
from __future__ import annotations


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('s', 'x', 'z', 'ch', 'sh')) else 's'}"
