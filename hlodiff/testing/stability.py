"""Stability checks over a run's graphs: counted in steps, explained when they fail."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

from rich.console import Console

from hlodiff.errors import InputWarning
from hlodiff.dumps.run_folder import RunInputs, discover
from hlodiff.dumps.evidence import read_run
from hlodiff.explain.eager_ops import is_eager_op
from hlodiff.explain.explanation import RunExplanation
from hlodiff.explain.recompile import explain_run
from hlodiff.explain.steps import graph_steps
from hlodiff.explain.verdict import unexpected
from hlodiff.render.explain_recompile import render_explanation


DATA_SIZED_KINDS = frozenset({"shape"})
"""Root kinds of an expected recompilation whose step follows the data, not the program's warm-up."""


class HloStabilityError(AssertionError):
    """The graphs were not stable; the message is the explanation. ``torch_xla``: the check read torch_xla graphs,
    whose source lines a second run with frame capture on can add (:mod:`hlodiff.testing.rerun`); a JAX dump's
    lines are in it already (review 14, F5: a JAX dump's test ran twice for nothing)."""

    def __init__(self, message: str, torch_xla: bool = True):
        super().__init__(message)
        self.torch_xla = torch_xla


def read_torch_xla(explanation) -> bool:
    """Whether any graph of the explanation is torch_xla's (a save-tensors report, or a dump whose modules torch_xla
    names ``SyncTensorsGraph.N`` / ``IrToHlo.N``), not a JAX program's."""
    return any(g.record.kind != "xla_dump"
               or (g.record.module_name or "").startswith(("SyncTensorsGraph", "IrToHlo"))
               for g in explanation.graphs)


@dataclass(slots=True)
class Stability:
    """A run's compilations, with the step each happened in.

    A step ends with each full graph (a torch_xla sync); a partial graph (``.item()``) belongs to the step it
    interrupts. XLA dump folders show compilations only, so there each compilation of a family counts as one step.
    """

    explanation: RunExplanation
    steps: dict[str, int]  # graph ref -> step index
    outside: frozenset[str] = frozenset()
    """Refs of JAX eager ops (``jnp.ones``, ``jax.random.normal`` called outside ``jit``): compiled once per shape
    they are called with and no step of the program's, as explain-recompile tells them; a check that counted them
    failed runs the report calls steady (review 13, F2)."""

    @property
    def compilations(self) -> list:
        return [g for g in self.explanation.graphs if g.compiled]

    def late(self, warmup: int) -> list:
        """Compiled graphs that came after the first ``warmup`` steps."""
        return [g for g in self.compilations if self.steps[g.ref] >= warmup and g.ref not in self.outside]

    def report(self, graphs=None) -> str:
        """The explain-recompile report, limited to ``graphs`` (refs) when given."""
        explanation = self.explanation
        if graphs is not None:
            wanted = {g.ref for g in graphs}
            explanation = RunExplanation(explanation.graphs, explanation.families,
                                         [r for r in explanation.recompilations if r.graph.ref in wanted],
                                         explanation.summary, explanation.patterns, explanation.hints,
                                         explanation.headline, explanation.unread, explanation.pattern_facts,
                                         [s for s in explanation.stories if set(s.recompilations) <= wanted])
        buffer = io.StringIO()
        render_explanation(Console(file=buffer, width=100, color_system=None, highlight=False, soft_wrap=True),
                           explanation)
        return buffer.getvalue().rstrip()

    def assert_stable(self, warmup: int = 1, excuse=None) -> None:
        """``excuse``: graphs it returns True for are judged elsewhere (the Dynamo bridge's, issue 31)."""
        __tracebackhide__ = True  # a failing test shows its own line and this message, not hlodiff's frames
        late = [g for g in self.late(warmup) if excuse is None or not excuse(g)]
        if not late:
            return
        lines = [f"{len(late)} graph{'s' if len(late) != 1 else ''} compiled after the first {warmup} "
                 f"step{'s' if warmup != 1 else ''} (warmup={warmup}):"]
        for g in late:
            first = "" if any(r.graph is g for r in self.explanation.recompilations) else \
                " (the first graph of its family: nothing earlier to compare with)"
            lines.append(f"  {g.ref} at step {self.steps[g.ref]}{first}")
        enough = self.warmup_needed(late)
        if enough and self.sized_by_data(late):
            count = len([g for g in self.compilations if g.ref not in self.outside])
            seen_at = min(self.steps[g.ref] for g in late)
            lines.append(f"hlodiff calls these expected (nothing to fix in the code), but they compile for a new "
                         f"input shape, first seen at step {seen_at} of this run: a warm-up length fits this data "
                         f"order only (another order meets the new size later); pad every input to one size for "
                         f"one graph, or bound the compilations instead: assert_max_compilations({count})")
        elif enough:
            lines.append(f"hlodiff calls these the program's warm-up (expected, nothing to fix in the code): its "
                         f"first {enough} steps warm up, so the check needs warmup={enough}: "
                         f"assert_stable(warmup={enough}) or @pytest.mark.hlo_stable(warmup={enough})")
        raise HloStabilityError("\n".join(lines) + "\n\n" + self.report(late), read_torch_xla(self.explanation))

    def warmup_needed(self, late: list) -> int:
        """The ``warmup`` that would pass when every late graph is a recompilation the explanation calls expected
        (an optimizer's first step: Adam's state makes its second step another graph), else 0. The failure then
        tells the user the setting to use instead of an explanation that says 'nothing to fix' under a failing
        check (review 2, F8)."""
        recompiled = {id(r.graph): r for r in self.explanation.recompilations}
        if not late or any(id(g) not in recompiled for g in late):
            return 0
        wrong = {id(r.graph) for r in unexpected(self.explanation)}
        if any(id(g) in wrong for g in late):
            return 0
        return max(self.steps[g.ref] for g in late) + 1

    def sized_by_data(self, late: list) -> bool:
        """Some late graph is a recompilation whose root is a new shape (buckets of a tokenizer's lengths, a size
        schedule): when it first comes depends on the data's order, not on the program's first steps as an
        optimizer's state does; a warm-up length read from one run fits that run only (review 23, F5: a task of
        40 tokens first seen at step 2 was told warmup=3; in a real run it may first come at step 500)."""
        recompiled = {id(r.graph): r for r in self.explanation.recompilations}
        return any(r.causes and r.causes[0].kind in DATA_SIZED_KINDS
                   for r in (recompiled.get(id(g)) for g in late) if r is not None)

    def assert_max_compilations(self, n: int) -> None:
        __tracebackhide__ = True
        count = len([g for g in self.compilations if g.ref not in self.outside])
        if count > n:
            raise HloStabilityError(f"{count} compilations, expected at most {n}\n\n{self.report()}",
                                    read_torch_xla(self.explanation))


def stability_of(explanation: RunExplanation) -> Stability:
    outside = frozenset(g.ref for f in explanation.families if is_eager_op(f) for g in f.members)
    return Stability(explanation, graph_steps(explanation.graphs, explanation.families), outside)


def check_path(path: str | os.PathLike, *, tensors_report: str | None = None,
               debug_log: str | None = None) -> Stability:
    """Read a dump (save-tensors file, XLA dump folder, or `hlodiff record` folder) for the checks below."""
    warnings: list[InputWarning] = []
    inputs: RunInputs = discover([os.fspath(path)], tensors_report, debug_log)
    return stability_of(explain_run(read_run(inputs, warnings), warnings))


def assert_stable(path: str | os.PathLike, warmup: int = 1, **side) -> None:
    """Fail when any graph compiles after the first ``warmup`` steps; the message explains each one."""
    __tracebackhide__ = True
    check_path(path, **side).assert_stable(warmup)


def assert_max_compilations(path: str | os.PathLike, n: int, **side) -> None:
    """Fail when the run compiled more than ``n`` graphs."""
    __tracebackhide__ = True
    check_path(path, **side).assert_max_compilations(n)
