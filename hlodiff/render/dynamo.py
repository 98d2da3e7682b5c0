"""The words for Dynamo's side of a torch.compile run (issue 31): the failed guard at the user's line, what changed
in the XLA graphs under it, the fix, graph breaks on their own, and which XLA compilations were the bridge's own."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hlodiff.render.hanging import Hanging
from hlodiff.render.plural import noun


def render_dynamo(console: Console, dynamo) -> None:
    """The Dynamo block, printed under the run's summary (the summary already begins with Dynamo's sentence)."""
    groups = folded(dynamo.recompiles)
    # the headline's block first (a recurring guard leads a single first one: round 19, r19_d_layer_idx_attr)
    groups.sort(key=lambda group: not any(r is dynamo.headline for r in group))
    for group in groups:
        r = group[0]
        where = f" at {r.location.where}" if r.location else ""
        if r.called_at is not None:  # the guard's line in the function, and the call that passed the value
            where += f", called at {r.called_at.short()}"
        if r.guard_at is not None:  # the call leads; the line in the function that Dynamo's guard names
            where += f", the value used at {r.guard_at.short()}"
        ids = r.compile_id if len(group) == 1 else f"{len(group)} times: {r.compile_id} to {group[-1].compile_id}"
        head = Text(f"Dynamo recompiled {r.function or 'the compiled function'} ({ids}){where}"
                    if "stance_raised" not in r.facts else  # refused: nothing compiled, the program stopped
                    f"Dynamo needed a new graph for {r.function or 'the compiled function'}{where} and raised "
                    f"(set_stance(\"{r.seen}\")): the program stopped", style="bold")
        console.print(head, highlight=False)
        console.print(Hanging(Text(f"  guard     {r.guard.guard or '(none named: each guard held)'}"
                                   f"{' (against ' + r.guard.against + ')' if r.guard.against else ''}"
                                   f"{'; ' + r.subject + ' is ' + r.subject_words if r.subject_words else ''}"
                                   f"{_then(group)}"), 12),
                      highlight=False)
        if r.difference:
            console.print(Hanging(Text(f"  graphs    {r.difference} ({r.difference_graph})", style="dim"), 12),
                          highlight=False)
        toward = toward_limit(group, dynamo)
        if toward:
            console.print(Hanging(Text(f"  values    {toward}"), 12), highlight=False)
        if r.xla == "cache_hit":
            these = "this graph" if len(group) == 1 else "these graphs"
            console.print(Hanging(Text(f"  graphs    XLA found {these} compiled already: only Dynamo paid",
                                       style="dim"), 12), highlight=False)
        if r.fix:
            console.print(Hanging(Text(f"  fix: {r.fix}", style="green"), 7), highlight=False)
        if r.located == "definition" and dynamo.traced:  # the trace was read: it holds no caller of a function
            console.print(Hanging(Text("  hint: the line above is in the compiled function: Dynamo's trace records "
                                       "the caller of a compiled nn.Module, not of a compiled function; the call of "
                                       f"{r.function or 'it'} in your loop is where the value changed",
                                       style="yellow"), 8), highlight=False)
        elif r.located == "xla_call":  # Dynamo named the def; the XLA graph's stack named the call
            console.print(Hanging(Text(f"  hint: the line above is your call of {r.function or 'the function'}, read "
                                       "from the stack of the XLA graph it compiled again (Dynamo's log names only "
                                       "the compiled function's def)", style="yellow"), 8), highlight=False)
        elif r.located == "source_call" and r.guard_at is not None:
            pass  # the head line names the guard's line beside the call
        elif r.located == "source_call":  # Dynamo named the def; the source has one call of the function
            console.print(Hanging(Text(f"  hint: the line above is the one call of {r.function or 'the function'} in "
                                       "its file, read from your source (Dynamo's log names only the compiled "
                                       "function's def)", style="yellow"), 8), highlight=False)
        elif r.located == "backend_call":  # no failed guard; the source compiles the function with two backends
            console.print(Hanging(Text(f"  hint: the line above is the one call of the torch.compile of "
                                       f"{r.function or 'the function'} with another backend than torch_xla's, read "
                                       "from your source (Dynamo's log names only the compiled function's def)",
                                       style="yellow"), 8), highlight=False)
        elif r.located == "compiled_call":  # Dynamo named torch's wrapper; the source has one compiled call
            console.print(Hanging(Text("  hint: the line above is the one call of a torch.compile result in your "
                                       "files, read from your source (Dynamo's log names only torch's wrapper of the "
                                       "compiled module)", style="yellow"), 8), highlight=False)
        elif r.located == "mode_call":  # Dynamo named torch's wrapper; the source sets the mode of one call
            console.print(Hanging(Text("  hint: the line above is the call of the compiled module that your source "
                                       "runs in the other mode (model.eval() or model.train() before it, or "
                                       "torch.no_grad() around it), the mode the failed guard did not hold; Dynamo's "
                                       "log names only torch's wrapper",
                                       style="yellow"), 8), highlight=False)
        elif r.located == "xla":  # Dynamo named torch's wrapper; the line is the XLA graph's change
            console.print(Hanging(Text("  hint: the line above is where the XLA graph's changed input is made (its "
                                       "source lines); Dynamo's log names only torch's wrapper of the compiled module: "
                                       "a TORCH_TRACE log (TORCH_TRACE=DIR) or `hlodiff record` records the call",
                                       style="yellow"), 8), highlight=False)
        elif r.located == "wrapper":  # TORCH_LOGS names torch's wrapper of a compiled nn.Module, no line of the user's
            console.print(Hanging(Text("  hint: Dynamo's log names only library code here (torch's wrapper of a "
                                       "compiled module), not a line of yours: it is called with the new input in "
                                       "your loop; a TORCH_TRACE log (TORCH_TRACE=DIR) or `hlodiff record` records "
                                       "that call",
                                       style="yellow"), 8), highlight=False)
        elif r.located == "guard" and r.called_at is not None:
            pass  # the head line names the call beside the guard's line
        elif r.located == "guard" and dynamo.traced:  # the trace was read: it names the compiled frame, no caller
            console.print(Hanging(Text("  hint: the line above is the line its guard names; the TORCH_TRACE log read "
                                       "here records only the compiled function's own frame, not the call that "
                                       f"passed the new value: the call of {r.function or 'it'} in your loop is where "
                                       "the value changed", style="yellow"), 8), highlight=False)
        elif r.located == "decision":  # read from the user's source: no Dynamo record holds that line
            console.print(Hanging(Text("  hint: the line above is read from your source: it changed what the guard "
                                       "checks; no Dynamo or XLA record holds it (it traces nothing)",
                                       style="yellow"), 8), highlight=False)
        elif r.located in ("guard", "definition"):
            what = "the line its guard names" if r.located == "guard" else "the compiled function's definition"
            console.print(Hanging(Text(f"  hint: the line above is {what}; a TORCH_TRACE log (TORCH_TRACE=DIR) "
                                       "records the call that recompiled", style="yellow"), 8), highlight=False)
    for r in dynamo.resets:  # the same function compiled from scratch again: Dynamo's cache was emptied
        where = f" at {r.location.where}" if r.location else ""
        console.print(Text(f"Dynamo compiled {r.function or 'the compiled function'} from scratch {r.seen}{where}",
                           style="bold"), highlight=False)
        console.print(Hanging(Text(f"  guard     {r.guard.guard}"), 12), highlight=False)
        if r.fix:
            console.print(Hanging(Text(f"  fix: {r.fix}", style="green"), 7), highlight=False)
        if r.located == "definition":
            console.print(Hanging(Text("  hint: the line above is the compiled function's definition; the reset is "
                                       "a call of torch._dynamo.reset() (or torch.compiler.reset()) in your loop, "
                                       "between the compiled calls", style="yellow"), 8), highlight=False)
    for r in dynamo.converted:  # the compiled model converted to another type after compiling: no retrace
        where = f" at {r.location.where}" if r.location else ""
        console.print(Text(f"the compiled model's parameters were converted {r.seen}{where} after compiling "
                           f"({r.difference_graph}); Dynamo traced nothing again", style="bold"), highlight=False)
        if r.fix:
            console.print(Hanging(Text(f"  fix: {r.fix}", style="green"), 7), highlight=False)
        if r.location is not None:
            console.print(Hanging(Text("  hint: the line above is read from your source (the one call converting "
                                       "to that type); no Dynamo or XLA record holds it", style="yellow"), 8),
                          highlight=False)
        else:
            console.print(Hanging(Text("  line unknown: look for the model's .to(dtype) / .half() / .bfloat16() "
                                       "call after the first compiled call", style="yellow"), 8), highlight=False)
    for r in dynamo.xla_sizes:  # Dynamo traced a symbolic size once; XLA compiled each concrete one
        where = f" at {r.location.where}" if r.location else ""
        console.print(Text(f"XLA recompiled {r.function or 'the compiled function'} for new sizes ({r.compile_id}, "
                           f"traced once by Dynamo){where}", style="bold"), highlight=False)
        _graphs_then_fix(console, r)
    for r in dynamo.random_inputs:  # review 10 F1: the call's input drawn on the device, never synced
        where = f" at {r.location.where}" if r.location else ""
        console.print(Text(f"unbounded: XLA compiles the bridge's sync of the call's inputs anew on every call "
                           f"({r.seen}){where}", style="bold"), highlight=False)
        _graphs_then_fix(console, r)
    for b in dynamo.graph_breaks:
        where = f" at {b.location.where}" if b.location else ""
        head = (f"Dynamo gave up on {b.location.function or 'the function'}{where}: it runs eagerly on every call "
                f"({b.reason})" if b.fix_rule == "dynamo_gave_up" and b.location is not None else
                f"graph break{where}, raised (fullgraph=True: the program stopped here): {b.reason}" if b.raised else
                f"graph break{where}: {b.reason} ({b.count} in the log, {b.graphs} graphs per call)" if b.graphs else
                f"graph break{where}: {b.reason} ({b.count} in the log; Dynamo made no graph of it: it runs "
                f"uncompiled on every call)")
        console.print(Text(head, style="bold"), highlight=False)
        if b.explanation:
            console.print(Hanging(Text(f"  {b.explanation}", style="dim"), 2), highlight=False)
        if b.call is not None:
            console.print(Hanging(Text(f"  called from {b.call.where}", style="dim"), 2), highlight=False)
        if b.fix:
            console.print(Hanging(Text(f"  fix: {b.fix}", style="green"), 7), highlight=False)
    if dynamo.bridge_compilations and not dynamo.unexpected:
        k = len(dynamo.bridge_compilations)
        tail = ("its log beside the dump is empty: if TORCH_LOGS=recompiles was set, Dynamo logged no recompilation" if dynamo.no_log and dynamo.empty_log
                else "without Dynamo's log, whether Dynamo retraced is not known (if the TORCH_LOGS=recompiles,"
                "graph_breaks you captured is empty, it never did)" if dynamo.no_log
                else "Dynamo recompiled nothing unexpected")
        console.print(Hanging(Text(f"expected: {k} XLA {noun(k, 'compilation')} by torch_xla's Dynamo bridge "
                                   f"(Dynamo's graphs, their backward, the bridge's own syncs and warm-up); {tail}",
                                   style="dim"), 10), highlight=False)
    console.print()


def folded(recompiles) -> list[list]:
    """The recompilations told as one block each story: those of one function whose guard, line, fix and XLA
    outcome are the same but for the guarded value (a temperature annealed each step: 4 blocks of 5 identical lines,
    review 13 F6; the same fix row quoting each value, review 18 F6) fold into the first's, in the order they first came. One whose XLA graphs differed keeps its own
    block (its graph is named)."""
    groups: dict[tuple, list] = {}
    for r in recompiles:
        key = (id(r),) if r.difference else (
            r.function, r.kind, r.subject, r.location.where if r.location else None,
            r.called_at.where if r.called_at else None, r.guard_at.where if r.guard_at else None, r.located,
            r.fix_rule or r.fix, r.xla)  # one row's fix, told with each value: review 18 F6 (5 blocks, one story)
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def _then(group, shown: int = 3) -> str:
    """The later guards of a folded block, after the first's: ``; then T == 3.2, T == 2.56 (+1 more)``."""
    later = [r.guard.guard for r in group[1:]]
    if not later:
        return ""
    more = f" (+{len(later) - shown} more)" if len(later) > shown else ""
    return f"; then {', '.join(later[:shown])}{more}"


def _graphs_then_fix(console, r) -> None:
    """The two lines under an XLA-side Dynamo finding (new sizes, an input drawn on the device): which graphs
    differ and how, then the fix."""
    console.print(Hanging(Text(f"  graphs    {r.difference} ({r.difference_graph})", style="dim"), 12),
                  highlight=False)
    if r.fix:
        console.print(Hanging(Text(f"  fix: {r.fix}", style="green"), 7), highlight=False)


DEFAULT_LIMIT = 8
"""torch's ``torch._dynamo.config.recompile_limit`` by default (2.x): the compilations of one frame Dynamo makes
before it runs that frame without torch.compile."""


VALUE_KINDS = ("python_value", "guard")
"""Guards on a value (a number, an object's id): a new size (``shape``, dyn_mask_select) is told by its own fix."""


def toward_limit(group, dynamo) -> str:
    """Review 18 F6: when every compilation of a frame after its first came from one guard on a value, each value new
    (a temperature annealed as a Python float), every new value costs another trace, and the run heads for Dynamo's
    recompile limit: say so before the limit is hit (once hit, the summary tells it). Empty otherwise."""
    frame = group[0].compile_id.split("/")[0]
    ids = [r.compile_id for r in group]
    if (len(group) < 3 or len(group) + 1 >= DEFAULT_LIMIT  # at the limit: what happened next is not known here
            or group[0].kind not in VALUE_KINDS
            or any(cid.split("/")[0] == frame for cid, _ in getattr(dynamo, "limit_hits", ()))):
        return ""
    mine = [r for r in dynamo.recompiles if r.compile_id.split("/")[0] == frame]
    values = [r.guard.guard for r in group]
    if len(mine) != len(group) or len(set(values)) != len(values) or ids != [f"{frame}/{i}" for i in
                                                                              range(1, len(group) + 1)]:
        return ""
    fn = group[0].function or "the compiled function"
    return (f"each of the {len(group)} recompilations of {fn} so far, in a row, came with a value not seen before: "
            f"each new value traces it again, and at Dynamo's recompile limit ({DEFAULT_LIMIT} by default; "
            f"{len(group) + 1} compilations so far) it runs without torch.compile for the rest of the run")
