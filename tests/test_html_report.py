"""The HTML report (`--report FILE`): parsed back with the stdlib html.parser to check its structure, the
per-function table, the charts, the break and recompile cards, the rule-doc links, that it loads nothing from
the network, and that everything user-derived is escaped; then rendered for real in headless Chromium
(skipped when `chromium` is not installed)."""
import json
import shutil
import subprocess
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import write_tree
from conftest import load_bench
from dynlint import api
from dynlint.compiler.records import GraphBreak, GuardFailure, Recompile
from dynlint.linter.config import Config
from dynlint.linter.finding import FileError, Finding
from dynlint.linter.rule import FAMILIES, REGISTRY, RULES_DOC
from dynlint.report import Options, Report, html, json_format
from dynlint.runtime_check.crosscheck import cross_check
from dynlint.runtime_check.report import VerifyReport
from dynlint.runtime_check.results import Agreement, ExampleResult, ModeResult, TimingProcess

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "embed", "source", "track", "wbr"}


# ---- a small DOM over html.parser ---------------------------------------------------------------------------
class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def walk(self):
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.walk()

    def find_all(self, tag=None, cls=None, **attrs):
        return [n for n in self.walk() if (tag is None or n.tag == tag)
                and (cls is None or cls in n.attrs.get("class", "").split())
                and all(n.attrs.get(k) == v for k, v in attrs.items())]

    def find(self, tag=None, cls=None, **attrs):
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}>"
        return found[0]

    @property
    def text(self):
        if self.tag in ("script", "style"):
            return ""
        return "".join(c if isinstance(c, str) else c.text for c in self.children)


class Page(HTMLParser):
    """Parse a page into Nodes, recording any tag closed out of order (the page must nest properly)."""

    def __init__(self, source):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.current, self.misnested = self.root, []
        self.feed(source)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, attrs, self.current))

    def handle_endtag(self, tag):
        if tag != self.current.tag:
            self.misnested.append((tag, self.current.tag))
            return
        self.current = self.current.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(source: str) -> Node:
    page = Page(source)
    assert page.misnested == [] and page.current is page.root, "tags do not nest"
    return page.root


def doc_link(code):
    return REGISTRY[code].doc_url()


def assert_self_contained(dom):
    """Nothing loads from elsewhere: one inline script, no external src/href but the rule docs."""
    scripts = dom.find_all("script")
    assert len(scripts) == 1 and "src" not in scripts[0].attrs
    assert not dom.find_all("link") and not dom.find_all("img") and not dom.find_all("iframe")
    for node in dom.walk():
        for attr in ("src", "href", "xlink:href", "action", "srcset"):
            value = node.attrs.get(attr)
            if value is not None:
                assert value.startswith("#") or value.startswith(RULES_DOC), (node.tag, attr, value)
    style = dom.find("style").text or "".join(dom.find("style").children)
    assert "url(" not in style and "@import" not in style


# ---- a project, its static findings, and a verify run described by hand -------------------------------------
MODEL = textwrap.dedent("""\
    import torch


    @torch.compile
    def step(x, scale):
        if x.sum() > 0:
            x = x + 1
        return x * scale


    @torch.compile
    def norm(x):
        return x / x.norm()
""")


def _break(line, gb_type, hint):
    return GraphBreak(gb_types=(gb_type,), gb_ids=("GB0170",), explanation=f"Detected {gb_type.lower()}.",
                      hints=(hint,), path="model.py", line=line, function="step", reported_path="model.py",
                      reported_line=line, frame_skipped=False, duplicate=False)


def _examples():
    ok = dict(path="dynlint_examples.py", outcome="ok", phase="done", calls=1, torch_version="2.13.0")
    branch = _break(6, "Data-dependent branching", "Use `torch.cond` to express dynamic control flow.")
    recompile = Recompile(function="norm", code_name="norm", path="model.py", line=12, span=(12, 13),
                          failures=(GuardFailure("0/0", "tensor 'x' size mismatch at index 0. expected 8, actual 16",
                                                 "", "", 0),))
    return (
        ExampleResult(name="positive", line=5, factory="positive", function="step", function_path="model.py",
                      function_line=5, graph_breaks=(branch, branch), compile_s=2.5, eager_ms=1.2, compiled_ms=0.4,
                      agreement=Agreement("match", 1e-7), executed=(("model.py", (6, 7, 8)),), **ok),
        ExampleResult(name="batches", line=10, factory="batches", function="norm", function_path="model.py",
                      function_line=12, recompiles=(recompile,), compile_s=1.0, eager_ms=0.05, compiled_ms=0.1,
                      speedup_low=0.45, speedup_high=0.55, rounds=12, eager_peak_mem_bytes=3 * 2 ** 20,
                      compiled_peak_mem_bytes=2 ** 20, compiled_device_ms=0.01, one_call_eager_ms=0.06,
                      one_call_compiled_ms=0.2, one_call_low=0.28, one_call_high=0.33, grad_off=True,
                      device="cuda (NVIDIA H200)",
                      modes=(ModeResult("reduce-overhead", compile_s=1.5, compiled_ms=0.05, eager_ms=0.05, speedup=1.0,
                                        speedup_low=0.97, speedup_high=1.04, agreement="match"),),
                      agreement=Agreement("match", 0.0), executed=(("model.py", (13,)),), **ok),
        ExampleResult(name="hangs", path="dynlint_examples.py", line=15, factory="hangs", outcome="timeout",
                      phase="compile", message="timed out after 5.0 s during phase 'compile'"),
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return write_tree(tmp_path_factory.mktemp("report"), {"pyproject.toml": "[tool.dynlint]\n", "model.py": MODEL})


def page(findings, files, errors, root, verify=None) -> str:
    """The HTML format's page for a run of the project at `root`."""
    return html.render_report(Report(findings, files, errors, Config(root=Path(root)), verify), Options())


@pytest.fixture(scope="module")
def verified_page(project):
    """(document, page source) for a run with --verify."""
    static = api.check([str(project)])
    examples = _examples()
    findings = cross_check(static.findings, examples)
    verify = VerifyReport(str(project), "cpu", examples, tuple(findings), wall_s=12.0).to_dict()
    document = json_format.to_document(findings, static.files, static.errors, verify)
    return document, page(findings, static.files, static.errors, project, verify)


@pytest.fixture(scope="module")
def verified(verified_page):
    """(document, dom) for a run with --verify."""
    document, source = verified_page
    return document, parse(source)


def _finding_index(document, code):
    return next(i for i, f in enumerate(document["findings"]) if f["code"] == code)


# ---- the page with --verify ---------------------------------------------------------------------------------
def test_sections_and_self_contained(verified):
    _, dom = verified
    for section in ("summary", "functions", "charts", "breaks", "recompiles", "failed", "findings"):
        dom.find("section", id=section)
    assert_self_contained(dom)
    assert dom.find("html").attrs["lang"] == "en" and dom.find("meta").attrs["charset"] == "utf-8"


def test_summary_counts_statuses_examples_and_families(verified):
    document, dom = verified
    stats = {s.find(cls="label").text: s.find(cls="value").text for s in dom.find_all("div", "stat")}
    statuses = [f.get("status") for f in document["findings"] if not f["code"].startswith("DYN9")]
    assert stats["files checked"] == "1" and stats["findings"] == str(len(document["findings"]))
    assert stats["confirmed"] == str(statuses.count("confirmed")) == "1"
    assert stats["examples ran"] == "2/3" and stats["break sites"] == "1" and stats["recompiles"] == "1"
    families = dom.find(id="summary").text
    assert FAMILIES["1"] in families and "DYN1xx" in families


def test_per_function_table_rows_and_sort_keys(verified):
    _, dom = verified
    table = dom.find("section", id="functions").find("table", "sortable")
    heads = [th.text for th in table.find_all("th")]
    assert heads == ["example", "function", "graphs", "breaks", "recompiles", "compile s", "eager ms",
                     "compiled ms", "speedup", "peak MiB", "agreement", "outcome"]
    rows = table.find("tbody").find_all("tr")
    assert [r.find("td").attrs["data-v"] for r in rows] == ["positive", "batches", "hangs"]
    positive = {h: td for h, td in zip(heads, rows[0].find_all("td"))}
    assert positive["breaks"].text == "1" and positive["speedup"].text == "3.00×"
    assert float(positive["speedup"].attrs["data-v"]) == pytest.approx(3.0)
    assert positive["agreement"].text.startswith("match") and positive["outcome"].text == "ok"
    batches = {h: td for h, td in zip(heads, rows[1].find_all("td"))}
    # the interval, the rounds, the launch-bound call, the other mode; peak memory eager -> compiled
    shown = batches["speedup"].text
    assert shown.startswith("0.50×") and "0.45–0.55" in shown and "12 rounds" in shown and "launch-bound" in shown
    assert "one call at a time: 0.30× (0.28–0.33)" in shown          # launch-bound: also one call at a time
    assert "reduce-overhead 1.00×" in shown and "recommended mode" not in shown      # none is faster than eager
    assert "autograd off" in shown and "autograd off" not in positive["speedup"].text
    assert batches["peak MiB"].text == "3 → 1" and positive["peak MiB"].text == "–"
    hangs = {h: td for h, td in zip(heads, rows[2].find_all("td"))}
    assert hangs["speedup"].attrs["data-v"] == "" and hangs["outcome"].text == "timeout"


def test_the_interval_says_how_many_processes_it_spans(project):
    def process(pid, eager_ms, compiled_ms, device_ms):
        rounds = (eager_ms,) * 5, (compiled_ms,) * 5
        return TimingProcess(pid, eager_ms, compiled_ms, eager_ms / compiled_ms, 0.99 * eager_ms / compiled_ms,
                             1.01 * eager_ms / compiled_ms, 5, True, device_ms, *rounds)

    first = process(101, 2.0, 1.0, 0.3)                                   # launch-bound (0.3 ms of kernels in 1)
    r = ExampleResult(name="varied", path="dynlint_examples.py", line=5, factory="varied", outcome="ok", phase="done",
                      eager_ms=2.0, compiled_ms=1.0, speedup_low=1.98, speedup_high=2.02, rounds=5,
                      compiled_device_ms=0.3, timing_processes=(first,), device="cuda (NVIDIA H200)")
    varied = r.across_processes([process(202, 2.2, 1.0, 0.8)])            # not launch-bound: 0.8 ms in 1
    alone = r.with_(name="alone").across_processes([], "timing process 2: timed out after 20.0 s")
    verify = VerifyReport(str(project), "cuda", (varied, alone), ()).to_dict()
    dom = parse(page([], [], [], project, verify))
    functions = dom.find("section", id="functions")
    assert "95% interval, spanning 2 fresh worker processes" in functions.find("p", "hint").text
    speedups = [tr.find_all("td")[8].text for tr in functions.find("tbody").find_all("tr")]
    assert "10 rounds in 2 processes" in speedups[0] and "launch-bound in some processes, not in others" in speedups[0]
    assert "launch-bound:" not in speedups[0]
    assert "5 rounds;" in speedups[1] and "timing process 2: timed out after 20.0 s" in speedups[1]
    assert "launch-bound: 0.300 ms of kernels per call" in speedups[1]


def test_charts_draw_one_mark_per_timed_example(verified):
    _, dom = verified
    bars, scatter = dom.find("section", id="charts").find_all("svg")
    assert len(bars.find_all("rect")) == 2 and len(scatter.find_all("circle")) == 2
    assert {t.text for t in bars.find_all("text", "val")} == {"3.00×", "0.50×"}
    assert "1×" in {t.text for t in scatter.find_all("text", "tick")}


def test_graph_break_card_has_snippet_dynamo_words_and_static_finding(verified):
    document, dom = verified
    cards = dom.find("section", id="breaks").find_all("article")
    assert len(cards) == 1                                     # two breaks, one site
    card = cards[0]
    assert card.find(cls="loc").text == "model.py:6 in step"
    assert [r.text for r in card.find("table", "snippet").find_all("tr", "hot")] == ["6    if x.sum() > 0:"]
    assert "Detected data-dependent branching." in card.text
    assert card.find("code").text == "torch.cond"              # backquotes in Dynamo's hint become <code>
    link = card.find("a", "ref")
    i = _finding_index(document, "DYN101")
    assert link.attrs["href"] == f"#f{i}" and dom.find("article", id=f"f{i}")
    assert "positive ×2" in card.text


def test_recompile_card_names_the_reason(verified):
    _, dom = verified
    card = dom.find("section", id="recompiles").find("article")
    assert "tensor 'x' size mismatch at index 0. expected 8, actual 16" in card.text
    assert "batches" in card.text
    assert "expected recompile" in card.text                  # one size change: automatic dynamic, no DYN902


def test_findings_link_to_their_rule_docs(verified):
    document, dom = verified
    cards = dom.find("section", id="findings").find_all("article", "finding")
    assert len(cards) == len(document["findings"])
    card = dom.find("article", id=f"f{_finding_index(document, 'DYN101')}")
    assert card.find("a", "code").attrs["href"] == doc_link("DYN101")
    assert card.find("span", "status").text == "confirmed"
    assert card.find("mark").text == "x.sum() > 0"            # the finding's own columns are marked
    assert "if x.sum() > 0:" in card.find("table", "snippet").text


def test_failed_example_shows_its_message(verified):
    _, dom = verified
    assert "timed out after 5.0 s" in dom.find("section", id="failed").text


# ---- without --verify ---------------------------------------------------------------------------------------
def test_static_only_page(project):
    result = api.check([str(project)])
    document = json_format.to_document(result.findings, result.files, result.errors)
    dom = parse(page(result.findings, result.files, result.errors, project))
    assert [s.attrs["id"] for s in dom.find_all("section")] == ["summary", "findings"]
    assert "static analysis only" in dom.find("header").text and "--verify" in dom.find(id="summary").text
    assert FAMILIES["1"] in dom.find(id="summary").text
    card = dom.find("article", "finding")
    assert card.find("a", "code").attrs["href"] == doc_link(document["findings"][0]["code"])
    assert card.find("table", "snippet").find("tr", "hot")
    assert_self_contained(dom)


def test_clean_project_says_so(tmp_path):
    dom = parse(page([], ["a.py"], [], tmp_path))
    assert "No findings" in dom.find(id="summary").text


# ---- escaping -----------------------------------------------------------------------------------------------
EVIL = '<script>alert("x")</script>'


def test_everything_user_derived_is_escaped(tmp_path):
    evil_path = 'pkg/<img src=x onerror="alert(1)">.py'
    finding = Finding(path=evil_path, line=1, column=0, code="DYN101", name="tensor-condition-in-branch",
                      message=f"branch on `{EVIL}` & more", fix=EVIL, chain=(EVIL,), gb_types=(EVIL,),
                      status="confirmed", properties=(("verify", EVIL),))
    evil_break = GraphBreak(gb_types=(EVIL,), gb_ids=("",), explanation=EVIL, hints=(f"`{EVIL}`",), path=evil_path,
                            line=1, function=EVIL, reported_path=evil_path, reported_line=1, frame_skipped=True,
                            duplicate=False)
    evil_recompile = Recompile(function=EVIL, code_name=EVIL, path=evil_path, line=1,
                               failures=(GuardFailure("0/0", EVIL, EVIL, evil_path, 1),))
    example = ExampleResult(name=EVIL, path=evil_path, line=1, factory=EVIL, outcome="ok", phase="done",
                            function=EVIL, function_path=evil_path, function_line=1, graph_breaks=(evil_break,),
                            recompiles=(evil_recompile,), eager_ms=1.0, compiled_ms=1.0, compile_s=1.0,
                            agreement=Agreement("mismatch", 1.0, where=EVIL, detail=EVIL))
    failed = ExampleResult(name="failed", path="x.py", line=1, factory="f", outcome="crashed", message=EVIL)
    verify = VerifyReport(str(tmp_path / EVIL), "cpu", (example, failed), (finding,)).to_dict()
    write_tree(tmp_path, {evil_path: f"if x:  # {EVIL}\n"})
    source = page([finding], [evil_path], [FileError(evil_path, EVIL)], tmp_path, verify)
    dom = parse(source)
    assert_self_contained(dom)                                # still one script: ours
    assert not dom.find_all("img")
    text = dom.find("body").text
    assert text.count(EVIL) >= 15 and evil_path in text        # shown literally, as text
    assert '<script>alert' not in source and 'onerror="alert' not in source


# ---- the CLI ------------------------------------------------------------------------------------------------
def test_cli_writes_report_beside_the_usual_output(cli, project, tmp_path):
    r = cli("check", ".", "--format", "json", "-o", tmp_path / "out.json", "--report", tmp_path / "r.html",
            cwd=project)
    assert r.returncode == 1, r.stderr
    document = json.loads((tmp_path / "out.json").read_text())
    dom = parse((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert len(dom.find_all("article", "finding")) == len(document["findings"]) > 0
    r = cli("check", ".", "--report", tmp_path / "r2.html", cwd=project)
    assert r.returncode == 1 and "DYN101" in r.stdout and (tmp_path / "r2.html").is_file()


# ---- in a real browser --------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_renders_in_headless_chromium(verified_page, tmp_path):
    chromium = load_bench("screenshot")          # the browser driving bench/screenshot.py does
    page = tmp_path / "report.html"
    page.write_text(verified_page[1], encoding="utf-8")
    png = chromium.screenshot(page, tmp_path / "report.png", size=(1400, 1600))
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000     # a drawn page, not a blank one

    # the script runs without error and sorts: click "speedup" twice (descending), read the order back
    probe = page.read_text(encoding="utf-8").replace("</body>", """<script>
      var b = document.querySelectorAll('#functions th button')[8]; b.click(); b.click();
      document.body.setAttribute('data-order', Array.prototype.map.call(
        document.querySelectorAll('#functions tbody tr'), function (r) { return r.cells[0].textContent; }).join(','));
    </script></body>""")
    page.write_text(probe, encoding="utf-8")
    dom = subprocess.run(chromium.chromium_command(page, "--dump-dom", user_data_dir=tmp_path / "profile"),
                         capture_output=True, text=True, timeout=120).stdout
    assert 'class="js"' in dom
    assert 'data-order="positive,batches,hangs"' in dom            # 3.00×, 0.50×, then the untimed one


def test_html_is_a_format_like_the_others(cli, tmp_path):
    """Every format is one module behind report.FORMATS: `--format html -o` writes the page --report writes."""
    project = write_tree(tmp_path / "p", {"pyproject.toml": "[tool.dynlint]\n",
                                          "m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"})
    r = cli("check", ".", "--no-cache", "--format", "html", "-o", "page.html", "--report", "report.html", cwd=project)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    page = (project / "page.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "DYN201" in page
    assert page == (project / "report.html").read_text(encoding="utf-8")


def test_a_speedup_whose_interval_holds_one_is_drawn_as_the_table_says():
    """The chart drew a red 0.50× bar where the table said `~1x [0.01–2.47]`: both now say no measurable
    difference (a grey bar labelled ~1×, its interval a whisker), as the verdict does."""
    noisy = {"name": "noisy", "speedup": 0.5, "speedup_interval": [0.01, 2.47], "rounds": 3,
             "verdict": "no measurable difference", "compile_s": 1.0}
    fast = {"name": "fast", "speedup": 3.0, "speedup_interval": [2.8, 3.2], "rounds": 3, "verdict": "faster",
            "compile_s": 2.0}
    bars = parse(html.speedup_chart([noisy, fast]))
    assert [r.attrs["class"] for r in bars.find_all("rect")] == ["same", "up"]
    assert [t.text for t in bars.find_all("text", "val")] == ["~1×", "3.00×"]
    assert len(bars.find_all("line", "whisker")) == 1
    assert html.speed_kind(noisy) == "same" and html.speed_kind(fast) == "up"
