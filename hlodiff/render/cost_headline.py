"""The words of ``hlodiff cost``'s first finding (:mod:`hlodiff.cost.headline`): a summary and a fix, for the
terminal's first block and the ``"headline"`` of ``cost --json``."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hlodiff.cost.headline import CostHeadline, cost_headline
from hlodiff.cost.model import RunCost
from hlodiff.cost.round_trips import HostReturn
from hlodiff.diff.fix_rules import CONDITION_READ_RULE, RULES_BY_NAME
from hlodiff.diff.library_reads import LIBRARY_READS
from hlodiff.render.terminal import Hanging
from hlodiff.render.plural import counted
from hlodiff.render.units import human_bytes


def _at(h: CostHeadline) -> str:
    return f" at {h.location.short()}" if h.location is not None else ""


def _graph(h: CostHeadline) -> str:
    """``jit_train_step (run/dump#7)``: JAX names the function; torch_xla's module names say nothing more."""
    return f"{h.module} ({h.graph})" if h.framework == "jax" and h.module else h.graph


def summary(h: CostHeadline) -> str:
    """One sentence with the user's line (held, read and baked findings name it inside; the others at the end)."""
    text = _sentence(h)
    text = text if h.kind in ("held_across_graphs", "read_in_step", "baked_constant") else text + _at(h)
    if h.negligible:  # review 19, F8: the size says first whether it matters
        share = 100 * h.bytes / h.step_bytes
        return (f"nothing that matters at this size: {text}; that is {share:.1f}% of the "
                f"{human_bytes(h.step_bytes)} the step reads")
    return text


SHAPES_SHOWN = 4
"""Distinct shapes a headline lists; the rest are counted (``and 2 more``)."""


def shape_list(shapes: list[str]) -> str:
    """``3 x f32[256,256], 3 x f32[256]``: each distinct shape once with how many there are, largest first as
    given, so that the shapes add up to the count the sentence gives (review 21, F6: "6 inputs (f32[256,256],
    f32[256,256], f32[256,256], f32[256], ...)" listed four)."""
    counts: dict[str, int] = {}
    for shape in shapes:
        counts[shape] = counts.get(shape, 0) + 1
    shown = [f"{n} x {s}" if n > 1 else s for s, n in list(counts.items())[:SHAPES_SHOWN]]
    rest = sum(list(counts.values())[SHAPES_SHOWN:])
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def _sentence(h: CostHeadline) -> str:
    shapes = shape_list(h.shapes)
    if h.kind == "donation_unusable":
        why = {"dtype": f": no output has its dtype (the closest output is {h.closest})",
               "shape": f": no output has its shape (the closest output is {h.closest})"}.get(h.mismatch or "", "")
        if not why:
            return (f"{counted(h.count, 'donated array')} ({shapes}, {human_bytes(h.bytes)}) could not be used by "
                    f"{_graph(h)}: no output has {'its' if h.count == 1 else 'their'} shape and dtype, so the "
                    f"donation is dropped (JAX warns 'Some donated buffers were not usable')")
        return (f"{counted(h.count, 'donated array')} ({shapes}, {human_bytes(h.bytes)}) could not be used by "
                f"{_graph(h)}{why}; the donation is dropped and old and new values are both held")
    if h.kind == "loop_buffer_copy" and h.shift:
        return (f"a loop-carried buffer {shapes} is shifted whole to append a row, every iteration of %{h.loop} in "
                f"{h.graph} ({counted(h.count, 'whole copy', 'whole copies')} an iteration, {human_bytes(h.bytes)} "
                f"per step)")
    if h.kind == "loop_buffer_copy" and h.masked:
        return (f"a loop-carried buffer {shapes} is rewritten whole through a mask to write one position, every "
                f"iteration of %{h.loop} in {h.graph} ({human_bytes(h.bytes)} per step)")
    if h.kind == "loop_buffer_copy" and h.one_hot:
        return (f"a loop-carried buffer {shapes} is rewritten whole by adding a one-hot product to write one "
                f"position, every iteration of %{h.loop} in {h.graph} ({human_bytes(h.bytes)} per step)")
    if h.kind == "loop_buffer_copy" and h.reduced:
        return (f"the loop's stacked per-iteration output {shapes} ({human_bytes(h.bytes)}) holds one value per "
                f"iteration of %{h.loop} in {h.graph}, and after the loop it is only reduced over the iterations (a "
                f"sum or a mean): every iteration's value is held at once for a sum")
    if h.kind == "loop_buffer_copy" and h.snapshot:
        return (f"a loop-carried snapshot {shapes} of another buffer of the loop is rewritten whole every iteration "
                f"of %{h.loop} in {h.graph} to keep it or replace it on one scalar decision ({human_bytes(h.bytes)} "
                f"per step)")
    if h.kind == "loop_buffer_copy" and h.emitted:
        return (f"a loop-carried buffer {shapes} is written whole into the loop's stacked output every iteration of "
                f"%{h.loop} in {h.graph} (the scan returns the buffer itself as its per-iteration output: "
                f"{human_bytes(h.bytes)} per step, and the stacked output holds a copy of it per iteration)")
    if h.kind == "loop_buffer_copy" and h.kept_old:
        return (f"a loop-carried buffer {shapes} is copied whole every iteration of %{h.loop} in {h.graph} "
                f"({counted(h.count, 'copy', 'copies')} an iteration, {human_bytes(h.bytes)} per step): the body "
                f"carries the buffer's old value, from before its in-place write, in a second element of the loop's "
                f"carry, so XLA keeps both versions")
    if h.kind == "loop_buffer_copy" and h.stale_read:
        return (f"a loop-carried buffer {shapes} is copied whole every iteration of %{h.loop} in {h.graph} "
                f"({counted(h.count, 'copy', 'copies')} an iteration, {human_bytes(h.bytes)} per step): the body "
                f"reads the buffer's old value beside writing it in place, so XLA keeps both versions")
    if h.kind == "loop_buffer_copy":
        return (f"a loop-carried buffer {shapes} is copied whole every iteration of %{h.loop} in {h.graph} "
                f"({counted(h.count, 'copy', 'copies')} an iteration, {human_bytes(h.bytes)} per step)")
    if h.kind == "held_across_graphs":
        what = {"activation": "activations saved for the backward",
                "gradient": "gradients"}.get(h.role or "", "tensors")
        ended = {"sync": "a sync", "save": "a save", "read": "a value read"}.get(h.cut or "", "something")
        return (f"{counted(h.count, 'tensor')} ({what}, {human_bytes(h.bytes)}) cross from {h.graph} to the next "
                f"graph ({_times(h.times)} in this run): {ended}{_at(h)} ends a graph in the middle of the step")
    if h.kind == "read_in_step":
        then = f" at {h.then_at.short()}" if h.then_at is not None else ""
        again = ("; the step's graph computes its matrix products again" if h.recomputed else "")
        if h.mask:
            if h.reads > 1:  # review 23 F9: "4 times" for 20 early graphs at the line (4 experts, 5 steps)
                return (f"a boolean mask index{_at(h)} (x[mask], nonzero) executes a graph of its own ({h.graph}) "
                        f"before the step's sync{then} to learn how many elements it keeps; {h.reads} early graphs "
                        f"a step{'' if h.reads_at_one_line else ' with the early reads at other lines'}, in "
                        f"{h.times} steps of this run ({h.reads * h.times} early graphs){again}")
            return (f"a boolean mask index{_at(h)} (x[mask], nonzero) executes a graph of its own ({h.graph}) before "
                    f"the step's sync{then} to learn how many elements it keeps, {_times(h.times)} in this run{again}")
        if h.host_return in (HostReturn.ROUND_TRIP, HostReturn.MOVED):
            return (f"a value read{_at(h)} goes to the host and comes back to the device at the same line, read by "
                    f"the next graph: reading it executes a graph of its own ({h.graph}) before the step's "
                    f"sync{then}, {_times(h.times)} in this run{again}")
        if h.host_return is HostReturn.SENT_BACK and h.reads > 1:  # gradients read one by one, then sent back
            at = _at(h) if h.reads_at_one_line else f" (the last{_at(h)})"
            return (f"{h.reads} values read{at} each execute a graph of their own (the last {h.graph}) before "
                    f"the step's sync{then}, in {h.times} steps of this run ({h.reads * h.times} early "
                    f"graphs){again}; what the host works out from them comes back to the device for the same step")
        if h.host_return is HostReturn.SENT_BACK:
            return (f"a value read{_at(h)} executes a graph of its own ({h.graph}) before the step's sync{then}, "
                    f"{_times(h.times)} in this run{again}; what the host works out from it comes back to the "
                    f"device for the same step")
        if h.reads > 1:  # review 20 F3: "7 times" counted one of two early graphs a step
            at = _at(h) if h.reads_at_one_line else f" (the last{_at(h)})"
            return (f"{h.reads} values read{at} each execute a graph of their own (the last {h.graph}) before "
                    f"the step's sync{then}, in {h.times} steps of this run ({h.reads * h.times} early graphs){again}")
        return (f"a value read{_at(h)} executes a graph of its own ({h.graph}) before the step's sync{then}, "
                f"{_times(h.times)} in this run{again}")
    if h.kind == "baked_constant":
        also = f" ({h.count} programs of this run carry it)" if h.count > 1 else ""
        return (f"{_graph(h)} carries a {shapes} literal ({human_bytes(h.bytes)}) read{_at(h)}: an array the jitted "
                f"function reads through its closure or a global is not an argument, so its value is baked into the "
                f"program, compiled into the executable and held beside the device's buffers{also}")
    if h.kind == "not_donated" and h.unchanged == h.count:
        return (f"{_graph(h)} returns {counted(h.count, 'input')} unchanged ({shapes}, {human_bytes(h.bytes)}): "
                f"undonated, each is copied into a buffer of its own on every call and old and new are held together")
    if h.kind == "not_donated":
        if h.unchanged:
            return (f"{_graph(h)} returns new values of {counted(h.count - h.unchanged, 'input')} and "
                    f"{counted(h.unchanged, 'input')} unchanged ({shapes}, {human_bytes(h.bytes)}), each in a buffer "
                    f"of its own: old and new are held together")
        return (f"{_graph(h)} computes new values of {counted(h.count, 'input')} ({shapes}, {human_bytes(h.bytes)}) "
                f"into buffers of their own: old and new are held together")
    return h.kind


def fix(h: CostHeadline) -> str:
    if h.negligible:
        return "optional, worth it once the state grows: " + _fix(h)
    return _fix(h)


def _fix(h: CostHeadline) -> str:
    if h.kind == "donation_unusable":
        if h.mismatch == "dtype":
            return (f"return the donated array in the dtype it came in (cast after the step, outside the jitted "
                    f"function), so that an output of the same shape and dtype can take its buffer; or donate only "
                    f"what an output replaces")
        if h.mismatch == "shape":
            return "return the donated array with the shape it came in, or donate only what an output replaces"
        return ("donate only arguments that an output of the same shape and dtype replaces (the state the step "
                "returns anew); leave the others, such as the batch, out of donate_argnums")
    if h.kind == "loop_buffer_copy" and h.shift:
        return ("keep it as a ring buffer: write the new row in place with buf.at[i % n].set(row) (a "
                "dynamic_update_slice) and fold the rotation into the index where it is read, instead of "
                "concatenating a shifted copy every iteration")
    if h.kind == "loop_buffer_copy" and h.masked:
        return ("write the position in place with buf.at[t].set(row) (a dynamic_update_slice) instead of "
                "jnp.where(positions == t, row, buf), which reads and writes the whole buffer every iteration; or "
                "emit each iteration's row as a scan output (ys)")
    if h.kind == "loop_buffer_copy" and h.one_hot:
        return ("write the position in place with buf.at[t].set(row) (a dynamic_update_slice) instead of "
                "buf + one_hot(t)[:, None] * row, which reads and writes the whole buffer every iteration; or emit "
                "each iteration's row as a scan output (ys)")
    if h.kind == "loop_buffer_copy" and h.reduced:
        return ("carry the running sum through the loop instead (acc + value in the carry, divided by the count "
                "after the loop: micro-batch gradients accumulated as they are computed), and emit per iteration only "
                "what is read per iteration (a loss): one copy held instead of one per iteration")
    if h.kind == "loop_buffer_copy" and h.snapshot:
        return ("carry only what decides the snapshot (the best step's index and score, scalars) through the loop, "
                "and build the snapshot once after the loop from the final buffer (rows past that index masked or "
                "sliced), instead of copying the whole buffer into it every iteration")
    if h.kind == "loop_buffer_copy" and h.emitted:
        return ("return only the new row as the scan's per-iteration output (ys), not the whole buffer; the final "
                "carry already holds the buffer once the loop ends")
    if h.kind == "loop_buffer_copy" and h.kept_old:
        return ("carry only what the later use needs of the old buffer (the row written, its index, or a value "
                "computed from the old buffer before the write), not a second copy of the whole buffer; then the "
                "write is in place and nothing is copied")
    if h.kind == "loop_buffer_copy" and h.stale_read:
        return ("read the updated buffer (the value buf.at[t].set(...) returned) where the body reads the old one, "
                "or compute what reads the old buffer before the write and feed it into the write; then the write "
                "is in place and nothing is copied (where the old value was read by mistake, the result changes too)")
    if h.kind == "loop_buffer_copy":
        return ("emit each iteration's slice as a scan output (ys) and let scan stack them, instead of carrying the "
                "buffer through the loop; or write the slice in the buffer's own layout")
    if h.kind == "held_across_graphs":
        if h.cut == "read":
            return ("read the value after the step's sync, or in xm.add_step_closure, so that the whole step is one "
                    "graph")
        if h.cut == "save":
            return "save after the step's sync (xm.save syncs what it saves), so that the whole step is one graph"
        if h.role == "gradient" and h.gradient_sources > 1:
            return (f"accumulate the gradients in place: let each micro-batch's backward() add into p.grad (no "
                    f"zero_grad or copy between micro-batches, the loss scaled by 1/{h.gradient_sources}), so that one "
                    f"copy of the gradients reaches the optimizer's graph instead of {h.gradient_sources}; or one "
                    f"sync per step, after opt.step()")
        return ("one sync per step, after opt.step(): remove the sync that ends a graph in the middle of the step, so "
                "that these tensors stay inside one graph")
    if h.kind == "baked_constant":
        return ("pass the array as an argument of the jitted function (put it on the device once with "
                "jnp.asarray and pass it each call) instead of reading it through a closure or a global: then it is "
                "one device buffer, and the program holds no copy of its value")
    if h.kind == "read_in_step" and h.mask:
        return ("keep the full size and apply the mask as values (torch.where(mask, x, 0), or multiply by the mask "
                "and divide by its sum): nothing is read before the sync then, and each step is one graph of one size")
    if h.kind == "read_in_step" and h.host_return is HostReturn.ROUND_TRIP:
        return ("if the line only moves the value (t.detach().cpu().numpy() and back), keep it on the device: "
                "t.detach() hands it to the next graph without the trip; if the host computes something there (a "
                "NumPy or SciPy function of it), compute that with torch ops on the device instead; either way "
                "nothing is read then, and each step is one graph")
    if h.kind == "read_in_step" and h.host_return is HostReturn.MOVED:
        return ("keep the value on the device: t.detach() (or t.detach().clone()) gives the next graph the same values "
                "without reading them to the host and uploading them again; nothing is read then, and each step is "
                "one graph")
    if h.kind == "read_in_step" and (row := _library_row(h)) is not None:  # review 20 F3: explain's row, not ours
        where = h.location.short() if h.location is not None else "the line shown"
        return RULES_BY_NAME["partial_library_read"].text.format(read_what=row.reads, read_call=row.call, line=where,
                                                                 read_fix=row.fix)
    if h.kind == "read_in_step" and h.condition:  # one fact, one row: explain-recompile's words for this read
        where = h.location.short() if h.location is not None else "the line shown"
        return RULES_BY_NAME[CONDITION_READ_RULE].text.format(line=where)
    if h.kind == "read_in_step" and h.host_return is HostReturn.SENT_BACK:
        return ("compute on the device what the host works out from the value (torch.topk, torch.sort, argmax, "
                "torch.where, torch.nn.utils.clip_grad_norm_ instead of NumPy's argsort, a norm taken on the CPU or "
                "a Python loop): this step's graph needs the result, so moving the read later cannot replace it; then "
                "nothing is read and each step is one graph")
    if h.kind == "read_in_step" and h.followed_by > 1:
        return (f"the value read decides what is traced after it ({h.followed_by} different graphs followed the "
                "read), so reading it later removes nothing: if it chooses a branch (`if t.item() > x:`), compute "
                "both branches on the device and choose with torch.where(cond, a, b); if it sets a size, give that "
                "size a fixed length; then nothing is read and each step is one graph")
    if h.kind == "read_in_step":
        return ("read the value after the step's sync, or in xm.add_step_closure (torch_xla runs it once the step's "
                "graph has computed it), so that each step is one graph")
    if h.kind == "not_donated" and h.unchanged == h.count and h.framework != "torch_xla":
        return ("return only what the function computes (the caller still holds the arrays it passed in), or donate "
                "them (jax.jit(..., donate_argnums=...)) so that the outputs take their buffers instead of copies")
    if h.kind == "not_donated":
        if h.framework == "torch_xla":
            return ("update these tensors in place (p.sub_(...), or copy_ into them under torch.no_grad()) instead of "
                    "rebinding new tensors, and keep no other reference to the old ones: torch_xla then donates "
                    "their buffers to the outputs")
        if h.arguments:  # JAX named the arguments: say exactly what to donate (review 6, p13)
            names = ", ".join(repr(a) for a in h.arguments) + ("," if len(h.arguments) == 1 else "")
            return (f"donate the inputs the step replaces, here the arguments {', '.join(h.arguments)} "
                    f"(jax.jit(..., donate_argnums=their positions), or donate_argnames=({names})), and do not use "
                    "them after the call, so that the outputs are written into their buffers")
        return ("donate the inputs the step replaces (jax.jit(..., donate_argnums=...)) and do not use them after "
                "the call, so that the outputs are written into their buffers")
    return ""


def _library_row(h: CostHeadline):
    """The library read's row (:mod:`hlodiff.diff.library_reads`), None for the user's own read."""
    return next((r for r in LIBRARY_READS if r.name == h.library_read), None) if h.library_read else None


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def headline_json(h: CostHeadline | None) -> dict | None:
    if h is None:
        return None
    return {**h.to_json(), "summary": summary(h), "fix": fix(h)}


def cost_document(run: RunCost) -> dict:
    """``cost --json``'s body: the headline first, then the figures (:meth:`RunCost.to_json`)."""
    return {"headline": headline_json(cost_headline(run)), **run.to_json()}


def render_headline(console: Console, run: RunCost) -> None:
    h = cost_headline(run)
    if h is None:  # review 15 F9: the report still says first what to do, here nothing
        console.print(Hanging(Text.assemble(("first: ", "bold"), nothing_text(run)), 2), highlight=False)
        console.print()
        return
    console.print(Hanging(Text.assemble(("first: ", "bold"), summary(h)), 2), highlight=False)
    console.print(Hanging(Text.assemble(("fix: ", "bold"), fix(h)), 2), highlight=False)
    console.print()


NOTHING = ("nothing to act on: no donation lost, no loop buffer copied every iteration, nothing held across a sync "
           "inside the step, no value read inside the step, no step state left undonated")
"""The first line of a ``cost`` report with no finding (review 15, F9: a healthy loop's report had none)."""

_STATE_WORDS = {"parameter": ("parameter", "parameters"), "optimizer_state": ("optimizer state tensor",
                                                                              "optimizer state tensors")}


ACCUMULATED = ("nothing to act on: the gradients each backward graph hands the next, which adds into them ({count} "
               "tensors, {size}, {hops} times in this run), are accumulated across the syncs by design (a sync per "
               "micro-batch keeps each graph, and its memory, that of one micro-batch: pytorch/xla#1367); no "
               "activation held across a sync inside the step, no donation lost, no loop buffer copied every "
               "iteration, no value read inside the step, no step state left undonated")
"""The first line of a report with no finding whose boundaries carry accumulated gradients (review 19, F1: "nothing
held across a sync" above a list of gradients held across the micro-batches' syncs read as a contradiction)."""


def nothing_text(run: RunCost) -> str:
    """:data:`NOTHING`; when gradients are accumulated across the micro-batches' syncs, :data:`ACCUMULATED`; when
    every boundary carries only the model's state, that it is expected."""
    from hlodiff.cost.accumulated import accumulated_gradients
    from hlodiff.cost.carried_state import carried_state

    accumulated = accumulated_gradients(run)
    if accumulated is not None:
        return ACCUMULATED.format(count=accumulated.count, size=human_bytes(accumulated.bytes),
                                  hops=accumulated.hops)
    carried = carried_state(run)
    if carried is None:
        return NOTHING
    parts = [f"{n} {_STATE_WORDS[role][n != 1]}" for role, (n, _) in carried.roles.items()]
    size = human_bytes(sum(b for _, b in carried.roles.values()))
    return (f"{NOTHING}; what each graph hands the next ({' and '.join(parts)}, {size}) is the model's state, which "
            "every training loop carries from step to step (expected)")
