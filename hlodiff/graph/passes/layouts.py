"""Optionally ignore layouts (``{1,0}``): useful when comparing a module before and after layout assignment.

Off by default, because a changed layout can itself force a recompilation.
"""

from __future__ import annotations

from hlodiff.graph.canonical import CanonicalModule, PassReport


def run(cm: CanonicalModule) -> PassReport | None:
    if not cm.options.layouts:
        return None
    return PassReport("layouts", "layouts", sum(cc.size() for cc in cm.computations.values()))
