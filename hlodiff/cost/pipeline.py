"""The pipeline story of a run: per training step, the bytes held across graph boundaries by role, and how that
grows from one run to another (``hlodiff cost RUN_A RUN_B``: the same program with 1, 2, 4 microbatches).

A step ends with an optimizer graph (the phase :mod:`hlodiff.cost.roles` gives each graph from its report); a run
without one is one step. A tensor that crosses into several graphs (a parameter read by every forward and
backward of the next step) is held once: ``bytes`` counts each tensor once, in the step of the first graph that
reads it, and ``crossing_bytes`` every edge, as the boundaries list them. Only boundaries are counted; a step
whose graphs were not all reported (``reported`` < ``graphs``) is a lower bound and says so (``complete``).
"""

from __future__ import annotations

from hlodiff.cost.crossings import Boundary, Pipeline, PipelineRun, PipelineStep, roles_tally
from hlodiff.cost.figures import Tally
from hlodiff.cost.model import GraphCost
from hlodiff.cost.roles import BACKWARD, FORWARD, OPTIMIZER


def pipeline(graphs: list[GraphCost], boundaries: list[Boundary], exact: bool = True) -> Pipeline:
    """The pipeline story of costed ``graphs`` whose phases and ``boundaries`` are known (``exact``: as
    :func:`single_graph_beside`)."""
    runs = pipeline_runs(graphs, boundaries)
    return Pipeline(runs, growth(runs), single_graph_beside(runs, graphs, exact))


def pipeline_runs(graphs: list[GraphCost], boundaries: list[Boundary]) -> list[PipelineRun]:
    """One :class:`PipelineRun` per dump that has graph phases (i.e. reports were read); [] when none has."""
    by_source: dict[str, list[GraphCost]] = {}
    for g in graphs:
        by_source.setdefault(g.ref.rsplit("#", 1)[0], []).append(g)
    into: dict[str, list[Boundary]] = {}
    for b in boundaries:
        into.setdefault(b.target, []).append(b)
    out = []
    for source, members in by_source.items():
        if all(g.phase is None for g in members):
            continue
        steps: list[PipelineStep] = []
        current: PipelineStep | None = None
        seen: set[int] = set()  # tensor ids already held (counted once, in the first step that reads them)
        for g in members:
            if current is None:
                current = PipelineStep(len(steps), [], {}, 0)
                steps.append(current)
            current.graphs.append(g.ref)
            if g.phase is not None:
                current.phases[g.phase] = current.phases.get(g.phase, 0) + 1
            current.reported += g.reported
            for b in into.get(g.ref, ()):
                current.crossing_bytes += b.bytes
                fresh = [t for t in b.tensors if t.id not in seen]
                seen.update(t.id for t in fresh)
                current.tensors += len(fresh)
                current.bytes += sum(t.bytes for t in fresh)
                for role, tally in roles_tally(fresh).items():
                    old = current.roles.get(role, Tally(0, 0))
                    current.roles[role] = Tally(old.count + tally.count, old.bytes + tally.bytes)
            # a graph with no report before it (the run had repeated) has its program's phase (the boundaries'
            # inference): its optimizer graph still ends a step, so later steps are not lumped into one
            if g.phase == OPTIMIZER:
                current = None
        out.append(PipelineRun(source, steps))
    return out


def split_runs(runs: list[PipelineRun]) -> list[PipelineRun]:
    """The runs whose last complete step is several graphs (forward, backward, optimizer synced apart)."""
    return [r for r in runs if (s := r.last_complete()) is not None and len(s.graphs) > 1]


def single_graph_runs(runs: list[PipelineRun]) -> list[PipelineRun]:
    """The runs whose every complete step is one graph: a program's single-graph alternative."""
    return [r for r in runs if r.last_complete() is not None and all(len(s.graphs) == 1 for s in r.steps if s.complete)]


def growth(runs: list[PipelineRun]) -> list[dict]:
    """Each later run's last complete step beside the first run's: forward graphs per step (the microbatches) and
    bytes by role. Empty with fewer than two runs that have a complete step. When split runs are given, runs of
    one graph per step are not among them (they are the single-graph alternative: :func:`single_graph_beside`)."""
    if split_runs(runs):
        runs = split_runs(runs)
    bases = [(r, r.last_complete()) for r in runs]
    bases = [(r, s) for r, s in bases if s is not None]
    if len(bases) < 2:
        return []
    (first, a), out = bases[0], []
    for run, b in bases[1:]:
        roles = sorted(set(a.roles) | set(b.roles))
        out.append({"from": first.source, "to": run.source, "from_step": a.step, "to_step": b.step,
                    "forward_graphs": [a.phases.get(FORWARD, 0), b.phases.get(FORWARD, 0)],
                    "bytes": [a.bytes, b.bytes],
                    "ratio": round(b.bytes / a.bytes, 3) if a.bytes else None,
                    "roles": {role: [a.roles.get(role, Tally(0, 0)).bytes, b.roles.get(role, Tally(0, 0)).bytes]
                              for role in roles}})
    return out


def single_graph_beside(runs: list[PipelineRun], graphs: list[GraphCost], exact: bool = True) -> list[dict]:
    """A split run's bytes held across boundaries beside its single-graph alternative's peak, when both are at
    hand: among the runs given together (``hlodiff cost SPLIT SINGLE``), each run whose last complete step is
    several graphs, set beside each run whose every complete step is one graph, by their last complete steps.
    That the two runs are one program is the user's word (hlodiff cannot tell two programs apart by their
    graphs); what each figure is and where it comes from is stated. Empty when either kind is missing.
    ``exact`` False (some report printed by hand): ``held_bytes`` names what the reports identify, a lower bound
    (``held_exact``)."""
    by_ref = {g.ref: g for g in graphs}
    out = []
    for split in split_runs(runs):
        step = split.last_complete()
        peaks = [by_ref[ref].peak_bytes for ref in step.graphs if ref in by_ref]
        largest = max(step.graphs, key=lambda ref: by_ref[ref].peak_bytes if ref in by_ref else -1)
        for single in single_graph_runs(runs):
            other = single.last_complete()
            g = by_ref.get(other.graphs[0])
            if g is None:
                continue
            out.append({"split": split.source, "split_step": step.step, "split_graphs": len(step.graphs),
                        "held_bytes": step.bytes, "held_tensors": step.tensors, "held_exact": exact,
                        "roles": {role: t.bytes for role, t in step.roles.items()},
                        "split_peak_bytes": max(peaks) if len(peaks) == len(step.graphs) else None,
                        "split_peak_graph": largest if len(peaks) == len(step.graphs) else None,
                        "split_peak_source": by_ref[largest].peak_source if largest in by_ref else None,
                        "split_peak_rounding_bytes": by_ref[largest].peak_rounding_bytes if largest in by_ref else None,
                        "single": single.source, "single_step": other.step, "single_graph": g.ref,
                        "single_peak_bytes": g.peak_bytes, "single_peak_source": g.peak_source,
                        "single_peak_rounding_bytes": g.peak_rounding_bytes})
    return out
