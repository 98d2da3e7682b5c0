"""The analysis on evidence built in memory (issue 37): a :class:`hlodiff.dumps.evidence.Run` made of records whose
text is in memory, with side sources given as values, is explained with no file opened; and what each side source
says reaches the story the same way it does from disk.

The graphs are real (copied out of fixture dumps into memory); the side sources are made here, because what a test
of one rule needs is to choose them. End-to-end runs on the real dumps stay in test_explain.py and the others.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import io
import os
import zlib
from unittest import mock

from conftest import FIXTURES
from helpers import explained, truth_of
from hlodiff.diff.model import Cause
from hlodiff.dumps import iter_graphs
from hlodiff.dumps.debug_log import CompilationEvent
from hlodiff.dumps.evidence import Run
from hlodiff.dumps.source_lines import NoSources, SourceLines
from hlodiff.dumps.run_folder import discover
from hlodiff.explain.decision_line import place_decisions
from hlodiff.explain.live import LiveExplainer
from hlodiff.explain.recompile import explain_records
from hlodiff.hlo.model import SourceFrame

MEMORY = "memory/graphs.hlo.0"


def in_memory(path) -> list:
    """The graphs of a real dump, copied into memory: each record holds its text, no file stands behind it."""
    return [dataclasses.replace(r, path=MEMORY, source=MEMORY, packed_text=zlib.compress(r.text().encode()),
                                byte_offset=0, byte_length=-1, proto_path=None)
            for r in iter_graphs(str(path))]


@contextlib.contextmanager
def no_files():
    """Inside, any attempt to open or list a file fails the test. hlodiff's own tables (the library module list
    shipped in the package, this interpreter's install roots) are loaded first: they are knowledge, not the run's
    evidence, and are loaded once per process whatever the run (as is networkx, whose import reads its entry
    points)."""
    import networkx  # noqa: F401

    from hlodiff.hlo.installed import library_roots
    from hlodiff.hlo.library_modules import module_paths, top_level_names

    module_paths(), top_level_names(), library_roots()
    def refusing(original):
        def refuse(*args, **kwargs):
            if args and str(args[0]).endswith((".py", ".pyc")):  # a module imported on first use: code, not evidence
                return original(*args, **kwargs)
            raise AssertionError(f"the analysis read a file: {args[:1]}")
        return refuse

    with contextlib.ExitStack() as stack:
        for target, name in ((builtins, "open"), (io, "open"), (os, "listdir"), (os, "scandir")):
            stack.enter_context(mock.patch.object(target, name, refusing(getattr(target, name))))
        yield


def memory_run(records, **side) -> Run:
    return Run(records, on_disk=False, sources=side.pop("sources", NoSources()), **side)


def test_a_run_in_memory_is_explained_as_its_dump_is():
    """batch_shape's graphs, in memory, with no side source: the recompilation, its kind and line are the run's."""
    truth = truth_of("torch_xla", "batch_shape")
    records = in_memory(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0")
    with no_files():
        explanation = explain_records(memory_run(records))
    (r,) = explanation.recompilations
    assert r.graph.record.index == truth["compilations"][1]
    assert r.causes[0].kind == truth["cause"]
    assert (r.causes[0].locations[0].file.rsplit("/", 1)[-1], r.causes[0].locations[0].line) == \
        (truth["user_file"], truth["user_line"])


def test_the_same_graphs_from_disk_and_from_memory_tell_the_same_story():
    """The end-to-end explanation of the dump and the one of its graphs copied into memory (no side files) differ
    only where the side files added something: without them, the same causes and fixes."""
    path = FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0"
    from_disk = explain_records(Run(list(iter_graphs(str(path)))))
    from_memory = explain_records(memory_run(in_memory(path)))
    told = [[(c.kind, c.summary, c.fix) for c in r.causes] for r in from_disk.recompilations]
    assert told == [[(c.kind, c.summary, c.fix) for c in r.causes] for r in from_memory.recompilations]
    assert from_disk.summary == from_memory.summary


def test_a_debug_event_in_memory_names_torch_xla_s_cause_of_the_cut():
    """item_partial: graph 3 finishes a step an early .item() cut. With the PT_XLA_DEBUG compilation given as a
    value, its cause is quoted in the partial cause and kept as the recompilation's debug record."""
    records = in_memory(FIXTURES / "torch_xla" / "item_partial" / "graphs.hlo.0")
    cut = records[3]
    event = CompilationEvent("a reason written by this test", cut.graph_hash, None, None, ())
    with no_files():
        (r,) = explain_records(memory_run(records, events={cut.graph_hash: event})).recompilations
    assert r.graph.record.index == 3 and r.debug is event
    assert r.causes[0].kind == "partial"
    assert r.causes[0].summary.endswith("(PT_XLA_DEBUG: a reason written by this test)")
    (without,) = explain_records(memory_run(records)).recompilations
    assert "PT_XLA_DEBUG" not in without.causes[0].summary and without.debug is None


class _Source(SourceLines):
    """A user's file as this test says it reads: the ``if`` around line 30 is at line 27."""

    def enclosing_if(self, file, line):
        return 27 if (file, line) == ("/home/user/train.py", 30) else None

    def calls_named(self, file, names):
        return [12] if "requires_grad_" in names else []


def _decided(rule: str, sources: SourceLines) -> Cause:
    cause = Cause("outputs", "3 outputs added", [SourceFrame("/home/user/train.py", 30, "step")])
    cause.fix_rule = rule
    recompilation = type("R", (), {"causes": [cause], "read_at": None})()
    place_decisions([recompilation], sources)
    return cause


def test_the_decision_line_comes_from_the_source_the_run_gives():
    """The `if` that decides what a step traces is read from the run's sources: first when they show it, a hint
    saying which line to look for when they do not (the file is not on disk)."""
    found = _decided("traced_some_steps", _Source())
    assert [f.line for f in found.locations] == [27, 30] and not found.hint
    frozen = _decided("outputs_frozen", _Source())
    assert [f.line for f in frozen.locations] == [12, 30]
    missing = _decided("traced_some_steps", NoSources())
    assert [f.line for f in missing.locations] == [30]
    assert missing.hint.startswith("the `if` that decides whether line 30 is traced traces nothing")


def test_the_live_explainer_grows_the_run_by_its_compilations():
    """Fed one graph at a time, the live story tells batch_shape's recompilation as the final report does, and the
    run it holds grows by the compilations only (cache hits repeat one of them)."""
    truth = truth_of("torch_xla", "batch_shape")
    run = memory_run([])
    explainer = LiveExplainer(run)
    events = []
    records = in_memory(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0")
    with no_files():
        for record in records:
            events += explainer.feed([record])
        events += explainer.finish()
    assert [r.index for r in run.records] == truth["compilations"]
    told = [e for e in events if e.told is not None]
    assert told and told[0].told.kind == truth["cause"] and told[0].told.location.line == truth["user_line"]


def test_a_window_of_the_run_keeps_its_side_sources_and_the_events_of_its_graphs():
    records = in_memory(FIXTURES / "torch_xla" / "item_partial" / "graphs.hlo.0")
    events = {r.graph_hash: CompilationEvent("c", r.graph_hash, None, None, ()) for r in records[:4]}
    sources = _Source()
    run = memory_run(records, events=events, sources=sources)
    window = run.window(records[3:])
    assert window.records == records[3:] and window.sources is sources and not window.on_disk
    assert set(window.events) == {records[3].graph_hash} | ({records[0].graph_hash} & {r.graph_hash for r in records[3:]})


def test_reading_the_run_from_disk_is_what_the_command_explains():
    """End to end on the real dump: discover, read_run, explain_run (the helper the tests share) and the command
    agree on the headline."""
    from helpers import cli_json

    path = FIXTURES / "torch_xla" / "batch_shape"
    doc = cli_json("explain-recompile", path, codes=(0, 1))
    explanation = explained(discover([str(path)], None, None))
    assert explanation.summary == doc["summary"]
    assert [r.graph.ref for r in explanation.recompilations] == [r["graph"] for r in doc["recompilations"]]
