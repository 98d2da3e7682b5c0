"""explain-recompile on real runs: the true compilations, the true cause kind, the user's line."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli, truth_of
from hlodiff.dumps.run_folder import discover
from helpers import explained

TORCH_XLA = ["steady", "slice_index", "batch_shape", "metric_even_steps", "dtype_zeros_like", "item_partial", "dtype_input",
             "print_partial",
             "lr_constant"]


def explain(path: str, **side):
    warnings = []
    result = explained(discover([path], side.get("tensors"), side.get("debug")), warnings)
    assert warnings == []
    return result


@pytest.mark.parametrize("name", TORCH_XLA)
def test_compilations_are_exactly_the_true_ones(name):
    result = explain(str(FIXTURES / "torch_xla" / name / "graphs.hlo.0"))
    assert [g.record.index for g in result.graphs if g.compiled] == truth_of("torch_xla", name)["compilations"]


@pytest.mark.parametrize("name", TORCH_XLA)
def test_each_recompilation_names_the_true_cause_and_line(name):
    t = truth_of("torch_xla", name)
    result = explain(str(FIXTURES / "torch_xla" / name / "graphs.hlo.0"))
    assert [r.graph.record.index for r in result.recompilations] == t["compilations"][1:]
    first = result.recompilations[0]
    assert first.causes[0].kind == t["cause"]
    lines = {(f.file.rsplit("/", 1)[-1], f.line) for f in first.causes[0].locations}
    assert (t["user_file"], t["user_line"]) in lines


def test_lr_line_needs_the_live_tensor_report(tmp_path):
    """The HLO only knows torch/optim/sgd.py; the report's stacks lead to the user's opt.step() line."""
    folder = FIXTURES / "torch_xla" / "lr_constant"
    with_reports = explain(str(folder / "graphs.hlo.0"))
    line = truth_of("torch_xla", "lr_constant")["user_line"]
    assert with_reports.recompilations[0].causes[0].locations[0].line == line
    alone = tmp_path / "graphs.hlo.0"
    alone.write_bytes((folder / "graphs.hlo.0").read_bytes())
    without = explain(str(alone))
    cause = without.recompilations[0].causes[0]
    assert cause.locations == [] and cause.library_locations[0].file.endswith("torch/optim/sgd.py")
    assert any("--tensors-report" in h for h in without.hints)


def test_metric_output_traced_to_its_live_tensor():
    result = explain(str(FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0"))
    (note,) = result.recompilations[0].tensors
    doc = note.to_json()
    assert doc["side"] == "left" and doc["shape"] == "f32[]" and doc["ir_op"] == "aten::mean"
    assert doc["frame"]["line"] == truth_of("torch_xla", "metric_even_steps")["user_line"]
    assert "alternating" in result.summary and "A,B,A,B,A,B" in result.summary


def test_partial_graph_is_located_at_the_item_call_and_joined_to_its_step():
    result = explain(str(FIXTURES / "torch_xla" / "item_partial" / "graphs.hlo.0"))
    (r,) = result.recompilations
    assert r.causes[0].kind == "partial" and r.closest.record.index == 0
    assert "access tensor value" in r.debug.cause
    assert len(result.families) == 1


def test_warm_up_pattern_for_the_first_optimizer_step():
    result = explain(str(FIXTURES / "torch_xla" / "steady" / "graphs.hlo.0"))
    assert "warm-up only" in result.summary
    assert [c.kind for c in result.recompilations[0].causes] == ["inputs"]


def test_jax_dump_folder_recompilations():
    t = truth_of(FIXTURES / "jax" / "recompile_shape")
    result = explain(str(FIXTURES / "jax" / "recompile_shape" / "dump"))
    assert all(g.compiled for g in result.graphs) and len(result.graphs) == len(t["compilations"])
    for r, expected in zip(result.recompilations, t["recompiles"]):
        kinds = [c.kind for c in r.causes]
        # a baked static argument: JAX's log (jax_log.txt) names it ahead of the constant it became in the HLO
        assert kinds[0] == expected["cause"] or kinds[:2] == ["static_argument", expected["cause"]]
        cause = r.causes[kinds.index(expected["cause"])]
        assert expected["user_line"] in {f.line for f in cause.locations} | {
            g.line for f in cause.locations for g in cause.callers.get(f, ())}


def test_cache_hits_are_not_parsed():
    """A 250-graph dump with 3 keys must cost 3 parses: hits reuse the compiled graph's facts."""
    result = explain(str(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0"))
    hits = [g for g in result.graphs if not g.compiled]
    assert hits and all(g._canonical is None for g in hits)


def test_cli_json_contract_and_html(tmp_path):
    page = tmp_path / "report.html"
    path = str(FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0")
    result = cli("explain-recompile", path, "--json", "--html", str(page))
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["schema"] == "hlodiff.explain/1"
    g0 = doc["graphs"][0]
    assert {"index", "name", "graph_hash", "fingerprint", "compiled", "instructions"} <= set(g0)
    (rec,) = doc["recompilations"]
    assert rec["graph"].endswith("#1") and rec["closest"].endswith("#0")
    assert rec["causes"][0]["kind"] == "outputs"
    assert rec["causes"][0]["locations"][0] == {"file": "/home/user/project/metric_even_steps.py", "line": 32,
                                                 "function": None}
    assert page.read_text().startswith("<!doctype html>")  # the report itself: tests/test_html.py


def test_steady_run_exits_zero(tmp_path):
    src = (FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0").read_text()
    first_five = src[: src.rindex("[ScheduleSyncTensorsGraph]")]
    path = tmp_path / "graphs.hlo.0"
    path.write_text(first_five)
    result = cli("explain-recompile", str(path))
    assert result.exit_code == 0, result.output
    assert "0 recompilations" in result.output


def test_torch_xla_dump_folder_families_ignore_module_numbers():
    """torch_xla dumps SyncTensorsGraph.10 then SyncTensorsGraph.15: one family, an added op on the output path."""
    folder = FIXTURES / "torch_xla" / "xla_dump_extra_op"
    t = truth_of(folder)
    result = explain(str(folder / "dump"))
    assert len(result.families) == 1 and len(result.graphs) == len(t["modules"])
    (r,) = result.recompilations
    assert [c.kind for c in r.causes] == [t["cause"]]
    assert "add" in r.causes[0].summary and "output" not in r.causes[0].summary
    assert {(f.file.rsplit("/", 1)[-1], f.line) for f in r.causes[0].locations} == {(t["user_file"], t["user_line"])}


def test_jax_side_effect_and_single_output_function():
    """jax.debug.print keeps its operand alive; a non-tuple root's shape change is the cause, at the call site."""
    folder = FIXTURES / "jax" / "debug_print"
    t = truth_of(folder)
    result = explain(str(folder / "dump"))
    (r,) = [r for r in result.recompilations if r.family.label == t["family"]]
    assert r.causes[0].kind == t["cause"]
    # the call that passed the new shape comes first (issue 19), then the use inside f, whose stack holds the call
    call, use = r.causes[0].locations[:2]
    assert call.line == t["user_line"] and call.function == "<module>"
    assert use.function == "f" and [f.line for f in r.causes[0].callers[use]] == [t["user_line"]]
    printed = [i for _, i in r.graph._module.instructions() if i.attrs.get("custom_call_has_side_effect") == "true"]
    assert printed and all(op in r.graph._canonical.entry.insts for op in printed[0].operands)


def test_print_mid_step_explains_both_halves_at_the_print_line():
    t = truth_of("torch_xla", "print_partial")
    result = explain(str(FIXTURES / "torch_xla" / "print_partial" / "graphs.hlo.0"))
    assert [r.graph.record.index for r in result.recompilations] == t["compilations"][1:]
    for r in result.recompilations:
        assert r.causes[0].kind == "partial"
        assert r.causes[0].locations[0].line == t["user_line"]
    assert "the rest of a step" in result.recompilations[1].causes[0].summary


def test_a_new_graph_every_step_is_unbounded_and_blamed_on_the_growing_shape():
    t = truth_of("torch_xla", "unbounded_growth")
    result = explain(str(FIXTURES / "torch_xla" / "unbounded_growth" / "graphs.hlo.0"))
    assert result.summary.startswith(f"{t['steps']} graphs, {t['steps']} compilations")
    assert "unbounded" in result.summary and f"(shape at unbounded_growth.py:{t['user_line']})" in result.summary
    assert all(r.causes[0].locations[0].line == t["user_line"] for r in result.recompilations)


def test_a_report_from_another_run_is_flagged_not_silently_dropped():
    result = explain(str(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0"),
                     tensors=str(FIXTURES / "torch_xla" / "metric_even_steps" / "tensors_report.txt"))
    assert any("fits none of these graphs" in h for h in result.hints)
    assert result.recompilations[0].tensors == []


def test_a_single_graph_reference_is_accepted():
    result = cli("inspect", "--json", str(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0")
                                       + "#5")
    assert result.exit_code == 0
    assert [g["index"] for g in json.loads(result.output)["graphs"]] == [5]
