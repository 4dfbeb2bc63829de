"""`--format sarif`: a SARIF 2.1.0 log that the official schema accepts and GitHub code scanning can use.
Every log these tests produce is validated against tests/data/sarif-schema-2.1.0.json."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from dynlint import __version__, api
from dynlint.linter.codes import ENGINE_CODES
from dynlint.linter.finding import Finding
from dynlint.report import Options, Report, sarif
from dynlint.rules import all_rules

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS / "fixtures" / "integrations" / "project"
# The fixture's findings that these tests rely on: (path, line, 1-based column, code).
KNOWN = {("model.py", 9, 12, "DYN101"), ("model.py", 10, 13, "DYN301"), ("utils.py", 6, 13, "DYN201"),
         ("pkg/layers.py", 6, 29, "DYN101"), ("pkg/layers.py", 8, 12, "DYN401")}
SCHEMA = json.loads((TESTS / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.validators.validator_for(SCHEMA)     # the schema says draft-04
VALIDATOR.check_schema(SCHEMA)


def sarif_log(findings, result, config, verify=None) -> str:
    """The SARIF format's log for these findings of a run."""
    return sarif.render_report(Report(findings, result.files, result.errors, config, verify), Options())


def valid(doc: dict) -> dict:
    errors = sorted(VALIDATOR(SCHEMA, format_checker=VALIDATOR.FORMAT_CHECKER).iter_errors(doc), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    return doc


def make_repo(tmp_path, subdir=""):
    """A git repository holding a copy of the fixture project (in `subdir`, if given); returns the project."""
    repo = tmp_path / "repo"
    project = repo / subdir if subdir else repo
    shutil.copytree(PROJECT, project)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return project


def sarif_of(cli, project, *args):
    out = project / "out.sarif"
    r = cli("check", "--format", "sarif", "--output", out, *args, cwd=project)
    assert r.returncode in (0, 1), r.stderr
    return valid(json.loads(out.read_text(encoding="utf-8")))


def json_findings(cli, project, *args):
    r = cli("check", "--format", "json", *args, cwd=project)
    return json.loads(r.stdout)["findings"]


def test_log_has_what_code_scanning_needs(cli, tmp_path):
    project = make_repo(tmp_path)
    doc = sarif_of(cli, project)
    assert doc["version"] == "2.1.0" and doc["$schema"] == sarif.SCHEMA_URI
    [run] = doc["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("dynlint", __version__)
    assert driver["informationUri"] == "https://github.com/dynlint/dynlint"
    assert run["automationDetails"] == {"id": "dynlint/"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    assert run["invocations"] == [{"executionSuccessful": True}]

    # rules: those that ran (preview rules only with --preview) and dynlint's own codes, rendered from their classes
    from dynlint.rules import is_preview
    rules = [r for r in all_rules() if not is_preview(r.code)] + list(ENGINE_CODES.values())
    assert len(rules) < len(all_rules()) + len(ENGINE_CODES)          # (DYN502 is a preview rule)
    assert [d["id"] for d in driver["rules"]] == [r.code for r in rules]
    for d, rule in zip(driver["rules"], rules):
        assert d["name"] == rule.name
        summary = " ".join(rule.summary().split())       # whitespace collapsed, as GitHub shows it
        assert d["shortDescription"]["text"] == summary
        assert d["fullDescription"]["text"].startswith(summary) and len(d["fullDescription"]["text"]) <= 1024
        assert d["help"] == {"text": rule.text(), "markdown": rule.markdown()}
        assert d["helpUri"] == f"https://github.com/dynlint/dynlint/blob/main/docs/rules.md#{rule.doc_anchor()}"
        assert d["properties"]["tags"] == list(rule.all_tags())[:10]
        assert ("recompile" if rule.recompiles else "graph-break") in d["properties"]["tags"]
        assert d["properties"]["precision"] == rule.precision
        assert d["properties"]["problem.severity"] == {"note": "recommendation"}.get(rule.severity, rule.severity)
        assert d["defaultConfiguration"]["level"] == rule.severity

    # results: the CLI's findings, with 1-based columns and a fingerprint
    expected = {(f["path"], f["line"], f["column"] + 1, f["end_line"], f["end_column"] + 1, f["code"], f["severity"])
                for f in json_findings(cli, project)}
    got = set()
    for res in run["results"]:
        [loc] = res["locations"]
        art, reg = loc["physicalLocation"]["artifactLocation"], loc["physicalLocation"]["region"]
        assert art["uriBaseId"] == "%SRCROOT%"
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["message"]["text"]
        text = (project / art["uri"]).read_bytes().decode("utf-8")
        assert res["partialFingerprints"]["primaryLocationLineHash"] == sarif.line_hashes(text)[reg["startLine"]]
        got.add((art["uri"], reg["startLine"], reg["startColumn"], reg["endLine"], reg["endColumn"], res["ruleId"],
                 res["level"]))
    assert got == expected and len(run["results"]) == len(expected)
    assert KNOWN <= {(uri, line, col, code) for uri, line, col, _, _, code, _ in got}
    # the helper in utils.py is reported with the call chain that makes it compiled code
    [helper] = [r for r in run["results"] if r["ruleId"] == "DYN201"]
    assert helper["message"]["text"].endswith("(reached through Net.forward -> normalise)")
    # columns count characters: ("pkg/layers.py", 6, 29) comes after "größe" in KNOWN


def test_rules_are_the_enabled_ones(cli, tmp_path):
    project = make_repo(tmp_path)
    run = sarif_of(cli, project, "--select", "DYN1,DYN4", "--ignore", "DYN103")["runs"][0]
    enabled = [r.code for r in all_rules() if r.code.startswith(("DYN1", "DYN4")) and r.code != "DYN103"]
    assert [d["id"] for d in run["tool"]["driver"]["rules"]] == enabled + list(ENGINE_CODES) and "DYN401" in enabled
    codes = [r["ruleId"] for r in run["results"]]
    assert set(codes) <= set(enabled) and codes.count("DYN101") == 2 and "DYN401" in codes
    assert all(run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])


def test_uris_are_relative_to_the_repository_root(cli, tmp_path):
    project = make_repo(tmp_path, subdir="services/trainer")
    run = sarif_of(cli, project)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == (tmp_path / "repo").resolve().as_uri() + "/"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"services/trainer/model.py", "services/trainer/utils.py", "services/trainer/pkg/layers.py"}
    assert all("primaryLocationLineHash" in r["partialFingerprints"] for r in run["results"])


def test_uris_are_percent_encoded(cli, tmp_path):
    project = make_repo(tmp_path)
    (project / "pkg" / "layers.py").rename(project / "pkg" / "my layers#1.py")
    run = sarif_of(cli, project)["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert "pkg/my%20layers%231.py" in uris


# Expected values from github/codeql-action's own tests (src/fingerprints.test.ts).
UPSTREAM_VECTORS = [
    ("", ["c129715d7a2bc9a3:1"]),
    (" a\nb\n  \t\tc\n d", ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]),
    (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
     ["8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1", "b86d3392aea1be30:1",
      "e6ceba753e1a442:1"]),
    *[(text, ["e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1",
              "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1"])
      for text in (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
                   " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
                   " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
                   " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n")],
    ("Lorem ipsum dolor sit amet.\n" * 10,
     ["a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3", "a7f2ff13bc495cf2:4", "a7f2ff13bc495cf2:5",
      "a7f2ff13bc495cf2:6", "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1", "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1",
      "c129715d7a2bc9a3:1"]),
    ("x = 2\nx = 1\nprint(x)\nx = 3\nprint(x)\nx = 4\nprint(x)\n",
     ["e54938cc54b302f1:1", "bb609acbe9138d60:1", "1131fd5871777f34:1", "5c482a0f8b35ea28:1", "54517377da7028d2:1",
      "2c644846cb18d53e:1", "f1b89f20de0d133:1", "c129715d7a2bc9a3:1"]),
]


@pytest.mark.parametrize("text,hashes", UPSTREAM_VECTORS, ids=range(len(UPSTREAM_VECTORS)))
def test_line_hash_matches_codeql_action(text, hashes):
    assert sarif.line_hashes(text) == {i + 1: h for i, h in enumerate(hashes)}


def test_fingerprints_survive_line_shifts(cli, tmp_path):
    project = make_repo(tmp_path)

    def alerts():
        run = sarif_of(cli, project)["runs"][0]
        return {(r["ruleId"], r["message"]["text"]): (r["locations"][0]["physicalLocation"]["region"]["startLine"],
                                                      r["partialFingerprints"]["primaryLocationLineHash"])
                for r in run["results"]}

    before = alerts()
    model = project / "model.py"
    model.write_text(model.read_text().replace("import torch\n", "import torch\n\nimport os  # moved\n\n", 1))
    after = alerts()
    assert before.keys() == after.keys()
    for key, (line, fingerprint) in before.items():
        shift = 3 if "y.sum()" in key[1] or "print" in key[1] else 0
        assert after[key] == (line + shift, fingerprint), key


def test_unparsable_files_are_tool_notifications(cli, tmp_path):
    project = make_repo(tmp_path)
    (project / "broken.py").write_text("def f(:\n    pass\n")
    run = sarif_of(cli, project)["runs"][0]
    assert "DYN000" not in {r["ruleId"] for r in run["results"]} and run["results"]
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is True
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and note["descriptor"] == {"id": "DYN000"}
    assert note["message"]["text"].startswith("broken.py: cannot parse file")
    loc = note["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "broken.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] == 1 and loc["region"]["startColumn"] >= 1


def test_results_are_truncated_at_githubs_limit(tmp_path, monkeypatch):
    project = make_repo(tmp_path)
    result = api.check([str(project)])
    config = api.load_config([str(project)], api.known_codes())
    n = len(result.findings)
    assert n >= 5
    monkeypatch.setattr(sarif, "MAX_RESULTS", n - 2)
    run = valid(json.loads(sarif_log(result.findings, result, config)))["runs"][0]
    assert len(run["results"]) == n - 2
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning"
    assert f"found {n} problems; only the first {n - 2}" in note["message"]["text"]


def test_verify_status_properties_and_runtime_codes(tmp_path):
    project = make_repo(tmp_path)
    result = api.check([str(project)])
    config = api.load_config([str(project)], api.known_codes())
    confirmed = result.findings[0].with_(status="confirmed", properties=(("speedup", 1.75),))
    observed = Finding(path="model.py", line=7, column=4, code="DYN901", name="observed-graph-break",
                       message="graph break observed at runtime", severity="warning", status="confirmed")
    doc = valid(json.loads(sarif_log([confirmed, observed], result, config, {"examples": 1})))
    run = doc["runs"][0]
    assert run["properties"] == {"verify": {"examples": 1}}
    first, second = run["results"]
    assert first["properties"] == {"speedup": 1.75, "status": "confirmed"}
    rules = run["tool"]["driver"]["rules"]
    assert rules[second["ruleIndex"]]["id"] == "DYN901"
    assert rules[second["ruleIndex"]]["shortDescription"]["text"] == ENGINE_CODES["DYN901"].summary()
    assert "DYN901" in rules[second["ruleIndex"]]["help"]["text"]            # documented like a rule


def test_serialiser_uses_schema_names_and_drops_defaults():
    region = sarif.region(3, 0, 3, 5)
    assert sarif.to_json(region) == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 6}
    result = sarif.om.Result(message=sarif.om.Message(text="m"), rule_id="DYN101", rule_index=0,
                             properties=sarif.PropertyBag(tags=["a"], others={"status": "confirmed"}))
    assert sarif.to_json(result) == {"message": {"text": "m"}, "level": "warning", "ruleId": "DYN101",
                                     "ruleIndex": 0, "properties": {"tags": ["a"], "status": "confirmed"}}
    # an unknown end covers one character
    assert sarif.to_json(sarif.region(2, 4)) == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 6}


def test_missing_sarif_om_is_a_usage_error(tmp_path):
    project = make_repo(tmp_path)
    code = ("import sys; sys.modules['sarif_om'] = None\n"
            "from dynlint.cli import main\n"
            "sys.exit(main(['check', '--format', 'sarif', '.']))")
    r = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert "pip install 'dynlint[sarif]'" in r.stderr


def test_documented_workflow_runs_and_uploads(tmp_path):
    workflow = yaml.safe_load((TESTS.parent / "docs" / "dynlint-code-scanning.yml").read_text(encoding="utf-8"))
    [job] = workflow["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    steps = {s.get("name", s.get("uses")): s for s in job["steps"]}
    upload = steps["Upload to code scanning"]
    assert re.fullmatch(r"github/codeql-action/upload-sarif@[0-9a-f]{40}", upload["uses"])    # pinned by commit
    assert all(re.fullmatch(r"[\w-]+/[\w/-]+@[0-9a-f]{40}", s["uses"]) for s in job["steps"] if "uses" in s)
    assert upload["with"]["sarif_file"] == "dynlint.sarif" and "always()" in upload["if"]
    assert upload["with"]["category"] and "pull_request" in upload["continue-on-error"]
    assert steps["Install dynlint"]["run"] == 'pip install "$DYNLINT"' and "dynlint[sarif]" in workflow["env"]["DYNLINT"]
    command = steps["Run dynlint"]["run"]
    assert re.fullmatch(r"dynlint check --format sarif --output dynlint\.sarif --exit-zero", command)

    # run the workflow's command as written: findings, yet exit 0 and a valid log for the upload
    project = make_repo(tmp_path)
    bin_dir = Path(sys.executable).parent
    r = subprocess.run(command, shell=True, cwd=project, capture_output=True, text=True, timeout=120,
                       env={"PATH": f"{bin_dir}:/usr/bin:/bin", "NO_COLOR": "1"})
    assert r.returncode == 0, r.stderr
    doc = valid(json.loads((project / "dynlint.sarif").read_text(encoding="utf-8")))
    assert KNOWN <= {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                      r["locations"][0]["physicalLocation"]["region"]["startLine"],
                      r["locations"][0]["physicalLocation"]["region"]["startColumn"], r["ruleId"])
                     for r in doc["runs"][0]["results"]}
