"""A value read inside the step: torch_xla executes what the read needs as a graph of its own, every step.

``loss.item()`` (``.cpu()``, ``print(t)``) between the backward and ``opt.step()`` runs the pending computation the
value needs at once (pytorch/xla#1777: "calling loss.item() at every step ... will execute the forward"); the other
pending tensors (the gradients) stay pending, so the step's own graph computes that work again. Evidence, from the
run's executions alone: a graph asked for by a read (no torch_xla sync function on its stack,
:func:`hlodiff.cost.headline.sync_call`) followed by a graph the step's sync ran, the pair recurring; and whether the
second graph computes the first one's work again: every heavy operation of the read's graph (:data:`HEAVY_OPCODES`,
by opcode and result shape, in any computation) is among the second graph's. Fusion decisions differ from graph to
graph, the matrix products and convolutions they fuse around do not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from hlodiff.diff.condition_read import condition_shapes
from hlodiff.hlo.model import Module, SourceFrame, runs_after

HEAVY_OPCODES = frozenset(("dot", "convolution"))
"""Operations whose presence in both graphs says the same work is done twice (a forward's matmuls)."""


def heavy_ops(module: Module) -> Counter:
    """(opcode, result shape) of every heavy operation of the module, fused or not."""
    return Counter((inst.opcode, str(inst.shape.without_layout())) for comp in module.computations
                   for inst in comp.instructions if inst.opcode in HEAVY_OPCODES)


@dataclass(frozen=True, slots=True)
class ReadInStep:
    """``read`` (a ref) was executed for a value read at ``location``, then ``then`` by the step's sync; ``times``:
    how many steps ran the read program before a sync (whichever graph the sync ran: review 23 F9); ``recomputed``: ``then`` computes the read graph's heavy work again."""

    read: str
    then: str
    location: SourceFrame | None
    times: int
    recomputed: bool
    sync_at: SourceFrame | None = None
    mask: bool = False
    """The read graph returns a boolean mask (a non-scalar ``pred``): a boolean-mask index (``x[x > m]``,
    nonzero, masked_select) ran it to learn how many elements it keeps. Nothing the user reads can move after the
    sync; the size is what must stop depending on the data (review 8, F5)."""
    followed_by: int = 1
    """How many different programs ran after this read program and up to the sync: two or more, the value read
    decided what was traced next (an ``if t.item() > x:``, review 10 F3), so reading it later removes nothing."""
    condition: bool = False
    """The read graph hands back one-element booleans only: a condition that decides what the step does (``if not
    torch.isfinite(loss).item():``, review 13 F1), needed before the step runs, so it cannot be read later
    (:mod:`hlodiff.diff.condition_read`)."""
    library_read: str = ""
    """The read was made inside a library function (:attr:`hlodiff.cost.model.GraphCost.library_read`): its row's
    fix, explain-recompile's, is the one the user can make (review 20, F3)."""
    reads: int = 1
    """How many values each of those steps read early, one graph each (the graphs run back to back before the
    sync): clip_grad_norm_'s isnan and isinf checks are two (review 20, F3: "7 times" for 14 early graphs)."""
    reads_at_one_line: bool = True
    """Every one of those reads was made at ``location`` (else: the last one was)."""


def read_follows_sync(read_stack, sync_stack) -> bool:
    """Whether the read comes after the sync in the code that runs both (:func:`hlodiff.hlo.model.runs_after`): a read
    below the step's sync reads what the step computed (the metric of the step just run), and the next step's sync
    follows it only because the loop goes round."""
    return runs_after(read_stack, sync_stack)


def _step_sync(graphs, read: int, then: int):
    """The sync graph to place the read against: the one after it, or, when that one's stack is unknown, the last
    sync with a stack before the read in the same dump. A sync hlodiff cannot place (Dynamo's compiled call
    materialising its inputs, a torch.zeros before it) tells nothing of where the read stands; the step's own sync
    above the read does (review 23 F3, d2_beams: `torch_xla.sync()` at :38, `s.max().item()` at :39 was told to move
    the read after the sync it already followed)."""
    if graphs[then].stack:
        return graphs[then]
    source = graphs[read].ref.rsplit("#", 1)[0]
    for k in range(read - 1, -1, -1):
        g = graphs[k]
        if g.ref.rsplit("#", 1)[0] != source:
            break
        if g.sync_call in ("sync", "save") and g.stack:
            return g
    return graphs[then]


def _reads_before(graphs, i: int) -> int:
    """How many read graphs of one dump run back to back up to and including ``graphs[i]``."""
    n, source = 0, graphs[i].ref.rsplit("#", 1)[0]
    while i - n >= 0 and graphs[i - n].sync_call == "read" and graphs[i - n].ref.rsplit("#", 1)[0] == source:
        n += 1
    return n


def _first_step_warm_up(pairs: dict[tuple[str, str], list[tuple[int, int]]]) -> tuple[str, str] | None:
    """The run's first (read, sync) pair when it never comes back: the first step's graph, which an optimizer
    creating its state makes differ (SGD momentum), follows the read once and decides nothing (crossings round 10:
    x10c_ohem_host_argsort was told "2 different graphs followed the read"). A pair seen once later in the run (a
    branch taken at step 3) still counts."""
    if not pairs:
        return None
    first = min(pairs, key=lambda k: pairs[k][0][0])
    return first if len(pairs[first]) == 1 else None


def reads_in_step(graphs) -> list[ReadInStep]:
    """Each recurring (read graph, sync graph) pair of programs, most frequent first; pairs seen once are left out
    (a read at the end of an epoch costs once), and so are reads below the step's sync (:func:`read_follows_sync`)
    whose graph the sync's does not compute again (a metric of the logits the step computed: the read costs a small
    graph, nothing is done twice). A read below a sync whose work the next graph repeats is kept: with the sync at
    the top of the loop, the read at the bottom runs the step's work early."""
    pairs: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for i in range(len(graphs) - 1):
        a, b = graphs[i], graphs[i + 1]
        if a.ref.rsplit("#", 1)[0] != b.ref.rsplit("#", 1)[0]:
            continue
        if a.sync_call == "read" and b.sync_call in ("sync", "save"):
            pairs.setdefault((a.name, b.name), []).append((i, i + 1))
    after: dict[str, set[str]] = {}
    for key in pairs:
        if key != _first_step_warm_up(pairs):
            after.setdefault(key[0], set()).add(key[1])
    # review 23 F9: the steps the read ran in, whatever graph the sync ran after it (t3: a first step's graph of its
    # own made "5 times" of 6 reads; t2: a step graph new every step made "4 times" of 5 steps)
    steps: Counter = Counter()
    for (read, _), seen in pairs.items():
        steps[read] += len(seen)
    out = []
    for seen in pairs.values():
        if len(seen) < 2:
            continue
        i, j = seen[0]
        a, b = graphs[i], graphs[j]
        mine, theirs = a.heavy_ops or Counter(), b.heavy_ops or Counter()
        recomputed = bool(mine) and all(theirs.get(k, 0) >= n for k, n in mine.items())
        if not recomputed and read_follows_sync(a.stack, _step_sync(graphs, i, j).stack):
            continue  # the read follows the step's sync and redoes none of its work: a read after the step
        mask = any(t.startswith("pred[") and not t.startswith("pred[]") for t in a.output_shapes)
        chain = [_reads_before(graphs, k) for k, _ in seen]
        earlier = [graphs[k - back] for (k, _), n in zip(seen, chain) for back in range(n)]
        library = {g.library_read for g in earlier}
        one_line = len({(g.trigger.file, g.trigger.line) if g.trigger is not None else None for g in earlier}) == 1
        out.append(ReadInStep(a.ref, b.ref, a.trigger, steps[a.name], recomputed, b.trigger, mask,
                              len(after.get(a.name, ())), condition_shapes(a.output_shapes),
                              library.pop() if len(library) == 1 else "", min(chain), one_line))
    out.sort(key=lambda r: -r.times)
    return out
