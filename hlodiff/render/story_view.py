"""Words for the cause graph and the stories, shared by the terminal, the HTML and the pytest plugin's message.

A recompilation is told root first, with what follows from it under "with it:" and a layout-only consequence
folded into its root's line; recompilations that share a root are one story: its values in one sentence, the lead
recompilation in full, the others one line each.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hlodiff.diff.fix_stance import NOTHING_TO_FIX
from hlodiff.explain.dynamo_compiled_only import compilations_only
from hlodiff.explain.stories import Story


SHAPES_ONLY = "same program, other shapes"
"""Said of two graphs whose every difference is a shape (a batch of 2 rows against one of 4): their similarity, a
share of instructions alike in shape and all, read "46% alike" as another program (review 17, F8)."""


def alike_text(similarity: float, equal: bool, kinds: list[str] | None = None) -> str:
    """``97% alike``; never ``100%`` when anything differs (``>99% alike``); ``kinds``: the kinds of the causes
    found, all ``shape``: :data:`SHAPES_ONLY`."""
    if kinds and all(k == "shape" for k in kinds):
        return SHAPES_ONLY
    if not equal and round(similarity * 100) >= 100:
        return ">99% alike"
    return f"{similarity:.0%} alike"


def story_sentence(story: Story, of: int | None = None, counted: int | None = None,
                   compiled: int | None = None) -> str:
    """What the story's values did: ``the size grows by 1 every step: 2, 3, 4, 5 - a new graph each time``; ``of``:
    the run's recompilations as its summary counts them, said beside the story's own when more (``4 of the 5
    recompilations``: review 15, F7, "5 recompilations" above "story: 4 recompilations"); ``counted``: how many of
    the story's own the summary counts (:func:`story_counted`), said when fewer, so that the stories' counts add up
    to the run's (review 22, F6: "2 of the 3" and "5 compilations, 3 of them recompilations" for 3); ``compiled``:
    the run's compilations, said beside the story's when more (review 23, F2: "story: 8 compilations" under "10
    compilations" read as a count that disagrees)."""
    where = f" at {story.location.short()}" if story.location is not None else ""
    n = len(story.recompilations)
    if counted is not None and counted < n:
        plural = "a recompilation" if counted == 1 else "recompilations"
        whole = f"{n} of the run's {compiled} compilations" if compiled is not None and compiled > n \
            else f"{n} compilations"
        return story_sentence(story).replace(f"{n} recompilations", f"{whole}, {counted} of them {plural}", 1)
    if of is not None and of > n:
        return _of_the_run(story_sentence(story), n, of)
    if of is not None and of < n:  # review 20, F2: a cut first step's pieces are first compilations, not counted
        return story_sentence(story).replace(f"{n} recompilations", f"{n} compilations, {of} of them recompilations", 1)
    values = ", ".join(story.values)
    if story.trend is not None:
        how = "grows" if story.trend.by > 0 else "shrinks"
        when = "every step" if story.trend.every_step else "each time"
        return (f"the {story.what}{where} {how} by {abs(story.trend.by)} {when}: {values} - a new graph each time "
                f"({n} recompilations, one root)")
    if story.values and len(set(story.values)) > 1:
        return f"{n} recompilations, one root ({story.kind}{where}): the {story.what} took {values}"
    return f"{n} recompilations, one root ({story.kind}{where})"


def _counted(story: Story, recs: dict, loaded: set[str]) -> bool:
    """Whether the story holds a recompilation the summary counts: one that compiled in this run and is no eager
    op outside jit. A story of eager ops or loaded programs only gets no "story: N recompilations" line (review
    17, F3: "story: 2 recompilations" under "0 recompilations; nothing compiled", for jit_convert_element_type
    loaded from the cache for two shapes)."""
    def eager(r) -> bool:
        return bool(r.causes) and all(c.fix_rule == "eager_op" for c in r.causes)

    return any(ref not in loaded and not eager(recs[ref]) for ref in story.recompilations)


def story_counted(story: Story, recs: dict, loaded: set[str]) -> int:
    """How many of the story's recompilations the run's summary counts (:func:`hlodiff.explain.run_summary.
    run_counts`): compiled in this run, no eager op outside jit, no piece of a first step an early read cut."""
    from hlodiff.explain.families import first_step_graph

    def eager(r) -> bool:
        return bool(r.causes) and all(c.fix_rule == "eager_op" for c in r.causes)

    return sum(1 for ref in story.recompilations
               if ref not in loaded and not eager(recs[ref]) and not first_step_graph(recs[ref].family, ref))


def _of_the_run(sentence: str, n: int, of: int) -> str:
    """``4 recompilations`` in ``sentence`` said as ``4 of the 5 recompilations`` (the run's count)."""
    return sentence.replace(f"{n} recompilations", f"{n} of the {of} recompilations", 1)


def story_json_sentence(doc: dict) -> str:
    """:func:`story_sentence` from a ``stories[]`` entry of the JSON document (for the HTML)."""
    from hlodiff.explain.stories import Trend
    from hlodiff.hlo.model import SourceFrame

    loc = doc.get("location")
    frame = SourceFrame(loc.get("file", ""), loc.get("line"), loc.get("function")) if loc else None
    trend = doc.get("trend")
    return story_sentence(Story(doc.get("family", ""), doc.get("kind", ""), frame,
                                tuple(doc.get("recompilations") or ()), doc.get("lead", ""),
                                tuple(doc.get("values") or ()), doc.get("value_kind") or "",
                                Trend(trend["by"], trend["every_step"]) if trend else None))


def render_graph_causes(console: Console, r, render_causes, notes: dict) -> None:
    """Roots first; what follows from a root is indented under it after ``with it:``; folded causes on one dim line
    under their root."""
    nodes = r.links.nodes if r.links.holds(r.causes) else None
    if nodes is None:
        render_causes(console, r.causes, notes=notes)
        return
    for index, node in enumerate(nodes):
        if not node.is_root:
            continue
        render_causes(console, [node.cause], notes=notes)
        _folded(console, node, "  ")
        _consequences(console, r.links, index, render_causes, notes, depth=1)


def _consequences(console, graph, index, render_causes, notes, depth: int) -> None:
    nodes = graph.nodes
    under = graph.consequences(index)
    if not under:
        return
    pad = "  " + " " * 12 * depth
    console.print(Text(f"{' ' * (12 * depth)}with it:", style="dim"), highlight=False)
    for k in under:
        render_causes(console, [nodes[k].cause], indent=pad, notes=notes, fixes=False)  # the root's fix is theirs
        _folded(console, nodes[k], pad)
        _consequences(console, graph, k, render_causes, notes, depth + 1)


def _folded(console: Console, node, indent: str) -> None:
    for folded in node.folded:
        console.print(Text(f"{indent}{'':<10}with it (layout only): {folded.cause.summary}", style="dim"),
                      highlight=False)


def one_line(r, step: int | None, compilation: int | None = None) -> str:
    """A story's other recompilation: ``#3 (step 3): shape changed on ... f32[3] -> f32[4]``; in a capture of
    compilations only (a JAX dump marks no step), ``#10 (compilation 3 of jit_train_step)`` (review 15, F7)."""
    at = f" (step {step})" if step is not None else ""
    if compilation is not None:
        at = f" (compilation {compilation} of {r.family.label})"
    root = r.causes[0] if r.causes else None
    what = f"{root.kind}: {root.summary}" if root is not None else "no cause"
    return f"#{r.graph.ref.rsplit('#', 1)[-1]}{at}: {what}"


def _compilation_numbers(explanation) -> dict[str, int]:
    """A graph's ref -> its place (from 1) among its family's compilations: what a capture of compilations only
    can say of when it compiled."""
    return {g.ref: i for f in explanation.families for i, g in enumerate(f.compiled, start=1)}


def render_stories(console: Console, explanation, render_recompilation, *, verbose: bool = False) -> None:
    """Each story once: a lone recompilation in full; a shared root as its sentence, the lead in full, the others
    one line each. Recompilations no story holds (a report cut to some graphs) are told in full, in run order."""
    from hlodiff.explain.steps import graph_steps

    recs = {r.graph.ref: r for r in explanation.recompilations}
    stories = [s for s in getattr(explanation, "stories", ()) if all(ref in recs for ref in s.recompilations)]
    told = {ref for s in stories for ref in s.recompilations}
    steps = graph_steps(explanation.graphs, explanation.families) if any(
        len(s.recompilations) > 1 for s in stories) else {}
    from hlodiff.render.story import story_recompilations, told_last

    last = told_last(explanation)
    for r in story_recompilations(explanation):
        if r.graph.ref not in told and r.graph.ref not in last:
            console.print()
            render_recompilation(console, r, verbose=verbose)
    def _cut_tail(story) -> bool:
        # the rest of a step an early read cut, against the step's first part (review 4, F6): two parts of one
        # step, which the headline already tells; a recompilation of a part by another variant of it says more
        root = recs[story.lead].causes[0] if recs[story.lead].causes else None
        return root is not None and root.kind == "partial"

    def _expected(story) -> bool:
        # review 13 F5: an expected warm-up (AdamW's first step, "nothing to fix") is told after what needs acting on
        root = recs[story.lead].causes[0] if recs[story.lead].causes else None
        return root is not None and root.fix_stance in NOTHING_TO_FIX

    cut_last = any(not _cut_tail(s) and not _expected(s) for s in stories)
    # review 11 F1: a torch.compile run read from compilations only: the dump's order is no step count
    only = compilations_only(explanation)
    unsequenced = explanation.dynamo is not None and only
    counted = _compilation_numbers(explanation) if only and not unsequenced else {}
    counts = getattr(explanation, "counts", None)
    total = counts.recompilations if counts is not None else None
    loaded = set(getattr(explanation, "loaded", ()) or ())
    # stories of eager ops after the rest, expected ones after those to act on; a cut step's two parts after the
    # recompilations of a part
    # review 22 F6: the story the headline leads with comes first, as the headline told it (tx1: the early read at
    # :13 led, and its story was printed after a minor constant's)
    lead_ref = explanation.headline.graph.ref if getattr(explanation, "headline", None) is not None else None

    def _not_headline(story) -> bool:
        return lead_ref is not None and any(s is not story and lead_ref in s.recompilations for s in stories) \
            and lead_ref not in story.recompilations

    for story in sorted(stories, key=lambda s: (s.lead in last, _not_headline(s), _expected(s),
                                                cut_last and _cut_tail(s))):
        console.print()
        if len(story.recompilations) > 1 and _counted(story, recs, loaded):
            own = story_counted(story, recs, loaded)
            compiled = counts.compiled if counts is not None else None
            console.print(Text(f"story: {story_sentence(story, total, own, compiled)}", style="bold"),
                          highlight=False)
        render_recompilation(console, recs[story.lead], verbose=verbose)
        others = [ref for ref in story.recompilations if ref != story.lead]
        if others:
            console.print(Text(f"  and {len(others)} more with this root:", style="dim"), highlight=False)
        for ref in others:  # an eager op runs outside any step: its compilations get no step number (review 6 F7)
            step = None if story.lead in last or unsequenced or counted else steps.get(ref)
            console.print(Text(f"    {one_line(recs[ref], step, counted.get(ref))}"), highlight=False)
    for r in story_recompilations(explanation):
        if r.graph.ref not in told and r.graph.ref in last:
            console.print()
            render_recompilation(console, r, verbose=verbose)
