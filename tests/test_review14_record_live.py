"""New-user review 14 (F3, F4, F5): what `record`, the live lines and the pytest plugin say agrees with the report.

P6 (token lengths 12, 17, 23 into a compiled forward) and P7 (a Python-float temperature) are the reviewer's
programs, captured as fixtures/scenarios/dynamo/rev14_p6_seqlen and rev14_p7_temperature(_record).
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli
from live_replay import printed, replay

from hlodiff.api import explain_paths
from hlodiff.render.record import exit_note

DYN = FIXTURES / "scenarios" / "dynamo"
SOURCES = f"/home/user/project={DYN}"


def _replay(name: str) -> list[str]:
    return printed(replay(DYN / name, "c"))


def _note(result) -> str:
    return exit_note(0, len(result.explanation.recompilations), len(result.unexpected), result.dynamo_counts,
                     follow_dynamo=result.follow_dynamo)


def test_record_s_last_line_does_not_call_the_bridge_s_compiles_for_a_size_guard_expected():
    """F3: 'XLA: 2 recompilations (all expected)' under a report that exits 1: they are the bridge's compiles for
    the new sizes Dynamo's failed guard traced, and the line says so."""
    result = explain_paths([str(DYN / "rev14_p6_seqlen" / "record")])
    assert result.exit_code == 1 and result.follow_dynamo == 2
    note = _note(result)
    assert "expected" not in note, note
    assert "XLA: 2 recompilations (all by the bridge after Dynamo's)" in note, note


def test_the_bridge_s_compiles_after_an_expected_retrace_stay_expected():
    """The look-alike: a grad-mode switch (an expected Dynamo recompilation) keeps '(all expected)'."""
    result = explain_paths([str(DYN / "review2_dyn_nograd_eval" / "record")])
    assert result.exit_code == 0 and result.follow_dynamo == 0
    assert "(all expected)" in _note(result) or "(expected)" in _note(result)


def test_growing_input_graphs_stay_unexpected_not_following():
    """rev10_dc_control_break's growing random input graphs are the story (unexpected), not Dynamo's followers."""
    result = explain_paths([str(DYN / "rev10_dc_control_break" / "record")])
    assert result.follow_dynamo == 0
    assert _note(result) == "hlodiff: 2 recompilations; exiting with the command's status 0"


def test_live_lines_place_the_bridge_s_graph_at_the_call_as_the_report_does():
    """F3: the live line of the bridge's graph said the def (:9), the report the call (:16)."""
    said = _replay("rev14_p6_seqlen")
    placed = [x for x in said if " at rev14_p6_seqlen.py:" in x]
    assert placed and all("rev14_p6_seqlen.py:16" in x for x in placed), said


def test_live_dynamo_lines_read_the_one_call_from_the_source_as_the_report_does(monkeypatch):
    """F3/F4: with the source on disk the live Dynamo line names the call (:19) as the report does, not the guard's
    line in the function (:11) only later revised."""
    monkeypatch.setenv("HLODIFF_SOURCE_MAP", SOURCES)
    said = _replay("rev14_p7_temperature_record")
    first = next(x for x in said if " recompiled" in x)
    assert "rev14_p7_temperature_record.py:19" in first, said


def test_the_story_tells_the_dynamo_cause_in_the_same_words():
    """F3: the story section's fix for the bridge's graph was another sentence ("an index tensor made on the
    host ...") than the Dynamo section's for the same size change."""
    out = cli("explain-recompile", DYN / "rev14_p6_seqlen" / "record", codes=(1,)).stdout
    dynamo, story = out.split("\nstory:", 1)
    fix = next(x.strip() for x in dynamo.splitlines() if x.strip().startswith("fix: forward is called"))
    assert fix in story and "index tensor made on the host" not in story, out


def test_the_call_leads_and_the_guard_s_line_stays_beside_it():
    """F4: README: the one call in the source file when it is on disk, before the guard's line. P7 led with :11."""
    out = cli("explain-recompile", DYN / "rev14_p7_temperature", "--source-map", SOURCES, codes=(1,)).stdout
    head = next(x for x in out.splitlines() if x.startswith("Dynamo recompiled"))
    assert head.endswith("rev14_p7_temperature.py:19, the value used at rev14_p7_temperature.py:11"), head
    assert "called at" not in head
    # without the source the guard's line is all there is
    bare = cli("explain-recompile", DYN / "rev14_p7_temperature", codes=(1,)).stdout
    assert "rev14_p7_temperature.py:11" in next(x for x in bare.splitlines() if x.startswith("Dynamo recompiled"))


def test_a_failing_check_of_a_jax_dump_is_not_run_again():
    """F5: assert_stable on a JAX dump (no torch_xla graph) ran the test a second time for source lines a JAX dump
    already has; the error says which graphs it read, and with_lines returns it without a second run."""
    from hlodiff.testing.rerun import with_lines
    from hlodiff.testing.stability import HloStabilityError, assert_stable

    with pytest.raises(HloStabilityError) as err:
        assert_stable(FIXTURES / "scenarios" / "jax" / "jax_bucket_pad" / "dump", warmup=1)
    assert err.value.torch_xla is False
    with pytest.raises(HloStabilityError) as torch_err:  # the look-alike: a torch_xla capture still gets its rerun
        assert_stable(FIXTURES / "scenarios" / "torch_xla" / "review2_moco_queue" / "record", warmup=1)
    assert torch_err.value.torch_xla is True
    # paths=None: a second run would fail on it; none is tried
    assert with_lines(err.value, nodeid="t::x", rootdir=".", inifile=None, lines_on=False, rerun=True,
                      paths=None) is err.value


def test_a_second_run_that_failed_too_is_not_called_different(monkeypatch):
    """F5: 'did not fail the same way' under a failure that was the same every time: a second run that failed
    without a message of its own says so; one that passed says the failure depends on what ran before."""
    from hlodiff.testing import rerun
    from hlodiff.testing.stability import HloStabilityError

    class Paths:
        env_added: dict = {}

    monkeypatch.setattr("hlodiff.capture.session.saved_env", lambda paths: {})
    for status, words in ((1, "failed too"), (0, "passed")):
        monkeypatch.setattr(rerun, "rerun_with_lines", lambda *a, s=status, **k: (None, s))
        out = str(rerun.with_lines(HloStabilityError("1 graph compiled after the first 1 step"), nodeid="t::x",
                                   rootdir=".", inifile=None, lines_on=False, rerun=True, paths=Paths()))
        assert words in out and "did not fail the same way" not in out, out


def test_cost_s_notes_on_a_record_folder_name_where_the_setting_is_explained():
    """F7: cost on a record folder warned that its capture was incomplete and named HLODIFF_LIVE_TENSORS, which no
    page the reviewer read explained: the notes say they are record's design and name the page that explains the
    setting, and that page lists its values."""
    from helpers import cli_json

    doc = cli_json("cost", FIXTURES / "scenarios" / "torch_xla" / "best_loss_min" / "record")
    notes = [w for w in doc["warnings"] if "HLODIFF_LIVE_TENSORS" in w]
    assert len(notes) == 2, doc["warnings"]
    # each says the gap is record's design (review 17, F6: the repeated steps' one is a note now, not a warning)
    assert all(("not a fault" in w or ": note: " in w) and "record" in w and "docs/commands.md" in w
               for w in notes), notes
    commands = (FIXTURES.parent / "docs" / "commands.md").read_text()
    explained = commands.split("HLODIFF_LIVE_TENSORS` sets when", 1)[1].split("\n\n", 1)[0]
    assert all(f"`{value}`" in explained for value in ("boundaries", "compilations", "every-sync", "off"))
