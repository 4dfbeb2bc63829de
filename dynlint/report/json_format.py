"""JSON output (schema documented in docs/json-output.md; bump SCHEMA_VERSION on incompatible changes)."""
from __future__ import annotations

import json
from typing import Optional, Sequence

from dynlint.linter.finding import FileError, Finding
from dynlint.linter.version import __version__

SCHEMA_VERSION = 1


def to_document(findings: Sequence[Finding], files: Sequence[str], errors: Sequence[FileError],
                verify: Optional[dict] = None) -> dict:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "dynlint", "version": __version__},
        "files_scanned": len(files),
        "files": list(files),
        "errors": [e.to_dict() for e in errors],
        "summary": {"findings": len(findings), "by_code": _by_code(findings)},
        "findings": [f.to_dict() for f in findings],
    }
    if verify is not None:
        doc["verify"] = verify
    return doc


def _by_code(findings: Sequence[Finding]) -> dict:
    out: dict = {}
    for f in findings:
        out[f.code] = out.get(f.code, 0) + 1
    return dict(sorted(out.items()))


def render_report(report, options) -> str:
    return json.dumps(to_document(report.findings, report.files, report.errors, report.verify), indent=2) + "\n"
