"""Families of torch_xla's Dynamo bridge that ran only in the steps Dynamo compiled in.

While Dynamo compiles a call, the bridge syncs the call's pending inputs and runs the new FX graphs once to compile
them ("torch_xla.sync when dynamo processing input graphs"); on the calls between, those graphs never run. A family
of them shows only at Dynamo's compiles, each time a new graph: its letters (A,B,C,D,E,F) read as "a new graph every
time" though the program ran 9 steps on 3 sizes (new-user review 19, F4: "unbounded ... 6 compilations" under a
headline of 3 Dynamo compiles), and a bucket plan read from its members sees each size once, in growing order ("a
new larger one every time: preallocate the largest"), beside the step graph's plan for the same sizes. Such a family
is told as following Dynamo's compiles, with no plan of its own: one cause (Dynamo's), one plan (the step's).

The fact is read from the run's order: a step ends at each graph outside the bridge's families (the user's sync),
and Dynamo compiled in a step when the bridge compiled an FX graph in it (``DynamoFindings.fx_compilations``).
"""

from __future__ import annotations

from hlodiff.explain.pattern_words import sequence_text

WORDED = ("unbounded", "recurring", "compilations")
"""Pattern names whose words, for such a family, claim what its members cannot show: how often the program ran."""


def compile_time_families(explanation) -> set[str]:
    """Keys of the bridge's families every compilation of which is in a step Dynamo compiled in, in a run with steps
    Dynamo did not compile in (executions seen, hits included)."""
    found = getattr(explanation, "dynamo", None)
    if found is None or not found.recompiles or not found.fx_compilations:
        return set()
    compiled_by_bridge = set(found.bridge_compilations)
    bridge = {f.key for f in explanation.families if f.compiled and all(g.ref in compiled_by_bridge
                                                                        for g in f.compiled)}
    family_of = {g.ref: f.key for f in explanation.families for g in f.members}
    fx = set(found.fx_compilations)
    step, step_of, compiling = 0, {}, set()
    for g in explanation.graphs:
        step_of[g.ref] = step
        if g.ref in fx:
            compiling.add(step)
        if family_of.get(g.ref) not in bridge:
            step += 1
    if step <= len(compiling) or not all(g.record.hits_seen for g in explanation.graphs):
        return set()  # Dynamo compiled at every step (or the hits are not seen): the bridge's letters are the run's
    out = set()
    for f in explanation.families:
        if f.key in bridge and len(f.compiled) >= 2 and all(step_of.get(g.ref) in compiling for g in f.compiled):
            out.add(f.key)
    return out


def compile_time_patterns(explanation, keys: set[str]) -> None:
    """The pattern line of each such family says what it is (its facts, for ``--json``'s name, stay)."""
    facts = getattr(explanation, "pattern_facts", None) or []
    if not keys or len(facts) != len(explanation.families):
        return
    found = explanation.dynamo
    n = len(found.recompiles)
    for i, (family, p) in enumerate(zip(explanation.families, facts)):
        if family.key not in keys or p.name not in WORDED:
            continue
        if len(family.compiled) < len(family.members):  # reused between Dynamo's compiles: a set per size
            explanation.patterns[i] = (
                f"recurring: {p.family} runs {len(family.compiled)} graphs, compiled only in the steps Dynamo "
                f"compiled in and reused on the calls between ({sequence_text(p.letters)}): they follow from "
                f"Dynamo's {n} recompilation{'s' if n != 1 else ''} above")
        else:
            explanation.patterns[i] = (
                f"with Dynamo's compiles: {p.family} ran only in the steps Dynamo compiled in, a new graph each time "
                f"({sequence_text(p.letters)}): {len(family.members)} graphs that follow from Dynamo's "
                f"{n} recompilation{'s' if n != 1 else ''} above, not one per step")
