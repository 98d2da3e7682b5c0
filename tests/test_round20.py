"""Round 20 (blind, torch_xla and JAX): what the first try told less than right, on its real captures
(fixtures/scenarios/*), beside the look-alikes that share the evidence."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of, jax_scenario

from hlodiff.diff.value_facts import dtype_spelling
from hlodiff.explain.jax_contexts import CONTEXT_SETTERS, context_fix
from hlodiff.explain.library_branches import LIBRARY_BRANCHES, library_branch

SC = FIXTURES / "scenarios"


def _doc(path, *extra, codes=(0, 1)) -> dict:
    return cli_json("explain-recompile", str(path), *extra, codes=codes)


# -- a static dtype spelled two ways ------------------------------------------------------------------------------

def test_one_dtype_spelled_two_ways_is_told_to_normalize_once():
    """r20_jx_static_dtype_spelling: the config's 'bfloat16' and jnp.bfloat16 as one static argument, the same HLO
    twice. The first try said 'keep it out of the static arguments, or fix its value': it sets the casts, and its
    value is the same; the two spellings are two keys."""
    doc = jax_scenario("r20_jx_static_dtype_spelling", codes=(1,))
    fix = doc["headline"]["fix"]
    assert "static_dtype_spelling" in fix_rules_of(doc)
    assert "jnp.dtype(" in fix and "spelled" in fix and "traced" not in fix and "fix its value" not in fix


@pytest.mark.parametrize("name, rule", [
    ("jax_static_int_float", "static_type_only"),   # one number in two types: not a dtype
    ("r18_jx_static_nan", "static_nan"),
    ("rev11_jx_static_obj", "static_identity"),
    ("jax_remat_policy_switch", "static_choice"),   # two choices (policies), not one dtype
])
def test_static_look_alikes_keep_their_rows(name, rule):
    rules = fix_rules_of(jax_scenario(name))
    assert rule in rules and "static_dtype_spelling" not in rules, name


@pytest.mark.parametrize("values, name", [
    (("'bfloat16'", "<class 'jax.numpy.bfloat16'>"), "bfloat16"),
    (("dtype('float32')", "'float32'", "<class 'numpy.float32'>"), "float32"),
    (("'float32'", "'bfloat16'"), None),              # two dtypes: a real choice
    (("'bfloat16'",), None),                          # one spelling
    (("'relu'", "'gelu'"), None), (("0", "0.0"), None), (("<function f at 0x1>", "'bfloat16'"), None),
])
def test_only_several_spellings_of_one_dtype_count(values, name):
    assert dtype_spelling(values) == name


# -- a tracing context JAX names by its config ----------------------------------------------------------------------

def test_the_mesh_context_is_named_as_the_user_wrote_it():
    """r20_jx_set_mesh_eval: validation under `with jax.set_mesh(mesh):`. JAX's log names the config
    'abstract_mesh_context_manager'; the first try asked to 'set `abstract_mesh_context_manager` once'."""
    doc = _doc(SC / "jax" / "r20_jx_set_mesh_eval")
    fix = doc["headline"]["fix"]
    assert doc["headline"]["kind"] == "cache_key" and "jax.set_mesh(mesh)" in fix and "whole program" in fix


@pytest.mark.parametrize("setting", sorted(CONTEXT_SETTERS))
def test_each_context_row_names_its_setter(setting):
    fix = context_fix(setting)
    assert CONTEXT_SETTERS[setting] in fix and setting in fix and "not around some calls" in fix


def test_the_dtype_promotion_context_of_an_older_scenario_is_named_as_written():
    # rev12_jx_promotion_eval: loss_fn under jax.numpy_dtype_promotion('strict') every third step (5/5 before too)
    fix = _doc(SC / "jax" / "rev12_jx_promotion_eval")["headline"]["fix"]
    assert "`with jax.numpy_dtype_promotion(...)`" in fix and "whole program" in fix


def test_a_context_without_a_row_keeps_its_words():
    assert context_fix("jax_default_matmul_precision") == (
        "set `jax_default_matmul_precision` once for the whole run, not around some calls")


@pytest.mark.parametrize("name, word", [
    ("jax_matmul_precision", "precision"), ("rev12_jx_default_device_eval", "default_device")])
def test_context_look_alikes_keep_their_words(name, word):
    fix = _doc(SC / "jax" / name)["headline"]["fix"]
    assert word in fix and "set_mesh" not in fix


# -- a library's own branch on its step count -----------------------------------------------------------------------

def test_radam_rectification_is_expected_once():
    """r20_tx_radam_rect_control: RAdam's rectified update from its 6th step, all in torch/optim/radam.py. The first
    try said 'run the same ops every step (torch.where)' and exited 1."""
    doc = _doc(SC / "torch_xla" / "r20_tx_radam_rect_control", codes=(0,))
    assert "ops_library_step_branch" in fix_rules_of(doc) and "ops_branch" not in fix_rules_of(doc)
    assert "torch.where" not in (doc["headline"] or {}).get("fix", "")


def _ref(*files):
    frames = [SimpleNamespace(file=f, is_library="/site-packages/" in f) for f in files]
    return SimpleNamespace(frames=frames)


def _cause(*refs):
    return SimpleNamespace(origins=[SimpleNamespace(left=None, right=r) for r in refs])


@pytest.mark.parametrize("row", LIBRARY_BRANCHES, ids=lambda r: r.name)
def test_each_library_branch_row(row):
    lib = "/usr/lib/python3.11/site-packages/"
    assert library_branch(_cause(_ref(lib + row.file), _ref(lib + "torch/_tensor.py"))) == row.what
    # a line of the user's among the changed instructions, or another library file: not the row's
    assert library_branch(_cause(_ref(lib + row.file), _ref("/home/user/project/train.py"))) == ""
    assert library_branch(_cause(_ref(lib + "torch/optim/sgd.py"))) == ""
    assert library_branch(_cause(_ref(lib + "torch/_tensor.py"))) == ""


@pytest.mark.parametrize("name", ["wd_from_zero", "review2_wd_off"])
def test_optimizer_settings_changed_by_the_user_keep_their_fix(name):
    doc = _doc(SC / "torch_xla" / name)
    assert "ops_library_step_branch" not in fix_rules_of(doc)


# -- a float that became a Python int -------------------------------------------------------------------------------

def test_a_ramp_that_ends_as_the_int_1_is_told_to_stay_a_float():
    """r20_tx_warmup_min_int: min(1, x) returns the int 1, torch.tensor([1]) is int64. The first try (redesigned
    capture) said 'give it one dtype from the first step (`.to(torch.int64)`)': a loss weight of 0 for 0.25."""
    doc = _doc(SC / "torch_xla" / "r20_tx_warmup_min_int" / "record", codes=(1,))
    fix = doc["headline"]["fix"]
    assert "dtype_input_number_became_int" in fix_rules_of(doc)
    assert "min(1.0" in fix and "torch.int64" not in fix


@pytest.mark.parametrize("name, rule", [
    ("label_int32_shards", None),           # int32 and int64 labels: no float among them
    ("rev8_np_cache_f64", None),            # float32 to float64
])
def test_dtype_look_alikes_keep_their_rows(name, rule):
    folder = SC / "torch_xla" / name
    path = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder
    assert "dtype_input_number_became_int" not in fix_rules_of(_doc(path))


# -- tensors a library made before the loop -------------------------------------------------------------------------

def test_an_averaged_models_copy_computed_by_the_first_step_is_its_warm_up():
    """r20_tx_swa_update_read (a control): AveragedModel's deepcopy is pending when step 0 syncs; the first try
    told step 1's graph (those outputs gone) as 'compute it every step, or read it after the sync'."""
    doc = _doc(SC / "torch_xla" / "r20_tx_swa_update_read" / "graphs.hlo.0")
    first = next(r for r in doc["recompilations"] if r["graph"].endswith("#1"))
    assert [c["fix_rule"] for c in first["causes"]] == ["outputs_made_before_loop_library"]
    assert doc["headline"] is None or "compute it every step" not in doc["headline"]["fix"]


# -- a model of another width through one function ------------------------------------------------------------------

def test_a_teacher_and_a_student_through_one_apply_are_one_program_per_model():
    """r20_jx_teacher_student_control: apply(params, x) for a teacher of width 64 and a student of width 16. The
    first try said 'one graph per bucket' (right stance, wrong story: no bucket anywhere)."""
    doc = _doc(SC / "jax" / "r20_jx_teacher_student_control" / "record", codes=(0,))
    fix = doc["headline"]["fix"]
    assert "shape_model_width" in fix_rules_of(doc) and "bucket" not in fix and "(64, 16)" in fix


@pytest.mark.parametrize("name, rule", [
    ("jax_dp_buckets_control", "shape_buckets"),   # batches padded to buckets: one axis of every input
    ("jax_bucket_pad", None), ("jax_multiscale", None), ("jax_last_batch", None),
])
def test_size_look_alikes_keep_their_rows(name, rule):
    rules = fix_rules_of(_doc(SC / "jax" / name))
    assert "shape_model_width" not in rules
    if rule:
        assert rule in rules


def _param(left, right):
    return SimpleNamespace(left=SimpleNamespace(opcode="parameter", shape=left),
                           right=SimpleNamespace(opcode="parameter", shape=right))


@pytest.mark.parametrize("changes, shared", [
    ((("f32[8,64]", "f32[8,16]"), ("f32[64,4]", "f32[16,4]")), True),     # a hidden width in two weights
    ((("f32[8,64]", "f32[8,16]"), ("f32[64]", "f32[16]")), False),        # a length and its positions (rank 1)
    ((("f32[8,64,32]", "f32[8,16,32]"), ("f32[8,1,1,64]", "f32[8,1,1,16]")), False),  # a length and its mask
    ((("s32[8,64]", "s32[8,16]"), ("s32[64,4]", "s32[16,4]")), False),    # ints: no weights
    ((("f32[32,8]", "f32[16,8]"), ("s32[32]", "s32[16]")), False),        # a batch: axis 0 of every input
    ((("f32[4,16,32]", "f32[4,24,32]"), ("f32[4,16,16]", "f32[4,24,24]")), False),   # a length and its square mask
    ((("f32[8,64]", "f32[8,16]"),), False),                               # one parameter
    ((("f32[8,64]", "f32[8,16]"), ("f32[64,4]", "f32[32,4]")), False),    # two different size pairs
])
def test_width_shared_needs_one_size_pair_on_different_axes(changes, shared):
    from hlodiff.diff.origin_facts import _width_shared
    assert _width_shared(SimpleNamespace(origins=[_param(a, b) for a, b in changes])) is shared


# -- an int 0 or 1 baked in by library code -------------------------------------------------------------------------

def test_a_library_s_own_0_is_not_told_to_go_into_a_tensor():
    """r20_tx_adaptive_softmax: AdaptiveLogSoftmaxWithLoss bakes a 0 of its own index arithmetic (adaptive.py); the
    first try (live, and beside the headline) said 'keep it in a one-element tensor', which the user cannot do."""
    doc = _doc(SC / "torch_xla" / "r20_tx_adaptive_softmax" / "dump", codes=(1,))
    constants = [c for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "constant"]
    assert constants and {c["fix_rule"] for c in constants} == {"constant_int_special_library"}
    assert all("torch.tensor([" not in c["fix"] for c in constants)


@pytest.mark.parametrize("path, rule", [
    ("torch_xla/offset_index", "constant_int_special"),                         # the user's int 0/1 in an index
    ("scenarios/torch_xla/scalar_tensors_collide", "constant_float_special"),
    ("scenarios/torch_xla/kl_beta_anneal", "constant_float_special"),
    ("scenarios/torch_xla/warmup_from_zero", "constant_lr_special"),            # an optimizer's 0: its own row
])
def test_user_made_special_constants_keep_their_rows(path, rule):
    folder = FIXTURES / path
    target = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder
    rules = fix_rules_of(_doc(target))
    assert rule in rules and "constant_int_special_library" not in rules
