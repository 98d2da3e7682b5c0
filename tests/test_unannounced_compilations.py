"""Compilations torch_xla does not announce, and logs whose compilations do not line up with the dump (new-user
review 8, F1, F6, F8): EmbeddingBag on torch_xla 2.9 compiles a graph inside the op that PT_XLA_DEBUG shows only as a
lone ``Post Compilation Analysis`` block. Paired in order, every later compilation took another graph's HLO and the
run was told as ".item()/print cut the step". Real runs: fixtures/scenarios/torch_xla/rev8_pad_multiple (``record``)
and rev8_pad_multiple_byhand (a dump with its log beside it)."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import FIXTURES
from helpers import cli, cli_json

SCEN = FIXTURES / "scenarios" / "torch_xla"
RUNS = {"record": SCEN / "rev8_pad_multiple" / "record", "by hand": SCEN / "rev8_pad_multiple_byhand"}


def test_a_lone_post_block_is_a_compilation_that_keeps_its_module():
    from hlodiff.dumps.debug_log import CompilationEvent, iter_debug_events, read_compilations

    log = RUNS["record"] / "pt_xla_debug.log"
    warnings: list = []
    events = [e for e in iter_debug_events(log, warnings) if isinstance(e, CompilationEvent)]
    assert [e.announced for e in events] == [True, False, True, True, False]  # 5 = the dump's 5 modules
    assert not warnings  # nothing for the user to act on
    # readers keyed by graph hash see the announced ones only, as before
    assert [e.graph_hash for e in read_compilations(log)] == [e.graph_hash for e in events if e.announced]


@pytest.mark.parametrize("how", sorted(RUNS))
def test_the_length_change_is_told_not_a_read_to_move(how):
    """Step 1's early graph (ids s64[2,12]) is compared with step 0's (s64[2,8]): a shape at the tokenizer's
    `.to(device)` line, the EmbeddingBag offsets {0, 8} -> {0, 12} following from it; the headline's cut names
    embedding_bag, not a read of the user's (there is none)."""
    doc = cli_json("explain-recompile", str(RUNS[how]), codes=(1,))
    head = doc["headline"]
    assert "embedding_bag" in head["fix"] and "nn.Embedding" in head["fix"]
    assert "add_step_closure" not in head["fix"] and ".item()" not in head["fix"]
    text = cli("explain-recompile", str(RUNS[how])).stdout  # what follows is told "with it", without its own fix
    assert "kept on some steps" not in text and "baked" not in text and "read it after" not in text
    shaped = [r for r in doc["recompilations"] if r["causes"][0]["kind"] == "shape"]
    assert len(shaped) == 1 and "s64[2,8]{1,0} -> s64[2,12]{1,0}" in shaped[0]["causes"][0]["summary"]
    assert shaped[0]["causes"][0]["locations"][0]["line"] == 21


def test_a_log_that_does_not_line_up_with_the_dump_tells_no_sequence(tmp_path):
    """The look-alike of an older torch_xla that prints nothing for such a compilation: the log's 3 compilations
    against the dump's 5 modules. Paired in order, compilation 1 (7 inputs, 4 outputs) would get module 1 (5
    parameters, 3 outputs); that misfit is said and the dump is read alone (no sequence of executions): its
    headline is the length change, not a read to move after the sync."""
    run = tmp_path / "run"
    shutil.copytree(RUNS["record"], run)
    log = run / "pt_xla_debug.log"
    text = log.read_text()
    blocks = re.split(r"(?m)^(?=(?:Compilation|Post Compilation|Execution) Analysis: =+\n"
                      r"(?:Compilation|Post Compilation|Execution) Analysis: (?:Compilation Cause|Execution Cause|"
                      r"Graph input size))", text)
    kept, last = [], None
    for block in blocks:
        kind = block.split(" Analysis")[0]
        if not (kind == "Post Compilation" and last != "Compilation"):
            kept.append(block)
        last = kind
    log.write_text("".join(kept))
    result = cli("explain-recompile", str(run))
    assert result.exit_code == 1, result.output
    assert "do not line up with the XLA dump's modules (compilation 1 has 7 inputs and 4 outputs" in result.stderr
    head = cli_json("explain-recompile", str(run), codes=(1,))["headline"]
    assert head["kind"] == "shape" and head["location"]["line"] == 21
    assert "add_step_closure" not in head["fix"] and "read it after the sync" not in head["fix"]


def test_the_same_log_read_while_it_grows_shifts_its_warnings_without_failing(tmp_path):
    """F6: a warning of the log's second chunk had its line shifted by assignment to a frozen InputWarning
    (FrozenInstanceError: the live lines of `record` stopped). Now it is replaced, with the file's line number."""
    from hlodiff.dumps.follower_base import GrowingDebugLog

    text = (RUNS["record"] / "pt_xla_debug.log").read_text()
    cut = text.index("Compilation Analysis: ====", 10)  # the second announced compilation starts a new chunk
    cut = text.rfind("\n", 0, cut) + 1
    second = text[cut:].replace("Number of Graph Inputs: 7", "Number of Graph Inputs: many", 1)
    path = tmp_path / "debug.log"
    path.write_text(text[:cut])
    warnings: list = []
    log = GrowingDebugLog(str(path), warnings)
    log.new_events(closed=False)
    path.write_text(text[:cut] + second)
    log.new_events(closed=True)
    (w,) = warnings
    lines = (text[:cut] + second).splitlines()
    assert "not a number" in w.message and lines[w.line - 1].strip().startswith("Compilation Analysis: ====")


@pytest.mark.parametrize("debug", [False, True])
def test_a_live_analysis_that_fails_says_it_is_a_bug_and_shows_its_traceback_under_hlodiff_debug(monkeypatch,
                                                                                                  debug):
    import io

    from hlodiff.render.live import echo_event

    if debug:
        monkeypatch.setenv("HLODIFF_DEBUG", "1")
    else:
        monkeypatch.delenv("HLODIFF_DEBUG", raising=False)
    try:
        raise ValueError("boom")
    except ValueError as exc:
        out = io.StringIO()
        echo_event(exc, stream=out)
    first, *rest = out.getvalue().splitlines()
    assert first.startswith("hlodiff: live lines stopped (internal error: ValueError: boom; a bug in hlodiff")
    assert ("Traceback (most recent call last):" in rest) == debug
    assert ("HLODIFF_DEBUG=1" in first) != debug



def test_live_lines_do_not_call_the_first_step_a_recompilation_nor_a_story_its_own_precedent():
    """Review 8, F10 (tx_ohem under `record`): "step 0 recompiled" on the first step (its early mask graph and the
    rest of the step are two graphs of one family) and "step 1 recompiled again: same story as step 1"."""
    from hlodiff.explain.live_events import LiveEvent, Told
    from hlodiff.hlo.model import SourceFrame
    from hlodiff.render.live import lines

    told = Told("partial", "the rest of a step", SourceFrame("/home/user/project/train.py", 11, "<module>"),
                "keep the full size")
    first = lines(LiveEvent("recompiled", 0, "run#1", "sync at train.py:16", told))[0]
    assert first.startswith("hlodiff: step 0 compiled a second graph (sync at train.py:16)")
    later = lines(LiveEvent("recompiled", 3, "run#7", "sync at train.py:16", told))[0]
    assert later.startswith("hlodiff: step 3 recompiled (sync at train.py:16)")
    own = lines(LiveEvent("repeat", 1, "run#3", "sync at train.py:16", told, 0, 2, 1))[0]
    assert "same story (" in own and "same story as step 1" not in own
    other = lines(LiveEvent("repeat", 2, "run#5", "sync at train.py:16", told, 0, 3, 0))[0]
    assert "same story as step 0 (" in other


def test_unknown_compile_times_are_said_unknown_and_the_cut_names_the_library():
    """Review 8, F1: compile_times.tsv holds no graph hash for 4 of the 5 compilations: "recompilations cost 0 s of
    0.14 s" read as a measured zero. And the cut's words named ".item(), print", which the program has not."""
    text = cli("explain-recompile", str(RUNS["record"])).stdout
    first = text.splitlines()[0]
    assert "compile times known for 1 of 3 compilations" in first and "cost 0 s" not in first
    assert "because nn.EmbeddingBag / F.embedding_bag(...) reads a value on the host inside the library" in text
    assert ".item(), print" not in text
