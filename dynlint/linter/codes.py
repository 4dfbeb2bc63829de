"""Every code dynlint emits that no rule class owns: problems of the run (DYN0xx) and what `--verify` saw that
no rule predicted (DYN9xx). Each is documented like a rule (the same class attributes, so `dynlint rule`,
docs/rules.md and SARIF's `driver.rules` render it the same way), but none visits code: they are not registered
as rules. Rules' own codes live in their classes (dynlint/rules/)."""
from __future__ import annotations

from typing import Dict, Type

from dynlint.linter.rule import Rule


class UnparsableFile(Rule):
    """A file, or one function of it, that dynlint could not read or parse, and so did not check."""
    code = "DYN000"
    name = "unparsable-file"
    message = "cannot parse file: {why}"
    severity = "error"
    scope = "run"
    fix = ("Make the file valid Python for the interpreter dynlint runs on (the message names Python's own error), "
           "or exclude it (`exclude` in [tool.dynlint]).")
    why = """
        Code that is not checked may hold graph breaks nobody is told about. The message says why: Python's
        syntax error at its position, an encoding that cannot be decoded, a file over `max-file-size`, nesting
        deeper than the parser allows, newer syntax than the running Python knows."""


class InternalError(Rule):
    """A bug of dynlint's own: an analysis raised, or spent the file's time budget. The message names where."""
    code = "DYN001"
    name = "internal-error"
    message = "internal error in {where}: {detail}"
    severity = "error"
    scope = "run"
    fix = "Report it with the file (or the smallest piece of it that shows it) and the output of `--debug`."
    why = """
        The code where it happened was not checked (the rest of the file and every other file were). The run
        exits 2 so that CI does not take a partial answer for a clean one; a result holding one is never cached."""


class UnpredictedGraphBreak(Rule):
    """`--verify` saw Dynamo break the graph where no static finding predicted it."""
    code = "DYN901"
    name = "unpredicted-graph-break"
    message = "Dynamo graph break that dynlint did not predict: {gb_type}. {explanation}"
    scope = "run"
    fix = "Fix the code as Dynamo's hint (shown with the finding) says."
    why = """
        Each break splits the compiled graph and runs Python between the pieces, and a break inside a loop or a
        `try` block makes Dynamo skip the whole function. This one was observed, so it is real; the static pass
        missed it. `--missed-predictions FILE` writes these (with Dynamo's explanation) as JSON."""


class UnpredictedRecompile(Rule):
    """`--verify` saw a function compile again because a guard failed, where no static finding predicted it."""
    code = "DYN902"
    name = "unpredicted-recompile"
    message = "recompile of {function} that dynlint did not predict: {change} (guard failed: {guard})"
    scope = "run"
    fix = ("Keep what changed between calls out of the compiled code's guards: pass it as a tensor, mark it "
           "dynamic, or keep it constant across calls.")
    why = """
        Each recompile costs a full compile, and after `recompile_limit` (8) recompiles Dynamo stops compiling the
        function and runs it eagerly. The first recompile on a changed tensor size is Dynamo's automatic dynamic
        shapes at work and is not reported."""


class CompiledOutputMismatch(Rule):
    """`--verify` ran an example eagerly and compiled, and the outputs differ beyond its tolerances."""
    code = "DYN903"
    name = "compiled-output-mismatch"
    message = "compiled output of example {example} differs from eager at {where}: {detail}"
    severity = "error"
    scope = "run"
    fix = ("Look for code that behaves differently under torch.compile (torch.compiler.is_compiling(), state read "
           "at trace time, in-place updates of inputs); raise rtol/atol in @dynlint.example only if the "
           "difference is numerical noise.")
    why = """
        Compiled code that computes something else is worse than a slow one: the speedup is worthless until the
        outputs agree. Outputs are compared leaf by leaf (tensors in tuples, dicts, dataclasses such as a
        ModelOutput, and objects such as a DynamicCache by the tensors they hold), first with the dtype's
        allclose; a floating-point tensor outside it is then judged as PyTorch's benchmark harness does, against
        the example run again in float64: accepted when compiled is within 2x (3x for float16 / bfloat16 and small
        tensors) eager's own RMSE from it. The finding names the leaf that differed, by how much, and the RMSE
        figures. An explicit rtol/atol on `@dynlint.example` is plain allclose."""


ENGINE_CODES: Dict[str, Type[Rule]] = {c.code: c for c in (UnparsableFile, InternalError, UnpredictedGraphBreak,
                                                         UnpredictedRecompile, CompiledOutputMismatch)}
PARSE_ERROR = UnparsableFile.code
INTERNAL_ERROR = InternalError.code
RUNTIME_CODES = frozenset(c for c in ENGINE_CODES if c.startswith("DYN9"))
