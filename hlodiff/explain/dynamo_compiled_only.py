"""A torch.compile run read from its compilations only (an XLA dump without torch_xla's execution log).

Review 11, F1: the README's by-hand torch.compile capture (``--xla_dump_to`` and ``TORCH_LOGS=recompiles,
graph_breaks``, no ``PT_XLA_DEBUG_LEVEL=2`` log) of two runs that recompiled nothing unexpected (dc_unfreeze,
dc_train_eval: every XLA compilation on steps 0-1, the bridge's warm-up) was told "4 recompilations", exit 1, with
"this graph ran on step 2 ... a Python `if` (torch.where)", "a value is kept on some steps only (a metric, a log)"
and "update the same tensors in place every step". A dump holds one module per compilation and no execution: it
cannot say on which step a graph ran, and the first compiled calls' steps, which the bridge cuts with syncs of its
own while it compiles (its sync of the call's inputs, the forward, AOTAutograd's backward, the eager read of a
tensor the bridge materialises), compile a few variants of the user's step graph that look exactly like
recompilations. What the capture can tell: how many variants a family compiled. A family with no more than the
bridge's warm-up makes (the steady graph plus two per Dynamo compile: :data:`WARMUP_VARIANTS`) is told "cannot
tell from this capture, expected if they all ran in the first steps", with the setting that would tell; more than
that, a Dynamo recompilation that is unexpected, or the bridge's growing input syncs stay the story they were.
"""

from __future__ import annotations

from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.diff.fixes import FixChoice, choose

WARMUP_VARIANTS = 2
"""Variants of one family a Dynamo compile's step can compile beyond the steady graph (the limit is the steady one
plus this many per Dynamo compile): the step cut by the bridge's syncs and the read of a tensor it materialised
(dc_unfreeze: 3 in a family for one Dynamo compile; dc_train_eval: 4 for two, train and eval)."""


def compilations_only(explanation) -> bool:
    """No family was counted from executions: the run's graphs are its compilations only."""
    from hlodiff.explain.family_buckets import counts_from_of

    return bool(explanation.families) and all(counts_from_of(f) == "compilations" for f in explanation.families)


def unsequenced(explanation, found, told: set[str]) -> list[str]:
    """Refs of the recompilations of a torch.compile run read from compilations only that fit the bridge's
    warm-up (none when Dynamo's log holds an unexpected recompilation, a size the bridge compiles per size, or
    the growing input syncs of a lazily drawn input: those are evidence of their own)."""
    if not compilations_only(explanation):
        return []
    if any(not r.expected for r in found.recompiles) or found.random_inputs or found.xla_sizes:
        return []
    # Dynamo's compiles: the first one and each recompilation (a TORCH_LOGS=recompiles log names only those), and
    # each more graph a graph break cuts every call into: the part after it runs eagerly into the step's graph and
    # a value it reads syncs on its own, one more piece the bridge's first calls cut (d23_file_log_break)
    pieces = sum(max(0, b.graphs - 1) for b in found.graph_breaks if not b.raised)
    limit = 1 + WARMUP_VARIANTS * (1 + len(found.recompiles) + pieces)
    out = []
    for r in explanation.recompilations:
        if r.graph.ref in told or not r.causes or r.causes[0].fix_rule in EXPECTED:
            continue
        if len(r.family.compiled) <= limit:
            out.append(r.graph.ref)
    return out


def tell_unsequenced(explanation, found) -> None:
    """Their causes' words: ``dynamo_compilations_only`` (cannot tell, what to add), never a step number."""
    refs = set(found.compilations_only)
    for x in explanation.recompilations:
        if x.graph.ref in refs and x.causes:
            rule = choose(x.causes[0].kind, frozenset({"dynamo", "compilations_only_run", f"is:{x.causes[0].kind}"}))
            for cause in x.causes:
                cause.fix, cause.fix_rule = FixChoice(rule, {}).text, rule.name
