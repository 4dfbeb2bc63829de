"""Units: the pieces of a file that libcst parses and the rules walk, and the check of one file's units.

libcst is the slow part, so it only ever sees units: the source of each outermost traced function (dedented so
it parses on its own), or a whole top-level statement when a site rule needs it. All rules run in one walk over
each unit; positions are computed per unit and shifted back to file coordinates.
"""
from __future__ import annotations

import contextlib
import dataclasses
import re
import signal
import threading
from typing import Dict, List, Optional, Sequence, Set, Tuple, Type

import libcst as cst

from dynlint.linter.finding import Finding, merge_related, parse_error_finding
from dynlint.linter.project import Project
from dynlint.linter.sources import SourceFile, source_lines
from dynlint.linter.suppressions import Suppressions
from dynlint.linter.walker import Unit, internal_error, parse, walk_unit


def _dedent(lines: List[str], start: int, end: int, indent: int) -> Optional[str]:
    """Lines start..end (1-based) with `indent` leading characters removed, or None if some line has less
    leading whitespace (a multi-line string) or the def does not start its line."""
    prefix = lines[start - 1][:indent]
    if indent and (not prefix.isspace() and prefix != ""):
        return None
    out = []
    for ln in lines[start - 1:end]:
        if ln.startswith(prefix):
            out.append(ln[indent:])
        elif not ln.strip():
            out.append("\n")
        else:
            return None
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


def plan_units(sf: SourceFile, lines: List[str], traced: Set[str], site_lines: Set[int]) -> List[Unit]:
    """Cut the smallest self-contained pieces of source that hold every traced function and site."""
    ix = sf.index
    units: List[Unit] = []
    site_tops = sorted({span for span in ix.top_spans for ln in site_lines if span[0] <= ln <= span[1]})
    covered = set(site_tops)
    for span in site_tops:
        units.append(Unit(text="".join(lines[span[0] - 1:span[1]]), line_offset=span[0] - 1, col_offset=0,
                          scope=(), site=True))
    last_end = 0
    for fn in sorted((ix.functions[q] for q in traced if q in ix.functions), key=lambda f: (f.start, -f.end)):
        if fn.top in covered or fn.end <= last_end:      # inside a unit already planned
            continue
        last_end = fn.end
        text = _dedent(lines, fn.start, fn.end, fn.indent)
        if text is None:                      # fall back to the whole top-level statement
            covered.add(fn.top)
            units.append(Unit(text="".join(lines[fn.top[0] - 1:fn.top[1]]), line_offset=fn.top[0] - 1,
                              col_offset=0, scope=()))
        else:
            scope = tuple(fn.qualname.split(".")[:-1])
            units.append(Unit(text=text, line_offset=fn.start - 1, col_offset=fn.indent, scope=scope))
    return units


_LEADING_FF = re.compile(r"^[ \t]*\f[ \t\f]*", re.M)


def _drop_form_feed_indents(unit: Unit) -> Tuple[Unit, Dict[int, int]]:
    """Python ignores what precedes a form feed in a line's indentation (CPython resets the column to 0);
    libcst counts it, and then rejects valid dedents. Cut it, and remember how many characters each (file)
    line lost so that columns can be given back."""
    shifts: Dict[int, int] = {}

    def cut(m) -> str:
        line = unit.text.count("\n", 0, m.start()) + unit.text.count("\r", 0, m.start()) - \
            unit.text.count("\r\n", 0, m.start()) + 1 + unit.line_offset
        kept = m.group(0).rsplit("\f", 1)[1]
        shifts[line] = len(m.group(0)) - len(kept)
        return kept

    text = _LEADING_FF.sub(cut, unit.text)
    return dataclasses.replace(unit, text=text), shifts


def _shift_columns(f: Finding, shifts: Dict[int, int]) -> Finding:
    changes: dict = {"column": f.column + shifts.get(f.line, 0), "end_column": f.end_column + shifts.get(f.end_line, 0)}
    fix = getattr(f, "autofix", None)
    if fix is not None:       # its edits hold positions on the same lines
        changes["autofix"] = dataclasses.replace(fix, edits=tuple(dataclasses.replace(
            e, column=e.column + shifts.get(e.line, 0), end_column=e.end_column + shifts.get(e.end_line, 0))
            for e in fix.edits))
    return f.with_(**changes)


# Seconds all the units of one file (its functions and top-level statements) may take together: a generous
# bound (big files take a few seconds) that turns an analysis blowing up on some input, or a file of many slow
# functions, into one DYN001 for the rest of that file, not a hang; the other files are still checked.
FILE_TIME_LIMIT = 60.0


class AnalysisTimeout(BaseException):
    """Raised by the timer; a BaseException so that the per-rule isolation (which catches Exception) does not
    swallow it and go on with the next rule (which may be just as slow)."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield       # no interval timer (Windows) or not the main thread (signals): no limit
        return

    def expired(signum, frame):
        raise AnalysisTimeout(f"the file's analysis budget ({seconds:g} s) was spent: these lines were not checked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _unit_lines(unit: Unit) -> Tuple[int, int]:
    return unit.line_offset + 1, unit.line_offset + len(source_lines(unit.text))


def check_unit(sf: SourceFile, unit: Unit, rules: Sequence[Type], traced: Dict[str, Tuple[str, ...]],
               project: Optional[Project], debug: bool) -> List[Finding]:
    """Run every rule over one unit; its problems (too deep, libcst rejects it, a bug) are findings of it."""
    first, last = _unit_lines(unit)
    shifts: Dict[int, int] = {}
    if "\f" in unit.text:
        unit, shifts = _drop_form_feed_indents(unit)
    if unit.text.rstrip("\r\n").endswith("\\"):
        # the last statement ends in a line continuation that the next (comment) line completes: a unit
        # cut there ends at EOF after the backslash, which libcst (and Python) reject; a blank line completes it
        unit = dataclasses.replace(unit, text=unit.text + "\n")
    deep = [d for d in getattr(sf.index, "deep", ()) if first <= d[0] <= last]
    if deep:        # libcst's native parser would overflow its stack (a segfault), so do not call it
        line, _, what = deep[0]
        return [parse_error_finding(sf.path, f"nesting too deep to analyse ({what})", line)]
    try:
        module = parse(unit.text)
    except cst.ParserSyntaxError as e:
        return [parse_error_finding(sf.path, f"libcst: {e.message}", e.raw_line + unit.line_offset,
                                    e.raw_column + unit.col_offset)]
    except RecursionError:
        return [parse_error_finding(sf.path, "nesting too deep to parse", first)]
    try:
        found = walk_unit(module, unit, sf, rules, traced, project, debug)
        return [_shift_columns(f, shifts) for f in found] if shifts else found
    except RecursionError:      # the walk and the rules recurse over the tree: Python's stack limit
        return [parse_error_finding(sf.path, "nesting too deep to analyse", first)]
    except Exception as e:      # a bug outside any one rule: lose this unit, keep the rest of the file
        return [internal_error(sf.path, f"checking lines {first}-{last}", e, debug, first)]


def check_file(sf: SourceFile, rules: Sequence[Type], traced: Dict[str, Tuple[str, ...]], site_lines: Set[int],
               project: Optional[Project] = None, debug: bool = False, ignore_noqa: bool = False) -> List[Finding]:
    """Run every rule over the traced code (and site statements) of one file, in FILE_TIME_LIMIT seconds.
    traced: qualname -> call chain of the functions checked as traced code: the file's region functions, or in
    the frame pass its frame functions."""
    lines = source_lines(sf.text)
    # in file order, so that what the budget leaves unchecked is one stretch of lines
    units = sorted(plan_units(sf, lines, set(traced), site_lines), key=lambda u: u.line_offset)
    findings: List[Finding] = []
    done = 0
    try:
        with _time_limit(FILE_TIME_LIMIT):
            for unit in units:
                findings += check_unit(sf, unit, rules, traced, project, debug)
                done += 1
    except AnalysisTimeout as e:    # an analysis that blows up on some input, or many slow functions: not a hang
        if done < len(units):       # (not when the timer fired just as the last unit ended)
            first, last = _unit_lines(units[done])[0], _unit_lines(units[-1])[1]
            findings.append(internal_error(sf.path, f"checking lines {first}-{last}", e, debug, first))
    if not findings:
        return []
    sup = Suppressions(sf.text) if "#" in sf.text and not ignore_noqa else None     # only when needed
    if sup and sup.skip_file:
        return []
    # a finding at a guard is also silenced by a `noqa` on the line that changes the value (its related line)
    out = [f for f in findings if not (sup and (sup.suppressed(f.code, f.line) or
                                                any(sup.suppressed(f.code, r[1]) for r in f.related)))]
    return sorted(set(merge_related(out)))
