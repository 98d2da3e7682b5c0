"""Library entry points that return a result: the CLI and the pytest plugin only choose how to show it.

``compare_refs("run/graphs.hlo.0#0", "run/graphs.hlo.0#5")`` reads, parses, normalizes and diffs two graphs and
returns a :class:`Comparison`; nothing here prints. The cost delta (both graphs' bytes, copies and peak-memory
estimate) is computed only when asked for (``cost=True``): on a 33k-instruction pair it is a fifth of the work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.diff.model import ModuleDiff
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import InputWarning
from hlodiff.graph.canonical import CanonicalModule, Normalization


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


def compare_refs(left_ref: str, right_ref: str, *, options: Normalization = Normalization(), stage: str | None = None,
                 cost: bool = False, warnings: list[InputWarning] | None = None) -> Comparison:
    """Compare the graphs named ``left_ref`` and ``right_ref`` (files or ``PATH#N``). Problems that do not stop
    the comparison (unknown opcodes, graphs from two frameworks) are appended to ``warnings``, and kept on the
    result."""
    from hlodiff._runtime import collector_off_for_command
    from hlodiff.diff import diff_canonical
    from hlodiff.diff.compare import unrelated
    from hlodiff.dumps import resolve_ref
    from hlodiff.graph import canonicalize
    from hlodiff.hlo.opcodes import note_unknown_opcodes

    warnings = [] if warnings is None else warnings
    collector_off_for_command()
    left, right = resolve_ref(left_ref, warnings, stage=stage), resolve_ref(right_ref, warnings, stage=stage)
    left_module, right_module = left.module(), right.module()
    unknown: set[str] = set()
    for module in (left_module, right_module):
        note_unknown_opcodes(module, warnings, unknown)
    if (why := unrelated(left_module, right_module)) is not None:
        warnings.append(InputWarning(why, right.source))
    lcm, rcm = canonicalize(left_module, options), canonicalize(right_module, options)
    diff = diff_canonical(lcm, rcm)
    delta = None
    if cost:
        from hlodiff.cost.run import compare_cost

        delta = compare_cost(left, right, left_module, right_module)
    return Comparison(left, right, lcm, rcm, diff, delta, warnings)
