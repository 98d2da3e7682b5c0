"""`hlodiff record -- torchrun --nproc_per_node 2 train.py` (issue 36): one capture per process, every rank explained.

The program is fixtures/torch_xla/launch_torchrun.py (rank 1 takes 4 rows instead of 2 at step 2); what a user
must read is its truth.json, written before hlodiff ran on a recording. One real torchrun run (about 30 s) serves
every test of the launcher; the rest are unit checks of the folder choice, which needs no torch.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from helpers import capture_free_env, run_hlodiff, truth_of
from hlodiff.capture import per_process
from hlodiff.dumps.debug_log import CompilationEvent, parse_debug_log

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "torch_xla" / "launch_torchrun.py"
TORCHRUN = shutil.which("torchrun", path=str(Path(sys.executable).parent))

needs_torchrun = pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None or TORCHRUN is None,
                                    reason="torch_xla and torchrun needed")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The recording of the launcher run, and what `hlodiff record` printed."""
    work = tmp_path_factory.mktemp("launch")
    shutil.copy(FIXTURE, work / FIXTURE.name)
    proc = run_hlodiff("record", "--out", "rec", "--", TORCHRUN, "--nproc_per_node", "2", FIXTURE.name,
                       cwd=work, env=capture_free_env(OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work, proc


def test_truth_line_is_the_tagged_line():
    truth = truth_of("torch_xla", "launch_torchrun")
    lines = FIXTURE.read_text().splitlines()
    assert [i + 1 for i, line in enumerate(lines) if line.endswith("# RECOMPILE")] == [truth["user_line"]]


@needs_torchrun
def test_one_capture_per_rank_nothing_mixed(recorded):
    work, _ = recorded
    truth = truth_of("torch_xla", "launch_torchrun")
    rec = work / "rec"
    # the launcher (torchrun) never touched XLA: nothing of its own in the run folder
    assert sorted(p.name for p in rec.iterdir()) == ["hlodiff-record.json", *truth["rank_folders"]]
    run = json.loads((rec / "hlodiff-record.json").read_text())
    assert [(p["folder"], p["rank"], p["captured"]) for p in run["processes"]] == [("rank0", 0, True),
                                                                                 ("rank1", 1, True)]
    assert len({p["pid"] for p in run["processes"]}) == 2
    for rank in (0, 1):
        folder = rec / f"rank{rank}"
        own = json.loads((folder / "hlodiff-record.json").read_text())
        assert own["process"]["rank"] == rank and own["process"]["identified_by"] == f"RANK={rank} as the launcher set it"
        events = parse_debug_log((folder / "pt_xla_debug.log").read_text(), path="log")
        compilations = [e for e in events if isinstance(e, CompilationEvent)]
        # rank 0 compiles its one graph; rank 1 that graph and the 4-row one (the script: rows 2, or 4 at step 2)
        assert len(compilations) == (2 if rank in truth["diverging_ranks"] else 1)
        modules = sorted((folder / "xla_dump").glob("module_*.before_optimizations.txt"))
        texts = [m.read_text() for m in modules]
        assert len(modules) == len(compilations)
        wide = [t for t in texts if "f32[4,4]" in t]  # y of the 4-row batch (4 x 4): rank 1's own graph only
        assert len(wide) == (1 if rank in truth["diverging_ranks"] else 0)


@needs_torchrun
def test_explain_names_the_diverging_rank(recorded):
    work, proc = recorded
    truth = truth_of("torch_xla", "launch_torchrun")
    explained = run_hlodiff("explain-recompile", "rec", "--json", cwd=work)
    assert explained.returncode == truth["exit_status"], explained.stderr
    doc = json.loads(explained.stdout)
    (div,) = doc["divergence"]
    assert div["ranks"] == truth["diverging_ranks"] and div["step"] == truth["diverging_step"]
    cause = div["causes"][0]
    assert cause["kind"] == truth["cause"]
    assert cause["locations"][0]["line"] == truth["user_line"]
    assert cause["locations"][0]["file"].endswith(truth["user_file"])
    text = run_hlodiff("explain-recompile", "rec", cwd=work)
    assert text.returncode == 1
    for words in truth["must_mention"]:
        assert words in text.stdout
    # record's own report says the same, and keeps the command's exit status
    assert "rank 1 diverged" in proc.stderr and f"{truth['user_file']}:{truth['user_line']}" in proc.stderr
    assert "without a compilation before it" not in proc.stderr and "pairing them in order" not in proc.stderr


@needs_torchrun
def test_inspect_by_rank_and_cost_asks_for_one(recorded):
    work, _ = recorded
    inspected = run_hlodiff("inspect", "rec", cwd=work)
    assert inspected.returncode == 0 and "rank 1" in inspected.stdout and "rank0/" in inspected.stdout
    cost = run_hlodiff("cost", "rec", cwd=work)
    assert cost.returncode == 2
    assert cost.stderr.strip().splitlines()[-1] == ("rec: error: a recording of 2 processes, one folder each "
                                                    "(rec/rank0, rec/rank1): give one of them")
    assert run_hlodiff("cost", "rec/rank1", cwd=work).returncode == 0


SPAWN_FIXTURE = FIXTURE.parent / "launch_spawn.py"


@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")
def test_torch_xla_launch_threads_read_by_ordinal(tmp_path):
    """torch_xla.launch on the CPU: one worker process, a thread per device; each ordinal's save file is a rank."""
    truth = truth_of("torch_xla", "launch_spawn")
    shutil.copy(SPAWN_FIXTURE, tmp_path / SPAWN_FIXTURE.name)
    proc = run_hlodiff("record", "--out", "rec", "--", sys.executable, SPAWN_FIXTURE.name, cwd=tmp_path,
                       env=capture_free_env(CPU_NUM_DEVICES="2"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (worker,) = json.loads((tmp_path / "rec" / "hlodiff-record.json").read_text())["processes"]
    saves = sorted(p.name for p in (tmp_path / "rec" / worker["folder"]).glob("graphs.hlo.*"))
    assert saves == [f"graphs.hlo.{i}" for i in range(truth["ranks"])]
    explained = run_hlodiff("explain-recompile", "rec", "--json", cwd=tmp_path)
    assert explained.returncode == truth["exit_status"], explained.stderr
    (div,) = json.loads(explained.stdout)["divergence"]
    assert div["ranks"] == truth["diverging_ranks"] and div["step"] == truth["diverging_step"]
    cause = div["causes"][0]
    assert cause["kind"] == truth["cause"] and cause["locations"][0]["line"] == truth["user_line"]
    assert "rank 1 diverged" in proc.stderr


JAX_FIXTURE = FIXTURE.parents[1] / "jax" / "launch_distributed.py"


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")
def test_jax_distributed_job_ranks_by_process_id(tmp_path):
    """No launcher variable names the workers at start: folders by process id, ranks by jax.distributed."""
    truth = truth_of("jax", "launch_distributed")
    shutil.copy(JAX_FIXTURE, tmp_path / JAX_FIXTURE.name)
    proc = run_hlodiff("record", "--out", "rec", "--", sys.executable, JAX_FIXTURE.name, cwd=tmp_path,
                       env=capture_free_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = json.loads((tmp_path / "rec" / "hlodiff-record.json").read_text())
    assert sorted(p["rank"] for p in run["processes"]) == list(range(truth["ranks"]))
    for p in run["processes"]:
        assert p["folder"] == f"pid{p['pid']}" and p["identified_by"].startswith(f"jax.distributed process_id={p['rank']}")
    # the launcher never imported JAX: only the workers' folders
    assert sorted(p.name for p in (tmp_path / "rec").iterdir()) == sorted(
        ["hlodiff-record.json", *(p["folder"] for p in run["processes"])])
    explained = run_hlodiff("explain-recompile", "rec", "--json", cwd=tmp_path)
    assert explained.returncode == truth["exit_status"], explained.stderr
    (div,) = json.loads(explained.stdout)["divergence"]
    assert div["ranks"] == truth["diverging_ranks"]
    cause = div["causes"][0]
    assert cause["kind"] == truth["cause"]
    assert truth["loss_line"] in [loc["line"] for loc in cause["locations"]]
    assert "rank 1 diverged" in proc.stderr and f"{truth['user_file']}:{truth['user_line']}" in proc.stderr


LAUNCHER = """\
import os, subprocess, sys
procs = [subprocess.Popen([sys.executable, "-c", "import os; os.write(1, b'worker %d' + bytes([10]))" % r],
                          env=dict(os.environ, RANK=str(r), WORLD_SIZE="2")) for r in range(2)]
sys.exit(max(p.wait() for p in procs))
"""


def test_processes_that_never_touch_xla_leave_nothing(tmp_path):
    (tmp_path / "launch.py").write_text(LAUNCHER)
    proc = run_hlodiff("record", "--out", "rec", "--", sys.executable, "launch.py", cwd=tmp_path,
                       env=capture_free_env())
    assert proc.returncode == 0, proc.stderr
    assert "worker 0" in proc.stdout and "worker 1" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "rec").iterdir()) == ["hlodiff-record.json"]
    assert "produced no graph" in proc.stderr


@pytest.mark.parametrize("env, folder, rank", [
    ({}, "", None),  # the first Python process, no rank: the run folder itself
    ({"RANK": "1", "WORLD_SIZE": "2"}, "rank1", 1),
    ({"LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "4"}, "rank3", 3),
    ({"RANK": "0", "WORLD_SIZE": "1"}, "", None),  # a one-process job keeps the one-process layout
    ({"HLODIFF_PROCESS_OWNER": "7", "HLODIFF_PROCESS_DIR": ""}, "pid42", None),  # a child of the launcher
    ({"HLODIFF_PROCESS_OWNER": "7", "HLODIFF_PROCESS_DIR": "rank1", "RANK": "1", "WORLD_SIZE": "2"},
     "rank1/pid42", None),  # a worker rank 1 spawned (it inherits RANK): inside rank 1's folder
    ({"HLODIFF_PROCESS_OWNER": "7", "RANK": "1", "WORLD_SIZE": "2", "TORCHELASTIC_RESTART_COUNT": "1"},
     "restart1/rank1", 1),  # torchrun restarted its workers: the first attempt's capture stays
])
def test_folder_choice(env, folder, rank):
    chosen, facts = per_process.choose_folder({per_process.ROOT_ENV: "/run", **env}, 42)
    assert chosen == folder and facts["rank"] == rank and facts["pid"] == 42


@pytest.mark.parametrize("name, size_name, who", per_process.RANK_VARIABLES)
def test_each_launcher_variable_names_the_rank(name, size_name, who):
    assert per_process.choose_folder({per_process.ROOT_ENV: "/run", name: "2", size_name: "4"}, 9)[0] == "rank2"
    assert per_process.choose_folder({per_process.ROOT_ENV: "/run", name: "0", size_name: "1"}, 9)[0] == ""
    assert per_process.choose_folder({per_process.ROOT_ENV: "/run", name: "x", size_name: "4"}, 9)[0] == ""


def test_not_under_record_nothing_changes():
    env = {"XLA_FLAGS": "--xla_dump_to=/run/xla_dump", "RANK": "1", "WORLD_SIZE": "2"}
    changed = dict(env)
    assert per_process.redirect(changed, pid=1, arm=False) is None and changed == env


def test_redirect_moves_hlodiff_paths_only(tmp_path):
    root = str(tmp_path / "run")
    env = {per_process.ROOT_ENV: root, "RANK": "1", "WORLD_SIZE": "2",
           "XLA_FLAGS": f"--xla_cpu_foo --xla_dump_to={root}/xla_dump --xla_dump_hlo_as_text",
           "PT_XLA_DEBUG_FILE": f"{root}/pt_xla_debug.log", "HLODIFF_TENSORS_REPORT": "/elsewhere/report.txt"}
    assert per_process.redirect(env, pid=5, arm=False) == "rank1"
    assert env["XLA_FLAGS"] == f"--xla_cpu_foo --xla_dump_to={root}/rank1/xla_dump --xla_dump_hlo_as_text"
    assert env["PT_XLA_DEBUG_FILE"] == f"{root}/rank1/pt_xla_debug.log"
    assert env["HLODIFF_TENSORS_REPORT"] == "/elsewhere/report.txt"  # the user's own path
    assert env[per_process.DIR_ENV] == "rank1" and env[per_process.OWNER_ENV] == "5"  # what its children start from


def test_clean_removes_the_processes_captures_only(tmp_path):
    from hlodiff.capture.record import clean_outputs

    run = tmp_path / "rec"
    for folder in ("rank0", "rank1", "restart1/rank1"):
        (run / folder / "xla_dump").mkdir(parents=True)
        (run / folder / "xla_dump" / "module_0000.x.txt").write_text("HloModule x")
        (run / folder / "pt_xla_debug.log").write_text("log")
        (run / folder / "hlodiff-record.json").write_text("{}")
    (run / "hlodiff-record.json").write_text("{}")
    (run / "rank1" / "notes.txt").write_text("the user's")  # not hlodiff's: kept, with its folder
    clean_outputs(run)
    assert sorted(str(p.relative_to(run)) for p in run.rglob("*")) == ["rank1", "rank1/notes.txt"]


def test_a_restarted_rank_is_read_from_its_latest_attempt(tmp_path):
    from hlodiff.dumps.ranks import find_ranks

    run = tmp_path / "rec"
    entries = [{"folder": "rank0", "rank": 0, "pid": 10, "identified_by": "RANK=0", "captured": True},
               {"folder": "rank1", "rank": 1, "pid": 11, "identified_by": "RANK=1", "captured": True},
               {"folder": "restart1/rank0", "rank": 0, "pid": 20, "identified_by": "RANK=0, attempt 2",
                "captured": True, "restart": 1},
               {"folder": "restart1/rank1", "rank": 1, "pid": 21, "identified_by": "RANK=1, attempt 2",
                "captured": True, "restart": 1},
               {"folder": "pid30", "rank": None, "pid": 30, "identified_by": "process id 30", "captured": True},
               {"folder": "pid31", "rank": None, "pid": 31, "identified_by": "process id 31", "captured": False}]
    for e in entries:
        (run / e["folder"]).mkdir(parents=True)
        (run / e["folder"] / "hlodiff-record.json").write_text("{}")
    (run / "hlodiff-record.json").write_text(json.dumps({"version": 1, "processes": entries}))
    specs = find_ranks([str(run)])
    assert [(s.rank, Path(s.paths[0]).relative_to(run).as_posix()) for s in specs] == [
        (0, "restart1/rank0"), (1, "restart1/rank1"), (2, "pid30")]  # pid31 captured nothing: not a rank
    assert specs[1].identified_by == "RANK=1, attempt 2, recorded in restart1/rank1/" and specs[1].own_folder
