"""Constants whose values the dump hides: equality is unknown there, never "equal".

XLA's HLO text prints a constant of more than a few elements as ``constant({...})``. torch_xla hashes a graph
with its constants' data, so two graphs that read alike in the text still compile twice when such a constant's
values differ (``torch.arange(start, start + 64)`` with ``start`` moving). Where the HLO proto is beside the text,
the values are read from it (:func:`hlodiff.dumps.hlo_proto.fill_elided`) and this module has nothing to do; where
it is not, two graphs equal in every printed part get one cause saying what is hidden, where the constants are
made and how to capture them, instead of "equal after normalization" (or a cache-key story about identical HLO).
"""

from __future__ import annotations

from hlodiff.diff.classify import ComputationDiff, ref
from hlodiff.diff.model import Cause, Change
from hlodiff.diff.summaries import change_stacks, key_sort, locations
from hlodiff.hlo.literal import elided

CAPTURE = ("XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_as_proto' (or `hlodiff record`), "
           "then run hlodiff on DIR")
"""The capture that keeps the values: the HLO protos hold every constant's data."""


def hidden_changes(cds: list[ComputationDiff]) -> list[Change]:
    """Matched constants whose values a side elides: the pairs the text cannot say are equal (or different: a
    side whose values came from a proto against one whose text hides them)."""
    found = []
    for cd in cds:
        m = cd.matching
        for lname, rname in m.l2r.items():
            li, ri = m.left.insts[lname], m.right.insts[rname]
            if li.opcode == ri.opcode == "constant" and (elided(li.literal) or elided(ri.literal)):
                found.append(Change(ref(cd.lcm, m.left, li), ref(cd.rcm, m.right, ri), ("literal",),
                                    {"literal": (li.literal, ri.literal)}))
    found.sort(key=lambda c: key_sort((c.left.name, c.right.name)))
    return found


def hidden_values_cause(changes: list[Change]) -> Cause:
    """The cause of two graphs equal but for values the dump hides: a constant cause (what torch_xla recompiles
    on), its summary and fix saying that equality is unknown and how to see the values."""
    n = len(changes)
    shapes = sorted({c.left.shape.split("{", 1)[0] for c in changes})
    user, library = locations(change_stacks(changes))
    return Cause(
        "constant",
        f"equal in every printed part, but {n} constant{'s' if n != 1 else ''} ({', '.join(shapes[:3])}) "
        f"print{'s' if n == 1 else ''} as {{...}}: the dump hides the values, so whether the graphs are equal is "
        "unknown; a recompilation between them most likely comes from those values (a baked array: arange, a "
        "table, a mask)",
        locations=user, library_locations=library,
        instructions=[(c.left.name, c.right.name) for c in changes], origins=changes,
        fix=("see the values before changing code: capture with " + CAPTURE + "; if they differ, build the array "
             "from a device tensor (or pass it in) instead of baking Python values into the graph"),
        fix_is_final=True,
    )


def hidden_count(module) -> int:
    """Constants of a module whose values its text elides (for ``fingerprint``: its hash cannot cover them)."""
    return sum(1 for _, inst in module.instructions() if inst.opcode == "constant" and elided(inst.literal))
