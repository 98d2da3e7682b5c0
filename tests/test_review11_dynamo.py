"""New-user review 11 (2026-11-27), torch.compile(backend="openxla") findings F1 and F7: each test is what the
reviewer read wrong, on a real capture (fixtures/scenarios/dynamo/rev11_*), beside the look-alikes that share its
evidence."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json, explained
from hlodiff.dumps.run_folder import discover
from hlodiff.explain import dynamo_compiled_only
from hlodiff.explain.dynamo_compiled_only import unsequenced

DYN = FIXTURES / "scenarios" / "dynamo"
TX = FIXTURES / "scenarios" / "torch_xla"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")
WRONG_WAY = ("torch.where", "a metric", "update the same tensors in place", "ran on step", "a Python `if`")


def test_a_clean_compiled_training_loop_read_from_a_dump_alone_is_not_four_recompilations():
    """F1 (dc_unfreeze by hand as the README said: dump + an empty TORCH_LOGS file, no PT_XLA_DEBUG log): every XLA
    compilation ran on steps 0-1 (the bridge's warm-up); was '4 recompilations', exit 1, 'this graph ran on step 2
    ... (torch.where)', 'a metric', 'update the same tensors in place'. Now: exit 0, no headline, and the graphs it
    cannot place say so and what to add."""
    out = cli("explain-recompile", DYN / "rev11_dc_unfreeze", *DYN_MAP, codes=(0,)).stdout
    for words in WRONG_WAY:
        assert words not in out, words
    assert "PT_XLA_DEBUG_LEVEL=2" in out and "which this capture cannot tell" in out
    doc = cli_json("explain-recompile", DYN / "rev11_dc_unfreeze", *DYN_MAP, codes=(0,))
    assert doc["headline"] is None and doc["unexpected"] == []
    assert len(doc["dynamo"]["compilations_only"]) == 2


def test_train_and_eval_read_from_a_dump_alone_keep_dynamos_story_and_name_no_step():
    """F1 (dc_train_eval by hand): Dynamo's grad_mode retrace is expected; the eager step's variants were told 'a
    value is kept on some steps only (a metric, a log)', exit 1, and 'step 2' read from the dump's order."""
    out = cli("explain-recompile", DYN / "rev11_dc_train_eval", *DYN_MAP, codes=(0,)).stdout
    assert "one graph per mode" in out
    for words in WRONG_WAY:
        assert words not in out, words
    assert "(step " not in out


def test_a_warmup_bound_keeps_a_family_with_more_variants_than_the_bridge_makes():
    """The rule's bound: a family compiled more often than the bridge's warm-up makes (the steady graph plus two
    per Dynamo compile) is not told 'cannot tell'; with the bound at 0 nothing of dc_unfreeze fits."""
    explanation = explained(discover([str(DYN / "rev11_dc_unfreeze")], None, None))
    found = explanation.dynamo
    assert found is not None and found.compilations_only
    before = dynamo_compiled_only.WARMUP_VARIANTS
    try:
        dynamo_compiled_only.WARMUP_VARIANTS = 0
        assert unsequenced(explanation, found, set()) == []
    finally:
        dynamo_compiled_only.WARMUP_VARIANTS = before


def test_look_alikes_with_evidence_of_their_own_keep_their_story():
    """The same capture mode (e-nolog) with an unexpected Dynamo retrace (rev9_c1: a config float) keeps its
    headline and exit 1; a capture with torch_xla's execution log (dyn_train_eval_dump, mode b) sees the steps and
    never gets the row; a torch_xla dump alone without torch.compile (review2_ckpt_dump) is not a bridge run."""
    c1 = cli_json("explain-recompile", DYN / "rev9_c1_dict_config", *DYN_MAP, codes=(1,))
    assert c1["headline"] is not None and c1["dynamo"]["compilations_only"] == []
    steps = cli_json("explain-recompile", DYN / "dyn_train_eval_dump", *DYN_MAP, codes=(0,))
    assert steps["dynamo"]["compilations_only"] == []
    plain = cli("explain-recompile", TX / "review2_ckpt_dump" / "dump", codes=(0, 1)).stdout
    assert "which this capture cannot tell" not in plain


def test_the_bridges_own_graphs_are_not_worded_as_a_cause_in_a_clean_report():
    """F7 (record): 'alternating: torch.compile (XLA bridge) switches between 2 graphs (A,B,A,B)' (dc_kfold_rewrap)
    and 'periodic ... repeats every 7 graphs, 3 variants ... (dtype)' (dc_train_eval) under 'expected': words a user
    greps as causes. The line says the bridge runs graphs of its own; the pattern's facts stay."""
    kfold = cli("explain-recompile", DYN / "rev11_dc_kfold_rewrap" / "record", *DYN_MAP, codes=(0,)).stdout
    assert "alternating" not in kfold and "the bridge's own: torch.compile (XLA bridge) runs 2 graphs" in kfold
    doc = cli_json("explain-recompile", DYN / "rev11_dc_kfold_rewrap" / "record", *DYN_MAP, codes=(0,))
    assert "alternating" in [f.get("pattern", {}).get("name") for f in doc["families"]]
    train_eval = cli("explain-recompile", DYN / "rev11_dc_train_eval_record" / "record", *DYN_MAP, codes=(0,)).stdout
    assert "periodic" not in train_eval and "(dtype)" not in train_eval


def test_a_bridge_family_with_a_real_recompilation_keeps_its_pattern_words():
    """Look-alike of F7: the bridge's sync of a lazily drawn input compiled anew every call (rev10_dc_control_break)
    is unbounded and says so."""
    out = cli("explain-recompile", DYN / "rev10_dc_control_break" / "record", *DYN_MAP, codes=(1,)).stdout
    assert "unbounded" in out and "the bridge's own:" not in out.split("unbounded", 1)[0].splitlines()[-1]
