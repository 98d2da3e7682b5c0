"""compare-runs rules learned from the seventh blind round across a persistent cache (fixtures/scenarios/runs/runs7_*):
one test per row it added (torch_xla counters a program printed itself, BF16_STORAGE_TYPES, the buffer donors
XLA_ENABLE_PARAM_ALIASING drops, JAX arguments by pytree path, ACROSS_RUNS_RULES; GRAPH_FIXES' `bf16_storage`,
`param_aliasing_off`, `aliasing_torch_xla`, `pytree_leaves`, `path_across_runs`, `sharding_across_runs`), each
beside a look-alike that shares the row's evidence but one fact and must keep the answer it had; and the round's two
controls."""

from __future__ import annotations

import pytest

from runs_helpers import (RUNS, compare_runs as _compare, runs_headline as _head, copy_runs as _copy,
                          without_counter_prints)
from hlodiff.diff.fix_rules import RULES_BY_NAME
from hlodiff.dumps.compile_cache import TORCH_COUNTERS, read_torch_cache_facts
from hlodiff.dumps.printed_counters import printed_counters
from hlodiff.explain.run_arguments import argument_path_differences
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.explain.run_settings import BF16_STORAGE_TYPES, bf16_storage_differences, donors_dropped
from hlodiff.hlo.parser import parse_module
from hlodiff.render.across_runs import GRAPH_FIXES
from hlodiff.render.across_runs_fixes import ACROSS_RUNS_RULES


def test_table_rows_are_the_ones_tested():
    assert BF16_STORAGE_TYPES == {"f32": "bf16"}
    assert ACROSS_RUNS_RULES.items() >= {"ops_branch_jax": "path_across_runs", "sharding": "sharding_across_runs",
                                         "sharding_torch": "sharding_across_runs"}.items()  # round 9 adds its own
    assert {"bf16_storage", "param_aliasing_off", "aliasing_torch_xla", "pytree_leaves"} <= set(GRAPH_FIXES)


class _Rec:
    def __init__(self, text: str):
        self._module = parse_module(text)

    def module(self):
        return self._module


# -- counters the program printed itself (met.counter_value) --------------------------------------------------------

@pytest.mark.parametrize("line, found", [
    ("{'UncachedCompile': 1, 'PersistentCacheHit': None, 'PersistentCacheMiss': 2}",
     {"UncachedCompile": 1, "PersistentCacheHit": 0, "PersistentCacheMiss": 2}),
    ("step 3 PersistentCacheMiss=4 PersistentCacheHit = 1", {"PersistentCacheMiss": 4, "PersistentCacheHit": 1}),
    ('{"PersistentCacheDeserializeFailure": 2}', {"PersistentCacheDeserializeFailure": 2}),
])
def test_printed_counter_values_are_read(line, found):
    assert printed_counters(line, TORCH_COUNTERS) == found


@pytest.mark.parametrize("line", [
    "Counter: PersistentCacheMiss",  # a metrics report's own block: read as a report, not here
    "MyPersistentCacheMiss: 3",  # another name that ends like one
    "PersistentCacheMissRate: 0.5",
    "met.PersistentCacheMiss: 2",
    "PersistentCacheMiss went up",
])
def test_lookalike_lines_that_are_not_a_printed_value(line):
    assert printed_counters(line, TORCH_COUNTERS) == {}


def test_printed_counters_keep_the_largest_value_of_a_run(tmp_path):
    """A program printing its counters every step: they only grow, the run's value is the largest printed; a
    metrics report counting the same events is not added to it."""
    log = tmp_path / "stdout.log"
    log.write_text("{'PersistentCacheMiss': 1}\n{'PersistentCacheMiss': 3}\n"
                   "Counter: PersistentCacheMiss\n  Value: 3\n")
    assert read_torch_cache_facts([str(log)]).counter("PersistentCacheMiss") == 3


def test_printed_counters_say_run_b_had_no_cache():
    """runs6_torch_env_cache: XLA_PERSISTENT_CACHE_PATH in run A's environment only; run B printed
    PersistentCacheMiss None and PersistentCacheDeserializeFailure None beside one UncachedCompile: it never looked."""
    head = _head("runs6_torch_env_cache")
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "no_cache")
    assert "XLA_PERSISTENT_CACHE_PATH" in head["fix"] and "deserializ" not in head["fix"]


def test_lookalike_printed_failed_loads_say_not_loadable_as_seen():
    """runs_torch_identical: run B printed PersistentCacheDeserializeFailure 2: the failed load is seen, so the
    plain not_loadable fix, not the inferred one that asks whether run B had a cache."""
    head = _head("runs_torch_identical")
    assert head["reason"] == "not_loadable" and head["fix"].startswith("nothing to change")


def test_lookalike_a_printed_miss_keeps_entry_missing():
    """runs4_torch_readonly: run B printed PersistentCacheMiss 1 (it looked and found nothing): entry_missing."""
    assert _head("runs4_torch_readonly")["reason"] == "entry_missing"


def test_lookalike_without_the_prints_the_cpu_story_is_inferred(tmp_path):
    head = _compare(without_counter_prints(_copy("runs6_torch_env_cache", tmp_path)))["headline"]
    assert head["reason"] == "not_loadable" and "XLA_PERSISTENT_CACHE_PATH" in head["fix"]


# -- BF16_STORAGE_TYPES: torch_xla's XLA_USE_BF16 -------------------------------------------------------------------

def _program(label: str, extra: str = "") -> _Rec:
    return _Rec(f"HloModule m\n\nENTRY e {{\n  p0 = {label}[8]{{0}} parameter(0)\n  p1 = s32[8]{{0}} parameter(1)\n"
                f"{extra}  ROOT c = {label}[8]{{0}} negate(p0)\n}}\n")


def test_every_float32_stored_as_bf16_in_one_torch_run_names_xla_use_bf16():
    head = _head("runs7_torch_use_bf16")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "dtype")
    assert "XLA_USE_BF16" in head["fix"] and "run B's" in head["fix"]
    assert "on some steps" not in head["fix"] and "XLA_USE_32BIT_LONG" not in head["fix"]


def test_bf16_storage_reads_every_f32_turned_bf16():
    assert bf16_storage_differences(_program("f32"), _program("bf16")) == [
        KeyDifference("element_types", "32-bit floats", "f32", None)]


def test_lookalike_f32_left_beside_bf16_is_mixed_precision():
    """Autocast keeps f32 weights and adds bf16 beside them: not the storage switch."""
    keep = "  k = f32[2]{0} constant({1, 2})\n"
    assert bf16_storage_differences(_program("f32"), _program("bf16", keep)) == []


def test_lookalike_f16_is_not_bf16_storage():
    assert bf16_storage_differences(_program("f32"), _program("f16")) == []


def test_lookalike_torch_autocast_keeps_its_precision_words():
    head = _head("runs4_torch_autocast")
    assert "autocast" in head["fix"] and "XLA_USE_BF16" not in head["fix"]


# -- donors_dropped: torch_xla's XLA_ENABLE_PARAM_ALIASING ----------------------------------------------------------

def _donating(header: str) -> _Rec:
    return _Rec(f"HloModule m{header}\n\nENTRY e {{\n  p0 = f32[8]{{0}} parameter(0)\n  p1 = f32[8]{{0}} "
                "parameter(1)\n  ROOT a = f32[8]{0} add(p0, p1)\n}\n")


def test_a_torch_graph_without_its_donors_names_xla_enable_param_aliasing():
    head = _head("runs7_torch_param_aliasing")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "aliasing")
    assert "XLA_ENABLE_PARAM_ALIASING" in head["fix"] and "run B's" in head["fix"]
    assert "donate_argnums" not in head["fix"] and "XLA_FLAGS" not in head["fix"]


def test_donors_dropped_needs_one_side_without_any():
    both = ", buffer_donor={ (0, {}), (1, {}) }"
    assert donors_dropped(_donating(both), _donating("")) == [KeyDifference("module", "buffer donors", "2", None)]
    assert donors_dropped(_donating(both), _donating(", buffer_donor={ (0, {}) }")) == []


def test_lookalike_other_donors_on_both_sides_are_the_codes_in_place_updates(tmp_path):
    """Run B's graphs keep one donor of run A's four: what the code updates in place differs, not the variable."""
    folder = _copy("runs7_torch_param_aliasing", tmp_path)
    for dump in (folder / "run_b" / "dump").glob("*before_optimizations.txt"):
        text = dump.read_text()
        dump.write_text(text.replace("HloModule SyncTensorsGraph.92,", "HloModule SyncTensorsGraph.92, "
                                     "buffer_donor={ (1, {}) },", 1).replace(
            "HloModule SyncTensorsGraph.122,", "HloModule SyncTensorsGraph.122, buffer_donor={ (1, {}) },", 1))
    head = _compare(folder)["headline"]
    assert head["reason"] == "aliasing" and "in place" in head["fix"]
    assert "XLA_ENABLE_PARAM_ALIASING" not in head["fix"] and "donate_argnums" not in head["fix"]


def test_lookalike_jax_donation_keeps_donate_argnums():
    head = _head("runs4_donate_toggle")
    assert "donate_argnums" in head["fix"] and "XLA_ENABLE_PARAM_ALIASING" not in head["fix"]


def test_lookalike_the_same_torch_graph_under_another_hash_speaks_of_torch_xla(tmp_path):
    """Run B's headers given run A's donors back: one program under two hashes, nothing dumped differs; the words
    are torch_xla's (a graph hash, its environment), not JAX's."""
    folder = _copy("runs7_torch_param_aliasing", tmp_path)
    for dump in (folder / "run_b" / "dump").glob("*before_optimizations.txt"):
        twin = folder / "run_a" / "dump" / dump.name
        head_a = twin.read_text().split("\n", 1)[0]
        dump.write_text(head_a + "\n" + dump.read_text().split("\n", 1)[1])
    doc = _compare(folder)
    assert doc["headline"]["reason"] == "unknown"
    assert all("graph hash" in c["text"] and "jaxlib" not in c["text"] for c in doc["compilations"])


# -- argument_path_differences: a JAX argument's pytree leaf in one run only ----------------------------------------

def test_a_config_value_none_in_one_run_names_the_leaf():
    """runs7_config_tree: weight_decay null in run A's config, 0.0 in run B's: the leaf and the pytree named."""
    head = _head("runs7_config_tree")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "ops")
    assert "hp['weight_decay']" in head["fix"] and "pytree" in head["fix"] and "run B's" in head["fix"]


def _args(*names: str) -> _Rec:
    params = "".join(f'  p{i} = f32[] parameter({i}), metadata={{op_name="{n}"}}\n' for i, n in enumerate(names))
    return _Rec(f"HloModule m\n\nENTRY e {{\n{params}  ROOT r = f32[] add(p0, p0)\n}}\n")


def test_argument_paths_added_on_one_side_only():
    assert argument_path_differences(_args("hp['lr']"), _args("hp['lr']", "hp['wd']")) == [
        KeyDifference("arguments", "pytree leaves", None, "hp['wd']")]


def test_lookalike_leaves_on_both_sides_or_none_by_path():
    assert argument_path_differences(_args("hp['lr']", "hp['a']"), _args("hp['lr']", "hp['b']")) == []
    assert argument_path_differences(_args("x"), _args("x", "y")) == []  # top-level names: no pytree path


def test_lookalike_config_keys_reordered_load_everything():
    doc = _compare(RUNS / "runs7_config_order_control", codes=(0,))
    assert doc["headline"] is None and doc["recompiled"] == 0


def test_lookalike_a_batch_size_keeps_its_shape_words():
    head = _head("runs_batch_env")
    assert head["reason"] == "shape" and "pytree" not in head["fix"]


# -- ACROSS_RUNS_RULES: graph fixes written for two steps, said for two runs ----------------------------------------

@pytest.mark.parametrize("rule, row", sorted(ACROSS_RUNS_RULES.items()))
def test_each_across_runs_row_rewords_a_rule_of_the_fix_table(rule, row):
    assert rule in RULES_BY_NAME and row in GRAPH_FIXES
    assert "between steps" not in GRAPH_FIXES[row] and "per step" not in GRAPH_FIXES[row]


def test_a_static_argument_from_argv_is_a_value_that_differs_between_runs():
    head = _head("runs7_static_argv")
    assert head["reason"] == "ops" and "static argument" in head["fix"] and "both runs" in head["fix"]


def test_another_mesh_shape_is_said_between_runs():
    head = _head("runs7_mesh_shape")
    assert head["reason"] == "sharding" and "mesh" in head["fix"] and "between steps" not in head["fix"]
    assert "device count" not in head["fix"]


def test_lookalike_another_device_count_keeps_its_words():
    head = _head("runs_device_count")
    assert head["reason"] == "device_count" and "device count" in head["fix"]


def test_lookalike_a_rewired_sum_keeps_its_rule():
    assert "another order" in _head("runs_torch_loss_order")["fix"]


# -- the round's controls -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["runs7_config_order_control", "runs7_env_cache_dir_control"])
def test_controls_load_everything(name):
    doc = _compare(RUNS / name, codes=(0,))
    assert doc["headline"] is None and doc["recompiled"] == 0


# -- named_by_both: more of what both runs traced is located at the call ---------------------------------------------

def test_a_loop_unrolled_once_more_is_located_at_the_call():
    """runs7_static_argv: every line the added ops name (_model.py:14/15, the loop's :33) is traced in run A too
    (one inner step): the headline is the call that passed the static count (:46), not the helper's line."""
    head = _head("runs7_static_argv")
    assert (head["location"]["file"].rsplit("/", 1)[-1], head["location"]["line"]) == ("runs7_static_argv.py", 46)


def test_lookalike_ops_at_a_line_only_one_run_traced_keep_that_line():
    """runs7_config_tree: the decay's line (:35) is traced in run B only: it is where the programs differ."""
    assert _head("runs7_config_tree")["location"]["line"] == 35


def test_named_by_both_needs_every_line_in_both_programs():
    from hlodiff.explain.program_lines import named_by_both
    from hlodiff.hlo.model import SourceFrame

    def rec(lines):
        body = "".join(f'  n{i} = f32[] negate(p0), metadata={{op_name="x" source_file="/w/t.py" '
                       f'source_line={n}}}\n' for i, n in enumerate(lines))
        return _Rec(f"HloModule m\n\nENTRY e {{\n  p0 = f32[] parameter(0)\n{body}  ROOT r = f32[] negate(p0)\n}}\n")

    here = [SourceFrame("/w/t.py", 4, "f")]
    assert named_by_both(here, rec([4, 5]), rec([4, 4, 5]))
    assert not named_by_both(here, rec([5]), rec([4, 5]))
    assert not named_by_both([], rec([4]), rec([4]))
