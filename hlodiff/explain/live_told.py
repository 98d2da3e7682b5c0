"""What a live line tells of a recompilation (:class:`~hlodiff.explain.live_events.Told`) and when its fix waits for
the steps to come: the rules as data (:data:`NEEDS_THE_END`, :data:`NEEDS_MORE_STEPS`) and the live words that
stand in for a fix the report at exit gives from logs read at the end (:data:`BRIDGE_LIVE`, :data:`JAX_KEY_LIVE`).
:mod:`hlodiff.explain.live` decides when to look again; this module, what is said each time."""

from __future__ import annotations

from hlodiff.dumps.graph_record import TRACED_KINDS
from hlodiff.explain.dynamo_bridge import bridge_compiling, bridge_ops, bridge_run
from hlodiff.diff.fixes import FixChoice, choose
from hlodiff.explain.live_dynamo import BRIDGE_FOLLOWS
from hlodiff.explain.live_events import Told

NEEDS_THE_END = frozenset({"shape_last_batch", "shape_last_batch_jax", "shape_last_batch_sliced_jax"})
"""Fix rules that rest on the graph being its family's last ("the last batch is short"): while the run goes on, the
newest graph is always the last so far, which says nothing. Such a fix waits for the next steps (an ``update``)."""

NEEDS_MORE_STEPS = frozenset({"inputs_seen", "ops_branch", "traced_some_steps", "ops_library_setting", "partial_read",
                              "shape_input", "shape_python_size", "inputs_updated_some_steps"})
"""Fallback fix rules, chosen when no fact of the run's steps is known yet ("sync at the same points", "a Python
`if`", "traced on steps 1 and 3 only" (review 15, F4: gradient accumulation's first cycle), "a library call ran with
another setting", "read it after the sync", "pad inputs to a few fixed sizes", "a
size follows a Python value", "weight-shaped tensors updated in place on step 4 only" (round 27: a pruning
reparametrization, and ulmfit_unfreeze's layers that start training, keep the new tensors for good: "only" and "an
EMA" were said of a change seen once)): on a family's first recompilations the window has two or three graphs, and the report
at exit replaces these with what the steps show (accumulation's short group, a setting switched once, a size that
stayed or grows, tasks in rotation, a second graph after the read). With executions followed (cache hits seen), such
a fix waits for the next steps: while the family compiles again it stays put off (up to
:data:`~hlodiff.explain.live_families.DEFERRED` recompilations), and it is told once a step reused a graph and the steps say
more, after :data:`~hlodiff.explain.live_families.SETTLED` cache hits, or at the end. A dump of compilations alone (JAX)
tells it at once, since no hit would settle it before the end."""


NEEDS_NO_RETURN = frozenset({"shape_short_batch_once"})
"""Rows that rest on the change not coming back ("one batch came with fewer rows and the next ones were full
again"): an epoch's short last batch is told so after the epoch's next full batch, and again at the next epoch's end
as "the last batch of each epoch" (review 17, F8: X1's one recompilation told in three lines, the first saying its fix
would come "once the next steps show"). Such a fix waits as :data:`NEEDS_MORE_STEPS` do: told once the steps settle
it (:data:`~hlodiff.explain.live_families.SETTLED` cache hits without it coming back), the change comes back, or at
the end."""


BUCKET_ROWS = frozenset({"shape_buckets", "shape_buckets_inner"})
"""Rows that call sizes "expected: one graph per bucket": from every execution seen (``counts_from ==
"executions"``), a size that has run once only shows no bucket yet, only a size that came once (round 26,
r26_tx_selfpaced_tail: an epoch's tail of 8 then full batches of 16 again was told "2 sizes that recur (16, 8) ...
nothing to fix" at step 2; each later epoch ended on another size, and the report at exit says drop the tail).
While the run goes on, such a fix waits until every size has run twice (:func:`bucket_waits`), or the end."""


def bucket_waits(recompilation, root) -> bool:
    """The bucket row's "expected" rests on a size that has run once only (:data:`BUCKET_ROWS`): of the two sizes
    this recompilation changed between, over every execution of its family seen so far."""
    from collections import Counter

    from hlodiff.explain.family_buckets import counts_from_of, family_sizes_seen

    if root.fix_rule not in BUCKET_ROWS:
        return False
    for family, seen in family_sizes_seen([recompilation]).values():
        if counts_from_of(family) == "executions" and any(n < 2 for n in Counter(seen).values()):
            return True
    return False


ONCE_RULES = frozenset({"inputs_made_before_loop", "outputs_made_before_loop"})
"""Rows whose fix says "expected once" (a tensor made before the loop, computed by the first step's graph): true only
if the next steps reuse the graph. On a family's second step such a recompilation is held as ``pending`` until the
next execution says (review 15, F4: tx_grad_accum's step 1 was told "expected", then a real recompilation)."""


BRIDGE_LIVE = ("a graph torch_xla's Dynamo bridge compiled (for a Dynamo graph, its backward, or the sync of the "
               "call's inputs): why Dynamo traced again is in Dynamo's log, told in the report at exit")
"""The live fix of a recompilation of the bridge's graphs: the graphs alone cannot say which Dynamo decision made
them, and the words of a user's own sync (a cast, a metric, accumulation) do not apply."""

JAX_KEY_LIVE = ("the HLO is identical: JAX's cache key changed outside it; which argument or function changed is in "
                "JAX's cache-miss log (JAX_EXPLAIN_CACHE_MISSES=1, which hlodiff record sets), quoted in the report "
                "at exit")
"""The live fix of a JAX recompilation with the same HLO: the log that names the reason is read at the end, so the
live line points there, never "rerun with JAX_EXPLAIN_CACHE_MISSES=1" under a record that set it (review 3, F7)."""


def told_of(recompilation, running: bool = False, dynamo_log: bool = False, settled: bool = False) -> Told:
    """What is told of a recompilation: while the run goes on (``running``), a fix that rests on the steps to come
    waits (:data:`NEEDS_THE_END`; :data:`NEEDS_MORE_STEPS` until the family's steps ``settled`` it)."""
    causes = recompilation.causes
    if not causes:
        return Told("unknown", "no difference found against the closest earlier graph", None, None,
                    closest=recompilation.closest.ref if recompilation.closest else None)
    root = causes[0]
    more = [(c.kind, c.summary, c.locations[0] if c.locations else None) for c in causes[1:4]]
    diff = recompilation.diff
    # a graph the bridge made known by its ops alone (no stack: e-nolog) is the bridge's as well, as the report at
    # exit counts it (Dynamo round 24, d24_seed_in_forward: the resume function's graph told "drop `dtype=`")
    bridge = bridge_run(recompilation.graph.record.frames) or bridge_ops(recompilation.graph)
    waits = running and not bridge and (root.fix_rule in NEEDS_THE_END or (  # a bridge graph's words are Dynamo's
        not settled and root.fix_rule in NEEDS_MORE_STEPS | NEEDS_NO_RETURN
        and recompilation.graph.record.kind in TRACED_KINDS))
    waits = waits or (running and not bridge and bucket_waits(recompilation, root))
    fix = root.fix
    if lazy_random_input(recompilation):  # review 10 F1: its own story, as at exit
        fix = FixChoice(choose(root.kind, frozenset({"dynamo", "bridge_graph", "rng_seed_update"})), {}).text
    elif bridge and not (_baked_at_user_line(root) and not _inside_the_compiled_code(recompilation)):
        # review F5: no dtype cast or metric for a graph the bridge made; Dynamo's log says why (on its own line
        # once it is read: hlodiff.explain.live_dynamo)
        fix = BRIDGE_FOLLOWS if dynamo_log else BRIDGE_LIVE
    elif root.fix_rule == "cache_key_jax":
        fix = JAX_KEY_LIVE
    return Told(root.kind, root.summary, root.locations[0] if root.locations else None, None if waits else fix,
                more, recompilation.closest.ref if recompilation.closest else None,
                diff.similarity if diff is not None else None, waits, rule=root.fix_rule if fix == root.fix else None)


def lazy_random_input(recompilation) -> bool:
    """A graph the Dynamo bridge ran that differs from its closest only by a seed update (row ``ops_rng_seed``
    from the graphs alone): the sync of a call's input drawn on the device with no sync since (review 10 F1)."""
    causes = recompilation.causes
    return (bool(causes) and causes[0].fix_rule == "ops_rng_seed"
            and bridge_run(recompilation.graph.record.frames))


def _inside_the_compiled_code(recompilation) -> bool:
    """The bridge's compile path ran the graph (``extract_compiled_graph``, turning a new Dynamo graph into XLA
    graphs), or the constant is told inside the function whose traced FX graph the bridge ran (``forward``, the
    ``<eval_with_key>`` frame's function), so a constant in it was baked by Dynamo's trace (a module's rate, 0.7 -> 0.8 for a dropout p of
    0.3 -> 0.2, its ops told at the compiled forward's lines) and follows from Dynamo's decision, not from a Python
    number the user should pass as a device tensor (new-user review 20, F5: that fix, told beside Dynamo's guard on
    the same p, contradicted it). The sync of the call's inputs (run on every call, not compiling) keeps a lazy value
    sliced on a line of its own (dyn_window_slice's ``series[t:t + 16]``) with its own fix."""
    frames = recompilation.graph.record.frames or ()
    root = recompilation.causes[0]
    at = root.locations[0] if root.locations else None
    traced = {f.function for f in frames if f.file.startswith("<eval_with_key>")}  # the FX graph Dynamo made, run
    return bridge_compiling(frames) or (at is not None and at.function in traced)


def _baked_at_user_line(root) -> bool:
    """A constant or attribute of the bridge's graph made at a line of the user's own (not torch's ``_ops.py``):
    the sync of the call's inputs, lazy values the user made before the call (a window ``series[t:t+16]`` sliced by
    a Python int, Dynamo round 10). No Dynamo decision made it, so its own fix (index with a device tensor) is the
    story live as at exit; a Dynamo graph's own constants name torch's lines and keep the bridge's words."""
    return root.kind in ("constant", "attribute") and bool(root.locations) and not root.locations[0].is_library

