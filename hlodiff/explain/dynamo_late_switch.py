"""A ``warm-up only`` family of a torch.compile run whose last change is no warm-up: the pattern says ``switched``.

The patterns are named from the graphs alone, where A,B,C,C,C (two graphs, then one for good) is a warm-up. Under
torch.compile the first compiled call's step is cut by the bridge's syncs (A), the next step is the first plain one
(B), and the step graph is settled from there: a change after a plain step (C, at step 2 of d27_tie_late: a weight
tied after two steps) is a change of the program made later, a switch, as A,B,B,C,C is (``dyn_freeze_backbone``).
Which changes are the warm-up is :func:`hlodiff.explain.dynamo_xla.first_call_syncs`' fact; this module only renames
the pattern of a family whose change it refused, so the change may head (a ``warm-up only`` family never does).
"""

from __future__ import annotations

from dataclasses import replace

from hlodiff.explain.pattern_words import pattern_text


def late_switches(explanation, first_calls: list[str]) -> None:
    """Rename to ``switched`` each ``warm-up only`` family with a recompilation past its second graph that is not
    the first call's warm-up (``first_calls``), and not told as another row's expected change."""
    from hlodiff.diff.fix_rules import EXPECTED

    facts = getattr(explanation, "pattern_facts", None) or []
    if len(facts) != len(explanation.families):
        return
    warm = set(first_calls)
    for i, (family, p) in enumerate(zip(explanation.families, facts)):
        if p.name != "warm-up only" or p.at < 2:
            continue
        late = [r for r in explanation.recompilations if r.family is family and r.graph.ref not in warm
                and r.causes and r.causes[0].fix_rule not in EXPECTED]
        if not late:
            continue
        at = next(k for k, g in enumerate(family.members) if g.ref == late[0].graph.ref)
        ref = "#" + family.members[at].ref.rsplit("#", 1)[1] if "#" in family.members[at].ref else ""
        facts[i] = replace(p, name="switched", at=at, at_ref=ref)
        explanation.patterns[i] = pattern_text(facts[i])
