"""What the live story keeps over a long run is bounded by its windows (docs/design.md, the live story): the graph an
early read cut short before each step's graph is kept to be explained beside it only while that graph is in its
family's windows. A run cut by a read every step (``print(loss.item())`` before each sync) for hours held one entry
per step before."""

from types import SimpleNamespace

from hlodiff.explain.candidates import POOL
from hlodiff.explain.live_cuts import HeldCuts
from hlodiff.explain.live_families import RECENT, LiveFamily


def _step(cuts: HeldCuts, family: LiveFamily, n: int, compiled: bool) -> SimpleNamespace:
    """Step ``n``: a graph cut short by a read, then the graph that ends the step (placed as LiveExplainer does)."""
    cut, full = SimpleNamespace(ref=f"cut#{n}"), SimpleNamespace(ref=f"step#{n}")
    cuts.read(cut, True)
    cuts.read(full, False)
    for window in (family.recent, family.compiled) if compiled else (family.recent,):
        gone = family.keep(window, full)
        if gone is not None:
            cuts.forget(gone)
    return full


def test_the_cuts_kept_beside_a_family_s_graphs_stay_within_its_windows():
    cuts, family = HeldCuts(), LiveFamily("k", "sync at t.py:9")
    kept = [_step(cuts, family, n, compiled=n % 50 == 0) for n in range(2000)]
    assert len(cuts.before) <= RECENT + POOL
    # every graph still in a window keeps its cut (what the live line explains beside it), in the windows' order
    assert {r.ref for r in (*family.recent, *family.compiled)} == set(cuts.before)
    assert cuts.before[kept[-1].ref].ref == "cut#1999"
    assert cuts.before["step#1650"].ref == "cut#1650"  # a compilation outlives the recent window
    assert "step#1550" not in cuts.before  # past the last POOL compilations: gone


def test_a_graph_still_in_the_other_window_keeps_its_cut():
    family = LiveFamily("k", "sync at t.py:9")
    first = SimpleNamespace(ref="a")
    family.keep(family.compiled, first)
    family.keep(family.recent, first)
    assert all(family.keep(family.recent, SimpleNamespace(ref=f"hit{n}")) is None for n in range(RECENT))
    assert first not in family.recent and first in family.compiled
