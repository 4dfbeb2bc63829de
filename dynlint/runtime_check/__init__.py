"""`dynlint check --verify`: compile the user's `@dynlint.example` targets for real and cross-check the
static findings against what Dynamo does.

    report = run_verify(project_root, ["**/dynlint_examples.py"], device="auto", timeout=120,
                        static_findings=findings)
    print(report.render_text()); json.dumps(report.to_dict())

Importing this package imports neither torch nor the compiler layer: names load on first use (PEP 562),
and torch itself is only imported inside the worker processes (dynlint.runtime_check.worker).
"""
from __future__ import annotations

from dynlint import lazy

__getattr__, __all__ = lazy.attributes(__name__, {
    "run_verify": "dynlint.runtime_check.verify",
    "VerifyUnavailable": "dynlint.runtime_check.verify",
    "VerifyReport": "dynlint.runtime_check.report",
    "render_table": "dynlint.runtime_check.report",
    "write_missed_predictions": "dynlint.runtime_check.report",
    "ExampleResult": "dynlint.runtime_check.results",
    "Agreement": "dynlint.runtime_check.results",
    "cross_check": "dynlint.runtime_check.crosscheck",
    "missed_predictions": "dynlint.runtime_check.crosscheck",
    "discover": "dynlint.runtime_check.discover",
    "DEFAULT_GLOBS": "dynlint.runtime_check.discover",
    "example": "dynlint.runtime_check.examples",
})
