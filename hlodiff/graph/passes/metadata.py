"""Ignore ``metadata={...}`` when matching: source lines move when a user edits an unrelated line.

Metadata is still kept on every instruction, because reports use it to point at the user's code.
"""

from __future__ import annotations

from hlodiff.accel import native
from hlodiff.graph.canonical import CanonicalModule, PassReport


def run(cm: CanonicalModule) -> PassReport | None:
    if not cm.options.metadata:
        return None
    if native is not None:
        count = sum(native.count_attribute(cc.insts.values(), "metadata") for cc in cm.computations.values())
    else:
        count = sum(1 for cc in cm.computations.values() for i in cc.insts.values() if "metadata" in i.attrs)
    return PassReport("metadata", "metadata (kept for source locations)", count) if count else None
