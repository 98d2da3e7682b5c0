"""Several ranks' dumps: how ranks are recognised, which rank diverged and why, and parallel/Dask reading giving
the serial bytes. Inputs are the real multi-process runs under fixtures/jax/ranks_* and fixtures/torch_xla/ranks_batch
(scripts beside them); the crashed-rank and two-jobs cases are built from those real dumps."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from helpers import cli, cli_json, truth_of
from hlodiff.dumps.ranks import find_ranks

FIX = Path(__file__).resolve().parents[1] / "fixtures"
TORCH = FIX / "torch_xla" / "ranks_batch"
JAX_STEADY = FIX / "jax" / "ranks_steady_2p"
JAX_BATCH = FIX / "jax" / "ranks_batch_4p"
JAX_STATIC = FIX / "jax" / "ranks_static_4p"


# -- recognising ranks ------------------------------------------------------------------------------------------------


def test_ranks_from_ordinals_base_name_and_folders(tmp_path):
    files = [str(TORCH / "graphs.hlo.1"), str(TORCH / "graphs.hlo.0")]
    by_files = find_ranks(files)
    assert [(s.rank, Path(s.paths[0]).name) for s in by_files] == [(0, "graphs.hlo.0"), (1, "graphs.hlo.1")]
    assert "ordinal suffix .1" in by_files[1].identified_by
    by_base = find_ranks([str(TORCH / "graphs.hlo")])
    assert [s.paths for s in by_base] == [s.paths for s in by_files]
    by_parent = find_ranks([str(JAX_BATCH)])
    assert [s.rank for s in by_parent] == [0, 1, 2, 3]
    assert by_parent[2].identified_by == "number in the folder name rank2"
    # hosts without numbers: sorted, identified by position; folders given in any order keep their numbers
    for name, src in (("host-b", JAX_STEADY / "rank1"), ("host-a", JAX_STEADY / "rank0")):
        shutil.copytree(src, tmp_path / name)
    hosts = find_ranks([str(tmp_path)])
    assert [(s.rank, Path(s.paths[0]).name) for s in hosts] == [(0, "host-a"), (1, "host-b")]
    assert "position among the sorted subfolders" in hosts[1].identified_by
    given = find_ranks([str(JAX_BATCH / "rank3"), str(JAX_BATCH / "rank1")])
    assert [s.rank for s in given] == [1, 3]


# -- divergence on the real fixtures ----------------------------------------------------------------------------------


def test_torch_xla_ordinal_that_changed_its_batch_is_named_with_step_cause_and_line():
    t = truth_of(TORCH)
    d = cli_json("explain-recompile", TORCH / "graphs.hlo", codes=(0, 1))
    assert [r["rank"] for r in d["ranks"]] == [0, 1]
    (div,) = d["divergence"]
    assert div["ranks"] == t["diverging_ranks"] and div["step"] == t["diverging_step"]
    assert div["kind"] == "different"
    assert div["majority_ref"].endswith("graphs.hlo.0#3") and div["ref"].endswith("graphs.hlo.1#3")
    assert div["causes"][0]["kind"] == t["cause"]
    assert t["user_line"] in [loc["line"] for loc in div["causes"][0]["locations"]]
    # ordinal 1 shares ordinal 0's compile cache, yet its new graph is its own recompilation, not "steady"
    rank1 = d["ranks"][1]
    assert rank1["recompilations"] == 1 and not rank1["summary"].endswith("0 recompilations")
    assert [r["graph"].rsplit("/", 1)[-1] for r in d["recompilations"]] == ["graphs.hlo.1#3"]
    assert [r["rank"] for r in d["recompilations"]] == [1]


@pytest.mark.parametrize("folder, kind", [(JAX_BATCH, "shape"), (JAX_STATIC, "constant")])
def test_jax_rank_with_another_batch_or_static_argument_is_the_one_named(folder, kind):
    t = truth_of(folder)
    result = cli("explain-recompile", folder)
    assert result.exit_code == 1
    d = cli_json("explain-recompile", folder, codes=(0, 1))
    (div,) = d["divergence"]
    assert div["ranks"] == t["diverging_ranks"] and div["majority_ranks"] == [0, 1, 3]
    assert div["kind"] == "extra"  # JAX dumps only what compiles: the rank compiled one module more
    assert div["ref"].startswith(str(folder / "rank2"))
    assert div["majority_ref"].startswith(str(folder / "rank0"))
    assert div["causes"][0]["kind"] == kind
    lines = {loc["line"] for c in div["causes"] for loc in c["locations"] if loc["file"].endswith("ranks.py")}
    assert t["loss_line"] in lines
    # setup graphs (convert, broadcast, the collective) every rank ran are not recompilations
    assert [r["rank"] for r in d["recompilations"]] == [2]
    assert {r["rank"]: r["same_as"] for r in d["ranks"]} == {0: None, 1: 0, 2: None, 3: 0}
    text = result.output
    assert "compilation 4: rank 2 compiled an extra graph the majority did not" in text
    assert "majority: ranks 0, 1, 3" in text


def test_steady_job_has_empty_divergence_and_one_line():
    result = cli("explain-recompile", JAX_STEADY)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "all 2 ranks compiled the same graphs (4 each)"
    d = cli_json("explain-recompile", JAX_STEADY, codes=(0, 1))
    assert d["divergence"] == [] and d["recompilations"] == []
    assert [(r["graphs"], r["compilations"]) for r in d["ranks"]] == [(4, 4), (4, 4)]


def test_inspect_over_ranks_counts_compilations_per_rank():
    d = cli_json("inspect", TORCH / "graphs.hlo", codes=(0, 1))
    assert [(r["rank"], r["graphs"], r["compilations"]) for r in d["ranks"]] == [(0, 6, 1), (1, 6, 2)]
    assert [g["rank"] for g in d["graphs"]] == [0] * 6 + [1] * 6
    assert [d["step"] for d in d["divergence"]] == [3]
    assert "rank 1" in cli("inspect", TORCH / "graphs.hlo").output


# -- bad input --------------------------------------------------------------------------------------------------------


def test_a_rank_that_stopped_early_is_said_so(tmp_path):
    text = (TORCH / "graphs.hlo.1").read_text()
    starts = [m.start() for m in re.finditer(r"^\[ScheduleSyncTensorsGraph\]$", text, re.M)]
    shutil.copy(TORCH / "graphs.hlo.0", tmp_path / "graphs.hlo.0")
    (tmp_path / "graphs.hlo.1").write_text(text[:starts[2]])  # the process died after step 1
    d = cli_json("explain-recompile", tmp_path / "graphs.hlo", codes=(0, 1))
    assert d["ranks"][1]["stopped_early_at"] == 2
    (div,) = d["divergence"]
    assert (div["kind"], div["ranks"], div["step"]) == ("stopped", [1], 2)
    assert any("stopped after step 1 (crashed or killed early?)" in n for n in d["rank_notes"])
    assert "it stopped early" in cli("explain-recompile", tmp_path / "graphs.hlo").output


def test_a_folder_of_separate_runs_is_not_passed_off_as_ranks_that_diverged():
    """fixtures/torch_xla/fsdp_linear holds two runs of one script (plain/, patched/): ranks by folder order only,
    so the report says what the numbers rest on and how to read the runs instead. Numbered rank folders that
    diverge (rank0..rank3) get no such note."""
    d = cli_json("explain-recompile", FIX / "torch_xla" / "fsdp_linear", codes=(0, 1))
    assert d["divergence"]
    (note,) = [n for n in d["rank_notes"] if "rank numbers come from" in n]
    assert "sorted order of the subfolders (patched, plain)" in note and "explain each on its own" in note
    assert "explain each on its own" in cli("explain-recompile", FIX / "torch_xla" / "fsdp_linear").output
    numbered = cli_json("explain-recompile", JAX_BATCH, codes=(0, 1))
    assert numbered["divergence"] and not any("rank numbers come from" in n for n in numbered["rank_notes"])


@pytest.mark.parametrize("others", [
    [FIX / "torch_xla" / "steady" / "graphs.hlo.0", FIX / "torch_xla" / "batch_shape" / "graphs.hlo.0"],
    [FIX / "torch_xla" / "steady" / "graphs.hlo.0", JAX_STEADY / "rank0"],
])
def test_dumps_of_two_jobs_are_refused_in_one_line(others):
    result = cli("explain-recompile", *others)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "do not look like one job" in lines[0]
    assert lines[0].startswith(str(others[1]))


def test_a_single_rank_found_as_a_rank_says_there_is_nothing_to_compare(tmp_path):
    shutil.copy(TORCH / "graphs.hlo.1", tmp_path / "graphs.hlo.1")
    result = cli("explain-recompile", tmp_path / "graphs.hlo")
    assert result.exit_code == 1  # rank 1 still recompiled on its own
    assert "only one rank found (rank 1" in result.output
    d = cli_json("explain-recompile", tmp_path / "graphs.hlo", codes=(0, 1))
    assert d["divergence"] == [] and [r["rank"] for r in d["ranks"]] == [1]


# -- parallel and Dask give the serial bytes -------------------------------------------------------------------------


def test_jobs_give_the_serial_bytes():
    for args in (("explain-recompile", JAX_BATCH), ("explain-recompile", JAX_BATCH, "--json"),
                 ("inspect", TORCH / "graphs.hlo", "--json")):
        serial, parallel = cli(*args, "--jobs", "1"), cli(*args, "--jobs", "2")
        assert serial.output == parallel.output and serial.exit_code == parallel.exit_code


def test_dask_scheduler_gives_the_serial_bytes():
    distributed = pytest.importorskip("dask.distributed")
    serial = cli("explain-recompile", JAX_STATIC, "--json", "--jobs", "1")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        on_dask = cli("explain-recompile", JAX_STATIC, "--json", "--scheduler", cluster.scheduler_address)
    assert on_dask.exit_code == serial.exit_code == 1
    assert on_dask.output == serial.output


def test_the_majority_wins_even_against_rank_0(tmp_path):
    """Three ordinals where 1 and 2 ran the short batch: rank 0 is the one that diverged."""
    for src, dst in (("graphs.hlo.0", "graphs.hlo.0"), ("graphs.hlo.1", "graphs.hlo.1"),
                     ("graphs.hlo.1", "graphs.hlo.2")):
        shutil.copy(TORCH / src, tmp_path / dst)
    d = cli_json("explain-recompile", tmp_path / "graphs.hlo", codes=(0, 1))
    assert d["reference_rank"] == 1 and d["rank_notes"] == []
    (div,) = d["divergence"]
    assert (div["step"], div["ranks"], div["majority_ranks"]) == (3, [0], [1, 2])
    assert div["causes"][0]["kind"] == "shape"
    assert {r["rank"]: r["same_as"] for r in d["ranks"]} == {0: None, 1: None, 2: 1}


def test_alignment_pairs_a_changed_step_and_leaves_a_stopped_rank_its_tail():
    from hlodiff.explain.alignment import align

    assert align(list("AAAAAA"), list("AAABAA")) == [(i, i) for i in range(6)]
    assert align(list("AAAAAA"), list("AA")) == [(0, 0), (1, 1)] + [(i, None) for i in range(2, 6)]
    assert align(list("abcd"), list("abXcd")) == [(0, 0), (1, 1), (None, 2), (2, 3), (3, 4)]
    assert align(list("ab"), []) == [(0, None), (1, None)]


def test_local_dask_cluster_started_by_the_command_gives_the_serial_bytes():
    pytest.importorskip("dask.distributed")
    serial = cli("explain-recompile", JAX_STEADY, "--jobs", "1")
    local = cli("explain-recompile", JAX_STEADY, "--scheduler", "local", "--jobs", "1")
    assert local.exit_code == serial.exit_code == 0
    assert local.output == serial.output


def test_two_jax_ranks_have_no_majority_and_say_so():
    folder = FIX / "jax" / "ranks_static_2p"
    d = cli_json("explain-recompile", folder, codes=(0, 1))
    assert d["rank_notes"] == ["with 2 ranks there is no majority: rank 0 is taken as the reference"]
    (div,) = d["divergence"]
    assert div["ranks"] == truth_of(folder)["diverging_ranks"] == [1]
    assert div["causes"][0]["kind"] == "constant"


def test_only_small_summaries_travel_back_from_a_worker():
    """What a worker (or a Dask worker on another host) sends back holds no parsed or canonical module."""
    import pickle
    import pickletools

    from hlodiff.explain.parallel import RankTask
    from hlodiff.jobs import explain_rank

    for spec in find_ranks([str(TORCH / "graphs.hlo")]) + find_ranks([str(JAX_BATCH)])[2:3]:
        result = explain_rank(RankTask(spec))
        assert result.error is None and result.explanation.graphs
        data = pickle.dumps(result)
        ops = list(pickletools.genops(data))
        strings = [(i, arg) for i, (op, arg, _) in enumerate(ops) if isinstance(arg, str)]
        classes = {next(arg for j, arg in reversed(strings) if j < i) for i, (op, _, _) in enumerate(ops)
                   if op.name == "STACK_GLOBAL"}
        assert "GraphSummary" in classes
        assert not classes & {"Module", "CanonicalModule", "Computation", "Instruction", "CanonicalComputation"}
        dump_bytes = sum(p.stat().st_size for path in result.inputs.paths
                         for p in ([Path(path)] if Path(path).is_file() else Path(path).glob("*.txt")))
        # A third of the dump at most: the summaries carry typed facts (cause graph, stories, patterns; 13 KB for
        # ranks_batch_4p's 48 KB of module text), never the modules themselves (checked above).
        assert len(data) < dump_bytes / 3


def test_jax_rank_cause_is_the_innermost_user_line_with_the_call_on_its_stack():
    """ranks_batch_4p: the short batch's shape change is located at the line inside `step` that uses it (loss_line);
    the call of `step` (user_line) and the script's `<module>` line are its stack, not further locations."""
    t = truth_of(JAX_BATCH)
    (div,) = cli_json("explain-recompile", JAX_BATCH, codes=(0, 1))["divergence"]
    cause = div["causes"][0]
    assert [loc["line"] for loc in cause["locations"]] == [t["loss_line"]]
    stack = [f["line"] for f in cause["stacks"][0]]
    assert t["user_line"] in stack and all(f["function"] != "<module>" for f in cause["locations"])
    assert stack[-1] > t["user_line"] and cause["stacks"][0][-1]["function"] == "<module>"


def test_a_train_step_jitted_inside_a_function_is_a_step_not_an_eager_op():
    """ranks.py defines its jitted step inside main(): JAX's stacks name it main.<locals>.step, and it must still
    be recognised as the user's own function (it was called an eager op, 'not a step')."""
    d = cli_json("explain-recompile", JAX_BATCH, codes=(0, 1))
    assert not any("eager op: jit_step" in p for p in d["patterns"]), d["patterns"]
    assert any(p.startswith("rank 2: 2 compilations of jit_step") for p in d["patterns"]), d["patterns"]


def test_files_of_two_runs_that_end_in_0_and_1_are_not_taken_for_one_run_s_ordinals(tmp_path):
    """mb1's graphs.hlo.0 and mb2's (renamed graphs.hlo.1) in two folders: not ordinals of one save file; the
    ranks are numbered from the names, and the report says the numbers are a guess."""
    pipeline = FIX / "torch_xla" / "pipeline"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(pipeline / "mb1" / "graphs.hlo.0", tmp_path / "a" / "graphs.hlo.0")
    shutil.copy(pipeline / "mb2" / "graphs.hlo.0", tmp_path / "b" / "graphs.hlo.1")
    specs = find_ranks([str(tmp_path / "a" / "graphs.hlo.0"), str(tmp_path / "b" / "graphs.hlo.1")])
    assert not any(s.identified_by.startswith("ordinal suffix") for s in specs)
    d = cli_json("explain-recompile", tmp_path / "a" / "graphs.hlo.0", tmp_path / "b" / "graphs.hlo.1", codes=(0, 1))
    assert any("files that lie in different folders" in n and "explain each on its own" in n
               for n in d["rank_notes"]), d["rank_notes"]


def test_a_rank_that_diverged_by_running_fewer_graphs_leaves_the_headline_to_the_rank_that_split():
    """Round 5 (fixtures/scenarios/torch_xla/rank0_item_log): only rank 0 reads loss.item() mid-step, so its step
    is split in two graphs and rank 1 runs one. With 2 ranks there is no majority: steady rank 1 is the one that
    "diverged" (it ran no graph where rank 0 ran two), and the job's headline was null although rank 0's split is
    the story. The headline is now rank 0's: partial at the .item() line."""
    doc = cli_json("explain-recompile", FIX / "scenarios" / "torch_xla" / "rank0_item_log" / "record", codes=(1,))
    assert [d["ranks"] for d in doc["divergence"]][0] == [1]
    head = doc["headline"]
    assert head["rank"] == 0 and head["kind"] == "partial" and head["location"]["line"] == 25
    assert "add_step_closure" in head["fix"]
