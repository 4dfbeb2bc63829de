"""`dynlint` command line. Exit codes: 0 clean, 1 findings, 2 usage or configuration error."""
from __future__ import annotations

import argparse
import difflib
import gc
import importlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from dynlint import report as report_formats
from dynlint.linter.codes import ENGINE_CODES, RUNTIME_CODES
from dynlint.linter.config import (OPTIONS, PERFORMANCE, SELECTION, VERIFY, ConfigError, Option, apply_flags,
                                   apply_inline, flag_release, flag_seconds, inline_setting, load_config, settings)
from dynlint.linter.files import discover, shown
from dynlint.linter.writes import write_output
from dynlint.linter.rule import HOMEPAGE
from dynlint.linter.version import __version__
from dynlint.linter.words import plural
from dynlint.report import progress
from dynlint.report import text as text_format
from dynlint.report.display import printable
from dynlint.rules import PREVIEW_BELOW, all_rules, is_preview, precision, recall


def _api():
    """dynlint.api, imported on first use: it loads libcst and the engine, which `--version`, `--help` and the
    rule catalogue never need (the startup item of the first-week issue)."""
    return importlib.import_module("dynlint.api")

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)      # `--sel` is a typo, not `--select`
        super().__init__(*args, **kwargs)

    def error(self, message):          # argparse exits 2 too; keep its message, add our prefix and a suggestion
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"dynlint: error: {printable(message)}{printable(self._suggestion(message))}\n")

    def _suggestion(self, message: str) -> str:
        if not message.startswith("unrecognized arguments:"):
            return ""
        parsers = [self] + [sub for a in self._actions if isinstance(a, argparse._SubParsersAction)
                            for sub in a.choices.values()]
        flags = [f for parser in parsers for action in parser._actions for f in action.option_strings if f != "-h"]
        for word in message.split(":", 1)[1].split():
            close = difflib.get_close_matches(word.split("=")[0], flags, n=1, cutoff=0.6)
            if word.startswith("-") and close:
                return f" (did you mean {close[0]}?)"
        return ""


EPILOG = """exit status: 0 no findings, 1 findings (or fixes to show, with --diff), 2 usage, configuration or
internal error, 130 interrupted. Configuration: [tool.dynlint] in the nearest pyproject.toml; the flags here
override it. Rules: `dynlint rules`, `dynlint rule CODE`."""


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _modes(value: str) -> tuple:
    modes = [m.strip() for m in value.split(",") if m.strip()]
    bad = [m for m in modes if m not in COMPILE_MODES]
    if not modes or bad:
        raise argparse.ArgumentTypeError(f"not a torch.compile mode: {', '.join(bad) or repr(value)} "
                                         f"(choose from {', '.join(COMPILE_MODES)})")
    return ("default",) + tuple(dict.fromkeys(m for m in modes if m != "default"))


def _flag_type(parse):
    """An option's reading of a flag's text as an argparse type: its ConfigError is a usage error that argparse
    reports with the flag's name."""
    def convert(text: str):
        try:
            return parse(text)
        except ConfigError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = parse.__name__       # argparse names the type in "invalid float value: 'x'"
    return convert


def _dest(option: Option) -> str:
    return option.key.replace(".", "_").replace("-", "_")


def _default_note(default) -> str:
    if default is None or isinstance(default, tuple) and len(default) != 1:
        return ""           # none, or a list (the README's table shows it)
    shown = default[0] if isinstance(default, tuple) else f"{default:g}" if isinstance(default, float) else default
    return f" (default: {shown})"


def _add_setting_flags(group, name: str) -> None:
    """The flags of the options (linter/config.py's OPTIONS) in section `name` of `dynlint check --help`."""
    for option in OPTIONS:
        if not option.flags or option.group != name:
            continue
        if option.flag_sets is not None:
            group.add_argument(*option.flags, dest=_dest(option), action="store_const", const=option.flag_sets,
                               help=option.flag_help or option.help)
        else:
            group.add_argument(*option.flags, dest=_dest(option), metavar=option.metavar,
                               choices=option.choices or None,
                               type=_flag_type(option.flag_type) if option.flag_type else None,
                               help=option.flag_help or option.help + _default_note(option.default))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dynlint", description="Find what breaks torch.compile graphs or forces recompiles.")
    p.add_argument("--version", action="version", version=f"dynlint {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="check files or folders (default: .)", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("paths", nargs="*", default=[], metavar="PATH",
                   help="files or folders (default: .); - reads the text of one file from stdin (as does "
                        "--stdin-filename given with no path)")
    sel = c.add_argument_group(SELECTION)
    _add_setting_flags(sel, SELECTION)
    sel.add_argument("--config", metavar="FILE | 'KEY = VALUE'", action="append", default=[],
                     help="use this pyproject.toml (or dynlint.toml); or, as ruff takes it, one setting in TOML "
                          "(`--config 'preview = true'`), on top of the file's; may be repeated")
    sel.add_argument("--isolated", action="store_true",
                     help="read no configuration file: the defaults and the command line only (as ruff)")
    out = c.add_argument_group("output")
    out.add_argument("--output-format", "--format", dest="format", choices=tuple(report_formats.FORMATS),
                     default="text",
                     help="report format (default: text)")
    out.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE (a file atomically; a device or pipe as it is)")
    out.add_argument("--report", metavar="FILE", help="also write a self-contained HTML report to FILE")
    out.add_argument("--statistics", action="store_true", help="a table of findings per rule instead of the list")
    out.add_argument("--quiet", "-q", action="store_true", help="only the finding lines and the summary")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    out.add_argument("--watch", "-w", action="store_true",
                     help="check again whenever a checked file or the configuration changes, until Ctrl-C (as ruff)")
    out.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    out.add_argument("--show-settings", action="store_true",
                     help="print the configuration file read and the resolved settings (each with where it came "
                          "from), then exit")
    out.add_argument("--stdin-filename", metavar="PATH",
                     help="with -: the file of the project the text on stdin stands for (an editor's buffer)")
    out.add_argument("--show-files", action="store_true",
                     help="print the files that would be checked, then those left out and why, then exit")
    out.add_argument("--diff-from", metavar="X.Y", type=_flag_type(flag_release),
                     help="list the findings that change between torch X.Y and the release checked for "
                          "(--torch-version): those gone and those new; exit 1 when there are new ones")
    fixes = c.add_argument_group("fixes")
    fixes.add_argument("--show-fixes", action="store_true",
                       help="with --fix: list the fixes applied, per file and rule (as ruff)")
    fixes.add_argument("--add-noqa", action="store_true",
                       help="add a `# noqa: CODES` comment to each line with findings (as ruff), then exit 0")
    fixes.add_argument("--fix", action="store_true", help="apply the safe automatic fixes, then report what is left")
    fixes.add_argument("--fix-only", action="store_true",
                       help="apply the safe automatic fixes and report nothing else: no findings left, exit 0 "
                            "(as ruff)")
    fixes.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="with --fix: exit 1 when a fix was applied, even if nothing is left (as ruff)")
    fixes.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix or --diff: also the unsafe fixes (they may change what the code does)")
    fixes.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff instead of writing them (exit 1 if there are any)")
    ver = c.add_argument_group(VERIFY)
    ver.add_argument("--verify", action="store_true", help="compile the project's @dynlint.example providers for real")
    _add_setting_flags(ver, VERIFY)
    ver.add_argument("--missed-predictions", metavar="FILE",
                     help="write runtime breaks no rule predicted to FILE (JSON)")
    ver.add_argument("--modes", type=_modes, metavar="MODE,...", default=("default",),
                     help="torch.compile modes to measure each example with, and recommend one of: "
                          f"{', '.join(COMPILE_MODES)} (default: default)")
    ver.add_argument("--timing-budget", type=_flag_type(flag_seconds), metavar="SECONDS", default=2.0,
                     help="time for one example's timing in one mode, unless its speedup's interval is within "
                          "±5%% sooner (default: 2)")
    perf = c.add_argument_group(PERFORMANCE)
    _add_setting_flags(perf, PERFORMANCE)
    perf.add_argument("--no-cache", action="store_true", help="neither read nor write the .dynlint_cache folder")

    sub.add_parser("rules", help="list every rule")
    sub.add_parser("server", help="run the language server (LSP over stdio, for editors: docs/editors.md)")
    r = sub.add_parser("rule", help="explain one rule (or, with --all, every rule)")
    r.add_argument("code", nargs="?")
    r.add_argument("--all", action="store_true", help="explain every rule")
    sub.add_parser("clean", help="remove the .dynlint_cache folders under the current folder")
    return p


def _codes_documented() -> dict:
    """Every code dynlint emits, by code: the rules' and dynlint's own (linter/codes.py)."""
    return {**ENGINE_CODES, **{r.code: r for r in all_rules()}}


def cmd_server() -> int:
    try:
        from dynlint import server      # pygls: installed with the `server` extra
    except ImportError as e:
        sys.stderr.write(f"dynlint: error: the language server needs pygls ({e}): "
                         f"pip install 'dynlint[server]'\n")
        return EXIT_USAGE
    return server.main()


def cmd_rules(out) -> int:
    kinds = {"run": "run problem"}

    def measured(code):
        m = precision(code)
        return (f"{m[0]:.2f} ({m[1]}/{m[1] + m[2]})" if m else "-") + (" preview" if is_preview(code) else "")

    def found(code):
        # a rule shares its break kinds with others: 0 of them found says nothing of its own (it may cover
        # sites the others' code has none of), so only a figure above 0 is shown
        m = recall(code)
        return f"{m[0]:.2f} ({m[1]}/{m[2]})" if m and m[1] else "-"

    rows = [("code", "name", "family", "predicts", "fix", "recall", "precision on real code")]
    rows += [(r.code, r.name, r.family(), kinds.get(r.scope, "recompile" if r.recompiles else "graph break"),
              r.fix_safety or "-", found(r.code), measured(r.code)) for _, r in sorted(_codes_documented().items())]
    w = [max(len(row[i]) for row in rows) for i in range(6)]
    for row in rows:
        out.write("  ".join(f"{v:<{w[i]}}" for i, v in enumerate(row[:6])) + f"  {row[6]}\n")
    out.write(f"\nOn real code (the model zoo, bench/zoo/): recall = break sites of the kinds a rule predicts that its "
              f"findings cover; precision = findings Dynamo confirmed / findings on code it traced. Preview rules "
              f"(below {PREVIEW_BELOW} on two false alarms or more) run only with --preview.\n")
    return EXIT_CLEAN


def cmd_rule(code: Optional[str], every: bool, out) -> int:
    if every or code is None:
        if code is not None or not every:
            sys.stderr.write("dynlint: error: give a rule code, or --all\n")
            return EXIT_USAGE
        out.write("\n".join(rule.text() for _, rule in sorted(_codes_documented().items())))
        return EXIT_CLEAN
    rule = _codes_documented().get(code.upper())
    if rule is None:
        sys.stderr.write(f"dynlint: error: unknown rule code {code!r} (see `dynlint rules`)\n")
        return EXIT_USAGE
    out.write(rule.text())
    return EXIT_CLEAN


def cmd_clean(where: Path, out) -> int:
    """Remove the cache folders dynlint made under `where` (as `ruff clean` does): a `.dynlint_cache` folder
    that holds dynlint's own `.gitignore`; never a link, never anything else."""
    from dynlint.linter.cache import CACHE_DIR, CACHE_IGNORE

    for folder, dirs, _ in os.walk(where):
        if CACHE_DIR in dirs:
            cache = Path(folder) / CACHE_DIR
            dirs.remove(CACHE_DIR)
            try:
                ours = not cache.is_symlink() and (cache / ".gitignore").read_bytes() == CACHE_IGNORE
            except OSError:
                ours = False
            if ours:
                out.write(f"Removing cache at: {printable(str(cache.relative_to(where)))}\n")
                shutil.rmtree(cache, ignore_errors=True)
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
    return EXIT_CLEAN


class _Stop(Exception):
    """End `dynlint check` with this exit status (the message is already on stderr)."""

    def __init__(self, status: int):
        self.status = status


def cmd_check(args) -> int:
    if args.watch:
        return _watch(args)
    try:
        config = _configuration(args)
        if args.show_settings:
            return _show_settings(config)
        if args.show_files:
            return _show_files(args.paths, config)
        # a repository's `jobs = 100000` must not start that many processes: the configuration is capped at the cores
        jobs = args.jobs or min(config.jobs or cores(), cores())
        if args.fix_only and args.verify:
            sys.stderr.write("dynlint: error: --fix-only reports nothing to verify: use --fix --verify\n")
            return EXIT_USAGE
        args.fix = args.fix or args.fix_only
        if args.diff:
            return _report_diff(_fix(args, config, jobs), args.quiet)
        if args.diff_from:
            return _release_change(args, config, jobs)
        if args.add_noqa:
            return _add_noqa(args, config, jobs)
        if args.verify:
            _warn_other_release(config)
        result, fix_line, fixes = _static_pass(args, config, jobs)
        for notice in result.notices:
            sys.stderr.write(f"dynlint: warning: {printable(notice)}\n")
        if args.fix_only:                   # the fixes' summary alone; what is left is not reported
            sys.stdout.write(fix_line)
            return EXIT_FINDINGS if args.exit_non_zero_on_fix and getattr(args, "fixed", False) else EXIT_CLEAN
        findings, verify_doc, verify_text = result.findings, None, ""
        if args.verify:
            findings, verify_doc, verify_text = _runtime_pass(args, config, result, fixes)
    except _Stop as stop:
        return stop.status
    buffers = None
    if getattr(args, "stdin_text", None) is not None:
        buffers = {result.files[0]: args.stdin_text.decode("utf-8", "replace")} if result.files else None
    run = report_formats.Report(findings, result.files, result.errors, config, verify_doc, verify_text, buffers)
    if not _write_reports(args, config, run, fix_line):
        return EXIT_USAGE
    if result.internal_errors:
        return _internal_errors(result)
    if args.exit_non_zero_on_fix and getattr(args, "fixed", False):
        return EXIT_FINDINGS
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def _configuration(args):
    """[tool.dynlint] of the project, with the command line's flags on top."""
    if not args.paths:          # no path: the current folder, or stdin when named by --stdin-filename (as ruff)
        args.paths = ["-"] if args.stdin_filename else ["."]
    if "-" in args.paths:
        if args.paths != ["-"] or not args.stdin_filename:
            sys.stderr.write("dynlint: error: - reads one file from stdin: give it alone, with --stdin-filename PATH\n")
            raise _Stop(EXIT_USAGE)
        if args.fix or args.diff or args.verify:
            sys.stderr.write("dynlint: error: --fix, --diff and --verify work on files, not on stdin\n")
            raise _Stop(EXIT_USAGE)
        args.stdin_text = sys.stdin.buffer.read()
        args.paths = [args.stdin_filename]
        if not os.path.isdir(os.path.dirname(os.path.abspath(args.stdin_filename))):
            sys.stderr.write(f"dynlint: error: no such folder for --stdin-filename: {args.stdin_filename}\n")
            raise _Stop(EXIT_USAGE)
    elif args.stdin_filename:
        sys.stderr.write("dynlint: error: --stdin-filename goes with - (the text on stdin)\n")
        raise _Stop(EXIT_USAGE)
    for p in args.paths if getattr(args, "stdin_text", None) is None else ():
        if not os.path.lexists(p):
            hint = " (an option after `--` is read as a path; for the pre-commit hook, set options in " \
                "[tool.dynlint] of pyproject.toml)" if p.startswith("-") else ""
            sys.stderr.write(f"dynlint: error: no such file or directory: {p}{hint}\n")
            raise _Stop(EXIT_USAGE)
    known = _api().known_codes()
    flags = {option.key: getattr(args, _dest(option)) for option in OPTIONS if option.flags}
    inline = [t for t in (inline_setting(c) for c in args.config) if t is not None]
    files = [c for c in args.config if inline_setting(c) is None]
    if len(files) > 1 or (args.isolated and files):
        sys.stderr.write("dynlint: error: --config names one configuration file"
                         f"{' (--isolated reads none)' if args.isolated else ''}; settings go as 'KEY = VALUE'\n")
        raise _Stop(EXIT_USAGE)
    config = load_config(args.paths, known, files[0] if files else None, isolated=args.isolated)
    for table in inline:
        config = apply_inline(config, table, known)
    return apply_flags(config,
                       {key: value for key, value in flags.items() if value is not None}, known)


def _show_settings(config) -> int:
    """Where the configuration came from and what it resolved to (the command line's flags applied), each
    value with its origin: the command line, the configuration file, or dynlint's default."""
    from dynlint.rules.torch_release import resolved

    config = resolved(config)
    sys.stdout.write(f"Settings path: {config.source or '(none: defaults)'}\nProject root: {config.root}\n")
    for key, value, origin in settings(config):
        sys.stdout.write(f"{key} = {value!r}  # {origin}\n")
    return EXIT_CLEAN


def _show_files(paths, config) -> int:
    """`--show-files`: the files a check would read (named from the working folder), then what the walk left
    out and why (exclude patterns, folder names skipped by default, .gitignore, files it cannot read)."""
    notices: List[str] = []
    left_out: List[Tuple[str, str]] = []
    for _path, rel in discover(paths, config, notices, left_out):
        sys.stdout.write(printable(shown(config.root, rel)) + "\n")
    for rel, why in left_out:
        sys.stdout.write(f"left out: {printable(shown(config.root, rel.rstrip('/')))}{'/' if rel.endswith('/') else ''}"
                         f": {why}\n")
    for notice in notices:
        sys.stdout.write(f"left out: {printable(notice.removeprefix('skipped '))}\n")
    return EXIT_CLEAN


def _fix(args, config, jobs):
    with progress.stage_bars(args.quiet) as bars:
        return _api().fix(args.paths, config, unsafe=args.unsafe_fixes, debug=args.debug, jobs=jobs,
                       cache=not args.no_cache, progress=bars)


def _static_pass(args, config, jobs):
    """The check, or with --fix the fixes and the check of what is left. Returns (result, the fix summary line,
    and with --fix --verify (FixVerification, the verify report on the code as left))."""
    if getattr(args, "stdin_text", None) is not None:
        return _api().check_buffer(args.stdin_text, args.paths[0], config, debug=args.debug, jobs=jobs,
                                cache=not args.no_cache), "", None
    if not args.fix:
        with progress.stage_bars(args.quiet) as bars:
            return _api().check(args.paths, config, debug=args.debug, jobs=jobs, cache=not args.no_cache,
                             progress=bars), "", None
    outcome = _fix(args, config, jobs)
    verification = fixes = None
    if args.verify and outcome.after:
        verification, report, result = _verify_fixes(args, config, jobs, outcome)
        fixes = (verification, report)
    else:
        failed = outcome.write()
        for problem in outcome.problems + failed:
            sys.stderr.write(f"dynlint: {problem}\n")
        result = outcome.result
    restored = set(verification.restored) if verification else set()
    args.fixed = any(rel not in restored for rel in outcome.after)
    summary = _fixed_summary(outcome, verification, result)
    if args.show_fixes:
        summary = _fixes_list(outcome, restored) + summary
    return result, summary, fixes


def _runtime_pass(args, config, result, fixes):
    """--verify: the examples compiled for real; (findings with their status and DYN9xx, JSON, text)."""
    from dynlint.runtime_check import VerifyUnavailable, run_verify  # --verify only: off the static path

    if fixes is not None:
        verification, report = fixes
    else:
        verification = None
        try:
            with progress.example_bar(args.quiet) as bar:
                report = run_verify(config.root, list(config.examples), device=config.device,
                                    timeout=config.timeout, static_findings=result.findings, progress=bar,
                                    modes=args.modes, time_budget_s=args.timing_budget,
                                    timing_processes=config.timing_processes, cluster=config.cluster)
        except VerifyUnavailable as e:
            sys.stderr.write(f"dynlint: error: {printable(str(e))}\n")
            raise _Stop(EXIT_USAGE) from None
    if not report.examples and fixes is None:       # (with --fix, the fixes are then reported as unverified)
        globs = ", ".join(config.examples)
        sys.stderr.write(f"dynlint: error: --verify found no example to run: no function decorated with "
                         f"@dynlint.example in the files matching {globs} under {config.root} (set "
                         f"[tool.dynlint.verify] examples = [...] for other files; the README's 'Writing examples' "
                         f"shows one)\n")
        raise _Stop(EXIT_USAGE)
    findings = [f for f in report.findings if config.enabled(f.code, f.path) or f.code in RUNTIME_CODES]
    verify_doc, verify_text = report.to_dict(), report.render_text()
    if verification is not None:
        verify_doc["fixes"] = verification.to_dict()
        verify_text = verification.render_text() + "\n" + verify_text
    if args.missed_predictions:
        from dynlint.runtime_check import write_missed_predictions
        write_missed_predictions(report, args.missed_predictions)
    return findings, verify_doc, verify_text


def _write_reports(args, config, run, fix_line: str) -> bool:
    """The chosen format to stdout or -o, the HTML page to --report; False (said on stderr) if one cannot be."""
    stream = sys.stdout if not args.output else None
    options = report_formats.Options(quiet=args.quiet, statistics=args.statistics,
                                     colour=bool(stream) and text_format.use_colour(stream))
    text = report_formats.render(args.format, run, options)
    if fix_line and args.format == "text":
        text += fix_line
    elif fix_line:
        sys.stderr.write(fix_line)
    try:
        if args.output:
            write_output(args.output, text.encode("utf-8"), config.root)
        else:
            sys.stdout.write(text)
        if args.report:
            write_output(args.report, report_formats.render("html", run).encode("utf-8"), config.root)
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            raise
        sys.stderr.write(f"dynlint: error: cannot write the report: {e}\n")
        return False
    return True


def _verify_fixes(args, config, jobs, outcome):
    """`--fix --verify` (runtime_check/fixcheck.py): returns (FixVerification, the verify report on the code as
    left, the static result on it)."""
    from dynlint.runtime_check import VerifyUnavailable, run_verify  # --verify only: off the static path
    from dynlint.runtime_check.fixcheck import verify_fixes

    def verify(static_findings, **outputs):
        with progress.example_bar(args.quiet) as bar:
            return run_verify(config.root, list(config.examples), device=config.device, timeout=config.timeout,
                              timing_processes=config.timing_processes, static_findings=static_findings,
                              progress=bar, cluster=config.cluster, **outputs)

    def recheck():
        return _api().check(args.paths, config, debug=args.debug, jobs=jobs, cache=False)

    try:
        verification, report, result, problems = verify_fixes(outcome, verify, recheck, config.root)
    except VerifyUnavailable as e:
        sys.stderr.write(f"dynlint: error: {printable(str(e))}\n")
        raise _Stop(EXIT_USAGE) from None
    for problem in problems:
        sys.stderr.write(f"dynlint: {problem}\n")
    return verification, report, result


def _internal_errors(result) -> int:
    """Exit 2 for a bug of dynlint's, saying so on stderr: the DYN001 lines may be lost among many findings, in a
    JSON file, or cut by the caller's pager, and exit 2 must always say why."""
    errors = result.internal_errors
    files = sorted({f.path for f in errors})
    named = ", ".join(printable(p) for p in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    sys.stderr.write(f"dynlint: error: {plural(len(errors), 'internal error')} (DYN001, a bug of dynlint's) in "
                     f"{named}; the other findings are reported. Exit status 2. --debug shows the tracebacks: please "
                     f"report them at {HOMEPAGE}/issues\n")
    return EXIT_USAGE


def _report_diff(outcome, quiet: bool) -> int:
    """`--diff`: the fixes as a unified diff on stdout, a summary on stderr; exit 1 when there are changes."""
    sys.stdout.write(outcome.diff())
    for notice in outcome.result.notices:
        sys.stderr.write(f"dynlint: warning: {printable(notice)}\n")
    for problem in outcome.problems:
        sys.stderr.write(f"dynlint: {problem}\n")
    if not quiet:
        if outcome.after:
            sys.stderr.write(f"Would apply {plural(outcome.fixed, 'fix')} to {plural(len(outcome.after), 'file')}."
                             f"{_unsafe_hint(outcome)}\n")
        else:
            sys.stderr.write(f"No fixes available.{_unsafe_hint(outcome)}\n")
    if outcome.result.internal_errors:
        return _internal_errors(outcome.result)
    return EXIT_FINDINGS if outcome.after else EXIT_CLEAN


def _watch(args) -> int:
    """`--watch`: the check, then again each time a file it reads (or the configuration) changes, appears or
    goes; the cache makes a re-check cost what the edit touches. Ends with Ctrl-C (exit 130)."""
    if args.fix or args.diff or args.verify or args.add_noqa or args.diff_from or args.stdin_filename:
        sys.stderr.write("dynlint: error: --watch re-runs the check: not with --fix, --diff, --verify, --add-noqa, "
                         "--diff-from or stdin\n")
        return EXIT_USAGE
    import copy
    import time

    while True:
        try:
            config = _configuration(copy.copy(args))
        except (ConfigError, _Stop):
            config = None
        before = _snapshot(args.paths or ["."], config)     # before the check: an edit made during it counts
        once = copy.copy(args)
        once.watch = False
        status = cmd_check(once)
        if status == EXIT_USAGE:
            return status
        sys.stdout.write(f"[{time.strftime('%H:%M:%S')}] Watching for file changes.\n")
        sys.stdout.flush()
        while _snapshot(args.paths or ["."], config) == before:
            time.sleep(0.3)
        sys.stdout.write(f"[{time.strftime('%H:%M:%S')}] File change detected...\n")


def _snapshot(paths, config) -> dict:
    """(size, mtime) of every file the check reads and of its configuration file, by path."""
    out = {}
    if config is None:
        return {}
    for path in [str(config.source)] * bool(config.source) + [p for p, _ in discover(paths, config, [])]:
        try:
            st = os.stat(path)
            out[str(path)] = (st.st_size, st.st_mtime_ns)
        except OSError:
            pass
    return out


def _add_noqa(args, config, jobs) -> int:
    """`--add-noqa`: a `# noqa: CODES` on every line that has findings, so that a project adopting dynlint starts
    clean and sees only new findings (ruff's --add-noqa). Notebooks and lines that cannot take a comment are said."""
    from dynlint.linter.writes import write_atomic
    from dynlint.linter.fixer import Source
    from dynlint.linter.suppressions import add_noqa

    if args.fix or args.diff or args.verify or getattr(args, "stdin_text", None) is not None:
        sys.stderr.write("dynlint: error: --add-noqa edits files: not with --fix, --diff, --verify or stdin\n")
        return EXIT_USAGE
    with progress.stage_bars(args.quiet) as bars:
        result = _api().check(args.paths, config, jobs=jobs, cache=not args.no_cache, progress=bars)
    if result.internal_errors:
        return _internal_errors(result)
    wanted: dict = {}
    left = []
    for f in result.findings:
        if f.code in ENGINE_CODES:
            continue
        if f.cell:
            left.append(f"{f.path}: a notebook (cell {f.cell}, line {f.line})")
            continue
        wanted.setdefault(f.path, {}).setdefault(f.line, set()).add(f.code)
    total = 0
    for rel, lines in sorted(wanted.items()):
        try:
            source = Source.read(config.root / rel)
            text, added, skipped = add_noqa(source.text, lines)
            if added:
                write_atomic(config.root / rel, source.encode(text), config.root)
        except (OSError, UnicodeError, ValueError) as e:
            left.append(f"{rel}: cannot write it: {e}")
            continue
        total += added
        left += [f"{rel}:{n}: the line cannot take a comment (inside a string or continued)" for n in skipped]
    for why in left:
        sys.stderr.write(f"dynlint: warning: no noqa added: {printable(shown(config.root, why))}\n")
    sys.stdout.write(f"Added {plural(total, 'noqa directive')}.\n")
    return EXIT_CLEAN


def _warn_other_release(config) -> None:
    """--verify compiles on the installed torch: say so when the findings are predicted for another release."""
    from dynlint.rules import torch_release

    wanted, installed = torch_release.resolved(config).torch_version, torch_release.installed()
    if installed and wanted not in (torch_release.nearest(torch_release.release_of(installed)), torch_release.ALL):
        sys.stderr.write(f"dynlint: warning: --verify compiles with the installed torch {installed}; the findings are "
                         f"predicted for torch {wanted} (--torch-version)\n")


def _release_change(args, config, jobs) -> int:
    """`--diff-from X.Y`: the findings that go and come between two torch releases, as text or JSON."""
    if args.verify or args.fix or getattr(args, "stdin_text", None) is not None:
        sys.stderr.write("dynlint: error: --diff-from compares the static findings of files: not with --verify, "
                         "--fix or stdin\n")
        return EXIT_USAGE
    before = args.diff_from
    with progress.stage_bars(args.quiet) as bars:
        result, gone, new = _api().release_change(args.paths, config, before, jobs=jobs, cache=not args.no_cache,
                                                  progress=bars)
    after = _api().torch_release.resolved(config).torch_version
    for notice in result.notices:
        sys.stderr.write(f"dynlint: warning: {printable(notice)}\n")
    if args.format == "json":
        doc = {"from": before, "to": after, "gone": [f.to_dict() for f in gone], "new": [f.to_dict() for f in new]}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        for word, findings in (("gone", gone), ("new", new)):
            for f in findings:
                sys.stdout.write(f"{word}: {printable(shown(config.root, f.path))}:{f.line}:{f.column + 1}: {f.code} "
                                 f"{printable(f.message)}\n")
        sys.stdout.write(f"From torch {before} to torch {after}: {plural(len(gone), 'finding')} gone, "
                         f"{len(new)} new ({plural(len(result.findings), 'finding')} on torch {after}).\n")
    if result.internal_errors:
        return _internal_errors(result)
    return EXIT_FINDINGS if new and not args.exit_zero else EXIT_CLEAN


def _unsafe_hint(outcome) -> str:
    n = outcome.unsafe_available
    return f" {plural(n, 'more fix')} with --unsafe-fixes (see them with --diff --unsafe-fixes)." if n else ""


def _fixes_list(outcome, restored: set) -> str:
    """`--show-fixes`: ruff's enumeration of what --fix applied, per file (as named from the working folder)
    and rule: `- src/m.py:` then `    2 × DYN301 (print-in-compiled-code)`."""
    names = {r.code: r.name for r in all_rules()}
    lines = []
    for rel in sorted(outcome.applied_codes):
        if rel in restored or rel not in outcome.after:
            continue
        lines.append(f"- {printable(shown(outcome.root, rel))}:")
        lines += [f"    {n} × {code} ({names.get(code, '?')})" for code, n in sorted(outcome.applied_codes[rel].items())]
    return "".join(line + "\n" for line in lines)


def _fixed_summary(outcome, verification=None, result=None) -> str:
    """`Applied 2 fixes to 1 file: 3 findings fewer, 1 remaining.` (one fix can clear several findings: the
    logging guard that takes its `if` along also clears the branch's). With --verify, fixes rolled back count
    neither as applied nor in the findings fewer; `result` is then the check of the code as left."""
    left = len((result or outcome.result).findings)
    restored = set(verification.restored) if verification else set()
    if restored:
        rolled = sum(outcome.applied.get(rel, 0) for rel in restored)
        kept = [rel for rel in outcome.after if rel not in restored]
        return (f"Applied {plural(outcome.fixed - rolled, 'fix')} to {plural(len(kept), 'file')}: "
                f"{plural(max(outcome.found - left, 0), 'finding')} fewer, {left} remaining. Rolled back "
                f"{plural(rolled, 'fix')} in {', '.join(sorted(restored))}: --verify found outputs changed or "
                f"breaks left.{_unsafe_hint(outcome)}\n")
    if not outcome.after:
        return f"No fixes applied ({left} remaining).{_unsafe_hint(outcome)}\n"
    return (f"Applied {plural(outcome.fixed, 'fix')} to {plural(len(outcome.after), 'file')}: "
            f"{plural(max(outcome.found - left, 0), 'finding')} fewer, {left} remaining.{_unsafe_hint(outcome)}\n")


def paths_never_flags(argv: Sequence[str]) -> List[str]:
    """`argv` with every word that names an existing file or folder moved behind `--`, so that it is a path.
    pre-commit passes staged file names after the hook's options: a committed file called `--verify` or
    `--report=model.py` must be checked, never obeyed (docs/reliability.md)."""
    argv = list(argv)
    end = argv.index("--") if "--" in argv else len(argv)
    named = [w for w in argv[:end] if w.startswith("-") and w != "-" and os.path.lexists(w)]
    if not named:
        return argv
    kept = [w for w in argv[:end] if w not in named]
    return kept + ["--"] + named + argv[end + 1:]


def main(argv: Optional[Sequence[str]] = None) -> int:
    # A run allocates millions of short-lived objects (syntax trees, indexes); at the default threshold (700)
    # the cyclic collector re-scans the growing heap so often that it takes a fifth of a cold run and half of
    # a re-run (bench/speed.py). The process is short-lived; workers inherit the setting.
    gc.set_threshold(100_000, 50, 100)
    parser = build_parser()
    args = parser.parse_args(paths_never_flags(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "rules":
            return cmd_rules(sys.stdout)
        if args.command == "rule":
            return cmd_rule(args.code, args.all, sys.stdout)
        if args.command == "clean":
            return cmd_clean(Path.cwd(), sys.stdout)
        if args.command == "check":
            return cmd_check(args)
        if args.command == "server":
            return cmd_server()
        parser.print_help()
        return EXIT_USAGE
    except ConfigError as e:
        sys.stderr.write(f"dynlint: error: {printable(str(e))}\n")
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
