"""cross_check is a pure function of (static findings, runtime results): hand-made inputs, no torch."""
from dynlint.compiler.records import GraphBreak, GuardFailure, Recompile
from dynlint.linter.codes import PARSE_ERROR
from dynlint.linter.finding import Finding
from dynlint.runtime_check.crosscheck import cross_check, is_recompile_rule, missed_predictions
from dynlint.runtime_check.results import Agreement, ExampleResult

PRINT = "Failed to trace builtin operator"
BRANCH = "Data-dependent branching"


def brk(line, *gb_types, path="m.py", skipped=False):
    return GraphBreak(gb_types=gb_types, gb_ids=tuple(f"GB{i}" for i, _ in enumerate(gb_types)),
                      explanation="Dynamo says why\nsecond line", hints=("Dynamo's hint",), path=path, line=line,
                      function="f", reported_path=path, reported_line=line, frame_skipped=skipped, duplicate=False)


def recompile(guard, guard_line=0, span=(10, 20), path="m.py", function="g"):
    failure = GuardFailure("0/0", guard, "src" if guard_line else "", path if guard_line else "", guard_line)
    return Recompile(function=function, code_name=function, path=path, line=span[0], failures=(failure,), span=span)


def result(name="ex", breaks=(), recompiles=(), executed=(), outcome="ok", agreement=Agreement("match", 0.0)):
    return ExampleResult(name=name, path="dynlint_examples.py", line=7, factory=name, outcome=outcome,
                         function="f", function_path="m.py", function_line=3, graph_breaks=tuple(breaks),
                         recompiles=tuple(recompiles), executed=(("m.py", tuple(executed)),), agreement=agreement)


def finding(line, *gb_types, code="DYN101", end_line=0):
    return Finding(path="m.py", line=line, column=4, code=code, message="m", gb_types=gb_types, end_line=end_line)


def by_code(findings, code):
    return [f for f in findings if f.code == code]


def test_break_with_a_predicted_gb_type_confirms_and_is_not_reported_again():
    out = cross_check([finding(5, PRINT, BRANCH)], [result(breaks=[brk(5, PRINT)], executed=[5])])
    (f,) = by_code(out, "DYN101")
    assert f.status == "confirmed" and PRINT in dict(f.properties)["verify"]
    assert not by_code(out, "DYN901")


def test_break_of_another_type_on_the_line_is_not_a_confirmation_but_a_missed_prediction():
    out = cross_check([finding(5, BRANCH)], [result(breaks=[brk(5, PRINT)], executed=[5])])
    assert by_code(out, "DYN101")[0].status == "not observed"
    (missed,) = by_code(out, "DYN901")
    assert (missed.line, missed.gb_types, missed.status, missed.fix) == (5, (PRINT,), "confirmed", "Dynamo's hint")
    assert "Dynamo says why" in missed.message and "second line" not in missed.message


def test_chained_break_matches_any_of_its_gb_types_within_the_findings_lines():
    chained = brk(6, PRINT, "graph break in loop", skipped=True)
    out = cross_check([finding(4, "graph break in loop", end_line=7)], [result(breaks=[chained])])
    assert by_code(out, "DYN101")[0].status == "confirmed"


def test_findings_without_gb_types_and_untyped_breaks_need_the_exact_line():
    untyped = brk(8)                                   # torch < 2.7 logs no gb_type
    out = cross_check([finding(8, PRINT), finding(5), finding(6, end_line=9)],
                      [result(breaks=[untyped, brk(5, BRANCH)], executed=[5, 6, 8])])
    status = {f.line: f.status for f in by_code(out, "DYN101")}
    assert status == {8: "confirmed", 5: "confirmed", 6: "not observed"}


def test_not_observed_needs_an_example_that_went_all_the_way():
    findings = [finding(5, PRINT), finding(9, PRINT)]
    out = cross_check(findings, [result(executed=[5]), result(name="failed", executed=[9], outcome="error")])
    assert [f.status for f in by_code(out, "DYN101")] == ["not observed", "unverified"]


def test_recompile_rules_match_by_guard_line_or_first_line():
    def rule(code):
        return code.startswith("DYN5")

    guard_here = recompile("mode == 'a'", guard_line=12)
    tensor_guard = recompile("tensor 'x' size mismatch at index 0. expected 8, actual 16", span=(30, 40))
    findings = [finding(12, code="DYN501"), finding(30, code="DYN502"), finding(50, code="DYN503"),
                finding(12, PRINT)]                    # a break rule is not confirmed by a recompile
    out = cross_check(findings, [result(recompiles=[guard_here, tensor_guard], executed=[12, 30, 50])], rule)
    assert {f.code: f.status for f in out if f.code != "DYN902"} == {
        "DYN501": "confirmed", "DYN502": "confirmed", "DYN503": "not observed", "DYN101": "not observed"}
    assert "mode == 'a'" in dict(by_code(out, "DYN501")[0].properties)["verify"]
    assert not by_code(out, "DYN902")


def test_a_finding_at_another_line_of_the_recompiled_function_is_not_credited():
    """A size recompile (128, then 129: a decode loop) of `g` (lines 30-40), and a recompile finding at line 35
    of `g` about something else (a decorator's wrapper): the finding is not confirmed by it, and the event is
    what it is, the first shape change (expected) or, repeated, DYN902. A guard with a source line likewise
    credits only the finding on that line."""
    def rule(code):
        return code.startswith("DYN5")

    size = recompile("tensor 'x' size mismatch at index 0. expected 128, actual 129", span=(30, 40))
    other = finding(35, code="DYN513")
    out = cross_check([other], [result(recompiles=[size], executed=[30, 35])], rule)
    assert by_code(out, "DYN513")[0].status == "not observed" and not by_code(out, "DYN902")   # expected
    again = recompile("tensor 'x' size mismatch at index 0. expected 129, actual 130", span=(30, 40))
    out = cross_check([other], [result(recompiles=[size, again], executed=[30, 35])], rule)
    assert by_code(out, "DYN513")[0].status == "not observed" and len(by_code(out, "DYN902")) == 1
    value = recompile("step == 3", guard_line=33, span=(30, 40))
    out = cross_check([other, finding(33, code="DYN514")], [result(recompiles=[value], executed=[33, 35])], rule)
    assert {f.code: f.status for f in out if f.code != "DYN902"} == {"DYN513": "not observed",
                                                                     "DYN514": "confirmed"}


def test_a_finding_at_the_compiled_functions_first_line_matches_its_recompile():
    """A guard with no source line (dtype, grad mode) is logged at co_firstlineno, the first decorator: the
    finding spans the decorator to the `def`, before the function's own span."""
    grad = Recompile(function="g", code_name="g", path="m.py", line=9, span=(10, 20),
                     failures=(GuardFailure("0/0", "GLOBAL_STATE changed: grad_mode", "", "", 0),))
    out = cross_check([finding(9, code="DYN504", end_line=10), finding(30, code="DYN505")],
                      [result(recompiles=[grad], executed=[9, 10, 30])], lambda code: code.startswith("DYN5"))
    assert {f.code: f.status for f in out if f.code != "DYN902"} == {"DYN504": "confirmed",
                                                                     "DYN505": "not observed"}


def test_unpredicted_recompiles_are_grouped_per_guard_site():
    rcs = [recompile("mode == 'a'", guard_line=12), recompile("mode == 'bb'", guard_line=12),
           recompile("tensor 'x' size mismatch at index 0. expected 8, actual 16")]
    out = cross_check([], [result(recompiles=rcs)])
    by_line = {f.line: f for f in by_code(out, "DYN902")}
    assert set(by_line) == {12, 10}                    # the guard's line; the function's first line
    assert "(2 recompiles)" in by_line[12].message and "mode == 'a'" in by_line[12].message
    assert "`mode` was 'a', then 'bb'" in by_line[12].message          # what changed, in the user's words
    assert dict(by_line[12].properties)["reasons"] == ("mode == 'a'", "mode == 'bb'")
    assert by_line[10].name == "unpredicted-recompile" and "size mismatch" in by_line[10].message


def test_the_first_shape_change_of_each_example_is_expected_not_a_miss():
    """The README's batch 8, then 16, in three examples of one model: each example's worker recompiles once on
    the size, automatic dynamic shapes at work; that was three DYN902 'did not predict'. A second size
    recompile within one example is still reported."""
    size = "tensor 'x' size mismatch at index 0. expected 8, actual 16"
    three = [result(name=f"ex{i}", recompiles=[recompile(size)]) for i in range(3)]
    assert by_code(cross_check([], three), "DYN902") == []
    twice = result(name="twice", recompiles=[recompile(size), recompile(size.replace("16", "24"))])
    assert len(by_code(cross_check([], three + [twice]), "DYN902")) == 1


def test_a_recompile_that_follows_from_a_reported_break_says_so_and_points_at_its_fix():
    """`s = x.sum().item()` breaks (DYN201 reported); the resumed code guards the float it returned."""
    failure = GuardFailure("0/0", "___stack0 == 0.0", "return x * s", "m.py", 6)
    rc = Recompile(function="f", code_name="torch_dynamo_resume_in_f_at_5", path="m.py", line=5,
                   failures=(failure,))
    item = Finding(path="m.py", line=5, column=8, code="DYN201", message="m", fix="Keep it a tensor",
                   gb_types=(BRANCH,))
    (f,) = by_code(cross_check([item], [result(recompiles=[rc], executed=[5, 6])]), "DYN902")
    assert "after the graph break at line 5 that dynlint reported (DYN201)" in f.message
    assert "bug report" not in f.fix and "Keep it a tensor" in f.fix
    # without that finding it is a missed prediction, said as such
    (f,) = by_code(cross_check([], [result(recompiles=[rc])]), "DYN902")
    assert "did not predict" in f.message and "bug report" in f.fix


def test_break_outside_user_code_is_reported_at_the_compiled_function():
    library = brk(0, PRINT, path="")
    (missed,) = by_code(cross_check([], [result(breaks=[library])]), "DYN901")
    assert (missed.path, missed.line) == ("m.py", 3)


def test_same_break_from_several_examples_is_one_dyn901():
    out = cross_check([], [result("a", breaks=[brk(5, PRINT)]), result("b", breaks=[brk(5, PRINT), brk(5, PRINT)])])
    (missed,) = by_code(out, "DYN901")
    assert dict(missed.properties)["examples"] == ("a", "b")


def test_output_mismatch_is_an_error_at_the_example_definition():
    bad = result(agreement=Agreement("mismatch", 0.5, "call 0: out[1]", "values differ"))
    (f,) = by_code(cross_check([], [bad]), "DYN903")
    assert (f.path, f.line, f.severity, f.name) == ("dynlint_examples.py", 7, "error", "compiled-output-mismatch")
    assert "call 0: out[1]" in f.message and "0.5" in f.message


def test_linter_errors_pass_through_untouched_and_output_is_sorted():
    parse_error = Finding(path="a.py", line=1, column=0, code=PARSE_ERROR, message="cannot parse")
    out = cross_check([finding(9, PRINT), parse_error], [result(breaks=[brk(2, BRANCH)], executed=[9])])
    assert out[0] == parse_error and out[0].status == ""
    assert [f.sort_key for f in out] == sorted(f.sort_key for f in out)
    assert [f.code for f in missed_predictions(out)] == ["DYN901"]


def test_cross_check_is_pure():
    findings, results = [finding(5, PRINT)], [result(breaks=[brk(5, PRINT), brk(6, BRANCH)], executed=[5, 6])]
    first, second = cross_check(findings, results), cross_check(findings, results)
    assert first == second and findings == [finding(5, PRINT)] and findings[0].status == ""


def test_recompile_rules_come_from_the_registry_with_a_family_fallback(monkeypatch):
    import pytest

    pytest.importorskip("libcst")                      # the rules package is built on it
    from dynlint.linter import rule as base

    class PlantedRecompileRule:
        recompiles = True

    monkeypatch.setitem(base.REGISTRY, "DYN777", PlantedRecompileRule)
    assert is_recompile_rule("DYN777")
    assert is_recompile_rule("DYN598") and not is_recompile_rule("DYN198")   # unregistered: by family
