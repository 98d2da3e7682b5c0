"""The Model Explorer renderer: layers from op_name scopes and computations, the status and cause overlays, the JSON
files (checked against Model Explorer's own Python data classes when the explorer extra is installed), and the
``--model-explorer-out`` / ``--model-explorer`` options.

The small modules below are hand-written to pin one rule each (a scope, a callee, a dtype flip, an added output);
the CLI tests run on the real torch_xla fixture ``batch_shape`` and the JAX fixture ``dtype_reductions``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from helpers import FIXTURES, cli, cli_json, truth_of
from hlodiff.diff import diff_modules
from hlodiff.graph import Normalization, canonicalize
from hlodiff.hlo import parse_module
from hlodiff.render.model_explorer import CAUSE_COLORS, FILES, STATUS_COLORS, explorer_input
from hlodiff.render.model_explorer_layers import common_prefix, computation_layers, layer_path

BATCH = str(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0")


def _module(dtype: str = "f32", extra_output: bool = False):
    """A jitted step with two named scopes (block_0, block_1), a reduce calling an adder, and optionally a third
    output computed in block_1."""
    out = "(f32[], f32[4], f32[4])" if extra_output else "(f32[], f32[4])"
    tail = ('  %e = f32[4]{0} exponential(f32[4]{0} %m), metadata={op_name="jit(f)/block_1/exp"}\n'
            '  ROOT %t = (f32[], f32[4]{0}, f32[4]{0}) tuple(f32[] %s, f32[4]{0} %m, f32[4]{0} %e)\n'
            if extra_output else '  ROOT %t = (f32[], f32[4]{0}) tuple(f32[] %s, f32[4]{0} %m)\n')
    return parse_module(f"""HloModule m

%add (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(f32[] %a, f32[] %b), metadata={{op_name="jit(f)/block_1/reduce_sum"}}
}}

ENTRY %main (x: f32[4], y: {dtype}[4]) -> {out} {{
  %x = f32[4]{{0}} parameter(0), metadata={{op_name="x"}}
  %y = {dtype}[4]{{0}} parameter(1), metadata={{op_name="y"}}
  %c = f32[4]{{0}} convert({dtype}[4]{{0}} %y), metadata={{op_name="jit(f)/block_0/convert_element_type"}}
  %m = f32[4]{{0}} multiply(f32[4]{{0}} %x, f32[4]{{0}} %c), metadata={{op_name="jit(f)/block_0/attn/mul"}}
  %z = f32[] constant(0), metadata={{op_name="jit(f)/block_1/reduce_sum"}}
  %s = f32[] reduce(f32[4]{{0}} %m, f32[] %z), dimensions={{0}}, to_apply=%add, \
metadata={{op_name="jit(f)/block_1/reduce_sum"}}
{tail}}}
""")


LAYER_ROWS = [
    # (op_name, op_type, opcode) -> layer path
    (("jit(step)/block_3/attn/dot_general", None, "dot"), ("jit(step)", "block_3", "attn")),
    (("aten__add.99/aten__add", "aten__add", "add"), ("aten__add", "aten__add.99")),
    (("aten__addcmul", "aten__addcmul", "multiply"), ("aten__addcmul",)),
    (("x", None, "parameter"), ("parameters",)),
    ((None, None, "tuple"), ("(no op_name)",)),
    (("jit(f)/mul;jit(f)/broadcast_in_dim", None, "multiply"), ("jit(f)",)),
    (("reduce_sum", None, "add"), ("reduce_sum",)),
    (("jit(f)/a b/c", None, "add"), ("jit(f)", "a b")),
]


@pytest.mark.parametrize("args, want", LAYER_ROWS, ids=[str(a[0]) for a, _ in LAYER_ROWS])
def test_layer_path_rules(args, want):
    assert layer_path(*args) == want


def test_common_prefix_is_the_shared_leading_layers():
    assert common_prefix([("jit(f)", "a"), ("jit(f)", "b", "c")]) == ("jit(f)",)
    assert common_prefix([("a",), ("b",)]) == ()
    assert common_prefix([]) == ()


def test_layers_strip_the_shared_jit_scope_and_nest_a_callee_under_its_caller():
    layers = computation_layers(canonicalize(_module(), Normalization()))
    assert layers["main"] == {"x": ("parameters",), "y": ("parameters",), "c": ("block_0",),
                              "m": ("block_0", "attn"), "z": ("block_1",), "s": ("block_1",), "t": ()}
    # The adder sits in the layer of the reduce calling it; its parameters and root at its own top.
    assert layers["add"] == {"a": ("block_1", "add"), "b": ("block_1", "add"), "r": ("block_1", "add")}


def _nodes(doc: dict) -> dict[str, dict]:
    return {n["id"]: n for n in doc["graphs"][0]["nodes"]}


def _attr(node: dict, key: str) -> str | None:
    return next((a["value"] for a in node["attrs"] if a["key"] == key), None)


def test_a_dtype_flip_and_an_added_output_map_to_statuses_causes_and_marked_layers():
    diff = diff_modules(_module(), _module("bf16", extra_output=True))
    data = explorer_input(diff, "a.hlo", "b.hlo")
    a, b = _nodes(data.graph_a), _nodes(data.graph_b)
    sa, sb = data.status["A: a.hlo"]["results"], data.status["B: b.hlo"]["results"]
    ca, cb = data.cause["A: a.hlo"]["results"], data.cause["B: b.hlo"]["results"]
    assert sa["y"] == {"value": "changed", "bgColor": STATUS_COLORS["changed"]}
    assert ca["y"] == {"value": "dtype", "bgColor": CAUSE_COLORS["dtype"]}
    assert sb["e"]["value"] == "only in B" and cb["e"]["value"] == "outputs" and "e" not in a
    assert sa["m"]["value"] == sb["m"]["value"] == "unchanged" and "m" not in ca
    # The root tuple changed on both sides; on A no cause is near it, so it takes B's (the added output).
    assert ca["t"]["value"] == cb["t"]["value"] == "outputs (same region)"
    # Matched instructions share their id (Model Explorer's "match node id" sync), the adder's included.
    assert set(a) <= set(b) and {"a", "b", "r"} <= set(b)
    assert b["e"]["namespace"] == "block_1" and _attr(b["e"], "status") == "only in B"
    graph_b = data.graph_b["graphs"][0]
    # The convert reading y is marked changed too (its operand's type changed, as hlo_diff marks such a user), so
    # block_0 holds a change of the dtype region; block_1 the added output.
    assert sb["c"]["value"] == "changed" and cb["c"]["value"] == "dtype (same region)"
    assert graph_b["groupNodeAttributes"] == {"block_0": {"hlodiff": "1 changed (dtype)"},
                                              "block_1": {"hlodiff": "1 only in B (outputs)"},
                                              "parameters": {"hlodiff": "1 changed (dtype)"}}
    regexes = {c["borderColor"]: c["namespaceRegex"] for c in graph_b["groupNodeConfigs"]}
    assert regexes == {"#188038": "^(?:block_1)$", "#e37400": "^(?:block_0|parameters)$"}
    assert "attn" not in json.dumps(graph_b["groupNodeConfigs"])
    # Edges follow operands, by position.
    assert [(e["sourceNodeId"], e["targetNodeInputId"]) for e in b["m"]["incomingEdges"]] == [("x", "0"), ("c", "1")]


def test_equal_modules_have_no_marked_layer_and_every_node_unchanged():
    data = explorer_input(diff_modules(_module(), _module()), "a", "b")
    for doc in (data.graph_a, data.graph_b):
        assert "groupNodeConfigs" not in doc["graphs"][0]
    assert {r["value"] for d in data.status.values() for r in d["results"].values()} == {"unchanged"}
    assert all(not d["results"] for d in data.cause.values())


def test_a_layer_name_with_regex_characters_is_matched_literally():
    from collections import Counter as C
    import re

    from hlodiff.render.model_explorer import _layer_configs

    configs = _layer_configs({"aten__add/aten__add.99": C(changed=1), "jit(f)/a|b": C(only_right=2)})
    by_colour = {c["borderColor"]: re.compile(c["namespaceRegex"]) for c in configs}
    assert by_colour["#e37400"].fullmatch("aten__add/aten__add.99")
    assert not by_colour["#e37400"].fullmatch("aten__add/aten__addX99")
    assert by_colour["#188038"].fullmatch("jit(f)/a|b") and not by_colour["#188038"].fullmatch("b")


# -- the CLI -------------------------------------------------------------------------------------------------------


def _out(tmp_path, *args) -> tuple[object, Path]:
    out = tmp_path / "me"
    result = cli("compare", f"{BATCH}#0", f"{BATCH}#5", "--model-explorer-out", str(out),
                                       *args)
    return result, out


def test_model_explorer_out_writes_both_graphs_and_both_overlays(tmp_path):
    result, out = _out(tmp_path)
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES.values())
    assert "model-explorer " in result.stderr and FILES["status"] in result.stderr
    a = json.loads((out / FILES["graph_a"]).read_text())
    status = json.loads((out / FILES["status"]).read_text())
    cause = json.loads((out / FILES["cause"]).read_text())
    gid = a["graphs"][0]["id"]
    assert gid == f"A: {BATCH}#0" and set(status) == set(cause) == {gid, f"B: {BATCH}#5"}
    # The batch-size parameter (the shape cause the terminal report names) is changed, and carries "shape".
    assert "input shape changed on parameter %p3.5" in result.stdout
    assert status[gid]["results"]["p3.5"]["value"] == "changed"
    assert cause[gid]["results"]["p3.5"]["value"] == "shape"
    counts = Counter(r["value"] for r in status[gid]["results"].values())
    assert counts["changed"] > 0 and counts["unchanged"] > 0 and sum(counts.values()) == len(a["graphs"][0]["nodes"])


def test_model_explorer_out_is_deterministic(tmp_path):
    first, out = _out(tmp_path)
    texts = {p.name: p.read_bytes() for p in out.iterdir()}
    cli("compare", f"{BATCH}#0", f"{BATCH}#5", "--model-explorer-out", str(out))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == texts


def test_model_explorer_options_need_two_graphs(tmp_path):
    result = cli("compare", BATCH, "--model-explorer-out", str(tmp_path / "x"))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "hlodiff compare: error: --model-explorer and --model-explorer-out need two graphs (A B) "
        "(see 'hlodiff compare --help')"]
    assert not (tmp_path / "x").exists()


def test_model_explorer_without_the_extra_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "model_explorer", None)  # as if the explorer extra were not installed
    result = cli("compare", f"{BATCH}#0", f"{BATCH}#5", "--model-explorer")
    assert result.exit_code == 2 and result.stdout == ""  # before the analysis: no report, then an error
    assert result.stderr.strip().splitlines()[-1] == (
        "hlodiff: error: --model-explorer needs Model Explorer: pip install 'hlodiff[explorer]' (or write the files "
        "with --model-explorer-out DIR for your own)")


def test_model_explorer_out_never_writes_over_an_input(tmp_path):
    folder = tmp_path / "me"
    folder.mkdir()
    dump = folder / FILES["graph_a"]
    dump.write_bytes(Path(BATCH).read_bytes())
    before = dump.read_bytes()
    result = cli("compare", f"{dump}#0", f"{dump}#5", "--model-explorer-out", str(folder))
    assert result.exit_code == 2 and "refusing to write the Model Explorer file" in result.stderr
    assert dump.read_bytes() == before


# -- Model Explorer's own data classes (the explorer extra) ---------------------------------------------------------


def _explorer_api():
    try:
        import dacite
        from model_explorer import graph_builder, node_data_builder
        from model_explorer.utils import remove_none
    except ImportError:
        pytest.skip("needs the explorer extra (pip install -e '.[explorer]'): model_explorer not installed")
    return dacite, graph_builder, node_data_builder, remove_none


def _subset(ours, theirs) -> bool:
    """Every key we wrote is there with the same value in what Model Explorer's classes serialize (they add their
    defaults)."""
    if isinstance(ours, dict):
        return isinstance(theirs, dict) and all(k in theirs and _subset(v, theirs[k]) for k, v in ours.items())
    if isinstance(ours, list):
        return isinstance(theirs, list) and len(ours) == len(theirs) and all(map(_subset, ours, theirs))
    return ours == theirs


def test_files_load_into_model_explorers_python_classes(tmp_path):
    dacite, gb, nb, remove_none = _explorer_api()
    from dataclasses import asdict

    result, out = _out(tmp_path)
    assert result.exit_code == 1
    strict = dacite.Config(strict=True)
    for name in (FILES["graph_a"], FILES["graph_b"]):
        doc = json.loads((out / name).read_text())
        collection = dacite.from_dict(gb.GraphCollection, doc, config=strict)  # unknown keys or wrong types raise
        assert _subset(doc, remove_none(asdict(collection)))
    for name in (FILES["status"], FILES["cause"]):
        doc = json.loads((out / name).read_text())
        # The values are strings: Model Explorer shows them as the colour's label (its docs for
        # showExpandedSummaryOnGroupNode); its Python annotation says number, so types are not checked here.
        model = nb.ModelNodeData(graphsData={
            gid: dacite.from_dict(nb.GraphNodeData, d, config=dacite.Config(strict=True, check_types=False))
            for gid, d in doc.items()})
        assert _subset(doc, json.loads(model.to_json_string()))
        assert all(isinstance(r["value"], str) and r["bgColor"].startswith("#")
                   for d in doc.values() for r in d["results"].values())


# -- explain-recompile ----------------------------------------------------------------------------------------------

METRIC = str(FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0")


def test_explain_recompile_shows_the_recompilation_beside_its_closest_earlier_graph(tmp_path):
    out = tmp_path / "me"
    result = cli("explain-recompile", METRIC, "--model-explorer-out", str(out))
    assert result.exit_code == 1, result.output
    a = json.loads((out / FILES["graph_a"]).read_text())["graphs"][0]
    status = json.loads((out / FILES["status"]).read_text())
    cause = json.loads((out / FILES["cause"]).read_text())
    # Graph #1 recompiled; its closest earlier graph is #0, which has the metric output #1 lacks.
    assert a["id"] == f"A: {METRIC}#0" and set(status) == {a["id"], f"B: {METRIC}#1"}
    gone = {k for k, r in status[a["id"]]["results"].items() if r["value"] == "only in A"}
    # As many as compare counts in the entry computation, plus the reducers only those instructions call.
    stats = cli_json("compare", f"{METRIC}#0", f"{METRIC}#1")["stats"]
    nodes = {n["id"]: n for n in a["nodes"]}
    entry_name = _attr(nodes["p0.1"], "computation")
    entry = {k for k in gone if _attr(nodes[k], "computation") == entry_name}
    callees = gone - entry
    assert len(entry) == stats["only_left"] and callees
    assert all(nodes[k]["namespace"] for k in callees)  # inside the layer of the reduce calling them
    assert {cause[a["id"]]["results"][k]["value"] for k in gone} == {"outputs", "outputs (same region)"}


def test_explain_recompile_with_a_graph_that_did_not_recompile_is_one_line(tmp_path):
    result = cli("explain-recompile", METRIC, "--model-explorer-out", str(tmp_path / "me"),
                                       "--recompilation", "3")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "hlodiff: error: --model-explorer: no graph #3 as a recompilation with a closest earlier graph to show "
        "(recompiled graphs compared: #1)")
    assert not (tmp_path / "me").exists()


def test_a_jax_dtype_change_marks_the_reducers_that_changed(tmp_path):
    """A real JAX dump (dtype_reductions: f32 -> bf16 input): every op shares jit(f), so that layer is dropped; each
    reducer computation is a layer beside the reduce calling it, marked when its dtype changed."""
    out = tmp_path / "me"
    dump = str(FIXTURES / "jax" / "dtype_reductions" / "dump")
    result = cli("explain-recompile", dump, "--model-explorer-out", str(out))
    assert result.exit_code == 1, result.output
    graph = json.loads((out / FILES["graph_b"]).read_text())["graphs"][0]
    namespaces = {n["namespace"] for n in graph["nodes"]}
    assert not any(ns.startswith("jit(") for ns in namespaces)
    marked = graph["groupNodeAttributes"]
    assert marked["parameters"] == {"hlodiff": "1 changed (dtype)"}
    regions = [ns for ns in marked if ns.startswith("region_")]
    assert regions and all(marked[ns]["hlodiff"].endswith("(dtype)") for ns in regions)
    unmarked = {ns for ns in namespaces if ns.startswith("region_")} - set(regions)
    assert unmarked  # reducers whose dtype stayed are not marked


def test_jax_named_scopes_are_the_layers_and_only_the_changed_block_is_marked(tmp_path):
    """fixtures/jax/named_scopes: a 4-block MLP under jax.named_scope; the second call gets block 2's weight in
    bf16. Its layers are the blocks (with their mlp scope), and only block_2 (and the parameters) are marked."""
    out = tmp_path / "me"
    truth = truth_of(FIXTURES / "jax" / "named_scopes")
    result = cli("explain-recompile", str(FIXTURES / "jax" / "named_scopes" / "dump"),
                                       "--model-explorer-out", str(out))
    assert result.exit_code == 1, result.output
    for name in (FILES["graph_a"], FILES["graph_b"]):
        graph = json.loads((out / name).read_text())["graphs"][0]
        tops = {n["namespace"].split("/")[0] for n in graph["nodes"]}
        assert {"block_0", "block_1", "block_2", "block_3", "head", "parameters"} <= tops
        assert {n["namespace"] for n in graph["nodes"] if _attr(n, "op_name") == "jit(forward)/block_1/mlp/tanh"} \
            == {"block_1/mlp"}
        marked = graph["groupNodeAttributes"]
        assert set(marked) == {truth["changed_scope"], truth["changed_scope"] + "/mlp", "parameters"}
        assert all(summary["hlodiff"].endswith(f"({truth['cause']})") for summary in marked.values())


def test_explain_recompile_model_explorer_without_the_extra_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "model_explorer", None)
    result = cli("explain-recompile", METRIC, "--model-explorer")
    assert result.exit_code == 2 and result.stdout == ""  # said before the analysis, no report printed
    assert result.stderr.strip().splitlines()[-1].startswith(
        "hlodiff: error: --model-explorer needs Model Explorer: pip install 'hlodiff[explorer]'")
