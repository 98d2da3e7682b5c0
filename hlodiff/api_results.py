"""The typed result each entry point of :mod:`hlodiff.api` returns: what it holds, its ``to_json`` (the body of
the command's ``--json`` document, docs/json.md) and, where the command has one, its ``exit_code``.

:mod:`hlodiff.api` reads and analyses and builds these; the CLI and the pytest plugin only choose how to show
them. They are imported from :mod:`hlodiff.api` as before (its entry points return them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hlodiff.diff.model import ModuleDiff
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import InputWarning, shown
from hlodiff.graph.canonical import CanonicalModule

if TYPE_CHECKING:  # explain/ is imported only when a command needs it
    from hlodiff.dumps.run_folder import RunInputs
    from hlodiff.explain.across_runs import AcrossRuns
    from hlodiff.explain.inventory import GraphSummary
    from hlodiff.explain.ranks import JobExplanation
    from hlodiff.explain.explanation import RunExplanation
    from hlodiff.explain.sequence import Step


@dataclass(slots=True)
class Comparison:
    """Two graphs, their normalized forms, what differs, and (on request) what the difference costs."""

    left: GraphRecord
    right: GraphRecord
    left_canonical: CanonicalModule
    right_canonical: CanonicalModule
    diff: ModuleDiff
    cost: dict | None = None
    warnings: list[InputWarning] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """As ``diff``: 0 equal after normalization, 1 different."""
        return 0 if self.diff.equal and not self.diff.causes else 1

    def to_json(self) -> dict:
        """The body of the ``compare`` document (``cost`` is null when it was not asked for)."""
        return {"left_ref": self.left.ref, "right_ref": self.right.ref, **self.diff.to_json(), "cost": self.cost}


@dataclass(slots=True)
class Explained:
    """A run explained: the inputs found (dumps, live-tensor reports, logs) and the explanation."""

    inputs: "RunInputs"
    explanation: "RunExplanation"
    warnings: list[InputWarning] = field(default_factory=list)
    warmup: int | None = None
    """The first N steps are warm-up (``--warmup``); None: a family that warms up then stays steady is expected."""

    @property
    def unexpected(self) -> list:
        """The recompilations that are not warm-up, setup or JAX eager ops, nor told by Dynamo's reason
        (:func:`hlodiff.explain.dynamo_verdict.unexpected_told`)."""
        from hlodiff.explain.dynamo_verdict import unexpected_told

        return unexpected_told(self.explanation, self.warmup)

    @property
    def follow_dynamo(self) -> int:
        """The XLA recompilations that are the bridge's compile after an unexpected Dynamo recompilation
        (:func:`hlodiff.explain.dynamo_verdict.following_dynamo`)."""
        from hlodiff.explain.dynamo_verdict import following_dynamo

        return following_dynamo(self.explanation, self.warmup)

    @property
    def dynamo_counts(self) -> tuple[int, int] | None:
        """Dynamo's recompilations and how many of them are unexpected, or None
        (:func:`hlodiff.explain.dynamo_verdict.dynamo_counts`)."""
        from hlodiff.explain.dynamo_verdict import dynamo_counts

        return dynamo_counts(self.explanation, self.warmup)

    @property
    def exit_code(self) -> int:
        """1 when something unexpected compiled again or a compiled module could not be read, else 0."""
        from hlodiff.explain.dynamo_verdict import run_exit_status

        return run_exit_status(self.explanation, self.warmup)

    def to_json(self) -> dict:
        """The body of the ``explain`` document: the inputs, then the explanation, then what was unexpected."""
        inputs, explanation = self.inputs, self.explanation
        protos = list(dict.fromkeys(g.record.proto_path for g in explanation.graphs if g.record.proto_path))
        return {"inputs": {"dumps": [shown(p) for p in inputs.paths],
                           "tensors_reports": [shown(p) for p in inputs.tensors_reports],
                           "debug_logs": [shown(p) for p in inputs.debug_logs], "jax_logs": inputs.jax_logs,
                           "dynamo_logs": [shown(p) for p in getattr(inputs, "dynamo_logs", [])],
                           "hlo_protos": [_as_given(p, inputs.paths) for p in protos]},
                **explanation.to_json(), "unexpected": [r.graph.ref for r in self.unexpected]}


def _as_given(path: str, given: list[str]) -> str:
    """A file found beside what the user gave, spelled from it (``run/dump/m.hlo.pb`` for ``run``), so the JSON is
    the same on every machine (review F12: the protos were absolute while the dumps were as given).

    Spelled here, at the edge, not by the record-folder reader: a recording's module and proto paths come from its
    manifest, resolved to absolute paths, and the reader's warnings name them (``module 1 skipped`` at the module
    file's line, a proto that cannot be read); spelling them as given there would change those warnings' paths."""
    import os

    for g in given:
        base = g if os.path.isdir(g) else os.path.dirname(g)
        absolute = os.path.abspath(base or ".")
        if os.path.abspath(path).startswith(absolute + os.sep):
            shown_base = shown(g) if os.path.isdir(g) else os.path.dirname(shown(g))
            return os.path.join(shown_base, os.path.relpath(os.path.abspath(path), absolute))
    return shown(path)


@dataclass(slots=True)
class Inventory:
    """What graphs dumps hold: one summary per graph, or (several ranks' dumps of one job) the job."""

    summaries: "list[GraphSummary]"
    warnings: list[InputWarning] = field(default_factory=list)
    job: "JobExplanation | None" = None

    def to_json(self) -> dict:
        """The body of the one-run ``inspect`` document (a job's is :func:`hlodiff.render.ranks.job_document`)."""
        return {"graphs": [s.to_json() for s in self.summaries]}


@dataclass(slots=True)
class Sequence:
    """``compare DUMP``: each graph against the previous distinct graph of its family, and (on request) what each
    change costs."""

    graphs: int
    steps: "list[Step]"
    costs: list[dict | None]
    warnings: list[InputWarning] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when no graph differs from the previous one of its family, else 1."""
        return 0 if not self.steps else 1

    def to_json(self) -> dict:
        """The body of the ``compare-sequence`` document."""
        return {"graphs": self.graphs,
                "comparisons": [{"left_ref": s.left.ref, "right_ref": s.right.ref, **s.diff.to_json(), "cost": cost}
                                for s, cost in zip(self.steps, self.costs)]}


@dataclass(slots=True)
class Fingerprint:
    """One graph's canonical form: its fingerprint is equal exactly when the normalized graphs are."""

    record: GraphRecord
    canonical: CanonicalModule

    def to_json(self) -> dict:
        cm = self.canonical
        from hlodiff.diff.hidden import hidden_count

        return {"ref": self.record.ref, "name": cm.module.name, "fingerprint": cm.fingerprint,
                "hidden_constants": hidden_count(cm.module),
                "ignored": [{"pass": p.name, "summary": p.summary} for p in cm.reports]}


@dataclass(slots=True)
class RunsCompared:
    """``compare-runs``: each compilation of run B against run A across a persistent cache
    (:mod:`hlodiff.explain.across_runs`)."""

    result: "AcrossRuns"
    warnings: list[InputWarning] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when run B compiled something run A had compiled, else 0."""
        return self.result.exit_code

    def to_json(self) -> dict:
        """The body of the ``compare-runs`` document (docs/json.md)."""
        from hlodiff.render.across_runs import document_body

        return document_body(self.result)
