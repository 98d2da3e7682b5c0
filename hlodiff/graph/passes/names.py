"""Erase instruction names and numbering: ``%add.13249`` and ``%add.13301`` are the same instruction.

Fingerprints never read names while this pass is on; with it off, every name becomes part of what is compared.
"""

from __future__ import annotations

from hlodiff.graph.canonical import CanonicalModule, PassReport


def run(cm: CanonicalModule) -> PassReport | None:
    if not cm.options.names:
        return None
    count = sum(cc.size() for cc in cm.computations.values())
    return PassReport("names", "instruction names and numbering", count)
