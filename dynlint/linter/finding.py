"""Findings: what a rule reports. Lines are 1-based, columns 0-based (front ends convert at their edge)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import List, Optional, Sequence, Tuple

from dynlint.linter.codes import PARSE_ERROR, UnparsableFile

FIX_SAFETIES = ("safe", "unsafe")


@dataclass(frozen=True)
class Edit:
    """Replace the syntax node of type `node_type` that spans (line, column)-(end_line, end_column) in the file
    by `code`: an expression, or (`statements`) one or more statements rendered at column 0. The fixer parses
    the whole file, finds the node by position and swaps it, so the rest of the file keeps its formatting."""
    line: int
    column: int
    end_line: int
    end_column: int
    node_type: str
    code: str
    statements: bool = False


@dataclass(frozen=True)
class Fix:
    """An automatic fix of a finding (`dynlint check --fix`). `safety`: "safe" fixes keep the code's meaning and
    are applied by `--fix`; "unsafe" ones may change it and need `--unsafe-fixes`."""
    title: str
    safety: str
    edits: Tuple[Edit, ...]
    imports: Tuple[Tuple[str, str], ...] = ()    # (module, local name) the fixed code needs bound at module level

    def to_dict(self) -> dict:
        return {"title": self.title, "safety": self.safety,
                "edits": [{"line": e.line, "column": e.column, "end_line": e.end_line, "end_column": e.end_column,
                           "node_type": e.node_type, "code": e.code, "statements": e.statements}
                          for e in self.edits],
                **({"imports": [list(i) for i in self.imports]} if self.imports else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "Fix":
        return cls(title=d["title"], safety=d["safety"], edits=tuple(Edit(**e) for e in d["edits"]),
                   imports=tuple(tuple(i) for i in d.get("imports", ())))


@dataclass(frozen=True, order=True)
class Finding:
    path: str                      # relative to the project root, '/'-separated
    line: int
    column: int
    code: str
    message: str
    end_line: int = 0
    end_column: int = 0
    name: str = ""
    fix: str = ""
    severity: str = "warning"      # "error" | "warning" | "note"
    gb_types: Tuple[str, ...] = ()
    chain: Tuple[str, ...] = ()    # call chain from a compile region root, when reached through calls
    # Filled by `--verify`: "confirmed" | "not observed" | "unverified" ("" when verify did not run).
    status: str = ""
    properties: Tuple[Tuple[str, object], ...] = field(default=(), compare=False)
    autofix: Optional[Fix] = field(default=None, compare=False)   # what `--fix` would change
    # In a notebook: the cell (from 1), `line` and `end_line` then counting within it (linter/notebooks.py)
    cell: int = 0
    # Other places the finding involves: (path, line, column, what happens there). A recompile finding stands
    # at the guard Dynamo names; the lines that change the guarded value between calls are related.
    related: Tuple[Tuple[str, int, int, str], ...] = field(default=(), compare=False)
    # What the finding is about where a rule covers several (the qualified name of a call): the key of the
    # rule's per-release behaviour (rules/releases.py), "" for the rule as a whole.
    pattern: str = field(default="", compare=False)
    # A finding at a guard: (the `def` line of the function whose frame installs it, the value it guards), for
    # the frames Dynamo resumes after a break in that function (analysis/resumed.py); () otherwise
    guard: Tuple[int, str] = field(default=(), compare=False)

    def with_(self, **changes) -> "Finding":
        return replace(self, **changes)

    @property
    def sort_key(self):
        # the message last: two findings of one code at one place keep one order from run to run
        return (self.path, self.cell, self.line, self.column, self.code, self.end_line, self.end_column, self.message)

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "fix": self.fix,
            "severity": self.severity,
            "path": self.path,
            **({"cell": self.cell} if self.cell else {}),
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line or self.line,
            "end_column": self.end_column,
            "chain": list(self.chain),
            "gb_types": list(self.gb_types),
            **({"status": self.status} if self.status else {}),
            **({"properties": dict(self.properties)} if self.properties else {}),
            **({"autofix": self.autofix.to_dict()} if self.autofix else {}),
            **({"related": [{"path": p, "line": ln, "column": c, "message": m} for p, ln, c, m in self.related]}
               if self.related else {}),
            **({"pattern": self.pattern} if self.pattern else {}),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Finding":
        return cls(
            path=d["path"], line=d["line"], column=d["column"], code=d["code"], message=d["message"],
            end_line=d.get("end_line", 0), end_column=d.get("end_column", 0), name=d.get("name", ""),
            fix=d.get("fix", ""), severity=d.get("severity", "warning"), gb_types=tuple(d.get("gb_types", ())),
            chain=tuple(d.get("chain", ())), status=d.get("status", ""),
            properties=tuple(sorted(d.get("properties", {}).items())),
            autofix=Fix.from_dict(d["autofix"]) if d.get("autofix") else None, cell=d.get("cell", 0),
            related=tuple((r["path"], r["line"], r["column"], r["message"]) for r in d.get("related", ())),
            pattern=d.get("pattern", ""),
        )


def merge_related(findings: Sequence[Finding]) -> List[Finding]:
    """One finding per rule and place: reports of a rule at the same span with related lines (a guard that
    several call sites trip) become one finding that lists them all, in file order."""
    out: List[Finding] = []
    at = {}
    for f in findings:
        key = (f.path, f.cell, f.code, f.line, f.column, f.end_line, f.end_column)
        if not f.related or key not in at:
            at.setdefault(key, len(out))
            out.append(f)
            continue
        first = out[at[key]]
        both = first.related + tuple(r for r in f.related if r not in first.related)
        out[at[key]] = first.with_(related=tuple(sorted(both, key=lambda r: (r[0], r[1], r[2]))))
    return out


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked (it also yields one DYN000 finding)."""
    path: str
    message: str
    line: int = 1
    column: int = 0

    def to_dict(self) -> dict:
        return {"path": self.path, "message": self.message, "line": self.line, "column": self.column}


def parse_error_finding(path: str, message: str, line: int = 1, column: int = 0) -> Finding:
    return Finding(path=path, line=max(line, 1), column=max(column, 0), code=PARSE_ERROR,
                   name=UnparsableFile.name, message=UnparsableFile.message.format(why=message), severity="error",
                   end_line=max(line, 1), end_column=max(column, 0))
