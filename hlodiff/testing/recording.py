"""What ``hlo_graphs.record()`` returns: the graphs a block of test code compiled, and assertions over them."""

from __future__ import annotations

import os
from functools import cached_property

from hlodiff.errors import InputWarning
from hlodiff.explain.explanation import RunExplanation
from hlodiff.explain.recompile import explain_records
from hlodiff.testing.stability import HloStabilityError, Stability, stability_of


class HloRecording:
    """The graphs torch_xla executed inside a ``with hlo_graphs.record():`` block.

    ``graphs`` lists every graph (cache hits too) as :class:`hlodiff.explain.inventory.GraphSummary`;
    ``compilations`` the ones that compiled *as a fresh process would*: the first sighting of each graph hash
    inside the block. (torch_xla's own cache is per process, so a graph an earlier test compiled would otherwise
    hide a recompilation depending on test order.)
    """

    def __init__(self, capture, snapshots=None, node=None, temporary: str | None = None, dynamo=None):
        self._capture = capture  # hlodiff.capture.session.Recording
        self.dynamo = dynamo
        """Dynamo's events inside the block (:class:`hlodiff.dumps.dynamo_log.DynamoLog`), None without torch."""
        self._snapshots = snapshots
        self._node = node
        self._temporary = temporary  # the capture folder when it is removed at the end of the session
        self.warnings: list[InputWarning] = []

    @cached_property
    def explanation(self) -> RunExplanation:
        records = self._records()
        reports = {(r.source, rep.sync): rep for rep in self._capture.reports(self.warnings) for r in records[:1]
                   if rep.sync is not None}
        events = {e.graph_hash: e for e in self._capture.compilations(self.warnings) if e.graph_hash}
        if not records:
            return RunExplanation([], [], [], "0 graphs: nothing ran on the XLA device inside the block", [])
        return _pytest_hints(explain_records(records, reports=reports, events=events))

    def _records(self) -> list:
        return self._capture.graphs(self.warnings)

    @property
    def graphs(self) -> list:
        return list(self.explanation.graphs)

    @property
    def compilations(self) -> list:
        return [g for g in self.explanation.graphs if g.compiled]

    @cached_property
    def stability(self) -> Stability:
        return stability_of(self.explanation)

    def assert_stable(self, warmup: int = 1) -> None:
        """Fail when a graph compiles after the first ``warmup`` steps; the message explains why."""
        __tracebackhide__ = True
        try:
            if self.dynamo is not None and self.dynamo.compiles:  # issue 31: a torch.compile'd function
                _assert_dynamo_stable(self.dynamo)
                self.stability.assert_stable(warmup, excuse=_run_by_the_bridge)
            else:
                self.stability.assert_stable(warmup)
        except HloStabilityError as err:
            raise self._for_the_reader(err) from None

    def assert_max_compilations(self, n: int) -> None:
        __tracebackhide__ = True
        try:
            self.stability.assert_max_compilations(n)
        except HloStabilityError as err:
            raise self._for_the_reader(err) from None

    def _for_the_reader(self, err: HloStabilityError) -> HloStabilityError:
        """Graphs of a temporary capture are named ``#N``, not by a folder that is gone when the message is read."""
        if not self._temporary:
            return err
        text = str(err).replace(f"{self._temporary}#", "#")
        return HloStabilityError(text + "\n\n(#N numbers this session's graphs; they are in a temporary folder "
                                 "removed at the end: keep them with --hlodiff-dir DIR)", err.torch_xla)

    def assert_snapshot(self, name: str | None = None) -> None:
        """Compare the compiled graphs with ``__hlo_snapshots__/`` beside the test (written on first run and with
        ``pytest --hlodiff-update``)."""
        __tracebackhide__ = True
        if self._snapshots is None or self._node is None:
            raise RuntimeError("assert_snapshot() needs the hlo_graphs fixture")
        self._snapshots.assert_match(self._node, self.explanation, name)

    def report(self) -> str:
        return self.stability.report()


def _assert_dynamo_stable(log) -> None:
    """Fail when Dynamo compiled a function again for a reason that is not expected (one graph per mode is):
    the message is the guard Dynamo printed, at the user's line, with its fix."""
    __tracebackhide__ = True
    from hlodiff.explain.dynamo_log_findings import recompiles_of

    bad = [r for r in recompiles_of(log) if not r.expected]
    if not bad:
        return
    lines = [f"Dynamo recompiled {len(bad)} time{'s' if len(bad) != 1 else ''}:"]
    for r in bad:
        where = f" at {r.location.where}" if r.location else ""
        lines.append(f"  {r.function or 'the compiled function'} ({r.compile_id}){where}: {r.guard.guard}")
        if r.fix:
            lines.append(f"    fix: {r.fix}")
    raise HloStabilityError("\n".join(lines))


def _run_by_the_bridge(graph) -> bool:
    """An XLA graph torch_xla's Dynamo bridge compiled (its forward, backward, own syncs): Dynamo's check
    above judges those."""
    from hlodiff.explain.dynamo_bridge import bridge_run

    return bridge_run(graph.record.frames)


SOURCE_LINES_HINT = ("source lines unknown: the plugin leaves XLA_IR_DEBUG/XLA_HLO_DEBUG off (under pytest they "
                     "cost about 1.5x per traced step); run pytest with `-o hlodiff_source_lines=true` to name "
                     "your lines")


def _pytest_hints(explanation: RunExplanation) -> RunExplanation:
    """Inside pytest the way to source lines is the plugin's ini switch, not ``hlodiff record``."""
    if any(os.environ.get(name, "0") not in ("", "0") for name in ("XLA_HLO_DEBUG", "XLA_IR_DEBUG")):
        return explanation
    explanation.hints[:] = [SOURCE_LINES_HINT if h.startswith("source lines unknown") else h
                            for h in explanation.hints]
    for recompilation in explanation.recompilations:
        for cause in recompilation.causes:
            if cause.hint and cause.hint.startswith("the HLO has no source metadata"):
                cause.hint = "the HLO has no source metadata: run pytest with `-o hlodiff_source_lines=true`"
    return explanation
