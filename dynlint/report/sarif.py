"""SARIF 2.1.0 output, shaped for GitHub code scanning and built with sarif-om's object model.

Rule metadata comes from the registry of enabled rules (never rebuilt from the results). Positions convert
here: SARIF columns are 1-based and `endColumn` is the column after the region, so both are Finding's
0-based columns plus one. Paths become repository-relative URIs under `%SRCROOT%`.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence
from urllib.parse import quote

from dynlint.linter import notebooks
from dynlint.linter.codes import ENGINE_CODES, INTERNAL_ERROR, PARSE_ERROR
from dynlint.linter.config import ConfigError
from dynlint.linter.files import report_bytes, repository_root
from dynlint.linter.finding import Finding
from dynlint.linter.rule import HOMEPAGE
from dynlint.linter.version import __version__
from dynlint.rules import active_rules

try:
    import attr
    import sarif_om as om
except ImportError:      # the optional `sarif` extra; the CLI prints this and exits 2
    raise ConfigError("--format sarif needs sarif-om: pip install 'dynlint[sarif]'") from None

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
AUTOMATION_ID = "dynlint/"          # code scanning category "dynlint"
SRCROOT = "%SRCROOT%"
# GitHub code scanning's limits (docs: "SARIF support for code scanning", "results exceed limit").
MAX_RESULTS = 25_000                # per run; more and the upload is rejected
MAX_TAGS = 10                       # per rule that GitHub shows (20 accepted)
MAX_NAME = 255                      # reportingDescriptor.name
MAX_DESCRIPTION = 1024              # shortDescription.text / fullDescription.text

LEVELS = {"error": "error", "warning": "warning", "note": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}
TOOL_CODES = (PARSE_ERROR, INTERNAL_ERROR)    # problems of the run, reported as notifications


@attr.s
class PropertyBag(om.PropertyBag):
    """sarif-om models only a property bag's `tags`; a bag is open (SARIF 3.8), so the rest ride in `others`."""
    others = attr.ib(factory=dict, metadata={"additional_properties": True})


# ---- serialisation ------------------------------------------------------------------------------
ALWAYS_WRITTEN = {"level"}     # code scanning reads a level; say it even where it equals the default


def to_json(obj):
    """sarif-om objects -> JSON data under the specification's property names (from each field's attrs
    metadata). None and sarif-om's defaults, which are the schema's defaults, are left out."""
    if attr.has(type(obj)):
        out = {}
        for field in attr.fields(type(obj)):
            value = getattr(obj, field.name)
            if field.metadata.get("additional_properties"):
                out.update((k, to_json(v)) for k, v in value.items())
                continue
            name = field.metadata["schema_property_name"]
            default = field.default.factory() if isinstance(field.default, attr.Factory) else field.default
            if value is None or (value == default and name not in ALWAYS_WRITTEN):
                continue
            out[name] = to_json(value)
        return out
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)          # JSON has no NaN/Infinity
    return obj


def render_report(report, options) -> str:
    return json.dumps(to_json(build_log(report)), indent=2) + "\n"


# ---- the log ------------------------------------------------------------------------------------
def build_log(report) -> om.SarifLog:
    findings, root = report.findings, Path(report.config.root)
    repo_root, prefix = repository_root(root)
    # the enabled rules, and dynlint's own codes (problems of the run, what --verify saw): each documented once
    rules = active_rules(report.config) + list(ENGINE_CODES.values())
    descriptors = [rule_descriptor(r) for r in rules]
    index = {r.code: i for i, r in enumerate(rules)}
    problems = [f for f in findings if f.code not in TOOL_CODES]

    notifications = tool_notifications(findings, report.errors, prefix)
    if len(problems) > MAX_RESULTS:
        notifications.append(om.Notification(level="warning", message=om.Message(
            text=f"dynlint found {len(problems)} problems; only the first {MAX_RESULTS} (most severe first) are "
                 f"included, the most GitHub code scanning accepts in one run")))
        rank = {"error": 0, "warning": 1, "note": 2}
        problems = sorted(problems, key=lambda f: rank.get(f.severity, 1))[:MAX_RESULTS]

    hashes, stored = FileHashes(root, report.buffers), notebooks.StoredLines(root)
    results = [sarif_result(f, index[f.code], prefix, hashes.get(f.path, stored(f)), stored(f)) for f in problems]
    driver = om.ToolComponent(name="dynlint", version=__version__, semantic_version=__version__,
                              information_uri=HOMEPAGE, rules=descriptors)
    run = om.Run(
        tool=om.Tool(driver=driver),
        results=results,
        invocations=[om.Invocation(execution_successful=not any(f.code == INTERNAL_ERROR for f in findings),
                                   tool_execution_notifications=notifications or None)],
        automation_details=om.RunAutomationDetails(id=AUTOMATION_ID),
        original_uri_base_ids={SRCROOT: om.ArtifactLocation(uri=repo_root.as_uri().rstrip("/") + "/")},
        column_kind="unicodeCodePoints",
        properties=PropertyBag(others={"verify": report.verify}) if report.verify is not None else None,
    )
    return om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])


def _text(s: str, limit: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[:limit - 1] + "…"


def rule_descriptor(rule) -> om.ReportingDescriptor:
    tags = list(dict.fromkeys(rule.all_tags()))[:MAX_TAGS]
    return om.ReportingDescriptor(
        id=rule.code,
        name=_text(rule.name, MAX_NAME),
        short_description=om.MultiformatMessageString(text=_text(rule.summary(), MAX_DESCRIPTION)),
        full_description=om.MultiformatMessageString(text=_text(f"{rule.summary()} {rule.why}", MAX_DESCRIPTION)),
        help=om.MultiformatMessageString(text=rule.text(), markdown=rule.markdown()),
        help_uri=rule.doc_url(),
        default_configuration=om.ReportingConfiguration(level=LEVELS.get(rule.severity, "warning")),
        properties=PropertyBag(tags=tags, others={"precision": rule.precision,
                                                  "problem.severity": PROBLEM_SEVERITY.get(rule.severity, "warning")}),
    )


def region(line: int, column: int, end_line: int = 0, end_column: int = 0) -> om.Region:
    """0-based columns (end exclusive) -> SARIF's 1-based ones; an unknown end covers one character."""
    end_line = max(end_line, line)
    if end_line == line and end_column <= column:
        end_column = column + 1
    return om.Region(start_line=line, start_column=column + 1, end_line=end_line, end_column=end_column + 1)


def physical_location(prefix: str, path: str, reg: om.Region) -> om.PhysicalLocation:
    return om.PhysicalLocation(artifact_location=om.ArtifactLocation(uri=quote(prefix + path), uri_base_id=SRCROOT),
                               region=reg)


def sarif_result(f: Finding, rule_index: int, prefix: str, line_hash: Optional[str], stored: int = 0) -> om.Result:
    """`stored`: for a notebook cell's finding, the line of the notebook's file that holds it (its region then
    names that line alone; the cell and its line are in the properties)."""
    text = f.message
    if f.chain:
        text += f" (reached through {' -> '.join(f.chain)})"
    props = dict(f.properties)
    if f.status:
        props["status"] = f.status
    reg = region(f.line, f.column, f.end_line, f.end_column)
    if f.cell:
        text += f" (cell {f.cell}, line {f.line})"
        props.update(cell=f.cell, cellLine=f.line, cellColumn=f.column + 1)
        reg = om.Region(start_line=stored or 1)
    related = [om.Location(id=i, message=om.Message(text=what),
                           physical_location=physical_location(prefix, rpath, region(rline, rcol)))
               for i, (rpath, rline, rcol, what) in enumerate(f.related)]
    # the same as a path, in file order, ending at the finding: where the value changes, then the guard
    steps = [om.Location(message=om.Message(text=what),
                         physical_location=physical_location(prefix, rpath, region(rline, rcol)))
             for rpath, rline, rcol, what in sorted(f.related, key=lambda r: (r[0], r[1], r[2]))]
    steps.append(om.Location(message=om.Message(text="Dynamo guards it here"),
                             physical_location=physical_location(prefix, f.path, reg)))
    flows = [om.CodeFlow(thread_flows=[om.ThreadFlow(locations=[om.ThreadFlowLocation(location=s)
                                                                for s in steps])])] if related else None
    return om.Result(
        rule_id=f.code, rule_index=rule_index, level=LEVELS.get(f.severity, "warning"),
        message=om.Message(text=text),
        locations=[om.Location(physical_location=physical_location(prefix, f.path, reg))],
        related_locations=related or None,
        code_flows=flows,
        partial_fingerprints={"primaryLocationLineHash": line_hash} if line_hash else None,
        properties=PropertyBag(others=props) if props else None,
    )


def tool_notifications(findings: Sequence[Finding], errors, prefix: str) -> List[om.Notification]:
    """Files that could not be checked (DYN000) and internal errors (DYN001), once each."""
    seen, out = set(), []
    items = [(PARSE_ERROR, e.path, e.line, e.column, e.message) for e in errors]
    items += [(f.code, f.path, f.line, f.column, f.message) for f in findings if f.code in TOOL_CODES]
    for item in items:
        if item in seen:
            continue
        seen.add(item)
        code, path, line, column, message = item
        where = physical_location(prefix, path, region(max(line, 1), max(column, 0)))
        out.append(om.Notification(level="error", message=om.Message(text=f"{path}: {message}"),
                                   descriptor=om.ReportingDescriptorReference(id=code),
                                   locations=[om.Location(physical_location=where)]))
    return out


# ---- fingerprints -------------------------------------------------------------------------------
class FileHashes:
    """primaryLocationLineHash per (file, line), each file read and hashed once."""

    def __init__(self, root: Path, buffers: Optional[dict] = None):
        self.root = root
        self.files: Dict[str, Dict[int, str]] = {}
        for path, text in (buffers or {}).items():      # what was checked (stdin), not the file of that name
            self.files[path] = line_hashes(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)

    def get(self, path: str, line: int) -> Optional[str]:
        if path not in self.files:
            # a regular file of the project only (no FIFO, /dev/zero or link out of it); else upload-sarif
            # computes the hash from the checkout instead
            data = report_bytes(self.root / path, root=self.root)
            self.files[path] = line_hashes(data.decode("utf-8", errors="replace")) if data is not None else {}
        return self.files[path].get(line)


_BLOCK_SIZE = 100
_MOD = 37
_MASK = (1 << 64) - 1
_FIRST_MOD = pow(_MOD, _BLOCK_SIZE, 1 << 64)
_EOF = 65535
_TAB, _SPACE, _LF, _CR = 9, 32, 10, 13


def line_hashes(text: str) -> Dict[int, str]:
    """Line number (1-based) -> `<hex>:<n>`, as github/codeql-action's src/fingerprints.ts `hash()` computes
    it: a rolling polynomial hash (mod 2^64) over the BLOCK_SIZE characters that start at each line,
    skipping spaces and tabs, with line endings normalised to LF, an EOF marker and zero padding at the
    end; `n` counts earlier lines with the same hash. Characters are UTF-16 code units, as in JavaScript.
    Because it hashes content rather than line numbers, an alert keeps its identity when lines shift."""
    window = [0] * _BLOCK_SIZE
    line_numbers = [-1] * _BLOCK_SIZE
    state = {"hash": 0, "index": 0}
    counts: Dict[str, int] = {}
    out: Dict[int, str] = {}

    def output_hash() -> None:
        value = format(state["hash"], "x")
        counts[value] = counts.get(value, 0) + 1
        out[line_numbers[state["index"]]] = f"{value}:{counts[value]}"
        line_numbers[state["index"]] = -1

    def update_hash(current: int) -> None:
        i = state["index"]
        begin, window[i] = window[i], current
        state["hash"] = (_MOD * state["hash"] + current - _FIRST_MOD * begin) & _MASK
        state["index"] = (i + 1) % _BLOCK_SIZE

    data = text.encode("utf-16-le", errors="surrogatepass")
    units = [data[i] | data[i + 1] << 8 for i in range(0, len(data), 2)]
    line, line_start, prev_cr = 0, True, False
    for current in units + [_EOF]:
        if current in (_SPACE, _TAB) or (prev_cr and current == _LF):
            prev_cr = False
            continue
        prev_cr = current == _CR
        if prev_cr:
            current = _LF
        if line_numbers[state["index"]] != -1:
            output_hash()
        if line_start:
            line_start = False
            line += 1
            line_numbers[state["index"]] = line
        if current == _LF:
            line_start = True
        update_hash(current)
    for _ in range(_BLOCK_SIZE):      # flush the lines still in the window
        if line_numbers[state["index"]] != -1:
            output_hash()
        update_hash(0)
    return out
