"""hlodiff.capture: the capture environment, the manifest, the sync hook, ``record_command`` and the Recorder.

The ``xla`` tests run real torch_xla 2.9 on the CPU in subprocesses (the environment must be set before torch_xla
initializes), each on a tiny training script written into tmp_path: the user's program, not HLO.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hlodiff
from hlodiff.capture import capture_env, read_manifest, record_command
from hlodiff.capture.hook import drop_added_xla_dump
from hlodiff.capture.runlog import EntryCounter, count_save_entries
from hlodiff.capture.record import INJECT_DIR, clean_outputs, inject_pythonpath
from hlodiff.dumps import iter_graphs
from hlodiff.dumps.debug_log import read_compilations
from hlodiff.dumps.tensors_report import read_reports
from hlodiff.errors import HlodiffError

HAS_TORCH_XLA = importlib.util.find_spec("torch_xla") is not None
needs_torch_xla = pytest.mark.skipif(not HAS_TORCH_XLA, reason="torch_xla is not installed")

CAPTURE_VARS = ("XLA_SAVE_TENSORS_FILE", "XLA_SAVE_TENSORS_FMT", "XLA_HLO_DEBUG", "XLA_IR_DEBUG", "PT_XLA_DEBUG_LEVEL",
                "PT_XLA_DEBUG_FILE", "HLODIFF_TENSORS_REPORT", "XLA_FLAGS", "HLODIFF_XLA_DUMP_ADDED",
                "HLODIFF_REPORT_THRESHOLD", "HLODIFF_COMPILE_TIMES", "HLODIFF_JAX_LOG", "JAX_EXPLAIN_CACHE_MISSES",
                "JAX_LOG_COMPILES")


def clean_env(**extra) -> dict[str, str]:
    """The test process's environment without any capture variable (a developer may have some set)."""
    env = {k: v for k, v in os.environ.items() if k not in CAPTURE_VARS and k != "PYTHONPATH"}
    env.update(PJRT_DEVICE="CPU", TF_CPP_MIN_LOG_LEVEL="2")
    env.update(extra)
    return env


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def pure_device_data(tensor) -> bool:
    return len(tensor.ir) == 1 and tensor.ir[0].op == "xla::device_data"


# ---------------------------------------------------------------------------------------------------------------
# environment and manifest
# ---------------------------------------------------------------------------------------------------------------

def test_importing_capture_imports_no_torch():
    code = ("import sys, hlodiff.capture as c; c.capture_env; c.Recorder; c.record_command; c.install_sync_hook; "
            "bad = [m for m in ('torch', 'torch_xla', 'jax') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, env=clean_env())


def test_capture_env_defaults(tmp_path):
    out = tmp_path / "rec"
    env = capture_env(out, base_env={"HOME": "/home/u"})
    paths = env.paths
    assert env["HOME"] == "/home/u"
    # the cheap capture: no save file (HLO of every step); HLO of compiled graphs from XLA's dump, every execution
    # from the PT_XLA_DEBUG_LEVEL=2 log
    assert "XLA_SAVE_TENSORS_FILE" not in env and paths.capture == "executions"
    assert (env["XLA_HLO_DEBUG"], env["XLA_IR_DEBUG"], env["PT_XLA_DEBUG_LEVEL"]) == ("1", "1", "2")
    assert env["PT_XLA_DEBUG_FILE"] == str(out / "pt_xla_debug.log")
    assert env["HLODIFF_TENSORS_REPORT"] == str(out / "tensors_report.txt")
    assert env["HLODIFF_COMPILE_TIMES"] == str(out / "compile_times.tsv")
    assert (env["JAX_EXPLAIN_CACHE_MISSES"], env["JAX_LOG_COMPILES"], env["HLODIFF_JAX_LOG"]) == \
        ("1", "1", str(out / "jax.log"))
    assert env["XLA_FLAGS"] == f"--xla_dump_to={out / 'xla_dump'} --xla_dump_hlo_as_text --xla_dump_hlo_as_proto"
    assert "HLODIFF_XLA_DUMP_ADDED" not in env  # torch_xla keeps the dump: it is where compiled HLO comes from
    assert paths.save_tensors_file is None
    assert paths.xla_dump == str(out / "xla_dump") and paths.user_set == {} and paths.warnings == []
    assert env["TORCH_TRACE"] == str(out / "torch_trace")  # Dynamo's structured log (issue 31)
    assert sorted(paths.owned) == sorted(str(out / n) for n in ("pt_xla_debug.log", "tensors_report.txt",
                                                                "compile_times.tsv", "jax.log", "xla_dump",
                                                                "torch_trace"))
    # the manifest: relative inside the folder, so the folder can move
    raw = json.loads((out / "hlodiff-record.json").read_text())
    assert raw["capture"] == "executions" and raw["xla_dump"] == "xla_dump" and raw["out_dir"] == "."
    assert raw["compile_times"] == "compile_times.tsv" and raw["jax_log"] == "jax.log"
    assert read_manifest(out) == paths
    moved = tmp_path / "moved"
    out.rename(moved)
    assert read_manifest(moved / "hlodiff-record.json").tensors_report == str(moved / "tensors_report.txt")
    assert "XLA_FLAGS" not in capture_env(tmp_path / "nodump", base_env={}, xla_dump=False)


def test_capture_env_keeps_what_the_user_set(tmp_path):
    (tmp_path / "work").mkdir()
    base = {"XLA_SAVE_TENSORS_FILE": "mine/g.hlo", "PT_XLA_DEBUG_LEVEL": "2", "PT_XLA_DEBUG_FILE": "",
            "XLA_FLAGS": "--xla_cpu_enable_fast_math=false --xla_dump_to=/dumps/here", "XLA_IR_DEBUG": "0"}
    env = capture_env(tmp_path / "out", base_env=base, cwd=tmp_path / "work")
    paths = env.paths
    assert env["XLA_SAVE_TENSORS_FILE"] == "mine/g.hlo" and env["PT_XLA_DEBUG_LEVEL"] == "2"
    assert paths.save_tensors_file == str(tmp_path / "work" / "mine" / "g.hlo.0")  # resolved where the run starts
    assert env["PT_XLA_DEBUG_FILE"] == str(tmp_path / "out" / "pt_xla_debug.log")  # empty counts as unset
    # the user's dump, in text and proto too
    assert env["XLA_FLAGS"] == base["XLA_FLAGS"] + " --xla_dump_hlo_as_text --xla_dump_hlo_as_proto"
    assert paths.xla_dump == "/dumps/here" and "HLODIFF_XLA_DUMP_ADDED" not in env
    assert paths.capture == "save_tensors"  # a save file the user asked for is what the run is read from
    assert set(paths.user_set) == {"XLA_SAVE_TENSORS_FILE", "PT_XLA_DEBUG_LEVEL", "XLA_FLAGS", "XLA_IR_DEBUG"}
    assert paths.save_tensors_file not in paths.owned and "/dumps/here" not in paths.owned
    assert any("XLA_IR_DEBUG=0" in w for w in paths.warnings)
    quoted = capture_env(tmp_path / "with space", base_env={"XLA_FLAGS": "--xla_foo=1"})["XLA_FLAGS"]
    assert quoted == (f'--xla_foo=1 --xla_dump_to="{tmp_path / "with space" / "xla_dump"}" --xla_dump_hlo_as_text '
                      '--xla_dump_hlo_as_proto')


def test_dump_flags_are_taken_back_in_torch_xla_processes(monkeypatch):
    added = "--xla_dump_to=/o/xla_dump --xla_dump_hlo_as_text"
    monkeypatch.setenv("XLA_FLAGS", "--xla_a=1 " + added)
    monkeypatch.setenv("HLODIFF_XLA_DUMP_ADDED", added)
    monkeypatch.setitem(sys.modules, "jax", object())
    assert not drop_added_xla_dump()  # JAX may still want them
    monkeypatch.delitem(sys.modules, "jax")
    monkeypatch.delitem(sys.modules, "jaxlib", raising=False)
    assert drop_added_xla_dump()
    assert os.environ["XLA_FLAGS"] == "--xla_a=1" and "HLODIFF_XLA_DUMP_ADDED" not in os.environ


def test_entry_counter_is_incremental_and_survives_rewrites(tmp_path):
    save = tmp_path / "graphs.hlo.0"
    counter = EntryCounter(str(save))
    assert counter.count() == 0
    entry = "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (a.py:1)\n\n## BEGIN_GRAPH\nbody\n## END_GRAPH\n\n"
    save.write_text(entry * 2)
    assert counter.count() == 2
    with save.open("a") as f:
        f.write(entry + "[ScheduleSync")  # a header still being written is not counted yet
    assert counter.count() == 3
    with save.open("a") as f:
        f.write("TensorsGraph]\nrest\n")
    assert counter.count() == 4
    save.write_text(entry)  # replaced by a shorter file: counted again
    assert counter.count() == 1 and count_save_entries(save) == 1


def test_clean_outputs_only_touches_hlodiff_names(tmp_path):
    for name in ("graphs.hlo.0", "graphs.hlo.1", "pt_xla_debug.log", "tensors_report.txt", "hlodiff-record.json",
                 "graphs.hlo.0.bak", "notes.txt", "xla_dump/module_0000.txt"):
        write(tmp_path / name, "x\n")
    removed = clean_outputs(tmp_path)
    assert sorted(Path(p).name for p in removed) == sorted(
        ["graphs.hlo.0", "graphs.hlo.1", "pt_xla_debug.log", "tensors_report.txt", "hlodiff-record.json", "xla_dump"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graphs.hlo.0.bak", "notes.txt"]


def test_inject_pythonpath_goes_first_once():
    assert inject_pythonpath(None) == INJECT_DIR
    assert inject_pythonpath(f"/a{os.pathsep}{INJECT_DIR}{os.pathsep}/b") == os.pathsep.join([INJECT_DIR, "/a", "/b"])


FAKE_SYNC = """
import sys
def sync(wait=False, reset_scope=True):
  torch_xla._XLAC._xla_step_marker(torch_xla._XLAC._xla_get_default_device(), [], wait=wait)
  if xm.is_master_ordinal():
    pass
"""


def test_frame_neutral_sync_copy_runs_the_hook_outside_torch_xlas_stack():
    """The mechanism on a stand-in shaped like torch_xla 2.9's sync: the report is taken when the step marker is
    looked up, the sync is closed when xm.is_master_ordinal is, and the step marker runs with sync's own frame
    innermost (torch_xla reads that stack)."""
    import types

    from hlodiff.capture import hook

    events = []
    namespace = {}
    exec(compile(FAKE_SYNC, "/site-packages/torch_xla/torch_xla.py", "exec"), namespace)
    original = namespace["sync"]

    def step_marker(device, tensors, wait=False):
        events.append(("marker", device, sys._getframe(1).f_code is original.__code__))

    namespace["torch_xla"] = types.SimpleNamespace(_XLAC=types.SimpleNamespace(
        _xla_step_marker=step_marker, _xla_get_default_device=lambda: "xla:0"))
    namespace["xm"] = types.SimpleNamespace(is_master_ordinal=lambda: events.append(("master",)) or True)

    class State:
        def before(self, api=None):  # the api is looked up by the state itself, only when it writes a report
            events.append(("before", api or self.caller_api()))

        def after(self):
            events.append(("after",))

        def caller_api(self):
            return "torch_xla.sync"

    copy = hook._frame_neutral_sync(original, State())
    assert copy is not None and copy.__code__ is original.__code__ and copy.__wrapped__ is original
    copy()
    assert events == [("before", "torch_xla.sync"), ("marker", "xla:0", True), ("after",), ("master",)]
    # another shape: no copy (install_sync_hook then falls back to a plain wrapper)
    exec(compile("def sync():\n  xm.is_master_ordinal()\n  torch_xla._XLAC._xla_step_marker()\n", "x.py", "exec"),
         namespace)
    assert hook._frame_neutral_sync(namespace["sync"], State()) is None


# ---------------------------------------------------------------------------------------------------------------
# record_command without torch_xla
# ---------------------------------------------------------------------------------------------------------------

def test_record_runs_a_script_without_torch_xla_unchanged(tmp_path, capfd):
    """No torch_xla import, exit status passed through, the user's own sitecustomize still runs."""
    usersite = write(tmp_path / "usersite" / "sitecustomize.py", """
        import os
        os.environ["USER_SITECUSTOMIZE"] = "ran"
    """).parent
    script = write(tmp_path / "plain.py", """
        import os, sys
        print("args", sys.argv[1:], os.environ.get("USER_SITECUSTOMIZE"))
        print("loaded", sorted(m for m in ("torch", "torch_xla", "hlodiff.capture.hook") if m in sys.modules))
        print("watcher", [type(f).__name__ for f in sys.meta_path if type(f).__name__ == "ImportWatcher"])
        sys.exit(3)
    """)
    result = record_command([sys.executable, str(script), "--lr", "0.1"], tmp_path / "out",
                            base_env=clean_env(PYTHONPATH=str(usersite)))
    out = capfd.readouterr().out
    assert result.returncode == 3 and result.exit_status == 3 and not result.ok
    assert "args ['--lr', '0.1'] ran" in out
    assert "loaded ['hlodiff.capture.hook']" in out  # only the small stdlib-only hook module, never torch
    assert "watcher ['ImportWatcher']" in out
    paths = read_manifest(tmp_path / "out")
    assert paths.returncode == 3 and paths.command == [sys.executable, str(script), "--lr", "0.1"]
    assert paths.save_tensors_file is None and paths.tensors_report is None and paths.xla_dump is None


def test_record_plain_executable_and_module(tmp_path, capfd):
    probe = tmp_path / "probe.txt"
    result = record_command(["sh", "-c", f'printf "%s\\n%s\\n" "$XLA_FLAGS" "$XLA_SAVE_TENSORS_FILE" > {probe}'],
                            tmp_path / "out", base_env=clean_env(XLA_FLAGS="--xla_x=1"))
    assert result.ok
    flags, save = probe.read_text().splitlines()
    assert flags == f"--xla_x=1 --xla_dump_to={tmp_path / 'out' / 'xla_dump'} --xla_dump_hlo_as_text " \
                    "--xla_dump_hlo_as_proto"
    assert save == ""  # no save file: its cost is paid at every step
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "main.py", 'import sys\nprint("module ran", __name__, sys.argv[1:])\n')
    with pytest.raises(HlodiffError, match="holds an earlier recording"):  # never replaced unless asked
        record_command(["true"], tmp_path / "out", base_env=clean_env())
    result = record_command([sys.executable, "-m", "pkg.main", "x"], tmp_path / "out", cwd=tmp_path,
                            base_env=clean_env(), clean=True)
    assert result.ok and "module ran __main__ ['x']" in capfd.readouterr().out


def test_injected_hook_loads_without_an_importable_hlodiff(tmp_path, capfd):
    """A child interpreter where hlodiff cannot be imported still arms the (stdlib-only) hook, loaded by path."""
    write(tmp_path / "shadow" / "hlodiff" / "__init__.py", 'raise ImportError("not this hlodiff")\n')
    code = ("import sys; print('mods', sorted(m for m in sys.modules if 'hlodiff' in m and 'editable' not in m), "
            "[type(f).__name__ for f in sys.meta_path][:1])")
    result = record_command([sys.executable, "-c", code], tmp_path / "out",
                            base_env=clean_env(PYTHONPATH=str(tmp_path / "shadow")))
    assert result.ok and "mods ['hlodiff_capture_hook', 'hlodiff_capture_import_watch'] ['ImportWatcher']" in capfd.readouterr().out


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_record_a_jax_program(tmp_path, capfd):
    script = write(tmp_path / "jx.py", """
        import jax, jax.numpy as jnp
        step = jax.jit(lambda w, x: jnp.tanh(x @ w).sum())
        w = jnp.ones((8, 4))
        print("jax", float(step(w, jnp.ones((2, 8)))), float(step(w, jnp.ones((3, 8)))))
    """)
    result = record_command([sys.executable, str(script)], tmp_path / "out", base_env=clean_env(JAX_PLATFORMS="cpu"))
    assert result.ok and "jax" in capfd.readouterr().out
    paths = read_manifest(tmp_path / "out")
    assert paths.xla_dump == str(tmp_path / "out" / "xla_dump") and paths.save_tensors_file is None
    names = [g.module_name for g in iter_graphs(paths.xla_dump)]
    assert names.count("jit__lambda") == 2  # the shape change compiled a second module
    # JAX's own compile log (JAX_LOG_COMPILES, JAX_EXPLAIN_CACHE_MISSES) is kept beside the dump
    log = Path(paths.jax_log).read_text()
    assert paths.jax_log == str(tmp_path / "out" / "jax.log") and log.count("Compiling jit(<lambda>)") == 2
    assert "Finished XLA compilation of jit(<lambda>)" in log


def test_record_reports_a_missing_command(tmp_path):
    with pytest.raises(HlodiffError, match="cannot run"):
        record_command([str(tmp_path / "no-such-program")], tmp_path / "out", base_env=clean_env())
    with pytest.raises(HlodiffError, match="no command"):
        record_command([], tmp_path / "out")


def test_configure_process_env_and_cleanup(tmp_path, monkeypatch):
    from hlodiff.capture import cleanup, configure_process_env
    from hlodiff.capture.import_watch import ImportWatcher

    for name in CAPTURE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PT_XLA_DEBUG_FILE", str(tmp_path / "my.log"))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    out = tmp_path / "session"
    paths = configure_process_env(out)
    try:
        assert os.environ["PT_XLA_DEBUG_LEVEL"] == "2" and "XLA_SAVE_TENSORS_FILE" not in os.environ
        assert os.environ["PT_XLA_DEBUG_FILE"] == paths.debug_log == str(tmp_path / "my.log")
        if "torch_xla" not in sys.modules:
            assert any(isinstance(f, ImportWatcher) for f in sys.meta_path)
        for p in (out / "compile_times.tsv", out / "tensors_report.txt", tmp_path / "my.log",
                  out / "xla_dump" / "module_0000.x.txt"):
            write(p, "written by the run\n")
        (out / "mine.txt").write_text("not hlodiff's\n")
    finally:
        removed = cleanup(paths)
    assert sorted(Path(p).name for p in removed) == ["compile_times.tsv", "hlodiff-record.json", "tensors_report.txt",
                                                     "xla_dump"]
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"] and (tmp_path / "my.log").exists()
    assert "PT_XLA_DEBUG_LEVEL" not in os.environ and os.environ["PT_XLA_DEBUG_FILE"] == str(tmp_path / "my.log")
    assert not any(isinstance(f, ImportWatcher) for f in sys.meta_path)


# ---------------------------------------------------------------------------------------------------------------
# real torch_xla runs
# ---------------------------------------------------------------------------------------------------------------

TRAIN = """
    import torch, torch_xla
    import torch_xla.core.xla_model as xm

    dev = torch_xla.device()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 8).to(dev), torch.randn(4, 4).to(dev)
    for step in range(4):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        if step == 1:
            print("loss", round(loss.item(), 3))  # ITEM: executes a graph of its own
        loss.backward()
        opt.step()
        if step == 2:
            xm.mark_step()  # MARK_STEP
        else:
            torch_xla.sync()  # SYNC
    torch_xla.sync()  # nothing pending: no entry, no report
    print("done")
"""


def line_of(script: Path, tag: str) -> int:
    return next(i for i, line in enumerate(script.read_text().splitlines(), 1) if f"# {tag}" in line.split(":  ")[0]
                or line.rstrip().endswith(f"# {tag}") or f"# {tag}:" in line)


def output_count(record) -> int:
    root = record.module().entry.root.shape
    return len(root.tuple_shapes) if root.is_tuple else 1


@pytest.mark.xla
@needs_torch_xla
def test_record_a_training_run(tmp_path, capfd):
    script = write(tmp_path / "train.py", TRAIN)
    result = record_command([sys.executable, str(script)], tmp_path / "out", base_env=clean_env(), cwd=tmp_path)
    stdout = capfd.readouterr().out
    assert result.ok, stdout
    assert "done" in stdout
    out = tmp_path / "out"
    paths = read_manifest(out)
    assert paths == result.paths
    assert paths.capture == "executions" and paths.save_tensors_file is None and not list(out.glob("graphs.hlo*"))

    # every execution, cache hits too: sync 0 | item, sync 1 | mark_step 2 | sync 3; the last, empty sync ran nothing
    graphs = list(iter_graphs(out))
    assert len(graphs) == 5 and all(g.kind == "executions" for g in graphs)
    sync_line, item_line, mark_line = line_of(script, "SYNC"), line_of(script, "ITEM"), line_of(script, "MARK_STEP")
    user = [next(f for f in g.frames if f.file == str(script)) for g in graphs]
    assert [f.line for f in user] == [sync_line, item_line, sync_line, mark_line, sync_line]
    # the hook is frame-neutral: torch_xla records exactly the stack it would without hlodiff (no frame inside the
    # hlodiff package; the checkout's folder may well be called hlodiff, with the venv and torch_xla inside it)
    package = str(Path(hlodiff.__file__).resolve().parent) + os.sep
    assert not [f.file for g in graphs for f in g.frames if os.path.realpath(f.file).startswith(package)]
    for i in (0, 2, 4):
        assert [(f.function, Path(f.file).name) for f in graphs[i].frames] == [("sync", "torch_xla.py"),
                                                                              ("<module>", "train.py")]
    assert [f.function for f in graphs[3].frames[:2]] == ["sync", "mark_step"]
    assert [f.function for f in graphs[1].frames] == ["<module>"]
    # HLO only for what compiled: the step graph and the .item() fragment; the rest of step 1 after the .item()
    # traced the whole step again (a cache hit of entry 0), as in the item_partial fixture
    assert len({g.graph_hash for g in graphs}) == 2
    assert len(list((out / "xla_dump").glob("module_*.before_optimizations.txt"))) == 2
    assert len(list((out / "xla_dump").glob("module_*.before_optimizations.hlo.pb"))) == 2
    assert [g.module_number for g in graphs] == [0, 1, 0, 0, 0]
    assert graphs[0].module().name.startswith("SyncTensorsGraph")

    # record's default policy draws graph boundaries: a report at every sync until the run repeats itself (this
    # short run never does), none at the .item() (not a sync); numbered by execution, not by sync
    warnings = []
    reports = read_reports(paths.tensors_report, warnings)
    assert warnings == []
    assert [r.sync for r in reports] == [0, 2, 3, 4]
    assert [r.get("api") for r in reports] == ["torch_xla.sync", "torch_xla.sync", "xm.mark_step", "torch_xla.sync"]
    assert [r.get("call") for r in reports] == ["0", "1", "2", "3"]
    for report in reports:
        pending = [t for t in report.tensors if not pure_device_data(t)]
        assert len(pending) == output_count(graphs[report.sync]) > 1  # one pending tensor per graph output
        assert all(t.frames[-1].function == "<module>" and t.frames[-1].file == str(script) for t in pending)

    # debug log: every compilation links to an execution by Graph Hash, causes as without hlodiff
    compilations = read_compilations(paths.debug_log)
    by_hash = {g.graph_hash: g for g in graphs}
    assert len(compilations) == 2 and all(c.graph_hash in by_hash for c in compilations)
    causes = {c.graph_hash: c.cause for c in compilations}
    assert causes[graphs[0].graph_hash] == "user torch_xla.sync"
    assert causes[graphs[1].graph_hash].startswith("most likely user code trying to access tensor value")
    assert all(output_count(by_hash[c.graph_hash]) == c.num_outputs for c in compilations)

    # compile times: one line per compilation, in order, with its graph hash and the execution it preceded
    lines = [line.split("\t") for line in (out / "compile_times.tsv").read_text().splitlines()]
    assert lines[0] == ["compilation", "graph_hash", "seconds", "execution"]
    assert [(k, h, e) for k, h, _, e in lines[1:]] == [("0", graphs[0].graph_hash, "0"),
                                                       ("1", graphs[1].graph_hash, "1")]
    assert all(0 < float(seconds) < 60 for _, _, seconds, _ in lines[1:])


@pytest.mark.xla
@needs_torch_xla
def test_record_respects_a_user_save_file_and_runs_modules(tmp_path, capfd):
    write(tmp_path / "proj" / "trainer.py", """
        import torch, torch_xla
        x = torch.ones(3, device=torch_xla.device())
        for step in range(2):
            x = x * 2 + step
            torch_xla.sync()
        print("trainer", (x + 1).cpu().tolist())
    """)
    env = clean_env(XLA_SAVE_TENSORS_FILE="mine/graphs.txt", HLODIFF_REPORT_THRESHOLD="1")
    result = record_command([sys.executable, "-m", "trainer"], tmp_path / "out", base_env=env, cwd=tmp_path / "proj")
    assert result.ok and "trainer [6.0, 6.0, 6.0]" in capfd.readouterr().out
    mine = tmp_path / "proj" / "mine" / "graphs.txt.0"
    paths = read_manifest(tmp_path / "out")
    assert paths.save_tensors_file == str(mine) and paths.user_set["XLA_SAVE_TENSORS_FILE"] == "mine/graphs.txt"
    assert not list((tmp_path / "out").glob("graphs.hlo*"))
    graphs = list(iter_graphs(mine))
    assert len(graphs) == 3  # two syncs and (x + 1).cpu()
    reports = read_reports(paths.tensors_report)
    assert [r.sync for r in reports] == [0, 1]
    # threshold 1 from HLODIFF_REPORT_THRESHOLD: no pure device-data tensor listed
    assert all(not pure_device_data(t) for r in reports for t in r.tensors)
    assert [len(r.tensors) for r in reports] == [len(graphs[r.sync].root_hashes) for r in reports]


RECORDER = """
    import json, os, sys
    from hlodiff.capture import Recorder, cleanup, configure_process_env, install_sync_hook, uninstall_sync_hook
    from hlodiff.capture import hook

    paths = configure_process_env(sys.argv[1])
    res = {"torch_before": "torch" in sys.modules}
    import torch, torch_xla
    import torch_xla.core.xla_model as xm

    res["installed"], res["mode"] = hook.sync_hook_installed(), hook.hook_mode()
    patched = torch_xla.sync
    res["module_patched"] = sys.modules["torch_xla.torch_xla"].sync is patched
    res["again"] = install_sync_hook(paths.tensors_report)
    # a second copy of the hook module (as the injected sitecustomize may load it) does not wrap again either
    import importlib.util
    spec = importlib.util.spec_from_file_location("hook_copy", hook.__file__)
    copy = importlib.util.module_from_spec(spec); spec.loader.exec_module(copy)
    res["copy_again"] = copy.install_sync_hook(paths.tensors_report)
    res["same"] = torch_xla.sync is patched

    x = torch.ones(3, device=torch_xla.device())
    (x * 2).sum(); torch_xla.sync()                       # entry 0, outside any recording
    with Recorder() as rec:
        z = (x * 3).sum()
        print("item", z.item())                          # entry 1
        w = (x + 1).sum(); xm.mark_step()                # entry 2
    r = rec.recording
    res["r_entries"] = list(r.entries)
    res["r_refs"] = [ref.rsplit("/", 1)[1] for ref in r.refs]
    res["r_reports"] = [(rep.sync, rep.get("api")) for rep in r.reports()]
    res["r_graphs"] = [g.index for g in r.graphs()]
    res["r_compilations"] = len(r.compilations())
    res["r_pending"] = [len([t for t in rep.tensors if t.ir_nodes > 1]) for rep in r.reports()]
    root = r.graphs()[-1].module().entry.root.shape
    res["r_roots"] = [len(root.tuple_shapes) if root.is_tuple else 1]
    empty = Recorder().start()
    torch_xla.sync()                                     # nothing pending
    e = empty.stop()
    res["empty"] = [list(e.entries), e.report_text(), e.reports()]

    res["uninstalled"] = uninstall_sync_hook()
    res["restored"] = torch_xla.sync is patched._hlodiff_original
    res["restored_module"] = sys.modules["torch_xla.torch_xla"].sync is patched._hlodiff_original
    res["uninstalled_again"] = uninstall_sync_hook()
    removed = cleanup(paths)
    res["removed"] = sorted(os.path.basename(p) for p in removed)
    res["left"] = os.path.exists(sys.argv[1])
    res["env_restored"] = "PT_XLA_DEBUG_LEVEL" not in os.environ and "HLODIFF_TENSORS_REPORT" not in os.environ
    print("RESULT " + json.dumps(res))
"""


@pytest.mark.xla
@needs_torch_xla
def test_recorder_in_process(tmp_path):
    script = write(tmp_path / "recorder.py", RECORDER)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "session")], env=clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))[7:])
    assert res["torch_before"] is False
    assert res["installed"] and res["mode"] == "frame-neutral" and res["module_patched"]
    assert res["again"] is False and res["copy_again"] is False and res["same"]
    assert res["r_entries"] == [1, 2] and res["r_refs"] == ["session#1", "session#2"]
    assert res["r_reports"] == [[2, "xm.mark_step"]]  # one report for mark_step: no double report via sync
    assert res["r_graphs"] == [1, 2] and res["r_compilations"] == 2
    assert res["r_pending"] == res["r_roots"]
    assert res["empty"] == [[], "", []]
    assert res["uninstalled"] and res["restored"] and res["restored_module"] and not res["uninstalled_again"]
    assert res["removed"] == ["compile_times.tsv", "hlodiff-record.json", "pt_xla_debug.log", "session",
                              "tensors_report.txt", "xla_dump"]
    assert not res["left"] and res["env_restored"]
