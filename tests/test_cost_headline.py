"""`hlodiff cost`'s first finding (hlodiff/cost/headline.py, hlodiff/cost/donation.py): one test per row of each
knowledge table, the look-alikes that share a rule's evidence, and what a user reads first on real captures."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli, cli_json
from hlodiff.cost.donation import Undonated, donation_facts, is_jax_own_module
from hlodiff.cost.replaced_inputs import PARTIAL_UPDATE_OPCODES, UPDATE_OPCODES
from hlodiff.cost.headline import (ACCUMULATION, FRAMEWORK_PREFIXES, HELD_ROLES, PRECEDENCE, SYNC_FUNCTIONS,
                                   UNDONATED_FRAMEWORKS, CostHeadline, cost_headline, framework_of, sync_call)
from hlodiff.cost.reads import read_follows_sync
from hlodiff.cost.crossings import Boundary, BoundaryTensor
from hlodiff.cost.figures import Tally
from hlodiff.cost.model import GraphCost, RunCost
from hlodiff.cost.roles import BACKWARD, FORWARD, OPTIMIZER
from hlodiff.cost.source import SourceLocator
from hlodiff.hlo import parse_module
from hlodiff.hlo.model import SourceFrame
from hlodiff.render.cost_headline import headline_json

UNARY = {"negate", "convert", "sqrt", "rsqrt", "exp", "log", "tanh", "abs"}


def _module(op: str, header: str = "", name: str = "jit_step", shape: str = "f32[4,2]") -> str:
    args = "p0" if op in UNARY else ("c, p0, p1" if op in ("select", "clamp") else "p0, p1")
    pred = f"  c = pred[{shape[4:-1]}] parameter(2)\n" if op in ("select", "clamp") else ""
    if op == "clamp":  # clamp(min, x, max): the first operand read is p1
        args, pred = "p1, p0, p1", ""
    out = "f32"
    return (f"HloModule {name}{header}\n\nENTRY main {{\n  p0 = {shape} parameter(0)\n  p1 = {shape} parameter(1)\n"
            f"{pred}  ROOT r = {out}{shape[3:]} {op}({args})\n}}\n")


def _facts(text: str):
    m = parse_module(text)
    return donation_facts(m, SourceLocator(m))


@pytest.mark.parametrize("op", sorted(UPDATE_OPCODES))
def test_each_update_opcode_makes_a_replaced_input_when_nothing_is_aliased(op):
    undonated, unusable = _facts(_module(op))
    assert [(u.parameter, u.shape, u.bytes) for u in undonated] == [(1 if op == "clamp" else 0, "f32[4,2]", 32)]
    assert unusable == []


@pytest.mark.parametrize("op", sorted(UPDATE_OPCODES))
def test_each_update_opcode_is_no_finding_once_the_output_is_aliased(op):
    undonated, _ = _facts(_module(op, ", input_output_alias={ {}: (0, {}, may-alias) }"))
    assert undonated == []


_PARTIAL = {
    "dynamic-update-slice": "dynamic-update-slice({buf}, v, i, j)",
    "scatter": ("scatter({buf}, k, v), update_window_dims={{1}}, inserted_window_dims={{0}}, "
                "scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=keep"),
}


def _partial_module(op: str, header: str = "", buf: str = "p0") -> str:
    return (f"HloModule jit_decode{header}\n\nkeep {{\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}}\n\n"
            "ENTRY main {\n  p0 = f32[8,4] parameter(0)\n  v = f32[1,4] parameter(1)\n  i = s32[] parameter(2)\n"
            "  j = s32[] parameter(3)\n  k = s32[1,1] parameter(4)\n  z = f32[] constant(0)\n"
            "  zeros = f32[8,4] broadcast(z), dimensions={}\n"
            f"  ROOT r = f32[8,4] {_PARTIAL[op].format(buf=buf)}\n}}\n")


def test_every_partial_update_opcode_has_a_module_here():
    assert set(_PARTIAL) == set(PARTIAL_UPDATE_OPCODES)


@pytest.mark.parametrize("op", sorted(PARTIAL_UPDATE_OPCODES))
def test_each_partial_update_of_an_undonated_input_replaces_it(op):
    """A decode step writing one position of its KV cache (jax_kv_cache_no_donate): undonated, XLA copies the whole
    cache into a new buffer every call to change one row."""
    undonated, unusable = _facts(_partial_module(op))
    assert [(u.parameter, u.shape, u.bytes) for u in undonated] == [(0, "f32[8,4]", 128)] and unusable == []


@pytest.mark.parametrize("op", sorted(PARTIAL_UPDATE_OPCODES))
def test_a_partial_update_is_no_finding_once_donated_or_of_a_fresh_buffer(op):
    assert _facts(_partial_module(op, ", input_output_alias={ {}: (0, {}, may-alias) }"))[0] == []
    assert _facts(_partial_module(op, buf="zeros"))[0] == []    # written into a buffer the step made itself


def test_a_gradient_shaped_like_its_weight_is_no_replacement():
    """dot(activations, delta) has the weight's shape but reads no weight: donating the weight would be wrong."""
    text = ("HloModule jit_grad\n\nENTRY main {\n  w = f32[4,2] parameter(0)\n  a = f32[3,4] parameter(1)\n"
            "  d = f32[3,2] parameter(2)\n  ROOT g = f32[4,2] dot(a, d), lhs_contracting_dims={0}, "
            "rhs_contracting_dims={0}\n}\n")
    assert _facts(text) == ([], [])


def _keep(name: str = "jit_keep", header: str = "", root: str = "f32[4,2] copy(p0)") -> str:
    return f"HloModule {name}{header}\n\nENTRY main {{\n  p0 = f32[4,2] parameter(0)\n  ROOT c = {root}\n}}\n"


def test_an_input_handed_back_undonated_is_copied_every_call():
    """An eval step's `return state, metrics` (jax_eval_returns_state): nothing computed, but the output is a copy
    of the input in a buffer of its own, both held."""
    undonated, unusable = _facts(_keep())
    assert [(u.parameter, u.shape, u.bytes, u.unchanged) for u in undonated] == [(0, "f32[4,2]", 32, True)]
    assert unusable == []


@pytest.mark.parametrize("text", [
    _keep(name="jit_stage"),                                                 # JAX's device_put: not the user's
    _keep(header=", input_output_alias={ {}: (0, {}, may-alias) }"),          # donated: handed back in place
    _keep(root="f32[8] bitcast(p0)"),                                        # a reshape: not the input unchanged
])
def test_no_unchanged_input_where_nothing_is_copied_back_as_it_came(text):
    assert _facts(text) == ([], [])


def test_a_step_returning_its_inputs_unchanged_heads_with_return_only():
    g = _graph("run#0", name="jit_eval_step",
               undonated=[Undonated(0, 0, "f32[32,512]", 65536, unchanged=True),
                          Undonated(1, 1, "f32[512,1]", 2048, unchanged=True)])
    doc = headline_json(cost_headline(RunCost([g])))
    assert (doc["kind"], doc["unchanged"], doc["count"]) == ("not_donated", 2, 2)
    assert "unchanged" in doc["summary"] and "return only" in doc["fix"] and "donate_argnums" in doc["fix"]


def test_computed_and_unchanged_inputs_together_keep_the_donation_fix():
    g = _graph("run#0", name="jit_train_step",
               undonated=[Undonated(0, 0, "f32[16,16]", 1024), Undonated(1, 1, "f32[16,16]", 1024, unchanged=True)])
    doc = headline_json(cost_headline(RunCost([g])))
    assert "1 input unchanged" in doc["summary"] and "return only" not in doc["fix"]
    assert "donate_argnums" in doc["fix"]


def test_a_scalar_output_is_no_evidence():
    text = ("HloModule jit_loss\n\nENTRY main {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n"
            "  ROOT r = f32[] divide(p1, p0)\n}\n")
    assert _facts(text) == ([], [])


def test_an_update_inside_a_multi_output_fusion_names_its_own_parameter():
    """XLA fuses Adam's updates into one loop with several outputs: each output is followed to the parameter its
    own arithmetic reads (here the second output is parameter 1's new value, not parameter 0's)."""
    text = """HloModule jit_adam

fused {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  g = f32[4] parameter(2)
  na = f32[4] subtract(a, g)
  nb = f32[4] multiply(b, g)
  ROOT t = (f32[4], f32[4]) tuple(na, nb)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  x = f32[3,4] parameter(2)
  r = f32[4] reduce-precision(p0), exponent_bits=8, mantissa_bits=23
  f = (f32[4], f32[4]) fusion(p1, p0, r), kind=kLoop, calls=fused
  g0 = f32[4] get-tuple-element(f), index=0
  g1 = f32[4] get-tuple-element(f), index=1
  ROOT out = (f32[4], f32[4]) tuple(g1, g0)
}
"""
    undonated, _ = _facts(text)
    assert sorted((u.output, u.parameter) for u in undonated) == [(0, 0), (1, 1)]


@pytest.mark.parametrize("mismatch,out_shape,closest", [("dtype", "bf16[4,2]", "bf16[4,2]"),
                                                        ("shape", "f32[2,4]", "f32[2,4]"),
                                                        (None, "f32[3]", None)])
def test_a_donation_no_output_takes_is_unusable_and_says_why(mismatch, out_shape, closest):
    text = (f"HloModule jit_step, buffer_donor={{ (0, {{}}) }}\n\nENTRY main {{\n  p0 = f32[4,2] parameter(0)\n"
            f"  ROOT r = {out_shape} parameter(1)\n}}\n")
    _, unusable = _facts(text)
    assert [(u.parameter, u.shape, u.mismatch, u.closest) for u in unusable] == [(0, "f32[4,2]", mismatch, closest)]


def test_a_donation_an_output_took_is_fine():
    text = ("HloModule jit_step, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }\n\n"
            "ENTRY main {\n  p0 = f32[4,2] parameter(0)\n  p1 = f32[4,2] parameter(1)\n"
            "  ROOT r = f32[4,2] subtract(p0, p1)\n}\n")
    assert _facts(text) == ([], [])


def test_jax_private_helpers_and_user_functions():
    assert is_jax_own_module("jit__reduce_sum") and is_jax_own_module("jit__mean")
    assert not is_jax_own_module("jit_train_step") and not is_jax_own_module("SyncTensorsGraph.12")


@pytest.mark.parametrize("row", sorted(SYNC_FUNCTIONS.items()))
def test_each_sync_function_names_how_the_graph_ended(row):
    (file, function), how = row
    frames = [SourceFrame(f"/usr/lib/python3.11/site-packages/torch_xla/{file}", 10, function),
              SourceFrame("/home/user/project/train.py", 7, "<module>")]
    assert sync_call(frames) == how


def test_a_stack_of_user_frames_alone_is_a_read_and_none_is_unknown():
    assert sync_call([SourceFrame("/home/user/project/train.py", 7, "<module>")]) == "read"
    assert sync_call(()) is None


@pytest.mark.parametrize("row", FRAMEWORK_PREFIXES)
def test_each_framework_prefix(row):
    prefix, framework = row
    assert framework_of(prefix + "x") == framework


def test_a_module_of_no_known_framework():
    assert framework_of("main") is None


def _graph(ref: str, name: str = "SyncTensorsGraph.1", **kw) -> GraphCost:
    return GraphCost(ref=ref, index=int(ref.rsplit("#", 1)[1]), name=name, instructions=10, parameters=Tally(1, 4),
                     outputs=Tally(1, 4), aliased_bytes=0, peak_bytes=8, peak_source="estimate",
                     estimated_peak_bytes=8, **kw)


def _tensor(role: str, n: int = 64) -> BoundaryTensor:
    return BoundaryTensor(id=n, shape="f32[16]", bytes=n, role=role)


SYNC_AT = SourceFrame("/home/user/project/train.py", 16, "<module>")


@pytest.mark.parametrize("row", sorted(HELD_ROLES))
def test_each_held_role_row_heads_the_run(row):
    role, made_in, read_in = row
    run = RunCost([_graph("run#0", trigger=SYNC_AT, sync_call="sync"), _graph("run#1")],
                  [Boundary("run#0", "run#1", [_tensor(role)], source_phase=made_in, target_phase=read_in)])
    head = cost_headline(run)
    assert (head.kind, head.role, head.cut, head.location, head.bytes) == ("held_across_graphs", role, "sync",
                                                                           SYNC_AT, 64)


@pytest.mark.parametrize("crossing", [("parameter", OPTIMIZER, FORWARD), ("optimizer_state", OPTIMIZER, OPTIMIZER),
                                      ("other", FORWARD, FORWARD), ACCUMULATION])
def test_what_a_step_hands_the_next_is_no_finding(crossing):
    """Weights and momenta cross from step to step in any one-graph-per-step run; a micro-batch's slice of the
    input, and gradients accumulated from micro-batch to micro-batch, are their programs' design."""
    role, made_in, read_in = crossing
    run = RunCost([_graph("run#0", trigger=SYNC_AT, sync_call="sync"), _graph("run#1")],
                  [Boundary("run#0", "run#1", [_tensor(role)], source_phase=made_in, target_phase=read_in)])
    assert cost_headline(run) is None


def test_gradients_into_the_optimizer_of_an_accumulating_run_are_no_finding():
    run = RunCost([_graph(f"run#{i}", trigger=SYNC_AT, sync_call="sync") for i in range(3)],
                  [Boundary("run#0", "run#1", [_tensor("gradient")], source_phase=BACKWARD, target_phase=BACKWARD),
                   Boundary("run#1", "run#2", [_tensor("gradient")], source_phase=BACKWARD, target_phase=OPTIMIZER)])
    assert cost_headline(run) is None


def test_precedence_orders_the_findings():
    """Every kind the finders make is in the table, once; a donation asked for and lost heads."""
    assert sorted(PRECEDENCE) == sorted({"donation_unusable", "loop_buffer_copy", "held_across_graphs",
                                         "read_in_step", "not_donated", "baked_constant"})
    assert PRECEDENCE[-1] == "baked_constant"  # once per program: every per-step finding comes first
    from hlodiff.cost.donation import Undonated, UnusableDonation

    g = _graph("run#0", name="jit_step", undonated=[Undonated(1, 0, "f32[64]", 256)],
               unusable_donations=[UnusableDonation(0, "f32[4]", 16, "dtype", "bf16[4]")])
    assert cost_headline(RunCost([g])).kind == "donation_unusable"
    g.unusable_donations = []
    assert cost_headline(RunCost([g])).kind == "not_donated"


@pytest.mark.parametrize("framework", ["jax", "torch_xla"])
def test_undonated_state_is_judged_for_jax_only(framework):
    from hlodiff.cost.donation import Undonated

    name = "jit_step" if framework == "jax" else "SyncTensorsGraph.3"
    head = cost_headline(RunCost([_graph("run#0", name=name, undonated=[Undonated(0, 0, "f32[64]", 256)])]))
    assert (head is not None) == (framework in UNDONATED_FRAMEWORKS)


def test_the_headline_json_carries_its_facts():
    h = CostHeadline("not_donated", "run#0", 256, None, framework="jax", shapes=["f32[64]"])
    assert {"kind", "graph", "framework", "bytes", "location", "count", "shapes"} <= set(h.to_json())


# ---- real captures -------------------------------------------------------------------------------------------

def test_accumulation_with_a_sync_per_micro_batch_has_no_headline():
    """pytorch/xla#1367's way (recorded): the accumulated gradients cross by design."""
    doc = cli_json("cost", str(FIXTURES / "torch_xla" / "accum_sync_micro" / "record"), codes=(0,))
    assert doc["headline"] is None
    assert any(t["role"] == "gradient" for b in doc["boundaries"] for t in b["tensors"])  # they were seen


def test_a_torch_xla_output_computed_from_the_batch_is_no_undonated_state():
    """review3_collate_key keeps `err = (model(x) - y) ** 2` in a variable: an output shaped like the batch's y."""
    doc = cli_json("cost", str(FIXTURES / "scenarios" / "torch_xla" / "review3_collate_key" / "record"), codes=(0,))
    assert doc["headline"] is None


def test_the_terminal_report_opens_with_the_finding_and_its_fix():
    out = cli("cost", str(FIXTURES / "jax" / "scan_buffer" / "carry")).stdout
    first, fix = out.splitlines()[:2]
    assert first.startswith("first: a loop-carried buffer f32[6,2,4,32,16] is copied whole every iteration")
    assert first.endswith("scan_buffer.py:73") and fix.startswith("fix: emit each iteration's slice as a scan output")


def test_a_run_with_nothing_costly_says_so_first_then_its_counts():
    """Review 15 F9: a report with no finding opened with its counts, and a user had to read the tables to decide it
    was fine; it opens with "nothing to act on" (where a finding would be), then the counts."""
    out = cli("cost", str(FIXTURES / "jax" / "scan_buffer" / "scan_out")).stdout
    first, blank, counts = out.splitlines()[:3]
    assert first.startswith("first: nothing to act on") and not blank and counts.startswith("1 graph, 1 compiled")
    assert "model's state" not in first  # a JAX dump hands nothing between graphs that a report names
    doc = cli_json("cost", str(FIXTURES / "jax" / "scan_buffer" / "scan_out"), codes=(0,))
    assert doc["headline"] is None


# ---- a value read inside the step (hlodiff/cost/reads.py) ----------------------------------------------------

READ_AT = SourceFrame("/home/user/project/train.py", 16, "<module>")
DOT = ("dot", "f32[16,128]")


def _step_pairs(n: int, read_ops=None, step_ops=None, first="read", then="sync"):
    graphs = []
    for i in range(n):
        graphs.append(_graph(f"run#{2 * i}", name="SyncTensorsGraph.82", trigger=READ_AT, sync_call=first,
                             heavy_ops=dict(read_ops or {DOT: 1})))
        graphs.append(_graph(f"run#{2 * i + 1}", name="SyncTensorsGraph.174", trigger=SYNC_AT, sync_call=then,
                             heavy_ops=dict(step_ops or {DOT: 1, ("dot", "f32[128,32]"): 1})))
    return graphs


def test_a_read_before_the_sync_every_step_heads_with_its_line():
    head = cost_headline(RunCost(_step_pairs(3)))
    assert (head.kind, head.location, head.then_at, head.times, head.recomputed, head.cut) == \
        ("read_in_step", READ_AT, SYNC_AT, 3, True, "read")


def test_a_read_whose_work_the_step_does_not_repeat_says_no_recomputation():
    head = cost_headline(RunCost(_step_pairs(2, step_ops={("dot", "f32[4,4]"): 1})))
    assert head.kind == "read_in_step" and head.recomputed is False


def test_a_read_once_is_no_finding():
    """A loss printed at the end of an epoch costs one execution, not one per step."""
    assert cost_headline(RunCost(_step_pairs(1))) is None


@pytest.mark.parametrize("first", ["sync", "save", "compiled", None])
def test_graphs_the_user_or_torch_compile_asked_for_are_no_read(first):
    assert cost_headline(RunCost(_step_pairs(3, first=first))) is None


def test_a_read_after_the_sync_runs_no_graph_and_is_no_finding():
    """xla_one_sync_control reads the loss after the sync: the value is there, nothing executes (no read graph)."""
    graphs = [_graph(f"run#{i}", name="SyncTensorsGraph.1", trigger=SYNC_AT, sync_call="sync") for i in range(4)]
    assert cost_headline(RunCost(graphs)) is None


LOOP = "/home/user/project/train.py"


def _stacked(n: int, read_line: int, sync_line: int, step_ops=None):
    """Executions of a loop that syncs at ``sync_line`` and reads a value at ``read_line`` (one module frame)."""
    graphs = _step_pairs(n, step_ops=step_ops)
    for g in graphs:
        line = read_line if g.sync_call == "read" else sync_line
        g.trigger = SourceFrame(LOOP, line, "<module>")
        g.stack = (g.trigger,)
    return graphs


def test_a_metric_read_below_the_sync_that_redoes_nothing_is_no_finding():
    """xla_metric_after_sync_control: `.item()` of an accuracy of the logits below the step's sync; its small graph
    is followed by the next step's sync only because the loop goes round."""
    assert cost_headline(RunCost(_stacked(3, 19, 18, step_ops={("dot", "f32[4,4]"): 1}))) is None


def test_a_read_below_a_sync_at_the_top_of_the_loop_that_runs_the_step_early_heads():
    """`for ...: sync(); ...; loss.item()`: the read runs the step's forward, the next sync computes it again."""
    head = cost_headline(RunCost(_stacked(3, 19, 12)))
    assert (head.kind, head.location.line, head.recomputed) == ("read_in_step", 19, True)


def _compiled_call_steps(n: int, read_line: int, sync_line: int):
    """Steps of a torch.compile'd call: its graph, the step's sync at ``sync_line``, a read at ``read_line``, then
    the next call materialising its inputs (a sync hlodiff cannot place: no stack)."""
    graphs = []
    for i in range(n):
        graphs.append(_graph(f"run#{4 * i}", name="SyncTensorsGraph.131", sync_call="compiled", heavy_ops={DOT: 1}))
        graphs.append(_graph(f"run#{4 * i + 1}", name="SyncTensorsGraph.87", sync_call="sync",
                             trigger=SourceFrame(LOOP, sync_line, "main"),
                             stack=(SourceFrame(LOOP, sync_line, "main"),)))
        graphs.append(_graph(f"run#{4 * i + 2}", name="SyncTensorsGraph.10", sync_call="read",
                             trigger=SourceFrame(LOOP, read_line, "main"),
                             stack=(SourceFrame(LOOP, read_line, "main"),)))
        graphs.append(_graph(f"run#{4 * i + 3}", name="SyncTensorsGraph.17", sync_call="sync"))
    return graphs


def test_a_read_below_the_sync_before_a_sync_of_unknown_place_is_no_finding():
    """Review 23 F3 (d2_beams): `torch_xla.sync()` at :38 then `s.max().item()` at :39; the next graph is the
    compiled call's inputs, a sync with no stack. The read already follows the step's sync: "read the value after
    the step's sync" cannot be acted on, as for the same code whose next graph hlodiff did not call a sync (d1)."""
    assert cost_headline(RunCost(_compiled_call_steps(3, 39, 38))) is None


def test_a_read_above_the_sync_before_a_sync_of_unknown_place_still_heads():
    """The look-alike: the read comes before the step's sync in the code (line 37 < 38): it cuts the step."""
    head = cost_headline(RunCost(_compiled_call_steps(3, 37, 38)))
    assert (head.kind, head.location.line) == ("read_in_step", 37)


def test_a_cheap_read_above_the_sync_still_heads():
    head = cost_headline(RunCost(_stacked(3, 12, 18, step_ops={("dot", "f32[4,4]"): 1})))
    assert (head.kind, head.recomputed) == ("read_in_step", False)


@pytest.mark.parametrize("read, sync, after", [
    ([(LOOP, 19, "<module>")], [(LOOP, 18, "<module>")], True),
    ([(LOOP, 17, "<module>")], [(LOOP, 22, "<module>")], False),
    # a helper called below the sync reads: the loop's frames part at lines 30 > 18
    ([("/home/user/project/metrics.py", 5, "accuracy"), (LOOP, 30, "<module>")], [(LOOP, 18, "<module>")], True),
    # the same helper called above the sync
    ([("/home/user/project/metrics.py", 5, "accuracy"), (LOOP, 10, "<module>")], [(LOOP, 18, "<module>")], False),
    # no frame in common: unknown, so not "after"
    ([("/home/user/project/a.py", 9, "f")], [("/home/user/project/b.py", 3, "g")], False),
    ([], [(LOOP, 18, "<module>")], False),
])
def test_read_follows_sync_compares_lines_where_the_stacks_part(read, sync, after):
    assert read_follows_sync(tuple(SourceFrame(*f) for f in read), tuple(SourceFrame(*f) for f in sync)) is after


def test_reads_in_step_on_real_captures():
    """if_loss_spike's `if loss > 4.0` reads the loss every step, before the step's sync; the step's graph runs the
    forward again."""
    doc = cli_json("cost", str(FIXTURES / "scenarios" / "torch_xla" / "if_loss_spike"), codes=(0,))
    head = doc["headline"]
    assert (head["kind"], head["location"]["line"], head["recomputed"]) == ("read_in_step", 14, True)
    # review 10 F3: the `if` chose the step's graph (2 different graphs followed the read), so reading the loss after
    # the sync (add_step_closure) would not remove it: the branch goes on the device, as explain-recompile says
    assert head["followed_by"] == 2 and "torch.where" in head["fix"] and "add_step_closure" not in head["fix"]


def test_a_boolean_mask_index_is_no_read_to_move_after_the_sync():
    """Review 8, F5 (rev8_ohem): `losses[losses > losses.mean()]` runs a graph returning the mask before the step's
    sync, every step; explain-recompile says to keep the full size, and cost must not say "read the value after the
    sync" (nothing of the user's is read). The look-alike, if_loss_spike's `if loss > 4.0` above, keeps it."""
    doc = cli_json("cost", str(FIXTURES / "scenarios" / "torch_xla" / "rev8_ohem" / "record"), codes=(0,))
    head = doc["headline"]
    assert (head["kind"], head["location"]["line"], head["mask"]) == ("read_in_step", 11, True)
    assert "apply the mask as values" in head["fix"]
    assert "after the step's sync" not in head["fix"] and "add_step_closure" not in head["fix"]
    other = cli_json("cost", str(FIXTURES / "scenarios" / "torch_xla" / "if_loss_spike"), codes=(0,))["headline"]
    assert other["mask"] is False and "mask" not in other["fix"]


def test_the_html_report_opens_with_the_same_finding(tmp_path):
    page = tmp_path / "cost.html"
    cli("cost", str(FIXTURES / "jax" / "scan_buffer" / "carry"), "--html", str(page), "-q")
    text = page.read_text()
    assert "<b>first:</b> a loop-carried buffer f32[6,2,4,32,16] is copied whole" in text
    assert "scan_buffer.py:73" in text and "<b>fix:</b> emit each iteration" in text


@pytest.mark.parametrize("cut,words", [("sync", "one sync per step"), ("read", "add_step_closure"),
                                       ("save", "save after the step's sync"), (None, "one sync per step")])
def test_the_held_fix_follows_what_ended_the_graph(cut, words):
    from hlodiff.render.cost_headline import fix

    h = CostHeadline("held_across_graphs", "run#0", 64, SYNC_AT, role="activation", cut=cut)
    assert words in fix(h)


def test_a_gradient_with_weight_decay_is_no_undonated_state():
    """fixtures/jax/grad_weight_decay: `jax.grad` of a loss with L2 decay reads the weight elementwise, like an
    update, but JAX's op_name marks it reverse-mode (`transpose(jvp())`); the caller keeps the weight."""
    folder = FIXTURES / "jax" / "grad_weight_decay"
    doc = cli_json("cost", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=(0,))
    assert doc["headline"] is None
    step = [g for g in doc["graphs"] if g["name"] == "jit_loss_fn"]
    assert step and step[0]["undonated"] == []


def test_the_same_update_outside_autodiff_is_undonated_state():
    """The row's other side: `w - lr * g` in a jitted step (jax_adam_no_donate) is the weight's new value."""
    folder = FIXTURES / "scenarios" / "cost" / "jax_adam_no_donate"
    doc = cli_json("cost", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=(0,))
    assert (doc["headline"]["kind"], doc["headline"]["count"], doc["headline"]["location"]["line"]) == \
        ("not_donated", 6, 34)


@pytest.mark.parametrize("marker", __import__("hlodiff.cost.replaced_inputs", fromlist=["x"]).GRADIENT_OP_MARKERS)
def test_each_gradient_marker_keeps_an_elementwise_read_of_the_weight_out(marker):
    text = ("HloModule jit_grad\n\nENTRY main {\n  w = f32[4,2] parameter(0)\n  d = f32[4,2] parameter(1)\n"
            f"  ROOT g = f32[4,2] add(d, w), metadata={{op_name=\"jit(loss)/{marker}())/add_any\"}}\n}}\n")
    assert _facts(text) == ([], [])
    assert _facts(text.replace(marker, "sub"))[0] != []  # the same arithmetic outside autodiff is an update
