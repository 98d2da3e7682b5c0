"""One line per cause saying what to change, chosen from what was found, not from the kind alone.

A kind says *what* differs; users want to know what to type. The same ``constant`` kind is a learning rate of
exactly 0 that torch_xla baked into the graph (keep it a tensor) or an index of 0 or 1 (make it a device tensor);
the same ``shape`` kind is a short last batch, a growing cache, a boolean mask or one graph per bucket (expected).
The facts that tell them apart are in the cause's origins (opcodes, shapes, values) and, for what only the run
knows (the pattern, the op that made a tensor, the values over the run), in a :class:`FixContext` the caller fills
in. :func:`decide` is the one decision: cause + context -> a row of :data:`~hlodiff.diff.fix_rules.RULES` and its
arguments; the row's text is the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hlodiff.diff.fix_facts import Evidence, evidence
from hlodiff.diff.fix_rules import RULES, FixRule
from hlodiff.diff.model import Cause


@dataclass(frozen=True, slots=True)
class FixContext:
    """What the run knows about a recompilation that the two graphs alone do not.

    ``producer`` is ``"torch_xla"``, ``"jax"`` or ``None`` (unknown, e.g. two HLO files); ``last_in_family``: the
    recompiled graph is the last its family ran (a short final batch); ``settles``: the family compiles nothing
    after its first few graphs (warm-up); ``first_recompilation``: the first recompilation of its family.
    """

    producer: str | None = None
    last_in_family: bool = False
    settles: bool = False
    first_recompilation: bool = False
    setup: bool = False
    """The family's graphs each ran once while the program set up (initialisation, FSDP wrapping)."""
    period: int = 0
    """The family cycles through a handful of variants with this period (2: alternating); 0 when it does not."""
    others: tuple[str, ...] = ()
    """Kinds of the other causes of the same recompilation: a consequence says which one it follows from."""
    added_inputs: frozenset[str] = frozenset()
    """Right-side names of the parameters the ``inputs`` causes added: torch_xla donating exactly those follows
    from them."""
    second_step: bool = False
    """The recompiled graph is the second its family ran (the first graph differed, then steady: warm-up)."""
    materialized: bool = False
    """On the second step, every output the first graph had and this one lacks came back as an input of its
    shape: a tensor made before the loop was computed by the first step's sync, and is device data since."""
    first_step_made: bool = False
    """On the second step, with the first graph never back: every input added is shaped like an output the first
    graph computed (not one it passed through): tensors made before the loop (zeros, a random init), computed by the
    first step's sync and device data since, which the step keeps updating (so no output went, unlike
    ``materialized``)."""
    eager: bool = False
    """A JAX operation run outside jit (``jit_broadcast_in_dim``): compiled once per shape, not a step."""
    cut: bool = False
    """An early execution cut this step (a ``partial`` cause of the same recompilation)."""
    pattern: str = ""
    """The family's pattern name (``switched``, ``one-off``, ``alternating``, ``recurring``, ``unbounded``...)."""
    ops: frozenset[str] = frozenset()
    """Ops that made the changed value, from ``op_type``/``op_name`` metadata and the live tensor's IR:
    ``nonzero`` (boolean index, masked_select), ``topk``, ``cat``, ``tensor_list``, ``randn``, ``pad``."""
    values: tuple[str, ...] = ()
    value_remade: bool = False
    """A static value made again rather than a few kept: one miss printed the same on both sides, or more
    compilations than distinct values (:func:`hlodiff.explain.fix_context.value_remade`)."""
    """The values the changing size, constant or static argument took over the run, in order."""
    grows: bool = False
    """The changed size grew at every compilation of the family (a cache or history built up step by step)."""
    buckets: bool = False
    """The family recurs over a few input sizes, each seen again: the program already buckets."""
    stayed_grown: str = ""
    """Round 33: ``16 -> 32``, an input of the family that grew once and stayed while the data's size came back to
    one compiled before (:mod:`hlodiff.explain.stayed_grown`): a cache extended and never shrunk. Empty otherwise."""
    stayed_other: str = ""
    """Round 33: the same family's fact, on a shape cause that is not the grown input (the long batch's own size)."""
    promoted_at: str = ""
    """Review 12 F7: ``file.py:14``, where the function's earlier compilation made an output in the dtype the changed
    argument now has (it took the old one): the function promotes it and the loop feeds it back
    (:mod:`hlodiff.explain.returned_dtype`)."""
    size_schedule: bool = False
    """Review 12 F3: the family's graphs came one after another, each run on several consecutive steps before the
    next took over and none came back (A,A,A,B,B,B,C,C,C): a schedule of sizes (progressive resizing, a length
    curriculum), not a tensor growing every step."""
    library: str = ""
    """The change happens inside a library's first step (``torch/optim/adamw.py``): expected warm-up."""
    structure: str = ""
    """What a JAX static argument sets in the program (``loop trip count``, ``shapes``, ``branches``): it must
    stay static. Empty when it only sets values (then tracing it is right)."""
    loop_count_only: bool = False
    """A JAX static argument changed only a loop's trip count (a constant in a while condition; no shape, no
    traced op came or went): lax.scan's length, fori_loop's Python bounds."""
    resized_input: bool = False
    """An input added with the new shape of an instruction whose shape changed, the old-shape input still read: a
    parameter or buffer rebuilt at another size mid-run, its old values copied in (round 9, embed_vocab_grow)."""
    batch_rows: bool = False
    """Two or more arguments lost the same leading rows together (:func:`hlodiff.explain.batch_rows.batch_rows`): a
    batch's arrays, the evidence "the last batch is short" needs when only compilations are seen (review 23, F1)."""
    rows_sliced: bool = False
    """The call's arguments are cut from the data by a range slice (``data[i:i + B]``), read from the file on disk
    (:func:`hlodiff.dumps.rows_source.rows_cut_by`): a batch, whose last one is the epoch's remainder (stop 51)."""
    rows_filtered: bool = False
    """The call's arguments are rows kept by a boolean or index array (``x[keep]``), read from the file on disk: a
    size that follows the data, also when several arguments lose rows together (stop 51)."""
    dot_shapes: frozenset[str] = frozenset()
    """Shapes (no layout) the recompiled graph's entry computes with a dot (``f32[8,10]``: a head's logits): an
    input of that shape can be targets over its classes (:func:`hlodiff.diff.input_formats.format_switch`)."""
    unrolled_loop: bool = False
    """A JAX static integer changed only how many copies of the same ops the graph holds, in proportion to its
    value (a Python ``for _ in range(n)`` unrolled in the trace): review 9 F3."""
    branch_on_static: bool = False
    """A JAX static argument changed which ops are traced and nothing else (no shape, no trip count, no copies in
    proportion to its value): a Python ``if`` on it, a stage or mode switching terms on (not a loop count)."""
    axes_passed: bool | None = None
    """The jitted function passes the static argument to vmap/pmap as in_axes/out_axes (read from the source);
    False when the source on disk shows it does not, None when no source is at hand."""
    argument: str = ""
    """The argument JAX named (static arguments)."""
    hlo_identical: bool = False
    two_runs: bool = False
    """The graphs come from two runs (``compare A B`` across two dump folders), not two steps of one run."""
    ops_use_new_inputs: bool = False
    """The operations added read the inputs added: they come with the new argument."""
    new_function: bool = False
    """JAX never saw the function object (created anew, e.g. jitted again every epoch over a closure)."""
    caches_cleared: str = ""
    """Round 21 (r21_jx_clear_caches_epoch): ``t.py:26``, a ``jax.clear_caches()`` call in the calling file, when
    JAX called "never seen" the very object id it had named at the function's previous miss
    (``JaxCacheMiss.same_object``): the same function, forgotten because the caches were emptied. Empty otherwise."""
    transposed_input: bool = False
    """Another cause of the same recompilation is a tensor handed over transposed (its transposes follow it)."""
    comes_back: bool = False
    """The graph this one was compared with runs again after it (A,B,A): the change is no one-time switch or
    warm-up, whatever the family's last graph is. Contradicts every "expected once" row."""
    rng_seed_update: bool = False
    """The cause's instructions are torch_xla's random-seed update (``seed * 214013 + 2531011``) and nothing else:
    one random draw more or fewer in the graph (:mod:`hlodiff.explain.rng_seed`)."""
    last_each_round: bool = False
    """The family repeats one graph and, at the end of every round of its period only, this one (A,A,A,B,A,A,A,B):
    the last batch of each epoch."""
    optimizer_in_cycle: bool = False
    """The family cycles (``period`` > 2) and some of its graphs run an optimizer's update the others lack (ops
    whose frames are in an ``optim`` package): the optimizer steps every few graphs, as gradient accumulation does."""
    rotation: bool = False
    """The family settled into a cycle of three or more distinct graphs, each once per round, with the optimizer's
    update in every one: a fixed rotation of code paths (tasks round-robin), not accumulation."""
    path_swap: bool = False
    """The graphs of a family that recur (alternating, periodic, recurring) differ by a parameter of another shape
    that comes with many instructions added and many removed: the step runs another code path (another head, another
    loss) on some steps, chosen by Python; a block skipped only adds or only removes (review 7, #12)."""
    only_added: bool = False
    """The recompiled graph only gained (inputs, instructions, outputs) over the graph compared with and lost
    nothing: no value the earlier graph computed became an input (an early sync removes the ops that computed it).
    State created on the first step and read from then on (gradients kept by ``zero_grad(set_to_none=False)``)."""
    short_run: bool = False
    """The family ran two whole graphs or fewer: too short to show whether a later step reuses the last graph."""
    final_call: bool = False
    """The family compiled twice and this, its second graph, is the run's last recompilation of any function of
    the user's (eager operations aside): a call with another size at the very end (a final evaluation)."""
    compilations_only: bool = False
    """The capture holds the family's compilations only (an XLA dump folder without executions): whether later
    steps reused a graph cannot be seen in it, however long the run was."""
    first_type: str = ""
    """The element type the family's first graph had where a dtype changed (``s64``): one cast for every
    recompilation of one story, not x.int() for one and x.long() for the next."""
    stays: bool = False
    """The graph compared with never runs again once this one ran, and the family ran on after it: a one-time
    switch that stayed (whatever the family's pattern is called)."""
    variant_steps: tuple[int, ...] = ()
    """Positions (0-based, among the family's whole graphs: the steps of a one-sync loop) where this graph ran."""
    sync_at: object = None
    """The user's frame of the sync that ran the recompiled graph (its trigger), None when a read ran it or no
    stack is known: a changed value made below it in the same loop was computed after the previous step's sync."""
    graph_grows: tuple[int, ...] = ()
    """Instruction counts of the family's compiled graphs when each is larger than the last and every whole graph
    compiled (at least three): the traced history grows step by step (a state carried without ``.detach()``)."""
    scalars_grow: bool = False
    """With ``graph_grows``: every compiled graph takes the same non-scalar inputs and more scalar ones than the last
    (:func:`hlodiff.explain.fix_evidence.scalars_grow`): a list of device scalars summed in the step, no history."""
    joins_grow: bool = False
    """A change of the recompilation is a ``concatenate`` of another operand count (:func:`hlodiff.explain.
    fix_evidence.joins_grow`): a list joined in the step (torch.stack, torch.cat), whichever cause heads."""
    made_after_sync: str = ""
    """The step's sync line (short) when every user line of the outputs this graph adds comes below it in the loop:
    work done after the sync (a validation, a metric) left pending and run inside the next step's graph. Read as the
    fact ``after_sync:validation`` (:func:`hlodiff.diff.fix_facts._after_sync`)."""
    carried_scalar: bool = False
    """One scalar made at a user line is a constant 0 (or absent) on one graph and device data on the other, and
    flows into a scalar output: a running value (a total, a count) restarted at the top of a loop."""
    updated_in_place: bool = False
    """The inputs added come back as outputs of their shapes, made by user lines: tensors read and updated in place
    on these steps only (an EMA of the weights, a periodic update)."""
    params_added: bool = False
    """Every non-scalar input added is a tensor of a shape the compared graph never read, written back and trained
    (:func:`hlodiff.explain.added_parameters.parameters_added`): parameters added to the model mid-run (LoRA
    adapters, a new head), not an existing one resized."""
    state_added: bool = False
    """The same new tensors written back as ``params_added``, with no added gradient computing what is written back
    (:func:`hlodiff.explain.added_parameters.state_added`): a state begun late (a queue), not parameters."""
    trains: bool = False
    """The tensors added are trained, not only updated (:func:`hlodiff.explain.fix_evidence.trains_new_tensors`):
    ``gradient_added`` or ``feeds_step``. An EMA has neither."""
    gradient_added: bool = False
    """The graph adds a dot or convolution (:func:`hlodiff.explain.fix_evidence.gradient_op_added`): a new weight
    gradient, or any new matmul (a queue read for negatives adds one)."""
    feeds_step: bool = False
    """An input the graph adds reaches work both graphs have (:func:`hlodiff.explain.fix_evidence.
    new_inputs_feed_step`): the new tensors feed the step itself, not only their own update."""
    updates_removed: bool = False
    """The outputs removed are shaped like the graph's parameters (gradients, updated weights), two or more: part of
    the model stopped training (frozen)."""
    update_dropped: bool = False
    """One parameter-shaped output went with elementwise work only (its update, not its gradient): the optimizer
    holds a tensor the model no longer uses (:mod:`hlodiff.explain.update_dropped`)."""
    donors_updated: bool = False
    """Beside :attr:`updates_removed`, the parameters torch_xla no longer donates are those whose updates went
    (:func:`hlodiff.explain.fix_evidence.donors_updated`): the donation follows from the freeze."""
    donors_trained: bool = False
    """The mirror: the parameters torch_xla now donates are those the graph starts to train
    (:func:`hlodiff.explain.fix_evidence.donors_trained`): the donation follows from the unfreeze."""
    keywords: str = ""
    """The argument names JAX saw passed by keyword on one call and positionally on the other (``'x'``)."""
    log_unjoined: bool = False
    """A JAX log was given, but none of its compilations could be matched to the dumped modules."""
    pytree: bool = False
    """JAX said the arguments' pytree structure changed."""
    nondiff_callee: str = ""
    """The jax.custom_vjp/custom_jvp function a static argument feeds at a ``nondiff_argnums`` position (read from
    the source: :mod:`hlodiff.dumps.nondiff_source`), which is why the user made it static. Empty otherwise."""
    metadata_identity: str = ""
    """JAX said a pytree node's metadata (aux_data) did not match, and on both calls it is an object of one class
    with the default repr: ``"Batch:Info"`` (node class, metadata class). Empty otherwise."""
    metadata_functions: str = ""
    """JAX said a pytree node's metadata did not match, and on both calls it holds the same functions but new ones
    (equal once their addresses are left out): ``"TrainState:make_sgd.<locals>.init"`` (node class, first function).
    Empty otherwise."""
    pullback: bool = False
    """JAX said the pytree node that changed is a pullback (``jax.vjp``'s ``VJP``, a linearized function): its
    structure holds the traced forward, new at every ``jax.vjp`` (:data:`hlodiff.explain.jax_pytree_reasons.PULLBACK_NODES`)."""
    list_length: str = ""
    """JAX said an argument's list (or tuple) changed length: ``"list:1 -> 2"`` (container, lengths before and now),
    a Python list passed to the jitted function growing or shrinking (review 3, F1b). Empty otherwise."""
    placement: bool = False
    """JAX reused its trace (no cache miss, same options) and still compiled: the arguments' devices or sharding."""
    context_setting: str = ""
    """Review 12 F5: the same HLO compiled again with no cache miss of its own, on a line where JAX's log names a
    config context change for another compilation (``jax_default_matmul_precision``): the context, not a placement
    (:mod:`hlodiff.explain.jax_contexts`). Empty otherwise; ``context_line`` is that line (``t.py:28``)."""
    context_line: str = ""
    library_branch: str = ""
    """Round 20: every changed instruction was traced in a library file that branches on its own step count
    (:mod:`hlodiff.explain.library_branches`): the branch in words. Empty otherwise."""
    slice_start: bool = False
    """The graphs differ only in where slices start, never in their lengths: a window's start baked in."""
    loop_counter: bool = False
    """A JAX static argument the caller passes as a loop's step count (``for step in range(start, end)``, read from
    the source: :mod:`hlodiff.dumps.loop_counters`): values that count up without a ceiling, not a statistic of the
    data however bunched they are."""
    library_start: str = ""
    """The family's run of once-only graphs settling into one, whose changes all reach one file of
    :data:`hlodiff.explain.library_branches.LIBRARY_BRANCHES` (:func:`~hlodiff.explain.library_branches.library_start`):
    that library's start in words. Empty otherwise."""
    inputs_follow: bool = False
    """A JAX static argument whose value is a dimension of input arrays that changed with it (``n_nodes`` 20 -> 17
    and ``nodes`` f32[20,8] -> f32[17,8]): a size of the batch itself, not a constant of the dataset."""
    block_repeats: str = ""
    """Instructions each recompilation of the family added (``45, 44``) when each only adds about the same block and
    the earlier graphs never come back: a Python loop unrolled once more per stage. Empty otherwise."""
    ops_each_step: str = ""
    """Instructions each recompilation of the family added (``16, 15, 15``) when every whole graph compiled and each
    recompilation only adds about the same block of ops (:func:`hlodiff.explain.family_order.ops_added_each_step`):
    the same code runs once more every step, no history carried. Empty otherwise."""
    read_branch: bool = False
    """The family's whole graphs (no early read in them) differ only in which ops run, never in a size: a value
    read early chose a branch (``if loss > 4:``), not a length."""
    branch_lines: str = ""
    """With ``read_branch``: the user's lines traced after the reads on some steps only (``t.py:15, 19``), where
    the branches differ (:func:`hlodiff.explain.after_reads.branch_lines`)."""
    slices_rearranged: bool = False
    """Every slice whose bounds look changed takes bounds the other graph also slices (from an operand of the same
    shape): paired across another arrangement, no bound changed."""
    none_leaf: bool = False
    """JAX said a pytree leaf of the arguments was ``None`` on the other call (state created lazily, ``m = None``
    before the first step, or an optional argument left out: ``mask=None`` when nothing is padded)."""
    state_returned: bool = False
    """Every input the recompiled graph gained comes back as an output of its shape: state the step carries from
    call to call (a momentum created on the first step), not an argument the caller passes in fresh (a mask)."""
    inputs_repeat: bool = False
    """The inputs one graph lacks are more of the same: non-scalars shaped like inputs both graphs keep (a Python
    loop over a list whose length changes: micro-batches of an accumulation group)."""
    read_sets_trace: int = 0
    """How many different whole graphs compiled right after an early read of this family (two or more: the value
    read decides what is traced next, e.g. ``x[:, :int(lengths.max())]``); 0 when the rest of the step is stable."""
    reads_pile_up: bool = False
    """Every graph of this growing family but the last ran early for a read: nothing marks the step between the
    reads, so each runs every step pending since the last mark (:func:`hlodiff.explain.fix_evidence.reads_pile_up`)."""
    read_condition: bool = False
    """Every graph an early read of this family ran hands back one-element booleans only: the value read is a
    condition that decides what the step does (skip the optimizer step), not a number to log
    (:mod:`hlodiff.diff.condition_read`)."""
    read_in_condition: bool = False
    """An early read's line is the test of a Python ``if``/``while`` in the source on disk (``if loss.item() > 1e6:
    continue``): the value, a number, decides by a comparison in Python whether the rest of the step runs."""
    across_ranks: bool = False
    """The two graphs are two ranks' at one step (the divergence section), not two steps of one rank."""
    no_collective: bool = False
    """With ``across_ranks``: neither rank's graph holds a collective and neither was compiled again, so no rank
    waits for the other's extra work (:func:`hlodiff.explain.ranks._mark_no_collective`)."""
    library_read: str = ""
    """The row of :data:`hlodiff.diff.library_reads.LIBRARY_READS` whose library function made every early read of
    this family (torch_xla's clip_grad_norm_ checking the norm): the user's code reads nothing. Empty otherwise."""
    state_begun_late: bool = False
    """This graph only adds outputs that the next graph reads back as optimizer inputs: optimizer state begun after
    the first steps (:func:`hlodiff.explain.optimizer_state.state_begun_late`: momentum switched on from 0)."""
    reads_state_begun_late: bool = False
    state_reset: bool = False
    """The optimizer's state is made anew again and again: the first step's graph comes back after this one, which
    reads the state back (:func:`hlodiff.explain.optimizer_state.state_reset`: an optimizer built each epoch)."""
    """This graph reads back, in torch.optim, the state the graph it is compared with began (the next step's)."""
    cpu_fallback: bool = False
    anomaly_check: bool = False
    """The early execution was autograd anomaly mode's NaN check (:mod:`hlodiff.dumps.anomaly_checks`)."""
    """The early execution handed back empty ``out=`` buffers: an op with no XLA lowering ran on the CPU (an aten
    fallback, :func:`hlodiff.explain.cuts.cut_reason`), not a read of the user's."""
    entries: frozenset[str] = frozenset()
    """Names of the two graphs' entry computations: a changed parameter elsewhere (a loop body's, a called
    function's) is no argument of the program. Empty when unknown (then every parameter counts)."""

    @property
    def updated_from_step(self) -> bool:
        """Tensors read and updated in place (``updated_in_place``) from this graph on, the earlier graph never back
        (``stays``): the one evidence of three rows (layers unfrozen, tensors trained from a step, an EMA begun
        after a warm-up), which ``trains`` then tells apart; on some steps only is another row's."""
        return self.updated_in_place and self.stays


@dataclass(frozen=True, slots=True)
class FixChoice:
    """The decision: which rule, with which arguments. :attr:`text` is the fix as printed."""

    rule: FixRule
    args: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.rule.text.format_map(_Missing(self.args))


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "?"


_LAYOUT_ONLY = frozenset({"transpose", "copy", "bitcast"})


def sibling_kind(cause: Cause) -> str:
    """A cause's kind as the other causes of its recompilation see it (``with:<kind>``): an ops change made only of
    transposes, copies and bitcasts appearing or going is ``ops_layout``, no value computed differently. Review 11
    (F4, tx_ema_control): two equal Python scalars passed as one input moved two transposes, and the input removed
    was told "follows from the ops change: the operations removed read this number" with no operation removed."""
    if cause.kind == "ops":
        opcodes = {(c.right or c.left).opcode for c in cause.origins if (c.right or c.left) is not None}
        if opcodes and opcodes <= _LAYOUT_ONLY:
            return "ops_layout"
    return cause.kind


def apply_fixes(causes: list[Cause], context: FixContext = FixContext()) -> None:
    """Set ``fix`` on every cause that has none yet (a cause built with a fix, e.g. from JAX's log, keeps it)."""
    if not context.added_inputs:
        context = replace(context, added_inputs=added_inputs(causes))
    for cause in causes:
        if cause.fix is None:
            others = tuple(sibling_kind(c) for c in causes if c is not cause)
            set_fix(cause, replace(context, others=others))


def decide(cause: Cause, context: FixContext = FixContext()) -> FixChoice:
    """The fix rule for a cause in its context: the first row of the table that the evidence satisfies."""
    found: Evidence = evidence(cause, context)
    return FixChoice(choose(cause.kind, found.facts), found.args)


def choose(kind: str, facts: frozenset[str]) -> FixRule:
    """The first row of the table for this kind whose needs hold and whose ``unless`` facts do not."""
    return next(rule for rule in RULES if rule.applies(kind, facts))  # the last row applies to every cause


def fix_for(cause: Cause, context: FixContext = FixContext()) -> str:
    return decide(cause, context).text


def set_fix(cause: Cause, context: FixContext) -> None:
    """Decide and record the fix on the cause: its text and the rule's name (``fix_rule`` in JSON)."""
    choice = decide(cause, context)
    cause.fix, cause.fix_rule = choice.text, choice.rule.name


def added_inputs(causes: list[Cause]) -> frozenset[str]:
    """Right-side names of the parameters that ``inputs`` causes list as added."""
    return frozenset(b for c in causes if c.kind == "inputs" for a, b in c.instructions if a is None and b)
