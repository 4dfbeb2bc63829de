"""Score dynlint against the Dynamo-labelled probes in labels.json.

    python score.py            # prints the report, writes score.json
    DYNLINT_BLIND_SET=suite python score.py   # another set: probes in suite/, labels in suite.labels.json

Each probe (single file or package folder) is checked as a whole project:
    python -m dynlint check <probe> --no-cache --preview --select ALL --output-format json
(run from the probes folder, so finding paths are relative to it).
"""
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SET = os.environ.get("DYNLINT_BLIND_SET", "probes")
PROBES = os.path.join(HERE, SET)
LABELS = os.path.join(HERE, "labels.json" if SET == "probes" else SET + ".labels.json")
SCORE = os.path.join(HERE, "score.json" if SET == "probes" else SET + ".score.json")


def run_dynlint(root):
    cmd = [sys.executable, "-m", "dynlint", "check", root, "--no-cache", "--preview", "--select", "ALL",
           "--output-format", "json"]
    p = subprocess.run(cmd, cwd=PROBES, capture_output=True, text=True)
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"dynlint gave no JSON for {root} (rc={p.returncode}):\n{p.stderr[-2000:]}")
    if data.get("errors"):
        print(f"!! dynlint errors for {root}: {data['errors']}")
    for f in data.get("findings", []):
        if f["code"] == "DYN001":         # dynlint's own failure: it hides findings, say so loudly
            print(f"!! dynlint internal error for {root}: {f['path']}:{f['line']} {f['message']}")
    findings = []
    for f in data.get("findings", []):
        path = os.path.relpath(os.path.abspath(os.path.join(PROBES, f["path"])), PROBES)
        findings.append({**f, "relpath": path, "end_line": f.get("end_line") or f["line"]})
    return findings


def src_line(relpath, line):
    try:
        return open(os.path.join(PROBES, relpath)).read().splitlines()[line - 1].strip()
    except (OSError, IndexError, TypeError):
        return "?"


def covers(f, relpath, line):
    return f["relpath"] == relpath and f["line"] <= line <= f["end_line"]


def main():
    labels = json.load(open(LABELS))
    tot = Counter()
    misses = defaultdict(list)
    false_alarms, hits = [], []
    per_probe = {}
    by_gb = defaultdict(lambda: [0, 0])
    for name, lab in sorted(labels.items()):
        if not lab["ok"]:
            print(f"!! probe {name} did not run: skipped")
            continue
        findings = run_dynlint(lab["root"])
        pp = Counter(findings=len(findings))
        site_spans = []   # (relpath, lo, hi) of labelled sites, for precision
        for b in lab["breaks"]:
            tot["breaks"] += 1
            pp["breaks"] += 1
            site_spans.append((b["file"], b["line"], b["line"]))
            found = [f for f in findings if covers(f, b["file"], b["line"])]
            key = b["gb_types"][0] if b["gb_types"] else "?"
            by_gb[key][1] += 1
            if found:
                tot["breaks_found"] += 1
                pp["breaks_found"] += 1
                by_gb[key][0] += 1
                hits.append((name, "break", b["file"], b["line"], [f["code"] for f in found]))
            else:
                misses["break"].append({"probe": name, "file": b["file"], "line": b["line"],
                                        "src": src_line(b["file"], b["line"]), "gb_types": b["gb_types"],
                                        "frame_skipped": b["frame_skipped"]})
        for r in lab["recompiles"]:
            if r.get("external"):
                tot["recompiles_external"] += 1
                continue
            if not r["no_line"]:
                tot["rec_line"] += 1
                pp["rec_line"] += 1
                site_spans.append((r["file"], r["line"], r["line"]))
                found = [f for f in findings if covers(f, r["file"], r["line"])]
                if found:
                    tot["rec_line_found"] += 1
                    pp["rec_line_found"] += 1
                else:
                    misses["recompile"].append({"probe": name, "file": r["file"], "line": r["line"],
                                                "src": src_line(r["file"], r["line"]), "guard": r["guard"],
                                                "all_guards": r.get("all_guards")})
            else:
                tot["rec_noline"] += 1
                pp["rec_noline"] += 1
                lo, hi = r["fn_first_line"], r["fn_end_line"]
                site_spans.append((r["file"], lo, r["line"]))   # decorator .. def line
                found = [f for f in findings if f["relpath"] == r["file"] and lo <= f["line"] <= hi]
                strict = [f for f in findings if f["relpath"] == r["file"] and f["line"] <= r["line"]
                          and f["end_line"] >= lo]
                if found:
                    tot["rec_noline_found"] += 1
                    pp["rec_noline_found"] += 1
                if strict:
                    tot["rec_noline_strict"] += 1
                if not found:
                    misses["recompile_no_line"].append({"probe": name, "file": r["file"], "line": r["line"],
                                                        "src": src_line(r["file"], r["line"]), "guard": r["guard"],
                                                        "all_guards": r.get("all_guards")})
        for f in findings:
            tot["findings"] += 1
            ok = any(f["relpath"] == p and f["line"] <= hi and f["end_line"] >= lo for p, lo, hi in site_spans)
            if ok:
                tot["findings_true"] += 1
            else:
                false_alarms.append({"probe": name, "file": f["relpath"], "line": f["line"], "code": f["code"],
                                     "name": f.get("name"), "message": f["message"],
                                     "src": src_line(f["relpath"], f["line"])})
        per_probe[name] = dict(pp)

    def pct(a, b):
        return f"{a}/{b} = {100.0 * a / b:.1f}%" if b else f"{a}/0"

    print("=" * 100)
    print(f"probes: {len(per_probe)}")
    print(f"break recall:                   {pct(tot['breaks_found'], tot['breaks'])}")
    print(f"recompile recall (with line):   {pct(tot['rec_line_found'], tot['rec_line'])}")
    print(f"recompile recall (no line, any finding in the compiled fn): {pct(tot['rec_noline_found'], tot['rec_noline'])}")
    print(f"recompile recall (no line, strict: finding on decorator/def line): {pct(tot['rec_noline_strict'], tot['rec_noline'])}")
    print(f"recompiles in library code (not scored): {tot['recompiles_external']}")
    print(f"precision:                      {pct(tot['findings_true'], tot['findings'])}  "
          f"(false alarms: {len(false_alarms)})")
    print("\nbreak recall by primary gb_type:")
    for k, (a, b) in sorted(by_gb.items(), key=lambda kv: -kv[1][1]):
        print(f"  {a:2d}/{b:2d}  {k}")
    print("\nper probe (found/total):")
    for name, pp in per_probe.items():
        print(f"  {name:28s} breaks {pp.get('breaks_found', 0)}/{pp.get('breaks', 0)}  "
              f"rec-line {pp.get('rec_line_found', 0)}/{pp.get('rec_line', 0)}  "
              f"rec-noline {pp.get('rec_noline_found', 0)}/{pp.get('rec_noline', 0)}  findings {pp['findings']}")
    print("\n" + "=" * 100 + "\nMISSED BREAK SITES")
    for m in misses["break"]:
        print(f"  {m['file']}:{m['line']}  [{' > '.join(m['gb_types'])}]{' (frame skipped)' if m['frame_skipped'] else ''}\n"
              f"      {m['src']}")
    print("\nMISSED RECOMPILE SITES (with line)")
    for m in misses["recompile"]:
        print(f"  {m['file']}:{m['line']}  guard: {m['guard']}\n      {m['src']}")
    print("\nMISSED RECOMPILE SITES (no line: compiled function def)")
    for m in misses["recompile_no_line"]:
        print(f"  {m['file']}:{m['line']}  guard: {m['guard']}\n      {m['src']}")
    print("\n" + "=" * 100 + "\nFALSE ALARMS")
    for fa in false_alarms:
        print(f"  {fa['file']}:{fa['line']}  {fa['code']} {fa['name']}: {fa['message'][:220]}\n      {fa['src']}")
    json.dump({"totals": dict(tot), "per_probe": per_probe, "misses": misses, "false_alarms": false_alarms,
               "hits": hits}, open(SCORE, "w"), indent=1)


if __name__ == "__main__":
    main()
