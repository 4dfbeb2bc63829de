"""Findings: what a rule reports. Lines are 1-based, columns 0-based (front ends convert at their edge)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Tuple

PARSE_ERROR = "DYN000"
INTERNAL_ERROR = "DYN001"


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

    def with_(self, **changes) -> "Finding":
        return replace(self, **changes)

    @property
    def sort_key(self):
        return (self.path, self.line, self.column, self.code)

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "fix": self.fix,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line or self.line,
            "end_column": self.end_column,
            "chain": list(self.chain),
            "gb_types": list(self.gb_types),
            **({"status": self.status} if self.status else {}),
            **({"properties": dict(self.properties)} if self.properties else {}),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Finding":
        return cls(
            path=d["path"], line=d["line"], column=d["column"], code=d["code"], message=d["message"],
            end_line=d.get("end_line", 0), end_column=d.get("end_column", 0), name=d.get("name", ""),
            fix=d.get("fix", ""), severity=d.get("severity", "warning"), gb_types=tuple(d.get("gb_types", ())),
            chain=tuple(d.get("chain", ())), status=d.get("status", ""),
            properties=tuple(sorted(d.get("properties", {}).items())),
        )


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
                   name="unparsable-file", message=f"cannot parse file: {message}", severity="error",
                   end_line=max(line, 1), end_column=max(column, 0))
