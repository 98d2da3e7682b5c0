"""The structural differ on real dumps: what must compare equal, and what each single change is reported as."""

from __future__ import annotations

import copy

import pytest

from helpers import (
    permute_parameters, rename_instructions, reorder_independent, reparse, scenario, with_shape,
)
from hlodiff.diff import diff_modules
from hlodiff.graph import Normalization, canonicalize, normalized_text
from hlodiff.hlo.model import Shape

SCENARIOS = ["steady", "batch_shape", "metric_even_steps", "dtype_zeros_like", "lr_constant", "item_partial"]


def first_module(name: str):
    records, _ = scenario(name)
    return records[0].module()


@pytest.mark.parametrize("name", SCENARIOS)
def test_renamed_permuted_reordered_copy_is_equal(name):
    module = first_module(name)
    edited = reparse(reorder_independent(permute_parameters(rename_instructions(module, 1), 2), 3))
    diff = diff_modules(module, edited)
    assert diff.equal, [c.summary for c in diff.causes]
    assert diff.causes == []
    assert canonicalize(module).fingerprint == canonicalize(edited).fingerprint
    assert normalized_text(canonicalize(module)) == normalized_text(canonicalize(edited))


def test_permuted_parameters_are_reported_as_ignored_with_their_mapping():
    module = first_module("steady")
    edited = permute_parameters(module, 5)
    diff = diff_modules(module, edited)
    assert diff.equal
    moved = [(a, b) for a, b in diff.parameter_mapping if a != b]
    assert moved, "the permutation moved some parameters"
    assert any(i.name == "parameter_order" for i in diff.ignored)
    # The mapping is the permutation itself.
    left_params = {p.parameter_number: p for p in module.entry.parameters()}
    assert len(diff.parameter_mapping) == len(left_params)


def test_turning_off_parameter_order_makes_permutation_a_difference():
    module = first_module("steady")
    edited = permute_parameters(module, 5)
    diff = diff_modules(module, edited, Normalization.without("parameter-order"))
    assert not diff.equal
    assert {c.kind for c in diff.causes} == {"reordered"}


def test_sharing_is_not_hashed_away():
    """add(p0, p1) and add(p0, p0) must differ although both parameters have the same shape."""
    module = first_module("steady")
    edited = copy.deepcopy(module)
    entry = edited.entry
    users = [i for i in entry.instructions if len(i.operands) == 2 and i.operands[0] != i.operands[1]
             and entry.by_name()[i.operands[0]].shape == entry.by_name()[i.operands[1]].shape]
    target = users[0]
    target.operands = (target.operands[0], target.operands[0])
    assert canonicalize(module).fingerprint != canonicalize(edited).fingerprint


def _live_entry_instruction(module, opcode, predicate=lambda i: True):
    cm = canonicalize(module)
    for name, inst in cm.entry.insts.items():
        if inst.opcode == opcode and predicate(inst) and name != cm.entry.root:
            return module.entry.by_name()[name]
    raise AssertionError(f"no live {opcode}")


def test_injected_constant_value_is_exactly_a_constant_cause():
    module = first_module("steady")
    edited = copy.deepcopy(module)
    const = _live_entry_instruction(edited, "constant", lambda i: i.shape.rank == 0 and i.literal not in ("0", "1"))
    const.literal = "0.123"
    diff = diff_modules(module, edited)
    assert [c.kind for c in diff.causes] == ["constant"]
    assert const.name in diff.causes[0].summary and "0.123" in diff.causes[0].summary


def test_injected_element_type_is_exactly_a_dtype_cause():
    module = first_module("steady")
    edited = copy.deepcopy(module)
    param = [p for p in edited.entry.parameters() if p.shape.rank == 2][0]
    param.shape = with_shape(param.shape, "bf16")
    diff = diff_modules(module, edited)
    assert [c.kind for c in diff.causes] == ["dtype"]
    assert "f32" in diff.causes[0].summary and "bf16" in diff.causes[0].summary


def test_injected_attribute_change_is_exactly_an_attribute_cause():
    module = first_module("steady")
    edited = copy.deepcopy(module)
    inst = _live_entry_instruction(edited, "dot")
    lhs, rhs = inst.attrs["lhs_contracting_dims"], inst.attrs["rhs_contracting_dims"]
    inst.attrs["lhs_contracting_dims"], inst.attrs["rhs_contracting_dims"] = lhs.replace("1", "0"), rhs
    diff = diff_modules(module, edited)
    assert [c.kind for c in diff.causes] == ["attribute"]
    assert "lhs_contracting_dims" in diff.causes[0].summary


def test_injected_extra_output_is_exactly_an_outputs_cause():
    module = first_module("steady")
    edited = copy.deepcopy(module)
    root = edited.entry.root
    extra = _live_entry_instruction(edited, "dot")
    root.operands = root.operands + (extra.name,)
    root.shape = Shape("tuple", tuple_shapes=root.shape.tuple_shapes + (extra.shape,))
    diff = diff_modules(module, edited)
    assert [c.kind for c in diff.causes] == ["outputs"]
    assert "1 output added" in diff.causes[0].summary
    n = len(module.entry.root.operands)
    assert diff.output_mapping == [(i, i) for i in range(n)]


def test_swapped_outputs_are_reordered():
    module = first_module("steady")
    edited = copy.deepcopy(module)
    root = edited.entry.root
    ops, shapes = list(root.operands), list(root.shape.tuple_shapes)
    ops[1], ops[2] = ops[2], ops[1]
    shapes[1], shapes[2] = shapes[2], shapes[1]
    root.operands, root.shape = tuple(ops), Shape("tuple", tuple_shapes=tuple(shapes))
    diff = diff_modules(module, edited)
    assert [c.kind for c in diff.causes] == ["reordered"]
    assert (1, 2) in diff.output_mapping and (2, 1) in diff.output_mapping


def _compiled_pair(name):
    """The first recompiled graph of a scenario and the graph compiled before it."""
    records, truth = scenario(name)
    first, second = truth["compilations"][:2]
    by_index = {r.index: r for r in records}
    return by_index[first].module(), by_index[second].module(), truth


@pytest.mark.parametrize("name", ["batch_shape", "metric_even_steps", "dtype_zeros_like", "lr_constant"])
def test_real_recompilation_names_the_true_cause(name):
    left, right, truth = _compiled_pair(name)
    diff = diff_modules(left, right)
    assert not diff.equal
    assert [c.kind for c in diff.causes] == [truth["cause"]]


@pytest.mark.parametrize("name", ["batch_shape", "metric_even_steps", "dtype_zeros_like"])
def test_real_recompilation_points_at_the_user_line(name):
    left, right, truth = _compiled_pair(name)
    cause = diff_modules(left, right).causes[0]
    lines = {(f.file.rsplit("/", 1)[-1], f.line) for f in cause.locations}
    assert (truth["user_file"], truth["user_line"]) in lines


def test_batch_shape_summary_names_the_input_and_folds_the_mean_divisor():
    left, right, _ = _compiled_pair("batch_shape")
    cause = diff_modules(left, right).causes[0]
    assert cause.summary.startswith("input shape changed on parameter")
    assert "f32[4,8]{1,0} -> f32[2,8]{1,0}" in cause.summary
    assert "derived from the size" in cause.summary


def test_lr_baked_as_constant_is_reported_as_value_moved_to_parameter():
    left, right, _ = _compiled_pair("lr_constant")
    cause = diff_modules(left, right).causes[0]
    assert "-0" in cause.summary and "constant" in cause.summary and "parameter" in cause.summary
    assert any(f.file.endswith("torch/optim/sgd.py") for f in cause.library_locations)


def test_cache_hits_with_different_text_compare_equal_after_normalization():
    records, truth = scenario("steady")
    modules = [r.module() for r in records]
    hashes = {r.graph_hash for r in records}
    for a, b in zip(modules, modules[1:]):
        if canonicalize(a).fingerprint != canonicalize(b).fingerprint:
            assert len(hashes) > 1  # only a true recompilation may differ


def test_called_computation_parameter_order_is_meaning():
    """Only the entry's parameters are renumbered: a reducer's subtract(p1, p0) is not subtract(p0, p1)."""
    module = first_module("metric_even_steps")
    edited = copy.deepcopy(module)
    callee = next(c for c in edited.computations if not c.is_entry and len(c.parameters()) == 2
                  and c.root.opcode in ("add", "maximum", "minimum") and len(c.root.operands) == 2)
    callee.root.opcode = "subtract"
    swapped = copy.deepcopy(edited)
    root = next(c for c in swapped.computations if c.name == callee.name).root
    root.operands = tuple(reversed(root.operands))
    assert canonicalize(edited).fingerprint != canonicalize(swapped).fingerprint


def test_fingerprints_are_the_same_in_every_process():
    """Nothing may depend on Python's per-process string hashing."""
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, 'tests'); from helpers import scenario; "
            "from hlodiff.graph import canonicalize; "
            "print([canonicalize(r.module()).fingerprint for r in scenario('metric_even_steps')[0][:2]])")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**__import__('os').environ, "PYTHONHASHSEED": str(seed)}).stdout
               for seed in (1, 2, 3)}
    assert len(outputs) == 1


def test_regions_summarise_op_types_shapes_and_user_lines():
    left, right, truth = _compiled_pair("dtype_zeros_like")
    diff = diff_modules(left, right)
    assert diff.regions and all(r.kinds == ["dtype"] for r in diff.regions)
    assert any("convert" in r.opcodes for r in diff.regions)
    assert any(f.line == truth["user_line"] for r in diff.regions for f in r.locations)
    assert diff.to_json()["regions"][0]["instructions"] == diff.regions[0].size


def test_canonical_graph_is_a_networkx_graph_with_operand_positions():
    cm = canonicalize(first_module("steady"))
    g = cm.entry.graph
    root = cm.entry.root
    assert set(g.nodes) == set(cm.entry.insts)
    for pos, op in enumerate(cm.entry.operands[root]):
        assert g.has_edge(op, root)
        assert g.edges[op, root]["pos"] == cm.entry.operands[root].index(op) <= pos
    assert sorted(g.successors(cm.entry.operands[root][0])) == sorted(cm.entry.users(cm.entry.operands[root][0]))


def test_a_long_tuple_change_shows_the_element_that_changed():
    """A tuple parameter of twenty shapes whose eighteenth became bf16: both sides are cut to a line, around it."""
    from hlodiff.hlo import parse_module

    shapes = [f"f32[{i}]" for i in range(1, 21)]
    text = ("HloModule t\nENTRY %e {{\n  %p = ({}) parameter(0)\n  %g = f32[20] get-tuple-element(%p), index=19\n"
            "  ROOT %n = f32[20] negate(%g)\n}}\n")
    changed = shapes[:17] + ["bf16[18]"] + shapes[18:]
    diff = diff_modules(parse_module(text.format(", ".join(shapes))), parse_module(text.format(", ".join(changed))))
    [cause] = diff.causes
    assert cause.kind == "dtype"
    before, after = cause.summary.split(": ", 1)[1].split(" -> ")
    assert "f32[18]" in before and "bf16[18]" in after
    assert len(before) <= 120 and len(after) <= 120


def test_a_long_attribute_change_without_separators_shows_where_it_differs():
    """A backend_config JSON that differs only in its last key: both sides are cut just before that key, with
    "..." where text was left out (a cut at a "(" inside a string once showed the same text on both sides)."""
    from hlodiff.hlo import parse_module

    config = ('{"name":"fused(matmul)","operation_queue_id":"0","wait_on_operation_queues":[],"some_config":'
              '{"alpha_real":1,"beta":0,"dims":{"lhs":["1"],"rhs":["0"]},"precision":["DEFAULT","DEFAULT"],'
              '"algorithm":"ALG_UNSET","epilogue":"%s"}}')
    text = ("HloModule m\nENTRY main {\n  p0 = f32[10,20]{1,0} parameter(0)\n  ROOT cc = f32[10,20]{1,0} "
            "custom-call(p0), custom_call_target=\"foo\", backend_config='%s'\n}\n")
    diff = diff_modules(parse_module(text % (config % "DEFAULT")), parse_module(text % (config % "BIAS")))
    [cause] = diff.causes
    before, after = cause.summary.split(": ", 1)[1].split(" -> ")
    assert before.startswith("...") and after.startswith("...")
    assert '"epilogue":"DEFAULT"' in before and '"epilogue":"BIAS"' in after
