"""The run report's recompilations grouped by story: a root shared by several recompilations is told once (its
sentence, the lead recompilation in full), the others one line each, each line keeping its anchor so the timeline's
links still land."""

from __future__ import annotations

from hlodiff.diff.fix_stance import NOTHING_TO_FIX, stance_of_rule
from hlodiff.render.html.page import esc
from hlodiff.render.html.recompile_view import recompilation_anchor, recompilation_section
from hlodiff.render.story_view import story_json_sentence


def recompilation_sections(doc: dict, pairs: dict, sources, graphs: dict,
                           last_families: set[str] = frozenset()) -> list[str]:
    """Each story once, as the terminal tells it; recompilations of ``last_families`` (JAX's eager operations)
    after the rest."""
    recs = {r["graph"]: r for r in doc.get("recompilations") or []}
    stories = [s for s in doc.get("stories") or [] if all(ref in recs for ref in s.get("recompilations") or [])]
    told = {ref for s in stories for ref in s["recompilations"]}
    last = {ref for ref, rec in recs.items() if rec.get("family") in last_families}
    out = []
    for ref, rec in recs.items():
        if ref not in told and ref not in last:
            out.append(recompilation_section(rec, pairs.get(ref), sources, graphs.get(ref)))
    def lead(story) -> str:
        return story.get("lead") or story["recompilations"][0]

    # review 13 F5: an expected warm-up ("nothing to fix") after the stories to act on, as the terminal tells them
    for story in sorted(stories, key=lambda s: (lead(s) in last, _expected(recs[lead(s)]))):
        lead = story.get("lead") or story["recompilations"][0]
        if len(story["recompilations"]) > 1:
            out.append(f"<p class='story'><b>story:</b> {esc(story_json_sentence(story))}</p>")
        out.append(recompilation_section(recs[lead], pairs.get(lead), sources, graphs.get(lead)))
        others = [ref for ref in story["recompilations"] if ref != lead]
        if others:
            items = "".join(_one_line(recs[ref], graphs.get(ref)) for ref in others)
            out.append(f"<section class='recompile story-rest'><p class='dim'>and {len(others)} more with this "
                       f"root:</p><ul>{items}</ul></section>")
    for ref, rec in recs.items():
        if ref not in told and ref in last:
            out.append(recompilation_section(rec, pairs.get(ref), sources, graphs.get(ref)))
    return out


def _expected(rec: dict) -> bool:
    """The recompilation's root has a row whose stance is "nothing to fix" (an optimizer's warm-up)."""
    causes = rec.get("causes") or []
    rule = causes[0].get("fix_rule") if causes else None
    return rule is not None and stance_of_rule(rule) in NOTHING_TO_FIX


def _one_line(rec: dict, graph: dict | None) -> str:
    step = (graph or {}).get("step")
    at = f" (step {step})" if step is not None else ""
    causes = rec.get("causes") or []
    what = f"{causes[0].get('kind')}: {causes[0].get('summary')}" if causes else "no cause"
    return f"<li id='{recompilation_anchor(rec)}'><b>{esc(rec.get('graph'))}</b>{esc(at)}: {esc(what)}</li>"
