"""Recompilations told while the job runs (issue 33): `record --live` and `hlodiff watch`.

The real-job tests run fixtures/torch_xla/live_batch_change.py (batch 4 -> 2 rows at step 4, then a pause after
each step) and time each line as it arrives: the recompilation's line must come within 2 s of its module file being
written (the graph captured: the module's mtime) and long before the job ends. The expectations are the fixture's
truth.json (written by the script from what it ran, before hlodiff was run on it)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import FIXTURES
from helpers import capture_free_env, cli, truth_of

SCRIPT = FIXTURES / "torch_xla" / "live_batch_change.py"
ROOT = Path(__file__).resolve().parents[1]
SLEEP = "0.8"  # per step after the change: the job runs ~5 s past the recompilation
needs_torch_xla = pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")


def _hlodiff(*args) -> list[str]:
    """This tree's hlodiff in a fresh process (PYTHONPATH below), whether or not the console script is installed."""
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'hlodiff'; from hlodiff.cli import main; main()",
            *map(str, args)]


def _env() -> dict[str, str]:
    env = capture_free_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _timed(stream, into: list) -> threading.Thread:
    """Read ``stream`` line by line in a thread, keeping (wall-clock time, line) for each."""
    def read():
        for raw in iter(stream.readline, b""):
            into.append((time.time(), raw.decode("utf-8", "replace").rstrip("\n")))
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _module_time(dump: Path, number: int) -> float:
    """When XLA wrote the module of compilation ``number`` (the graph captured)."""
    files = sorted(dump.glob(f"module_{number:04d}.*.before_optimizations.txt"))
    assert files, sorted(p.name for p in dump.iterdir())
    return files[0].stat().st_mtime


def _first(lines: list, needle: str) -> tuple[float, str]:
    found = [(t, line) for t, line in lines if needle in line]
    assert found, "\n".join(line for _, line in lines)
    return found[0]


def _last_fix(lines: list[str], step: int) -> str:
    """The last live word on the story of ``step``: its first line or a later update."""
    told = [line for line in lines if line.startswith("hlodiff: ") and (
        f"step {step} recompiled (" in line or f"step {step}, now that" in line)]
    assert told, lines
    return told[-1].split("; fix: ", 1)[1]


def _record(tmp_path: Path, stderr_to_file: bool):
    truth = truth_of("torch_xla", "live_batch_change")
    err_file = tmp_path / "stderr.log"
    command = _hlodiff("record", "--out", tmp_path / "run", "--", sys.executable, SCRIPT, "--inner", "--sleep", SLEEP)
    out_lines: list = []
    err_lines: list = []
    with open(err_file, "wb") as err_sink:
        proc = subprocess.Popen(command, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                                stderr=err_sink if stderr_to_file else subprocess.PIPE)
        readers = [_timed(proc.stdout, out_lines)]
        if stderr_to_file:
            seen = 0
            while proc.poll() is None:  # a job log followed as `tail -f` would: new lines stamped when they land
                time.sleep(0.05)
                text = err_file.read_bytes().decode("utf-8", "replace")
                new = text[:text.rfind("\n") + 1].splitlines()
                err_lines += [(time.time(), line) for line in new[seen:]]
                seen = len(new)
            proc.wait(timeout=300)
            err_lines += [(time.time(), line) for line in err_file.read_text().splitlines()[seen:]]
        else:
            readers.append(_timed(proc.stderr, err_lines))
            proc.wait(timeout=300)
        for r in readers:
            r.join(timeout=30)
    return truth, proc.returncode, out_lines, err_lines, tmp_path / "run" / "xla_dump"


@pytest.mark.xla
@needs_torch_xla
@pytest.mark.parametrize("stderr_to_file", [False, True], ids=["stderr-pipe", "stderr-file"])
def test_record_tells_the_recompilation_while_the_job_runs(tmp_path, stderr_to_file):
    truth, status, out, err, dump = _record(tmp_path, stderr_to_file)
    text = [line for _, line in err]
    assert status == 0, "\n".join(text[-40:])
    step = truth["recompiled_step"]
    captured = _module_time(dump, 1)  # the second compilation is the recompilation
    at, line = _first(err, f"step {step} recompiled (")
    ended = _first(out, f"step {truth['steps'] - 1} done")[0]
    print(f"graph captured -> line on stderr ({'file' if stderr_to_file else 'pipe'}): {at - captured:.2f} s; "
          f"line before the job's last step: {ended - at:.2f} s")
    assert at - captured < 2.0, (at - captured, line)
    assert ended - at > 3.0, "the line came near the end of the job, not while it ran"
    # the line: the step, the root cause, the user's line; a fix resting on the future is not claimed
    assert f"{truth['cause']} at {truth['user_file']}:{truth['user_line']}" in line, line
    for word in truth["fix_must_not"]:
        assert word not in line, line
    # the command's own output passes through untouched and in order
    assert [x for _, x in out] == [f"step {k} done" for k in range(truth["steps"])]  # hlodiff's own: on stderr
    # at exit: the full report on stderr (not a terminal here), the exit status the command's
    summary = next(x for x in text if x.startswith(f"{truth['steps']} graphs") and " recompilation" in x)
    report = text[text.index(summary):]
    assert any("recompiled" in x and "closest earlier graph" in x for x in report), report
    final_fix = next(x for x in report if x.startswith("fix: ")).removeprefix("fix: ")
    assert text[-1] == "hlodiff: 1 recompilation; exiting with the command's status 0"
    # the last live word is the final report's
    live_fix = _last_fix(text[:text.index(report[0])], step)
    assert live_fix == final_fix
    for word in truth["fix_must"]:
        assert word in final_fix
    for word in truth["fix_must_not"]:
        assert word not in final_fix


@pytest.mark.xla
@needs_torch_xla
def test_watch_follows_a_capture_made_by_hand(tmp_path):
    """An XLA dump folder and a PT_XLA_DEBUG_LEVEL=2 log written by a job run without hlodiff, watched while the
    job runs: watch is started on the empty dump folder first (the log beside it is found once it appears)."""
    truth = truth_of("torch_xla", "live_batch_change")
    run = tmp_path / "run"
    (run / "dump").mkdir(parents=True)
    env = capture_free_env(XLA_FLAGS=f"--xla_dump_to={run / 'dump'}", XLA_HLO_DEBUG="1", XLA_IR_DEBUG="1",
                           PT_XLA_DEBUG_LEVEL="2", PT_XLA_DEBUG_FILE=str(run / "debug.log"))
    watched: list = []
    watch = subprocess.Popen(_hlodiff("watch", run / "dump", "--until-idle", "8"), cwd=tmp_path, env=_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watch_reader = _timed(watch.stdout, watched)
    job_out: list = []
    job = subprocess.Popen([sys.executable, str(SCRIPT), "--inner", "--sleep", SLEEP], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    job_reader = _timed(job.stdout, job_out)
    job.wait(timeout=300)
    watch.wait(timeout=120)
    job_reader.join(timeout=30)
    watch_reader.join(timeout=30)
    assert job.returncode == 0 and watch.returncode == 0, watch.stderr.read().decode()[-2000:]
    at, line = _first(watched, f"step {truth['recompiled_step']} recompiled (")
    captured = _module_time(run / "dump", 1)
    ended = _first(job_out, f"step {truth['steps'] - 1} done")[0]
    print(f"watch: graph captured -> line: {at - captured:.2f} s; before the job's last step: {ended - at:.2f} s")
    assert at - captured < 2.0 and ended - at > 3.0
    assert f"{truth['cause']} at {truth['user_file']}:{truth['user_line']}" in line, line
    assert not any(x.startswith("hlodiff: warning") or "error" in x for _, x in watched)


def test_watch_json_lines_on_the_recorded_fixture():
    """--json: one object per line; the recompilation's event carries the truth's step, kind, line and fix."""
    truth = truth_of("torch_xla", "live_batch_change")
    result = cli("watch", FIXTURES / "torch_xla" / "live_batch_change" / "dump", "--until-idle", "0", "--json")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(e["schema"] == "hlodiff.live/1" for e in events)
    told = [e for e in events if e["event"] in ("recompiled", "update")]
    assert told[0]["event"] == "recompiled" and told[0]["step"] == truth["recompiled_step"]
    cause = told[-1]["cause"]
    assert cause["kind"] == truth["cause"]
    assert (Path(cause["location"]["file"]).name, cause["location"]["line"]) == (truth["user_file"],
                                                                                   truth["user_line"])
    assert all(w in cause["fix"] for w in truth["fix_must"])
    assert not any(w in (e["cause"]["fix"] or "") for e in told for w in truth["fix_must_not"])


def _grow(src: Path, dst: Path, cut: int) -> None:
    data = src.read_bytes()
    dst.write_bytes(data[:cut])


@pytest.mark.parametrize("kind", ["save-tensors", "save-tensors-sharded", "debug-log"])
def test_half_written_input_is_read_again_when_complete(tmp_path, kind):
    """A writer caught mid-entry (mid-block), again and again: each poll reads every entry (execution) finished
    before the cut, none after it, and never warns; the rest is read once it is written. A sharded graph's
    output-sharding block (written after its END_GRAPH) is kept: the records are those of a read after the run."""
    from hlodiff.dumps import iter_graphs
    from hlodiff.dumps.debug_log import ExecutionEvent
    from hlodiff.dumps.follow import follower_for

    if kind.startswith("save-tensors"):
        name = "spmd_warmup" if kind.endswith("sharded") else "batch_shape"
        src = FIXTURES / "torch_xla" / name / "graphs.hlo.0"
        marker, total = b"## END_GRAPH", len(truth_of("torch_xla", name)["entries"])
    else:
        src = FIXTURES / "torch_xla" / "live_batch_change" / "dump" / "pt_xla_debug.log"
        marker, total = b"Execution Analysis: Graph Info", truth_of("torch_xla", "live_batch_change")["steps"]
    dst = tmp_path / src.name
    data = src.read_bytes()
    cuts = []
    at = data.find(marker)
    while at != -1:
        cuts.append(at + len(marker) // 2)  # in the middle of the line that closes (or opens) the k-th unit
        at = data.find(marker, at + 1)
    assert len(cuts) == total
    dst.write_bytes(data[:cuts[0]])
    follower = follower_for(str(dst))

    got: list = []

    def read() -> int:
        new = follower.poll()
        if kind == "debug-log":
            new = [e for e in follower.take_events() if isinstance(e, ExecutionEvent)]
        got.extend(new)
        return len(got)

    for k, cut in enumerate(cuts):
        dst.write_bytes(data[:cut])
        seen = read()
        assert seen == k, f"{seen} read with {k} finished before the cut"
        assert not follower.warnings, [str(w) for w in follower.warnings]
    dst.write_bytes(data)
    read()
    got += follower.close()
    assert len(got) == total and not follower.warnings
    if kind.startswith("save-tensors"):
        after = list(iter_graphs(str(dst)))
        assert [(r.index, r.graph_hash, r.output_sharding, r.byte_offset, r.text()) for r in got] == [
            (r.index, r.graph_hash, r.output_sharding, r.byte_offset, r.text()) for r in after]





def _watched(*parts: str) -> list[str]:
    result = cli("watch", FIXTURES.joinpath(*parts), "--until-idle", "0")
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_a_warm_up_is_counted_not_shouted():
    """AdamW creates its state on step 1 (record_adamw's truth): one quiet line, then the optimizer's warm-up once
    the next step reuses the graph; no block, no 'recompiled' line."""
    truth = truth_of("torch_xla", "record_adamw")
    lines = _watched("torch_xla", "record_adamw", "dump")
    assert not any("recompiled (" in line or line.startswith("hlodiff:   ") for line in lines), lines
    where = f"{truth['cause']} at {truth['user_file']}:{truth['user_line']}"
    assert len(lines) == 2 and all(where in line for line in lines), lines
    # step 1 alone: the new inputs are state torch/optim/ made on the first step (review 5, F1), an expected warm-up
    assert "expected" in lines[0] and "creates its state on its first step" in lines[0], lines[0]
    assert "now that more of the run is known: expected" in lines[1] and "nothing to fix" in lines[1]


def test_a_story_is_told_once_then_counted():
    """The KV cache grows every decoding step (kv_cache's truth: a recompilation per step at one line): the first
    recompilation of the story in full, each next one in one line with the count; the last word is the fix the
    truth wants."""
    truth = truth_of("torch_xla", "kv_cache")
    lines = _watched("torch_xla", "kv_cache")
    where = f"{truth['cause']} at {truth['user_file']}:{truth['user_line']}"
    told = [line for line in lines if where in line]
    full = [line for line in told if " recompiled (" in line]
    repeats = [line for line in told if " recompiled again: " in line]
    assert len(full) == 1 and len(told) == len(full) + len(repeats) + sum("compiled a second graph" in x for x in told)
    assert [int(line.split("), ", 1)[1].split(" times", 1)[0]) for line in repeats] == list(
        range(2, len(repeats) + 2))
    # compilations [0, 1, ...]: the family's first graph and, held, its second; every later one is told
    assert len(full) + len(repeats) == len(truth["compilations"]) - 2
    last_fix = told[-1].split("; fix: ", 1)[1]
    assert all(w in last_fix for w in truth["fix_must"]) and not any(w in last_fix for w in truth["fix_must_not"])


@pytest.mark.xla
@needs_torch_xla
def test_record_no_live_keeps_quiet_until_the_report(tmp_path):
    """--no-live: no line while the job runs; the report at exit, on stderr, as with --live."""
    truth = truth_of("torch_xla", "live_batch_change")
    proc = subprocess.run(_hlodiff("record", "--no-live", "--out", tmp_path / "run", "--", sys.executable, SCRIPT,
                                   "--inner"), cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [f"step {k} done" for k in range(truth["steps"])]
    assert not any(line.startswith("hlodiff: step") for line in proc.stderr.splitlines())
    assert f"{truth['cause']}" in proc.stderr and f"{truth['user_file']}:{truth['user_line']}" in proc.stderr
    assert proc.stderr.splitlines()[-1] == "hlodiff: 1 recompilation; exiting with the command's status 0"


def test_a_compilation_read_before_its_post_block_gives_no_false_warning(tmp_path):
    # review 5, F7 (p02, a real PT_XLA_DEBUG log): a poll that came between a Compilation Analysis block and its
    # Post Compilation Analysis read them apart, and the Post block "had no compilation before it" (a false warning
    # at the end of watch); the compilation now waits for its Post block, and both are read together
    from hlodiff.dumps.debug_log import CompilationEvent
    from hlodiff.dumps.follow import LogFollower

    text = (FIXTURES / "torch_xla" / "review5_p02w" / "debug.log").read_bytes()
    post = text.index(b"Post Compilation Analysis: ====")
    log = tmp_path / "debug.log"
    log.write_bytes(text[:post])  # the compilation closed, its Post block not written yet
    follower = LogFollower(str(log))
    follower.poll()
    assert not [e for e in follower.take_events() if isinstance(e, CompilationEvent)]
    log.write_bytes(text)
    follower.poll()
    follower.close()
    first = next(e for e in follower.take_events() if isinstance(e, CompilationEvent))
    assert not follower.warnings, [str(w) for w in follower.warnings]
    assert first.line == 2 and "Graph input size" in first.post_compilation


def test_record_under_spmd_threads_follows_the_save_file_it_asked_for(tmp_path):
    # review 5, F5 (p13, a real `hlodiff record` of torch_xla SPMD on CPU_NUM_DEVICES=4): record asks for the save
    # file (graphs.hlo.<ordinal>) and its manifest, while the command runs, also names an XLA dump that stays empty;
    # the live run followed the dump and told nothing. It follows the save file, as the report at exit reads it.
    import shutil

    from hlodiff.dumps.follow import SaveTensorsFollower
    from hlodiff.live_run import LiveRun
    from hlodiff.render.live import lines

    folder = tmp_path / "p13rec"
    shutil.copytree(FIXTURES / "torch_xla" / "review5_p13rec" / "record", folder)
    manifest = json.loads((folder / "hlodiff-record.json").read_text())
    assert manifest["capture"] == "save_tensors"
    manifest["xla_dump"] = "xla_dump"  # as record wrote it before the command started (pruned at the end)
    (folder / "xla_dump").mkdir()
    (folder / "hlodiff-record.json").write_text(json.dumps(manifest))
    live = LiveRun(str(folder))
    assert isinstance(live.follower, SaveTensorsFollower)
    said = [x for e in live.poll() + live.close() for x in lines(e)]
    told = [x for x in said if " recompiled (" in x]
    assert told and "sharding at p13_spmd.py:18" in told[0], said  # the report's headline (script: p13_spmd.py)


def test_every_fix_rule_the_live_lines_wait_on_is_a_row_of_the_table():
    # the waiting sets name rows of hlodiff.diff.fix_rules by name: a row renamed there would silently stop waiting
    # (and a live line tell a fallback fix before the steps show the report's)
    from hlodiff.diff.fix_rules import RULES
    from hlodiff.explain.live_told import NEEDS_MORE_STEPS, NEEDS_THE_END

    names = {r.name for r in RULES}
    assert NEEDS_THE_END | NEEDS_MORE_STEPS <= names, sorted((NEEDS_THE_END | NEEDS_MORE_STEPS) - names)


# -- review 6, p04: watch started on an empty run folder before a hand-made torch_xla capture -------------------------


def _blocks(log: bytes) -> list[bytes]:
    """A PT_XLA_DEBUG log cut after each closed analysis block (and the ``Computation hash`` lines between them), as
    torch_xla writes it: one piece per block."""
    pieces, start, previous = [], 0, b""
    for line in log.splitlines(keepends=True):
        start += len(line)
        if re.match(rb"^[\w ]+ Analysis: =+\s*$", line) and re.match(rb"^[\w ]+ Analysis: -{8,}\s*$", previous):
            pieces.append(start)
        previous = line
    return [log[:end] for end in pieces] + [log]


def test_watch_from_an_empty_run_folder_joins_a_log_whose_first_execution_comes_late(tmp_path):
    """Review 6, p04: `hlodiff watch RUN` started before `XLA_FLAGS=--xla_dump_to=RUN/dump PT_XLA_DEBUG_LEVEL=2
    PT_XLA_DEBUG_FILE=RUN/debug.log python train.py`. The run writes, in this order (seen in the reviewer's and in
    a reproduced run): the log's first Compilation Analysis block, then RUN/dump/ and its first module as XLA starts
    compiling, then -- once the compilation ended, 4 to 16 s later on a loaded 2-core machine -- the log's first
    Execution Analysis. watch took the dump alone for good 2 s after the first module: one line, numbered as
    compilations ("step 1 recompiled (SyncTensorsGraph)"), no sync line, no cache hits, no later word. Replayed
    here with live_batch_change's real capture (record's PT_XLA_DEBUG_LEVEL=2 log and XLA dump, laid out as a
    capture made by hand), its first compilation taking 2.5 s."""
    from hlodiff.live_run import LiveRun
    from hlodiff.render.live import lines, watch_report

    truth = truth_of("torch_xla", "live_batch_change")
    src = FIXTURES / "torch_xla" / "live_batch_change" / "dump"
    run = tmp_path / "run"
    run.mkdir()
    (run / "stdout.log").write_bytes(b"")  # the shell's redirects exist before the job writes anything
    modules = {}
    for p in sorted((src / "xla_dump").iterdir()):
        modules.setdefault(int(p.name.split(".")[0].split("_")[1]), []).append(p)
    live = LiveRun(str(run))
    events = live.poll()
    log = (src / "pt_xla_debug.log").read_bytes()
    compiled = 0
    for k, piece in enumerate(_blocks(log)):
        (run / "debug.log").write_bytes(piece)
        if piece.count(b"Compilation Analysis: Compilation Cause") > compiled:  # XLA starts compiling the graph
            (run / "dump").mkdir(exist_ok=True)
            for p in modules[compiled]:
                if "before_optimizations" in p.name:
                    (run / "dump" / p.name).write_bytes(p.read_bytes())
            events += live.poll()
            if compiled == 0:
                deadline = time.monotonic() + 2.5  # the first compilation is slow: the job writes nothing meanwhile
                while time.monotonic() < deadline:
                    events += live.poll()
                    time.sleep(0.25)
            for p in modules[compiled]:
                (run / "dump" / p.name).write_bytes(p.read_bytes())
            compiled += 1
        events += live.poll()
    events += live.close()
    told = [line for e in events for line in lines(e, watch_report(str(run)))]
    recompiled = [line for line in told if " recompiled (" in line]
    # the log is joined: the step is the run's (cache hits counted), the family its sync line
    assert len(recompiled) == 1 and recompiled[0].startswith(
        f"hlodiff: step {truth['recompiled_step']} recompiled (sync at {truth['user_file']}:"), told
    assert f"{truth['cause']} at {truth['user_file']}:{truth['user_line']}" in recompiled[0]
    # a later word once more of the run is known, with the fix the truth wants
    fix = _last_fix(told, truth["recompiled_step"])
    assert all(w in fix for w in truth["fix_must"]) and not any(w in fix for w in truth["fix_must_not"]), fix
    # watch prints no report at exit: its lines say where the full one is
    assert not any("report at exit" in line for line in told), told
    assert any(f"hlodiff explain-recompile {run}" in line for line in told), told


def test_watch_ends_saying_where_the_full_report_is(tmp_path):
    """Review 6: watch promised "the full report at exit" and ended without one. Its stdout are the events; on
    stderr its last line names the command that gives the full report."""
    result = cli("watch", FIXTURES / "torch_xla" / "live_batch_change" / "dump", "--until-idle", "0")
    assert result.exit_code == 0, result.output
    assert "recompiled (" in result.stdout and "report at exit" not in result.output, result.output
    path = FIXTURES / "torch_xla" / "live_batch_change" / "dump"
    # review 11, F6: stopped for --until-idle, the line says so and how much it read
    assert result.stderr.splitlines()[-1] == f"hlodiff: stopped following {path}: nothing changed for 0 s (2 " \
                                             f"graphs read); the full report: hlodiff explain-recompile {path}"
