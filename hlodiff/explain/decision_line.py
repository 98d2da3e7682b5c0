"""The line of the decision: where the user's Python chose what this step traces, not only where the traced ops are.

A block skipped at random, a backbone frozen at step 3, arguments placed on another device: the ops a capture
records come from the lines that run (the block's call, the loss), while the choice was made by a line that traces
nothing (the ``if``, ``requires_grad_(False)``, ``jax.device_put``). No capture holds such a line; the user's source
file does, when it is still on disk. For the fix rows that name such a decision, the decision's line goes first in
the root cause's locations (the traced lines stay after it); when the source is not on disk, the nearest user frame
stays and a hint says which line to look for and why no capture shows it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.hlo.model import SourceFrame

BRANCH_ROWS = frozenset({"traced_some_steps", "ops_branch"})
"""Rows whose story is a Python ``if`` choosing per step which ops are traced: the decision is the ``if``. (A value
kept on some steps, an EMA updated on some: the line that keeps or updates it is what to change, it stays first.)"""
ACCUMULATION_ROWS = frozenset({"accumulation_cycle"})
"""Rows whose story is gradient accumulation: the decision is the ``if`` that steps the optimizer every k-th
micro-batch (the graph that runs the update differs from the others there), not ``loss.backward()``, which every
micro-batch runs (new-user review 15, F2). No hint when the source is not on disk: the traced lines are right too."""
FREEZE_ROWS = frozenset({"outputs_frozen", "outputs_unfrozen", "inputs_trained_from_step"})
"""Rows whose story is parameters frozen (or unfrozen): the decision is ``requires_grad_`` / ``.requires_grad =``."""
CARRY_ROWS = frozenset({"history_carried"})
"""Rows whose story is a tensor carried into the next step with its history: the decision is the assignment that
carries it (``center = 0.9 * center + ...``), not the backward or the optimizer step whose ops walk the history."""
ADDED_EACH_STEP_ROWS = frozenset({"ops_added_every_step"})
"""Rows whose story is the same ops added to the model at every step: the decision is the call inside the loop that
adds them (``enc.register_forward_hook(...)`` at the top of every step), not the backward that runs them."""
MODEL_ADDITIONS = ("register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                   "register_full_backward_pre_hook", "register_backward_hook", "register_module_forward_hook",
                   "register_parametrization", "weight_norm", "spectral_norm")
"""Calls that add code to a model that runs at every later call until removed: one in the training loop adds it
once more each step (crossings round 7, x7c_tx_hook_in_loop)."""
SURGERY_ROWS = frozenset({"inputs_params_added", "inputs_state_added"})
"""Rows whose story is parameters added to the model mid-run: the decision is the line that made them (the
adapter or head built and moved to the device), read from the new inputs' own frames, not the optimizer's step
that also reads the optimizer's new scalars (review 21, F2: a head added at :30 was placed at ``opt.step()``)."""
PLACEMENT_ROWS = frozenset({"cache_key_placement"})
"""Rows whose story is arguments placed elsewhere: the decision is ``device_put``."""
SIBLING_BRANCH_ROWS = BRANCH_ROWS | {"ops_periodic"}
"""Rows whose story is a Python ``if`` adding ops on some steps: when the root's own lines lie in no ``if`` (the
sum of a dict of losses, :13, after the ``if`` that adds a key, :11-12), the ``if`` around the lines of the
causes beside it (the new term's inputs and output, :12) is the decision, when they name exactly one (new-user
review 7, rev7_loss_dict)."""
GUARDED_CALL_ROWS = {
    # round 30 (r30_tx_spmd_act_hint_some): the Sharding custom-calls carry torch_xla's xla_sharding.py frame alone
    "ops_sharding_hint_some_steps": ("mark_sharding",),
    # checkpoint_toggle: the recomputed forward runs in the backward, its frames are torch.nn's and autograd's
    "ops_checkpointing": ("checkpoint", "checkpoint_sequential"),
    # round 10 (r10_spmd_shard_late): weights sharded from a step on, under `if step == 2:` (told at exit, and live
    # before the later steps show the sharding stays, as a sharding that differs between steps)
    "sharding_marked_late": ("mark_sharding",),
    "sharding_torch": ("mark_sharding",),
}
"""Rows whose story is a library call made on some steps only, and the calls that make it: their ops carry the
library's frames alone, so the decision (the ``if`` around the one such call that has one) and the call are read
from the sync's file (a test per row: tests/test_leftovers14.py)."""


def place_decisions(recompilations, sources: SourceLines) -> None:
    """Put the decision's line first in each recompilation's root cause where the source shows it (``sources``: the
    run's Python files), else a hint. A run of thousands of recompilations asks about a few lines: each file is
    parsed once per question."""
    try:
        for r in recompilations:
            if r.causes:
                before = _lead(r.causes[0])
                _traced_first(r)
                _made_first(r.causes[0])
                _place(r.causes[0], sources)
                _update_from_source(r, sources)
                _guarded_call_from_source(r, sources)
                _branch_of_siblings(r, sources)
                _read_first(r)
                _fix_names_the_lead(r.causes[0], before, sources)
    finally:
        enclosing_if.cache_clear()
        calls_named.cache_clear()


def _lead(cause) -> SourceFrame | None:
    """The cause's first user frame: the line its fix's ``{line}`` was written from."""
    return next((f for f in cause.locations if not f.is_library and f.line is not None), None)


LEAD_WORDS = (
    # (the fix's words naming the line the ops were traced at, the words when the new lead is an `if`)
    # rev7_loss_dict: "the ops traced at :13 run every 3 steps only" under the location `if step % 3 == 2:` :11
    ("the ops traced at {old}", "the ops traced under the `if` at {new}"),
    # stochastic_depth: "the ops of :17 (and the parameters they read) are traced on steps ..." under its `if` :16
    ("the ops of {old}", "the ops under the `if` at {new}"),
)
"""Fix words that name a traced line, and what they say once the decision's ``if`` leads instead."""


def _fix_names_the_lead(cause, before: SourceFrame | None, sources: SourceLines) -> None:
    """The fix names the line the report leads with: when a decision's line moved in front of the line the fix was
    written from, the fix's ``file.py:N`` follows it (an ``if`` said as one: :data:`LEAD_WORDS`), so the location
    and the fix never name two lines for one cause (leftovers of the fourteenth stop: rev7_loss_dict's `if` :11
    with "the ops traced at :13")."""
    after = _lead(cause)
    if not cause.fix or before is None or after is None or (before.file, before.line) == (after.file, after.line):
        return
    old, new = before.short(), after.short()
    if old not in cause.fix:
        return
    if enclosing_if(sources, after.file, after.line + 1) == after.line:
        for said, told in LEAD_WORDS:
            cause.fix = cause.fix.replace(said.format(old=old), told.format(new=new))
    cause.fix = re.sub(re.escape(old) + r"(?!\d)", new, cause.fix)  # t.py:1 is no prefix of t.py:13


@lru_cache(maxsize=256)
def enclosing_if(sources: SourceLines, file: str, line: int) -> int | None:
    return sources.enclosing_if(file, line)


@lru_cache(maxsize=64)
def calls_named(sources: SourceLines, file: str, names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(sources.calls_named(file, names))


def calls_named_in_loop(sources: SourceLines, file: str, line: int) -> list[int]:
    """The :data:`MODEL_ADDITIONS` calls in a loop around ``file:line`` (the sync's or the traced line's)."""
    return list(sources.calls_in_loops_around(file, line, MODEL_ADDITIONS))


def _made_first(root) -> None:
    """:data:`SURGERY_ROWS`: the user's line that made the first new non-scalar input goes first."""
    if root.fix_rule not in SURGERY_ROWS:
        return
    made = (next((f for f in o.right.frames if not f.is_library and f.line is not None), None)
            for o in root.origins if o.left is None and o.right is not None and o.right.opcode == "parameter"
            and not str(o.right.shape).split("{")[0].endswith("[]"))
    first = next((f for f in made if f is not None), None)
    if first is None:
        return
    same = next((f for f in root.locations if (f.file, f.line) == (first.file, first.line)), first)
    root.locations = [same] + [f for f in root.locations if f is not same]


def _traced_first(r) -> None:
    """Ops traced on some steps only, told through the parameters they read (an ``inputs`` root): the line that
    traces those ops is where the decision is made, not the optimizer's line that also reads the parameters."""
    root = r.causes[0]
    if root.fix_rule not in ("traced_some_steps", *ACCUMULATION_ROWS) or root.kind == "ops":
        return
    ops = next((c for c in r.causes if c.kind == "ops"), None)
    mine = next((f for f in (ops.locations if ops else ()) if not f.is_library and f.line is not None), None)
    if mine is not None:
        root.locations = [mine] + [f for f in root.locations if f != mine]


OPTIMIZER_STEPS = ("step", "optimizer_step")
"""Calls that run an optimizer's update: ``opt.step()``, ``xm.optimizer_step(opt)``."""


def _user_sync_of_unplaced(r) -> SourceFrame | None:
    """The sync's frame in the user's file when the root cause has no user line of its own: the two readers that
    place such a root from the sync file's source (an optimizer call, a guarded library call) start from it."""
    sync = r.graph.trigger
    if sync is None or sync.is_library or sync.line is None:
        return None
    if any(not f.is_library and f.line is not None for f in r.causes[0].locations):
        return None
    return sync


def _lead_with(root, sync: SourceFrame, branch: int, call: int) -> None:
    """The ``if`` at ``branch`` and the call at ``call`` in the sync's file lead the root's lines; the hint that no
    line is known goes."""
    root.locations = [SourceFrame(sync.file, branch, sync.function), SourceFrame(sync.file, call, sync.function),
                      *root.locations]
    root.hint = None


def _update_from_source(r, sources: SourceLines) -> None:
    """Gradient accumulation told from a capture whose frames are the optimizer's alone (an XLA dump without the
    live-tensor report: every frame of the update is in ``torch/optim``): the source of the sync's file, when on
    disk, shows the optimizer call nearest before that sync and the ``if`` it is in; both lead, and the hint that
    no line is known goes (the by-hand capture of new-user review 15's accumulation: "line unknown ... sgd.py:375")."""
    root = r.causes[0]
    if root.fix_rule not in ACCUMULATION_ROWS:
        return
    sync = _user_sync_of_unplaced(r)
    if sync is None:
        return
    steps = [n for n in calls_named(sources, sync.file, OPTIMIZER_STEPS) if n < sync.line]
    branch = enclosing_if(sources, sync.file, steps[-1]) if steps else None
    if branch is None:
        return
    _lead_with(root, sync, branch, steps[-1])


def _branch_of_siblings(r, sources: SourceLines) -> None:
    """A :data:`SIBLING_BRANCH_ROWS` root whose user lines lie in no ``if``: the one ``if`` around the other causes'
    user lines in the same file leads, with the first of those lines (none, or two ``if``s: unchanged)."""
    root = r.causes[0]
    if root.fix_rule not in SIBLING_BRANCH_ROWS:
        return
    mine = [f for f in root.locations if not f.is_library and f.line is not None]
    if not mine or any(enclosing_if(sources, f.file, f.line) is not None for f in mine):
        return
    found: dict[int, SourceFrame] = {}
    for cause in r.causes[1:]:
        for f in cause.locations:
            if f.is_library or f.line is None or f.file != mine[0].file:
                continue
            branch = enclosing_if(sources, f.file, f.line)
            if branch is not None:
                found.setdefault(branch, f)
    if len(found) != 1:
        return
    branch, inside = next(iter(found.items()))
    lead = [SourceFrame(inside.file, branch, inside.function), SourceFrame(inside.file, inside.line, inside.function)]
    root.locations = lead + [f for f in root.locations if (f.file, f.line) not in {(x.file, x.line) for x in lead}]


def _guarded_call_from_source(r, sources: SourceLines) -> None:
    """A :data:`GUARDED_CALL_ROWS` cause with no user line: when the row's calls in the sync's file that sit in an
    ``if`` all sit in one, that ``if`` and its first such call lead (calls in two ``if``s: which one runs on some
    steps is not read; none in an ``if``: unchanged)."""
    root = r.causes[0]
    names = GUARDED_CALL_ROWS.get(root.fix_rule or "")
    if names is None:
        return
    sync = _user_sync_of_unplaced(r)
    if sync is None:
        return
    guarded = [(n, enclosing_if(sources, sync.file, n)) for n in calls_named(sources, sync.file, names)]
    guarded = [(n, branch) for n, branch in guarded if branch is not None]
    if len({branch for _, branch in guarded}) != 1:
        return
    call, branch = guarded[0]
    _lead_with(root, sync, branch, call)


def _read_first(r) -> None:
    """A size or slice set by a value read early in the step (both graphs finish a step cut by the same read): the
    read's line is the decision (``int(lengths.max())``, ``scores.tolist()``); the traced lines follow it."""
    read = getattr(r, "read_at", None)
    root = r.causes[0]
    if read is None or read.line is None or root.kind not in ("shape", "attribute"):
        return
    root.locations = [read] + [f for f in root.locations if (f.file, f.line) != (read.file, read.line)]


def _place(cause, sources: SourceLines) -> None:
    rule = cause.fix_rule or ""
    mine = next((f for f in cause.locations if not f.is_library and f.line is not None), None)
    if mine is None or rule not in (BRANCH_ROWS | ACCUMULATION_ROWS | FREEZE_ROWS | PLACEMENT_ROWS | CARRY_ROWS
                                    | ADDED_EACH_STEP_ROWS):
        return
    if rule in ADDED_EACH_STEP_ROWS:
        added = calls_named_in_loop(sources, mine.file, mine.line)
        if len(added) == 1 and added[0] != mine.line:  # two or more: which one adds the ops is not read
            decision = SourceFrame(mine.file, added[0], mine.function)
            cause.locations = [decision] + [f for f in cause.locations if f != decision]
            if cause.fix:  # the row's "-- see {line}" names the line to move out of the loop
                cause.fix = cause.fix.replace(f"see {mine.short()}", f"see {decision.short()}")
        return
    if rule in CARRY_ROWS:
        carried = sources.carried_without_detach(mine.file, mine.line) or []
        if len(carried) == 1 and carried[0] != mine.line:  # two or more: which one keeps the history is not read
            decision = SourceFrame(mine.file, carried[0], mine.function)
            cause.locations = [decision] + [f for f in cause.locations if f != decision]
            if cause.fix:  # the row's "-- see {line}" names where to detach
                cause.fix = cause.fix.replace(f"see {mine.short()}", f"see {decision.short()}")
        return
    if rule in ACCUMULATION_ROWS:
        line, what = enclosing_if(sources, mine.file, mine.line), ""
        if line is None:
            return
    elif rule in BRANCH_ROWS:
        line = enclosing_if(sources, mine.file, mine.line)
        what = f"the `if` that decides whether line {mine.line} is traced"
    elif rule in FREEZE_ROWS:
        lines = calls_named(sources, mine.file, ("requires_grad_", "requires_grad"))
        line, what = _nearest(lines, mine.line), "the requires_grad_ (or .requires_grad =) line"
    else:
        lines = calls_named(sources, mine.file, ("device_put",))
        line, what = _nearest(lines, mine.line, after=True), "the jax.device_put that placed the arguments"
    if line is None:
        if not cause.hint:
            cause.hint = (f"{what} traces nothing, so no capture holds its line: look for it near "
                          f"{mine.short()} (hlodiff reads it from the source when the file is on disk)")
        return
    if line == mine.line:
        return
    decision = SourceFrame(mine.file, line, mine.function)
    cause.locations = [decision] + [f for f in cause.locations if f != decision]


def _nearest(lines: list[int], line: int, after: bool = False) -> int | None:
    """The decision line closest before ``line`` (``after``: the first one after it first, then the last before)."""
    lines = list(lines)
    if not lines:
        return None
    if after:
        later = [n for n in lines if n > line]
        if later:
            return later[0]
    earlier = [n for n in lines if n < line]
    return earlier[-1] if earlier else lines[0]


# -- Dynamo's recompilations: the line that changed what a guard checks, when it traces nothing ---------------------

def dynamo_decision_calls() -> dict[str, tuple[str, ...]]:
    """Per Dynamo fix row, the calls whose line is the decision (Dynamo round 12): a module frozen by
    ``requires_grad_(False)`` (a frozen copy passed to the same compiled function), a torch-wide setting changed
    with ``torch.set_num_threads`` (the name the GLOBAL_STATE guard gives says which call). Dynamo's log names the
    compiled function's line or only torch's wrapper; neither is where the user changed it."""
    from hlodiff.explain.dynamo_guard_kinds import GLOBAL_SETTINGS

    calls = {"dynamo_parameter_requires_grad": ("requires_grad_", "requires_grad"),
             # round 14: the model (or its copy) cast to another dtype: `.to(torch.bfloat16)`, `.half()`
             "dynamo_parameter_dtype": ("bfloat16", "half", "double", "to(bfloat16)", "to(float16)", "to(half)",
                                        "to(float64)", "to(double)"),
             # round 20: a parameter gone from the compiled module: pruned (torch.nn.utils.prune) or parametrized
             "dynamo_parameter_removed": ("l1_unstructured", "random_unstructured", "ln_structured",
                                          "random_structured", "global_unstructured", "custom_from_mask",
                                          "weight_norm", "spectral_norm", "orthogonal", "register_parametrization")}
    for what, setters in GLOBAL_SETTINGS.items():
        names = tuple(call.rsplit(".", 1)[1] for call in setters.split(" or ") if call.startswith("torch."))
        if names:  # round 15: allow_tf32 is set by set_float32_matmul_precision or the flag itself
            calls[f"dynamo_global_setting:{what}"] = names
    return calls


def place_dynamo_decisions(found, sources: SourceLines, user_files: list[str]) -> None:
    """Put the decision's line as the location of each Dynamo recompilation whose row names one, read from the
    source on disk: in the file of its line when it has one, else in the run's user files (``user_files``: those
    the XLA graphs' frames name, in order) when exactly one line there makes the call. Nothing found: unchanged."""
    table = dynamo_decision_calls()
    for r in getattr(found, "recompiles", []):
        key = r.fix_rule if r.fix_rule != "dynamo_global_setting" else f"{r.fix_rule}:{r.subject}"
        names = table.get(key or "")
        if names is None:
            continue
        mine = r.location if r.location is not None and not r.location.is_library and r.location.line else None
        files = [mine.file] if mine is not None else user_files
        found_lines = [(file, line) for file in files for line in calls_named(sources, file, names)]
        if mine is not None:
            line = _nearest([n for _, n in found_lines], mine.line)
            if line is None or line == mine.line:
                continue
            r.location = SourceFrame(mine.file, line, None)  # not in the compiled function: its caller's code
        elif found_lines:
            file, line = found_lines[0]  # the first that sets it: a helper that sets and restores holds both
            r.location = SourceFrame(file, line, None)
        else:
            continue
        r.located = "decision"
    calls_named.cache_clear()
