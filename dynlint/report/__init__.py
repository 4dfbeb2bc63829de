"""Output formats, behind one contract: a format is a module here with `render_report(report, options) -> str`,
named once in FORMATS. Also the display helpers that make project text safe to show (display.py) and the
progress bars (progress.py)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Optional, Sequence

from dynlint.linter.config import Config
from dynlint.linter.finding import FileError, Finding

# name -> module; a module is imported when its format is used (sarif needs the optional sarif-om)
FORMATS = {
    "text": "dynlint.report.text",
    "json": "dynlint.report.json_format",
    "sarif": "dynlint.report.sarif",
    "github": "dynlint.report.github",
    "html": "dynlint.report.html",
}


@dataclass(frozen=True)
class Report:
    """What every format renders: a run's findings, the files checked and those that could not be, the
    configuration (its root locates the sources), and what --verify saw (its JSON document and text table)."""
    findings: Sequence[Finding]
    files: Sequence[str]
    errors: Sequence[FileError]
    config: Config
    verify: Optional[dict] = None
    verify_text: str = ""
    buffers: Optional[dict] = None      # project-relative path -> the text checked instead of the file (stdin)


@dataclass(frozen=True)
class Options:
    """How the user asked to see it (text only uses them)."""
    quiet: bool = False
    statistics: bool = False
    colour: bool = False


def render(fmt: str, report: Report, options: Options = Options()) -> str:
    return importlib.import_module(FORMATS[fmt]).render_report(report, options)
