"""New-user review 22, F7: the live lines of tx1 repeated a ~400-character fix on every recompilation of one story
("step 0 recompiled again: same story ... fix: the value read early ..."), four near-identical long lines for step 0
alone. A story's fix is now printed once; a later line of the story whose fix is the same refers to it; a fix that
changed (more of the run known) is printed in full. Words only: the events (and their JSON) keep the fix."""

from __future__ import annotations

from conftest import FIXTURES
from live_replay import printed, replay

from hlodiff.explain.live_events import LiveEvent, Told
from hlodiff.render.live import StepOrder, lines


def test_tx1s_story_tells_its_fix_once():
    """Replayed without the source: the story's repeats wait, then its looks again tell the fix: once in full, then
    three looks at step 0's put-off graphs and one at step 1's refer to it."""
    events = replay(FIXTURES / "scenarios" / "torch_xla" / "rev22_tx_early_exit", "c")
    said = printed(events)
    full = [x for x in said if "fix: the value read early at rev22_tx_early_exit.py:13" in x]
    referred = [x for x in said if x.endswith("; fix: as told for step 0 above")]
    assert len(full) == 1 and full[0].startswith("hlodiff: step 0, now that more of the run is known"), said
    assert len(referred) == 4 and all("partial at rev22_tx_early_exit.py:13" in x for x in referred), said
    looks = [e for e in events if isinstance(e, LiveEvent) and e.kind == "update" and e.story == 0]
    assert all(e.to_json()["cause"]["fix"].startswith("the value read early") for e in looks)  # the JSON keeps it


def _event(kind: str, step: int, fix: str | None, story: int = 0, waits: bool = False) -> LiveEvent:
    return LiveEvent(kind, step, f"run#{step}", "sync at t.py:9", Told("shape", "input shape changed", None, fix,
                                                                          waits=waits), story)


def test_a_changed_fix_is_printed_in_full_and_then_referred_to():
    events = StepOrder().mark([_event("recompiled", 1, "pad it"), _event("repeat", 2, "pad it"),
                               _event("repeat", 3, "bucket it"), _event("repeat", 4, "bucket it"),
                               _event("recompiled", 5, "bucket it", story=1)])
    tails = [lines(e)[0].rsplit("; fix: ", 1)[1] for e in events]
    assert tails == ["pad it", "as told for step 1 above", "bucket it", "as told for step 3 above", "bucket it"]


def test_a_waiting_fix_is_no_fix_told():
    events = StepOrder().mark([_event("recompiled", 1, "pad it", waits=True), _event("repeat", 2, "pad it")])
    assert lines(events[1])[0].endswith("; fix: pad it")


def test_the_scorers_first_word_passes_over_an_eager_op():
    """rev22_jx_mesh_resize (LIVE_WRONG_NOW, 1/6): with no shouted line, the first expected line was an eager
    broadcast (:11), counted live and listed after the story at exit; the resize's own expected line comes next."""
    from live_replay import score_live

    first_word = score_live().first_word
    eager = LiveEvent("expected", 1, "d#1", "jit_broadcast_in_dim", Told("shape", "s", None, "expected"), eager=1)
    resize = LiveEvent("expected", 2, "d#2", "jit_train_step", Told("sharding", "s", None, "expected"))
    assert first_word([eager, resize]) is resize
    assert first_word([eager]) is eager
