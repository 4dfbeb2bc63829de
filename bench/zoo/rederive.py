"""Fill in the guard lines that collect.py's old guard pattern dropped, from what a results file stores.

Until the fix, a guard comment followed by a parenthesis (`# ...modeling_bart.py:92 in forward (HINT: type
Tensor)`) lost its file and line, though its source text was kept: such a recompile was counted with those on
tensor sizes alone. The source line lies in the recompiled function's file (the frame whose guards failed), at
or after its first line: the nearest line there with that exact text is the guard's line. Marked
`"rederived": true`; a guard whose text isn't found there stays as it was (re-collect that model).

    python bench/zoo/rederive.py bench/zoo/results/transformers-5.4.0.jsonl    # rewrites it in place
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from score import ensure_tree  # noqa: E402


def rederive(records, tree):
    """Fills `file`/`line` of guards that have a source text and no file; returns (fixed, left) counts."""
    fixed = left = 0
    for rec in records:
        for rc in rec.get("recompiles", []):
            for g in rc.get("guard_failures", []):
                if not g.get("source") or g.get("file"):
                    continue
                line = _find(tree / rc["file"], rc["line"], g["source"]) if rc.get("file") else None
                if line is None:
                    left += 1
                    continue
                g.update(file=rc["file"], line=line, rederived=True)
                fixed += 1
    return fixed, left


def _find(path, first, source):
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    hits = [n for n, text in enumerate(lines, 1) if n >= first and text.strip() == source.strip()]
    return hits[0] if hits else None


def main():
    path = Path(sys.argv[1])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, records = lines[0], lines[1:]
    library = next(k for k in header if k not in ("header", "torch", "python"))
    fixed, left = rederive(records, ensure_tree(library, header[library]) / library)
    path.write_text(json.dumps(header) + "\n" +           # as collect.py writes them
                    "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    print(f"{fixed} guard lines re-derived, {left} left without one")


if __name__ == "__main__":
    main()
