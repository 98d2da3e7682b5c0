"""The cause graph (issue 19): each recompilation's root leads, what follows from it is linked by a named rule, and a
layout-only consequence is folded into its root. Asserted on the typed graph (``Recompilation.links``) over real
runs; the headline's kind and line come from each fixture's truth.json, and the new fixtures' truth.json also says
which causes follow from which (``follows``)."""

from __future__ import annotations


import pytest

from helpers import FIXTURES, cli, cli_json, truth_of
from hlodiff.diff.model import Cause, Change, InstructionRef
from hlodiff.dumps.run_folder import discover
from hlodiff.explain.cause_graph import RULES, link
from helpers import explained


def explain(path):
    return explained(discover([str(path)], None, None), [])


def edges(r) -> set[tuple[str, str, str]]:
    """(consequence kind, root kind, rule) for every shown edge and every folded cause."""
    nodes = r.links.nodes
    found = {(n.cause.kind, nodes[f.root].cause.kind, f.rule) for n in nodes for f in n.follows}
    found |= {(x.cause.kind, n.cause.kind, x.rule) for n in nodes for x in n.folded}
    return found


# fixture -> (path under fixtures/, recompilation index, edges that must be there, kinds folded into the root)
CASES = {
    "lr_warmup_zero": ("torch_xla/lr_warmup_zero/graphs.hlo.0", 0, {("ops", "constant", "layout_only")}, {"ops"}),
    "autocast_late": ("torch_xla/autocast_late/graphs.hlo.0", 0,
                      {("outputs", "dtype", "outputs_retyped"), ("ops", "dtype", "converts_of_dtype")}, set()),
    "item_partial": ("torch_xla/item_partial/graphs.hlo.0", 0, {("outputs", "partial", "early_read")}, set()),
    "clip_later": ("torch_xla/clip_later/dump", 0, {("inputs", "ops", "scalar_for_new_ops")}, set()),
    "momentum_warmup": ("torch_xla/momentum_warmup/graphs.hlo.0", 0, {("ops", "inputs", "ops_on_new_state")},
                        set()),
    "unsynced_init": ("torch_xla/unsynced_init/graphs.hlo.0", 0, {("outputs", "inputs", "outputs_became_inputs")},
                      set()),
    "record_adamw": ("torch_xla/record_adamw/dump", 0, {("aliasing", "inputs", "donates_new_inputs")}, set()),
    "grad_norm_order": ("torch_xla/grad_norm_order/graphs.hlo.0", 0, {("reordered", "ops", "reordered_with")},
                        set()),
    "slice_length": ("torch_xla/slice_length/graphs.hlo.0", 0, {("shape", "attribute", "slice_sets_length")}, set()),
    # the backward of `h[:, step % 3]` (select_backward) carries the same index as a constant: one index, at the slice
    "slice_index_backward": ("torch_xla/slice_index_backward/graphs.hlo.0", 0,
                             {("constant", "attribute", "slice_index_in_backward")}, set()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_root_leads_and_its_consequences_follow_from_it(name):
    path, index, expected, folded = CASES[name]
    t = truth_of("torch_xla", name) if (FIXTURES / "torch_xla" / name / "truth.json").exists() else \
        truth_of(*path.split("/")[:-1])
    result = explain(FIXTURES / path)
    r = result.recompilations[index]
    assert r.links.root.cause.kind == t["cause"] and r.causes[0] is r.links.root.cause
    assert result.headline is not None and result.headline.causes[0].kind == t["cause"]
    assert expected <= edges(r)
    assert {x.cause.kind for x in r.links.root.folded} == folded
    shown = {id(c) for c in r.causes}
    assert not any(id(x.cause) in shown for n in r.links.nodes for x in n.folded)  # folded: not a cause of its own
    for i, node in enumerate(r.links.nodes):  # consequences come after what they follow from
        assert all(f.root < i for f in node.follows)


def test_the_transposes_of_a_transposed_input_fold_into_it():
    r = explain(FIXTURES / "torch_xla" / "fsdp_linear" / "plain" / "graphs.hlo.0").recompilations[0]
    inputs = next(n for n in r.links.nodes if n.cause.kind == "inputs")
    assert [(x.cause.kind, x.rule) for x in inputs.folded] == [("ops", "layout_only")]
    assert "ops" not in {c.kind for c in r.causes}


def test_a_recreated_function_leads_and_the_graph_change_follows_from_it():
    """jax/recreated_closure: a closure re-jitted every epoch; the changed constant is its new closed-over lr."""
    t = truth_of("jax", "recreated_closure")
    (expect,) = t["recompiles"]
    (r,) = explain(FIXTURES / "jax" / "recreated_closure" / "dump").recompilations
    root = r.links.root.cause
    assert root.kind == expect["cause"] and root.reason in ("never_seen", "redefined_function")
    assert {(c, k) for c, k, _ in edges(r)} >= set(expect["follows"].items())
    assert {rule for _, k, rule in edges(r) if k == "cache_key"} == {"jax_key"}
    assert [f.line for f in root.locations] == [expect["user_line"]]
    assert "once" in root.fix and "lax.cond" not in root.fix


def test_an_argument_jax_names_leads_its_callees():
    (r,) = [r for r in explain(FIXTURES / "jax" / "scan_dtype" / "dump").recompilations if r.family.label == "jit_f"]
    root = r.links.root
    assert root.cause.kind == "dtype" and "parameter %xs" in root.cause.summary
    rest = r.links.nodes[1:]
    assert rest and all(n.follows and n.follows[0].rule == "input_reaches_callee" and n.follows[0].root == 0
                        for n in rest)


def test_a_changed_pytree_is_told_with_the_inputs_it_brings():
    t = truth_of("jax", "optional_key")
    (r,) = [r for r in explain(FIXTURES / "jax" / "optional_key" / "dump").recompilations
            if r.family.label == "jit_forward"]
    assert r.links.root.cause.kind == t["cause"]
    assert ("cache_key", "inputs", "pytree_as_inputs") in edges(r) and ("ops", "inputs", "ops_on_new_state") in edges(r)


def test_outputs_shaped_like_restructured_arguments_follow_jax_s_pytree_change():
    """Round 8 (jax_unfreeze_split): a leaf moved from the frozen dict to the trainable one, which the step returns
    updated: the output that came follows from JAX's pytree change (rule ``outputs_follow_restructured_args``),
    which leads, not "returns other values on some calls"."""
    rs = [r for r in explain(FIXTURES / "scenarios" / "jax" / "jax_unfreeze_split").recompilations
          if r.family.label == "jit_train_step"]
    assert rs and all(r.links.root.cause.kind == "cache_key" for r in rs)
    assert all(("outputs", "cache_key", "outputs_follow_restructured_args") in edges(r) for r in rs)


def test_a_list_one_item_longer_leads_the_ops_and_the_count_that_read_it():
    """Review 3, F1b: JAX says a list argument changed length; the scalar input that came is an argument, not a
    Python number new ops read (``scalar_for_new_ops`` is torch_xla's): the concatenate and the mean's divisor
    follow from it."""
    (r, *_) = explain(FIXTURES / "scenarios" / "jax" / "review3_list_arg").recompilations
    assert r.links.root.cause.kind == "inputs"
    assert {("ops", "inputs", "ops_on_new_arguments"), ("constant", "inputs", "ops_on_new_arguments"),
            ("cache_key", "inputs", "pytree_as_inputs")} <= edges(r)
    assert not any(rule == "scalar_for_new_ops" for *_, rule in edges(r))


def test_a_static_argument_leads_the_ops_it_changes():
    (r,) = explain(FIXTURES / "jax" / "static_argnum" / "dump").recompilations
    assert r.links.root.cause.kind == "static_argument"
    assert ("ops", "static_argument", "static_key") in edges(r)


def test_the_sharding_jax_names_leads_the_same_change_the_graph_shows():
    r = explain(FIXTURES / "jax" / "other_reasons" / "dump").recompilations[0]
    assert r.links.root.cause.reason == "sharding" and ("sharding", "sharding", "named_by_jax") in edges(r)


def test_train_and_eval_steps_are_recognised():
    """fixtures/torch_xla/train_eval: one helper runs both; the eval step is a root of its own (kind ``mode``) at the
    line that called the helper for eval, and the removed inputs, outputs and ops follow from it."""
    t = truth_of("torch_xla", "train_eval")
    result = explain(FIXTURES / "torch_xla" / "train_eval" / "graphs.hlo.0")
    (r,) = result.recompilations
    assert r.mode is not None and r.mode.to == "eval" and r.mode.rng_ops >= 1 and r.mode.updates >= 2
    root = r.links.root.cause
    assert root.kind == t["cause"] and [f.line for f in root.locations] == [t["user_line"]]
    assert result.headline is r and "expected" in root.fix and "torch.where" not in root.fix
    assert {(c, k) for c, k, _ in edges(r)} >= set(t["follows"].items())
    assert {rule for _, k, rule in edges(r) if k == "mode"} == {"mode_switch"}
    assert "eval step" in root.summary and "rng-bit-generator" in root.summary


def test_train_steps_alone_are_not_called_a_mode_switch():
    for name in ("metric_even_steps", "momentum_warmup", "steady", "item_partial"):
        result = explain(FIXTURES / "torch_xla" / name / "graphs.hlo.0")
        assert all(r.mode is None and all(c.kind != "mode" for c in r.causes) for r in result.recompilations), name


@pytest.mark.parametrize("scenario, inputs", [
    ("stochastic_depth", ["graphs.hlo.0", "--tensors-report", "stdout.log", "--debug-log", "debug.log"]),
    ("freeze_backbone", ["record"]),  # captured by `hlodiff record`
])
def test_a_step_that_still_updates_weights_is_not_an_eval_step(scenario, inputs):
    """Look-alikes of train/eval (fixtures/scenarios/torch_xla): a block skipped by random.random() < p, a backbone
    frozen with requires_grad_(False). Their smaller step loses a backward and some updates but still updates the
    other weights: never 'an eval step ... nothing to fix', and the run exits 1."""
    folder = FIXTURES / "scenarios" / "torch_xla" / scenario
    args = [a if a.startswith("-") else str(folder / a) for a in inputs]
    doc = cli_json("explain-recompile", *args, codes=(1,))
    assert doc["headline"]["kind"] != "mode" and "nothing to fix" not in doc["headline"]["fix"], doc["headline"]
    assert all(c["kind"] != "mode" for r in doc["recompilations"] for c in r["causes"])


def test_json_causes_say_what_they_follow_from():
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "autocast_late" / "graphs.hlo.0"))
    (rec,) = doc["recompilations"]
    kinds = [c["kind"] for c in rec["causes"]]
    assert kinds[0] == "dtype" and rec["causes"][0]["follows_from"] == []
    outputs = rec["causes"][kinds.index("outputs")]
    assert outputs["follows_from"] == [{"cause": 0, "kind": "dtype", "rule": "outputs_retyped"}]
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "lr_warmup_zero" / "graphs.hlo.0"))
    (rec,) = doc["recompilations"]
    assert [c["kind"] for c in rec["causes"]] == ["constant"]
    (folded,) = rec["causes"][0]["folded"]
    assert folded["kind"] == "ops" and folded["rule"] == "layout_only" and "transpose" in folded["summary"]


def test_terminal_lists_consequences_under_their_root():
    out = cli("explain-recompile", str(FIXTURES / "torch_xla" / "autocast_late" / "graphs.hlo.0")).output
    lines = out.splitlines()
    root = next(i for i, line in enumerate(lines) if line.startswith("  dtype "))
    with_it = next(i for i, line in enumerate(lines) if line.strip() == "with it:")
    outputs = next(i for i, line in enumerate(lines) if line.lstrip().startswith("outputs "))
    assert root < with_it < outputs and len(lines[outputs]) - len(lines[outputs].lstrip()) > 2
    out = cli("explain-recompile", str(FIXTURES / "torch_xla" / "lr_warmup_zero" / "graphs.hlo.0")).output
    assert "with it (layout only): 1 instruction added (transpose)" in out
    assert not any(line.startswith("  ops ") for line in out.splitlines())


# -- one rule at a time, on typed facts (a row of the table with no real fixture of its own) -------------------------


def _ref(name, opcode, shape, computation="main"):
    return InstructionRef(computation, name, opcode, shape)


def test_an_input_whose_shape_changed_drags_its_users_broadcasts():
    shape = Cause("shape", "input shape changed", origins=[Change(_ref("p0", "parameter", "f32[4,8]"),
                                                                  _ref("p0", "parameter", "f32[2,8]"), ("shape",))])
    ops = Cause("ops", "2 instructions added", instructions=[(None, "b1"), (None, "r1")],
                origins=[Change(None, _ref("b1", "broadcast", "f32[2,8]")), Change(None, _ref("r1", "reshape", "f32[16]"))])
    graph = link([ops, shape])
    assert [n.cause.kind for n in graph.nodes] == ["shape", "ops"]
    assert graph.nodes[1].follows[0].rule == "input_plumbing"
    alone = link([ops])
    assert alone.root.cause is ops and alone.root.is_root  # nothing to follow from: it stays a cause


def test_a_joined_lists_count_follows_from_the_join_on_a_real_run():
    """rev4_history (review 4, F1): `torch.stack(history).mean()`: the constant 1 -> 2 is the mean's divisor, the
    list's length: it follows from the concatenate that grew from 1 to 2 operands ("count_of_joined")."""
    r = explain(FIXTURES / "scenarios" / "torch_xla" / "rev4_history").recompilations[0]
    assert ("constant", "ops", "count_of_joined") in edges(r)
    assert r.links.root.cause.kind == "ops"


def test_a_loops_count_baked_as_a_constant_follows_from_the_repeated_inputs_on_a_real_run():
    """r28_tx_microbatch_warmup (round 28): 1 micro-batch per optimizer step, then 4, one sync per step: the graph
    takes the micro-batch inputs 4 times, and `loss / accum` (1 baked, 4 as data) follows from that count
    ("count_of_repeated_inputs"); the inputs lead. Optimizer state created (inputs the graph returns) never does:
    momentum_warmup keeps its own edges."""
    r = explain(FIXTURES / "scenarios" / "torch_xla" / "r28_tx_microbatch_warmup").recompilations[1]
    assert ("constant", "inputs", "count_of_repeated_inputs") in edges(r)
    assert r.links.root.cause.kind == "inputs"
    other = explain(FIXTURES / "torch_xla" / "momentum_warmup" / "graphs.hlo.0").recompilations[0]
    assert not any(rule == "count_of_repeated_inputs" for _, _, rule in edges(other))


def test_a_constant_that_does_not_count_the_join_stays_a_cause_of_its_own():
    """The look-alike: a baked int changing beside a join that grew by another count (an index 0 -> 1 while a
    concatenate went from 2 to 3 operands) is no divisor of that join: it keeps its own fix."""
    def pair(literal, count):
        const = Cause("constant", "constant value changed", origins=[Change(
            _ref("c1", "constant", "s32[]"), _ref("c1", "constant", "s32[]"), ("literal",), {"literal": literal})])
        ops = Cause("ops", "concatenate changed", origins=[Change(
            _ref("cat", "concatenate", "f32[2]"), _ref("cat", "concatenate", "f32[3]"), ("shape", "operand_count"),
            {"operand_count": count})])
        return link([const, ops])
    assert pair(("2", "3"), ("2", "3")).nodes[1].follows[0].rule == "count_of_joined"
    assert all(n.is_root for n in pair(("0", "1"), ("2", "3")).nodes)


def test_options_jax_fills_from_a_sharding_follow_from_it_on_a_real_run():
    """rev4_sharding (review 4, F5): x sharded over 4 devices: num_partitions 1 -> 4 (header) and the compile
    options' device assignment follow from the sharding ("options_of_sharding"); none is a root of its own."""
    r = explain(FIXTURES / "scenarios" / "jax" / "rev4_sharding").recompilations[0]
    assert ("compile_options", "sharding", "options_of_sharding") in edges(r)
    assert all(n.follows for n in r.links.nodes if n.cause.kind == "compile_options")


def test_shardings_follow_a_resized_mesh_on_a_real_run():
    """rev22_jx_mesh_resize (review 22, F1): the mesh shrinks 4 -> 2 devices; num_partitions 4 -> 2 is the root and
    every argument's new sharding follows from it ("sharding_of_resized_mesh"), the reverse of rev4_sharding above
    (num_partitions 1 -> 4, an argument placed off the mesh), which that look-alike keeps."""
    r = explain(FIXTURES / "scenarios" / "jax" / "rev22_jx_mesh_resize" / "record").recompilations[-1]
    assert ("sharding", "sharding", "sharding_of_resized_mesh") in edges(r)
    roots = [n.cause for n in r.links.nodes if n.is_root]
    assert [(c.kind, c.reason) for c in roots] == [("sharding", "device_count")]


@pytest.mark.parametrize("field", sorted(__import__("hlodiff.diff.header", fromlist=["PARTITIONING"]).PARTITIONING))
def test_each_partitioning_field_alone_follows_a_sharding_another_option_does_not(field):
    """The rows of diff.header.PARTITIONING, one at a time, through the compile options beside a dump; the
    look-alike, an option a user sets (xla_cpu_enable_fast_math), stays a cause of its own with its fix."""
    from types import SimpleNamespace

    from hlodiff.explain.outside import option_causes

    def causes(key):
        left, right = SimpleNamespace(record="l", name="jit_f"), SimpleNamespace(record="r", name="jit_f")
        opts = {"l": {f"compile_options.textproto:executable_build_options.{key}": ("1",)},
                "r": {f"compile_options.textproto:executable_build_options.{key}": ("4",)}}
        (c,) = option_causes(left, right, opts.get)
        sharding = Cause("sharding", "input sharding changed")
        return link([sharding, c])

    assert causes(field).nodes[1].follows[0].rule == "options_of_sharding"
    assert all(n.is_root for n in causes("debug_options.xla_cpu_enable_fast_math").nodes)


def test_every_rule_is_exercised_by_a_test_here():
    """A rule of the table is knowledge: each one has a row above that shows it on a real run or, where no fixture
    has it, on typed facts."""
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    assert all(f'"{rule.name}"' in source for rule in RULES)


def test_a_rank_divergence_is_told_the_same_way():
    """fsdp_linear: rank 1 (plain FSDP) against rank 0 (patched): at step 1 its transposes come with the weight it
    receives transposed, folded into that input as in a recompilation."""
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "fsdp_linear"))
    folded = [(c["kind"], f["kind"], f["rule"]) for d in doc["divergence"] for c in d["causes"] for f in c["folded"]]
    assert ("inputs", "ops", "layout_only") in folded
    assert not any(c["kind"] == "ops" and not c["follows_from"] and "transpose" in c["summary"]
                   for d in doc["divergence"] for c in d["causes"])


def test_what_cut_the_step_is_a_typed_fact():
    """mask_cut: `logits[keep]` (no .item(), no print) cut every step; item_partial: a `.item()` did."""
    t = truth_of("torch_xla", "mask_cut")
    result = explain(FIXTURES / "torch_xla" / "mask_cut" / "graphs.hlo.0")
    roots = [r.links.root.cause for r in result.recompilations]
    assert roots and all(c.kind == t["cause"] and c.reason == t["cut"] for c in roots)
    assert all(t["user_line"] in [f.line for f in c.locations] for c in roots)
    assert ".item()" not in roots[0].summary and "boolean-mask" in roots[0].summary
    (r,) = explain(FIXTURES / "torch_xla" / "item_partial" / "graphs.hlo.0").recompilations
    assert r.links.root.cause.kind == "partial" and r.links.root.cause.reason == "read"


def test_a_code_path_that_arranges_the_same_sizes_otherwise_follows_from_its_outputs():
    """Round 6, attn_weights_logging: nn.MultiheadAttention asked for its weights every third step. The step without
    them drops an output and takes scaled_dot_product_attention's path, whose broadcasts hold the same elements in
    other dimensions (f32[8,10,8] -> f32[4,2,10,8]): rule "sizes_rearranged" makes that shape change follow from
    the outputs, which lead. Look-alikes, on typed facts: a size that really changed (element count), an argument
    of the program whose dimensions changed, and outputs retyped (added and removed) keep the shape a root."""
    run = explain(FIXTURES / "scenarios" / "torch_xla" / "attn_weights_logging")
    (r,) = run.recompilations
    assert r.links.root.cause.kind == "outputs"
    assert ("shape", "outputs", "sizes_rearranged") in edges(r)

    def shape_cause(left: str, right: str, opcode: str = "broadcast") -> Cause:
        a, b = InstructionRef("main", "b.1", opcode, left), InstructionRef("main", "b.1", opcode, right)
        return Cause("shape", "shape changed", origins=[Change(a, b, ("shape",))])

    def outputs(added: bool, removed: bool) -> Cause:
        return Cause("outputs", "outputs differ",
                     instructions=([(None, "o.2")] if added else []) + ([("o.1", None)] if removed else []))

    def rule_of(shape: Cause, root: Cause) -> list[str]:
        return [f.rule for n in link([root, shape]).nodes for f in n.follows]

    assert rule_of(shape_cause("f32[8,10,8]", "f32[4,2,10,8]"), outputs(False, True)) == ["sizes_rearranged"]
    assert rule_of(shape_cause("f32[8,10,8]", "f32[6,10,8]"), outputs(False, True)) == []   # a size changed
    assert rule_of(shape_cause("f32[8,16]", "f32[16,8]", "parameter"), outputs(False, True)) == []  # an argument
    assert "sizes_rearranged" not in rule_of(shape_cause("f32[8,10,8]", "f32[4,2,10,8]"), outputs(True, True))


def test_another_head_picked_by_python_leads_the_losss_types_and_inputs():
    """review 7 (#12): a Python `if` picks the cls or the reg head and its loss each step. The head's weight of
    another shape, with the other head's and loss's instructions added and removed, is the root ("path_swapped");
    the loss's constant of another type (s64 -> f32) and its scalar input follow from it, so no "drop `dtype=`"
    leads, and the headline is the head's line."""
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios" / "torch_xla" / "rev7_two_heads" / "record"))
    causes = doc["recompilations"][0]["causes"]
    assert causes[0]["kind"] == "shape" and not causes[0]["follows_from"]
    rules = {(c["kind"], f["rule"]) for c in causes for f in c["follows_from"]}
    assert ("dtype", "path_swapped") in rules and ("inputs", "path_swapped") in rules
    assert doc["headline"]["fix"].startswith("expected by design: a Python branch")
    assert "dtype=" not in doc["headline"]["fix"] and "randn" not in doc["headline"]["fix"]


def test_a_batch_size_change_is_no_path_swap():
    """The look-alike: an input of another size drags broadcasts and converts, not a block of instructions added and
    another removed; it is no other code path (batch_shape: the last batch is short)."""
    from hlodiff.explain.cause_graph import swaps_path

    result = explain(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0")
    assert result.recompilations and not any(swaps_path(c) for r in result.recompilations for c in r.causes)


def test_a_constant_holding_the_new_size_follows_from_the_shape_change():
    """Review 8, F8 (rev8_pad_multiple): EmbeddingBag's offsets {0, 8} -> {0, 12} beside the ids s64[2,8] ->
    s64[2,12] are traced from the padded length ("size_as_constant"), not a Python int to pass as a tensor. The
    look-alike: a baked index 0 -> 1 beside the same shape change is no size: it stays a cause with its own fix."""
    def pair(literal):
        shape = Cause("shape", "input shape changed", origins=[Change(
            _ref("p0", "parameter", "s64[2,8]"), _ref("p0", "parameter", "s64[2,12]"), ("shape",))])
        const = Cause("constant", "constant value changed", origins=[Change(
            _ref("c3", "constant", "s64[2]"), _ref("c3", "constant", "s64[2]"), ("literal",), {"literal": literal})])
        return link([shape, const])
    assert pair(("{0, 8}", "{0, 12}")).nodes[1].follows[0].rule == "size_as_constant"
    assert all(n.is_root for n in pair(("{0, 1}", "{0, 2}")).nodes)
    assert all(n.is_root for n in pair(("0", "1")).nodes)
    r = explain(FIXTURES / "scenarios" / "torch_xla" / "rev8_pad_multiple" / "record").recompilations
    assert any(("constant", "shape", "size_as_constant") in edges(x) for x in r)


def test_a_constant_that_only_changed_its_float_type_follows_from_the_dtype_change():
    """New-user review 20, F5 (T1 in a test): 2*pi inside torch.randn, drawn in the parameters' dtype, became
    6.2831853071795862 (f64) beside the parameters' f32 -> f64 ("constant_retyped"): not a Python number to pass as
    a device tensor. Look-alikes: a value that moved with its type (0.1 -> 0.05) and a value in one type stay
    causes of their own."""
    def pair(literal, before="f32[]", after="f64[]"):
        dtype = Cause("dtype", "input element type changed", origins=[Change(
            _ref("p4", "parameter", "f32[32,16]"), _ref("p4", "parameter", "f64[32,16]"), ("dtype",))])
        const = Cause("constant", "constant value changed", origins=[Change(
            _ref("c43", "constant", before), _ref("c43", "constant", after), ("literal",), {"literal": literal})])
        return link([dtype, const])
    assert pair(("6.28318548", "6.2831853071795862")).nodes[1].follows[0].rule == "constant_retyped"
    assert all(n.is_root for n in pair(("0.1", "0.05")).nodes)
    assert all(n.is_root for n in pair(("6.28318548", "6.28318548"), "f32[]", "f32[]").nodes)


def test_an_attribute_holding_the_new_size_follows_from_the_shape_change():
    """Review 23, F7 (rev23_jx_host_negatives): jnp.concatenate's pad of the negatives' scores, padding
    0_0x0_200 -> 0_0x0_199, beside the argument negatives f32[200,32] -> f32[199,32], is traced from the new size
    ("size_as_attribute"), not "an op's dimensions follow a Python value" of its own. Look-alikes: a pad that moved
    by other numbers (a window placed elsewhere), and the same numbers beside a shape change inside the graph (no
    argument), stay causes of their own."""
    def pair(padding, root_opcode="parameter"):
        shape = Cause("shape", "input shape changed", origins=[Change(
            _ref("negatives.1", root_opcode, "f32[200,32]"), _ref("negatives.1", root_opcode, "f32[199,32]"),
            ("shape",))])
        attr = Cause("attribute", "attribute padding changed", origins=[Change(
            _ref("pad.1", "pad", "f32[8,201]"), _ref("pad.1", "pad", "f32[8,200]"), ("attribute:padding",),
            {"attribute:padding": padding})])
        return link([shape, attr])
    assert pair(("0_0x0_200", "0_0x0_199")).nodes[1].follows[0].rule == "size_as_attribute"
    assert all(n.is_root for n in pair(("0_0x0_3", "0_0x0_7")).nodes)
    assert all(n.is_root for n in pair(("0_0x0_200", "0_0x0_199"), root_opcode="dot").nodes)
    r = explain(FIXTURES / "scenarios" / "jax" / "rev23_jx_host_negatives" / "record").recompilations
    assert any(("attribute", "shape", "size_as_attribute") in edges(x) for x in r)
