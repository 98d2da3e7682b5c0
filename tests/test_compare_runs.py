"""compare-runs on real pairs of runs against one persistent cache (issue 35): each pair's truth.json, written by
the fixture script from JAX's monitoring events / torch_xla's metrics counters before hlodiff read the pair, says
per program of run B what happened (verdict, reason, line) and what the fix must and must not say."""

from __future__ import annotations

import json
from pathlib import Path
import shutil

import pytest

from helpers import FIXTURES, cli, cli_json, truth_of

PAIRS = sorted(p.parent for p in FIXTURES.glob("*/cache_*/truth.json"))


def _id(folder) -> str:
    return str(folder.relative_to(FIXTURES))


def _run(folder, *extra, codes=None):
    return cli_json("compare-runs", str(folder / "run_a"), str(folder / "run_b"), *extra, codes=codes)


def test_every_pair_is_here():
    assert {_id(p) for p in PAIRS} >= {"jax/cache_hit", "jax/cache_threshold", "jax/cache_xla_flag",
                                       "jax/cache_xla_flag_keylog", "jax/cache_entry_size", "jax/cache_callback",
                                       "jax/cache_no_cache",
                                       "jax/cache_seed", "jax/cache_late", "torch_xla/cache_reload",
                                       "torch_xla/cache_seed"}


@pytest.mark.parametrize("folder", PAIRS, ids=_id)
def test_exit_status_and_headline_follow_the_truth(folder):
    t = truth_of(folder)
    doc = _run(folder, codes=(t["exit_status"],))
    if t["headline"] is None:
        assert doc["headline"] is None and doc["recompiled"] == 0
        assert "loaded all" in doc["summary"]
    else:
        assert (doc["headline"]["verdict"], doc["headline"]["reason"]) == (t["headline"]["verdict"],
                                                                           t["headline"]["reason"])
    assert doc["schema"] == "hlodiff.compare-runs/1" and doc["framework"] == t["framework"]


@pytest.mark.parametrize("folder", PAIRS, ids=_id)
def test_each_program_of_run_b_gets_its_verdict(folder):
    t = truth_of(folder)
    doc = _run(folder, codes=(t["exit_status"],))
    got = {c["program"]: c for c in doc["compilations"]}
    for p in t["programs"]:
        c = got[p.get("module") or p["graph_hash"]]
        assert (c["verdict"], c["reason"]) == (p["verdict"], p["reason"]), c["text"]
        for word in p.get("fix_must", ()):
            assert word in c["fix"], (word, c["fix"])
        for word in p.get("fix_must_not", ()):
            assert word not in (c["fix"] or ""), (word, c["fix"])
        if "key_components" in p:  # JAX's own hashes of the key's inputs, read by the script from both logs
            assert c["key_components"] == p["key_components"]
            assert c["differences"][0] == {"source": "XLA_FLAGS", "name": p["flag"], "a": None, "b": "true"}
        if p.get("reason") == "cache_configured_late":  # the call to move after the configuration
            assert c["called_at"]["line"] == p["call_line"]
        if "user_line" in p:
            location = c["cause"]["location"]
            assert location["file"].endswith(t["user_file"]) and location["line"] == p["user_line"]


def test_threshold_names_the_threshold_and_the_compile_time():
    folder = FIXTURES / "jax" / "cache_threshold"
    doc = _run(folder, codes=(1,))
    step = next(c for c in doc["compilations"] if c["program"] == "jit_step")
    assert step["threshold"] == 1.0 and 0 < step["measured"] < 1.0
    assert step["key_a"] == step["key_b"] and step["entry_in_cache"] is False  # the cache stayed empty
    assert "jax_persistent_cache_min_compile_time_secs (1.00 s)" in doc["summary"]
    assert doc["compile_seconds"] > 0 and doc["headline"]["count"] == 2


def test_xla_flag_names_the_flag_and_both_values():
    doc = _run(FIXTURES / "jax" / "cache_xla_flag", codes=(1,))
    for c in doc["compilations"]:
        assert c["key_a"] != c["key_b"]
        assert {"source": "debug_options", "name": "xla_cpu_enable_fast_math", "a": None, "b": "true"} in \
            c["differences"]
    assert "XLA option xla_cpu_enable_fast_math is true in run B, not set in run A" in doc["summary"]
    # the dump's debug_options cannot tell XLA_FLAGS from jax.jit(compiler_options=...): the fix names both
    assert "XLA_FLAGS" in doc["headline"]["fix"] and "compiler_options" in doc["headline"]["fix"]
    keylog = _run(FIXTURES / "jax" / "cache_xla_flag_keylog", codes=(1,))  # JAX's key log names XLA_FLAGS itself
    assert "XLA flag --xla_cpu_enable_fast_math is true in run B" in keylog["summary"]
    assert "compiler_options" not in keylog["headline"]["fix"]


def test_terminal_report_leads_with_the_reason_and_the_fix():
    result = cli("compare-runs", str(FIXTURES / "jax" / "cache_seed" / "run_a"),
                 str(FIXTURES / "jax" / "cache_seed" / "run_b"), codes=(1,))
    lines = result.stdout.splitlines()
    line = truth_of("jax", "cache_seed")["programs"][0]["user_line"]
    # the folders as named; another baked seed is a program run A never compiled, not one it had (review 22, F3)
    assert lines[0].startswith("run_b compiled 1 program run_a never compiled")
    assert f"cache_pairs.py:{line}" in lines[0] and lines[1].startswith("fix: ")
    assert any("jit_evaluate" in line and "loaded from the cache" in line for line in lines)


def test_the_cache_folder_given_decides_whether_the_entry_is_there(tmp_path):
    """A real cache folder (not a listing) is read by its entry names: with A's entries in it, B's miss of the same
    key says the entry is there; an empty folder says it is not."""
    folder = FIXTURES / "jax" / "cache_hit"
    t = truth_of(folder)
    cache = tmp_path / "jax_cache"
    cache.mkdir()
    empty = _run(folder, "--cache", str(cache), codes=(t["exit_status"],))
    assert [c["entry_in_cache"] for c in empty["compilations"]] == [False, False]
    for line in (folder / "run_a" / "cache_listing.txt").read_text().split("\n"):
        if line:
            (cache / line.split()[1]).write_bytes(b"x")
    full = _run(folder, "--cache", str(cache))
    assert [c["entry_in_cache"] for c in full["compilations"]] == [True, True]


def test_bad_input_is_one_line_and_status_2(tmp_path):
    result = cli("compare-runs", str(tmp_path / "nothing"), str(FIXTURES / "jax" / "cache_hit" / "run_b"),
                 codes=(2,))
    assert result.stderr.count("\n") == 1 and "nothing" in result.stderr
    listing = tmp_path / "listing.txt"
    listing.write_text("hello world\n")
    result = cli("compare-runs", str(FIXTURES / "jax" / "cache_hit" / "run_a"),
                 str(FIXTURES / "jax" / "cache_hit" / "run_b"), "--cache", str(listing), codes=(2,))
    assert "listing.txt:1" in result.stderr and "not a compilation cache listing" in result.stderr


@pytest.mark.parametrize("name", ["cache_hit", "cache_threshold", "cache_xla_flag", "cache_seed"])
def test_dumps_alone_give_what_they_can_and_say_what_they_cannot(tmp_path, name):
    """Runs captured without their stderr: a program dumped only after optimizations was loaded, options and HLO
    still name a differing flag or a baked value, but why an entry of the same program was not written is not
    in a dump: hlodiff says it does not know rather than guess the threshold."""
    for run in ("run_a", "run_b"):
        shutil.copytree(FIXTURES / "jax" / name / run, tmp_path / run)
        (tmp_path / run / "stderr.log").unlink()
    t = truth_of("jax", name)
    result = cli("compare-runs", str(tmp_path / "run_a"), str(tmp_path / "run_b"), "--json", codes=(t["exit_status"],))
    doc = json.loads(result.stdout)
    assert sum("no JAX log here" in w for w in doc["warnings"]) == 2
    got = {c["program"]: c for c in doc["compilations"]}
    for p in t["programs"]:
        c = got[p["module"]]
        if p["reason"] == "below_compile_time":
            assert (c["verdict"], c["reason"]) == ("miss_same_key", "unknown")
            assert "JAX_EXPLAIN_CACHE_MISSES=1" in c["text"] and c["threshold"] is None
        else:
            assert (c["verdict"], c["reason"]) == (p["verdict"], p["reason"])


PROGRAM = """import jax, jax.numpy as jnp, numpy as np
@jax.jit
def f(x):
    return jnp.tanh(x).sum()
print(f(np.ones((4, 8), np.float32)))
"""


def test_two_recordings_stand_alone(tmp_path):
    """`record` notes the cache settings it sees, the framework versions and, after the run, the cache's entries:
    two recordings against one cache compare without any cache folder given, and the second one hit."""
    import sys

    from helpers import capture_free_env, run_hlodiff

    (tmp_path / "prog.py").write_text(PROGRAM)
    cache = tmp_path / "cache"
    env = capture_free_env(JAX_PLATFORMS="cpu", JAX_COMPILATION_CACHE_DIR=str(cache),
                           JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    for run in ("a", "b"):
        proc = run_hlodiff("record", "-q", "--out", f"run_{run}", "--", sys.executable, "prog.py", cwd=tmp_path,
                           env=env)
        assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "run_a" / "hlodiff-record.json").read_text())
    import jax

    assert manifest["versions"]["jax"] == jax.__version__
    assert manifest["cache_settings"] == {"JAX_COMPILATION_CACHE_DIR": str(cache),
                                          "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"}
    assert sorted(manifest["cache_entries"]) == sorted(p.name for p in cache.iterdir())
    doc = cli_json("compare-runs", str(tmp_path / "run_a"), str(tmp_path / "run_b"), codes=(0,))
    assert [(c["program"], c["verdict"], c["entry_in_cache"]) for c in doc["compilations"]] == \
        [("jit_f", "hit", True)]


def test_a_listing_made_with_ls_l_or_find_reads_as_the_folder(tmp_path):
    """The cache as users list it: `ls -l DIR` (size in the fifth column, a date after it) or
    `find DIR -type f -printf '%s %f\\n'`; both give the entries and sizes of the folder itself."""
    import subprocess

    from hlodiff.dumps.compile_cache import read_cache_folder

    cache = tmp_path / "cache"
    cache.mkdir()
    sizes = {}
    for line in (FIXTURES / "jax" / "cache_hit" / "run_a" / "cache_listing.txt").read_text().splitlines():
        size, name = line.split()
        (cache / name).write_bytes(b"\0" * int(size))
        sizes[name[: -len("-cache")]] = int(size)
    (tmp_path / "ls.txt").write_text(subprocess.run(["ls", "-l", str(cache)], capture_output=True,
                                                    text=True, check=True).stdout)
    (tmp_path / "find.txt").write_text(subprocess.run(["find", str(cache), "-type", "f", "-printf", "%s %f\\n"],
                                                      capture_output=True, text=True, check=True).stdout)
    assert read_cache_folder(str(cache)).entries == sizes
    assert read_cache_folder(str(tmp_path / "ls.txt")).entries == sizes
    assert read_cache_folder(str(tmp_path / "find.txt")).entries == sizes


def test_two_recordings_with_two_cache_folders(tmp_path):
    """Run B pointed at another cache folder (a relative path from another directory, a container's $HOME).
    Observed with JAX 0.10.2: JAX writes the cache folder into the compile options
    (xla_gpu_per_fusion_autotune_cache_dir, on the CPU too), so the key differs; both folders are named."""
    import sys

    from helpers import capture_free_env, run_hlodiff

    (tmp_path / "prog.py").write_text(PROGRAM)
    for run, cache in (("run_a", "cache_a"), ("run_b", "cache_b")):
        env = capture_free_env(JAX_PLATFORMS="cpu", JAX_COMPILATION_CACHE_DIR=str(tmp_path / cache),
                               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
        proc = run_hlodiff("record", "-q", "--out", run, "--", sys.executable, "prog.py", cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
    doc = cli_json("compare-runs", str(tmp_path / "run_a"), str(tmp_path / "run_b"), codes=(1,))
    (only,) = doc["compilations"]
    assert (only["verdict"], only["reason"]) == ("miss_key_differs", "other_cache_folder")
    assert only["key_a"] != only["key_b"]
    assert only["differences"][0]["a"] == str(tmp_path / "cache_a")
    assert str(tmp_path / "cache_a") in only["fix"] and str(tmp_path / "cache_b") in only["fix"]


TORCH_PROGRAM = """import sys
import torch, torch_xla
import torch_xla.runtime as xr
xr.initialize_cache(sys.argv[1], readonly=False)
dev = torch_xla.device()
w = torch.ones(4, 4, device=dev)
x = torch.ones(2, 8, device=dev)
loss = torch.tanh(x[:, 0:4] @ w.T).sum()
torch_xla.sync()
print(loss.item())
"""


def test_two_torch_xla_recordings_with_their_stderr(tmp_path):
    """`hlodiff record` of the same torch_xla program twice against one cache, stderr kept in each recording's
    folder: run B compiled the graph again, and what torch_xla printed decides the reason (on the CPU it cannot
    deserialize the entry run A wrote)."""
    import subprocess
    import sys

    from helpers import capture_free_env

    (tmp_path / "prog.py").write_text(TORCH_PROGRAM)
    hlodiff = str(Path(sys.executable).with_name("hlodiff"))
    env = capture_free_env()
    env.pop("TF_CPP_MIN_LOG_LEVEL")  # torch_xla's warnings at the default level, as users see them
    for run in ("run_a", "run_b"):
        with open(tmp_path / f"{run}.err", "w") as err:
            subprocess.run([hlodiff, "record", "-q", "--out", run, "--", sys.executable, "prog.py",
                            str(tmp_path / "cache")], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=err,
                           check=True, timeout=600)
        (tmp_path / f"{run}.err").rename(tmp_path / run / "stderr.log")
    failed = "Failed to deserialize executable" in (tmp_path / "run_b" / "stderr.log").read_text()
    doc = cli_json("compare-runs", str(tmp_path / "run_a"), str(tmp_path / "run_b"), "--cache",
                   str(tmp_path / "cache"), codes=(1,) if failed else (0,))
    (only,) = doc["compilations"]
    assert doc["framework"] == "torch_xla" and only["entry_in_cache"] is True
    if failed:
        assert (only["verdict"], only["reason"], doc["recompiled"]) == ("miss_same_key", "not_loadable", 1)
        assert "deserialize" in only["fix"] and "JAX" not in only["fix"]
    else:  # a backend that loads it: a hit
        assert only["verdict"] == "hit"



def test_a_program_whose_hlo_differs_gets_its_cause_when_run_b_is_a_renamed_copy():
    """New-user review 22, F3 (its own runs, fixtures/jax/review22_renamed_copy): run B ran a copy of the script
    under another name (jx1_seed1.py, another seed) and met a static n_valid run A never saw; the analysis read B's
    program as "another function of this name" and compare-runs said ``reason: unknown``, no line, no fix, "compiled
    again 1 of the 7 programs crA had compiled", though ``compare`` on the same pair named the slice at :9."""
    folder = FIXTURES / "jax" / "review22_renamed_copy"
    doc = json.loads(cli("compare-runs", "--json", str(folder / "crA"), str(folder / "crB"), codes=(1,)).stdout)
    head = doc["headline"]
    assert head["verdict"] == "miss_hlo_differs" and head["reason"] != "unknown", head
    assert (head["location"]["file"].rsplit("/", 1)[-1], head["location"]["line"]) == ("jx1_seed1.py", 9)
    assert "mask" in head["fix"]
    assert doc["summary"].startswith("crB compiled 1 program crA never compiled") and "had compiled" not in doc["summary"]
