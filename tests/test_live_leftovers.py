"""The live story's leftovers of the thirteenth stop: what live tells agrees with what the report at exit tells once
the same evidence has been seen; before that, it says what it saw (docs/accuracy.md, "Live leftovers").

Each test replays a committed capture as a growing run (tests/live_replay.py) with the user's sources on disk, as
fixtures/scenarios/score_live.py does."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from live_replay import replay_case


@pytest.fixture
def sources_on_disk(monkeypatch):
    """The recorded /home/user/project mapped to the engine's scenario folder (score_live.py's source map)."""
    def use(engine: str) -> None:
        monkeypatch.setenv("HLODIFF_SOURCE_MAP", f"/home/user/project={FIXTURES / 'scenarios' / engine}")
    return use


def _fixes(events) -> list[str]:
    return [e.told.fix for e in events if e.told is not None and e.told.fix]


def test_a_dtype_change_told_before_the_steps_show_whether_it_stays_names_the_traced_type(sources_on_disk):
    """New-user review 20, T1: a checkpoint restored through NumPy turns every parameter f64 at step 4. Live, the
    step's first line comes before the later steps show the new type stays, so the "stays" rows (NumPy's float64)
    cannot be told yet; the interim fix said "cast it to one dtype (x.float())", naming no dtype. It names the
    float32 the step was traced with; the revision once the steps are known keeps NumPy's float64 words."""
    sources_on_disk("torch_xla")
    fixes = _fixes(replay_case("torch_xla/rev20_t1_restore_f64"))
    assert fixes and "float32" in fixes[0] and "x.float()" in fixes[0], fixes
    assert not any("one dtype (" in f for f in fixes), fixes
    assert any("NumPy's default" in f for f in fixes[1:]), fixes


@pytest.mark.parametrize("first, words", [("f32", "the float32 the step was traced with (x.float())"),
                                          ("s64", "the int64 the step was traced with (x.long())"),
                                          ("bf16", "the bfloat16 the step was traced with (x.bfloat16())")])
def test_the_interim_dtype_fix_names_the_run_s_own_first_type(first, words):
    """The row's look-alikes: whatever type the run began with (labels in int64, a model in bfloat16), the type
    named is that one, never a fixed float32 (tests/test_look_alikes.py: one cast for one story)."""
    from hlodiff.diff.fixes import FixContext, decide

    from test_look_alikes import _explain

    folder = FIXTURES / "torch_xla" / "dtype_input"
    cause = next(c for r in _explain(folder, folder / "graphs.hlo.0").recompilations for c in r.causes
                 if c.kind == "dtype")
    text = decide(cause, FixContext(producer="torch_xla", first_type=first)).text
    assert words in text and "one dtype (" not in text, text


def test_a_later_member_of_a_story_keeps_its_lead_s_fix_live_as_at_exit(sources_on_disk):
    """Round 25 (r25_tx_resume_state_to_device): the optimizer state moved to the device before load_state_dict;
    AdamW reads its step counters on the host and cuts step 2 (the story's lead, told with the library's fix). Step
    3's graph takes the counters as inputs at the same opt.step() line: live counted it into step 2's story, then
    gave it the generic inputs words ("a Python `if` ... such as a causal mask"); the report at exit tells it under
    the lead's fix. Live now tells it under the lead's fix from its first line."""
    sources_on_disk("torch_xla")
    events = replay_case("torch_xla/r25_tx_resume_state_to_device")
    story = [e for e in events if e.told is not None and e.story == 0]
    assert len(story) >= 2 and story[0].told.kind == "partial", [(e.kind, e.told.kind) for e in story]
    fixes = _fixes(story)
    assert fixes and all("step counter" in f for f in fixes), fixes
    assert not any("mask" in f for f in fixes), fixes
    assert any(e.told.kind == "inputs" for e in story[1:]), [(e.kind, e.told.kind) for e in story]
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios/torch_xla/r25_tx_resume_state_to_device"),
                   codes=(0, 1))  # the source map from the environment (a --source-map would outlast the test)
    assert "step counter" in doc["headline"]["fix"]


def test_a_draw_seen_again_is_told_under_its_story_s_if_not_as_reordered_tensors(sources_on_disk):
    """Round 16 (r16_tx_randaug_ops): one of four augmentations drawn per step; step 7 draws step 1's again, and
    against its closest graph the ops look rewired ("the same tensors are combined in another order"). Live counted
    it into step 1's story (the `if` whose ops differ) yet told that other row's fix; the report at exit tells it
    under the story's "Python code decides per step what is traced". Live now waits with the story's lead and tells
    its words."""
    sources_on_disk("torch_xla")
    events = replay_case("torch_xla/r16_tx_randaug_ops")
    repeats = [e for e in events if e.kind == "repeat"]
    assert repeats, [(e.kind, e.step) for e in events]
    fixes = _fixes(events)
    assert fixes and not any("another order" in f for f in fixes), fixes
    assert any("Python code decides per step" in f for f in fixes), fixes


def test_a_story_is_led_by_its_most_common_kind_as_at_exit(sources_on_disk):
    """The look-alike of the rule above: tolist_keep's step 0 is cut by an early read (partial at :16), then every
    later step's index tensor changes length at the same line (shape). The report at exit leads the story with the
    most common kind's first member (the shape: "an index tensor enters the graph as data"); live, once the shapes
    outnumber the cut, tells the story's members with those words, not under the cut's."""
    sources_on_disk("torch_xla")
    events = replay_case("torch_xla/tolist_keep")
    story = [e for e in events if e.told is not None and e.story == 0]
    fixes = _fixes(story)
    assert fixes and "index tensor enters the graph as data" in fixes[0], fixes
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios/torch_xla/tolist_keep"), codes=(0, 1))
    assert "index tensor enters the graph as data" in doc["headline"]["fix"]
