"""``explain-recompile``'s terminal report: the run's summary and headline fix first, then one block per
recompilation (what it was compared with, its causes as a graph, the live tensors placed under them).

Apart from :mod:`hlodiff.render.terminal`, whose causes and diff details it prints with, because it is one report's
layout while the terminal module holds what every report's causes share.
"""

from __future__ import annotations

from contextvars import ContextVar

from rich.console import Console
from rich.text import Text

from hlodiff.diff.fix_stance import NOTHING_TO_FIX
from hlodiff.render.hanging import Hanging
from hlodiff.render.terminal import _HEADLINE_FIX, _render_details, _short_ref, frame_text, render_causes
from hlodiff.render.plural import counted

_LOADED: ContextVar[frozenset] = ContextVar("loaded", default=frozenset())
"""Refs of the programs the run loaded from a persistent cache: told as loaded, never as compiled (review 15, F6)."""


def render_explanation(console: Console, explanation, *, verbose: bool = False) -> None:
    """Run summary first, then one block per recompilation: what it was compared with, causes, live tensors."""
    console.print(Text(explanation.summary, style="bold"), highlight=False)
    headline = getattr(explanation, "headline", None)
    if getattr(explanation, "dynamo", None) is not None:  # issue 31: Dynamo's guard leads, its fix with it
        from hlodiff.render.dynamo import render_dynamo

        render_dynamo(console, explanation.dynamo)
        headline = explanation.xla_headline
    from hlodiff.explain.dynamo_same_values import same_sizes

    same = same_sizes(getattr(explanation, "dynamo", None), headline)
    if same and headline.causes[0].fix:
        # review 23 F6: the XLA graphs' size is Dynamo's guarded size (the same numbers): one cause, one fix
        sizes = ", ".join(str(n) for n in sorted(same))
        first = headline.causes[0].fix.split(":", 1)[0]
        console.print(Hanging(Text(f"with it: {first}: the same sizes ({sizes}) as Dynamo's guard above, one cause; "
                                   "its fix (one fixed size) fixes these too", style="green"), 9), highlight=False)
    if headline is not None and headline.causes and headline.causes[0].fix:
        if not same:
            console.print(Hanging(Text(f"fix: {headline.causes[0].fix}", style="green"), 5), highlight=False)
        from hlodiff.explain.headline_also import also_causes, also_roots

        for other in also_causes(headline) + also_roots(headline, getattr(explanation, "recompilations", ())):
            # review 14 F2: a cause that alone compiles again, with its fix (review 23 F2: a read that sets a size)
            where = other.locations[0] if other.locations else None
            at = f" at {where.file.rsplit('/', 1)[-1]}:{where.line}" if where is not None else ""
            console.print(Hanging(Text(f"also: {other.summary}{at}, which alone compiles again; fix: {other.fix}",
                                       style="green"), 6), highlight=False)
        if getattr(headline.causes[0], "plan", None) is not None:
            from hlodiff.render.plan import plan_text

            console.print(Hanging(Text(plan_text(headline.causes[0].plan.to_json()), style="green"), 6),
                          highlight=False)
    from hlodiff.render.story import story_patterns
    from hlodiff.render.story_view import render_stories

    patterns = story_patterns(explanation)
    if len(patterns) > 1:
        for pattern in patterns:
            console.print(Hanging(Text(f"  {pattern}"), 4), highlight=False)
    told = headline.causes[0].fix if headline is not None and headline.causes else None
    token = _HEADLINE_FIX.set(told)
    loaded = _LOADED.set(frozenset(getattr(explanation, "loaded", ()) or ()))
    try:
        render_stories(console, explanation, render_recompilation, verbose=verbose)
    finally:
        _HEADLINE_FIX.reset(token)
        _LOADED.reset(loaded)
    for hint in explanation.hints:
        console.print()
        console.print(Hanging(Text(f"hint: {hint}", style="yellow"), 6), highlight=False)


def render_recompilation(console: Console, r, *, verbose: bool = False) -> None:
    """One recompilation in full: what it was compared with, its causes as a graph (roots first), live tensors."""
    from hlodiff.render.story_view import alike_text, render_graph_causes

    closest = _short_ref(r.closest.ref) if r.closest else "-"
    head = Text(f"{r.graph.ref}", style="bold")
    # an eager op outside jit compiles once per shape: the headline calls these "not steps" (review 4, F8)
    from hlodiff.explain.run_summary import first_rest_title

    verb = "compiled for another shape" if r.causes and all(c.fix_rule == "eager_op" for c in r.causes) \
        else first_rest_title(r) or "recompiled"
    if r.graph.ref in _LOADED.get():  # review 15 F6: JAX logged a persistent-cache hit: nothing compiled here
        verb = "loaded from the persistent cache" + (
            " for another shape" if verb == "compiled for another shape" else "") + ", not compiled in this run"
    unrelated_eager = not verbose and _unrelated_eager_op(r)
    head.append(f" {verb} ({r.family.label})" + ("" if unrelated_eager else f"; closest earlier graph {closest}"),
                style="")
    if r.diff is not None and not unrelated_eager:
        head.append(f", {alike_text(r.diff.similarity, r.diff.equal, [c.kind for c in r.causes])}", style="dim")
    if r.causes and r.causes[0].fix_stance in NOTHING_TO_FIX:  # review 5 F6: says so before its cause does
        head.append("; expected", style="")
    console.print(head, highlight=False)
    kinds = [c.kind for c in r.causes]
    under = "outputs" if "outputs" in kinds or "reordered" not in kinds else "reordered"
    notes = {under: [_tensor_note(note) for note in r.tensors]}
    hidden = _eager_rest(r) if not verbose else []
    if not verbose and _unrelated_bridge_graph(r):
        # review 8 F11: the bridge's sync of a call's inputs compared with the unrelated graph that made
        # torch.randn (2 % alike) listed 15 lines of false differences under a Dynamo story already told
        alike = alike_text(r.diff.similarity, r.diff.equal)
        console.print(Hanging(Text(
            f"  {'unlike':<10}this graph shares almost nothing with {closest} ({alike}), so their differences need "
            "not be a change of one program; Dynamo's recompilation above says what changed (-v lists the "
            "differences)"), 14), highlight=False)
        if r.causes[0].fix:
            console.print(Hanging(Text(f"  {'':<10}fix: {r.causes[0].fix}", style="green"), 17), highlight=False)
    elif not verbose and _bridge_own_graph(r):
        # review 16 F1: four 12-line blocks of the bridge's own graphs (a forward against the input sync, 7 % alike,
        # told "dtype at your torch.randn line") under a report whose answer was "nothing unexpected"
        alike = alike_text(r.diff.similarity, r.diff.equal) if r.diff is not None else "not compared"
        console.print(Hanging(Text(
            f"  {'bridge':<10}one of the graphs torch_xla's Dynamo bridge compiles on its own (Dynamo's first graph, "
            f"its backward, the sync of the call's inputs), each once: expected; its differences from {closest} "
            f"({alike}) are no change of yours (-v lists them)", style="dim"), 14), highlight=False)
    elif unrelated_eager:
        # review 17 F5: the device_put staging of x, then of y (two arrays), compared as "0% alike ... shape changed":
        # an eager op called for another array shares nothing with the closest graph to tell
        lead = next((c for c in r.causes if c.locations), None)
        where = (f"at {lead.locations[0].short()}" if lead is not None
                 else "JAX wrote no source line into this module")
        console.print(Hanging(Text(
            f"  {'eager op':<10}an operation JAX ran outside your jitted functions (jnp.asarray, a device_put's "
            f"staging; {where}) called for an array of another shape: "
            f"{'loaded from the cache' if r.graph.ref in _LOADED.get() else 'compiled once per shape'}, expected, "
            f"not a step; it shares almost nothing with {closest} ({alike_text(r.diff.similarity, r.diff.equal)}), so "
            "their differences are no change of yours (-v lists them)", style="dim"), 14), highlight=False)
    elif hidden:  # an eager op: its first cause says it all; the rest are inside JAX's own code (review 6 F9)
        render_causes(console, [c for c in r.causes if all(c is not h for h in hidden)], notes=notes)
        console.print(Hanging(Text(
            f"  {'':<10}and {counted(len(hidden), 'more cause')} inside the op's own code (JAX "
            "keeps no line of yours there): the same new shape, the same expected compilation (-v lists them)",
            style="dim"), 14), highlight=False)
    else:
        render_graph_causes(console, r, render_causes, notes)  # live tensors under the outputs they explain
    for line in notes.get(under, ()):  # no cause about outputs took them: after the causes
        console.print(line, highlight=False)
    if r.debug is not None and r.debug.cause:
        console.print(Hanging(Text(f"  {'':<10}PT_XLA_DEBUG: {r.debug.cause}{_bridge_read(r)}", style="dim"), 26),
                      highlight=False)
    if verbose and r.diff is not None:
        _render_details(console, r.diff)


BRIDGE_READ = ("; torch_xla's words for a graph the Dynamo bridge ran while it called the compiled function (its "
               "sync of the call's pending inputs), not a read in your code")
"""Said beside torch_xla's early-read cause on a bridge graph (new-user review 19, F4: "most likely user code trying to
access tensor value" on a graph of a program that reads no value)."""


def _bridge_read(r) -> str:
    from hlodiff.explain.dynamo_bridge import bridge_run
    from hlodiff.explain.families import EARLY_CAUSE

    if EARLY_CAUSE not in r.debug.cause or r.family is None:
        return ""
    return BRIDGE_READ if "(XLA bridge)" in r.family.label or bridge_run(r.graph.record.frames) else ""


def _unrelated_bridge_graph(r) -> bool:
    """A graph of torch_xla's Dynamo bridge, told by Dynamo's story (every cause's row a ``dynamo_bridge`` one),
    that shares almost nothing with the closest earlier graph (``dynamo_xla.UNRELATED``): another program, not a
    changed one."""
    from hlodiff.explain.dynamo_xla import UNRELATED

    return (r.diff is not None and r.diff.similarity < UNRELATED and bool(r.causes)
            and all((c.fix_rule or "").startswith("dynamo_bridge") for c in r.causes))


def _unrelated_eager_op(r) -> bool:
    """A JAX eager op outside jit (every cause told ``eager_op``) whose closest earlier graph shares almost nothing
    with it (``dynamo_xla.UNRELATED``): the staging of another array, not the same op at a new size."""
    from hlodiff.explain.dynamo_xla import UNRELATED

    return (r.diff is not None and r.diff.similarity < UNRELATED and bool(r.causes)
            and all(c.fix_rule == "eager_op" for c in r.causes))


def _bridge_own_graph(r) -> bool:
    """A graph the bridge compiles on its own (every cause told ``dynamo_bridge_own``: expected, nothing to fix):
    its differences from another program are no story (a new size or branch of the bridge's graph has its own rows,
    whose differences are the story: dyn_kv_cat, dyn_break_then_float)."""
    return bool(r.causes) and all(c.fix_rule == "dynamo_bridge_own" for c in r.causes)


def _eager_rest(r) -> list:
    """Of an eager op's causes (every one told ``eager_op``), all but the first with a line of the user's (else the
    first): the others repeat the same expected compile at instructions inside the op (``jax.random.normal``'s
    threefry and uniform calls), each with "line unknown" and the same fix."""
    if len(r.causes) < 2 or not all(c.fix_rule == "eager_op" for c in r.causes):
        return []
    lead = next((c for c in r.causes if c.locations), r.causes[0])
    return [c for c in r.causes if c is not lead]


def _tensor_note(note) -> Hanging:
    t = note.tensor
    roots = t.roots()
    op = f" {roots[-1].op}" if roots else ""
    return Hanging(Text(f"  {'':<10}{'new' if note.side == 'right' else 'gone'} output {note.output}: live tensor "
                        f"id={t.id} {t.shape_text}{op}{_tensor_frame(t)}", style="dim"), 14)


def _tensor_frame(tensor) -> str:
    """`` from train.py:20 (f)``; nothing when the report has no stack (source lines were off)."""
    from hlodiff.hlo.model import user_frame

    frame = user_frame(tensor.frames) or (tensor.frames[0] if tensor.frames else None)
    return f" from {frame_text(frame)}" if frame is not None else " (no stack: source lines were off)"
