"""Cross-check static findings against what Dynamo did at run time (a pure function of its inputs).

Each static finding gets a status:
  confirmed     Dynamo broke at the finding's path:line with one of the finding's gb_types, or - for a rule
                that predicts recompiles - a recompile's line lies in the finding's lines (the failed guard's
                line, or the recompiled function's first line for a guard with no source line);
  not observed  an example ran that line and Dynamo did not do what the finding predicts;
  unverified    no example reached the line.
What Dynamo did that no finding predicted becomes a new finding: DYN901 (graph break), DYN902 (recompile);
an eager/compiled output mismatch becomes DYN903 at the example's definition.
"""
from __future__ import annotations

import os
import re
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from dynlint.compiler.records import GraphBreak, Recompile
from dynlint.linter.codes import (
    INTERNAL_ERROR,
    PARSE_ERROR,
    RUNTIME_CODES,
    CompiledOutputMismatch,
    UnpredictedGraphBreak,
    UnpredictedRecompile,
)
from dynlint.linter.finding import Finding
from dynlint.linter.rule import REGISTRY
from dynlint.rules import all_rules
from dynlint.runtime_check.results import ExampleResult

CONFIRMED, NOT_OBSERVED, UNVERIFIED = "confirmed", "not observed", "unverified"
UNPREDICTED_BREAK = (UnpredictedGraphBreak.code, UnpredictedGraphBreak.name)
UNPREDICTED_RECOMPILE = (UnpredictedRecompile.code, UnpredictedRecompile.name)
OUTPUT_MISMATCH = (CompiledOutputMismatch.code, CompiledOutputMismatch.name)
_NOT_PREDICTIONS = frozenset({PARSE_ERROR, INTERNAL_ERROR}) | RUNTIME_CODES
_REPORT_FIX = ("Fix the code as Dynamo's hint says; if dynlint should have predicted this, attach the missed-"
               "predictions file written by --verify to a bug report.")


def is_recompile_rule(code: str) -> bool:
    """Whether a rule predicts recompiles: its class says so; codes no rule registers fall back to their family
    ("DYN5xx" = recompile hazards)."""
    all_rules()                                     # every family imported, so every rule registered
    rule = REGISTRY.get(code)
    if rule is not None:
        return bool(getattr(rule, "recompiles", False))
    return len(code) > 3 and code[3] == "5"


def cross_check(findings: Iterable[Finding], results: Sequence[ExampleResult],
                recompile_rule: Callable[[str], bool] = is_recompile_rule) -> List[Finding]:
    """Static findings with `status` set, plus DYN901/902/903, sorted by location."""
    breaks = [(r, b) for r in results for b in r.graph_breaks]
    recompiles = [(r, rc) for r in results for rc in r.recompiles]
    links = _links(results)
    executed = _executed(results)
    used_breaks: Set[int] = set()
    used_recompiles: Set[int] = set()
    out: List[Finding] = []
    for f in findings:
        if f.code in _NOT_PREDICTIONS:
            out.append(f)
            continue
        if recompile_rule(f.code):
            hits = [i for i, (_, rc) in enumerate(recompiles) if recompile_matches(f, rc)]
            used_recompiles.update(hits)
            seen = [recompiles[i] for i in hits]
            evidence = [f"recompile of {rc.function} in example {r.name!r}: {rc.reason}" for r, rc in seen]
        else:
            hits = [i for i, (_, b) in enumerate(breaks) if break_matches(f, b)]
            used_breaks.update(hits)
            seen = [breaks[i] for i in hits]
            evidence = [f"graph break in example {r.name!r}: {_types(b)}" for r, b in seen]
        if hits:
            out.append(f.with_(status=CONFIRMED, properties=f.properties + (
                ("verify", evidence[0]), ("links", tuple(links[id(x)] for _, x in seen)))))
        elif _reached(f, executed):
            out.append(f.with_(status=NOT_OBSERVED))
        else:
            out.append(f.with_(status=UNVERIFIED))
    out += unpredicted_breaks([breaks[i] for i in range(len(breaks)) if i not in used_breaks], links)
    reported_breaks = [f for f in out if f.code not in _NOT_PREDICTIONS and not recompile_rule(f.code)]
    out += unpredicted_recompiles([recompiles[i] for i in range(len(recompiles)) if i not in used_recompiles], links,
                                  reported_breaks)
    out += output_mismatches(results)
    return sorted(out, key=lambda f: f.sort_key)


# ---- matching ---------------------------------------------------------------------------------------
def _span(f: Finding) -> Tuple[int, int]:
    return f.line, max(f.line, f.end_line)


def break_matches(f: Finding, b: GraphBreak) -> bool:
    """Same file, and a shared gb_type within the finding's lines. A finding without gb_types, or a break
    without them (torch < 2.7 logs none), must sit on exactly the same line."""
    if b.path != f.path:
        return False
    first, last = _span(f)
    if f.gb_types and b.gb_types:
        return first <= b.line <= last and bool(set(f.gb_types) & set(b.gb_types))
    return b.line == f.line


def recompile_matches(f: Finding, rc: Recompile) -> bool:
    """The recompile's line lies in the finding's lines (a recompile rule's finding; breaks are matched apart).
    Its line is a failed guard's (the read that installed it) or, for a guard with no source line (a tensor's
    size, dtype or rank, grad mode), the first line of the code Dynamo recompiled (`co_firstlineno`: its first
    decorator; a resume function's parent's too). Not the function around it: a finding at another line of
    the same function predicts another guard."""
    first, last = _span(f)
    return any(path == f.path and first <= line <= last for path, line in recompile_lines(rc))


def recompile_lines(rc: Recompile) -> List[Tuple[str, int]]:
    guards = [(g.path, g.line) for g in rc.failures if g.path and g.line]
    return guards or [(rc.path, line) for line in dict.fromkeys((rc.line, rc.span[0])) if line]


def _executed(results: Sequence[ExampleResult]) -> Dict[str, FrozenSet[int]]:
    """User lines run by examples that went all the way (an example that failed before compiling says
    nothing about what Dynamo does with the lines it ran)."""
    merged: Dict[str, Set[int]] = {}
    for r in results:
        if r.outcome == "ok":
            for path, lines in r.executed:
                merged.setdefault(path, set()).update(lines)
    return {p: frozenset(ls) for p, ls in merged.items()}


def _reached(f: Finding, executed: Dict[str, FrozenSet[int]]) -> bool:
    first, last = _span(f)
    lines = executed.get(f.path, frozenset())
    return any(n in lines for n in range(first, last + 1))


def _types(b: GraphBreak) -> str:
    ids = [i for i in b.gb_ids if i]
    return " > ".join(b.gb_types or ("untyped",)) + (f" [{', '.join(ids)}]" if ids else "")


# ---- what nothing predicted -------------------------------------------------------------------------
def _location(r: ExampleResult, path: str, line: int) -> Tuple[str, int]:
    """A user location, or the compiled callable's definition (or the example's) when there is none."""
    if path and line and not os.path.isabs(path):
        return path, line
    if r.function_path and r.function_line and not os.path.isabs(r.function_path):
        return r.function_path, r.function_line
    return r.path, r.line


def _links(results: Sequence[ExampleResult]) -> Dict[int, Tuple[str, str, int]]:
    """What a finding records of the runtime events that explain it: (example, "break" or "recompile", the
    event's index in that example's list), by the event's identity. The HTML report reads these links."""
    out: Dict[int, Tuple[str, str, int]] = {}
    for r in results:
        out.update({id(b): (r.name, "break", k) for k, b in enumerate(r.graph_breaks)})
        out.update({id(rc): (r.name, "recompile", k) for k, rc in enumerate(r.recompiles)})
    return out


def unpredicted_breaks(items: Sequence[Tuple[ExampleResult, GraphBreak]],
                       links: Optional[Dict[int, Tuple[str, str, int]]] = None) -> List[Finding]:
    grouped: Dict[Tuple[str, int, Tuple[str, ...]], List[Tuple[ExampleResult, GraphBreak]]] = {}
    for r, b in items:
        path, line = _location(r, b.path, b.line)
        grouped.setdefault((path, line, b.gb_types), []).append((r, b))
    findings = []
    for (path, line, gb_types), group in grouped.items():
        r, b = group[0]
        explanation = b.explanation.splitlines()[0] if b.explanation else ""
        skipped = " The whole function fell back to eager." if any(x.frame_skipped for _, x in group) else ""
        findings.append(Finding(
            path=path, line=line, column=0, end_line=line, code=UNPREDICTED_BREAK[0], name=UNPREDICTED_BREAK[1],
            message=f"Dynamo graph break that dynlint did not predict: {_types(b)}. {explanation}{skipped}".strip(),
            fix=b.hints[0] if b.hints else _REPORT_FIX, severity="warning", gb_types=gb_types, status=CONFIRMED,
            properties=(
                ("examples", tuple(sorted({x.name for x, _ in group}))),
                ("gb_ids", b.gb_ids),
                ("explanation", b.explanation),
                ("hints", b.hints),
                ("frame_skipped", any(x.frame_skipped for _, x in group)),
                ("reported_at", f"{b.reported_path}:{b.reported_line}"),
                ("function", b.function),
            ) + ((("links", tuple(links[id(x)] for _, x in group)),) if links else ())))
    return findings


_AUTOMATIC_DYNAMIC = ("size mismatch", "stride mismatch")


def _expected_shape_recompile(r: ExampleResult, rc: Recompile,
                              all_items: Sequence[Tuple[ExampleResult, Recompile]]) -> bool:
    """A first recompile on a changed tensor size or stride is how Dynamo's automatic dynamic shapes work
    (it then compiles a dynamic graph): expected, not a hazard. Repeated ones are reported. Each example runs
    in its own process, so "first" is per example: three examples that each pass batch 8, then 16, through one
    model make three first recompiles, not one and two repeats."""
    if not rc.reason or not all(any(k in g.guard for k in _AUTOMATIC_DYNAMIC) for g in rc.failures):
        return False
    same = [x for e, x in all_items
            if e is r and (x.function, x.path, x.span) == (rc.function, rc.path, rc.span)]
    return len(same) <= 1


_RESUME = re.compile(r"torch_dynamo_resume_in_\w+?_at_(?P<line>\d+)$")


def _after_break(rc: Recompile, reported: Sequence[Finding]) -> Optional[Finding]:
    """The reported break finding whose break made the function Dynamo recompiled: a resume function (it
    starts at the break's line) guarding a value the break left on the stack (`___stack0 == 2.5`: what
    `.item()` returned, now a Python number of the resumed code)."""
    m = _RESUME.match(rc.code_name or "")
    if not m or "___stack" not in rc.reason:
        return None
    line = int(m["line"])
    return next((f for f in reported if f.path == rc.path and f.line <= line <= max(f.line, f.end_line)), None)


def unpredicted_recompiles(items: Sequence[Tuple[ExampleResult, Recompile]],
                           links: Optional[Dict[int, Tuple[str, str, int]]] = None,
                           reported_breaks: Sequence[Finding] = ()) -> List[Finding]:
    grouped: Dict[Tuple[str, int, str, str], List[Tuple[ExampleResult, Recompile]]] = {}
    items = [(r, rc) for r, rc in items if not _expected_shape_recompile(r, rc, items)]
    for r, rc in items:
        guard = next((g for g in rc.failures if g.path and g.line and not os.path.isabs(g.path)), None)
        if guard is not None:
            path, line = guard.path, guard.line
        else:
            path, line = _location(r, rc.path, rc.span[0] or rc.line)
        grouped.setdefault((path, line, rc.function, _guard_kind(rc.reason)), []).append((r, rc))
    findings = []
    for (path, line, function, _), group in grouped.items():
        r, rc = group[0]
        more = f" ({len(group)} recompiles)" if len(group) > 1 else ""
        cause = _after_break(rc, reported_breaks)
        if cause is not None:
            message = (f"recompile of {function}{more} after the graph break at line {cause.line} that dynlint "
                       f"reported ({cause.code}): the value the break hands back is a Python value of the code "
                       f"Dynamo resumes, guarded on, so a new value recompiles (guard failed: {rc.reason})")
            fix = f"Remove the break at line {cause.line} ({cause.code}): {cause.fix}"
        else:
            message = (f"recompile of {function} that dynlint did not predict{more}: "
                       f"{in_words([x.reason for _, x in group])} (guard failed: {rc.reason})")
            fix = _REPORT_FIX
        findings.append(Finding(
            path=path, line=line, column=0, end_line=line, code=UNPREDICTED_RECOMPILE[0],
            name=UNPREDICTED_RECOMPILE[1], message=message, fix=fix, severity="warning", status=CONFIRMED,
            properties=(
                ("examples", tuple(sorted({x.name for x, _ in group}))),
                ("reasons", tuple(dict.fromkeys(x.reason for _, x in group))),
                ("function", function),
                ("function_at", f"{rc.path}:{rc.span[0] or rc.line}"),
                ("guard_source", next((g.source for g in rc.failures if g.source), "")),
            ) + ((("links", tuple(links[id(x)] for _, x in group)),) if links else ())))
    return findings


_EQ = re.compile(r"^(?P<what>.+?) == (?P<value>.+)$")
_IS = re.compile(r"^(?P<what>.+?) is (?P<neg>not )?None$")
_LEN = re.compile(r"^len\((?P<what>.+)\) == (?P<n>\d+)$")
_EMPTY = re.compile(r"^not (?P<what>[\w.\[\]'\"]+)$")
_TENSOR = re.compile(r"^tensor '(?P<what>.+?)' (?P<prop>dtype|requires_grad|size|stride|device|rank)\w* mismatch"
                     r"(?:[^.]*)\. expected (?P<old>.+?), actual (?P<new>.+)$")
_GLOBAL = re.compile(r"^GLOBAL_STATE changed: (?P<what>.+)$")
_TYPE = re.compile(r"^expected type of '(?P<what>.+?)' to be a (?P<old>.+?) type, ' but found <class '(?P<new>\w+)'>")
_KEY = re.compile(r"^(?P<neg>not )?___dict_contains\((?P<key>.+?), (?P<what>.+)\)$")
_GRAD = re.compile(r"^tensor '(?P<what>.+?)' requires_grad mismatch\. expected requires_grad=(?P<old>\d)")
_GLOBAL_NAME = re.compile(r"G\['(\w+)'\]")         # Dynamo's spelling of a module global
_SAID = (
    (_LEN, lambda m: f"`{m['what']}` had {m['n']} item{'' if m['n'] == '1' else 's'} when compiled, then "
                     f"another number"),
    (_IS, lambda m: f"`{m['what']}` was {'not ' if m['neg'] else ''}None when compiled, then "
                    f"{'None' if m['neg'] else 'not None'}"),
    (_EMPTY, lambda m: f"`{m['what']}` was empty when compiled, then not"),
    (_KEY, lambda m: f"`{m['what']}` {'had no' if m['neg'] else 'had the'} key {m['key']} when compiled, then "
                     f"{'it had' if m['neg'] else 'not'}"),
    (_TYPE, lambda m: f"`{m['what']}` was a {m['old']} when compiled, then {m['new']}"),
    (_GRAD, lambda m: f"`{m['what']}.requires_grad` was {bool(int(m['old']))} when compiled, then "
                      f"{not int(m['old'])}"),
    (_TENSOR, lambda m: f"the {m['prop']} of tensor `{m['what']}` was {m['old']}, then {m['new']}"),
    (_GLOBAL, lambda m: f"{m['what'].replace('_', ' ')} changed between calls"),
)


def in_words(reasons: Sequence[str]) -> str:
    """What changed between calls, said from the failing guards of one site, oldest first: a guard holds the
    value the cached graph was compiled for (`self.step == 3` failing means it is no longer 3)."""
    reasons = [_GLOBAL_NAME.sub(r"\1", r) for r in reasons]
    first = reasons[0] if reasons else ""
    for pattern, say in _SAID:
        m = pattern.match(first)
        if m:
            return say(m)
    eq = [_EQ.match(r) for r in reasons]
    if eq and all(eq) and len({m["what"] for m in eq}) == 1 and not first.startswith("___"):
        values = list(dict.fromkeys(m["value"] for m in eq))
        if len(values) == 1:
            return f"`{eq[0]['what']}` was {values[0]} when compiled, then changed"
        shown = ", then ".join(values[:4]) + (", ..." if len(values) > 4 else "")
        return f"`{eq[0]['what']}` was {shown}: a new value each time"
    if first.startswith("___check_obj_id("):
        return f"`{first[len('___check_obj_id('):].split(',')[0]}` was another object"
    return "a guarded value changed"


def _guard_kind(reason: str) -> str:
    """Group recompiles of one guard ("mode == 'a'", "mode == 'b'" -> "mode ==") so each site reports once."""
    for op in (" == ", " != ", " is ", " <= ", " >= ", " < ", " > "):
        if op in reason:
            return reason.split(op, 1)[0] + op.strip()
    return reason.split(" expected ", 1)[0]


def output_mismatches(results: Sequence[ExampleResult]) -> List[Finding]:
    findings = []
    for r in results:
        a = r.agreement
        if a.status != "mismatch":
            continue
        diff = f" (max abs diff {a.max_abs_diff:.3g})" if a.max_abs_diff is not None else ""
        findings.append(Finding(
            path=r.path, line=r.line, column=0, end_line=r.line, code=OUTPUT_MISMATCH[0], name=OUTPUT_MISMATCH[1],
            message=f"compiled output of example {r.name!r} ({r.function or r.factory}) differs from eager at "
                    f"{a.where}: {a.detail}{diff}",
            fix=CompiledOutputMismatch.fix,
            severity="error", status=CONFIRMED,
            properties=(("example", r.name), ("max_abs_diff", a.max_abs_diff), ("where", a.where)),
        ))
    return findings


def missed_predictions(findings: Iterable[Finding]) -> List[Finding]:
    return [f for f in findings if f.code in (UNPREDICTED_BREAK[0], UNPREDICTED_RECOMPILE[0])]
