"""What the compiler layer observes: graph breaks, recompiles and FX graphs, as flat frozen records.

This module never imports torch: the verify worker builds these records under torch, the parent process
(which must not need torch) rebuilds them from JSON. Paths are absolute while a worker collects them and
relative to the project root ('/'-separated) once the worker has finished; lines are 1-based.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Callable, Tuple

# Resume functions Dynamo creates after a break are named "torch_dynamo_resume_in_<fn>_at_<line>".
RESUME_PREFIX = "torch_dynamo_resume_in_"


def parent_function(code_name: str) -> str:
    """Map a Dynamo resume function back to the user function it continues ('f' for ..._in_f_at_13)."""
    if code_name.startswith(RESUME_PREFIX):
        return code_name[len(RESUME_PREFIX):].rsplit("_at_", 1)[0]
    return code_name


@dataclass(frozen=True)
class GraphBreak:
    gb_types: Tuple[str, ...]          # primary first; a chained break ("... > graph break in loop") lists several
    gb_ids: Tuple[str, ...]            # "GB0059" per gb_type, from the installed torch's registry; "" if unknown
    explanation: str                   # Dynamo's Explanation of the primary gb_type (old torch: its Reason text)
    hints: Tuple[str, ...]             # Dynamo's Hint lines of the primary gb_type
    path: str                          # innermost traceback frame under the project root ("" when none)
    line: int
    function: str                      # user function of that frame
    reported_path: str                 # Dynamo's own "in user code at FILE:LINE", often library code
    reported_line: int
    frame_skipped: bool                # the whole function fell back to eager (break in a loop / try / with, ...)
    duplicate: bool                    # Dynamo suppressed the traceback of a repeated break

    def to_dict(self) -> dict:
        return _plain(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GraphBreak":
        return cls(**{**d, "gb_types": tuple(d["gb_types"]), "gb_ids": tuple(d["gb_ids"]),
                      "hints": tuple(d["hints"])})

    def relative_to(self, relpath: Callable[[str], str]) -> "GraphBreak":
        return replace(self, path=relpath(self.path) if self.path else "", reported_path=relpath(self.reported_path))


@dataclass(frozen=True)
class GuardFailure:
    entry: str          # "<frame>/<cache entry>", e.g. "3/0"
    guard: str          # the failed guard, e.g. "mode == 'a'" or "tensor 'x' size mismatch at index 0. ..."
    source: str         # the user source line that installed the guard ("" for tensor guards)
    path: str           # where that line is ("" when unknown). Old torch logs only the path's last ~40
    line: int           # characters; the worker resolves such suffixes against the user's files.

    def to_dict(self) -> dict:
        return _plain(self)


@dataclass(frozen=True)
class Recompile:
    function: str                       # user function (a resume function is mapped back to its parent)
    code_name: str                      # the code object Dynamo recompiled, as logged
    path: str                           # co_filename
    line: int                           # co_firstlineno
    failures: Tuple[GuardFailure, ...]  # one per failing cache entry, newest first (failures[0] is the reason)
    span: Tuple[int, int] = (0, 0)      # first and last line of `function` in `path`, (0, 0) when unknown

    @property
    def reason(self) -> str:
        return self.failures[0].guard if self.failures else ""

    def to_dict(self) -> dict:
        return {**_plain(self), "reason": self.reason}

    @classmethod
    def from_dict(cls, d: dict) -> "Recompile":
        d = {k: v for k, v in d.items() if k != "reason"}
        return cls(**{**d, "failures": tuple(GuardFailure(**f) for f in d["failures"]), "span": tuple(d["span"])})

    def relative_to(self, relpath: Callable[[str], str]) -> "Recompile":
        return replace(self, path=relpath(self.path),
                       failures=tuple(replace(f, path=relpath(f.path) if f.path else "") for f in self.failures))


@dataclass(frozen=True)
class GraphRecord:
    index: int                           # order in which the backend received it
    ops: int                             # call_function / call_method / call_module nodes, after the passes
    dynamic: bool                        # compiled with symbolic shapes
    lines: Tuple[Tuple[str, int], ...]   # user source lines its nodes came from (node.meta["stack_trace"])
    kernels: int                         # fused kernels in the generated code (C++ / Triton); -1 = not lowered
    extern_kernels: int                  # library calls in the generated code (mm, addmm, convolution, ...)
    passes: Tuple[Tuple[str, int], ...]  # (graph pass, nodes it removed or rewrote)
    compile_s: float                     # time spent in the passes and Inductor for this graph

    def to_dict(self) -> dict:
        return _plain(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GraphRecord":
        return cls(**{**d, "lines": tuple((p, n) for p, n in d["lines"]),
                      "passes": tuple((p, n) for p, n in d["passes"])})

    def relative_to(self, relpath: Callable[[str], str]) -> "GraphRecord":
        return replace(self, lines=tuple(sorted({(relpath(p), n) for p, n in self.lines})))


def _plain(record) -> dict:
    """asdict() with tuples turned into lists, so that the dict is exactly what JSON gives back."""
    def lists(v):
        if isinstance(v, (tuple, list)):
            return [lists(x) for x in v]
        if isinstance(v, dict):
            return {k: lists(x) for k, x in v.items()}
        return v
    return lists(asdict(record))
