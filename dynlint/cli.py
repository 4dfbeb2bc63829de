"""`dynlint` command line. Exit codes: 0 clean, 1 findings, 2 usage or configuration error."""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence

from dynlint import api
from dynlint.core.codes import ENGINE_CODES
from dynlint.core.config import REGION_MODES, ConfigError, apply_table, load_config
from dynlint.core.files import display_lines, write_atomic
from dynlint.core.version import __version__
from dynlint.report import github, html, json_format, progress, text
from dynlint.report.display import printable
from dynlint.rules import all_rules

FORMATS = ("text", "json", "sarif", "github")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message):          # argparse exits 2 too; keep its message, add our prefix
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"dynlint: error: {message}\n")


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _codes(value: str) -> List[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dynlint", description="Find what breaks torch.compile graphs or forces recompiles.")
    p.add_argument("--version", action="version", version=f"dynlint {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="check files or folders (default: .)")
    c.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    c.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable (replaces config)")
    c.add_argument("--extend-select", type=_codes, default=[], help="codes or prefixes to enable in addition")
    c.add_argument("--ignore", type=_codes, default=None, help="codes or prefixes to disable")
    c.add_argument("--extend-ignore", type=_codes, default=[], help="codes or prefixes to disable in addition")
    c.add_argument("--format", choices=FORMATS, default="text")
    c.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE (atomically)")
    c.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    c.add_argument("--statistics", action="store_true", help="count findings per rule")
    c.add_argument("--quiet", "-q", action="store_true", help="only the finding lines and the summary")
    c.add_argument("--regions", choices=REGION_MODES, help="which code counts as compiled (default: auto)")
    c.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml")
    c.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    c.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: all cores)")
    c.add_argument("--max-file-size", type=float, metavar="MIB",
                   help="larger files are reported (DYN000), not parsed (default: 10; 0: no limit)")
    c.add_argument("--no-cache", action="store_true", help="neither read nor write the .dynlint_cache folder")
    c.add_argument("--cache-dir", metavar="DIR", help="where to keep the cache (default: <project>/.dynlint_cache)")
    c.add_argument("--verify", action="store_true",
                   help="compile the project's @dynlint.example providers for real (runs your code; needs torch)")
    c.add_argument("--device", choices=("auto", "cpu", "cuda"), help="device for --verify (default: auto)")
    c.add_argument("--verify-timeout", type=float, metavar="SECONDS", help="time limit per example")
    c.add_argument("--missed-predictions", metavar="FILE",
                   help="with --verify: write runtime breaks no rule predicted to FILE (JSON)")
    c.add_argument("--report", metavar="FILE", help="also write a self-contained HTML report to FILE")
    c.add_argument("--fix", action="store_true", help="apply the safe automatic fixes, then report what is left")
    c.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix or --diff: also the unsafe fixes (they may change what the code does)")
    c.add_argument("--diff", action="store_true",
                   help="print the fixes as a unified diff instead of writing them (exit 1 if there are any)")

    sub.add_parser("rules", help="list every rule")
    r = sub.add_parser("rule", help="explain one rule")
    r.add_argument("code")
    return p


def _codes_documented() -> dict:
    """Every code dynlint emits, by code: the rules' and dynlint's own (core/codes.py)."""
    return {**ENGINE_CODES, **{r.code: r for r in all_rules()}}


def cmd_rules(out) -> int:
    kinds = {"run": "run problem"}
    rows = [(r.code, r.name, r.family(), kinds.get(r.scope, "recompile" if r.recompiles else "graph break"))
            for _, r in sorted(_codes_documented().items())]
    w = [max(len(row[i]) for row in rows) for i in range(3)]
    for code, name, fam, kind in rows:
        out.write(f"{code:<{w[0]}}  {name:<{w[1]}}  {fam:<{w[2]}}  {kind}\n")
    return EXIT_CLEAN


def cmd_rule(code: str, out) -> int:
    rule = _codes_documented().get(code.upper())
    if rule is None:
        sys.stderr.write(f"dynlint: error: unknown rule code {code!r} (see `dynlint rules`)\n")
        return EXIT_USAGE
    out.write(rule.text())
    return EXIT_CLEAN


def cmd_check(args) -> int:
    known = api.known_codes()
    for p in args.paths:
        if not os.path.lexists(p):
            sys.stderr.write(f"dynlint: error: no such file or directory: {p}\n")
            return EXIT_USAGE
    config = load_config(args.paths, known, args.config)

    cli_table = {}
    if args.select is not None:
        cli_table["select"] = args.select
    if args.extend_select:
        cli_table["extend-select"] = args.extend_select
    if args.ignore is not None or args.extend_ignore:
        cli_table["ignore"] = list(args.ignore if args.ignore is not None else config.ignore) + args.extend_ignore
    if args.regions:
        cli_table["regions"] = args.regions
    if args.max_file_size is not None:
        cli_table["max-file-size"] = args.max_file_size
    config = apply_table(config, cli_table, known, where="the command line")
    if args.device:
        config = config.with_(device=args.device)
    if args.verify_timeout:
        config = config.with_(timeout=args.verify_timeout)

    # a repository's `jobs = 100000` must not start that many processes: the configuration is capped at the cores
    jobs = args.jobs or min(config.jobs or cores(), cores())
    if args.cache_dir:
        config = config.with_(cache_dir=args.cache_dir)

    fix_line = ""
    verification = fixed_report = None  # --fix --verify: what the examples showed; the report on the code left
    if args.fix or args.diff:
        with progress.stage_bars(args.quiet) as bars:
            outcome = api.fix(args.paths, config, unsafe=args.unsafe_fixes, debug=args.debug, jobs=jobs,
                              cache=not args.no_cache, progress=bars)
        if args.diff:
            return _report_diff(outcome, args.quiet)
        if args.verify and outcome.after:
            try:
                verification, fixed_report, result = _verify_fixes(args, config, jobs, outcome)
            except ImportError as e:      # pragma: no cover - packaging problem
                sys.stderr.write(f"dynlint: error: --verify is unavailable: {e}\n")
                return EXIT_USAGE
            except _Unavailable as e:
                sys.stderr.write(f"dynlint: error: {e}\n")
                return EXIT_USAGE
        else:
            failed = outcome.write()
            for problem in outcome.problems + failed:
                sys.stderr.write(f"dynlint: {problem}\n")
            result = outcome.result
        fix_line = _fixed_summary(outcome, verification, result)
    else:
        with progress.stage_bars(args.quiet) as bars:
            result = api.check(args.paths, config, debug=args.debug, jobs=jobs, cache=not args.no_cache,
                               progress=bars)
    findings = result.findings
    for notice in result.notices:
        sys.stderr.write(f"dynlint: warning: {printable(notice)}\n")

    verify_doc, verify_text = None, ""
    if args.verify:
        try:
            from dynlint.runtime_check import VerifyUnavailable, run_verify  # --verify only: off the static path
        except ImportError as e:          # pragma: no cover - packaging problem
            sys.stderr.write(f"dynlint: error: --verify is unavailable: {e}\n")
            return EXIT_USAGE
        try:
            if fixed_report is not None:
                report = fixed_report
            else:
                with progress.example_bar(args.quiet) as bar:
                    report = run_verify(config.root, list(config.examples), device=config.device,
                                        timeout=config.timeout, static_findings=findings, progress=bar)
        except VerifyUnavailable as e:
            sys.stderr.write(f"dynlint: error: {e}\n")
            return EXIT_USAGE
        findings = [f for f in report.findings if config.enabled(f.code, f.path) or f.code.startswith("DYN9")]
        verify_doc = report.to_dict()
        verify_text = report.render_text()
        if verification is not None:
            verify_doc["fixes"] = verification.to_dict()
            verify_text = verification.render_text() + "\n" + verify_text
        if args.missed_predictions:
            from dynlint.runtime_check import write_missed_predictions
            write_missed_predictions(report, args.missed_predictions)

    text = render(args, findings, result, config, verify_doc, verify_text)
    if fix_line and args.format == "text":
        text += fix_line
    elif fix_line:
        sys.stderr.write(fix_line)
    try:
        if args.output:
            write_atomic(args.output, text.encode("utf-8"), config.root)
        else:
            sys.stdout.write(text)
        if args.report:
            document = json_format.to_document(findings, result.files, result.errors, verify_doc)
            write_atomic(args.report, html.render(document, config.root).encode("utf-8"), config.root)
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            raise
        sys.stderr.write(f"dynlint: error: cannot write the report: {e}\n")
        return EXIT_USAGE
    if result.internal_errors:
        return EXIT_USAGE
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


class _Unavailable(Exception):
    """--verify cannot run (wraps runtime_check.VerifyUnavailable, which is imported lazily)."""


def _verify_fixes(args, config, jobs, outcome):
    """`--fix --verify`: run the examples on the original code, write the fixes, run them again, and restore
    (atomically) the files of fixes an example shows to be wrong (dynlint/runtime_check/fixcheck.py). Returns
    (FixVerification, the verify report on the code as left, the static result on it)."""
    from dynlint.runtime_check import VerifyUnavailable, run_verify
    from dynlint.runtime_check.fixcheck import judge

    def verify(static_findings, **outputs):
        with progress.example_bar(args.quiet) as bar:
            return run_verify(config.root, list(config.examples), device=config.device, timeout=config.timeout,
                              static_findings=static_findings, progress=bar, **outputs)

    originals = {}
    for rel in outcome.after:
        try:
            originals[rel] = outcome.paths[rel].read_bytes()
        except OSError as e:
            outcome.problems.append(f"{rel}: cannot read it: {e}")
    with tempfile.TemporaryDirectory(prefix="dynlint-fix-verify-") as outputs:
        try:
            before = verify((), save_outputs=Path(outputs))
            failed = outcome.write()
            after = verify(outcome.result.findings, reference_outputs=Path(outputs))
        except VerifyUnavailable as e:
            raise _Unavailable(str(e)) from None
    for problem in outcome.problems + failed:
        sys.stderr.write(f"dynlint: {problem}\n")
    written = [rel for rel in outcome.after if rel in originals and not any(f.startswith(f"{rel}:") for f in failed)]
    unsafe = [(f.path, f.line, f.code) for f in outcome.result.findings
              if f.autofix is not None and f.autofix.safety == "unsafe"]
    verification = judge(before.examples, after.examples, {rel: (outcome.before[rel], outcome.after[rel])
                                                           for rel in written}, outcome.applied, unsafe)
    if not verification.rolled_back:
        return verification, after, outcome.result
    for rel in verification.restored:
        write_atomic(outcome.paths[rel], originals[rel], config.root)
    # the code as left: some files fixed, some restored
    result = api.check(args.paths, config, debug=args.debug, jobs=jobs, cache=False)
    return verification, verify(result.findings), result


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{('es' if word.endswith('x') else 's') if n != 1 else ''}"


def _report_diff(outcome, quiet: bool) -> int:
    """`--diff`: the fixes as a unified diff on stdout, a summary on stderr; exit 1 when there are changes."""
    sys.stdout.write(outcome.diff())
    for notice in outcome.result.notices:
        sys.stderr.write(f"dynlint: warning: {printable(notice)}\n")
    for problem in outcome.problems:
        sys.stderr.write(f"dynlint: {problem}\n")
    if not quiet:
        if outcome.after:
            sys.stderr.write(f"Would apply {_plural(outcome.fixed, 'fix')} to {_plural(len(outcome.after), 'file')}."
                             f"{_unsafe_hint(outcome)}\n")
        else:
            sys.stderr.write(f"No fixes available.{_unsafe_hint(outcome)}\n")
    if outcome.result.internal_errors:
        return EXIT_USAGE
    return EXIT_FINDINGS if outcome.after else EXIT_CLEAN


def _unsafe_hint(outcome) -> str:
    n = outcome.unsafe_available
    return f" {_plural(n, 'more fix')} with --unsafe-fixes (see them with --diff --unsafe-fixes)." if n else ""


def _fixed_summary(outcome, verification=None, result=None) -> str:
    """`Applied 2 fixes to 1 file: 3 findings fewer, 1 remaining.` (one fix can clear several findings: the
    logging guard that takes its `if` along also clears the branch's). With --verify, fixes rolled back count
    neither as applied nor in the findings fewer; `result` is then the check of the code as left."""
    left = len((result or outcome.result).findings)
    restored = set(verification.restored) if verification else set()
    if restored:
        rolled = sum(outcome.applied.get(rel, 0) for rel in restored)
        kept = [rel for rel in outcome.after if rel not in restored]
        return (f"Applied {_plural(outcome.fixed - rolled, 'fix')} to {_plural(len(kept), 'file')}: "
                f"{_plural(max(outcome.found - left, 0), 'finding')} fewer, {left} remaining. Rolled back "
                f"{_plural(rolled, 'fix')} in {', '.join(sorted(restored))}: --verify found outputs changed or "
                f"breaks left.{_unsafe_hint(outcome)}\n")
    if not outcome.after:
        return f"No fixes applied ({left} remaining).{_unsafe_hint(outcome)}\n"
    return (f"Applied {_plural(outcome.fixed, 'fix')} to {_plural(len(outcome.after), 'file')}: "
            f"{_plural(max(outcome.found - left, 0), 'finding')} fewer, {left} remaining.{_unsafe_hint(outcome)}\n")


def render(args, findings, result, config, verify_doc, verify_text="") -> str:
    if args.format == "json":
        return json_format.render(findings, result.files, result.errors, verify_doc)
    if args.format == "sarif":
        from dynlint.report import sarif  # needs the optional sarif-om (the `sarif` extra): imported on use
        return sarif.render(findings, result, config, verify_doc)
    if args.format == "github":
        return github.render(findings, config.root)

    sources = {}
    if not args.quiet:
        for f in findings:
            if f.path not in sources:
                sources[f.path] = display_lines(config.root / f.path, config.max_file_size)
    stream = sys.stdout if not args.output else None
    body = verify_text + "\n" if verify_text else ""
    return body + text.render(findings, len(result.files), sources, colour=bool(stream) and text.use_colour(stream),
                              quiet=args.quiet, statistics=args.statistics)


def main(argv: Optional[Sequence[str]] = None) -> int:
    # A run allocates millions of short-lived objects (syntax trees, indexes); at the default threshold (700)
    # the cyclic collector re-scans the growing heap so often that it takes a fifth of a cold run and half of
    # a re-run (bench/speed.py). The process is short-lived; workers inherit the setting.
    gc.set_threshold(100_000, 50, 100)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "rules":
            return cmd_rules(sys.stdout)
        if args.command == "rule":
            return cmd_rule(args.code, sys.stdout)
        if args.command == "check":
            return cmd_check(args)
        parser.print_help()
        return EXIT_USAGE
    except ConfigError as e:
        sys.stderr.write(f"dynlint: error: {e}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("dynlint: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # e.g. `dynlint check | head`: not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())
