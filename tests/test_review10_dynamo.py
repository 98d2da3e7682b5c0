"""New-user review 10 (2026-11-27), torch.compile(backend="openxla"): each test is what the reviewer read wrong, on a
real capture (fixtures/scenarios/dynamo/rev10_*), beside the look-alikes that share its evidence. F1 (an input drawn
on the device and never synced: the bridge compiles a new input graph every call), F5 (the graphs before and after a
print() break told as one program "alternating" / "recompiled"), F6 (live step numbers counted graphs, not calls)."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json
from live_replay import printed, replay

DYN = FIXTURES / "scenarios" / "dynamo"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")
SYNC_FIX = "torch_xla.sync() after creating the input"


def _family_of(doc: dict, ref: str) -> dict:
    return next(f for f in doc["families"] if ref in f["graphs"])


def test_an_input_drawn_on_the_device_and_never_synced_is_a_new_graph_every_call():
    """F1 (dc_control_break): `compiled(torch.randn(4, 12, device=dev))` with no sync: the bridge's sync of the input
    holds one more seed update each call (5 calls: 3 new input graphs). Was 'expected ... each once; nothing to
    fix', exit 0; now the unbounded input graph heads, with the fix the reviewer checked (a sync after the input: 3
    compilations for 10 calls)."""
    result = cli("explain-recompile", DYN / "rev10_dc_control_break" / "record", *DYN_MAP, codes=(1,))
    out = result.stdout
    first = out.splitlines()[1]
    assert first.startswith("unbounded: XLA compiles the bridge's sync of the call's inputs anew on every call")
    assert "rev10_dc_control_break.py:17" in first
    assert SYNC_FIX in out and ".to(device)" in out
    assert "nothing to fix" not in out and "recompiled nothing unexpected" not in out
    doc = cli_json("explain-recompile", DYN / "rev10_dc_control_break" / "record", *DYN_MAP, codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "ops" and head["location"]["line"] == 17 and SYNC_FIX in head["fix"]
    assert _family_of(doc, head["graph"])["pattern"]["name"] == "unbounded"
    assert [r.rsplit("#", 1)[1] for r in doc["dynamo"]["random_input_graphs"]] == ["6", "9", "12"]
    assert doc["dynamo"]["unexpected"]


def test_the_same_program_with_a_sync_after_the_input_stays_a_control():
    """Look-alike of F1 (the reviewer's synced check): the bridge compiles its few graphs once each (3 for 10
    calls): no recompilation, the print() break is the finding, exit 0, and no lazy-input fix."""
    out = cli("explain-recompile", DYN / "rev10_dc_control_break_synced" / "record", *DYN_MAP, codes=(0,)).stdout
    assert "0 recompilations" in out and SYNC_FIX not in out and "unbounded" not in out
    doc = cli_json("explain-recompile", DYN / "rev10_dc_control_break_synced" / "record", *DYN_MAP, codes=(0,))
    assert doc["headline"]["kind"] == "graph_break" and doc["dynamo"]["random_inputs"] == []


def test_dynamo_controls_whose_bridge_compiles_a_few_graphs_once_keep_exit_0():
    """Look-alikes of F1: the bridge's own graphs, each compiled once (an input made on the host and moved, a
    synced step, a print() break read from a dump), are no lazy random input."""
    for scenario in ("rev9_c5_steady_infer", "dyn_print_break", "dyn_eager_eval_control"):
        out = cli("explain-recompile", DYN / scenario, *DYN_MAP, codes=(0,)).stdout
        assert SYNC_FIX not in out, scenario


def test_a_guard_story_keeps_its_headline_and_tells_the_hidden_seed_growth_below():
    """F1's note on dc_dynamic_batch: the same growth hid under the shape story (`ops 4 instructions added` told
    'each once; nothing to fix'). Dynamo's size guard still heads with pad/bucket; the input sync's seed update is
    told with the lazy-input fix beside it, never 'nothing to fix'."""
    doc = cli_json("explain-recompile", DYN / "rev10_dc_dynamic_batch" / "record", *DYN_MAP, codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "shape" and "pad" in head["fix"] and SYNC_FIX not in head["fix"]
    rows = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "ops"}
    assert "dynamo_bridge_lazy_random_input" in rows and "dynamo_bridge_own" not in rows
    assert doc["dynamo"]["random_inputs"] == []
    batches = cli_json("explain-recompile", DYN / "rev6_batch_sizes_record" / "record", *DYN_MAP, codes=(1,))
    assert not any(c["fix_rule"] == "dynamo_bridge_lazy_random_input"  # inputs made on the host, .to(device)
                   for r in batches["recompilations"] for c in r["causes"])


def test_the_graphs_before_and_after_a_print_break_are_two_programs_each_compiled_once():
    """F5 (dc_control_break): #1 and #2 (Dynamo's graph before the print() and the resume function after it) were
    one family 'alternating' and '#2 recompiled ... 12% alike; expected'. The resume function's ops name it
    (torch_dynamo_resume_in_forward_at_11): a family of its own, steady."""
    for name in ("rev10_dc_control_break", "rev10_dc_control_break_synced"):
        out = cli("explain-recompile", DYN / name / "record", *DYN_MAP, codes=(0, 1)).stdout
        assert "alternating" not in out and "#2 recompiled" not in out, name
        assert "steady: torch.compile (XLA bridge) after the graph break at forward:11 compiled once" in out, name


def test_live_steps_of_a_compiled_loop_are_its_calls():
    """F6 (dc_dynamic_batch): the size guard failed on call 2 (bs 5), told live as 'step 4' (graphs counted). Now
    a call is counted once per sync of its inputs and first compiled graph: step 2, and step 4 for bs 3; the input
    graphs of dc_control_break come at calls 3 and 4."""
    said = printed(replay(DYN / "rev10_dc_dynamic_batch", "c"))
    recompiled = [x for x in said if " recompiled" in x]
    assert recompiled and recompiled[0].startswith("hlodiff: step 2 recompiled"), said
    assert any(x.startswith("hlodiff: step 4 recompiled again: same story as step 2") for x in said), said
    said = printed(replay(DYN / "rev10_dc_control_break", "c"))
    grown = [x for x in said if "ops at rev10_dc_control_break.py:17" in x]
    assert [x.split(" recompiled")[0] for x in grown] == ["hlodiff: step 3", "hlodiff: step 4"], said
    # review 22, F7: the story's fix is printed once; the next line of the story refers to it
    assert SYNC_FIX in grown[0] and grown[1].endswith("; fix: as told for step 3 above"), grown


def test_a_size_guard_read_after_its_graph_is_an_update_whose_fix_waits_for_the_next_calls():
    """The live regression rev6_batch_sizes_record (LIVE_WRONG_NOW until review 10): the bs-3 graph was told first
    as a size Dynamo traced once; Dynamo's guard for it, read later, came as 'recompiled again ... 2 times so far'
    with 'a batch is smaller than the one before ... drop_last', two sizes known. Now it is the same story told
    again (an update), its fix waiting for the calls to come, and the third size says the sizes vary."""
    said = printed(replay(DYN / "rev6_batch_sizes_record", "c"))
    assert not any("drop_last" in x for x in said), said
    assert not any("2 times so far" in x and "varies" not in x for x in said), said
    assert any("fix: told once the next steps show" in x for x in said), said
    assert any("now that more of the run is known" in x and "varies from call to call" in x for x in said), said


def test_record_s_verdict_line_does_not_call_the_growing_input_graphs_expected():
    """F1, the record line: 'hlodiff: 2 recompilations (all expected)' under a run whose report exits 1 for the
    growing input graphs. Those recompilations are unexpected ones (listed in --json's `unexpected`)."""
    from hlodiff.api import explain_paths
    from hlodiff.render.record import exit_note

    result = explain_paths([str(DYN / "rev10_dc_control_break" / "record")])
    assert result.exit_code == 1
    note = exit_note(0, len(result.explanation.recompilations), len(result.unexpected), result.dynamo_counts)
    assert note == "hlodiff: 2 recompilations; exiting with the command's status 0", note
    synced = explain_paths([str(DYN / "rev10_dc_control_break_synced" / "record")])
    assert synced.exit_code == 0 and not synced.unexpected
