"""``compare DUMP``'s fixes from the run's own explanation, so the two commands never disagree (review F7).

The differ alone gives each cause a fix from two graphs; several rows of the fix table then guess what the run
would show ("this graph ran on some steps: a value kept on some steps only"). ``explain-recompile`` knows the run:
an early read that split every step, an optimizer's warm-up, JAX's eager ops. Here each compared pair takes the fix
``explain-recompile`` gave the same recompilation's cause of the same kind; a cause it has no such answer for keeps
only a fix that rests on the two graphs, never one of the rows below that claims what the run did.
"""

from __future__ import annotations

from hlodiff.diff.fix_stance import FixStance

RUN_GUESSES = frozenset({"outputs_some_steps", "ops_branch", "traced_some_steps", "inputs_seen", "ops_branch_jax"})
"""Rows whose words claim how the run went (which steps ran which graph, a Python `if`) from two graphs alone."""


def adopt_run_fixes(steps, recompilations) -> None:
    """Set each step's causes' ``fix``/``fix_rule`` from ``recompilations`` (explain's, same dump), by the
    recompiled graph's ref and the cause's kind; drop the run-guessing fixes it has no answer for."""
    by_right = {r.graph.ref: r for r in recompilations}
    for step in steps:
        r = by_right.get(step.right.ref)
        for cause in step.diff.causes:
            known = next((c for c in r.causes if c.kind == cause.kind and c.fix), None) if r is not None else None
            if known is not None and known.fix_stance is FixStance.FOLLOWS and r.causes and r.causes[0].fix \
                    and r.causes[0].kind not in {c.kind for c in step.diff.causes}:
                # the root it follows from is not among the pair's causes (an early read's cut is a fact of the
                # run, not of the two graphs): its fix is the one to follow
                cause.take_fix(r.causes[0])
            elif known is not None:
                cause.take_fix(known)
            elif cause.fix_rule in RUN_GUESSES:
                cause.fix, cause.fix_rule = None, None
        if r is not None:
            _follow_explain_order(step.diff.causes, r)


def adopt_pair_fixes(diff, left, right, recompilations) -> None:
    """``compare PATH#I PATH#J`` of two graphs of one run: when ``explain-recompile`` compared the same pair (J's
    recompilation, its closest earlier graph I), the pair's causes take its fixes as ``compare DUMP``'s steps do
    (review 21, F2: on LoRA adapters added mid-run, ``compare #0 #3`` told "a value synced on some steps only"
    and "keep sizes fixed" at other lines where explain told parameters added at the surgery line). Another pair
    keeps the differ's fixes and lines."""
    r = next((r for r in recompilations if r.graph.ref == right.ref), None)
    if r is None or r.closest is None or r.closest.ref != left.ref:
        return
    adopt_run_fixes([_Pair(right, diff)], [r])
    for cause in diff.causes:  # and its lines: the run's evidence (live tensors, the source) places them better
        known = next((c for c in r.causes if c.kind == cause.kind and c.locations), None)
        if known is not None:
            cause.locations = list(known.locations)


class _Pair:
    """Two graphs compared, as :func:`adopt_run_fixes` reads a step: the right graph's ref and the diff."""

    def __init__(self, right, diff) -> None:
        self.right, self.diff = right, diff


def _follow_explain_order(causes: list, r) -> None:
    """The pair's causes in the order of explain's cause graph, roots first; a cause explain tells under a root
    that is also among the pair's says so instead of a fix of its own (review 4, F1: on a growing
    `torch.stack(history)`, the mean's divisor and the new input led with 'index with a device tensor' and
    'h = h.detach()' before the running value). Only kinds explain's graph shows once each are reordered."""
    nodes = r.links.nodes
    kinds = [n.cause.kind for n in nodes]
    if not nodes or len(set(kinds)) != len(kinds):
        return
    place = {k: i for i, k in enumerate(kinds)}
    present = {c.kind for c in causes}
    for cause in causes:
        node = nodes[place[cause.kind]] if cause.kind in place else None
        if node is None or not node.follows:
            continue
        root = nodes[node.follows[0].root].cause.kind
        if root in present and root != cause.kind:
            cause.write_fix(f"follows from the {root} change above", FixStance.FOLLOWS)
    causes.sort(key=lambda c: place.get(c.kind, len(place)))
