"""hlodiff cost on real dumps. Every byte figure is checked against an oracle that is not hlodiff: XLA's own buffer
assignment in the dump (the size XLA gave each named instruction's buffer), XLA's parser reading a shape (`xla_bytes`:
jaxlib, numpy's item size), or arithmetic written out here from the shapes in the module text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import FIXTURES, cli, cli_json, truth_of, xla_bytes

JAX_DUMP = FIXTURES / "jax" / "recompile_shape" / "dump"
PIPELINE = FIXTURES / "torch_xla" / "pipeline"
FSDP = FIXTURES / "torch_xla" / "fsdp_linear"


def xla_buffer_sizes(module: Path) -> dict[str, int]:
    """{instruction: bytes} from XLA's buffer assignment beside an optimized module (`value: <7 copy.3 @0> (size=N`):
    the size XLA itself gave each instruction's buffer when it compiled the module."""
    text = module.with_name(module.name.replace(".txt", "-buffer-assignment.txt")).read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"^ value: <\d+ (\S+) @0> \(size=(\d+),", text, re.M)}


def test_jax_dump_uses_xla_memory_report_and_optimized_modules():
    doc = cli_json("cost", str(JAX_DUMP), codes=(0,))
    assert doc["schema"] == "hlodiff.cost/1"
    first = doc["graphs"][0]
    hlo = (JAX_DUMP / "module_0000.jit_step.cpu_after_optimizations.txt").read_text()
    layout = re.search(r"entry_computation_layout=\{\((.*?)\)->\((.*?)\)\}", hlo)
    params = [s.split("{")[0] for s in layout.group(1).split(", ")]
    outs = [s.split("{")[0] for s in layout.group(2).split(", ")]
    assert first["parameters"] == {"count": len(params), "bytes": sum(map(xla_bytes, params))}
    assert first["outputs"] == {"count": len(outs), "bytes": sum(map(xla_bytes, outs))}
    report = (JAX_DUMP / "module_0000.jit_step.cpu_after_optimizations-memory-usage-report.txt").read_text()
    assert first["peak_source"] == "xla"
    assert first["peak_bytes"] == int(re.search(r"Total bytes: (\d+)", report).group(1))
    # the estimate is measured against XLA's figure
    assert abs(first["estimated_peak_bytes"] - first["peak_bytes"]) <= 0.15 * first["peak_bytes"]


def test_dump_without_buffer_assignment_is_estimated_and_says_so(tmp_path):
    for p in JAX_DUMP.glob("module_0000.jit_step.*.txt"):
        if "buffer-assignment" not in p.name and "memory-usage" not in p.name and "live-range" not in p.name:
            (tmp_path / p.name).write_bytes(p.read_bytes())
    doc = cli_json("cost", str(tmp_path), codes=(0,))
    assert doc["graphs"][0]["peak_source"] == "estimate"
    assert any("peak memory is hlodiff's estimate" in w for w in doc["warnings"])


def test_pipeline_boundary_names_forward_activations_by_tensor_id():
    folder = PIPELINE / "mb2"
    doc = cli_json("cost", str(folder / "graphs.hlo.0"), codes=(0,))
    first = doc["boundaries"][0]
    assert first["from"].endswith("#0") and first["to"].endswith("#1")
    assert first["bytes"] == sum(xla_bytes(t["shape"]) for t in first["tensors"])


def test_bad_inputs_are_one_line_errors():
    result = cli("cost", str(FIXTURES / "nope"))
    assert result.exit_code == 2 and "error:" in result.output and "Traceback" not in result.output


SCAN = FIXTURES / "jax" / "scan_buffer"


def test_loop_buffer_copies_are_named_at_the_loop_and_the_update_line():
    for variant in ("carry", "carry_remat"):
        truth = truth_of(SCAN / variant)
        doc = cli_json("cost", str(SCAN / variant / "dump"), codes=(0,))
        (graph,) = doc["graphs"]
        (lbc,) = graph["loop_buffer_copies"]
        shape = "f32[" + ",".join(map(str, truth["buffer_shape"])) + "]"
        module = SCAN / variant / "dump" / (truth["step_module"] + ".cpu_after_optimizations.txt")
        hlo = module.read_text()
        # the loop named is a real while of the optimized module, with XLA's own trip count (one per microbatch)
        loop_line = next(line for line in hlo.splitlines() if f"%{lbc['loop']} = " in line)
        assert " while(" in loop_line and '"known_trip_count":{"n":"%d"}' % truth["microbatches"] in loop_line
        copies = [line for line in hlo.splitlines() if any(f"%{c} = " in line for c in lbc["copies"])]
        assert len(copies) == lbc["count"] >= 1
        assert all(f"{shape}{{" in line and " copy(" in line for line in copies)
        assert lbc["shape"] == shape
        per_iteration = sum(xla_buffer_sizes(module)[name] for name in lbc["copies"])  # XLA's buffers of the copies
        assert lbc["bytes_per_iteration"] == per_iteration
        assert lbc["bytes_per_step"] == per_iteration * truth["microbatches"]
        assert lbc["location"]["line"] == truth["loop_buffer_update_line"]
        assert lbc["location"]["file"].endswith(truth["user_file"])


def test_scan_outputs_have_no_loop_buffer_copies():
    for variant in ("scan_out", "scan_out_remat"):
        (graph,) = cli_json("cost", str(SCAN / variant / "dump"), codes=(0,))["graphs"]
        assert graph["loop_buffer_copies"] == []


def test_copies_inside_loops_count_per_iteration_and_per_step():
    (graph,) = cli_json("cost", str(SCAN / "carry" / "dump"), codes=(0,))["graphs"]
    in_loops = [c for c in graph["copies"] if c["loop"] is not None]
    microbatches = truth_of(SCAN / "carry")["microbatches"]  # the scan's length, XLA's known_trip_count
    assert in_loops and all(c["per_iteration"] and c["trip_count"] == microbatches for c in in_loops)
    sizes = xla_buffer_sizes(SCAN / "carry" / "dump" / "module_0000.jit_loss.cpu_after_optimizations.txt")
    for c in graph["copies"]:
        assert c["bytes"] == sizes[c["name"]]
        assert c["bytes_per_step"] == c["bytes"] * (c["trip_count"] if c["loop"] else 1)
    assert graph["copy_bytes_per_step"] == sum(c["bytes_per_step"] for c in graph["copies"])


def test_peak_estimate_is_within_ten_percent_of_xla_on_every_jax_fixture_module():
    """The estimate's claim (docs/commands.md, cost) is for JAX's modules; torch_xla's optimized CPU modules run
    high (docs/performance.md), and there XLA's own figure is what cost reports (tests/test_debug_log_run.py)."""
    dumps = sorted({p.parent for p in (FIXTURES / "jax").rglob("*-memory-usage-report.txt")})
    checked = 0
    for dump in dumps:
        for graph in cli_json("cost", str(dump), codes=(0,))["graphs"]:
            assert graph["peak_source"] == "xla"
            assert abs(graph["estimated_peak_bytes"] - graph["peak_bytes"]) <= 0.10 * graph["peak_bytes"], graph["ref"]
            checked += 1
    assert checked >= 20


def test_compile_seconds_come_from_jax_log_compiles():
    doc = cli_json("cost", str(SCAN / "carry" / "dump"), codes=(0,))
    log = (SCAN / "carry" / "jax_log.txt").read_text()
    seconds = float(re.search(r"Finished XLA compilation of jit\(loss\) in ([0-9.]+) sec", log).group(1))
    assert doc["graphs"][0]["compile_seconds"] == round(seconds, 6)
    assert doc["run"]["compile_seconds"] == seconds


def test_record_folder_gives_each_compilation_its_compile_time():
    """`hlodiff cost DIR` on a `record` folder reads the compile_times.tsv inside it (not only logs beside it)."""
    folder = FIXTURES / "torch_xla" / "record_adamw" / "dump"
    rows = [line.split("\t") for line in (folder / "compile_times.tsv").read_text().splitlines()[1:]]
    doc = cli_json("cost", str(folder), codes=(0,))
    compiled = [g for g in doc["graphs"] if g["compiled"]]
    assert [g["compile_seconds"] for g in compiled] == [float(r[2]) for r in rows]
    assert doc["run"]["compile_seconds"] == sum(float(r[2]) for r in rows)
    assert "compile_times.tsv" in doc["run"]["compile_seconds_source"]


def test_boundaries_name_only_tensors_that_really_cross():
    """Checked against torch_xla's own record (in truth.json) of the device data each graph read: a tensor named
    as crossing from n to m is read by m and was not an input of n (n computed it)."""
    for folder in [PIPELINE / v for v in ("mb1", "mb2", "mb4")] + [FSDP / v for v in ("plain", "patched")]:
        truth = truth_of(folder)
        probes = truth["probes"]
        doc = cli_json("cost", str(folder / "graphs.hlo.0"), codes=(0,))
        named = set()
        for boundary in doc["boundaries"]:
            source = int(boundary["from"].rsplit("#", 1)[1])
            target = int(boundary["to"].rsplit("#", 1)[1])
            assert source < target
            for tensor in boundary["tensors"]:
                assert tensor["id"] in probes[target]["reads"], (folder.name, boundary["to"], tensor)
                assert tensor["id"] not in probes[source]["reads"], (folder.name, boundary["from"], tensor)
                if tensor["evidence"] == "listed" and "computes" in probes[source]:
                    assert tensor["id"] in probes[source]["computes"]
                named.add((target, tensor["id"]))
            assert boundary["bytes"] == sum(xla_bytes(t["shape"]) for t in boundary["tensors"])
        # every microbatch's forward activation and output reach its backward graph, named by id
        for mb in truth.get("activations", []):
            assert (mb["entry"], mb["act"]) in named and (mb["entry"], mb["out"]) in named


def test_backward_takes_the_transposed_weights_only_without_the_patched_linear():
    """pytorch/xla#3811 as boundaries: unpatched, W2.T and W3.T (held by autograd, never listed in a report) cross
    from the forward graph into the backward graph; patched, no transposed weight crosses."""
    truth = truth_of(FSDP / "plain")
    transposed = sorted(f"f32[{w[1]},{w[0]}]" for w in truth["weight_shapes"][1:])
    plain = cli_json("cost", str(FSDP / "plain" / "graphs.hlo.0"), codes=(0,))["boundaries"]
    first = next(b for b in plain if b["from"].endswith("#0") and b["to"].endswith("#1"))
    permutes = [t for t in first["tensors"] if t["ir_op"] == "aten::permute"]
    assert sorted(t["shape"] for t in permutes) == transposed
    assert all(t["evidence"] == "inferred" and t["id"] in truth["probes"][1]["reads"] for t in permutes)
    assert sum(t["bytes"] for t in permutes) == sum(map(xla_bytes, transposed))
    patched = cli_json("cost", str(FSDP / "patched" / "graphs.hlo.0"), codes=(0,))["boundaries"]
    assert not any(t["ir_op"] == "aten::permute" for b in patched for t in b["tensors"])


def test_boundary_bytes_follow_the_microbatch_size():
    """The stage-0 activation crossing into each backward is f32[rows, 24] with rows = 8 / microbatches."""
    for variant, rows in (("mb1", 8), ("mb2", 4), ("mb4", 2)):
        truth = truth_of(PIPELINE / variant)
        doc = cli_json("cost", str(PIPELINE / variant / "graphs.hlo.0"), codes=(0,))
        acts = {mb["act"] for mb in truth["activations"]}
        crossing = [t for b in doc["boundaries"] for t in b["tensors"] if t["id"] in acts]
        assert len(crossing) == len(acts) == 2 * truth["microbatches"]
        assert all(t["shape"] == f"f32[{rows},24]" and t["bytes"] == rows * 24 * 4 for t in crossing)  # f32: 4 bytes
        assert all(t["ir_op"] == "aten::relu" for t in crossing)  # the stage-0 ReLU, as the forward's report says


def test_graph_count_grows_with_microbatches_and_one_graph_has_no_boundaries():
    counts = {}
    for variant in ("mb1", "mb2", "mb4", "onegraph"):
        doc = cli_json("cost", str(PIPELINE / variant / "graphs.hlo.0"), codes=(0,))
        counts[variant] = doc["run"]["graphs"]
        families = doc["run"]["families"]
        assert sum(f["graphs"] for f in families) == doc["run"]["graphs"]
        if variant == "onegraph":
            assert doc["boundaries"] == [] and len(families) == 1
    steps = truth_of(PIPELINE / "mb1")["steps"]
    assert counts == {"mb1": steps * 3, "mb2": steps * 5, "mb4": steps * 9, "onegraph": steps}


def test_each_training_graph_ends_its_step_though_its_program_first_ran_without_a_report():
    """eval_own_sync.py: 9 training steps, each one graph (forward, backward and SGD's update, one sync), and a
    validation graph after steps 2, 5 and 8 (its own sync): 12 graphs. record stopped reporting once the run
    repeated itself, and the first training graph ran before any report. Every training graph is the same
    program, an optimizer graph, so each ends a pipeline step (a validation graph joins the step after it), and
    a step's ``reported`` counts the reports record wrote (the ``## SYNC`` headers), not the graphs given a phase."""
    run = FIXTURES / "scenarios" / "torch_xla" / "eval_own_sync" / "record"
    doc = cli_json("cost", str(run), codes=(0,))
    assert [g["phase"] for g in doc["graphs"]].count("optimizer") == 9
    steps = doc["pipeline"]["runs"][0]["steps"]
    assert [s["graphs"] for s in steps] == [1, 1, 1, 2, 1, 1, 2, 1, 1, 1]  # the last: validation, no update after
    assert [s["optimizer_graphs"] for s in steps] == [1] * 9 + [0]
    headers = [line for line in (run / "tensors_report.txt").read_text().splitlines() if line.startswith("## SYNC")]
    assert sum(s["reported"] for s in steps) == len(headers) == 2  # before executions 1 and 4 (## SYNC 1, 4)
    assert [s["first"].rsplit("#", 1)[1] for s in steps if s["complete"]] == ["1"]  # #4 shares its step with #3


def test_steps_without_a_report_are_named_apart_from_the_steps_told():
    """live_batch_change: record reported the first steps, stopped once the run repeated itself, and reported again
    when the batch size changed (step 5 compiled); the steps with no report are named in one line, and a step told
    on its own line is not inside a span of that line."""
    run = FIXTURES / "torch_xla" / "live_batch_change" / "dump"
    steps = cli_json("cost", str(run), codes=(0,))["pipeline"]["runs"][0]["steps"]
    quiet = [s["step"] for s in steps if s["reported"] == 0]
    told = [s["step"] for s in steps if s["reported"]]
    headers = [int(line.split()[2]) for line in (run / "tensors_report.txt").read_text().splitlines()
               if line.startswith("## SYNC")]  # the executions record reported before: one graph per step here
    assert told == headers == [0, 1, 5] and quiet == [2, 3, 4, 6, 7, 8, 9]
    lines = cli("cost", str(run), codes=(0,)).output.splitlines()
    assert [line.split(" step ")[1].split(" ")[0] for line in lines if " step " in line and "B in" in line] == \
        ["0", "1", "5"]
    (line,) = [line for line in lines if "no report before them" in line]
    assert " steps 2-4, 6-9 (7 graphs)" in line


def test_compare_carries_cost_deltas_and_names_the_new_loop_buffer_copies():
    truth = truth_of(SCAN / "carry")
    shape = "f32[" + ",".join(map(str, truth["buffer_shape"])) + "]"
    doc = cli_json("compare", str(SCAN / "scan_out" / "dump") + "#0", str(SCAN / "carry" / "dump") + "#0", "--cost",
                   codes=(0, 1))
    cost = doc["cost"]
    expected = 2 * xla_bytes(shape) * truth["microbatches"]  # two whole copies per iteration, one a microbatch
    assert cost["delta"]["loop_buffer_copy_bytes_per_step"] == expected
    assert cost["left"]["peak_bytes"] + cost["delta"]["peak_bytes"] == cost["right"]["peak_bytes"]
    assert cost["peak_source"] == {"left": "xla", "right": "xla"}
    line = next(c for c in cost["changes"] if "whole-buffer" in c)
    assert line.startswith(f"+2 whole-buffer copies of {shape} per iteration in %while")
    assert f"scan_buffer.py:{truth['loop_buffer_update_line']}" in line
    assert [c for c in cost["changes"] if shape in c] == [line]  # told once, not again as plain copies in a loop
    # and the other way round they disappear
    back = cli_json("compare", str(SCAN / "carry" / "dump") + "#0", str(SCAN / "scan_out" / "dump") + "#0", "--cost",
                    codes=(0, 1))["cost"]
    assert back["delta"]["loop_buffer_copy_bytes_per_step"] == -expected
    assert any(c.startswith(f"-2 whole-buffer copies of {shape}") for c in back["changes"])


def test_compare_of_torch_xla_graphs_lists_outputs_added_with_their_bytes():
    save = str(PIPELINE / "mb2" / "graphs.hlo.0")
    # F1 (4 outputs) -> F0 (also the 2 x and 2 y chunks)
    cost = cli_json("compare", save + "#2", save + "#0", "--cost", codes=(0, 1))["cost"]
    graphs = cli_json("cost", save, codes=(0,))["graphs"]
    hlo_outputs = lambda n: [s for s in graphs[n]["outputs"].values()]  # noqa: E731
    assert cost["delta"]["output_bytes"] == hlo_outputs(0)[1] - hlo_outputs(2)[1]
    assert cost["delta"]["output_bytes"] == 2 * (4 * 16 * 4) + 2 * (4 * 6 * 4)  # 2 x f32[4,16], 2 x f32[4,6]: 4 bytes
    line = next(c for c in cost["changes"] if c.startswith("4 outputs added ("))
    assert line.count("f32[4,16] ") == 2 and line.count("f32[4,6] ") == 2


def test_patched_linear_forward_stops_outputting_transposed_weights():
    """pytorch/xla#3811: unpatched, the forward graph outputs W.T of the layers whose input needs a gradient."""
    truth = truth_of(FSDP / "plain")
    transposed = [f"f32[{w[1]},{w[0]}]" for w in truth["weight_shapes"][1:]]  # layer 1's input needs no grad
    cost = cli_json("compare", str(FSDP / "plain" / "graphs.hlo.0") + "#0",
                    str(FSDP / "patched" / "graphs.hlo.0") + "#0", "--cost", codes=(0, 1))
    assert cost["cost"]["delta"]["output_bytes"] == -sum(map(xla_bytes, transposed))
    line = next(c for c in cost["cost"]["changes"] if "outputs removed" in c)
    assert line.startswith(f"{len(transposed)} outputs removed (")
    for shape in transposed:
        assert f"{shape} aten__permute at linear.py:" in line
    assert not any("outputs added" in c for c in cost["cost"]["changes"])


def test_explain_recompile_summary_says_what_compiling_cost():
    result = cli("explain-recompile", str(PIPELINE / "mb2" / "graphs.hlo.0"), "--json")
    doc = json.loads(result.output)
    metrics = (PIPELINE / "mb2" / "metrics.txt").read_text()
    samples = int(re.search(r"Metric: CompileTime\n\s+TotalSamples: (\d+)", metrics).group(1))
    n = len(doc["recompilations"])
    assert f"for {samples} compilations (torch_xla CompileTime metric, no per-graph times), {n} of them " \
           f"recompilation" in doc["summary"]
    # JAX: per compilation, from jax_log_compiles
    doc = cli_json("explain-recompile", str(SCAN / "carry" / "dump"))
    log = (SCAN / "carry" / "jax_log.txt").read_text()
    seconds = float(re.search(r"Finished XLA compilation of jit\(loss\) in ([0-9.]+) sec", log).group(1))
    assert doc["summary"].endswith(f"compiling took {seconds:.2f} s (jax_log_compiles)")


def test_compile_time_parsing_of_torch_xla_durations():
    from hlodiff.dumps.compile_times import parse_duration

    assert abs(parse_duration("01s205ms346.890us") - 1.205346890) < 1e-12
    assert parse_duration("02m03s") == 123.0
    assert parse_duration("12 apples") is None


CARRY = SCAN / "carry" / "dump" / "module_0000.jit_loss.cpu_after_optimizations.txt"


def _carry_text() -> str:
    return CARRY.read_text()


def test_loop_without_known_trip_count_gives_bytes_per_iteration_only(tmp_path):
    """The real optimized module with XLA's known_trip_count taken out (its fused loop condition has no bounds
    hlodiff can read): per-iteration figures stay, per-step ones become null."""
    path = tmp_path / "no_trip_count.hlo"
    path.write_text(re.sub(r'"known_trip_count":\{"n":"\d+"\},?', "", _carry_text()))
    (graph,) = cli_json("cost", str(path), codes=(0,))["graphs"]
    (lbc,) = graph["loop_buffer_copies"]
    assert lbc["trip_count"] is None and lbc["bytes_per_step"] is None
    assert lbc["bytes_per_iteration"] == sum(xla_buffer_sizes(CARRY)[name] for name in lbc["copies"])
    assert graph["copy_bytes_per_step"] is None
    assert all(c["bytes_per_step"] is None for c in graph["copies"] if c["loop"])
    assert all(loop["trip_count"] is None for loop in graph["loops"])
    out = cli("cost", str(path)).output
    assert "trip count unknown" in out and "Traceback" not in out


def test_trip_count_from_loop_bounds_before_optimizations():
    """JAX's unoptimized scan has no known_trip_count: the count comes from i < 6 counted up from 0."""
    doc = cli_json("cost", str(SCAN / "carry" / "dump"), "--stage", "before_optimizations", codes=(0,))
    (graph,) = doc["graphs"]
    assert graph["loops"] and all(l["trip_count"] == 6 and l["trip_count_source"] == "bounds"
                                  for l in graph["loops"])
    assert graph["peak_source"] == "estimate"
    assert any("peak memory is hlodiff's estimate" in w for w in doc["warnings"])


def test_unknown_element_type_is_a_one_line_error(tmp_path):
    path = tmp_path / "odd_type.hlo"
    path.write_text(_carry_text().replace("f32[64,64]", "q7[64,64]"))
    result = cli("cost", str(path))
    assert result.exit_code == 2
    assert re.fullmatch(rf"{re.escape(str(path))}:\d+:\d+: error: unknown element type 'q7'\n", result.output)


def test_boundaries_from_reports_printed_without_sync_headers(tmp_path):
    """Users print the report to stdout before each sync, without hlodiff's '## SYNC n' lines."""
    folder = PIPELINE / "mb2"
    bare = tmp_path / "stdout.log"
    bare.write_text("".join(line for line in (folder / "tensors_report.txt").read_text().splitlines(True)
                            if not line.startswith("## SYNC")))
    with_headers = cli_json("cost", str(folder / "graphs.hlo.0"), codes=(0,))["boundaries"]
    without = cli_json("cost", str(folder / "graphs.hlo.0"), "--tensors-report", str(bare), codes=(0,))["boundaries"]
    assert without == with_headers and without


def test_several_runs_side_by_side_keep_their_own_compilations_and_families():
    paths = [str(PIPELINE / v / "graphs.hlo.0") for v in ("mb1", "mb2", "mb4")]
    doc = cli_json("cost", *paths, codes=(0,))
    for path in paths:
        alone = cli_json("cost", path, codes=(0,))
        mine = [g for g in doc["graphs"] if g["ref"].startswith(path + "#")]
        assert [g["compiled"] for g in mine] == [g["compiled"] for g in alone["graphs"]]
        assert [f for f in doc["run"]["families"] if f["source"] == path] == alone["run"]["families"]


def test_terminal_report_names_the_copies_and_the_boundaries():
    truth = truth_of(SCAN / "carry")
    out = cli("cost", str(SCAN / "carry" / "dump")).output
    assert "(xla)" in out and "loop-buffer copies" in out
    shape = "f32[" + ",".join(map(str, truth["buffer_shape"])) + "]"
    per_iteration = 2 * xla_bytes(shape)
    per_step = per_iteration * truth["microbatches"]
    said = (f"2 whole copies of {shape} per iteration in %while.N: {per_iteration / 1024:.1f} KiB per iteration, "
            f"{per_step / 1024 ** 2:.1f} MiB per step at /home/user/project/scan_buffer.py:"
            f"{truth['loop_buffer_update_line']}")
    assert re.search(re.escape(said).replace("N", r"\d+"), out)
    out = cli("cost", str(PIPELINE / "mb2" / "graphs.hlo.0")).output
    boundaries = cli_json("cost", str(PIPELINE / "mb2" / "graphs.hlo.0"), codes=(0,))["boundaries"]
    # the PT_XLA_DEBUG log beside the save file gives torch_xla's own peak (tests/test_cost_torch_xla.py)
    assert f"graph boundaries: {len(boundaries)};" in out and "(torch_xla)" in out
    assert "torch_xla CompileTime metric" in out


def test_same_inputs_same_bytes():
    args = ("cost", str(PIPELINE / "mb4" / "graphs.hlo.0"), str(SCAN / "carry" / "dump"), "--json")
    assert cli(*args).output == cli(*args).output


def test_compare_of_a_whole_dump_gives_each_change_its_cost():
    result = cli("compare", str(FSDP / "plain" / "graphs.hlo.0"), "--json", "--cost")
    doc = json.loads(result.output)
    assert doc["comparisons"]
    for comparison in doc["comparisons"]:
        cost = comparison["cost"]
        for key, delta in cost["delta"].items():
            if delta is not None and key != "compile_seconds":
                assert cost["right"][key] - cost["left"][key] == delta


def test_compile_times_written_by_record_pair_with_graphs_by_hash(tmp_path):
    """``hlodiff record`` writes compile_times.tsv (its own format: one line per compilation, torch_xla's graph
    hash and CompileTime seconds); cost pairs each compiled graph with its line."""
    from hlodiff.capture.runlog import COMPILE_TIMES_HEADER

    save = tmp_path / "graphs.hlo.0"
    save.write_bytes((PIPELINE / "mb2" / "graphs.hlo.0").read_bytes())
    truth = truth_of(PIPELINE / "mb2")
    compiled = [e for e in truth["entries"] if e["compiled"]]
    rows = [f"{k}\t{e['graph_hash']}\t{0.25 * (k + 1):.6f}\t{e['entry']}\n" for k, e in enumerate(compiled)]
    rows[-1] = f"{len(compiled) - 1}\t{compiled[-1]['graph_hash']}\t\t{compiled[-1]['entry']}\n"  # a dropped sample
    (tmp_path / "compile_times.tsv").write_text(COMPILE_TIMES_HEADER + "".join(rows))
    doc = cli_json("cost", str(save), codes=(0,))
    seconds = {g["index"]: g["compile_seconds"] for g in doc["graphs"]}
    for k, entry in enumerate(compiled[:-1]):
        assert seconds[entry["entry"]] == 0.25 * (k + 1)
    assert seconds[compiled[-1]["entry"]] is None
    assert all(seconds[e["entry"]] is None for e in truth["entries"] if not e["compiled"])
    assert doc["run"]["compile_seconds"] == sum(0.25 * (k + 1) for k in range(len(compiled) - 1))
    assert "compile_times.tsv" in doc["run"]["compile_seconds_source"]


def test_a_log_reached_by_two_spellings_counts_once(monkeypatch):
    """A dump given relative to the working folder finds its jax_log.txt both as JAX's log and beside the dump:
    the run's compile time is its one compilation's (it read 6.69 s for one 3.34 s compilation)."""
    monkeypatch.chdir(SCAN.parents[2])  # the repository root: the dump is given as fixtures/jax/...
    doc = cli_json("cost", str((SCAN / "carry" / "dump").relative_to(SCAN.parents[2])), codes=(0,))
    (graph,) = doc["graphs"]
    assert graph["compile_seconds"] is not None
    assert doc["run"]["compile_seconds"] == pytest.approx(graph["compile_seconds"], abs=1e-3)


def test_cost_of_one_graph_picked_out_says_whether_it_compiled_and_draws_no_boundaries():
    """`cost PATH#N` of a cache hit said "1 graph, 1 compiled", and warned that the reports of the other graphs
    describe no graph of the dump."""
    dump = FIXTURES / "torch_xla" / "steady" / "graphs.hlo.0"
    explained = cli_json("explain-recompile", str(dump))
    compiled = [g["compiled"] for g in explained["graphs"]]
    hit, first = compiled.index(False), compiled.index(True)
    for index in (hit, first):
        result = cli("cost", f"{dump}#{index}")
        assert result.exit_code == 0, result.output
        assert result.output.splitlines()[2] == f"1 graph, {int(compiled[index])} compiled"  # after "first:"
        doc = cli_json("cost", f"{dump}#{index}", codes=(0,))
        assert [g["compiled"] for g in doc["graphs"]] == [compiled[index]]
        assert doc["boundaries"] == [] and doc["warnings"] == []


def test_compare_computes_the_cost_only_when_asked():
    """The cost delta is a fifth of a big comparison's work (issue 23): without --cost, compare --json says null and
    the terminal report has no cost line; --html always carries it."""
    a, b = str(SCAN / "scan_out" / "dump") + "#0", str(SCAN / "carry" / "dump") + "#0"
    plain = cli("compare", a, b, "--json")
    assert json.loads(plain.stdout)["cost"] is None
    assert "cost (right - left)" not in cli("compare", a, b).stdout
    assert "cost (right - left)" in cli("compare", a, b, "--cost").stdout
