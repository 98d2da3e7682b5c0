"""Which rank compiled something different: the divergence section of a multi-rank explanation.

Each rank's run is explained on its own (:mod:`hlodiff.explain.parallel`), so graphs every rank runs identically
while setting up are first compilations of each rank, never recompilations, and a torch_xla ordinal that shares
its compile cache with ordinal 0 still has its own new graphs counted. Then the ranks' graph sequences are
compared. A graph is known across ranks by its canonical fingerprint (cache keys are per process: XLA numbers
modules per process, torch_xla hashes may cover host paths). Each rank's sequence is aligned with a reference
sequence (the one most ranks share) and, at every position, the graph most ranks ran there is the majority; a rank
that ran another graph, an extra graph, no graph, or stopped early diverges there (:mod:`hlodiff.explain.divergence`
finds them; :mod:`hlodiff.explain.rank_reference` chooses the reference and refuses ranks of two programs). Here
the divergences' causes are linked and given the fixes written for ranks, and the job is told in a summary and
notes.

``step`` is a position in the reference sequence: for torch_xla save-tensors files one entry per execution
(a sync, or a value read early), for XLA dump folders one module per compilation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hlodiff.explain.cause_graph import CauseGraph, CauseNode, Evidence, link
from hlodiff.explain.divergence import Aligner, Divergence, ranks_text
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.parallel import RankResult
from hlodiff.explain.rank_reference import check_one_job, reference_rank, same_sequence_as, two_rank_reference
from hlodiff.graph import Normalization


@dataclass(slots=True)
class JobExplanation:
    """A multi-rank job: every rank explained on its own, how the ranks were told apart, where they diverge."""

    results: list[RankResult]
    reference: int
    same_as: dict[int, int]
    divergence: list[Divergence]
    stopped: dict[int, int]
    summary: str
    notes: list[str] = field(default_factory=list)

    @property
    def ranks(self) -> list[int]:
        return [r.spec.rank for r in self.results]

    def html_rank(self) -> RankResult:
        """The rank worth a page of its own: the first that diverged, else the first that recompiled, else the
        reference."""
        by_rank = {r.spec.rank: r for r in self.results}
        diverged = sorted(r for d in self.divergence for r in d.ranks)
        if diverged:
            return by_rank[diverged[0]]
        recompiled = [r for r in self.results if r.explanation is not None and r.explanation.recompilations]
        return recompiled[0] if recompiled else by_rank[self.reference]

    def rank_json(self, result: RankResult) -> dict:
        graphs = _graphs(result)
        compiled = sum(1 for g in graphs if g.compiled)
        entry = {**result.spec.to_json(), "graphs": len(graphs), "compilations": compiled}
        if result.explanation is not None:
            entry["recompilations"] = len(result.explanation.recompilations)
            entry["summary"] = result.explanation.summary
        entry["same_as"] = self.same_as.get(result.spec.rank)
        entry["stopped_early_at"] = self.stopped.get(result.spec.rank)
        return entry

    def to_json(self) -> dict:
        return {"ranks": [self.rank_json(r) for r in self.results], "reference_rank": self.reference,
                "divergence": [d.to_json() for d in self.divergence], "rank_notes": self.notes}


def _graphs(result: RankResult) -> list[GraphSummary]:
    return result.explanation.graphs if result.explanation is not None else result.graphs


def compare_ranks(results: list[RankResult], options: Normalization = Normalization(),
                  command_status: int | None = None) -> JobExplanation:
    """The divergence section over ranks already summarised (explained or inventoried), in rank order;
    ``command_status``: the recorded command's exit status, when a recording says (a job that died)."""
    sequences = {r.spec.rank: _graphs(r) for r in results}
    keys = {rank: tuple(g.fingerprint for g in graphs) for rank, graphs in sequences.items()}
    notes: list[str] = []
    if len(results) == 1:
        notes.append(f"only one rank found (rank {results[0].spec.rank}, {results[0].spec.identified_by}): "
                     "nothing to compare across ranks")
        return JobExplanation(results, results[0].spec.rank, {}, [], {}, _one_rank_summary(results[0]), notes)
    check_one_job(results, sequences)
    reference = reference_rank(keys)
    same_as = same_sequence_as(keys)
    two = len(results) == 2 and keys[results[0].spec.rank] != keys[results[1].spec.rank]
    why = ""
    if two:
        reference, why = two_rank_reference(sequences, reference)
        notes.append(f"with 2 ranks there is no majority: rank {reference} is taken as the reference")
    aligner = Aligner(sequences, reference, options)
    divergence, stopped = aligner.divergences()
    both = two and _both_recompiled(results, divergence)
    if both:  # review 6 (p07): each rank's last batch short, of another size: no rank is the odd one
        notes.append("both ranks compiled again at the same point, each a graph of its own (their inputs differ: "
                     "see below): neither rank is the odd one, the reference is only what the other is compared with")
    elif why:
        notes.append(why)
    divergence.sort(key=_eager_divergence)  # stable: the user's own programs first (review F13, J14)
    _add_causes_outside_the_graph(divergence, results)
    _mark_no_collective(divergence, results, command_status)
    for d in divergence:
        _link(d, aligner.evidence(d))
        _rank_fixes(d)
    if divergence and all(d.no_collective for d in divergence):
        notes.append("the graphs the ranks ran differently hold no collective (no all-reduce, all-gather, ...) and "
                     "no rank compiled any of them again: no rank waits for the other's extra work; nothing "
                     "recompiled")
    for rank, step in sorted(stopped.items()):
        have = len(sequences[rank])
        notes.append(f"rank {rank} has {have} graph{'s' if have != 1 else ''} where the majority has "
                     f"{len(sequences[reference])}: it stopped after step {step - 1} (crashed or killed early?); "
                     "its missing steps are not compared")
    notes.extend(_guessed_numbers(results, divergence))
    notes.extend(_collective_failure(divergence, command_status))
    return JobExplanation(results, reference, same_as, divergence, stopped,
                          _job_summary(results, sequences, divergence, reference, two, both), notes)


def _both_recompiled(results: list[RankResult], divergence: list[Divergence]) -> bool:
    """Two ranks whose every divergence is at a graph each of them compiled again in its own run (both ranks' last
    batches short, of other sizes: f32[2,8] on one, f32[1,8] on the other): the ranks differ, but neither does
    something the other does not, so the instruction count that picks "the odd one" otherwise says nothing."""
    again = {r.spec.rank: {x.graph.ref for x in r.explanation.recompilations}
             for r in results if r.explanation is not None}
    if len(again) != 2 or not divergence:
        return False
    return all(d.graph is not None and d.majority is not None and d.ranks and d.majority_ranks
               and d.graph.ref in again.get(d.ranks[0], ()) and d.majority.ref in again.get(d.majority_ranks[0], ())
               for d in divergence)


def _eager_divergence(d: Divergence) -> bool:
    """A divergence in a JAX operation run outside jit (``jnp.asarray`` of a shard of another size: ``jit_stage``)
    is told after those of the user's jitted functions: it follows from the same data and is no program of theirs."""
    from hlodiff.explain.families import Family
    from hlodiff.explain.eager_ops import is_eager_op

    graphs = [g for g in (d.graph, d.majority) if g is not None]
    return bool(graphs) and is_eager_op(Family(d.family, d.family, graphs))


_COLLECTIVES = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                          "all-reduce-start", "all-gather-start", "collective-permute-start"})


def _collective_failure(divergence: list[Divergence], status: int | None) -> list[str]:
    """The recorded command failed and the diverging graphs hold collectives: ranks running different programs
    wait for each other in them (review F7: the all-reduce's rendezvous timed out); say so, with what the graphs
    show. Nothing when the command succeeded, its status is unknown, or no collective is in the graphs."""
    if not divergence or status in (None, 0):
        return []
    found: set[str] = set()
    for d in divergence:
        for g in (d.graph, d.majority):
            if g is None:
                continue
            try:
                module = g.record.module()
            except Exception:  # noqa: BLE001 - a graph that cannot be read again adds no evidence here
                continue
            found |= {inst.opcode for _, inst in module.instructions() if inst.opcode in _COLLECTIVES}
    if not found:
        return []
    how = f"was killed by signal {-status}" if status < 0 else f"ended with status {status}"
    return [f"the command {how}, and the graphs the ranks ran differently hold collectives ({', '.join(sorted(found))}): "
            "ranks that run different graphs wait for each other in them (a hang, a rendezvous timeout), so this "
            "divergence is the likely cause: make every rank run the same graph"]


def _holds_collectives(graph: GraphSummary) -> bool | None:
    """Whether the graph holds a collective; None when it cannot be read again (then nothing is claimed)."""
    try:
        module = graph.record.module()
    except Exception:  # noqa: BLE001 - a graph that cannot be read again adds no evidence here
        return None
    return any(inst.opcode in _COLLECTIVES for _, inst in module.instructions())


def _mark_no_collective(divergence: list[Divergence], results: list[RankResult], status: int | None) -> None:
    """Round 8 (spawn_rank_metric_control): rank 0 alone computes a metric inside its step, every step; the two
    ranks run two graphs, each compiled once. That divergence is told but fails nothing when it cannot make a rank
    wait: another graph at the step on both sides ("different", not an extra or missing graph), neither holding a
    collective, neither compiled again by its rank, and the command did not fail. A rank whose diverging graph
    holds a collective (review F7: the all-reduce's rendezvous timed out) keeps its failure."""
    if status not in (None, 0):
        return
    # a graph compiled again, here or at any later execution of it (its fingerprint: a cache hit of a recompiled
    # graph, rank 1's short last batch in the next epoch, is the same divergence again)
    again = {x.graph.fingerprint for r in results if r.explanation is not None for x in r.explanation.recompilations}
    for d in divergence:
        if d.kind != "different" or d.graph is None or d.majority is None:
            continue
        if d.graph.fingerprint in again or d.majority.fingerprint in again:
            continue
        if _holds_collectives(d.graph) is False and _holds_collectives(d.majority) is False:
            d.no_collective = True


_RANK_RULES = ("ranks_",)


def _rank_fixes(d: Divergence) -> None:
    """The fix of a divergence's causes, chosen with what the comparison is: two ranks at one step, not two steps
    (review F7: "kept on some steps only" for a metric computed on the master rank only). Only the rows written
    for ranks replace a fix; the others stay as the differ chose them."""
    from hlodiff.diff.fixes import FixContext, decide
    from hlodiff.hlo.producer import producer_from_name

    graph = d.graph or d.majority
    producer = producer_from_name(graph.name or graph.record.module_name or "") if graph is not None else None
    ranks = ", ".join(str(r) for r in d.ranks)
    for cause in d.causes:
        if cause.kind not in STRUCTURAL or cause.fix_is_final:
            continue
        choice = decide(cause, FixContext(producer=producer, across_ranks=True, no_collective=d.no_collective,
                                          others=tuple(c.kind for c in d.causes if c is not cause)))
        if choice.rule.name.startswith(_RANK_RULES):
            choice.args["ranks"] = f"rank {ranks}" if len(d.ranks) == 1 else f"ranks {ranks}"
            others = d.majority_ranks
            choice.args["others"] = ranks_text(others) if others else "the other ranks"
            choice.args["others_not"] = (f"{ranks_text(others)} {'does' if len(others) == 1 else 'do'} not"
                                         if others else "the other ranks do not")
            cause.fix, cause.fix_rule = choice.text, choice.rule.name


def _guessed_numbers(results: list[RankResult], divergence: list[Divergence]) -> list[str]:
    """Ranks numbered by position (folder names without distinct numbers: per-host folders, or a folder of
    separate runs such as experiment variants), or by the numbers of files that lie in different folders (two
    runs' graphs.hlo.0 and graphs.hlo.1), may not be one job at all; when they differ, say what the numbers
    rest on, so separate runs are not read as a job whose ranks diverged."""
    folders = {os.path.dirname(os.path.abspath(r.spec.paths[0])) for r in results}
    guessed = [r for r in results if r.spec.identified_by.startswith("position")
               or (r.spec.identified_by.startswith("number in the file name") and len(folders) > 1)]
    if not guessed or not divergence:
        return []
    how = guessed[0].spec.identified_by
    where = ("the order of the paths given" if how.startswith("position on") else
             "the sorted order of the subfolders" if how.startswith("position") else
             "numbers in the names of files that lie in different folders")
    names = ", ".join(os.path.basename(os.path.normpath(r.spec.paths[0])) for r in guessed)
    return [f"rank numbers come from {where} ({names}), not from one run's rank numbers: if these are "
            "separate runs rather than one job's ranks, explain each on its own"]


STRUCTURAL = frozenset({"reordered", "shape", "dtype", "layout", "constant", "attribute", "inputs", "outputs", "ops",
                        "partial", "sharding"})
"""Cause kinds read off the two graphs; the others (a JAX log's static argument or weak type, compile options)
come from what the rank itself captured."""


def _link(d: Divergence, evidence: Evidence) -> None:
    """The same one step as for a recompilation, over the causes read off the two graphs: roots first, what
    follows under them. Causes the rank's own captures lent (its JAX log's static argument, against its own previous
    graph, not the majority's) are told after them as they are: they explain the rank's recompilation, not how its
    graph differs from the majority's."""
    graph = link([c for c in d.causes if c.kind in STRUCTURAL], evidence)
    lent = tuple(CauseNode(c) for c in d.causes if c.kind not in STRUCTURAL)
    d.links = CauseGraph(graph.nodes + lent)
    d.causes[:] = d.links.causes


def _add_causes_outside_the_graph(divergence: list[Divergence], results: list[RankResult]) -> None:
    """A diverging graph that was a recompilation of its own rank brings the causes its rank's captures gave
    that the graphs alone cannot show (JAX's cache-miss explanation of that compilation, say)."""
    by_ref = {r.graph.ref: r for res in results if res.explanation is not None
              for r in res.explanation.recompilations}
    for d in divergence:
        own = by_ref.get(d.graph.ref) if d.graph is not None else None
        if own is None:
            continue
        kinds = {c.kind for c in d.causes}
        d.causes.extend(c for c in own.causes if c.kind not in STRUCTURAL and c.kind not in kinds)


STEP_KINDS = ("save_tensors", "executions")
"""Captures whose graphs are the run's executions (a save-tensors file; a dump read with its PT_XLA_DEBUG_LEVEL=2
log, as ``hlodiff record`` writes): a position in them is a step, not a compilation (review 15, F7: tx_ranks'
"compilation 3" was step 3, rank 1's second compilation)."""


def position_word(graph: GraphSummary | None) -> str:
    """What a position is for this kind of capture: a step (an execution) or a compilation (a module)."""
    return "step" if graph is None or graph.record.kind in STEP_KINDS else "compilation"


def positions_text(word: str, steps: list[int]) -> str:
    """``step 3`` for one position, ``3 steps (steps 3, 5, 7)`` for several (review 15, F7: "at 1 compilation
    (compilation 3)" read like a typo)."""
    if len(steps) == 1:
        return f"{word} {steps[0]}"
    shown = ", ".join(str(s) for s in steps[:8]) + (", ..." if len(steps) > 8 else "")
    return f"{len(steps)} {word}s ({word}s {shown})"


def _job_summary(results: list[RankResult], sequences: dict[int, list[GraphSummary]],
                 divergence: list[Divergence], reference: int, two: bool = False, both: bool = False) -> str:
    n = len(results)
    if not divergence:
        counts = sorted({len(g) for g in sequences.values()})
        each = f"{counts[0]} each" if len(counts) == 1 else "same sequence"
        return f"all {n} ranks compiled the same graphs ({each})"
    ranks = sorted({r for d in divergence for r in d.ranks})
    steps = sorted({d.step for d in divergence})
    at = positions_text(position_word(divergence[0].majority or divergence[0].graph), steps)
    if both:  # each rank recompiled there, for its own graph (review 6, p07)
        return (f"{n} ranks: both recompiled at {at}, each for a graph of its own "
                f"(rank {ranks_text(ranks).removeprefix('rank ')} against rank {reference} below); "
                f"reference rank {reference}")
    if two:  # no majority with 2 ranks (review F7)
        return f"{n} ranks: {ranks_text(ranks)} diverged from rank {reference} at {at}; reference rank {reference}"
    return f"{n} ranks: {ranks_text(ranks)} diverged from the majority at {at}; reference rank {reference}"


def _one_rank_summary(result: RankResult) -> str:
    return f"1 rank ({result.spec.identified_by})"
