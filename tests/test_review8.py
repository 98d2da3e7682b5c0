"""New-user review 8 (2026-11-27), torch.compile and JAX findings F2, F3, F9, F11, F12: each test is what the
reviewer read wrong, on a real capture (fixtures/scenarios/*/rev8_*) or a small program of one rule."""

from __future__ import annotations

from hlodiff.dumps.python_calls import callee_on_line


def test_the_compiled_callee_is_named_not_the_print_around_it(tmp_path):
    """F2: `print(predict(...).argmax(-1).cpu().tolist())` made the report say Dynamo compiled `print`."""
    src = tmp_path / "serve.py"
    src.write_text("import torch\n"
                   "predict = torch.compile(model, backend='openxla')\n"
                   "print(predict(encode(b).to(d)).argmax(-1).cpu().tolist())\n"
                   "@torch.compile\n"
                   "def step(x):\n"
                   "    return x\n"
                   "print(len(step(x)))\n"
                   "out = cmodel(req)\n"
                   "print(helper(x).sum())\n"
                   "print(x)\n")
    assert callee_on_line(str(src), 3) == "predict"
    assert callee_on_line(str(src), 7) == "step"
    assert callee_on_line(str(src), 8) == "cmodel"          # the line's only call, as before
    assert callee_on_line(str(src), 9) == "helper"          # no compiled name known: the first non-builtin call
    assert callee_on_line(str(src), 10) is None             # a builtin is never what torch.compile ran


# -- on the real captures ------------------------------------------------------------------------------------------

from helpers import FIXTURES, cli  # noqa: E402

DYN = FIXTURES / "scenarios" / "dynamo"
JAX = FIXTURES / "scenarios" / "jax"
MAP = ("--source-map", f"/home/user/project={DYN}")


def test_a_steady_torch_compile_inference_control_gets_a_clean_bill():
    """F2: the eager argmax read by `.cpu()` after each call is a graph of its own (compiled once), not the
    bridge's forward alternating with a cut step: exit 0, no 'read it after the sync', Dynamo compiled `predict`."""
    for capture in (DYN / "rev8_tc_steady_infer" / "record", DYN / "rev8_tc_steady_infer_byhand"):
        result = cli("explain-recompile", capture, *MAP, codes=(0,))
        out = result.stdout
        assert "0 recompilations" in out
        assert "add_step_closure" not in out and "after the sync" not in out
        assert "`print`" not in out
    record = cli("explain-recompile", DYN / "rev8_tc_steady_infer" / "record", *MAP, codes=(0,)).stdout
    assert record.startswith("Dynamo compiled `predict` 1 time")
    # by hand, the TORCH_LOGS file of a run Dynamo never retraced is empty: the report says what that means
    byhand = cli("explain-recompile", DYN / "rev8_tc_steady_infer_byhand", *MAP, codes=(0,)).stdout
    # (since review 19, F6: the empty stderr.log beside the dump is named, and what it means if TORCH_LOGS was set)
    assert "stderr.log beside the dump is empty: if it was captured with TORCH_LOGS=recompiles,graph_breaks, Dynamo " \
           "logged no recompilation" in byhand


def test_unpadded_lengths_under_torch_compile_get_no_boolean_mask_fix():
    """F3: the bridge's forward after a read of the previous call's result is no 'rest of a cut step', so the
    tokenizer's lengths are not told as a boolean mask index; the story's fix pads the size. Since review 14 (F3: one
    cause, one wording) the story says the Dynamo section's sentence for a size guard."""
    out = cli("explain-recompile", DYN / "rev8_tc_varlen" / "record", *MAP, codes=(1,)).stdout
    assert "boolean mask" not in out and "nonzero" not in out
    assert "read it after the sync" not in out
    assert "pad or bucket to a few fixed sizes" in out


def test_the_bridge_graph_unrelated_to_its_closest_one_lists_no_false_differences():
    """F11: the sampler's input sync compared with the torch.randn graph (3 % alike) said 'dtype s64[] -> f32[]'."""
    out = cli("explain-recompile", DYN / "rev8_tc_diffusion_t", *MAP, codes=(1,)).stdout
    assert "this graph shares almost nothing with #0 (3% alike)" in out
    assert "input element type changed" not in out
    verbose = cli("explain-recompile", DYN / "rev8_tc_diffusion_t", *MAP, "-v", codes=(1,)).stdout
    assert "input element type changed" in verbose  # still there for whoever asks
    # look-alikes: a small graph changed by a size or a branch stays far above the bound, its differences told
    for name in ("dyn_kv_cat", "dyn_break_then_float"):
        text = cli("explain-recompile", DYN / name, codes=(0, 1)).stdout
        assert "shares almost nothing" not in text and " recompiled (" in text


def test_jax_before_type_is_not_quoted_under_another_comparison():
    """F9: '3 -> 4 ... (JAX: ... before i32[2,2])': JAX compared with its first compilation, so the words say so;
    where JAX's before is hlodiff's left side, it is quoted as before."""
    out = cli("explain-recompile", JAX / "rev8_jx_greedy_concat" / "record", codes=(1,)).stdout
    assert "s32[2,3]{1,0} -> s32[2,4]{1,0}" in out
    assert "before i32[2,2])" in out.split("s32[2,2]{1,0} -> s32[2,3]{1,0}", 1)[1].split("\n", 1)[0]
    line = next(x for x in out.splitlines() if "s32[2,3]{1,0} -> s32[2,4]{1,0}" in x)
    assert "before i32[2,2]" not in line and "i32[2,2] there" in line


def test_per_device_placement_says_what_was_seen_and_what_to_check():
    """F12: an ensemble with one member per device: the fix says it is expected once per device when deliberate,
    how to compile once, and the slip's fix, instead of only undoing the placement; the slip look-alike
    (jax_device_roundrobin) keeps its 'one device' words."""
    for name in ("rev8_jx_round_robin", "jax_device_roundrobin"):
        out = cli("explain-recompile", JAX / name, codes=(0, 1)).stdout
        fix = next(x for x in out.splitlines() if x.startswith("fix:"))
        assert "expected once per device" in fix and "NamedSharding" in fix and "one device" in fix


def test_an_argument_fed_its_own_concatenation_in_a_loop_grows(tmp_path):
    """F9 (second half): the line that made a JAX argument rebinds it to a concatenation of itself in a loop."""
    from hlodiff.dumps.python_source import fed_its_own_concatenation

    src = tmp_path / "decode.py"
    src.write_text("import jax.numpy as jnp\n"
                   "ids = jnp.zeros((1, 2))\n"
                   "for _ in range(4):\n"
                   "    nxt = step(ids)\n"
                   "    ids = jnp.concatenate([ids, nxt[:, None]], axis=1)\n"
                   "    mask = jnp.concatenate([jnp.ones((2, 4)), jnp.zeros((1, 4))])\n"
                   "    hist = hist + [ids]\n"
                   "ids = jnp.concatenate([ids, ids], axis=1)\n")
    assert fed_its_own_concatenation(str(src), 5)
    assert not fed_its_own_concatenation(str(src), 6)   # pieces of its own, no growth (rev6_eager_control)
    assert not fed_its_own_concatenation(str(src), 7)   # no concatenation call
    assert not fed_its_own_concatenation(str(src), 8)   # outside a loop: once
    assert not fed_its_own_concatenation(str(tmp_path / "gone.py"), 5)


def test_a_decoding_prefix_grown_by_concatenation_is_told_to_preallocate():
    """F9: row shape_growing_concat_jax on the greedy decoder (review 8) and review 5's twin; without the source
    on disk the concatenation is not seen, and since the fourteenth stop the sizes alone (one larger every call) get
    shape_up_by_one_jax: allocate once at the largest length with a mask, buckets only for lengths from the data."""
    for capture, line in ((JAX / "rev8_jx_greedy_concat" / "record", "rev8_jx_greedy_concat.py"),
                          (JAX / "rev5_generate_concat", "rev5_generate_concat.py")):
        out = cli("explain-recompile", capture, "--source-map", f"/home/user/project={JAX}", codes=(1,)).stdout
        fix = next(x for x in out.splitlines() if x.startswith("fix:"))
        assert "grows by concatenation every call" in fix and "preallocate" in fix and "dynamic_update_slice" in fix
    bare = cli("explain-recompile", JAX / "rev8_jx_greedy_concat" / "record", codes=(1,)).stdout
    fix = next(x for x in bare.splitlines() if x.startswith("fix:"))
    assert "one larger than the last" in fix and "allocate it once at its largest length" in fix
    assert "grows by concatenation" not in fix
