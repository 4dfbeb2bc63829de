"""Aggregate counts of zoo results files (bench/zoo/collect.py): statuses, skip reasons, break sites, recompiles.

    python bench/zoo/summary.py [bench/zoo/results/transformers-5.4.0.jsonl ...]    # default: every results file

Needs neither torch nor any model library.
"""
import collections
import glob
import json
import os
import re
import sys


def reason_kind(text):
    """A skip or error message without its model-specific details (names, numbers, quotes)."""
    text = re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "'…'", text or "")
    return re.sub(r"\d+", "N", text)[:90]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sys.argv[1:] or sorted(glob.glob(os.path.join(here, "results", "*.jsonl"))):
        summarise(path)
        print()


def summarise(path):
    with open(path) as f:
        lines = [json.loads(l) for l in f]
    header, recs = lines[0], lines[1:]
    print(f"{os.path.basename(path)}: " + ", ".join(f"{k} {v}" for k, v in header.items() if k != "header"))
    models = {r["model"] for r in recs}
    status = collections.Counter(r["status"] for r in recs)
    print(f"{len(recs)} records, {len(models)} models; status: {dict(status)}")
    ran = [r for r in recs if r["status"] in ("ok", "compile_error")]
    print(f"models that ran compiled in at least one mode: {len({r['model'] for r in ran})}")
    secs = [r["seconds"] for r in recs if "seconds" in r]
    if secs:
        print(f"seconds per record: mean {sum(secs) / len(secs):.1f}, max {max(secs):.0f}")

    why = collections.Counter()
    for r in recs:
        if r["status"] != "ok":
            why[(r["status"], reason_kind(r.get("reason") or r.get("error")))] += 1
    print("\nnot ok, by reason (records):")
    for (st, text), n in why.most_common(25):
        print(f"  {n:4}  {st:13} {text}")

    sites = collections.Counter()
    gb = collections.Counter()
    skipped_sites = set()
    for r in ran:
        for b in r.get("breaks", []):
            site = (b["file"], b["line"])
            sites[site] += 1
            gb[b["gb_types"][0] if b["gb_types"] else "?"] += 1
            if b["frame_skipped"]:
                skipped_sites.add(site)
    with_breaks = {r["model"] for r in ran if r.get("breaks")}
    print(f"\nbreak records {sum(sites.values())}, distinct sites (file, line) {len(sites)}, "
          f"of which frame-skipping {len(skipped_sites)}; models with a break {len(with_breaks)}")
    print("primary gb_types (break records):")
    for t, n in gb.most_common(12):
        print(f"  {n:4}  {t}")
    print("most shared sites:")
    for (f, line), n in sites.most_common(8):
        print(f"  {n:4}  {f}:{line}")

    rc = [x for r in ran for x in r.get("recompiles", [])]
    with_src = sum(1 for x in rc if any(g["file"] for g in x["guard_failures"]))
    kinds = collections.Counter()
    for x in rc:
        g = x["guard_failures"][0]["guard"] if x["guard_failures"] else ""
        kinds["size mismatch" if "size mismatch" in g else reason_kind(g)[:50]] += 1
    print(f"\nrecompiles {len(rc)} (with a guard source line in the library: {with_src}); first guard:")
    for k, n in kinds.most_common(10):
        print(f"  {n:4}  {k}")


if __name__ == "__main__":
    main()
