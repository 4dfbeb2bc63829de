"""The HTML report (`dynlint check --report FILE`): one self-contained page rendered from the JSON document
(json_format.to_document), so it shows exactly what `--format json` says.

Self-contained means no network: inline CSS, inline SVG charts drawn here, a few lines of inline script to
sort the table; the only outside links are to the rule docs. Every string that comes from the user's code,
paths or Dynamo's logs goes through `_e` (html.escape). Source snippets are read from the project root, long
lines cut to a window (`display.clip`), so a file of one huge line cannot make the page huge.
"""
from __future__ import annotations

import functools
import html
import math
import re
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from dynlint.linter import notebooks
from dynlint.linter.codes import UnpredictedGraphBreak, UnpredictedRecompile
from dynlint.linter.files import display_lines
from dynlint.linter.rule import FAMILIES, RULES_DOC
from dynlint.linter.words import plural
from dynlint.report import json_format
from dynlint.report.display import clip
from dynlint.rules import all_rules

NOT_CHECKED_FAMILY = "files dynlint could not check"        # DYN000 / DYN001
STATUSES = ("confirmed", "not observed", "unverified")
_CONTEXT = 2                     # source lines shown around a finding or a break
_BACKQUOTED = re.compile(r"`([^`\n]+)`")


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _rich(text) -> str:
    """Escaped prose with its `backquoted` parts as <code> (messages, fixes and Dynamo's hints use them)."""
    return _BACKQUOTED.sub(r"<code>\1</code>", _e(text))


def render_report(report, options) -> str:
    """The page for the run's JSON document; source snippets are read from the project root."""
    document = json_format.to_document(report.findings, report.files, report.errors, report.verify)
    verify = document.get("verify")
    page = _Page(document, _Sources(report.config.root, report.buffers))
    body = [page.header(), page.summary()]
    if verify:
        body += [page.examples_table(), page.charts(), page.graph_breaks(), page.recompiles(), page.failures()]
    body += [page.findings_section(), page.errors(), page.footer()]
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<title>dynlint report</title>\n<style>{CSS}</style>\n</head>\n<body>\n'
            + "\n".join(part for part in body if part)
            + f"\n<script>{SCRIPT}</script>\n</body>\n</html>\n")


# ---- data helpers --------------------------------------------------------------------------------------
class _Sources:
    """Lines of the project's files, read once each; only project-relative paths inside the root."""

    def __init__(self, root: Optional[Path], buffers: Optional[dict] = None) -> None:
        self.root = root
        self._cache: Dict[str, List[str]] = {}
        for path, text in (buffers or {}).items():      # what was checked (stdin), not the file of that name
            self._cache[(path, 0)] = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text
                                      ).replace("\r\n", "\n").replace("\r", "\n").split("\n")

    def lines(self, path: str, cell: int = 0) -> List[str]:
        """A file's lines, or a notebook cell's."""
        if not self.root or not path or PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts:
            return []
        if (path, cell) not in self._cache:
            if cell:
                for n, lines in notebooks.cell_lines(Path(self.root) / path).items():
                    self._cache[(path, n)] = lines
                self._cache.setdefault((path, cell), [])
            else:
                # never blocks on a FIFO or /dev/zero, never follows a link out of the project
                self._cache[(path, 0)] = display_lines(Path(self.root) / path, root=Path(self.root))
        return self._cache[(path, cell)]


def _rules() -> dict:
    return {r.code: r for r in all_rules()}


def family_of(code: str) -> str:
    if code.startswith("DYN0"):
        return NOT_CHECKED_FAMILY
    return FAMILIES.get(code[3:4], "other")


@functools.lru_cache(maxsize=None)
def doc_url(code: str) -> Optional[str]:
    """The rule's section of docs/rules.md, or None for codes without one (DYN0xx, DYN9xx)."""
    rule = _rules().get(code)
    return rule.doc_url() if rule is not None else None


def _linked(findings: Sequence[dict], events: Iterable[Tuple[str, str, int]]) -> List[int]:
    """The findings (by index) whose `links` (written by runtime_check's cross-check) name one of these
    events, (example, "break" or "recompile", index in that example)."""
    wanted = {tuple(e) for e in events}
    return [i for i, f in enumerate(findings)
            if any(tuple(link) in wanted for link in (f.get("properties") or {}).get("links", ()))]


def _num(value, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ms(value) -> str:
    """Milliseconds with about three significant digits."""
    if value is None:
        return "–"
    digits = 0 if value >= 100 else 1 if value >= 10 else 2 if value >= 1 else 3
    return f"{value:.{digits}f}"


# ---- the page ----------------------------------------------------------------------------------------------
class _Page:
    def __init__(self, document: dict, sources: _Sources) -> None:
        self.doc = document
        self.verify = document.get("verify") or None
        self.sources = sources
        self.findings = list(document.get("findings", ()))
        self.examples = list(self.verify.get("examples", ())) if self.verify else []

    # header and summary
    def header(self) -> str:
        tool = self.doc.get("tool", {})
        meta = []
        if self.verify:
            meta += [f"torch {self.verify.get('torch_version') or '?'}", f"device {self.verify.get('device', '?')}"]
            if self.verify.get("triton_version"):
                meta.append(f"triton {self.verify['triton_version']}")
            if self.verify.get("python_version"):
                meta.append(f"Python {self.verify['python_version']}")
            if self.verify.get("wall_s"):
                meta.append(f"verified in {self.verify['wall_s']:.1f} s")
        else:
            meta.append("static analysis only")
        where = Path(self.sources.root).name if self.sources.root else ""   # the project folder, not a machine path
        chips = "".join(f'<span class="chip">{_e(m)}</span>' for m in meta)
        return (f'<header class="top"><div class="wrap"><div class="brand">{LOGO}<span class="name">dynlint</span>'
                f'<span class="version">{_e(tool.get("version", ""))}</span></div>'
                f'<h1>torch.compile report</h1>'
                + (f'<p class="project"><code>{_e(where)}</code></p>' if where else "")
                + f'<div class="meta">{chips}</div></div></header>\n<main class="wrap">')

    def summary(self) -> str:
        static = [f for f in self.findings if not f["code"].startswith(("DYN0", "DYN9"))]
        cards = [(self.doc.get("files_scanned", 0), "files checked", ""),
                 (len(self.findings), "findings", "warn" if self.findings else "good")]
        if self.verify:
            status = Counter(f.get("status", "") for f in static)
            ok = sum(1 for x in self.examples if x.get("outcome") == "ok")
            sites = sum(x.get("break_sites", 0) for x in self.examples)
            recompiles = sum(x.get("recompile_count", len(x.get("recompiles", ()))) for x in self.examples)
            cards += [(status["confirmed"], "confirmed", "confirmed"),
                      (status["not observed"], "not observed", "notobserved"),
                      (status["unverified"], "unverified", "unverified"),
                      (f"{ok}/{len(self.examples)}", "examples ran", "good" if ok == len(self.examples) else "bad"),
                      (sites, "break sites", "warn" if sites else "good"),
                      (recompiles, "recompiles", "warn" if recompiles else "good")]
        else:
            cards += [(len({f["path"] for f in self.findings}), "files with findings", ""),
                      (len({f["code"] for f in self.findings}), "rules triggered", "")]
        if self.doc.get("errors"):
            cards.append((len(self.doc["errors"]), "files not checked", "bad"))
        tiles = "".join(f'<div class="stat {cls}"><div class="value">{_e(v)}</div><div class="label">{_e(label)}'
                        f'</div></div>' for v, label, cls in cards)
        note = "" if self.verify else ('<p class="hint">Static findings only. Run <code>dynlint check --verify'
                                       '</code> to compile your <code>@dynlint.example</code> targets and confirm'
                                       ' them.</p>')
        return (f'<section id="summary"><div class="stats">{tiles}</div>{note}'
                f'<div class="panel"><h2>Findings by family</h2>{self._families()}</div></section>')

    def _families(self) -> str:
        if not self.findings:
            return '<p class="empty">No findings: nothing in the compiled code should break the graph.</p>'
        by_family: Dict[str, List[dict]] = {}
        for f in self.findings:
            by_family.setdefault(f["code"][:4], []).append(f)
        most = max(len(v) for v in by_family.values())
        rows = []
        for prefix in sorted(by_family):
            group = by_family[prefix]
            if self.verify:
                counts = Counter(f.get("status") or "other" for f in group)
                parts = [(s, counts[s]) for s in (*STATUSES, "other") if counts[s]]
            else:
                parts = [("static", len(group))]
            segs = "".join(f'<span class="seg {s.replace(" ", "")}" style="width:{100 * n / most:.2f}%" '
                           f'title="{_e(f"{n} {s}")}"></span>' for s, n in parts)
            codes = Counter(f["code"] for f in group)
            chips = " ".join(self._code_link(c, f"{c} ×{n}") for c, n in sorted(codes.items()))
            rows.append(f'<div class="famrow"><div class="famname"><b>{_e(prefix)}xx</b> {_e(family_of(prefix + "00"))}'
                        f'</div><div class="famcodes">{chips}</div><div class="bar">{segs}</div>'
                        f'<div class="famcount">{len(group)}</div></div>')
        legend = ""
        if self.verify:
            legend = '<div class="legend">' + "".join(
                f'<span><i class="seg {s.replace(" ", "")}"></i>{_e(s)}</span>' for s in STATUSES) + "</div>"
        return legend + f'<div class="families">{"".join(rows)}</div>'

    def _code_link(self, code: str, text: str) -> str:
        url = doc_url(code)
        if url is None:
            return f'<span class="code">{_e(text)}</span>'
        return f'<a class="code" href="{_e(url)}" title="rule documentation">{_e(text)}</a>'

    # verify: the per-function table and the charts
    def examples_table(self) -> str:
        head = [("example", "text"), ("function", "text"), ("graphs", "num"), ("breaks", "num"),
                ("recompiles", "num"), ("compile s", "num"), ("eager ms", "num"), ("compiled ms", "num"),
                ("speedup", "num"), ("peak MiB", "num"), ("agreement", "text"), ("outcome", "text")]
        ths = "".join(f'<th class="{k}" scope="col"><button type="button">{_e(h)}</button></th>' for h, k in head)
        rows = []
        for x in self.examples:
            ran = x.get("phase") in ("compare", "timing", "done") or x.get("outcome") == "ok"
            graphs = x.get("graph_count", len(x.get("graphs", ())))
            recompiles = x.get("recompile_count", len(x.get("recompiles", ())))
            speedup = x.get("speedup")
            agreement = x.get("agreement") or {}
            where = f'{x.get("function_path", "")}:{x.get("function_line", "")}' if x.get("function_path") else ""
            cells = [
                (x.get("name", ""), f'<b>{_e(x.get("name", ""))}</b>', "text"),
                (x.get("function", ""), f'<code>{_e(x.get("function", ""))}</code>'
                 + (f'<div class="sub">{_e(where)}</div>' if where else ""), "text"),
                (graphs if ran else "", str(graphs) if ran else "–", "num"),
                (x.get("break_sites", 0) if ran else "", _e(x.get("break_sites", 0)) if ran else "–",
                 "num" + (" hot" if ran and x.get("break_sites") else "")),
                (recompiles if ran else "", (f"{recompiles}" + (" (limit hit)" if x.get("hit_recompile_limit") else ""))
                 if ran else "–", "num" + (" hot" if ran and recompiles else "")),
                (x.get("compile_s"), _num(x.get("compile_s")), "num"),
                (x.get("eager_ms"), _ms(x.get("eager_ms")), "num"),
                (x.get("compiled_ms"), _ms(x.get("compiled_ms")), "num"),
                (speedup, self._speedup(x), "num"),
                (x.get("compiled_peak_mem_bytes"), self._memory(x), "num"),
                (agreement.get("status", ""), self._agreement(agreement), "text"),
                (x.get("outcome", ""), f'<span class="badge {_e(x.get("outcome", ""))}">{_e(x.get("outcome", ""))}'
                 f'</span>', "text"),
            ]
            tds = "".join(f'<td class="{k}" data-v="{_e("" if v is None else v)}">{shown}</td>'
                          for v, shown, k in cells)
            rows.append(f"<tr>{tds}</tr>")
        return (f'<section id="functions" class="panel"><h2>Per function</h2>'
                f'<p class="hint">Each <code>@dynlint.example</code> compiled with dynlint\'s backend over Inductor. '
                f'Times are medians over rounds of eager and compiled calls; speedup is eager ÷ compiled, with its '
                f'95% interval{self._spans()} (~1×: no measurable difference, the interval holds 1). Peak memory: '
                f'eager → compiled (CUDA). Click a column to sort.</p>'
                f'<div class="scroll"><table class="sortable"><thead><tr>{ths}</tr></thead>'
                f'<tbody>{"".join(rows)}</tbody></table></div></section>')

    def _spans(self) -> str:
        """The clause saying how many fresh processes the intervals span."""
        spans = max((len(x.get("timing_processes") or ()) for x in self.examples), default=1)
        return f", spanning {spans} fresh worker processes" if spans > 1 else ", within one worker process"

    @staticmethod
    def _speedup(x: dict) -> str:
        speedup, interval = x.get("speedup"), x.get("speedup_interval")
        if speedup is None:
            return "–"
        if not interval:
            return f'<span class="speed {"up" if speedup >= 1 else "down"}">{speedup:.2f}×</span>'
        low, high = interval
        kind = speed_kind(x)
        same = kind == "same"
        processes = x.get("timing_processes") or ()
        notes = [f"{x.get('rounds', 0)} rounds" + (f" in {len(processes)} processes" if len(processes) > 1 else "")]
        notes += [x["timing_note"]] if x.get("timing_note") else []
        notes += ["training steps"] if x.get("training") else []
        if x.get("grad_off") and str(x.get("device", "")).startswith("cuda"):
            notes.append("autograd off: on a GPU this can understate the speedup")
        if x.get("launch_bound"):
            notes.append(f"launch-bound: {x.get('compiled_device_ms', 0):.3f} ms of kernels per call")
        elif x.get("launch_bound_varied"):
            notes.append("launch-bound in some processes, not in others")
        if x.get("one_call_speedup") is not None and x.get("one_call_interval"):
            lo, hi = x["one_call_interval"]
            notes.append(f"one call at a time: {x['one_call_speedup']:.2f}× ({lo:.2f}–{hi:.2f})")
        modes = [m for m in x.get("modes") or () if m["mode"] != "default" and (m.get("speedup") is not None
                                                                              or m.get("note"))]
        for m in modes:
            notes.append(f"{m['mode']}: {m['note']}" if m.get("note") else
                         f"{m['mode']} {m['speedup']:.2f}× (compile {m.get('compile_s') or 0:.1f} s)")
        if x.get("recommended_mode"):
            notes.append(f"recommended mode: {x['recommended_mode']}")
        return (f'<span class="speed {kind}">{"~1" if same else f"{speedup:.2f}"}×</span>'
                f'<div class="sub">{low:.2f}–{high:.2f}</div><div class="sub">{_e("; ".join(notes))}</div>')

    @staticmethod
    def _memory(x: dict) -> str:
        e, c = x.get("eager_peak_mem_bytes"), x.get("compiled_peak_mem_bytes")
        return "–" if e is None or c is None else f"{e / 2 ** 20:.0f} → {c / 2 ** 20:.0f}"

    @staticmethod
    def _agreement(a: dict) -> str:
        status = a.get("status", "not compared")
        if status == "match":
            diff = a.get("max_abs_diff")
            shown = f'<div class="sub">max |Δ| {diff:.0e}</div>' if diff is not None else ""
            return '<span class="agree ok">match</span>' + shown
        if status == "mismatch":
            return (f'<span class="agree bad">MISMATCH</span><div class="sub">{_e(a.get("where", ""))} '
                    f'{_e(a.get("detail", ""))}</div>')
        return f'<span class="agree none" title="{_e(a.get("detail", ""))}">not compared</span>'

    def charts(self) -> str:
        timed = [x for x in self.examples if x.get("speedup")]
        if not timed:
            return ('<section id="charts" class="panel"><h2>Speed</h2><p class="empty">No example was timed, '
                    'so there is nothing to chart.</p></section>')
        return ('<section id="charts" class="grid2">'
                f'<div class="panel"><h2>Speedup</h2><p class="hint">eager ÷ compiled, log scale; right of 1× is '
                f'faster compiled</p>{speedup_chart(timed)}</div>'
                f'<div class="panel"><h2>Compile time vs speedup</h2><p class="hint">what each function pays at '
                f'first call, and what it gets back per call</p>{scatter_chart(timed)}</div></section>')

    # verify: graph breaks and recompiles
    def graph_breaks(self) -> str:
        sites: Dict[tuple, dict] = {}
        for x in self.examples:
            for k, b in enumerate(x.get("graph_breaks", ())):
                path, line = (b.get("path"), b.get("line")) if b.get("path") else \
                    (b.get("reported_path", ""), b.get("reported_line", 0))
                key = (path, line, (b.get("gb_types") or [""])[0])
                site = sites.setdefault(key, {"break": b, "path": path, "line": line, "types": {},
                                              "examples": Counter(), "skipped": False, "function": "",
                                              "events": []})
                site["events"].append((x.get("name", ""), "break", k))
                for t, i in zip(b.get("gb_types", ()), list(b.get("gb_ids", ())) + [""] * 9):
                    site["types"].setdefault(t, i)
                site["examples"][x.get("name", "")] += 1
                site["skipped"] = site["skipped"] or bool(b.get("frame_skipped"))
                site["function"] = site["function"] or b.get("function", "")
        total = sum(len(x.get("graph_breaks", ())) for x in self.examples)
        if not sites:
            return ('<section id="breaks" class="panel"><h2>Graph breaks</h2><p class="empty">Dynamo captured '
                    'every example in whole graphs: no graph breaks.</p></section>')
        cards = []
        for site in sorted(sites.values(), key=lambda s: (s["path"], s["line"])):
            b = site["break"]
            types = "".join(f'<span class="gb">{_e(t)}{f" <small>{_e(i)}</small>" if i else ""}</span>'
                            for t, i in site["types"].items())
            seen = ", ".join(f'{_e(n)}{f" ×{c}" if c > 1 else ""}' for n, c in site["examples"].items())
            static = _linked(self.findings, site["events"])
            hints = "".join(f"<li>{_rich(h)}</li>" for h in b.get("hints", ()))
            where = f'{site["path"]}:{site["line"]}' + (f' in {site["function"]}' if site["function"] else "")
            cards.append(
                f'<article class="item"><div class="itemhead"><span class="loc">{_e(where)}</span>{types}'
                + ('<span class="flag" title="Dynamo gave up on the whole frame and ran it eagerly">frame '
                   'skipped</span>' if site["skipped"] else "")
                + f'</div>{self._snippet(site["path"], site["line"])}'
                f'<dl><dt>Dynamo says</dt><dd>{_rich(b.get("explanation", "")) or "–"}</dd>'
                + (f'<dt>Hints</dt><dd><ul>{hints}</ul></dd>' if hints else "")
                + f'<dt>Static finding</dt><dd>{self._finding_refs(static, UnpredictedGraphBreak.code)}</dd>'
                f'<dt>Seen in</dt><dd>{seen}</dd></dl></article>')
        return (f'<section id="breaks" class="panel"><h2>Graph breaks</h2><p class="hint">'
                f'{plural(total, "break")} at {plural(len(sites), "site")}, as Dynamo reported them.</p>'
                + "".join(cards) + "</section>")

    def recompiles(self) -> str:
        items = [(x, k, r) for x in self.examples for k, r in enumerate(x.get("recompiles", ()))]
        if not items:
            return ""
        cards = []
        for x, k, r in items:
            failures = r.get("failures", ())
            guard_at = next(((g["path"], g["line"]) for g in failures if g.get("path") and g.get("line")), None)
            static = _linked(self.findings, [(x.get("name", ""), "recompile", k)])
            reasons = "".join(
                f'<li><code>{_e(g.get("guard", ""))}</code>'
                + (f' <span class="sub">guard from {_e(g["path"])}:{_e(g["line"])}: <code>{_e(g.get("source", ""))}'
                   f'</code></span>' if g.get("path") else "") + "</li>" for g in failures)
            path, line = guard_at or (r.get("path", ""), r.get("line", 0))
            cards.append(
                f'<article class="item"><div class="itemhead"><span class="loc">{_e(r.get("function", ""))} '
                f'({_e(r.get("path", ""))}:{_e(r.get("line", ""))})</span><span class="gb">recompile</span>'
                + ('<span class="flag">recompile limit hit</span>' if x.get("hit_recompile_limit") else "")
                + f'</div>{self._snippet(path, line)}<dl><dt>Reason</dt><dd><ul>{reasons}</ul></dd>'
                f'<dt>Static finding</dt><dd>{self._finding_refs(static, UnpredictedRecompile.code)}</dd>'
                f'<dt>Example</dt><dd>{_e(x.get("name", ""))}</dd></dl></article>')
        return (f'<section id="recompiles" class="panel"><h2>Recompiles</h2><p class="hint">'
                f'{plural(len(items), "recompile")}: a guard failed on a later call and Dynamo compiled again.</p>'
                + "".join(cards) + "</section>")

    def failures(self) -> str:
        bad = [x for x in self.examples if x.get("outcome") != "ok" and x.get("message")]
        if not bad:
            return ""
        items = "".join(f'<article class="item"><div class="itemhead"><span class="loc">{_e(x.get("name", ""))} '
                        f'({_e(x.get("path", ""))}:{_e(x.get("line", ""))})</span><span class="badge '
                        f'{_e(x.get("outcome", ""))}">{_e(x.get("outcome", ""))}</span></div>'
                        f'<pre class="log">{_e(x.get("message", ""))}</pre></article>' for x in bad)
        return f'<section id="failed" class="panel"><h2>Examples that did not finish</h2>{items}</section>'

    def _finding_refs(self, indexes: Sequence[int], unpredicted: str) -> str:
        predicted = [i for i in indexes if not self.findings[i]["code"].startswith("DYN9")]
        if not predicted:
            runtime = next((i for i in indexes if self.findings[i]["code"] == unpredicted), None)
            missed = '<span class="missed">none: dynlint did not predict this</span>'
            if runtime is None and unpredicted == UnpredictedRecompile.code:     # cross_check let it pass as expected
                return ('<span class="sub">none needed: an expected recompile (as when automatic dynamic shapes '
                        'first see a new tensor size), not a hazard</span>')
            if runtime is None:
                return missed
            return f'{missed} <span class="sub">(reported as <a href="#f{runtime}">{_e(unpredicted)}</a>)</span>'
        out = []
        for i in predicted:
            f = self.findings[i]
            status = f.get("status", "")
            out.append(f'<a class="ref" href="#f{i}"><b>{_e(f["code"])}</b> {_e(f.get("name", ""))}</a>'
                       + (f' <span class="status {status.replace(" ", "")}">{_e(status)}</span>' if status else ""))
        return "<br>".join(out)

    # findings
    def findings_section(self) -> str:
        if not self.findings:
            return ('<section id="findings" class="panel"><h2>Findings</h2><p class="empty">No findings.</p>'
                    '</section>')
        by_file: Dict[str, List[Tuple[int, dict]]] = {}
        for i, f in enumerate(self.findings):
            by_file.setdefault(f["path"], []).append((i, f))
        groups = []
        for path, items in by_file.items():
            cards = "".join(self._finding(i, f) for i, f in items)
            groups.append(f'<div class="file"><h3><code>{_e(path)}</code> <span class="count">'
                          f'{len(items)}</span></h3>{cards}</div>')
        return (f'<section id="findings" class="panel"><h2>Findings</h2>'
                f'<p class="hint">{plural(len(self.findings), "finding")} in {plural(len(by_file), "file")}. '
                f'Each code links to its rule: what it does, why it is bad, what to write instead.</p>'
                + "".join(groups) + "</section>")

    def _finding(self, i: int, f: dict) -> str:
        status = f.get("status", "")
        cell = f"cell {f['cell']}:" if f.get("cell") else ""
        url = doc_url(f["code"])
        code = _e(f["code"])
        sev = _e(f.get("severity", ""))
        code_html = (f'<a class="code {sev}" href="{_e(url)}" title="rule documentation">{code}</a>'
                     if url else f'<span class="code {sev}">{code}</span>')
        extra = []
        if f.get("chain"):
            chain = " → ".join(f"<code>{_e(c)}</code>" for c in f["chain"])
            extra.append(f'<dt>Reached through</dt><dd>{chain}</dd>')
        for r in f.get("related") or ():
            extra.append(f'<dt>{_e(r["message"])}</dt><dd><code>{_e(r["path"])}:{_e(r["line"])}</code></dd>')
        if f.get("fix"):
            extra.append(f'<dt>Fix</dt><dd>{_rich(f["fix"])}</dd>')
        if f.get("gb_types"):
            extra.append('<dt>Predicts</dt><dd>' + "".join(f'<span class="gb">{_e(t)}</span>' for t in f["gb_types"])
                         + "</dd>")
        evidence = (f.get("properties") or {}).get("verify")
        if evidence:
            extra.append(f'<dt>Verify</dt><dd>{_e(evidence)}</dd>')
        return (f'<article class="item finding" id="f{i}"><div class="itemhead">{code_html}'
                f'<span class="rname">{_e(f.get("name", ""))}</span>'
                + (f'<span class="status {status.replace(" ", "")}">{_e(status)}</span>' if status else "")
                + f'<span class="loc right">{_e(f["path"])}:{_e(cell)}{_e(f["line"])}:{_e(f.get("column", 0) + 1)}'
                f'</span></div>'
                f'<p class="msg">{_rich(f.get("message", ""))}</p>'
                + self._snippet(f["path"], f["line"], f.get("end_line") or f["line"], f.get("column", 0),
                                f.get("end_column", 0), f.get("cell", 0))
                + (f'<dl>{"".join(extra)}</dl>' if extra else "") + "</article>")

    def _snippet(self, path: str, line: int, end_line: int = 0, column: int = -1, end_column: int = 0,
                 cell: int = 0) -> str:
        lines = self.sources.lines(path, cell)
        if not lines or not line or line > len(lines):
            return ""
        end_line = max(line, min(end_line or line, line + 8))
        first, last = max(1, line - _CONTEXT), min(len(lines), end_line + _CONTEXT)
        rows = []
        for n in range(first, last + 1):
            text = lines[n - 1]
            hot = line <= n <= end_line
            if hot and n == line and end_line == line and 0 <= column < end_column <= len(text):
                text, a, b = clip(text, column, end_column)       # a long line: a window around the span
                shown = f"{_e(text[:a])}<mark>{_e(text[a:b])}</mark>{_e(text[b:])}"
            else:
                shown = _e(clip(text, 0, 0)[0])
            rows.append(f'<tr class="{"hot" if hot else ""}"><td class="ln">{n}</td><td class="src">{shown or " "}'
                        f'</td></tr>')
        return f'<table class="snippet">{"".join(rows)}</table>'

    def errors(self) -> str:
        errors = self.doc.get("errors") or ()
        if not errors:
            return ""
        rows = "".join(f'<li><code>{_e(x.get("path", ""))}:{_e(x.get("line", ""))}</code> {_e(x.get("message", ""))}'
                       f'</li>' for x in errors)
        return f'<section id="errors" class="panel"><h2>Files not checked</h2><ul>{rows}</ul></section>'

    def footer(self) -> str:
        tool = self.doc.get("tool", {})
        return (f'</main><footer class="wrap">Generated by {_e(tool.get("name", "dynlint"))} '
                f'{_e(tool.get("version", ""))} from the JSON report (schema {_e(self.doc.get("schema_version", ""))}).'
                f' Rule docs: <a href="{RULES_DOC}">docs/rules.md</a>.</footer>')


# ---- charts (inline SVG) -------------------------------------------------------------------------------------
def _log_range(values: Iterable[float]) -> Tuple[int, int]:
    """Powers of two around the values (and around 1×) for a log2 speedup axis."""
    logs = [math.log2(v) for v in values if v and v > 0]
    lo = math.floor(min(logs + [-1.0]) - 0.15)
    hi = math.ceil(max(logs + [1.0]) + 0.15)
    return lo, hi


def _tick_label(k: int) -> str:
    v = 2.0 ** k
    return f"{v:g}×"


def _nice_max(value: float) -> Tuple[float, float]:
    """An axis end at or above value, and a tick step: 1, 2 or 5 times a power of ten, 4 to 6 ticks."""
    if value <= 0:
        return 1.0, 0.25
    exp = 10 ** math.floor(math.log10(value / 4))
    for m in (1, 2, 2.5, 5, 10):
        step = m * exp
        if value / step <= 5:
            return step * math.ceil(value / step - 1e-9), step
    return value, value / 4


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def speed_kind(x: dict) -> str:
    """How a speedup is drawn, the same in the table and the charts: `same` when its interval holds 1× (no
    measurable difference: neither faster nor slower, whatever the median), else `up` or `down`."""
    if x.get("verdict") == "no measurable difference":
        return "same"
    return "up" if x["speedup"] >= 1 else "down"


def speedup_chart(examples: Sequence[dict]) -> str:
    """Horizontal bars from 1× on a log2 axis: right (green) is faster compiled, left (red) slower; a speedup
    whose interval holds 1× is a grey bar labelled ~1×, its interval drawn as a whisker."""
    left, right, top, width = 150, 24, 8, 560
    row = max(26, min(52, 230 // max(1, len(examples))))      # fill about the scatter plot's height
    plot = width - left - right
    lo, hi = _log_range(x["speedup"] for x in examples)
    height = top + row * len(examples) + 34

    def sx(v: float) -> float:
        return left + plot * (math.log2(v) - lo) / (hi - lo)

    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="speedup per example">']
    for k in range(lo, hi + 1):
        x = sx(2.0 ** k)
        parts.append(f'<line class="{"axis1" if k == 0 else "grid"}" x1="{x:.1f}" x2="{x:.1f}" y1="{top - 4}" '
                     f'y2="{top + row * len(examples)}"/>'
                     f'<text class="tick" x="{x:.1f}" y="{top + row * len(examples) + 16}" '
                     f'text-anchor="middle">{_tick_label(k)}</text>')
    for n, x in enumerate(examples):
        s = x["speedup"]
        y = top + n * row
        x0, x1 = sx(1.0), sx(s)
        cls = speed_kind(x)
        name = x.get("name", "")
        interval = x.get("speedup_interval")
        whisker = ""
        if cls == "same" and interval:
            w0, w1 = (sx(min(max(v, 2.0 ** lo), 2.0 ** hi)) for v in interval)
            whisker = (f'<line class="whisker" x1="{w0:.1f}" x2="{w1:.1f}" y1="{y + row / 2:.1f}" '
                       f'y2="{y + row / 2:.1f}"/>')
        parts.append(f'<g><title>{_e(name)}: {s:.2f}×{" (no measurable difference)" if cls == "same" else ""}'
                     f'</title><text class="label" x="{left - 10}" y="{y + row / 2 + 4:.1f}" text-anchor="end">'
                     f'{_e(_clip(name, 22))}</text>'
                     f'<rect class="{cls}" x="{min(x0, x1):.1f}" y="{y + row * 0.2:.1f}" '
                     f'width="{max(abs(x1 - x0), 1.5):.1f}" height="{row * 0.6:.1f}" rx="3"/>' + whisker
                     + _bar_value(s, x0, x1, y + row / 2 + 4, "~1" if cls == "same" else None) + "</g>")
    parts.append("</svg>")
    return "".join(parts)


def _bar_value(s: float, x0: float, x1: float, y: float, shown: Optional[str] = None) -> str:
    """The bar's value (or `shown`): inside its far end when the bar is long enough, else just beyond it."""
    inside = abs(x1 - x0) > 52
    outward = 1 if s >= 1 else -1
    x = x1 - outward * 6 if inside else x1 + outward * 6
    anchor = "end" if (outward > 0) == inside else "start"
    return (f'<text class="val{" in" if inside else ""}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">'
            f'{shown or f"{s:.2f}"}×</text>')


def scatter_chart(examples: Sequence[dict]) -> str:
    """Compile time (x, linear) against speedup (y, log2), 1× dashed; each point named."""
    width, height = 560, 300
    left, right, top, bottom = 56, 24, 12, 44
    pw, ph = width - left - right, height - top - bottom
    xmax, step = _nice_max(max((x.get("compile_s") or 0) for x in examples))
    lo, hi = _log_range(x["speedup"] for x in examples)

    def sx(v: float) -> float:
        return left + pw * (v or 0) / xmax

    def sy(v: float) -> float:
        return top + ph * (hi - math.log2(v)) / (hi - lo)

    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="compile time against speedup">']
    for k in range(lo, hi + 1):
        y = sy(2.0 ** k)
        parts.append(f'<line class="{"axis1" if k == 0 else "grid"}" x1="{left}" x2="{left + pw}" y1="{y:.1f}" '
                     f'y2="{y:.1f}"/><text class="tick" x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{_tick_label(k)}</text>')
    ticks = int(round(xmax / step))
    for i in range(ticks + 1):
        v = step * i
        x = sx(v)
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + ph}"/>'
                     f'<text class="tick" x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle">{v:g}</text>')
    parts.append(f'<text class="axisname" x="{left + pw / 2:.1f}" y="{height - 6}" text-anchor="middle">'
                 f'compile time (s)</text><text class="axisname" transform="translate(14 {top + ph / 2:.1f}) '
                 f'rotate(-90)" text-anchor="middle">speedup</text>')
    points = [(x, sx(x.get("compile_s") or 0), sy(x["speedup"])) for x in examples]
    taken = [(px - 7, py - 7, 14, 14) for _, px, py in points]        # label boxes may not cover any point
    for x, px, py in points:
        s, name = x["speedup"], _clip(x.get("name", ""), 24)
        lx, ly = _place_label(px, py, 6.6 * len(name), taken, (left, top, width - 4, top + ph))
        parts.append(f'<g><title>{_e(x.get("name", ""))}: compile {x.get("compile_s") or 0:.2f} s, {s:.2f}×</title>'
                     f'<circle class="{speed_kind(x)}" cx="{px:.1f}" cy="{py:.1f}" r="6"/>'
                     f'<text class="label" x="{lx:.1f}" y="{ly + 11:.1f}">{_e(name)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _place_label(px: float, py: float, w: float, taken: List[Tuple[float, float, float, float]],
                 bounds: Tuple[float, float, float, float]) -> Tuple[float, float]:
    """Top-left corner for a w x 14 label near the point (px, py): the first spot beside, above or below it
    that stays inside bounds and clears every box in `taken` (which it then joins)."""
    h = 14
    spots = [(px + 10, py - h / 2), (px - 10 - w, py - h / 2), (px + 6, py - h - 6), (px - 6 - w, py - h - 6),
             (px + 6, py + 6), (px - 6 - w, py + 6), (px - w / 2, py - h - 9), (px - w / 2, py + 9)]
    spots += [(sx_, sy_ + dy) for dy in (-28, 28, -42, 42) for sx_, sy_ in spots[:2]]

    def fits(lx: float, ly: float) -> bool:
        inside = bounds[0] <= lx and lx + w <= bounds[2] and bounds[1] - 8 <= ly and ly + h <= bounds[3] + 8
        return inside and not any(lx < ox + ow and ox < lx + w and ly < oy + oh and oy < ly + h
                                  for ox, oy, ow, oh in taken)

    lx, ly = next((spot for spot in spots if fits(*spot)), spots[0])
    taken.append((lx, ly, w, h))
    return lx, ly


LOGO = ('<svg class="logo" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="8" fill="#ee4c2c"/>'
        '<path d="M9 22 L14 10 L18 18 L23 8" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" '
        'stroke-linejoin="round"/><circle cx="23" cy="8" r="2.2" fill="#fff"/></svg>')

CSS = """
:root{--bg:#f5f6f8;--panel:#fff;--ink:#1b1f24;--muted:#5b6472;--line:#e3e6eb;--soft:#f0f2f5;
--accent:#ee4c2c;--up:#1f9d55;--down:#d64545;--confirmed:#d9480f;--notobserved:#1c7ed6;--unverified:#adb5bd;
--static:#7048e8;--mark:#ffe8a3;--hot:#fff8e1}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif}
code,pre,.snippet,.loc{font-family:ui-monospace,SFMono-Regular,"JetBrains Mono",Menlo,Consolas,monospace;
font-size:12.5px}
a{color:#1864ab;text-decoration:none}a:hover{text-decoration:underline}
.wrap{max-width:1200px;margin:0 auto;padding:0 28px}
header.top{background:#111827;color:#f3f4f6;padding:22px 0 20px;margin-bottom:24px}
.brand{display:flex;align-items:center;gap:10px}.logo{width:28px;height:28px}
.brand .name{font-weight:700;font-size:18px;letter-spacing:.2px}.brand .version{color:#9ca3af;font-size:13px}
header h1{margin:10px 0 2px;font-size:26px;font-weight:650;letter-spacing:-.2px}
header .project{margin:0 0 10px;color:#9ca3af}header .project code{font-size:13px}
.meta{display:flex;flex-wrap:wrap;gap:8px}
.chip{background:#1f2937;border:1px solid #374151;color:#d1d5db;border-radius:999px;padding:2px 10px;font-size:12px}
section{margin-bottom:20px}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:12px;padding:18px 22px;
box-shadow:0 1px 2px rgba(16,24,40,.04)}
h2{font-size:16px;margin:0 0 4px;font-weight:650}
h3{font-size:14px;margin:18px 0 8px;font-weight:600}
.hint{color:var(--muted);margin:0 0 12px;font-size:13px}.empty{color:var(--muted);margin:6px 0}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:12px;margin-bottom:16px}
.stat{background:var(--panel);border:1px solid var(--line);border-radius:12px;padding:14px 16px;position:relative;
overflow:hidden}
.stat:before{content:"";position:absolute;left:0;top:0;bottom:0;width:4px;background:var(--line)}
.stat .value{font-size:26px;font-weight:700;font-variant-numeric:tabular-nums;line-height:1.15}
.stat .label{color:var(--muted);font-size:12.5px}
.stat.good:before{background:var(--up)}.stat.bad:before{background:var(--down)}.stat.warn:before{background:#f59f00}
.stat.confirmed:before{background:var(--confirmed)}.stat.notobserved:before{background:var(--notobserved)}
.stat.unverified:before{background:var(--unverified)}
.famrow{display:grid;grid-template-columns:290px 250px 1fr 36px;gap:4px 14px;align-items:center;padding:7px 0;
border-top:1px solid var(--soft)}
.famrow:first-child{border-top:0}
.famname{font-size:13.5px}.famname b{font-family:ui-monospace,Menlo,monospace;font-weight:600;margin-right:4px}
.bar{height:12px;background:var(--soft);border-radius:6px;overflow:hidden;display:flex}
.famcount{text-align:right;font-weight:650;font-variant-numeric:tabular-nums}
.famcodes{display:flex;flex-wrap:wrap;gap:6px}
.seg{display:inline-block;height:100%}.seg.confirmed{background:var(--confirmed)}
.seg.notobserved{background:var(--notobserved)}.seg.unverified{background:var(--unverified)}
.seg.static{background:var(--static)}.seg.other{background:#868e96}
.legend{display:flex;gap:16px;color:var(--muted);font-size:12.5px;margin:4px 0 6px}
.legend i{width:10px;height:10px;border-radius:3px;margin-right:6px;vertical-align:-1px}
.code{font-family:ui-monospace,Menlo,monospace;font-size:12px;font-weight:600;background:#f1f3f5;color:#343a40;
border-radius:5px;padding:1px 7px;white-space:nowrap}
a.code{color:#1864ab;background:#e7f0fb}
a.code.error,span.code.error{background:#fde8e8;color:#b42318}
.scroll{overflow-x:auto}
table.sortable{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
table.sortable th{font-size:12px;font-weight:600;color:var(--muted);text-align:left;
border-bottom:2px solid var(--line);padding:0;white-space:nowrap}
table.sortable th button{all:unset;cursor:pointer;display:block;padding:7px 8px;width:100%;box-sizing:border-box}
table.sortable th button:hover{color:var(--ink)}
table.sortable th.num button{text-align:right}
table.sortable th[aria-sort=ascending] button:after{content:" ▲"}
table.sortable th[aria-sort=descending] button:after{content:" ▼"}
table.sortable td{padding:8px 8px;border-bottom:1px solid var(--soft);vertical-align:top}
td .sub{white-space:nowrap}
table.sortable tbody tr:hover{background:#fafbfc}
td.num{text-align:right;white-space:nowrap}td.hot{color:#c2410c;font-weight:650}
.sub{color:var(--muted);font-size:11.5px;font-weight:400}
.speed{font-weight:700}.speed.up{color:var(--up)}.speed.down{color:var(--down)}.speed.same{opacity:.75}
.agree.ok{color:var(--up);font-weight:600}.agree.bad{color:var(--down);font-weight:700}.agree.none{color:var(--muted)}
.badge{border-radius:999px;padding:1px 9px;font-size:12px;font-weight:600;background:#fde8e8;color:#b42318}
.badge.ok{background:#e6f6ec;color:#1a7f43}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:20px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}.famrow{grid-template-columns:1fr 1fr}}
svg.chart{width:100%;height:auto;display:block}
svg .grid{stroke:#eceff3;stroke-width:1}svg .axis1{stroke:#868e96;stroke-width:1.2;stroke-dasharray:4 3}
svg .tick{fill:#7b8494;font-size:11px}svg .label{fill:#343a40;font-size:12px}
svg .val{fill:#343a40;font-size:11.5px;font-weight:600}svg .val.in{fill:#fff}
svg .axisname{fill:#5b6472;font-size:11.5px}
svg rect.up,svg circle.up{fill:var(--up)}svg rect.down,svg circle.down{fill:var(--down)}
svg rect.same,svg circle.same{fill:#adb5bd}svg .whisker{stroke:#495057;stroke-width:1.5}
svg circle{stroke:#fff;stroke-width:2}
.item{border:1px solid var(--line);border-radius:10px;padding:12px 14px;margin:10px 0;background:#fff}
.itemhead{display:flex;flex-wrap:wrap;align-items:center;gap:8px;margin-bottom:6px}
.loc{font-weight:600;color:#343a40}.loc.right{margin-left:auto;font-weight:400;color:var(--muted)}
.rname{font-weight:600}
.gb{display:inline-block;background:#fff4e6;color:#a3440b;border:1px solid #ffd8a8;border-radius:6px;
padding:0 7px;font-size:12px;margin:1px 4px 1px 0}.gb small{color:#c06a2b}
.flag{background:#fff0f0;color:#b42318;border:1px solid #ffc9c9;border-radius:6px;padding:0 7px;font-size:12px}
.status{border-radius:999px;padding:1px 9px;font-size:11.5px;font-weight:600;color:#fff}
.status.confirmed{background:var(--confirmed)}.status.notobserved{background:var(--notobserved)}
.status.unverified{background:#868e96}
.msg{margin:2px 0 8px}
.msg code,dd code{background:#f1f3f5;border-radius:4px;padding:0 4px;font-size:12px}
table.snippet{border-collapse:collapse;width:100%;background:#f8f9fb;border:1px solid #eceff3;border-radius:8px;
overflow:hidden;margin:6px 0 8px;display:block;overflow-x:auto}
table.snippet td{padding:1px 10px;white-space:pre;line-height:1.55;tab-size:4}
table.snippet td.ln{color:#9aa1ac;text-align:right;user-select:none;width:1%;border-right:1px solid #eceff3}
table.snippet tr.hot td{background:var(--hot)}table.snippet tr.hot td.ln{color:#a3440b;font-weight:600;
box-shadow:inset 3px 0 0 #f59f00}
mark{background:var(--mark);border-bottom:2px solid #e8590c;padding:0 1px;border-radius:2px}
dl{display:grid;grid-template-columns:130px 1fr;gap:4px 12px;margin:6px 0 0;font-size:13px}
dt{color:var(--muted)}dd{margin:0}dd ul{margin:0;padding-left:18px}
.missed{color:#b42318;font-weight:600}
a.ref{color:#1864ab}
.file h3 .count{background:var(--soft);color:var(--muted);border-radius:999px;padding:0 8px;font-size:12px;
font-weight:600;margin-left:6px}
pre.log{background:#111827;color:#e5e7eb;padding:10px 12px;border-radius:8px;overflow-x:auto;font-size:12px}
.finding:target{outline:2px solid #4dabf7}
footer{color:var(--muted);font-size:12.5px;padding:8px 28px 36px}
"""

# Sort the per-function table by a column's data-v values (numbers numerically, blanks last); marks that the
# script ran on <html> (the tests look for it).
SCRIPT = """
document.documentElement.classList.add('js');
document.querySelectorAll('table.sortable').forEach(function (table) {
  var heads = table.querySelectorAll('th');
  heads.forEach(function (th, col) {
    th.querySelector('button').addEventListener('click', function () {
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
        if (x === '' || y === '') { return (x === '') - (y === ''); }
        var nx = Number(x), ny = Number(y);
        var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""
