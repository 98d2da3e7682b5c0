"""Ignore ``metadata={...}`` when matching: source lines move when a user edits an unrelated line.

Metadata is still kept on every instruction, because reports use it to point at the user's code.
"""

from __future__ import annotations

from hlodiff.accel import native
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, PassReport


def run(cm: CanonicalModule) -> PassReport | None:
    if not cm.options.metadata:
        return None
    if native is not None:
        count = sum(map(_with_metadata, cm.computations.values()))
    else:
        count = sum(1 for cc in cm.computations.values() for i in cc.insts.values() if "metadata" in i.attrs)
    return PassReport("metadata", "metadata (kept for source locations)", count) if count else None


def _with_metadata(cc: CanonicalComputation) -> int:
    """Instructions of ``cc`` with metadata: as counted when its maps were built, less the ones passes removed (no
    second walk over every instruction), or counted now."""
    if cc._with_metadata is None:
        return native.count_attribute(cc.insts.values(), "metadata")
    if not cc.removed:
        return cc._with_metadata
    return cc._with_metadata - sum(1 for inst in cc.removed.values() if "metadata" in inst.attrs)
