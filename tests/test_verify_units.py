"""The verify orchestration without torch: discovery, slot scheduling (N simulated devices), process
isolation, how a worker's end becomes an outcome, the JSON round trip and the text table."""
import json
import os
import random
import signal
import statistics
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from dynlint.compiler.records import GraphBreak, GraphRecord
from dynlint.runtime_check.discover import discover, find_example_files
from dynlint.runtime_check.process import ProcessOutcome, run_isolated
from dynlint.runtime_check.report import VerifyReport, render_table
from dynlint.runtime_check import timing
from dynlint.runtime_check.results import Agreement, ExampleResult, TimingProcess
from dynlint.runtime_check.schedule import Slot, plan_slots, run_on_slots
from dynlint.runtime_check.verify import VerifyUnavailable, interpret, more_timing, resolve_device


def write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


# ---- discovery ---------------------------------------------------------------------------------------------
def test_discovery_reads_markers_without_importing(tmp_path):
    write(tmp_path, {
        "dynlint_examples.py": """
            import dynlint as dl
            from dynlint import example as ex
            import this_module_does_not_exist            # never imported by discovery

            @dl.example(name="mlp", timeout=5, rtol=1e-3)
            def build_mlp():
                pass

            @ex
            def plain():
                pass

            def not_an_example():
                @ex
                def nested():                           # not reachable as a module attribute
                    pass

            @other.example
            def someone_elses():
                pass
        """,
        "pkg/sub/dynlint_examples.py": """
            from dynlint.runtime_check.examples import example

            @example()
            def deep():
                pass
        """,
        "bad/dynlint_examples.py": "def broken(:\n",
        ".venv/lib/dynlint_examples.py": "import dynlint\n@dynlint.example\ndef hidden(): pass\n",
        "env/pyvenv.cfg": "home = /usr\n",
        "env/dynlint_examples.py": "import dynlint\n@dynlint.example\ndef in_venv(): pass\n",
    })
    specs = {s.key: s for s in discover(tmp_path)}
    assert set(specs) == {"dynlint_examples.py::build_mlp", "dynlint_examples.py::plain",
                          "pkg/sub/dynlint_examples.py::deep", "bad/dynlint_examples.py::<file>"}
    mlp = specs["dynlint_examples.py::build_mlp"]
    assert (mlp.name, mlp.line, mlp.timeout) == ("mlp", 7, 5.0)
    assert specs["dynlint_examples.py::plain"].timeout is None
    assert "cannot read example file" in specs["bad/dynlint_examples.py::<file>"].error
    assert find_example_files(tmp_path, ["pkg/**/*.py"]) == ["pkg/sub/dynlint_examples.py"]


# ---- scheduling ---------------------------------------------------------------------------------------------
def test_plan_slots_per_gpu_respects_visible_devices_and_jobs():
    slots = plan_slots("cuda", 2, visible_devices="3,5")
    assert [(s.device, s.label, dict(s.env)) for s in slots] == [
        ("cuda", "cuda:3", {"CUDA_VISIBLE_DEVICES": "3"}), ("cuda", "cuda:5", {"CUDA_VISIBLE_DEVICES": "5"})]
    assert [s.label for s in plan_slots("cuda", 4, jobs=2)] == ["cuda:0", "cuda:1"]
    assert [s.label for s in plan_slots("cpu", 0)] == ["cpu"]
    three = plan_slots("cpu", 8, jobs=3, cpu_count=16)
    assert [s.label for s in three] == ["cpu#0", "cpu#1", "cpu#2"]
    assert three[0].environ({})["OMP_NUM_THREADS"] == "5"                   # the cores are shared out
    assert three[0].environ({"OMP_NUM_THREADS": "2"})["OMP_NUM_THREADS"] == "2"   # unless the user chose
    assert "OMP_NUM_THREADS" not in plan_slots("cpu", 0, cpu_count=16)[0].environ({})
    with pytest.raises(ValueError):
        plan_slots("cuda", 0)


def test_one_worker_per_simulated_gpu_at_a_time():
    slots = plan_slots("cuda", 3)                     # three simulated GPUs on this CPU machine
    busy, peak, lock, log = set(), [0], threading.Lock(), []

    def fake_worker(item, slot):
        gpu = slot.environ({})["CUDA_VISIBLE_DEVICES"]
        with lock:
            assert gpu not in busy, "two workers on one GPU"
            busy.add(gpu)
            peak[0] = max(peak[0], len(busy))
        time.sleep(0.05)
        with lock:
            busy.discard(gpu)
            log.append(gpu)
        return f"{item}@{gpu}"

    results = run_on_slots(list(range(9)), slots, fake_worker)
    assert [r.split("@")[0] for r in results] == [str(i) for i in range(9)]   # item order is kept
    assert peak[0] == 3 and sorted(set(log)) == ["0", "1", "2"]


def test_a_launcher_error_is_raised_in_the_caller():
    def failing(item, slot):
        raise RuntimeError(f"launcher broke on {item}")

    with pytest.raises(RuntimeError, match="launcher broke"):
        run_on_slots([1, 2], [Slot("cpu", "cpu")], failing)


# ---- process isolation --------------------------------------------------------------------------------------
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")       # a zombie is dead


def test_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    script = (f"import subprocess, time\n"
              f"p = subprocess.Popen(['sleep', '300'])\n"
              f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
              f"time.sleep(300)\n")
    out = run_isolated([sys.executable, "-c", script], env=dict(os.environ), timeout=2,
                       log_path=str(tmp_path / "log"))
    assert out.timed_out and out.wall_s < 10
    grandchild = int(pid_file.read_text())
    deadline = time.time() + 5
    while _pid_alive(grandchild) and time.time() < deadline:
        time.sleep(0.05)
    assert not _pid_alive(grandchild)


def test_ctrl_c_kills_the_running_workers_and_starts_no_more(tmp_path):
    from dynlint.runtime_check.process import kill_running

    started = []

    def sleeper(item, slot):
        started.append(item)
        pid_file = str(tmp_path / str(item))
        script = f"import os, time; open({pid_file!r}, 'w').write(str(os.getpid())); time.sleep(300)"
        return run_isolated([sys.executable, "-c", script], env=dict(os.environ), timeout=300,
                            log_path=str(tmp_path / f"log{item}"))

    def interrupt_when_up():
        while not (tmp_path / "0").exists() or not (tmp_path / "0").read_text():
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)          # what Ctrl-C does to the parent

    # as in a terminal, even where this process inherited SIGINT ignored (a background job of a script)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt_when_up, daemon=True).start()
    start = time.time()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_on_slots([0, 1, 2], [Slot("cpu", "cpu")], sleeper, on_interrupt=kill_running)
    finally:
        signal.signal(signal.SIGINT, previous)
    worker = int((tmp_path / "0").read_text())
    deadline = time.time() + 5
    while _pid_alive(worker) and time.time() < deadline:
        time.sleep(0.05)
    assert not _pid_alive(worker) and time.time() - start < 30
    time.sleep(0.3)                                   # the slot's thread has seen its worker die by now
    assert started == [0]


def test_crash_exit_code_and_log_tail(tmp_path):
    script = "import os, sys\nsys.stdout.write('x' * 2_000_000 + '\\nlast words\\n')\nsys.stdout.flush()\nos.abort()\n"
    out = run_isolated([sys.executable, "-c", script], env=dict(os.environ), timeout=30,
                       log_path=str(tmp_path / "log"))
    assert not out.timed_out and out.describe_exit() == "killed by SIGABRT"
    assert out.log_tail.rstrip().endswith("last words") and len(out.log_tail) <= 4000
    ok = run_isolated([sys.executable, "-c", "raise SystemExit(3)"], env=dict(os.environ), timeout=30,
                      log_path=str(tmp_path / "log2"))
    assert ok.describe_exit() == "exit code 3"


BASE = ExampleResult(name="ex", path="dynlint_examples.py", line=4, factory="ex", outcome="error", slot="cuda:1")


@pytest.mark.parametrize("written, outcome, expected, words", [
    ({"final": True, "result": BASE.with_(outcome="ok", phase="done").to_dict()},
     ProcessOutcome(0, False, 1.0, ""), "ok", ""),
    ({"final": True, "result": BASE.with_(phase="build", message="ValueError: x").to_dict()},
     ProcessOutcome(0, False, 1.0, ""), "error", "ValueError"),
    ({"final": False, "result": BASE.with_(phase="compiled").to_dict()},
     ProcessOutcome(-11, False, 1.0, "Fatal Python error: Segmentation fault"), "crashed",
     "SIGSEGV during phase 'compiled'"),
    ({"final": False, "result": BASE.with_(phase="timing").to_dict()},
     ProcessOutcome(-9, True, 7.5, ""), "timeout", "timed out after 7.5 s during phase 'timing'"),
    (None, ProcessOutcome(1, False, 1.0, "ImportError: dynlint"), "crashed", "exit code 1"),
])
def test_how_a_worker_ends_becomes_an_outcome(written, outcome, expected, words):
    r = interpret(BASE, outcome, written)
    assert r.outcome == expected and words in r.message and r.slot == "cuda:1" and r.wall_s == outcome.wall_s


# ---- availability ---------------------------------------------------------------------------------------------
def test_verify_unavailable_without_a_working_torch(tmp_path, monkeypatch):
    no_torch = "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n"
    fake_python = write(tmp_path, {"python": no_torch}) / "python"
    fake_python.chmod(0o755)
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        with pytest.raises(VerifyUnavailable, match=r"pip install 'dynlint\[verify\]'") as e:
            resolve_device("auto", python=str(fake_python))
        assert "No module named 'torch'" in str(e.value)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(VerifyUnavailable, match=r"pip install 'dynlint\[verify\]'"):
        resolve_device("cpu")


# ---- results and the report ---------------------------------------------------------------------------------
def sample_result(**changes):
    b = GraphBreak(gb_types=("Data-dependent branching",), gb_ids=("GB0170",), explanation="e", hints=("h",),
                   path="m.py", line=3, function="f", reported_path="m.py", reported_line=3, frame_skipped=False,
                   duplicate=False)
    g = GraphRecord(index=0, ops=3, dynamic=False, lines=(("m.py", 2),), kernels=1, extern_kernels=0,
                    passes=(("remove-noop-copies", 1),), compile_s=0.5)
    fields = dict(name="ex", path="dynlint_examples.py", line=4, factory="ex", outcome="ok", phase="done",
                  function="f", graphs=(g, g), graph_breaks=(b, b), compile_s=1.25, eager_ms=2.0, compiled_ms=0.5,
                  agreement=Agreement("match", 0.0), executed=(("m.py", (1, 2, 3)),))
    fields.update(changes)
    return ExampleResult(**fields)


def test_example_result_survives_the_json_round_trip():
    r = sample_result()
    d = json.loads(json.dumps(r.to_dict()))
    assert ExampleResult.from_dict(d) == r
    assert d["speedup"] == 4.0 and d["kernels"] == 2 and d["break_sites"] == 1 and d["executed"] == {"m.py": [1, 2, 3]}


def test_text_table_has_every_column_and_notes_for_failures():
    crashed = ExampleResult(name="boom", path="e.py", line=9, factory="boom", outcome="crashed", phase="build",
                            message="worker killed by SIGSEGV during phase 'build'\nFatal Python error")
    text = render_table((sample_result(), crashed))
    header, rule, ok_row, crash_row = text.splitlines()[:4]
    for column in ("example/function", "graphs", "breaks", "recompiles", "compile s", "eager ms", "compiled ms",
                   "speedup", "agreement", "outcome"):
        assert column in header
    assert ok_row.split() == ["ex", "(f)", "2", "1", "0", "1.25", "2.000", "0.500", "4.00x", "ok", "ok"]
    assert crash_row.split()[-1] == "crashed" and "boom: worker killed by SIGSEGV during phase 'build'" in text
    report = VerifyReport(project_root="/p", device="cpu", examples=(sample_result(), crashed), findings=())
    assert "2 examples on cpu" in report.render_text() and "1 crashed, 1 ok" in report.render_text()


def test_a_launch_bound_call_is_also_reported_one_call_at_a_time():
    r = sample_result(compiled_device_ms=0.1, one_call_eager_ms=2.2, one_call_compiled_ms=2.0, one_call_low=1.05,
                      one_call_high=1.16)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["launch_bound"] and abs(d["one_call_speedup"] - 1.1) < 1e-9 and d["one_call_interval"] == [1.05, 1.16]
    assert ExampleResult.from_dict(d) == r
    report = VerifyReport(project_root="/p", device="cuda", examples=(r,), findings=())
    assert "ex: one call at a time (synchronised after each): 1.10x" in report.render_text()
    assert sample_result().to_dict()["one_call_speedup"] is None


def test_a_speedup_measured_with_autograd_off_on_a_gpu_carries_a_caveat():
    gpu = sample_result(grad_off=True, device="cuda (NVIDIA H200)")
    text = VerifyReport(project_root="/p", device="cuda", examples=(gpu,), findings=()).render_text()
    assert "ex: runs with autograd off (no_grad or inference_mode)" in text
    for quiet in (sample_result(grad_off=True, device="cpu"), sample_result(device="cuda (NVIDIA H200)")):
        assert "autograd off" not in VerifyReport(project_root="/p", device="cpu", examples=(quiet,),
                                                  findings=()).render_text()
    assert ExampleResult.from_dict(json.loads(json.dumps(gpu.to_dict()))) == gpu


def test_one_call_at_a_time_is_reported_beside_a_call_that_is_not_launch_bound():
    # a short call whose kernels fill it (0.13 ms of 0.15 ms), where one call at a time disagrees
    r = sample_result(eager_ms=1.6, compiled_ms=0.15, compiled_device_ms=0.13, speedup_low=10.3, speedup_high=11.0,
                      one_call_eager_ms=1.62, one_call_compiled_ms=0.18, one_call_low=8.8, one_call_high=9.3)
    assert not r.launch_bound
    text = VerifyReport(project_root="/p", device="cuda", examples=(r,), findings=()).render_text()
    assert "launch-bound" not in text and "ex: one call at a time (synchronised after each): 9.00x" in text


def timed_process(pid, eager_ms, compiled_ms, device_ms=None, seed=1, rounds=20):
    """What one timing process reports: its rounds (1% noise), their medians and its own interval."""
    rng = random.Random(seed)
    e, c = (tuple(ms * (1 + rng.gauss(0, 0.01)) for _ in range(rounds)) for ms in (eager_ms, compiled_ms))
    speedup, low, high = timing.interval(e, c)
    return TimingProcess(pid, statistics.median(e), statistics.median(c), speedup, low, high, rounds, True, device_ms,
                         e, c)


def first_worker(p: TimingProcess, **changes):
    return sample_result(timing_processes=(p,), eager_ms=p.eager_ms, compiled_ms=p.compiled_ms, rounds=p.rounds,
                         speedup_low=p.speedup_low, speedup_high=p.speedup_high, speedup_settled=True,
                         compiled_device_ms=p.compiled_device_ms, **changes)


def test_an_example_timed_in_two_processes_spans_both_and_says_so():
    # llama on an H200 (issue 37): 2.31x in one process, 2.52x in another on a host half as fast; the compiled
    # call launch-bound in the first (1.0 ms of kernels in 2.64 ms), not in the second (3.0 ms in 4.48 ms)
    first, second = timed_process(101, 6.1, 6.1 / 2.31, device_ms=1.0), timed_process(202, 11.3, 11.3 / 2.52, 3.0, 2)
    alone = first_worker(first)
    assert alone.launch_bound and not alone.launch_bound_varied
    assert alone.speedup_high < second.speedup                               # one process's interval misses it
    r = alone.across_processes([second])
    assert [p.pid for p in r.timing_processes] == [101, 202] and r.rounds == 40 and r.speedup_settled
    assert r.speedup_low <= first.speedup_low < second.speedup_high <= r.speedup_high
    assert r.speedup == pytest.approx(statistics.median(first.eager_rounds_ms + second.eager_rounds_ms)
                                      / statistics.median(first.compiled_rounds_ms + second.compiled_rounds_ms))
    assert r.launch_bound is None and r.launch_bound_varied                  # the flag is kept only when they agree
    d = json.loads(json.dumps(r.to_dict()))
    assert [(p["pid"], p["launch_bound"]) for p in d["timing_processes"]] == [(101, True), (202, False)]
    assert d["timing_processes"][1]["speedup_interval"] == [second.speedup_low, second.speedup_high]
    assert d["launch_bound"] is None and d["launch_bound_varied"] and d["speedup_interval"] == [r.speedup_low,
                                                                                                r.speedup_high]
    assert ExampleResult.from_dict(d) == r
    text = VerifyReport(project_root="/p", device="cuda", examples=(r,), findings=()).render_text()
    assert "95% interval spanning 2 fresh worker processes" in text
    assert f"ex: the processes' speedups differ ({first.speedup:.2f}x, {second.speedup:.2f}x); the interval spans " \
           "them" in text
    assert "ex: launch-bound in 1 of 2 timing processes, not in the others" in text and "launch-bound: " not in text
    both = first_worker(first).across_processes([timed_process(202, 6.1, 6.1 / 2.31, device_ms=1.0, seed=2)])
    assert both.launch_bound and not both.launch_bound_varied                # both launch-bound: it says so


def test_a_timing_process_that_fails_leaves_the_first_s_figures_with_a_note():
    first = first_worker(timed_process(101, 2.0, 1.0))
    timed_out = ExampleResult(name="ex", path="dynlint_examples.py", line=4, factory="ex", outcome="timeout",
                              message="timed out after 20.0 s during phase 'timing'; its process group was killed")
    r = more_timing(first, [timed_out])
    assert r.timing_processes == first.timing_processes and r.speedup == first.speedup
    assert (r.speedup_low, r.speedup_high, r.rounds) == (first.speedup_low, first.speedup_high, first.rounds)
    assert r.timing_note == "timing process 2: " + timed_out.message
    text = VerifyReport(project_root="/p", device="cpu", examples=(r,), findings=()).render_text()
    assert "ex: its interval spans 1 process (timing process 2: timed out after 20.0 s" in text
    assert "95% interval within one worker process" in text
    assert more_timing(first, []) == first                                    # --timing-processes 1
