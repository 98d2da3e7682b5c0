"""The fix rules: one table, each row naming the cause kinds it answers, the evidence it needs, the evidence that
rules it out, and the fix it gives.

A row is chosen by :func:`hlodiff.diff.fixes.decide`: the first row (in table order) whose kind matches, whose
``needs`` all hold and none of whose ``unless`` holds. Evidence is a set of fact names (see
:mod:`hlodiff.diff.fix_facts` for what each one means and where it is read from); a row's ``text`` is filled in
with the arguments the facts carry (``{lead}``, ``{cast}``, ``{library}``...). Order matters only between rows of
one kind: specific evidence first, the rows that say what was seen and what to check last. ``tests/test_fix_rules.py``
has one test per row.
"""

from __future__ import annotations

from dataclasses import dataclass

ANY = frozenset({"*"})


@dataclass(frozen=True, slots=True)
class FixRule:
    name: str
    kinds: frozenset[str]
    needs: frozenset[str]
    text: str
    unless: frozenset[str] = frozenset()

    def applies(self, kind: str, facts: frozenset[str]) -> bool:
        return ((self.kinds is ANY or kind in self.kinds) and self.needs <= facts
                and not (self.unless & facts))


CONDITION_READ_RULE = "partial_read_condition"
"""The row for a value read early that is a boolean condition (:mod:`hlodiff.diff.condition_read`); ``hlodiff
cost`` words its read-in-step finding with the same row."""


def _rule(name: str, kinds: str, needs: str, text: str, unless: str = "") -> FixRule:
    return FixRule(name, ANY if kinds == "*" else frozenset(kinds.split()), frozenset(needs.split()), text,
                   frozenset(unless.split()))


# Round 7 (scalar_tensors_collide, and a side run: 2.0, 1.0, 0.0, 0.5, 3.0 each compiled anew): torch_xla 2.9 treats
# a 0-d tensor made per step, on the device or moved there, as the Python number it holds (0 and 1 baked in, equal
# values one parameter); a one-element 1-d tensor moved from the host, indexed in the graph, is data whatever its value.
_ZERO_D = ("a 0-d tensor (torch.tensor(v, device=device)) is still treated as the number itself (0 and 1 baked in, "
           "equal values merged)")

_LIBRARY_WARMUP = ("expected warm-up: {library}'s first step differs (it creates its state there), every later step "
                   "reuses one graph; nothing to fix")

_STATE_COPY = ("tensors copied from the host into the module's parameters (model.load_state_dict, param.copy_, "
               "traced in torch.nn.Module's own code, not in a layer) are still pending when the next step is "
               "traced, so that step compiles once more with the copy in it{what}: call torch_xla.sync() right "
               "after the copy, so it runs as a small graph of its own and the step's graph is reused; or accept one "
               "compilation per restore")

_MADE_FIRST_STEP = ("expected once: the first step's graph also computed tensors ({shapes}) that the later steps read "
                    "as device data: tensors made before the loop (zeros, an initial value) or state an optimizer "
                    "creates on its first step; nothing to fix (call torch_xla.sync() right after creating tensors "
                    "before the loop to keep them out of the first step)")

# Columns: name, kinds ("*": any), needs (facts, space-separated), text, unless (facts).

_TO_F64 = ("an input arrives as float64 where it was {before}: float64 is NumPy's default (np.array of Python "
           "floats, kept by torch.from_numpy / torch.tensor(array)), not a type the model asked for: make it "
           "{before} where the array is made (np.array(..., dtype=np.{before}), or torch.from_numpy(a).float()) "
           "before .to(device), so every step sees one type; float64 on the device is slow (emulated on TPU)")

RULES: tuple[FixRule, ...] = (
    # -- what the run's shape says before any kind: expected compilations ---------------------------------------
    _rule("setup_once", "*", "setup",
          "expected: each setup graph (initialisation, wrapping) ran once; nothing to fix"),
    # review 12 F5/F8b (rev12_jx_matmul_precision seen live): an eager op compiled again for the same shapes, with no
    # device seen to differ and no context named yet (JAX logs the context at the jitted call after the eager op)
    _rule("eager_op_same_hlo", "cache_key", "eager hlo_identical",
          "expected: JAX compiled an operation run outside jit again for the same shapes: its cache also keys on the "
          "config context around the call (a `with jax.default_matmul_precision(...)` or "
          "`jax.numpy_dtype_promotion(...)` block) and on the device its arguments live on; nothing to fix unless "
          "these compilations add up", unless="torch_xla"),
    _rule("eager_op", "*", "eager",
          "expected: JAX compiles an operation run outside jit once per new shape or dtype it is called with; "
          "create such arrays inside the jitted function (or with one shape) if these compilations add up",
          unless="torch_xla"),
    # eleventh stop (r20_tx_swa_update_read): a library's start told over several steps (SWA's copy, then its
    # average with the counter baked once, then one graph): every kind the change shows, ahead of the kind's own
    # rows, which would send the user to a line of theirs that is not there
    _rule("library_start", "ops inputs constant reordered outputs", "library_start torch_xla",
          "expected once, by the library's design: {branch}; the graph changes there over these steps and is reused "
          "from then on; nothing to fix", unless="jax comes_back"),
    _rule("cut_follows_mask", "*", "cut op:nonzero",
          "follows from the mask index above: its kept count sets these sizes; fix that and this goes too",
          unless="is:partial"),
    _rule("cut_follows", "*", "cut", "follows from the early read above: fix that and this goes too",
          unless="is:partial"),
    # -- JAX: a Python list argument that changed length (review 3, F1b): the graph's ops follow from its items ----
    _rule("follows_list_length_jax", "ops constant", "jax list_length",
          "follows from the {container} above changing length ({lengths}): the ops that read its items, and the "
          "count baked in with them (a mean's divisor), change with it; fix the {container} and this goes too"),
    # -- two ranks at one step (the divergence section), not two steps (review 2026-11-27 F7) -----------------------
    # round 8 (spawn_rank_metric_control): the extra work holds no collective and nothing compiled again: no rank
    # waits on it; told as what it is, with what to check, never as a hang
    _rule("ranks_value_on_some_ranks_no_collective", "outputs ops", "across_ranks no_collective",
          "{ranks} computes something at {line} that {others_not} (a Python `if` on the rank); neither graph holds "
          "a collective and each rank compiled its own graph once, so no rank waits for it and nothing "
          "recompiled: nothing to fix (if the step later gains collectives, such as a gradient all-reduce, "
          "every rank must trace the same ones)"),
    _rule("ranks_value_on_some_ranks_xla", "outputs ops", "across_ranks torch_xla",
          "{ranks} computes something at {line} that {others_not} (a Python `if` on the rank, such as "
          "`if xm.is_master_ordinal():`): compute it on every rank (use it where you need it), or read it in "
          "xm.add_step_closure; ranks that run different graphs wait for each other in their collectives",
          unless="lead_change"),
    _rule("ranks_value_on_some_ranks", "outputs ops", "across_ranks",
          "{ranks} computes something at {line} that {others_not} (a Python `if` on the rank or process "
          "index): compute it on every rank, so every rank runs the same graph; ranks that run different graphs "
          "wait for each other in their collectives", unless="lead_change torch_xla"),
    # review 9 (F4, rev9_rank_pad): both ranks have 4 rows, each padded to the longest sentence of its own shard
    # (s64[4,4] against s64[4,6]): the data splits evenly, dropping a remainder changes nothing
    _rule("ranks_padded_length", "shape", "across_ranks on_input inner_dims_only",
          "{ranks} gets inputs of another length than {others} with as many rows (the first dimension is the same, "
          "a later one differs): each rank sizes its batch by its own data, such as padding to the longest "
          "sequence it holds: pad every rank to one length fixed for all ranks (a global max_length, e.g. "
          "padding=\"max_length\"), so every rank runs the same shapes"),
    _rule("ranks_uneven_data", "shape", "across_ranks on_input",
          "{ranks} gets inputs of another size than {others}: the data does not split evenly over the "
          "ranks (a short last batch on some): pad the shard or drop the remainder so every rank runs the same "
          "shapes"),
    _rule("follows_new_function", "ops constant shape dtype attribute inputs outputs reordered layout",
          "new_function jax",
          "follows from the function created anew (JAX never saw it): the values it closes over are baked in and "
          "change what is traced; jit it once and pass such values as arguments", unless="is:cache_key"),
    # review 2, F1: a fixed rotation of code paths (tasks round-robin), each compiled once; what changes with the
    # path (another loss's types and sizes) follows from it
    _rule("rotation_follows", "dtype shape constant attribute", "rotation with:ops",
          "follows from the ops change: each code path of the rotation traces its own values (another loss, another "
          "head: other types and sizes)", unless="jax"),
    # review 11 (F5, tx_ring_index): a ring buffer made before the loop (torch.zeros on the device) is computed by
    # the first step's graph and read as an input from the second on, while the slot index rotates: the input
    # added is that buffer, not a code path of the rotation (no heads, no tasks)
    _rule("rotation_input_made_first_step", "inputs", "rotation first_step_made added first_recompilation",
          _MADE_FIRST_STEP, unless="jax comes_back"),
    _rule("rotation_paths", "ops inputs outputs", "rotation",
          "expected by design: the step runs one of {period} code paths in a fixed rotation (a Python choice such "
          "as tasks or heads visited round-robin), each compiled once and reused every round (earlier graphs that "
          "never come back are its warm-up, e.g. while gradients are first created); nothing to fix; for one graph, "
          "run every path (all heads) every step and weight their losses", unless="jax"),
    # review 7 (#12): two heads, each with its own loss, picked by a Python `if` per step: the weights of the other
    # head enter the graph with other shapes, its ops and its loss's types with them; told as the code path it is,
    # not as a dtype= or a random size (the graph's constants and shapes only follow from the head chosen)
    _rule("path_swap_follows", "dtype constant attribute inputs outputs", "path_swap",
          "follows from the code path switch: the other head (or loss) traced on those steps brings its own "
          "types, constants and outputs", unless="jax dynamo rotation"),
    _rule("path_swap", "shape", "path_swap",
          "expected by design: a Python branch (an `if` on the task, the step) picks another head or loss on some "
          "steps; its weights (another shape{seen}) and its ops enter the graph in place of the other's, so each "
          "path is one graph, compiled once and reused; nothing to fix while the paths are few; for one graph, "
          "compute both heads every step and select or weight their losses (a 0/1 tensor per task)",
          unless="jax dynamo rotation"),
    # -- Dynamo (issue 31): the guard Dynamo printed before it compiled again (only causes with the fact "dynamo") --
    # Dynamo, round 2: what the failed guard is about, read from the guard's form and the XLA side joined to it
    # review 2026-11-27 F5: an XLA recompilation of the bridge's graphs when Dynamo's log is read is no cause of the
    # user's own: a new Dynamo graph is new XLA graphs, and the bridge syncs the call's inputs around it
    _rule("dynamo_bridge_follows_expected", "*", "dynamo bridge_graph follows_dynamo dynamo_expected",
          "expected: follows from Dynamo's recompilation {cid} above ({guard}): torch_xla's bridge compiles each "
          "new Dynamo graph to XLA graphs of its own; nothing to fix", unless="jax"),
    _rule("dynamo_step_follows_expected", "*", "dynamo step_follows_expected",
          "expected: follows from Dynamo's recompilation {cid} above ({guard}): the step around the compiled call "
          "changed with it, each version compiled once; nothing to fix", unless="jax"),
    # Dynamo round 11 (d11_opt_grad_none): the eager step around a compiled call cycles with Dynamo's unexpected
    # retrace (a part of the model used on some steps only): the guard's story, not "gradient accumulation"
    _rule("dynamo_step_follows_guard", "*", "dynamo step_follows_dynamo",
          "follows from Dynamo's recompilation {cid} above ({guard}): the step around the compiled call takes one "
          "version per set of gradients present, on the same steps as that guard (the part of the model used on "
          "some steps only, its backward, its update); fix what that guard says and this goes with it",
          unless="jax"),
    # Dynamo round 11 (d11_mixup_lambda): past the recompile limit the frame runs eagerly, its ops in the step's
    # own graph: that graph follows from the limit (not "a value kept on some steps", not a warm-up)
    # Dynamo round 20 (d20_layerdrop_random): the step graphs of a function Dynamo made no graph of (a break gave it up)
    _rule("dynamo_eager_break", "*", "dynamo eager_break",
          "Dynamo made no graph of {function}: the graph break at {at} above ({seen}) gave it up, so it runs "
          "uncompiled and torch_xla traces its ops into this step's graph with whatever its Python chose on this "
          "call (which branch, which blocks run): the likely reason this graph changed; fix the break first (its "
          "fix above), and if the step still compiles anew, what changes is outside that function",
          unless="jax"),
    _rule("dynamo_past_limit", "*", "dynamo past_limit",
          "follows from Dynamo's recompile limit ({limit}, hit at {cid}): later calls of that function run without "
          "Dynamo, so torch_xla traces their ops eagerly into the step's own graph (this one holds its lines); fix "
          "what Dynamo's guard says ({guard}) so one compiled graph serves every call, and this goes with it",
          unless="jax"),
    # Dynamo, round 7: the first compiled call's step, cut by the bridge while it compiled (told with its own row
    # when that row is not already an expected one: "a value is kept on some steps only" sent users looking)
    # review 11 (F1, dc_unfreeze / dc_train_eval by hand): an XLA dump of a torch.compile run read without
    # torch_xla's execution log lists compilations only; the step graphs of the first compiled calls (cut by the
    # bridge's own syncs) then look like recompilations, and steps named from the dump's order were made up
    _rule("dynamo_compilations_only", "*", "dynamo compilations_only_run",
          "expected if it ran in the first steps, which this capture cannot tell: an XLA dump of a torch.compile "
          "run lists compilations only, and the first compiled calls' steps (cut by torch_xla's Dynamo bridge with "
          "syncs of its own while it compiles) compile variants like these, each once; to tell, capture "
          "torch_xla's execution log beside the dump (PT_XLA_DEBUG_LEVEL=2 PT_XLA_DEBUG_FILE=DIR/pt_xla_debug.log) "
          "or run under `hlodiff record`", unless="jax"),
    _rule("dynamo_first_call_sync", "*", "dynamo first_call_sync",
          "expected warm-up: the step of the first compiled call (and of any call Dynamo compiled anew for), which "
          "torch_xla's Dynamo bridge cut with syncs of "
          "its own while it compiled (a tensor it synced then is device data on that step only, an output on every "
          "later one); every later step reuses one graph; nothing to fix", unless="jax"),
    _rule("dynamo_bridge_follows", "*", "dynamo bridge_graph follows_dynamo",
          "follows from Dynamo's recompilation {cid} above ({guard}): torch_xla's bridge compiles each new Dynamo "
          "graph to XLA graphs of its own; fix what that guard says and these go", unless="jax"),
    # review 10 F1 (dc_control_break): `compiled(torch.randn(..., device=dev))` with no full sync between calls:
    # torch_xla chains the device seed's update per draw (seed * 214013 + 2531011) until torch_xla.sync() resets
    # it, and the bridge syncs only the call's inputs, so the input's graph is one update longer each call (10
    # calls, 11 compilations; a sync after the input: 3). Its own words, never "each once; nothing to fix"
    _rule("dynamo_bridge_lazy_random_input", "ops", "dynamo bridge_graph rng_seed_update",
          "a tensor passed to the compiled call was drawn on the device (torch.randn(..., device=...)) with no "
          "torch_xla.sync() since the draws before it: torch_xla advances its device seed once per draw (seed * 214013 "
          "+ 2531011) and only a full sync resets that chain, while the bridge syncs just the call's inputs, so the "
          "input's graph grows by one seed update per call until something syncs: a new graph each time. Call "
          "torch_xla.sync() after creating the input, before the compiled call (or draw it on the CPU and move it "
          "with .to(device))", unless="jax follows_dynamo"),
    _rule("dynamo_bridge_beside_recompile", "*", "dynamo bridge_graph dynamo_unexpected",
          "a graph torch_xla's Dynamo bridge compiles on its own (the sync of the call's inputs, a backward): it "
          "changes with what Dynamo traces and what the call receives; act on Dynamo's recompilation above", unless="jax"),
    # review 9 F6 (c2_mark_dynamic): the bridge's sync of the call's inputs, made at each new size while Dynamo
    # traced one symbolic size, is no "each once; nothing to fix": it compiles per size with the compiled graph
    _rule("dynamo_bridge_new_size", "shape", "dynamo bridge_graph sizes_per_call",
          "the bridge's sync of the tensors passed to the compiled call, made at each new size: it compiles once "
          "per size, as the compiled graph does (above); padding the inputs to a few fixed sizes fixes both",
          unless="jax"),
    _rule("dynamo_bridge_own", "*", "dynamo bridge_graph",
          "expected: torch_xla's Dynamo bridge compiles graphs of its own (Dynamo's first graph, its backward, the "
          "sync of the call's inputs), each once; nothing to fix", unless="jax"),
    _rule("dynamo_xla_per_size", "shape", "dynamo xla_per_size",
          "Dynamo traced {function} once with a symbolic size, but torch_xla compiles one XLA graph per concrete size "
          "({seen}): dynamic shapes stop at the bridge; pad to a few fixed sizes (buckets) so each compiles once",
          unless="jax"),
    # Dynamo round 18 (d18_numpy_jitter): the value on the resume function's stack is a tensor read into Python
    # (float(t) of a NumPy draw Dynamo traced as a tensor): moving the call out would still pass a changing float;
    # the fix is to never read it, using the tensor in the arithmetic
    _rule("dynamo_resume_tensor_read", "python_value", "dynamo resume_stack_value tensor_read",
          "a tensor's value is read into a Python number inside the compiled function and changes from call to call "
          "({seen}): float(), int() or bool() of a tensor (or of a NumPy call Dynamo traces as one) breaks the graph "
          "there, and Dynamo traces the rest of {function} specialised on the number it read, so the rest is traced "
          "again at every new value (past the recompile limit, {limit}, it runs without Dynamo); keep the value a "
          "tensor: use it in the arithmetic without reading it (draw random numbers with torch on the device: "
          "torch.rand, uniform_), and read numbers only outside the compiled function; a higher limit only postpones "
          "the fallback", unless="jax"),
    # Dynamo round 17 (d17_perf_counter, pytorch#167596): a value left on a resume function's stack by the code
    # before a graph break (a clock read Dynamo cannot trace) is guarded by value: each new value retraces the rest
    _rule("dynamo_resume_stack_value", "python_value", "dynamo resume_stack_value",
          "a Python value made outside the graph changes from call to call ({seen}): Dynamo cannot trace that call, "
          "runs it eagerly and traces the rest of {function} specialised on the value it returned, so the rest is "
          "traced again at every new value (past the recompile limit, {limit}, it runs without Dynamo); move that "
          "call and what uses its result (a timer, a log line) out of the compiled function (time around the call, "
          "after a sync), or compute the value with tensor ops Dynamo traces; a higher limit only postpones the "
          "fallback", unless="jax"),
    # Dynamo round 26 (d26_generate_topk): a per-request top_k as topk's k: one fixed k and a mask, as the XLA
    # engine's shape_topk says; padding (the length row's other answer) is none for a k
    _rule("dynamo_int_sets_topk", "python_value", "dynamo python_int sets_topk",
          "{tensor} is a Python int that sets how many values topk keeps ({seen}): Dynamo specialises each value and "
          "XLA compiles a graph per k, each reused when that k comes again; a k cannot come from a tensor, so take "
          "topk with one fixed k (the largest) on every call and mask the entries past each call's k (a device "
          "tensor of k compared with the ranks), or keep k to a few values, one graph each", unless="jax"),
    _rule("dynamo_int_sets_shape", "python_value", "dynamo python_int sets_shape",
          "{tensor} is a Python int that sets a shape ({seen}): Dynamo specialises each value and XLA compiles a graph "
          "per size; a shape cannot come from a tensor, so keep one size and mask what is unused (or pad to a few "
          "fixed sizes)", unless="jax"),
    # Dynamo round 31 (d31_multiscale_interp): a Python float that sets a size (F.interpolate's scale_factor): XLA
    # compiled a graph of other shapes for its new value; a tensor cannot set a size, so "pass it as a tensor" is no
    # fix: a few values are one graph each
    _rule("dynamo_float_sets_shape_limit", "python_value", "dynamo python_float sets_shape limit_hit",
          "{tensor} is a Python number that sets a size in {function} ({seen}; the graphs' shapes change with it, "
          "as a resize factor sets an image's size): Dynamo specialises each value and XLA compiles a graph per "
          "size, and past its recompile limit ({limit}) the later calls run without Dynamo (eagerly); a size cannot "
          "come from a tensor, so keep the values to a few fixed ones, one graph each; a higher limit only "
          "postpones the fallback", unless="jax"),
    _rule("dynamo_float_sets_shape", "python_value", "dynamo python_float sets_shape",
          "expected: {tensor} is a Python number that sets a size in {function} ({seen}; the graphs' shapes change "
          "with it, as a resize factor sets an image's size): Dynamo specialises each value and XLA compiles a graph "
          "per size, each reused when that value comes again; a size cannot come from a tensor, so with a few values "
          "one graph per value is the cost and nothing to fix; if new values keep coming, keep them to a few fixed ones",
          unless="jax limit_hit"),
    # Dynamo round 26 (d26_smoothing_eval_arg): a number passed to a parameter typed float in torch's signature
    # (label_smoothing=): "pass it as a tensor" cannot be followed there; a few values are one graph each
    # (eleventh stop's read: the label-smoothing formula only where label_smoothing= is the parameter)
    _rule("dynamo_label_smoothing_limit", "python_value", "dynamo number_only_param label_smoothing limit_hit",
          "{tensor} goes to a parameter that takes a Python number only ({seen}): Dynamo specialises each value and "
          "traces {function} again for each, and past its recompile limit ({limit}) the later calls run without "
          "Dynamo (eagerly); a tensor cannot go there, so keep the values to a few fixed ones (one graph each), or "
          "compute that term yourself with tensor ops, the value kept in a device tensor (label smoothing: (1 - s) * "
          "nll + s * the mean over classes of -log p); a higher limit only postpones the fallback", unless="jax sets_shape"),
    _rule("dynamo_number_only_param_limit", "python_value", "dynamo number_only_param limit_hit",
          "{tensor} goes to a parameter that takes a Python number only ({seen}): Dynamo specialises each value and "
          "traces {function} again for each, and past its recompile limit ({limit}) the later calls run without "
          "Dynamo (eagerly); a tensor cannot go there, so keep the values to a few fixed ones (one graph each), or "
          "compute that term yourself with tensor ops, the value kept in a device tensor; a higher limit only "
          "postpones the fallback", unless="jax sets_shape"),
    # new-user review 20 (F9, rev20_tc_dropout_schedule): a rate kept on a torch module that its forward passes by
    # position to a parameter taking a Python number only (nn.Dropout: F.dropout(input, self.p, ...)), changed by a
    # schedule: "keep it in a tensor (register_buffer)" cannot reach it, and Dynamo 2.9 specialises a module's float
    # attribute even with torch._dynamo.config.specialize_float=False (tried: 3 values, 3 compiles); a mask written
    # by hand with the rate in a tensor compiles once (tried: 3 values, 1 compile)
    _rule("dynamo_number_only_positional", "python_value", "dynamo number_only_param number_only_positional",
          "{tensor} is a number torch's own module code passes to a parameter that takes a Python number only "
          "({seen}): Dynamo guards it by value and traces {function} once per value, so a schedule that changes it "
          "compiles once per new value; a buffer or tensor cannot go there (nn.Dropout and F.dropout take p as a "
          "float, and torch._dynamo.config.specialize_float=False leaves a module's attribute specialised): keep it "
          "fixed per phase of training (a few values, one compile each), or write that op yourself with the value in "
          "a tensor updated in place (dropout: x * (torch.rand_like(x) >= p) / (1 - p), p a 0-d tensor) so one "
          "graph serves every value", unless="jax sets_shape limit_hit"),
    _rule("dynamo_number_only_param", "python_value", "dynamo number_only_param",
          "expected: {tensor} goes to a parameter that takes a Python number only ({seen}): Dynamo specialises each "
          "value and traces {function} once per value, each compiled once and reused (a training and a validation "
          "value: two graphs); nothing to fix with a few values (a tensor cannot go there); if new values keep coming, "
          "compute that term yourself with tensor ops, the value kept in a device tensor", unless="jax sets_shape limit_hit"),
    # Dynamo round 10 (dyn_call_counter, pytorch#128319): the guard's line assigns the guarded value (`CALLS += 1`
    # inside the compiled function): each call breaks the guard for the next, whatever the loop does
    _rule("dynamo_counter_in_call", "python_value", "dynamo assigned_in_call",
          "{tensor} is changed by the compiled function itself, on the line its guard names ({seen}): "
          "Dynamo reads it as a constant and replays the change after the graph, so every call fails the guard the "
          "call before it broke and {function} is traced anew each time; past the recompile limit ({limit}) the "
          "later calls run without Dynamo (eagerly). Keep the counter outside the compiled function (count in the "
          "loop and pass what it computes as a tensor), or hold it in a device tensor updated in place "
          "(counter.add_(1)); a higher limit only postpones the fallback", unless="jax"),
    # Dynamo round 10 (dyn_block_depth): an int bounding a loop on its guard's line (`for blk in blocks[:depth]`,
    # `range(n)`) sets how many times the body is traced: a tensor cannot, one graph per value is the cost
    _rule("dynamo_int_sets_loop_limit", "python_value", "dynamo python_int sets_loop limit_hit",
          "{tensor} is a Python int that sets how many times a loop runs in the trace ({seen}): Dynamo unrolls the "
          "loop and traces {function} once per value, and past its recompile limit ({limit}) the later calls run "
          "without Dynamo (eagerly); a tensor cannot set a loop's length: run the largest count on every call and "
          "mask the extra iterations' results (a 0/1 factor), or keep the values to a few, one graph per value",
          unless="jax"),
    _rule("dynamo_int_sets_loop", "python_value", "dynamo python_int sets_loop",
          "{tensor} is a Python int that sets how many times a loop runs in the trace ({seen}): Dynamo unrolls the "
          "loop and traces {function} once per value, each compiled once and reused; a tensor cannot set a loop's "
          "length, so with a few values one graph per value is expected; if the values keep coming, run the largest "
          "count on every call and mask the extra iterations' results (a 0/1 factor)", unless="jax"),
    # Dynamo, round 4: a string guarded by value, autocast on some calls only
    _rule("dynamo_python_string_limit", "python_value", "dynamo python_string limit_hit",
          "{tensor} is a Python string ({seen}): Dynamo traces {function} once per value, and its recompile limit "
          "({limit}) is below the number of values, so the later ones run without Dynamo (eagerly); raise "
          "torch._dynamo.config.recompile_limit (cache_size_limit) to the number of values, or index one shared "
          "graph by a task number kept in a tensor", unless="jax"),
    _rule("dynamo_python_string", "python_value", "dynamo python_string",
          "expected: {tensor} is a Python string ({seen}): Dynamo traces {function} once per value and compiles "
          "each once; nothing to fix (a string cannot become a tensor; if new values keep coming, map them to a "
          "few fixed ones)", unless="jax"),
    # Dynamo round 17 (d17_dtype_arg): a torch.dtype argument guarded by value (`out_dtype == torch.float32`)
    _rule("dynamo_python_dtype", "python_value", "dynamo python_dtype",
          "expected: {tensor} is a torch.dtype passed as a Python value ({seen}): Dynamo traces {function} once per "
          "dtype asked for and compiles each once; nothing to fix (a dtype cannot be a tensor); for one graph, call "
          "it with one dtype and cast the result outside the compiled function (out.to(dtype) after the call)",
          unless="jax"),
    _rule("dynamo_global_setting", "mode", "dynamo global_setting",
          "a torch-wide setting changed between calls of {function} ({seen}): Dynamo checks it on every call and "
          "traces again for each setting, each compiled once; set it once before the first compiled call and "
          "leave it alone around compiled calls (a helper that changes it for a while and restores it costs one "
          "trace per setting)", unless="jax"),
    _rule("dynamo_autocast", "mode", "dynamo autocast",
          "expected: torch.autocast is enabled on some calls only ({seen}): Dynamo traces {function} once per "
          "autocast setting and compiles each once; nothing to fix if meant, else enable autocast on every step "
          "(or never) for one graph", unless="jax"),
    # Dynamo round 17 (d17_device_ctx, pytorch#133130): the torch function mode stack (`with torch.device(...)`)
    _rule("dynamo_function_mode", "mode", "dynamo function_mode_stack",
          "a torch function mode is active on some calls of {function} and not on others ({seen}): Dynamo guards "
          "the stack of active modes and traces again for each stack, each compiled once; a `with "
          "torch.device(...)` block is such a mode: make the tensors with device=... (or .to(device)) and call the "
          "compiled function outside the block, or keep the same modes at every call (one block around the whole "
          "loop)", unless="jax"),
    # Dynamo round 19 (r19_d_layer_idx_attr, pytorch#128071): a number each instance sets in __init__ (its layer
    # index) read in a forward that many instances share: one trace per instance, in the first step, not per step
    _rule("dynamo_module_instance_number", "python_value", "dynamo module_attribute per_instance",
          "{tensor} is a number each instance of the module sets once in __init__ ({seen}): every instance shares "
          "{function}'s code, and Dynamo guards a module's int and float attributes by value, so it traces "
          "{function} once per instance's value (one graph per layer), toward its recompile limit ({limit}) in a "
          "deeper model; don't branch on it inside the compiled code: compile the whole model once rather than each "
          "block, or keep the per-layer choice out of the forward (a per-layer tensor or buffer the code multiplies "
          "by, or two block classes)",
          unless="jax python_flag sets_shape sets_loop python_string list_item"),
    # round 25 (r25_d_layerdrop_outside): a list on the module the forward tests membership in (`if i in
    # self.skip`, LayerDrop drawn outside the compiled code): the items choose which parts run, so a buffer holding
    # the same indices would still need a Python branch; the choice belongs in a mask the code multiplies by
    _rule("dynamo_module_list_membership", "python_value", "dynamo module_attribute list_item membership_test",
          "{tensor} is one item of a Python list kept on the module that {function} tests membership in ({seen}): "
          "the list chooses which parts of the code run, Dynamo bakes the items it read into the graph and traces "
          "{function} again for every new choice, toward its recompile limit ({limit}); pass the choice as data "
          "instead: a keep-mask tensor with one 0/1 per part, multiplied into the result (h = h + keep[i] * "
          "block(h)), so one graph serves every choice; a higher limit only postpones the fallback",
          unless="jax python_flag sets_shape python_string"),
    # Dynamo round 18 (d18_class_weights_list): one item of a list of numbers on the module (class weights made
    # into a tensor inside the forward) guarded by value: the list, not the one item, belongs in a tensor
    _rule("dynamo_module_list_item", "python_value", "dynamo module_attribute list_item",
          "{tensor} is one number of a Python list kept on the module that changes between calls ({seen}): Dynamo "
          "bakes each item it reads into the graph as a constant (torch.tensor(list) inside the compiled function reads "
          "them all) and traces {function} again whenever one changes, toward its recompile limit ({limit}); keep "
          "the whole list in one tensor instead (a buffer made with register_buffer, updated in place with copy_, "
          "or a tensor argument) so one graph serves every value; a higher limit only postpones the fallback",
          unless="jax python_flag sets_shape python_string"),
    # Dynamo round 9: past the recompile limit the story says the later calls ran without Dynamo
    _rule("dynamo_module_number_limit", "python_value", "dynamo module_attribute limit_hit",
          "{tensor} is a number kept on the module that changes from call to call ({seen}): Dynamo guards a "
          "module's int and float attributes by value and traces {function} again for each, and past its recompile "
          "limit ({limit}) the later calls run without Dynamo (eagerly, torch_xla tracing them lazily) for the rest "
          "of the run; keep it in a tensor instead (a buffer updated in place, read by tensor code) so one graph "
          "serves every value; a higher limit only postpones the fallback",
          unless="jax python_flag sets_shape python_string"),
    _rule("dynamo_module_number", "python_value", "dynamo module_attribute",
          "{tensor} is a number kept on the module that changes from call to call ({seen}): Dynamo guards a "
          "module's int and float attributes by value and traces {function} again for each; keep it in a tensor "
          "instead (a buffer made with register_buffer, updated in place) so one graph serves every value",
          unless="jax python_flag sets_shape python_string"),
    _rule("dynamo_python_flag", "python_value", "dynamo python_flag",
          "expected: {tensor} is a Python flag ({seen}): Dynamo traces one graph per setting and compiles each once; "
          "nothing to fix (keep it a Python value, its branch needs it; set from the first step, it spares one compile)",
          unless="jax"),
    # Dynamo, round 3: a module container that grows, sizes the user already padded to buckets
    _rule("dynamo_module_container", "guard", "dynamo container_length module_container",
          "expected: {tensor} holds another number of submodules ({seen}): Dynamo traces {function} once per depth "
          "and each depth compiles once; nothing to fix (a model grown in stages: one graph per stage)", unless="jax"),
    _rule("dynamo_shape_buckets", "shape", "dynamo buckets",
          "expected: one graph per bucket -- {function} is called with padded sizes that recur ({seen}), each "
          "compiled once by Dynamo and by XLA; nothing to fix (fewer buckets mean fewer compilations)", unless="jax"),
    # Dynamo round 11 (d11_opt_grad_none, pytorch#121291): a parameter's `.grad is None` guarded by a compiled
    # optimizer step: a part of the model the loss uses on some steps only has no gradient on the others
    _rule("dynamo_grad_none", "guard", "dynamo grad_none",
          "{tensor} is None on some calls and a gradient on others: {function} skips (or branches on) a tensor "
          "without a gradient and Dynamo guards that per tensor, so it traces once per set of gradients present "
          "({seen}); zero_grad() sets gradients to None (set_to_none=True by default), so a part of the model the "
          "loss uses on some steps only (an auxiliary head, a branch) has none on the other steps. Each set is "
          "compiled once and reused (expected while they are few); for one graph, use that part every step (a 0 "
          "weight on its loss) so it always has a gradient; zero_grad(set_to_none=False) keeps zeros instead of "
          "None once it has had one", unless="jax"),
    # Dynamo round 17 (d17_rope_lazy_cache): None on the compiled module itself, not an argument left out: a table
    # built lazily by the first call (or state reset to None between calls)
    _rule("dynamo_attribute_lazy", "guard", "dynamo attribute_none",
          "{tensor} was None when {function} was first compiled and holds a value now: an attribute of the compiled "
          "module set on first use (a cache built lazily in forward) or between calls; Dynamo guards it and traces "
          "once per case, each reused after; create it before the first compiled call (in __init__, a buffer from "
          "register_buffer) so every call sees it; set once, this costs one extra trace only", unless="jax"),
    _rule("dynamo_attribute_cleared", "guard", "dynamo attribute_cleared",
          "{tensor} held a value when {function} was first compiled and is None on this call: an attribute of the "
          "compiled module reset to None between calls (a cache or state cleared); Dynamo guards it and traces once "
          "per case; keep it a tensor (clear it in place, e.g. .zero_(), instead of setting None), or accept one "
          "graph for each case", unless="jax"),
    # Dynamo round 17 (d17_sgd_momentum_control): a compiled optimizer step's state, empty at its first call
    _rule("dynamo_optimizer_state_warmup", "guard", "dynamo optimizer_state",
          "expected warm-up: {function}'s optimizer state was empty at its first compiled call and holds its "
          "buffers after it (momentum buffers, Adam's moments, made on the first step), and Dynamo guards that "
          "state: the step is traced once more at its second call and that graph is reused from then on; nothing "
          "to fix", unless="jax"),
    _rule("dynamo_optional_none", "guard", "dynamo optional_none",
          "{tensor} is None on some calls and a tensor on others: Dynamo traces {function} once for each; always "
          "pass it (a neutral value, e.g. an all-True mask), or accept one graph for each case", unless="jax"),
    _rule("dynamo_module_hooks", "guard", "dynamo module_hooks",
          "a hook was registered on (or removed from) {tensor} between compiled calls ({seen}): Dynamo guards the "
          "hooks it traced (the type of each it called; every hook dict of the module with "
          "skip_nnmodule_hook_guards off) and traces {function} again; register hooks "
          "before the first compiled call and keep them, and keep a hook from changing Python state (appending "
          "to a list) while compiled code runs", unless="jax"),
    # Dynamo round 23 (d23_norm_history): the guard's own line adds to the container it guards
    # (`self.norm_history.append(...)` under `len(self.norm_history) == 3`): the compiled function grows it, so no
    # caller passes anything of another length and padding items is no way out
    _rule("dynamo_grown_in_call", "guard", "dynamo grown_in_call",
          "{tensor} is a Python container that {function} itself adds to, on the line its guard names ({seen}): "
          "Dynamo guards its length (empty, then 1, 2, ...), so every call fails the guard the call before it "
          "installed and {function} is traced anew each time, until the recompile limit ({limit}) sends the later "
          "calls to run without Dynamo (eagerly); state that grows inside the compiled function is the cause, not "
          "what the loop passes. Keep the history outside it (return the value and append it after the call), or "
          "keep it in a preallocated tensor buffer written in place (a ring buffer with a count); a higher limit "
          "only postpones the fallback", unless="jax"),
    # Dynamo round 23 (d23_env_debug): an environment variable read inside the compiled function; Dynamo guards
    # the value through the stdlib's frozen os module (its line there is no line of the user's)
    _rule("dynamo_environ", "guard", "dynamo environ",
          "the compiled code reads the environment variable {tensor} ({seen}) and it changed between calls: "
          "Dynamo guards the value it read and traces {function} once per value, each graph reused after; read "
          "the setting once outside the compiled function (at import or in __init__) and pass it as an argument "
          "or keep it on the module, so the environment is not read while compiled code runs; if the switch is "
          "flipped on purpose between a few settings, one graph per setting is expected", unless="jax"),
    _rule("dynamo_global_length", "guard", "dynamo container_length global_name",
          "the global `{tensor}` is a Python list or tuple whose length changes between calls ({seen}): the "
          "compiled code reads it (or a hook run inside it appends to it), so Dynamo traces {function} once per "
          "length; if compiled code grows it, collect outside the compiled call or keep the appending function "
          "out of what is compiled (torch._dynamo.disable); if your loop appends to it and the compiled code reads "
          "it (a memory bank, a history), keep the items in a preallocated tensor of fixed size written in place "
          "(a ring buffer with a count or a mask) and read that", unless="jax module_container"),
    _rule("dynamo_global_truth", "guard", "dynamo global_truth",
          "the global `{tensor}` went from empty (or false) to not, or back, between calls ({seen}): the compiled "
          "code reads it (or a hook run inside it changes it), so Dynamo traces {function} again; do not change it "
          "while compiled code runs (no appending to it from a hook), or read it outside the compiled call",
          unless="jax"),
    # Dynamo, round 5: a compiled optimizer step's groups, a tensor's type or dispatch keys, an object's class
    _rule("dynamo_optimizer_groups", "guard", "dynamo container_length optimizer_groups",
          "expected: the optimizer has another number of parameter groups ({seen}; opt.add_param_group): Dynamo "
          "traces the compiled step once per number of groups and compiles each once; nothing to fix (or add "
          "every group before the first compiled step)", unless="jax"),
    _rule("dynamo_tensor_type", "guard", "dynamo tensor_type",
          "{tensor} is a tensor of another type on some calls ({seen}: an nn.Parameter or another tensor subclass "
          "on some calls, a plain tensor on others): Dynamo guards a tensor argument's exact type and traces "
          "{function} once per type; pass the same type on every call (a plain tensor: x.as_subclass(torch.Tensor) "
          "for a tensor subclass, e.g. w.view_as(w) where the nn.Parameter itself was passed), or accept one graph "
          "per type", unless="jax"),
    _rule("dynamo_inference_tensor", "guard", "dynamo inference_tensor",
          "{tensor} is an inference tensor on some calls (made under torch.inference_mode(): no autograd dispatch "
          "keys) and a normal tensor on others: Dynamo guards a tensor's dispatch keys and traces {function} once "
          "for each; make the inputs outside torch.inference_mode (torch.no_grad() there instead), or run every "
          "call under inference_mode, or accept one graph for each", unless="jax"),
    _rule("dynamo_device", "guard", "dynamo device_changed",
          "{tensor} is on another device on some calls ({seen}): Dynamo guards a tensor's device (its dispatch "
          "keys) and traces {function} once per device, and torch_xla's bridge is handed tensors that are not on "
          "the XLA device; call the compiled function with tensors on the XLA device only (move its result to "
          "the CPU after the call, result.cpu() or .item()), or call the plain, uncompiled function on CPU copies",
          unless="jax"),
    # Dynamo round 20 (d20_weight_norm_late): a submodule's class swapped by a parametrization (read from the source)
    _rule("dynamo_parametrized", "guard", "dynamo object_type parametrized",
          "expected once: {tensor} is a module of another class from this call on ({seen}): registering a "
          "parametrization (weight_norm, spectral_norm, orthogonal, register_parametrization) swaps the module's "
          "class for a generated Parametrized<Class> and its weight for a computed one, so Dynamo traces "
          "{function} again, once, and reuses that graph; nothing to fix (register it before the first compiled "
          "call, a shape check through the compiled model included, to spare the trace)", unless="jax"),
    # Dynamo round 26 (d26_eval_dropout_swap): the object of another class is a submodule the loop swapped
    # (Dropout -> Identity for a held-out check): no number, no int/float aside; the mode is the way to switch it
    # (eleventh stop's read: not past the recompile limit, and the eval() way only for a dropout's slot)
    _rule("dynamo_submodule_type", "guard", "dynamo object_type submodule_type dropout_slot",
          "expected: {tensor} is a submodule replaced by one of another class on some calls ({seen}): Dynamo inlines "
          "it and traces {function} once per class, each compiled once and reused; nothing to fix when the swap is "
          "the design (one graph per setup); to turn a layer off for evaluation, keep it and switch the model's mode "
          "instead (model.eval() turns dropout off, one graph per mode as well) rather than swapping modules back "
          "and forth", unless="jax parametrized limit_hit"),
    _rule("dynamo_submodule_swap", "guard", "dynamo object_type submodule_type",
          "expected: {tensor} is a submodule replaced by one of another class on some calls ({seen}): Dynamo inlines "
          "it and traces {function} once per class, each compiled once and reused; nothing to fix when the swap is "
          "the design (one graph per class of that submodule)", unless="jax parametrized limit_hit"),
    _rule("dynamo_object_type", "guard", "dynamo object_type",
          "expected: {tensor} is an object of another class on some calls ({seen}): Dynamo traces {function} once "
          "per class and compiles each once; nothing to fix when that is the design (one graph per class, e.g. a "
          "head per task); if a number arrives as an int on some calls and a float on others, give it one type",
          unless="jax limit_hit"),  # past the limit nothing is "compiled once and reused": the generic row
    _rule("dynamo_container_length", "guard", "dynamo container_length",
          "{tensor} is a Python list or tuple whose length changes ({seen}): Dynamo traces {function} once per length; "
          "pass a fixed number of items instead (stack them into one tensor, pad with masked items)", unless="jax"),
    # review 23 F4 (rev23_tc_rope_dict_cache): rotary tables cached in `self._rope_cache[T]` by the forward itself;
    # the second call finds the key the first call stored: one more trace, then steady. Not a caller's dict
    _rule("dynamo_dict_cache_filled", "guard", "dynamo dict_keys dict_filled",
          "{tensor} is a dict on the compiled module that had no key {seen} when {function} was first compiled and "
          "has it now: a cache the forward fills on its first call (a table built lazily per size); Dynamo guards "
          "its keys and traces {function} once more when it finds the key, then reuses that graph; fill the cache "
          "before the first compiled call (in __init__, or the tables as buffers with register_buffer) so every "
          "call sees the same keys; filled once, this costs one extra trace only", unless="jax"),
    _rule("dynamo_dict_keys", "guard", "dynamo dict_keys",
          "the dict {tensor} has the key {seen} on some calls only: Dynamo traces {function} once per set of keys; "
          "pass the same keys on every call (always pass {seen}, with a neutral value such as a mask of ones)",
          unless="jax"),
    # Dynamo, round 7: a dict's key order, which object an argument is, two arguments that are one tensor
    _rule("dynamo_dict_key_order", "guard", "dynamo dict_key_order",
          "the dict {tensor} arrives with its keys in another order on some calls ({seen}): the compiled code "
          "iterates it (items(), keys(), a for loop), so Dynamo guards the key order and traces {function} once "
          "per order; build every dict with its keys in one order (one collate function, or a fixed key order), "
          "or read it by key instead of iterating it", unless="jax"),
    # Dynamo round 27 (d27_mark_dynamic_some): an input marked dynamic on some calls only, whatever its size
    _rule("dynamo_marked_dynamic", "guard", "dynamo marked_dynamic",
          "{seen}: Dynamo does not reuse a graph traced for an unmarked tensor when a marked one arrives, so it "
          "traces {function} again with a symbolic size and keeps both graphs, picking one by the mark; call "
          "torch._dynamo.mark_dynamic on every call or on none (a size that never changes needs no mark; a size "
          "that does, mark it from the first call on)", unless="jax limit_hit"),
    # Dynamo round 27 (d27_kfold_inline_off): the compiled module freed and a new one of the same structure passed;
    # the log does not show the setting was turned off (the default up to torch 2.4: last read of the twelfth stop)
    _rule("dynamo_module_freed", "guard", "dynamo module_freed",
          "{seen}: Dynamo guarded that module object itself, so each new model (one per fold or run) traces "
          "{function} again; it guards modules this way while torch._dynamo.config.inline_inbuilt_nn_modules is "
          "off (set so, or the default before torch 2.5): set torch._dynamo.config.inline_inbuilt_nn_modules = "
          "True (the default from torch 2.5: the parameters are inputs, one graph for every model of the same "
          "structure), or reuse one model and reset its weights (load_state_dict, reset_parameters) instead of "
          "making a new one", unless="jax"),
    # Dynamo round 24 (d24_id_cache): id() of an argument read inside the compiled function (an id()-keyed cache)
    _rule("dynamo_identity_read", "guard", "dynamo object_identity identity_read",
          "the compiled code reads the identity of {tensor} (id({tensor}): {seen}): Dynamo guards which object it "
          "is, so every call with a new object (a fresh batch tensor) traces {function} again, until the recompile "
          "limit gives it up and it runs uncompiled; keep the id()-keyed lookup (a cache by object) outside the "
          "compiled function, key it by something that stays the same (a step or sample index), or drop it",
          unless="jax"),
    _rule("dynamo_object_identity", "guard", "dynamo object_identity",
          "expected: {tensor} is another object on some calls ({seen}: Dynamo guards which object it is, e.g. an "
          "enum member or a sentinel compared with `is`) and traces {function} once per object, each compiled "
          "once; nothing to fix when it picks a mode (one graph per value); if a new object arrives every call, "
          "make it once and pass the same one", unless="jax limit_hit"),
    _rule("dynamo_tensor_alias", "guard", "dynamo tensor_alias",
          "{tensor} are the same tensor on some calls ({seen}): Dynamo guards that tensor arguments do not alias "
          "one another and traces {function} again for the aliased call; pass distinct tensors on every call "
          "(x.clone() for the second), or accept one graph for each case", unless="jax"),
    # Dynamo round 12: a module's parameters with requires_grad set on some calls (a frozen copy through one
    # compiled function), a torch-wide setting changed around a call (torch.set_num_threads)
    _rule("dynamo_parameter_requires_grad", "guard", "dynamo requires_grad parameter_requires_grad",
          "expected: the parameters of the module reached through {tensor} have requires_grad set on some calls "
          "only (a frozen copy such as an EMA teacher passed to the same compiled function, or layers frozen "
          "between calls): Dynamo guards each parameter's requires_grad and traces {function} once per setting, "
          "each compiled once; nothing to fix while the settings are few (one graph per setting), or compile one "
          "function per model to keep them apart; the guard is not about sizes", unless="jax"),
    # Dynamo round 32 (d32_gan_d_calls_control): the same tensor passed with and without its gradient by design
    # (a GAN's discriminator on fake.detach() and on fake), read from the user's file
    _rule("dynamo_requires_grad_detached_pair", "guard", "dynamo requires_grad detached_pair",
          "expected: {tensor} requires grad on some calls only, and your code passes the same tensor both ways "
          "(with its gradient on one call, cut from its graph on another, as a GAN's discriminator gets the "
          "generator's output for each update): Dynamo traces {function} once per setting, each compiled once and "
          "then reused; nothing to fix (one graph per setting)", unless="jax limit_hit"),
    _rule("dynamo_requires_grad", "guard", "dynamo requires_grad",
          "{tensor} arrives with requires_grad set on some calls only: Dynamo traces {function} once per setting "
          "(with and without its gradient); give it the same requires_grad on every call, or compute input "
          "gradients in a function compiled on its own", unless="jax"),
    # Dynamo round 12: a graph break torch.compile(fullgraph=True) raised: the program stopped at the first call
    _rule("dynamo_graph_break_raised_item", "graph_break", "dynamo raised op:item",
          "torch.compile(fullgraph=True) turned this graph break into an error: Dynamo raised at the first call "
          "and nothing ran; `.item()` returns a Python number that feeds Python code (an `if`, a comparison): "
          "write that as tensor code on the device (torch.where(cond, a, b)) so the function stays one graph, "
          "or move the read out of the compiled function", unless="jax"),
    # Dynamo round 30 (d30_fullgraph_any_branch): `if (ce > 5.0).any():` under fullgraph=True: the error is the
    # branch on a tensor's value, whose fix is the same as without fullgraph (keep both sides in the graph)
    _rule("dynamo_graph_break_raised_branch", "graph_break", "dynamo raised op:data_dependent_branch",
          "torch.compile(fullgraph=True) turned this graph break into an error ({seen}): Dynamo raised at the "
          "first call and nothing ran; Python branches on a tensor's value here, which Dynamo cannot trace: keep "
          "both sides in the graph (torch.where(cond, a, b) over the two results, or apply the branch's op on every "
          "call when it changes nothing otherwise, e.g. a clamp), or torch.cond for two functions; the function "
          "then stays one graph", unless="jax"),
    _rule("dynamo_graph_break_raised", "graph_break", "dynamo raised",
          "torch.compile(fullgraph=True) turned a graph break into an error ({seen}): Dynamo raised at the first "
          "call and nothing ran; change that line so Dynamo can trace it (Dynamo's explanation above says what it "
          "cannot trace), or drop fullgraph=True to let Dynamo split the function there (each split is a graph "
          "more per call)", unless="jax"),
    # Dynamo round 28 (d28_bn_momentum_none): the `.item()` break is torch's BatchNorm reading its batch count
    # (momentum=None): torch.where is no fix; the module's momentum is
    _rule("dynamo_graph_break_bn_cumulative", "graph_break", "dynamo op:bn_cumulative",
          "a BatchNorm built with momentum=None (a cumulative average) reads its batch count as a Python number in "
          "training (float(self.num_batches_tracked) in torch's BatchNorm forward): Dynamo breaks the compiled "
          "call there on every call, what it gives up runs without it, and the average's weight 1/n is a new "
          "number every step, baked into each step's XLA graph (one compilation per step, without end); give the "
          "BatchNorm a momentum (momentum=0.1, the default: an exponential average with a fixed weight)",
          unless="jax raised"),
    # review 18 F3 (c3_log_break.py): the number `.item()` reads feeds only a log call: torch.where is no fix
    _rule("dynamo_graph_break_item_logged", "graph_break", "dynamo op:item op:log_call",
          "`.item()` inside the compiled function reads a tensor's value for a log call ({seen}): Dynamo breaks the "
          "graph there on every call and the value is read into Python each time; move the log call and its "
          "`.item()` out of the compiled function (return the tensor and log it after the call, every N steps)",
          unless="jax raised"),
    _rule("dynamo_graph_break_item", "graph_break", "dynamo op:item",
          "`.item()` inside the compiled function breaks the graph on every call ({seen}): the Python number it "
          "returns feeds Python code (an `if`, a comparison); write that as tensor code (torch.where(cond, a, b)) "
          "so it stays in the graph, or move the read out of the compiled function", unless="jax"),
    # Dynamo, round 6: a replaced module's parameter, a short batch that recurs (not the run's last call)
    _rule("dynamo_parameter_shape", "shape", "dynamo parameter_shape",
          "expected: a parameter of the compiled module changed shape ({seen}): the module (or a submodule such as a "
          "head) was replaced or resized between calls, so Dynamo traces {function} again for the new shape and "
          "XLA compiles it once; nothing to fix when that happens once (or build it at its final size from the "
          "start); if it keeps changing, keep one module and mask what is unused", unless="jax"),
    # Dynamo round 9: a size of 1 under a dynamic dim (0/1 specialization), an input's rank
    _rule("dynamo_shape_zero_one", "shape", "dynamo zero_one_size",
          "{function} got a size of 1 (or 0) where the dim is dynamic ({seen}): Dynamo keeps a dynamic size "
          "symbolic for 2 and more only and specialises 0 and 1, so it traces again and XLA compiles that size; "
          "avoid batches of one (DataLoader(drop_last=True), or pad the last batch to 2 or more rows and drop the "
          "padded results); mark_dynamic already covers every other size, and Dynamo's hint to mark the dim "
          "unbacked would spare only its retrace, not XLA's compile", unless="jax"),
    _rule("dynamo_shape_rank", "shape", "dynamo rank_changed",
          "{function} receives {tensor} with another number of dimensions ({seen}): Dynamo guards an input's rank "
          "(there is no dynamic rank) and traces once per rank; give every call the same rank, e.g. a batch "
          "dimension for a single example (x.unsqueeze(0) / x[None], and out[0] after)", unless="jax"),
    _rule("dynamo_shape_data_dependent", "shape", "dynamo data_dependent_size",
          "{function} resumes after a graph break at an op whose output size follows the data (boolean-mask "
          "indexing, nonzero, masked_select), and gets a new size ({seen}): Dynamo and XLA compile it again for "
          "each size; keep the shape fixed: instead of selecting the rows, keep them all and weight by the mask "
          "(loss * mask, summed and divided by mask.sum()) or use torch.where", unless="jax"),
    _rule("dynamo_shape_limit", "shape", "dynamo limit_hit",
          "{function} is called with new sizes ({seen}) past Dynamo's recompile limit ({limit}): each size is a new "
          "Dynamo specialisation, and after the limit the later sizes run without Dynamo (eagerly, torch_xla still "
          "compiling an XLA graph per size); pad or bucket to a few fixed sizes so each compiles once (a higher "
          "limit or dynamic shapes would still leave XLA one graph per size)", unless="jax buckets"),
    # Dynamo round 31 (d31_queue_grow): a tensor the program grows by torch.cat between compiled calls (a MoCo queue
    # started empty), read by the compiled function: the XLA story names the cat; pad/bucket is not the answer
    _rule("dynamo_shape_grown_by_cat", "shape", "dynamo grown_by_cat",
          "{tensor} grows from call to call ({seen}): a tensor built up with torch.cat between the calls (a queue, a "
          "cache, a history): Dynamo's size guard fails at each new size and XLA compiles a graph per size until "
          "it stops growing (a queue of K rows filled B at a time: K/B graphs); preallocate it at its full size once "
          "and write each new part in place (a ring buffer: index_copy_ or slice assignment at a pointer, with a "
          "mask or placeholder values for the slots not yet filled)", unless="jax"),
    # Dynamo round 31 (d31_accum_chunk_uneven): micro-batches cut by xb.chunk(4) from batches of 30 (8, 8, 8, 6
    # every step) read like an epoch's short last batch; the loader's batches are full: the split is uneven
    _rule("dynamo_shape_uneven_chunks", "shape", "dynamo leading_dim_shrank uneven_chunks",
          "the tensor is cut into pieces of unequal size on this line ({seen}): chunk and split round the piece "
          "size up, so a size the number of pieces does not divide leaves a smaller piece each time the line runs "
          "(30 rows in 4 chunks: 8, 8, 8, 6), and Dynamo and XLA compile {function} again for it; choose a batch "
          "size the number of pieces divides (32 rows in 4 chunks of 8), or pad the smaller piece to the others' "
          "size and mask its padded rows' loss", unless="jax"),
    # review 6 (p08): three sizes or more of dim 0 are requests of any size, not an epoch's last batch
    _rule("dynamo_shape_sizes_vary", "shape", "dynamo leading_dim_shrank sizes_vary",
          "the batch size varies from call to call ({seen}; an epoch's short last batch would give two sizes "
          "only): Dynamo compiles "
          "{function} again for each new size and XLA compiles a graph for each; pad every batch to one fixed size "
          "(and mask or drop the padded rows' results), or to a few bucket sizes (dynamic shapes would spare "
          "Dynamo's retrace, not XLA's compile per size)", unless="jax"),
    _rule("dynamo_shape_last_batch", "shape", "dynamo leading_dim_shrank last_call",
          "the last batch is short ({seen}): Dynamo compiles {function} again for it; use DataLoader(drop_last=True), "
          "or pad it to the full batch (dynamic shapes would spare Dynamo's retrace, but torch_xla still "
          "compiles one XLA graph per size)", unless="jax"),
    # tenth stop (lead47_d_filtered_batch): rows filtered out of one batch mid-run (8, 8, 7, 8, 8); Dynamo's log
    # has no later recompilation (the full size's entry was cached) but the XLA log shows the full size again
    _rule("dynamo_shape_short_batch_once", "shape", "dynamo leading_dim_shrank full_again",
          "one batch came with fewer rows ({seen}) and full batches followed it: Dynamo compiles {function} again "
          "for that size and XLA compiles a graph for it; keep every batch at the full size: pad it and mask the "
          "padded rows (a weight of 0 in the loss), or, where rows are filtered out, keep them and weight them by "
          "the mask instead", unless="jax"),
    _rule("dynamo_shape_short_batch", "shape", "dynamo leading_dim_shrank",
          "a batch is smaller than the one before ({seen}): Dynamo compiles {function} again for it and XLA "
          "compiles a graph for that size; if it is a DataLoader's last batch of an epoch (the dataset not a "
          "multiple of the batch size), use DataLoader(drop_last=True) or pad it to the full batch; otherwise pad "
          "or bucket to a few fixed sizes", unless="jax last_call"),
    _rule("dynamo_shape", "shape", "dynamo",
          "{function} is called with new sizes ({seen}): each size is a new Dynamo specialisation (torch_xla turns "
          "automatic dynamic shapes off); pad or bucket to a few fixed sizes (dynamic shapes would spare Dynamo's "
          "retrace, not XLA's compile per size)", unless="jax"),
    # Dynamo checks its dtype guard per call: the other dtype may come from a second call site within one step
    # (Dynamo round 8, dyn_dtype_two_sites), so the advice speaks of calls, not steps
    # Dynamo round 14: a module's parameter in another dtype on some calls (a bfloat16 copy of the model through
    # the same compiled function): the model's dtype, not an input to cast (d14_bf16_eval_copy)
    # thirteenth stop (d28_to_bf16_midrun): `net.to(torch.bfloat16)` after torch.compile; Dynamo keeps no guard on
    # the parameters (openxla: they are inputs), traces nothing again, and the bridge runs the old graph on the
    # converted weights (the run stops: "Executable expected parameter 0 of size 16 ... size 8"): the capture holds
    # only the conversion's graph (hlodiff.explain.dynamo_converted)
    _rule("dynamo_converted_after_compile", "dtype", "dynamo converted_after_compile",
          "the compiled model's parameters were converted {seen} after torch.compile traced it (Module.to / .half / "
          ".bfloat16 on the model): Dynamo guards no parameter's type here, so it traces nothing again, and "
          "torch_xla's bridge runs the graph it kept for the old type on the converted weights (the run stops at "
          "the next sync with \"Executable expected parameter ... incompatible size\", or computes in the old "
          "type); convert the model before calling torch.compile on it, or call torch.compile again after "
          "converting (a new compiled model for the new type)", unless="jax"),
    _rule("dynamo_parameter_dtype", "dtype", "dynamo parameter_dtype",
          "expected: the parameters of the module reached through {tensor} are {seen} on different calls (a copy of "
          "the model in a lower precision, or the model cast between calls, through the same compiled function): "
          "Dynamo guards each parameter's dtype and traces {function} once per model dtype, each compiled once; "
          "nothing to fix while they are few (one graph per model dtype), or compile a separate function for the "
          "copy to keep them apart; the guard is not about sizes or the input's dtype", unless="jax"),
    _rule("dynamo_dtype", "dtype", "dynamo",
          "{function} receives {tensor} as {seen}: give it one dtype at every call (cast where it is made, or "
          "from the first call on)", unless="jax"),
    # new-user review 17, F1 (c1_print_step: `if step % 3 == 0: print(...)`): a number the source shows read only in
    # Python control flow (if/while tests, print/logging) cannot be served by a tensor: passed as one, the guard
    # becomes a data-dependent branch, a graph break and a host read on every call (the reviewer tried it)
    _rule("dynamo_int_steers_branch", "python_value", "dynamo branch_only",
          "{tensor} only steers Python control flow in {function} ({seen}; read only in `if`/`while` tests and "
          "prints or logging): Dynamo guards each value and traces {function} once per value, toward its "
          "recompile limit ({limit}); move the branch and what it does (the print, the log) out of the compiled "
          "function, after the call, and stop passing the number in; a tensor cannot steer a Python `if` (it "
          "would become a data-dependent branch: a graph break and a host read on every call)", unless="jax"),
    # without the source on disk, the guard's own line only shows the number tested by an `if` (review 17, F1):
    # both readings, the branch first (a tensor cannot steer it), a tensor only where the number feeds tensor math
    _rule("dynamo_int_tested_in_branch", "python_value", "dynamo branch_test",
          "{tensor} is tested by a Python `if` in {function} on its guard's line ({seen}): Dynamo guards each value "
          "and traces {function} once per value, toward its recompile limit ({limit}); a tensor cannot steer a "
          "Python `if` (it would become a data-dependent branch, a graph break every call): move that branch and "
          "what it does (a print, a log) out of the compiled function, after the call; only where the number "
          "also feeds tensor math, pass that part as a tensor (torch.tensor(v, device=device))",
          unless="jax int_once"),
    # Dynamo round 14: an int whose guard failed once in the run: another value, or the same number as a float
    # (the guard checks the type too): both readings named, one type first (d14_int_float_temp)
    _rule("dynamo_python_int_once", "python_value", "dynamo python_int int_once",
          "{seen} (an int) when {function} was first compiled and not at one later call, after which both graphs "
          "served every call: another value, or the same number as a float (Dynamo's guard on a number checks its "
          "type as well as its value, so an int from a config and a float from the command line compile twice); "
          "give it one type at every call (float(...) where it is read), and if the value does change from call "
          "to call, pass it as a tensor (torch.tensor(v, device=device))", unless="jax limit_hit"),
    _rule("dynamo_python_value_limit", "python_value", "dynamo limit_hit",
          "a Python number ({tensor}) changes from call to call and Dynamo specialises each value under torch_xla; "
          "past its recompile limit ({limit}) the later calls run without Dynamo (eagerly, torch_xla tracing them "
          "lazily): pass it as a tensor (torch.tensor(v, device=device)) so one graph serves every value; a "
          "higher limit only postpones the fallback", unless="jax"),
    # review 10 F7: eager torch_xla's constant_lr_special says the opposite for an lr ("not a tensor lr"); each
    # says why its context differs (checked on real runs: here the guards go with a tensor lr; in eager a tensor lr
    # adds a host read per step and a Python float lr is one parameter of one graph)
    _rule("dynamo_python_value_lr", "python_value", "dynamo optimizer_lr",
          "a Python number ({tensor}) changes from call to call and Dynamo specialises each value under torch_xla: "
          "pass it as a tensor (torch.tensor(v, device=device)) so one graph serves every value (it is Dynamo's "
          "guard on the value that compiles again: without torch.compile, torch_xla passes such a number as device "
          "data (0 and 1 aside) and a tensor optimizer lr would be read back to the host every step)", unless="jax"),
    # review 22 F4: a float whose guard failed once in the run changed once (a config callback), not call to call;
    # or it came as a tensor on other calls (dyn_tensor_or_float: sigma 0.1 or a 0-d tensor): both readings
    _rule("dynamo_python_float_once", "python_value", "dynamo python_float float_once",
          "{seen} when {function} was first compiled and not at one later call, after which both graphs served every "
          "call: it changed once (a config set once, a warm-up that ends: one recompile for the new value, each "
          "graph reused after), or it came as another type on some calls (a 0-d tensor on some, a Python float on "
          "others: Dynamo's guard checks the type too; pass one type every call); if the value will keep changing, "
          "pass it as a tensor (torch.tensor(v, device=device)) so one graph serves every value",
          unless="jax limit_hit"),
    # review 13 F6: any other number (a temperature) is told without the lr's eager-mode aside
    _rule("dynamo_python_value", "python_value", "dynamo",
          "a Python number ({tensor}) changes from call to call and Dynamo specialises each value under torch_xla: "
          "pass it as a tensor (torch.tensor(v, device=device)) so one graph serves every value", unless="jax"),
    _rule("dynamo_mode", "mode", "dynamo",
          "expected: one graph per mode (train and eval, grad on and off); each compiles once, nothing to fix", unless="jax"),
    # Dynamo round 17: a guard of a form no row reads is told as seen, with what to check, never a guess at a
    # tensor (three of round 17's guards fell here and were told "or pass it as a tensor": a device context, a dtype)
    # Dynamo round 20 (d20_fail_on_recompile): a recompile the stance refused; the capture holds no guard
    _rule("dynamo_stance_raised", "guard", "dynamo stance_raised",
          "torch.compiler.set_stance(\"{seen}\") stopped the program at this call: a guard of the graph Dynamo "
          "compiled for {function} failed here, so it needed a new graph, and that stance raises instead of "
          "compiling one; which guard failed is not in the log (the stance raises before Dynamo prints it): run "
          "once with the default stance under TORCH_LOGS=recompiles to see it (a new input size such as a last, "
          "shorter batch, a Python value or a module that changed since the first calls), then make what it checks "
          "the same on every call (drop_last=True or a padded last batch for a size), or set the stance only once "
          "every input has its final form", unless="jax"),
    # Dynamo round 20 (d20_prune_rounds): a compiled module's parameter gone (pruning, a parametrization)
    _rule("dynamo_parameter_removed", "guard", "dynamo parameter_removed",
          "the compiled module's parameter {seen} is gone on this call: something replaced it between calls "
          "(torch.nn.utils.prune turns it into `<name>_orig` and a mask applied by a forward pre-hook; a "
          "parametrization such as weight_norm moves it under `parametrizations`; a `del` or a plain tensor "
          "assigned in its place), and Dynamo traces {function} again for the module as it now is, once per such "
          "change (once per pruning round); make the change before the first compiled call (prune or parametrize, "
          "then compile), or, to prune again and again without a new trace, keep the parameter and apply the mask "
          "in place (with torch.no_grad(): weight.mul_(mask))", unless="jax"),
    # Dynamo round 21 (d21_logit_adjust_late): an attribute the forward tests with hasattr() set after the first call
    _rule("dynamo_hasattr", "guard", "dynamo hasattr",
          "Dynamo compiled {function} again because the code tests whether an attribute exists ({seen}): Dynamo "
          "guards its presence, so setting it (or deleting it) after the first call traces {function} once more; "
          "create the attribute in __init__ (a tensor as a register_buffer of zeros, filled in place with copy_ "
          "when its value is known; a flag as a bool from the start) and test its value, not its presence -- or "
          "accept one graph before and one after, which is expected when it starts a new phase", unless="jax"),
    # Dynamo round 30 (d30_backend_check_eval): `- 0/0: ` with no guard after it. torch 2.9 checks a cache entry's
    # backend apart from its guards (one entry per backend of the same code): the guards all hold, the log names none
    _rule("dynamo_other_backend", "guard", "dynamo no_failed_guard other_backend",
          "{function} is compiled by more than one torch.compile with different backends ({seen}): Dynamo keeps "
          "one cache entry per backend of the same code and checks the backend apart from the guards, so the first "
          "call through the other backend traced {function} again (its log names no failed guard: each guard held); "
          "one graph per backend, each reused after; if the second backend is only a check, compile {function} "
          "once (one backend) and compare against eager calls of the function instead", unless="jax"),
    _rule("dynamo_no_failed_guard", "guard", "dynamo no_failed_guard",
          "Dynamo compiled {function} again but its log names no failed guard (each guard of the earlier entry held "
          "when checked again): what it checks apart from the guards changed, most often the backend -- the same "
          "function (or model) compiled by a second torch.compile with another backend=, mode= or options= (a "
          "numerics check with backend=\"eager\" or \"aot_eager\"), which keeps a graph per backend; look for a "
          "second torch.compile of {function} and compile it once, or accept one graph per backend", unless="jax"),
    _rule("dynamo_guard", "guard", "dynamo",
          "Dynamo compiled {function} again because a guard failed ({seen}): find what that guard checks (an "
          "argument, an attribute of the compiled module, a global, a torch setting) and keep it the same from "
          "call to call, or accept one graph per case; TORCH_LOGS=guards prints each compile's guards with their "
          "source lines", unless="jax"),
    _rule("dynamo_cache_reset", "reset", "dynamo cache_reset",
          "Dynamo compiled {function} from scratch {seen}: no guard failed, its cache was emptied between calls "
          "(torch._dynamo.reset() or torch.compiler.reset() in the loop), so each time Dynamo traces it again and "
          "torch_xla's bridge extracts its graphs again (XLA reuses the graphs it compiled before when they are "
          "the same); remove the "
          "reset from the loop (reset once, before the first compiled call, or only when the backend or the model "
          "changes)", unless="jax"),
    _rule("dynamo_gave_up", "graph_break", "dynamo gave_up",
          "Dynamo could not compile this function ({seen}) and gave it up: it runs eagerly, uncompiled, on every "
          "call, so torch_xla traces it as Python runs it and every number it reads from a tensor into Python "
          "(.tolist(), a scalar read) is baked into the XLA graph, one compilation per value; keep those values on the device (a "
          "mask or segment ids over a fixed shape instead of Python sizes), or read them outside the compiled "
          "function", unless="jax"),
    # new-user review 17, F2 (c1b_fix_tensor: `if step % 3 == 0:` on a tensor): Dynamo's "Data-dependent
    # branching" is a Python `if` on a tensor's value, not an op whose output size follows the data
    # Dynamo round 30 (d30_saliency_autograd_grad): an input gradient taken inside the compiled function:
    # `x.requires_grad_()` is unsupported and torch.autograd.grad is on Dynamo's skip list (a break at each)
    _rule("dynamo_graph_break_autograd_inside", "graph_break", "dynamo op:autograd_inside",
          "the compiled function takes a gradient itself ({seen}): Dynamo traces neither `requires_grad_()` on a "
          "tensor nor torch.autograd.grad, so it splits the function there on every call and the gradient runs "
          "eagerly between graphs; compile only the forward and take the gradient outside the compiled function "
          "(torch.autograd.grad on its output), or write it with torch.func (grad, vjp), which Dynamo traces",
          unless="jax"),
    # thirteenth stop's last read: `requires_grad_()` alone in the compiled code (transformers'
    # enable_input_require_grads hook on the embedding output, loss.backward() outside) takes no gradient there
    _rule("dynamo_graph_break_requires_grad", "graph_break", "dynamo op:requires_grad_inside",
          "a `requires_grad_()` call inside the compiled function breaks its graph ({seen}): Dynamo does not trace "
          "changes to a tensor's requires_grad, so it splits the function there on every call; set requires_grad "
          "on the input before the call, or move the requires_grad_ call (a hook that marks an output, such as an "
          "input-gradient hook for gradient checkpointing) outside the compiled region", unless="jax"),
    _rule("dynamo_graph_break_data_dependent_branch", "graph_break", "dynamo op:data_dependent_branch",
          "Python branches on a tensor's value here ({seen}): Dynamo cannot trace an `if` on a tensor, so it reads "
          "the value back to the host and splits the function there on every call; keep both sides in the graph "
          "(torch.where(cond, a, b) over the two results, or torch.cond for two functions), or decide the "
          "condition outside the compiled function (from a Python number, or before the call) and move the branch "
          "out with it", unless="jax"),
    _rule("dynamo_graph_break_data_dependent", "graph_break", "dynamo op:data_dependent",
          "Dynamo cannot trace an op whose output size follows the data ({seen}: boolean-mask indexing, nonzero, "
          "masked_select) and splits the function there on every call; what follows gets a new size whenever the "
          "count changes: keep the shape fixed (weight by the mask, or torch.where) instead of selecting",
          unless="jax"),
    _rule("dynamo_graph_break_print", "graph_break", "dynamo op:print",
          "print() inside the compiled function splits it into {seen} graphs on every call: remove it, or print "
          "outside the compiled function (after the call)", unless="jax"),
    # Dynamo round 17 (d17_train_step_backward; torch_xla's Dynamo training example): backward() and the optimizer
    # inside the compiled function
    _rule("dynamo_graph_break_train_step", "graph_break", "dynamo op:train_step",
          "the compiled function runs the training step itself ({seen}): Dynamo does not trace loss.backward() (a "
          "fundamental graph break) nor the optimizer's zero_grad and step, so every call is cut there into several "
          "graphs with eager Python between them; compile the model (its forward and the loss) and call "
          "loss.backward(), opt.step() and opt.zero_grad() outside the compiled function (the backward of a "
          "compiled forward is compiled with it), and compile opt.step on its own if it should be compiled too",
          unless="jax raised in_library"),
    # Dynamo round 20 (d20_layerdrop_random; pytorch#95425, #145446): Python's random module inside the compiled code
    _rule("dynamo_graph_break_python_random", "graph_break", "dynamo op:python_random",
          "Python's random module is called inside the compiled function ({seen}): Dynamo does not trace that draw "
          "and splits the function there on every call (inside a loop it gives the whole frame up, and the code "
          "runs uncompiled, one XLA graph per pattern of choices); draw on the device with torch instead "
          "(keep = torch.rand(()) >= p, torch.bernoulli) and apply the draw as a mask or with torch.where, so "
          "every branch stays in one graph, or draw outside the compiled function and pass the draws in as a "
          "tensor", unless="jax raised"),
    # Dynamo round 21 (d21_mark_step_inside): xm.mark_step() / torch_xla.sync() inside the compiled function; the
    # breaks are in library code (the wrapper's deprecation warning, the sync), the user's line is the call of it
    _rule("dynamo_graph_break_xla_sync", "graph_break", "dynamo op:xla_sync",
          "a torch_xla sync (xm.mark_step() / torch_xla.sync()) runs inside the compiled function ({seen}): Dynamo "
          "cannot trace it, so every call is cut there into more graphs with eager Python between them, and the sync "
          "runs the half-built step on its own; remove the sync from the compiled function and sync once outside it, "
          "after the optimizer step (torch.compile's graphs need no sync to run)", unless="jax"),
    # Dynamo round 21 (d21_generator_noise): torch.randn(..., generator=g) in the compiled function
    _rule("dynamo_graph_break_generator", "graph_break", "dynamo arg:generator",
          "a torch.Generator object is passed to a random op inside the compiled function ({seen}): Dynamo cannot "
          "put a Generator into a graph and cuts every call there (the draw runs eagerly between two graphs); draw "
          "with the global RNG on the device instead (torch.randn_like(h), reproducible through torch.manual_seed), "
          "or draw the noise outside the compiled function and pass it in as an argument", unless="jax"),
    # Dynamo round 24 (d24_seed_in_forward): torch.manual_seed inside the compiled function (marked as skipped)
    _rule("dynamo_graph_break_rng_seed", "graph_break", "dynamo op:rng_seed",
          "the RNG is seeded inside the compiled function ({seen}): Dynamo does not trace torch's seeding calls "
          "(marked as skipped) and cuts every call there, with eager Python between two graphs; seed outside the "
          "compiled function, before the call (torch.manual_seed(seed) then model(x)), or, for the same noise on "
          "every call, draw it once (a buffer made in __init__) and add it in the forward", unless="jax"),
    # Dynamo round 23 (d23_file_log_break): a file opened inside the compiled function (a statistic logged per call)
    _rule("dynamo_graph_break_file_io", "graph_break", "dynamo op:file_io",
          "a file is opened inside the compiled function ({seen}): Dynamo does not trace file I/O and splits the "
          "function there on every call (what follows runs without Dynamo, and a tensor's value written to the file "
          "is read into Python, a sync of its own); return the value from the compiled function and write it "
          "outside, after the call (or after the sync, where it is read anyway)", unless="jax raised"),
    # review 18 F3: Python's logging breaks inside logging/__init__.py, entered from the user's log line
    _rule("dynamo_graph_break_log_call", "graph_break", "dynamo op:log_call",
          "a logging call inside the compiled function ({seen}): Dynamo does not trace Python's logging and splits "
          "the function there on every call (each call runs as more than one graph, Python between them); move the "
          "log call out of the compiled function (log after the call), or drop it", unless="jax raised"),
    # Dynamo round 27 (d27_module_backward_hook): a module-level backward hook, the break in torch's module.py;
    # the hook may be a library's (Opacus, a global register_module_full_backward_hook: the twelfth stop's last read)
    _rule("dynamo_graph_break_module_backward_hook", "graph_break", "dynamo op:module_backward_hook",
          "a module-level backward hook (register_full_backward_hook or register_full_backward_pre_hook on a "
          "module the compiled model calls, or register_module_full_backward_hook for every module; yours, or the "
          "library's that registered it, such as Opacus's per-sample gradients) cannot be traced without compiled "
          "autograd ({seen}): Dynamo breaks the compiled call at that module on every call, and what it cannot "
          "trace runs without it; remove the module hook (or the library that registered it, or compile without "
          "it), or hook the gradient on a tensor instead (output.register_hook(...) in the forward), or read the "
          "parameters' .grad after backward()", unless="jax raised"),
    # Dynamo round 32 (d32_lock_forward): a `with` on a context manager Dynamo cannot enter (a threading.Lock, an
    # open file): Dynamo logs "Graph break: skip" and gives the frame up from that line
    _rule("dynamo_graph_break_frame_skipped", "graph_break", "dynamo frame_skipped",
          "Dynamo cannot trace this line ({seen}) and gives the compiled function up from here (the whole of it "
          "when this is its first graph): that part runs uncompiled, without Dynamo, on every call; take it out "
          "of the compiled function (a lock taken around the call instead of inside, a file written after the "
          "call), or replace it with code Dynamo traces", unless="jax raised"),
    # Dynamo round 32 (d32_genexpr_arg): a generator expression passed to the compiled function
    _rule("dynamo_gave_up_generator", "graph_break", "dynamo op:generator_frame",
          "a generator reaches the compiled function ({seen}): Dynamo cannot trace a generator's frame and gives "
          "up the function that iterates it, which runs uncompiled on every call; pass a list or a tuple instead "
          "(a list comprehension `[f(x) for x in xs]` rather than `(f(x) for x in xs)`, or list(gen) before the "
          "call)", unless="jax raised"),
    # stop 51: the same words of Dynamo's when the compiled function itself yields (WON'T CONVERT names it, not a
    # <genexpr>): no argument to turn into a list; the function must return
    _rule("dynamo_gave_up_generator_function", "graph_break", "dynamo op:generator_function",
          "the compiled function is a generator (a def with yield, {seen}): Dynamo cannot compile a generator and "
          "gives it up, so it runs uncompiled on every call; compile a function that returns (the body of one "
          "step) and iterate outside it", unless="jax raised"),
    _rule("dynamo_graph_break_library", "graph_break", "dynamo in_library",
          "Dynamo splits the compiled call inside library code ({seen}), not at a line of yours: each call runs "
          "as more than one graph with Python between them; nothing recompiles, and no line of yours needs to move",
          unless="jax op:print op:item"),
    _rule("dynamo_graph_break", "graph_break", "dynamo",
          "Dynamo cannot trace this ({seen}) and splits the function there on every call: move it out of the "
          "compiled function, or replace it with tensor code Dynamo traces", unless="jax"),
    _rule("history_list_joined", "ops", "graph_grows join_grows torch_xla",
          "the graph grows at every step ({counts} instructions) because a list of tensors joined in the step "
          "(torch.stack / torch.cat of a history) holds one more item each step: keep a running value instead (a "
          "sum and a count as tensors, updated in place) or a fixed-size buffer written in place with a length "
          "mask -- see {line}", unless="grows"),
    _rule("history_scalars_summed", "inputs ops outputs", "graph_grows scalars_grow torch_xla",
          "the graph grows at every step ({counts} instructions) and takes one more scalar input each step: a Python "
          "list of device scalars (losses, metrics) combined in the step (sum(history), a loop over it) holds one "
          "more item each step: keep one running sum and a count in place of the list (total += value, count += 1: "
          "one input whatever the step), or read each value once after the sync (.item()) -- see {line}", unless="grows join_grows"),
    # crossings round 5 (x5c_grad_list_unreset): a list of tensors (a gradient history) never emptied, stacked in
    # the step: the tensor input it adds each step heads, the join's own change beside it; no autograd history
    # (the scalars of a stacked loss list keep history_scalars_summed, a carried state history_carried)
    _rule("history_tensors_joined", "inputs", "graph_grows joins_grow torch_xla",
          "the graph grows at every step ({counts} instructions) and takes one more input ({shapes}) each step: a "
          "Python list of tensors joined in the step (torch.stack / torch.cat of a history) holds one more item each "
          "step and is never emptied: keep a bounded window instead (a preallocated tensor of k rows written in "
          "place, or collections.deque(maxlen=k) for a fixed k) or a running average kept as one tensor -- see "
          "{line}", unless="grows scalar_inputs_only"),
    # crossings round 7 (x7c_tx_hook_in_loop): a forward hook registered at the top of every step, never removed:
    # each step's graph holds one more clamp, ops only (no input: no history of earlier steps is retraced)
    _rule("ops_added_every_step", "ops", "graph_grows ops_each_step torch_xla",
          "the graph grows at every step ({counts} instructions) by about the same ops each time ({added_each} "
          "instructions added), with no input or output added: the same code runs once more at every step, not a "
          "history carried from step to step; something added to the model inside the loop and never taken away "
          "(a hook from register_forward_hook / register_full_backward_hook, a wrapper or a parametrization applied "
          "again each step, a Python loop whose count grows with the step): register it once, before the loop, or "
          "keep its handle and handle.remove() it at the end of the step (a loop: keep its count fixed) -- see {line}",
          unless="grows join_grows joins_grow scalars_grow"),
    # round 30 (r30_tx_spmd_act_hint_some, live at step 2): three graphs 166, 170, 171 instructions, the last adding
    # one SPMD `Sharding` custom-call and nothing else, the second SPMD annotations with input shardings changed:
    # annotations, no autograd history to detach
    _rule("history_carried", "inputs ops outputs", "graph_grows torch_xla",
          "the graph grows at every step ({counts} instructions) and every step compiles: a tensor carried from one "
          "step into the next keeps its whole autograd history (an RNN hidden state, a running total), so each step "
          "traces the earlier ones again: detach it where it is carried (h = h.detach()) -- see {line}",
          unless="grows sharding_annotations_only with:sharding"),
    # -- partial ------------------------------------------------------------------------------------------------
    # review 23 F2 (rev23_tx_moe_item_capacity): `capacity = int(counts.max().item())` sizes the per-expert buffers
    # of a step that also indexes with nonzero; the mask row's fix ("apply the mask as values") leaves the read, and
    # the step still compiles anew: a value read that sets a size needs its own fix, a size fixed in Python
    _rule("partial_read_sets_size_with_mask", "partial", "own_read read_sets_trace op:nonzero torch_xla",
          "the value read early at {line} (.item(), int(t.max())) sets a size of what is traced next: {after_read} "
          "different graphs followed the read, so reading it later removes nothing, and masking rows leaves this "
          "read: make that size a fixed Python number (an MoE's static capacity: capacity_factor * tokens / "
          "experts, rounded up; or the largest size the data allows), pad to it and mask what is unused",
          unless="library_read"),
    _rule("partial_mask_index", "partial", "op:nonzero torch_xla",
          "a boolean mask index (`x[mask]`, nonzero) ran the graph early to learn how many rows it keeps, and each "
          "count compiles again: keep the full size and apply the mask as values (torch.where(mask, x, 0), or "
          "multiply by the mask); nothing needs reading before the sync then", unless="library_read"),
    _rule("partial_library_read", "partial", "library_read torch_xla",
          "a library call cuts the step, not a read of yours: {read_what} ({read_call} at {line}); that read "
          "cannot be moved after the sync: {read_fix}"),
    # round 17 (r17_tx_detect_anomaly): set_detect_anomaly(True) left on: each backward node's outputs are checked for
    # NaN on the host, a cut per node that no line of the user's makes and no read to move
    _rule("partial_anomaly_check", "partial", "anomaly_check torch_xla",
          "autograd's anomaly detection is on (torch.autograd.set_detect_anomaly(True), or a detect_anomaly() "
          "block): backward() checks every node's outputs for NaN on the host, and each check runs the graph "
          "before it early, every step (compiled once, then from the cache; torch_xla logs none of these "
          "executions). No read of yours to move: turn anomaly detection off (set_detect_anomaly(False)) outside "
          "a short debugging run"),
    # round 11 (r11_tx_nanmedian_fallback): torch.nanmedian has no XLA lowering; its CPU kernel's empty out=
    # buffers come back from the early execution. No read of the user's: the op is the cut
    _rule("partial_cpu_fallback", "partial", "cpu_fallback torch_xla",
          "an op at {line} has no XLA lowering and runs on the CPU (an aten fallback; "
          "torch_xla.debug.metrics.executed_fallback_ops() names it): the graph before it runs to hand its inputs "
          "to the host, every step. It compiles once and repeats (a steady cost, not a recompilation); to keep the "
          "step one graph, write that op with device ops (e.g. a median as a sort or kthvalue over the masked values), or "
          "accept the split"),
    # review 10 F2: the lines where the branches differ, when the graphs after the reads show them
    _rule("partial_read_sets_branch_lines", "partial", "read_sets_trace read_branch branch_lines",
          "the value read early at {line} (a Python `if` on a tensor: `if loss > x:`, .item()) decides which ops are "
          "traced next: {after_read} different graphs followed the read, differing at {branch_lines} (lines traced "
          "on some steps only), so reading it later removes nothing: compute both branches on the device and "
          "choose with torch.where(cond, a, b): no read, one graph",
          unless="op:nonzero jax"),
    _rule("partial_read_sets_branch", "partial", "read_sets_trace read_branch",
          "the value read early at {line} (a Python `if` on a tensor: `if loss > x:`, .item()) decides which ops are "
          "traced next: {after_read} different graphs followed the read, so reading it later removes nothing: "
          "compute both branches on the device and choose with torch.where(cond, a, b): no read, one graph",
          unless="op:nonzero jax"),
    # review 12 F6 (tx_onehot_nc): the graphs after the read change a scatter's size (the family's shape change
    # is made by a scatter): the read is one_hot's max, and the live line's num_classes fix belongs in the report
    # review 12 F8d: the headline's fix reads on one line of a wide terminal: one_hot named once, the why in few words
    _rule("partial_read_sets_scatter", "partial", "read_sets_trace op:scatter",
          "the early read at {line} sizes a one-hot or per-class count: {after_read} graphs followed it, so reading "
          "later removes nothing; pass F.one_hot(y, num_classes=C), or count into C classes", unless="op:nonzero jax"),
    # review 13 F1 (rev13_t3_nan_guard): `if not torch.isfinite(loss).item(): skip` before AdamW's step; the early
    # graph hands back a lone boolean, a condition the step needs before it runs: "read it after the sync / in a
    # step closure" cannot gate the update. The same row words `hlodiff cost`'s read (CONDITION_READ_RULE); its
    # words fit one line of a wide terminal, as review 12 F8d asked of one_hot's
    _rule(CONDITION_READ_RULE, "partial", "read_condition",
          "the boolean read early at {line} decides the step (whether the optimizer steps, which value is kept), "
          "so it cannot be read later: decide on the device, torch.where(ok, new, old) on the weights and optimizer "
          "state (torch.minimum/maximum for min()/max()), or torch_xla.amp.syncfree's step(found_inf=flag): no "
          "read, one graph",
          unless="op:nonzero jax"),
    # review 14 F1 (rev14_p2_item_midstep): `if loss.item() > 1e6: continue` compares a float in Python, so the cut
    # graph hands back a number (no boolean for the row above); the source on disk shows the read is an `if`'s test,
    # deciding whether backward and the optimizer run: reading it later or in a step closure cannot decide that.
    # A read in an `if`'s body (`if step % 10 == 0: print(loss.item())`) or a logged metric keeps partial_read
    _rule("partial_read_in_condition", "partial", "read_in_condition",
          "the value read early at {line} is compared in a Python `if`/`while` that decides whether the rest of the "
          "step runs, so it cannot be read later: decide on the device, torch.where(ok, new, old) on the weights "
          "and optimizer state (or scale the update by a 0/1 mask): no read, one graph",
          unless="op:nonzero jax"),
    _rule("partial_read_sets_size", "partial", "read_sets_trace",
          "the value read early at {line} (int(t.max()), .item()) decides what is traced next: {after_read} different "
          "graphs followed the read (a size or a branch taken from its value), so reading it later removes nothing: "
          "give that size a fixed length (pad to the maximum and mask), or round it up to a few buckets",
          unless="op:nonzero jax"),
    # round 31 (r31_tx_loader_switch, and r17_tx_item_no_sync): the reads are the only executions, each one
    # larger than the last; "read it after the sync" names a sync the loop does not have, and a step closure
    # would wait for a step mark that never comes
    _rule("partial_reads_pile_up", "partial", "reads_pile_up",
          "nothing marks the end of a step between these reads: each read at {line} runs every step still pending "
          "since the last mark (the optimizer's updates are never materialised), so each graph holds more steps and "
          "compiles anew: call torch_xla.sync() (xm.mark_step()) at the end of every step, or iterate the batches "
          "through MpDeviceLoader, which marks the step per batch; then read the value after that sync",
          unless="jax"),
    _rule("partial_read", "partial", "",
          "a value read before the sync (.item(), print) cut the step: read it after the sync, or use "
          "xm.add_step_closure", unless="jax"),
    # -- shape --------------------------------------------------------------------------------------------------
    # review 21 (F2, rev21_tx_lora_added): the adapter's f32[2,32] factor takes the place of the frozen layer's
    # f32[32,32] in the ops around it (its update, its gradient): a consequence of the new parameters, nothing to pad
    _rule("shape_follows_params_added", "shape", "params_added torch_xla",
          "follows from the parameters added above: ops that worked on the old layer's tensors (their gradients and "
          "updates) now work on the new ones' shapes; nothing to pad or keep fixed here", unless="resized_input grows second_step"),
    _rule("shape_loop_length", "shape", "jax required_static",
          "follows from the loop's trip count above: a scan stacks one row per iteration, so its outputs take the "
          "loop's length", unless="on_input"),
    _rule("shape_mask_index", "shape", "op:nonzero",
          "a boolean mask index or nonzero ({op}) makes the size depend on the data: keep the full size and mask "
          "instead (torch.where(mask, x, 0), or weight by the mask: x[mask].mean() becomes "
          "(x * mask).sum() / mask.sum())", unless="jax"),
    # round 8 (onehot_counts): F.one_hot(y) without num_classes reads y.max() to the host and scatters into max+1
    # columns; the value read sets the size of the scatter, every new value compiles again
    _rule("shape_scatter_from_read", "shape", "op:scatter read_sets_trace",
          "a scatter's size (a one-hot, a per-class count) follows a value read to the host earlier in the step "
          "({after_read} different graphs followed the read): F.one_hot(y) without num_classes reads the labels' "
          "max for its number of columns; give it a fixed size (F.one_hot(y, num_classes=C), or scatter into the "
          "full class count)", unless="jax"),
    _rule("shape_topk", "shape attribute", "op:topk",
          "topk's k changes{seen}: each k is another shape; take topk with one fixed k (the largest) and mask "
          "the extra entries"),
    # round 21 (r21_tx_randperm_pool): torch.randperm(n, device=...) with a Python n that changes (a pool growing):
    # torch_xla builds the n-long permutation in the graph (an iota and a Fischer-Yates while loop), so slicing
    # the few indices wanted afterwards keeps every n; "allocate the largest and mask" is no permutation of n
    _rule("shape_randperm", "shape attribute", "op:randperm",
          "torch.randperm(n) is built on the device with a Python n that changes{seen}: the permutation's length is "
          "part of the graph, so every n compiles again, however few of its indices are kept; draw the indices "
          "without an n-long tensor in the graph: torch.randperm(n)[:k].to(device) on the host (k indices cross), "
          "torch.randint(0, n, (k,), device=device) (its bound is data; with replacement), or torch.multinomial "
          "over a fixed-size pool with a mask of the valid entries", unless="jax"),
    _rule("shape_random_size_jax", "shape", "op:randn jax",
          "random values are drawn with a shape from Python that changes{seen} (jax.random.normal(key, (n, ...))): "
          "draw them at one fixed shape and mask"),
    _rule("shape_random_last_batch", "shape", "op:randn last_only",
          "the last batch is short{seen} (only the last step's batch, made at the line shown, has fewer rows): "
          "keep it at the full batch size (pad it and mask the padding), or drop it as DataLoader(drop_last=True) "
          "does", unless="jax sizes_vary"),
    _rule("shape_random_size", "shape", "op:randn",
          "random values are drawn with a Python size that changes{seen} (torch.randn(n)): draw them at one fixed "
          "size and slice or mask inside the step"),
    # review 8 F9: a JAX argument fed its own jnp.concatenate in a loop (a decoding prefix, a cache kept outside
    # jit): it grows every call, so buckets only slow the compilations down
    # review 12 F3 (tx_progressive_resize): sizes 16, 24, 32, each held for 3 steps and never back: a deliberate
    # schedule (progressive resizing, a length curriculum) compiles once per size and is bounded; no cache to
    # preallocate, no length to pass, and zero-padding an image changes what a pooling layer computes
    _rule("shape_size_schedule", "shape", "on_input size_schedule",
          "expected: a schedule of sizes -- the input took {count} sizes{seen} one after another, each held for several "
          "steps and compiled once when it began (bounded: one compilation per size, none comes back); nothing to "
          "fix if the schedule is deliberate (progressive resizing, a curriculum); fewer sizes, or one fixed size, "
          "avoid these compilations"),
    _rule("shape_growing_concat_jax", "shape", "grows op:cat jax",
          "an argument grows by concatenation every call{seen} (the loop feeds it its own jnp.concatenate): each "
          "length compiles again, without end; preallocate it once at its maximum length, write each new part with "
          ".at[...].set or lax.dynamic_update_slice, and pass the position as a traced argument with a mask of the "
          "filled part", unless="buckets"),
    _rule("shape_growing_cache", "shape", "grows op:cat",
          "a tensor grows by concatenation every step{seen}, a cache or history built with cat: preallocate it "
          "at its maximum size once and write each step into it (index_copy_ / dynamic_update_slice) with a length "
          "mask", unless="buckets"),
    _rule("shape_growing", "shape", "grows on_input",
          "an input grows every step{seen}: preallocate it at its maximum size (a fixed-size cache or buffer) "
          "and pass the current length as a tensor, masking the rest", unless="buckets"),
    _rule("shape_grows_python", "shape", "grows",
          "a size grows every step{seen}: a tensor is made with a size from Python (the step number, a length); "
          "allocate it at its maximum size once and mask the unused part", unless="buckets"),
    # review 5 F8: a DataLoader batch of token ids is an index tensor too; its epoch's short last batch is the
    # stronger evidence (drop_last), so this row comes first
    # round 7 (jax_split_count): keys split per call, jax.random.split(key, n) with a Python n that changes; the
    # keys are no batch to pad or drop, their count is the program's
    _rule("shape_prng_keys_jax", "shape", "jax prng_keys",
          "the number of PRNG keys changed (jax.random.split(key, n) with another n, n from Python): each count "
          "compiles the step again; split the same number of keys every call (the largest) and use or mask the ones "
          "a call needs, or accept one compilation per count if the count changes rarely"),
    # review 14 F6: the parenthesis "(one more compilation, then reused every epoch, ...)" after "pad it" read as
    # the cost of padding; it told what the short batch costs as it is, so that cost now comes before the fixes
    _rule("shape_last_batch_each_epoch", "shape", "on_input leading_dim_shrank last_each_round",
          "the last batch of each epoch is short (batch sizes {values}); as it is, it costs one more compilation "
          "(then reused every epoch): use DataLoader(drop_last=True), or pad it to the full batch size and mask the "
          "padded rows in the loss",
          unless="jax sizes_vary"),
    # round 33 (r33_tx_rope_cache_extend, r33_jx_rope_table_grow): rotary tables extended for one long batch and
    # kept; the short batches after it compiled again with the longer table (sizes 16, 32 read as buckets before)
    _rule("shape_stayed_grown", "shape", "stayed_grown",
          "an input grew once ({stayed}) and stayed at the larger size while the data's size came back to one "
          "compiled before: the steps after it compiled again only because of it -- a cache or table extended for "
          "the longest input seen and never shrunk (rotary or position tables, a buffer sized to the longest "
          "sequence); build it once at its largest size (the longest length the model takes, "
          "max_position_embeddings) so its shape never changes, or pad every batch to one length"),
    _rule("shape_stayed_grown_data", "shape", "stayed_other",
          "expected: this batch's own size compiled once for itself; the compilations after it come from another "
          "input that grew with it ({stayed}) and stayed larger (told at its own recompilation); nothing to fix for "
          "this batch itself"),
    # round 18 (r18_tx_length_regulator): the same evidence comes from repeat_interleave(h, dur) (an index made at
    # the op's own line): the row says what it saw and what to check, not where the index was made
    _rule("shape_tensor_list", "shape", "op:tensor_list",
          "an index tensor enters the graph as data and changes length{seen}: made on the host (torch.tensor(list), "
          "a numpy array) or by an op whose output size follows the data and runs outside the graph (unique, "
          "bincount, repeat_interleave with tensor repeats); check which at the line named; pad it to a fixed length "
          "and mask the padded entries, or bucket its length to a few sizes", unless="jax buckets"),
    # round 20 (r20_jx_teacher_student_control): a teacher and a student of other widths through one jitted apply:
    # the sizes that change are a width the weights share across their axes, not a batch or a length to bucket
    _rule("shape_model_width", "shape", "width_shared on_input",
          "expected: the parameters arrive with another width{seen}: one size shared across the weights' axes (a "
          "hidden size), so a model of another size comes through this function (a teacher and a student, a "
          "resized copy); each model compiles once and is reused: nothing to fix if they are meant to share it "
          "(give each model a compiled function of its own to keep their compilations apart)"),
    _rule("shape_buckets", "shape", "buckets on_input",
          "expected: one graph per bucket -- the input takes {count} sizes that recur{seen}, each compiled once; "
          "nothing to fix (fewer buckets mean fewer compilations)"),
    # review 23 F1 (rev23_jx_host_negatives): JAX logs compilations only, so the graph compiled last is no sign of the
    # last step; "the last batch" needs the batch's arrays shrinking together (x and y), else the one argument's
    # rows follow the data (negatives filtered on the host, 200 then 199 at a middle step: dropping it drops a step)
    # stop 51, the look-alikes: x and y filtered together on the host (`step(w, x[keep], y[keep])`: 16 rows, then 15
    # mid-run) lose the same rows as a batch's arrays do, and a one-array LM batch has no sibling to shrink with it:
    # how the call's arguments are cut, read from the file on disk, decides before the shapes do
    _rule("shape_rows_filtered_jax", "shape", "on_input last_in_family leading_dim_shrank jax rows_filtered",
          "an argument's first dimension follows the data: its rows are kept by a filter on the host "
          "({rows_before} rows, then {rows_after}), and each new count compiles the jitted function again; pad it "
          "to its largest size ({rows_before}) and pass a mask of the real rows, or take a fixed number of rows "
          "every call", unless="sizes_vary"),
    _rule("shape_last_batch_jax", "shape", "on_input last_in_family leading_dim_shrank jax batch_rows",
          "the last batch is short: drop it, or pad it to the full batch size (and mask the padding)",
          unless="sizes_vary rows_filtered"),
    _rule("shape_last_batch_sliced_jax", "shape", "on_input last_in_family leading_dim_shrank jax rows_sliced",
          "the last batch is short: drop it, or pad it to the full batch size (and mask the padding)",
          unless="sizes_vary rows_filtered"),
    _rule("shape_data_rows_jax", "shape", "on_input last_in_family leading_dim_shrank jax",
          "an argument's first dimension changed ({rows_before} rows, then {rows_after}) and each new size "
          "compiles the jitted function again: if this is the epoch's remainder (a short last batch), drop it "
          "(drop_last) or pad it to the full batch size; if its rows come from a filter, pad it to its largest size "
          "({rows_before}) and pass a mask of the real rows, or take a fixed number of rows every call",
          unless="sizes_vary batch_rows rows_sliced rows_filtered"),
    _rule("shape_last_batch", "shape", "on_input last_in_family leading_dim_shrank",
          "the last batch is short: use DataLoader(drop_last=True), or pad it to the full batch size",
          unless="sizes_vary"),
    _rule("shape_short_batch_once", "shape", "on_input leading_dim_shrank one-off",
          "one batch came with fewer rows{seen} and the next ones were full again: pad such a batch to the full "
          "batch size (and mask the padding), or skip it"),
    # review 12 F3 (tx_progressive_resize, live at step 3): the size that changed lies past the first dimension (an
    # image's side, a sequence length), the batch kept its size: no batch to keep or accumulate
    _rule("shape_input_switched_inner", "shape", "on_input switched inner_dims_only",
          "the input's size past its first dimension (an image side, a sequence length) changed once{seen} and "
          "stayed there: each size compiled once; if the change is deliberate (a resize or length schedule) this "
          "is one compilation per size; keep one size from the start if this compilation matters"),
    _rule("shape_input_switched", "shape", "on_input switched",
          "the input's size changed once{seen} and stayed there: each size compiled once; keep one batch size from "
          "the start (pad the first batches to the same size, or accumulate gradients to one fixed batch size) if "
          "this compilation matters"),
    # round 8 (jax_final_eval_size): a function called once more, with more rows, as the run's last compilation (a
    # final evaluation over the whole held-out set): not a short last batch, nothing to pad
    _rule("shape_final_call_jax", "shape", "on_input leading_dim_grew final_call jax",
          "expected: this function compiled once more for a larger leading size{seen}, and that was the run's last "
          "compilation of a function of yours: a single call with another size at the end (such as a final "
          "evaluation over a whole held-out set) compiles once; if such calls repeat (every epoch), call it in "
          "chunks of the size it already has if these compilations add up", unless="sizes_vary"),
    # leftovers of the fourteenth stop (x14c_jx_kv_host_slice, jax_kv_concat): a log of compilations only shows the
    # argument one row longer at every compilation (1, 2, ..., 8): a cache filled one row per call, for which
    # buckets only space the compilations out; one size, the largest, with a mask is one graph
    _rule("shape_up_by_one_jax", "shape", "on_input up_by_one jax",
          "each compilation came with the argument's size one larger than the last{seen}: a buffer filled one row "
          "per call (a KV cache, a decoded prefix) compiles once per length; allocate it once at its largest length "
          "({largest}, or the known maximum), pass it whole with a mask of the filled part (the position as a "
          "traced argument); if the lengths come from the data instead, pad to a few fixed sizes (bucket lengths)",
          unless="buckets grows"),
    _rule("shape_input_jax", "shape", "on_input jax",
          "each new argument shape compiles again: pad arguments to a few fixed sizes (bucket lengths)"),
    _rule("shape_input", "shape", "on_input",
          "pad inputs to a few fixed sizes (bucket sequence lengths, pad the batch)"),
    _rule("shape_buckets_inner", "shape", "buckets",
          "expected: one graph per bucket -- the size takes {count} values that recur{seen}, each compiled once; "
          "nothing to fix (fewer buckets mean fewer compilations)"),
    # round 24 (r24_tx_packed_blockdiag): torch.block_diag over torch.ones(n, n) per packed document: only
    # broadcasts (tensors made on the device) change size, joined by a cat (look-alikes: a queue or
    # a list grown by cat, which grow; a batch, on an input)
    _rule("shape_made_pieces_joined", "shape", "broadcast_reshape_only op:cat torch_xla",
          "tensors made on the device at {line} take their sizes from Python values that change each step{seen} "
          "and are joined into one (torch.cat, block_diag, stack): every new set of sizes is a new graph: build "
          "the joined tensor on the host and move it in, or compute it on the device from data moved in (e.g. "
          "segment ids or positions compared), so only its values change", unless="grows on_input"),
    _rule("shape_python_size", "shape", "",
          "a size follows a Python value that changes each step{seen}: keep sizes fixed (allocate the largest once, "
          "mask)"),
    # -- dtype --------------------------------------------------------------------------------------------------
    _rule("dtype_prng_key_jax", "dtype", "jax prng_key",
          "`{arg}` is a typed PRNG key (jax.random.key) on some calls and raw uint32 key data on others (a key "
          "restored from a checkpoint, a library's legacy PRNGKey): use one key type on every call -- wrap raw "
          "data with jax.random.wrap_key_data, or unwrap with jax.random.key_data everywhere"),
    _rule("dtype_jax_precision", "dtype", "jax changed_precision to_low_precision",
          "values switch between f32 and a lower precision between calls (a dtype policy or `.astype` applied on "
          "some calls only): pick one compute dtype for every call"),
    _rule("dtype_setup_cast", "dtype", "on_input torch_xla first_recompilation second_step settles library_made",
          "setup ran inside the first step: a pending cast of the model (`.to({torch_dtype})`) was folded into its "
          "graph: call torch_xla.sync() after building the model, before the loop"),
    _rule("dtype_input_int_float_jax", "dtype", "on_input jax int_float",
          "argument `{param}` arrives as {before} on some calls and {after} on others (an array made from Python "
          "ints, or converted on some calls): create it with one dtype where it is made "
          "(jnp.asarray(x, dtype=jnp.{after}))"),
    # review 12 F7 (jx_param_dtype_drift): bf16 parameters come back f32 from the function's own update and are fed
    # back: the cast belongs at the update's line; a cast at the call would hide a model silently trained in f32
    _rule("dtype_returned_promoted_jax", "dtype", "on_input jax promoted_output",
          "the function hands this argument back in another dtype than it took it (made at {promoted_at}: a "
          "wider operand, such as an f32 learning rate or gradient on bf16 parameters, promotes it) and the loop "
          "feeds it back: cast the result back at that line ((p - lr * g).astype(p.dtype)), or keep the other "
          "operands in the argument's dtype; casting at the call would hide that the values are now computed in "
          "the wider dtype"),
    _rule("dtype_input_jax", "dtype", "on_input jax",
          "an argument arrives with another dtype on some calls: cast it to one dtype (x.astype(jnp.{keep}))"),
    # review 8 (T3, rev8_np_cache_f64): float32 targets, then float64 ones from a NumPy cache (np.array of Python
    # floats is float64, torch.from_numpy keeps it): "`.to(torch.float64)` from the first step" turned the whole
    # run into float64 (emulated and slow on TPU); the float32 the run started with is the type to keep. Only
    # where the switch lasts (switched, stays): a batch of float64 now and then keeps dtype_input's cast
    _rule("dtype_input_to_f64", "dtype", "on_input to_f64 switched",
          _TO_F64, unless="jax"),
    _rule("dtype_input_to_f64_stays", "dtype", "on_input to_f64 stays",
          _TO_F64, unless="jax"),
    # round 20 (r20_tx_warmup_min_int): a one-element float input turned int64 for good: min(1, x) returned its int
    # argument, and torch.tensor made int64 of it; "`.to(torch.int64)` from the first step" would make a loss
    # weight an integer (0 for 0.25): the float the run started with is the type to keep
    _rule("dtype_input_number_became_int", "dtype", "on_input number_became_int",
          "a one-element input switches from {before} to {after} and stays: most often a number computed as a float became "
          "a Python int (min(1, x) and max(0, x) return their int argument once x reaches it; round(), //), and "
          "torch.tensor made an integer tensor of it; keep it a float where it is made (`min(1.0, ...)`, `float(v)`, "
          "or `dtype=torch.float32` where the tensor is made): one dtype, one graph", unless="jax"),
    _rule("dtype_input_switched", "dtype", "on_input switched",
          "an input switches from {before} to {after} and stays: if that switch is deliberate, this one "
          "recompilation is its cost; otherwise give it one dtype from the first step (`.to({torch_dtype})`)"),
    _rule("dtype_input_stays", "dtype", "on_input stays",
          "an input switches from {before} to {after} and stays (the earlier type never comes back): if that switch "
          "is deliberate, this one recompilation is its cost; otherwise give it one dtype from the first step "
          "(`.to({torch_dtype})` before the loop)", unless="jax"),
    # new-user review 20 (T1, rev20_t1_restore_f64), live: before the later steps show whether the new type stays,
    # the fix names the type the step was traced with ({keep}: the run's first), not "one dtype" alone
    _rule("dtype_input", "dtype", "on_input",
          "an input arrives with another dtype on some steps: cast it to the {keep} the step was traced with "
          "({cast}) before .to(device)"),
    # review 6 (p14): `compare` of two runs' graphs: the precision differs between the runs, not between steps
    _rule("dtype_precision_two_runs", "dtype", "changed_precision two_runs",
          "one run computes these values in a lower precision (bf16 or f16: mixed precision, or a dtype setting) "
          "and the other in f32: the two runs differ by their precision setting, each compiling its own graphs; "
          "nothing recompiles within a run for it (run both with the same setting if they should match)",
          unless="user_created"),
    _rule("dtype_autocast", "dtype", "changed_precision torch_xla", 
          "mixed precision (autocast) was switched on or off between steps: enable autocast from the first step, "
          "or never", unless="user_created"),
    _rule("dtype_precision", "dtype", "changed_precision jax",
          "values switch between f32 and a lower precision between calls (a dtype policy or `.astype` applied on "
          "some calls only): pick one compute dtype for every call", unless="user_created"),
    _rule("dtype_precision_any", "dtype", "changed_precision",
          "mixed precision (autocast) was switched on or off between steps: enable autocast from the first step, "
          "or never", unless="user_created"),
    _rule("dtype_created_jax", "dtype", "jax",
          "an array is created with its own dtype (`dtype=` in `jnp.zeros_like`/`jnp.full_like`, a literal{where}): "
          "let it follow its input's dtype"),
    _rule("dtype_created", "dtype", "",
          "a tensor is created with its own dtype (`dtype=` in `zeros_like`/`full_like`{where}): drop `dtype=` so it "
          "follows its input"),
    # round 3: a running value (a total, a count) restarted from 0.0 or torch.zeros at the top of a loop and carried
    # from step to step: the loop's first step bakes the start value, later steps read the previous result
    _rule("carried_total_restart", "constant inputs", "carried_scalar torch_xla",
          "expected: a running value (a total, a count) at {line} starts again from a Python number or torch.zeros "
          "at the top of a loop and is carried from step to step: the loop's first step traces its start value as "
          "a constant, the next steps read the previous step's result as device data; two graphs, each compiled "
          "once and reused every round; nothing to fix (to make it one graph, create it once before the loop and "
          "sync it, so every step reads device data)"),
    # -- constant -----------------------------------------------------------------------------------------------
    _rule("constant_cumulative_average", "constant", "reciprocal_counts",
          "the baked value is 1/n with n counting up ({values}): the weight of a cumulative average, a new number "
          "every step (BatchNorm with momentum=None passes 1/num_batches_tracked; a running mean updated with "
          "1/step): give it a fixed weight (BatchNorm momentum=0.1, an exponential average), or pass n in as a "
          "tensor"),
    _rule("constant_static_structure", "constant", "jax required_static",
          "a Python value that sets the program's structure is baked in ({structure}): JAX needs it static, so "
          "reduce the values it takes (pad to a few lengths) rather than tracing it"),
    _rule("constant_jax", "constant", "jax",
          "a Python value baked into the function changed (static argument, closure): pass it as a traced argument "
          "(a jnp array) instead of a Python constant"),
    # round 20 (r20_tx_adaptive_softmax live, r20_tx_swa_update_read): an int 0 or 1 baked in by library code
    # (AdaptiveLogSoftmaxWithLoss's own index arithmetic): "keep it in a one-element tensor" is no change the user
    # can make there; say what was seen and what to check
    _rule("constant_int_special_library", "constant", "special_values int_constant library_made torch_xla",
          "an int of 0 or 1 ({values}) is baked in by library code (no line of yours made it), where other values "
          "pass as device data: the library computed it, so no tensor of yours replaces it; check what of yours "
          "reaches that call and can be 0 or 1 on some steps (a count, an index, a size of the batch's data), and "
          "the changes told beside this one; if it is the library's own first value (a counter starting at 0 or "
          "1), this is one more compilation, once", unless="optimizer_made in_optimizer slice_index"),
    _rule("constant_int_special", "constant", "special_values int_constant torch_xla",
          "a Python int of 0 or 1 (an index, a counter: {values}) is baked in, other values are passed as device "
          "data: keep it in a one-element tensor made on the host and moved, torch.tensor([i]).to(device), read as "
          "t[0] (several values: one tensor for all); " + _ZERO_D, unless="slice_index"),
    _rule("constant_lr_special", "constant", "special_values torch_xla optimizer_made",
          "an optimizer setting of exactly 0 or 1 is baked in (here {values}; an lr at the start of "
          "a warm-up from 0, or at the end of a schedule ending at 1), other values are passed as device data: "
          "keep it off 0 and 1 (start the "
          "warm-up above 0, e.g. (step + 1) / warmup), or accept one compilation per such value; not a tensor lr: "
          "in eager torch_xla, torch.optim's SGD passes lr as a Python number (alpha=-lr), so a tensor lr is read "
          "back to the host every step (under torch.compile it is the other way round: Dynamo guards a Python lr "
          "by its value, so there a tensor lr is the fix)"),
    _rule("constant_float_special", "constant", "special_values torch_xla",
          "a Python number of exactly 0 or 1 ({values}; a loss weight, a scale) is baked in, other values are "
          "passed as device data: put it in a one-element tensor made on the host and moved, "
          "torch.tensor([v]).to(device), read as t[0] (several values: one tensor for all), so all values share one "
          "graph; " + _ZERO_D, unless="slice_index"),
    _rule("constant_int_torch", "constant", "int_constant torch_xla",
          "a Python int ({values}: an index, a counter) is baked into the graph, each value another graph: pass it "
          "as a device tensor (torch.tensor(i, device=device)) and index with it (torch.index_select, gather)"),
    _rule("constant_torch", "constant", "torch_xla",
          "a Python number baked into the graph changes: pass it as a device tensor (torch.tensor(v, device=device))"),
    _rule("constant_special", "constant", "special_values",
          "a scalar of exactly 0 or 1 (e.g. lr at the start of a schedule) is baked in as a constant: pass it as an "
          "input (a device tensor or a traced array) instead", unless="slice_index"),
    _rule("constant_any", "constant", "",
          "a Python number baked into the graph changes: pass it as an input (a device tensor or a traced array)"),
    # -- attribute ----------------------------------------------------------------------------------------------
    _rule("slice_rearranged", "attribute", "slice_attr slices_rearranged with:ops",
          "follows from the ops change: both graphs take the same slices (each bound is seen on both sides), "
          "arranged otherwise by the ops that changed"),
    _rule("slice_length_from_read", "attribute", "slice_resized read_sets_trace",
          "a slice's length comes from a value read to the host earlier in the step (int(t.max()), .item(): "
          "{after_read} different graphs followed the read): every new length compiles again, and reading it later "
          "changes nothing: pad to a fixed length and mask, or round the length up to a few buckets",
          unless="op:nonzero jax"),
    _rule("slice_window", "attribute", "slice_attr slice_window",
          "a slice's start and length both follow Python ints: a window or box placed and sized per step (a random "
          "crop, a CutMix patch), and every new box compiles again: cut it on the host before .to(device), or keep "
          "the full size and select the box with a mask made on the device (comparisons with torch.arange, "
          "torch.where)", unless="jax"),
    # round 24 (r24_tx_class_incremental): logits[:, :n_seen] of a 12-way head, n_seen 4, 8, 12: the operand keeps
    # its size, only the prefix length moves (look-alike: a slice of an operand that changed too, slice_length)
    _rule("slice_prefix_of_fixed", "attribute", "slice_attr slice_resized prefix_of_fixed",
          "a slice's length follows a Python int (`x[:n]`) while the tensor it cuts keeps its full size ({full} on "
          "that axis): every new n compiles again: keep all {full} and mask the part past n instead of cutting it "
          "away, one fixed length every step (compare an arange of {full} with n moved in as data; -inf for "
          "logits, 0 in a sum)"),
    _rule("slice_length", "attribute", "slice_attr slice_resized",
          "a slice's length follows a Python int (`x[:n]`): every new length compiles again: pad to a fixed length "
          "and mask, or bucket lengths to a few sizes"),
    _rule("slice_bound_jax", "attribute", "slice_attr jax",
          "a Python int is baked in as a slice bound (`x[:, i]`): index with a traced int (lax.dynamic_slice, "
          "jnp.take)"),
    _rule("slice_bound", "attribute", "slice_attr",
          "a Python int is baked in as a slice bound (`x[:, i]`): index with a device tensor (torch.index_select)"),
    _rule("attribute_dims", "attribute", "dims_attr",
          "an op's dimensions follow a Python value that changes: keep them fixed across steps"),
    # round 32 (r32_tx_einsum_eq_per_type): only a dot's contracting/batch dimensions changed: the same operands
    # multiplied along other axes (an einsum equation chosen per batch kind, a transpose folded into the dot). A
    # dimension number is not a value a tensor could carry: "pass it as a tensor" would send the user nowhere
    _rule("attribute_contraction", "attribute", "contraction_attr",
          "a matmul now contracts other axes of the same operands (the dot's contracting/batch dimensions "
          "changed, usually with a transpose beside it): an einsum equation, a transpose/permute or an operand "
          "order chosen in Python per step; give the data one layout (permute it once, where the batches are "
          "made) so one equation and one graph serve every step, or keep one graph per choice if the choices are "
          "few and deliberate (each compiles once)"),
    _rule("attribute_matmul_precision_jax", "attribute", "precision_attr jax",
          "the matmul precision differs (operand_precision on dot: jax_default_matmul_precision, "
          "JAX_DEFAULT_MATMUL_PRECISION, or precision= on the op): use the same setting for both"),
    _rule("attribute_matmul_precision", "attribute", "precision_attr",
          "the matmul precision differs (operand_precision on dot: a precision setting or precision= on the op): "
          "use the same setting for both", unless="jax"),
    _rule("attribute_any", "attribute", "",
          "an op attribute follows a Python value that changes: keep it fixed, or pass it as a tensor"),
    # -- inputs -------------------------------------------------------------------------------------------------
    # twelfth stop (ulmfit_unfreeze, A,A,B,B,C,C,C): weight-shaped updates added and kept from then on, the earlier
    # graph never back: parameters unfrozen (gradual unfreezing), not an update run on some steps only (an EMA
    # every k steps comes back to the graph without it: inputs_updated_some_steps); ``trains`` as for
    # inputs_trained_from_step (the last read: an EMA begun after warm-up has the same evidence but no gradient);
    # before inputs_trained_from_step, which takes both kinds: merged after it, this row was never reached
    _rule("outputs_unfrozen", "outputs", "updated_from_step trains",
          "from {first_step} on the graph also computes the gradients and updates of parameters it did not train "
          "before, and keeps them: they were unfrozen there (requires_grad_(True): gradual unfreezing) or added to "
          "the optimizer; each stage compiles once; to keep one graph, train them from the first step with a "
          "learning rate of 0 (a param group whose lr you raise later) or mask their updates",
          unless="jax comes_back"),
    # review 21 (F2, rev21_tx_lora_added; rev21_tx_aux_head_added): new tensors of shapes no earlier step read,
    # written back and trained: parameters added to the model mid-run, not an embedding resized, a layer unfrozen or
    # a pruning reparametrization (those keep the weights' shapes)
    _rule("inputs_params_added", "inputs", "added params_added torch_xla",
          "from {first_step} on the step reads and trains new tensors of shapes no earlier step had ({shapes}): "
          "parameters added to the model mid-run (adapters such as LoRA wrapped around a layer, a new head or "
          "module) and given to the optimizer; the graph changes once, so it compiles once more: expected if the "
          "surgery is deliberate; to compile once, do the surgery before the first step (add the adapters or head, "
          "freeze what stays frozen, then build the optimizer)", unless="jax comes_back resized_input grows warmup second_step"),
    # thirteenth stop's last read (lr50_tx_queue_begun_late): the same new tensors written back, but no added
    # gradient computes what is written back (a contrastive queue begun at step 3, rewritten with cat, read for
    # negatives by a new dot that feeds the loss): a state begun late, not parameters nor an optimizer's
    _rule("inputs_state_added", "inputs", "added state_added torch_xla",
          "from {first_step} on the step reads and rewrites new tensors of shapes no earlier step had ({shapes}), "
          "and no new gradient computes what it writes back: a state begun at that step and kept (a queue or "
          "memory bank of past outputs, a buffer, running statistics), not trained weights; the graph changes "
          "once, so it compiles once more: expected if it starts late on purpose; to compile once, create it "
          "before the first step (at its full size, zeros or random values, masked until it holds real entries) "
          "and read and rewrite it on every step", unless="jax comes_back resized_input grows warmup second_step"),
    # round 27 (r27_tx_prune_schedule; ulmfit_unfreeze): weight-sized tensors read and rewritten from one step on,
    # and the graph before never comes back: not a periodic update (an EMA on some steps) but new trained tensors
    # for good (a pruning reparametrization's weight_orig and weight_mask, layers unfrozen); ema_every4's EMA, whose
    # graph without it comes back, keeps inputs_updated_some_steps
    _rule("inputs_trained_from_step", "inputs", "updated_from_step trains torch_xla",
          "from {first_step} on, the graph reads and rewrites weight-sized tensors the earlier steps did not, and "
          "keeps doing so (at {line}): new tensors are trained for good from there (layers unfrozen with "
          "requires_grad_(True), a reparametrization such as torch.nn.utils.prune's weight_orig and weight_mask, "
          "parameters added to the optimizer): one more compilation per such change, expected if intended; to "
          "avoid it, set it up before the first step (every layer trainable with its update scaled by a 0/1 "
          "weight or learning rate, prune.identity before training)", unless="jax"),
    # last read of the twelfth stop (lr_ema_after_warmup): an EMA of the weights begun after a warm-up, then every
    # step: the same evidence save ``trains`` (no new weight gradient, its inputs feed only its own update)
    _rule("inputs_updated_from_step", "inputs outputs", "updated_from_step torch_xla",
          "from {first_step} on, the graph also reads and rewrites tensors shaped like the weights (at {line}), and "
          "keeps doing so; no new gradient comes with them and they feed nothing else of the step: an update begun "
          "at that step and kept (an EMA of the weights started after a warm-up, say): one more compilation, "
          "expected; to avoid it, run the update from the first step (an EMA with decay 1.0 until its start), or "
          "as a step of its own (torch_xla.sync() before it)", unless="jax"),
    _rule("inputs_updated_some_steps", "inputs outputs", "updated_in_place",
          "tensors shaped like the weights are read and updated in place on {steps} only (an EMA of the weights, a "
          "periodic update at {line}): a Python `if` on the step decides it and each variant is another graph; "
          "update them every step, or run the update as a step of its own (torch_xla.sync() before it) so the "
          "training graph stays one", unless="jax"),
    # round 14 (r14_tx_opt_rebuild_control): an optimizer built anew each epoch; its first step's program (no
    # state yet) comes back from the cache at each reset, and the step after it reads the state back
    _rule("inputs_optimizer_state_reset", "inputs", "state_reset torch_xla",
          "expected: the optimizer's state is made anew every {period} steps (an optimizer built again, e.g. each "
          "epoch, or its state cleared): its first step, which creates the state, runs the first step's graph again "
          "from the cache, and the next step reads the state back ({shapes}); each variant compiled once, nothing "
          "to fix for compilation (if the reset is not meant, build the optimizer once before the loop: a new one "
          "also starts its momentum from zero)", unless="jax optimizer_in_cycle"),
    # review 15 F2 (rev15_tx_grad_accum): over 2 micro-batches the cycle is A,B,A,B; `hlodiff cost` on the same run
    # says "one sync per step, after opt.step()": one fact (optimizer_in_cycle), the same advice in both commands
    _rule("accumulation_cycle", "inputs ops outputs", "optimizer_in_cycle",
          "expected: gradient accumulation with a sync after every micro-batch: the graphs cycle every {period} "
          "steps with the optimizer's step (grads created, accumulated, then the update), each variant compiled "
          "once, so their number stays bounded; nothing to fix for compilation. For one graph per optimizer step: "
          "one sync per step, after opt.step() (move torch_xla.sync() into the block that steps the optimizer): "
          "the sync after every micro-batch is what cuts the step into these graphs "
          "(optional: zero_grad(set_to_none=False) makes the first micro-batch's graph the same as the others)",
          unless="jax"),
    _rule("loop_count_inputs", "inputs ops outputs", "inputs_repeat comes_back",
          "the graph of {steps} runs the same computation on more or fewer inputs of the same shapes: a Python loop "
          "traces one pass per item and its count changes (an accumulation group whose last one is short, a list "
          "of varying length); keep the count fixed (whole groups only: drop the remainder, or pad it with "
          "zero-weight items), or accept one graph per count", unless="jax"),
    # round 28 (r28_tx_microbatch_warmup): the accumulation count ramps once (1 micro-batch per optimizer step,
    # then 4) with one sync per optimizer step: the loop is unrolled into the step graph, which takes the same
    # data inputs 4 times from then on and never goes back; the earlier graph does not come back (no short group)
    _rule("loop_count_inputs_switched", "inputs ops outputs", "inputs_repeat switched",
          "from this step on, the graph runs the same computation on another number of inputs of the same shapes "
          "({shapes}): a Python loop unrolled into one graph changed its count once (micro-batches accumulated "
          "before one sync, several batches per step); sync after each iteration (after each micro-batch's "
          "backward: one small graph then serves any count), or run the same count from the first step; else one "
          "more compilation at the switch, once", unless="jax"),
    # round 24 (r24_tx_mixup_soft_hard): the batch's targets hard int64 indices on some steps, float soft targets
    # of another rank on others (mixup on half the batches): one input swapped for another format, nothing else
    # (look-alikes: rev7_two_heads, whose head weights come and go too; review3_collate_key, a key added only)
    _rule("inputs_format_switch", "inputs", "format_switch torch_xla",
          "the data moved in at {line} comes in two formats, {formats} (class indices on some steps and "
          "probabilities on others, say), and the graph that reads it differs with it: give it one format every "
          "step where the batch is made, before .to(device) (e.g. one-hot the integer labels as soft targets), "
          "so one graph serves every step"),
    _rule("traced_some_steps", "inputs ops outputs", "comes_back ops_use_new_inputs",
          "the ops of {line} (and the parameters they read) are traced on {steps} only: Python code decides per step "
          "what is traced (an `if`, a random choice, a block skipped at random); run the same ops every step "
          "(torch.where, or multiply by a 0/1 mask)", unless="jax cycle"),
    _rule("inputs_jax_list_length", "inputs", "jax list_length",
          "a Python {container} passed to the jitted function changed length ({lengths}): JAX traces each length as "
          "another argument structure and compiles again, once per length; pass one fixed-size array instead (a "
          "preallocated buffer and a count of the items in use), not a Python {container}"),
    _rule("inputs_jax_lazy_state", "inputs", "jax none_leaf added state_returned",
          "an argument was None on the first call and an array from then on (state created lazily on the first "
          "step, such as a momentum that starts as None): create it before the loop (jnp.zeros of its shape) so "
          "every call passes the same structure; as it is, this costs one extra compilation, once",
          unless="comes_back"),
    _rule("inputs_jax_optional_none", "inputs", "jax none_leaf",
          "an argument is None on some calls and an array on others (an optional argument left out when it is not "
          "needed, such as a mask when nothing is padded): JAX traces each as another argument structure; always "
          "pass an array (an all-true mask, zeros) so every call has the same structure"),
    _rule("inputs_jax", "inputs", "jax",
          "the function takes other arguments on some calls (optional pytree leaves, state created on the first "
          "call): pass the same arguments, with the same structure, every call"),
    _rule("inputs_transposed", "inputs", "transposed_input",
          "a tensor arrives transposed on some steps (a `.t()`/permute view materialized by an earlier sync): sync "
          "at the same points every step, or keep the view lazy"),
    _rule("inputs_made_before_loop", "inputs", "materialized added",
          "expected once: a tensor made before the loop was computed by the first step's graph and is device data "
          "from then on (call torch_xla.sync() right after creating it to keep it out of the step)",
          unless="jax comes_back"),
    _rule("inputs_follow_ops", "inputs", "with:ops scalar_inputs_only",
          "follows from the ops change: the new operations read this number (torch_xla passes a Python scalar in "
          "as an input)", unless="removed second_step"),
    _rule("inputs_follow_growth", "inputs", "added with:shape grows",
          "follows from the growing size: the tensor that grows is handed from one step to the next, and from this "
          "step on it arrives as an input ({shapes}); fix the growth and this goes too", unless="jax comes_back"),
    _rule("inputs_follow_ops_removed", "inputs", "with:ops scalar_inputs_removed",
          "follows from the ops change: the operations removed read this number (torch_xla passes a Python scalar "
          "in as an input)", unless="jax"),
    # review 6 (p07): a batch of 1 makes a mean's divisor equal another scalar (2.0 and 2.0): torch_xla passes both
    # as one input, so a size change adds or removes scalar inputs with no sync of the user's involved
    _rule("inputs_follow_shape_scalars", "inputs", "with:shape scalar_inputs_only",
          "follows from the size change: torch_xla passes numbers derived from a size (a mean's divisor, a count) "
          "into the graph as scalar inputs, and equal values share one, so their number changes with the size; "
          "fix the size and this goes too", unless="jax warmup first_step_made"),
    _rule("inputs_follow_shape_scalars_removed", "inputs", "with:shape scalar_inputs_removed",
          "follows from the size change: torch_xla passes numbers derived from a size (a mean's divisor, a count) "
          "into the graph as scalar inputs, and equal values share one, so their number changes with the size; "
          "fix the size and this goes too", unless="jax warmup first_step_made"),
    # review 11 (F4, tx_ema_control): decay and 1 - decay both 0.5 on one step: torch_xla passes equal Python
    # scalars as one input, so that step's graph has one scalar input fewer, and nothing else changed
    _rule("inputs_equal_scalars", "inputs", "scalar_inputs_removed torch_xla",
          "this graph has fewer scalar inputs and computes the same: torch_xla passes the Python numbers of a step "
          "(a decay and 1 - decay, an lr, a loss weight) in as scalar inputs and gives equal values one input, so "
          "a step where two of them happen to be equal (0.5 and 0.5) compiles once more; harmless if rare; to rule "
          "it out, pass such numbers as device data: a one-element tensor moved from the host "
          "(torch.tensor([v]).to(device), used by broadcasting), whose value never reaches the graph (a 0-d "
          "torch.tensor(v, device=device) is still treated as the number itself)",
          unless="jax with:ops with:shape with:constant with:dtype"),
    _rule("inputs_user_warmup", "inputs", "added warmup user_made_inputs",
          "expected warm-up: a tensor created on the first step ({made}) is device data from then on; nothing to "
          "fix (or create it before the loop and sync)", unless="comes_back"),
    _rule("inputs_module_warmup", "inputs", "added warmup module_made_inputs",
          "expected warm-up: the model's weights are created on the device inside the first step's graph ({made}: a "
          "lazy module's dry run, or a model built on the device without a sync) and are device data from then on; "
          "nothing to fix (or sync once after building the model)", unless="comes_back"),
    _rule("inputs_optimizer_warmup", "inputs", "added warmup optimizer_frames",
          "expected warm-up: the optimizer creates its state on the first step; nothing to fix (in the "
          "pytest plugin, count that step as warm-up too: warmup=2)",
          unless="comes_back"),
    # review 9 (F7, x3_accum_remainder): plain SGD has no state; the inputs the first step adds are the gradients
    # its backward() created (kept by zero_grad(set_to_none=False)), made at the user's line, not in torch/optim
    _rule("inputs_first_step_warmup", "inputs", "added warmup",
          "expected warm-up: the first step creates tensors every later step reads ({shapes}: the gradients of the "
          "first backward(), kept by zero_grad(set_to_none=False), or optimizer state such as momentum buffers); "
          "nothing to fix (in the pytest plugin, count that step as warm-up too: warmup=2)",
          unless="comes_back"),
    _rule("inputs_library_warmup", "inputs", "library_first_step", _LIBRARY_WARMUP,
          unless="user_made_inputs transposed_input comes_back"),
    _rule("inputs_library_state_dumped", "inputs",
          "added library_inputs second_step first_recompilation compilations_only",
          "expected warm-up: {library} creates its state on its first step and passes it in as inputs from then on "
          "({shapes}); nothing to fix if later steps reuse this graph (a dump holds compilations only, not the steps "
          "that reused them: PT_XLA_DEBUG_LEVEL=2 or `hlodiff record` shows them)",
          unless="user_made_inputs transposed_input comes_back"),
    _rule("inputs_state_dumped", "inputs",
          "added only_added second_step first_recompilation last_in_family compilations_only",
          "expected warm-up: the first step creates tensors that every later step reads ({shapes}; for example gradients kept "
          "by zero_grad(set_to_none=False), or an optimizer's state); this graph only adds them and their updates to "
          "the first, nothing it computed became an input; nothing to fix if later steps reuse this graph (a dump "
          "holds compilations only, not the steps that reused them: PT_XLA_DEBUG_LEVEL=2 or `hlodiff record` shows "
          "them)", unless="jax transposed_input comes_back"),
    _rule("inputs_library_state", "inputs", "added library_inputs second_step first_recompilation short_run",
          "expected warm-up: {library} creates its state on its first step and passes it in as inputs from then on "
          "({shapes}); nothing to fix if later steps reuse this graph (this run is too short to show it: check "
          "that the next step is a cache hit)", unless="user_made_inputs transposed_input comes_back"),
    _rule("inputs_library_state_kept", "inputs", "added library_inputs second_step first_recompilation",
          "expected warm-up: {library} creates its state on its first step and passes it in as inputs from then on "
          "({shapes}); the first step's graph never comes back; nothing to fix",
          unless="user_made_inputs transposed_input comes_back"),
    # review 3 F2: a cycle whose added inputs the user's own line made (a batch dict gaining a key every 3rd step)
    # and whose added ops read them is the data's structure, not gradient accumulation (that is
    # accumulation_cycle, with the optimizer's update on some graphs of the cycle only)
    _rule("inputs_cycle_data", "inputs", "added cycle user_made_inputs ops_use_new_inputs",
          "a tensor ({shapes}) made at {made} is an input on {steps} only, and the ops that read it are traced only "
          "then: the data has another structure on those steps (a key or field present in some batches only): give "
          "every batch the same keys (a neutral value when one is missing, such as a weight of ones) so every step "
          "traces the same ops", unless="jax optimizer_in_cycle"),
    # round 10 (r10_r1_lazy_reg, A,B,B,B,C,B,B,B,C): the periodic graph C is most alike to the first step's A (both
    # run the periodic work), which ran before the optimizer made its state: the state's inputs are that warm-up's
    # difference, not the cycle's (the cycle is the other cause); A never comes back
    _rule("inputs_vs_first_step", "inputs", "added cycle optimizer_frames stays torch_xla",
          "follows from the optimizer's state: the graph this one is compared with is the first step's, run before "
          "the optimizer created its state (inputs on every later step); what this graph itself does differently "
          "is the other change", unless="comes_back first_recompilation second_step"),
    _rule("inputs_cycle", "inputs", "added cycle",
          "the graphs cycle every {period} steps (as gradient accumulation does: grads created, accumulated, then "
          "the optimizer step), each variant compiled once: if that is the design, those {period} graphs are its "
          "cost; to make it one graph, accumulate into buffers made before the loop (zeros, then add_ every step) "
          "so every step traces the same ops"),
    _rule("inputs_made_first_step", "inputs", "first_step_made added", _MADE_FIRST_STEP, unless="jax comes_back"),
    # round 9 (embed_vocab_grow): the step reads a new table of another size and the old one it is copied from:
    # a parameter rebuilt mid-run (an embedding resized for added tokens), not a value synced on some steps
    _rule("inputs_resized", "inputs", "added resized_input",
          "a tensor the step reads was made again at another size ({shapes}) and the old one copied into it: a "
          "parameter or buffer rebuilt mid-run (an embedding resized for added tokens, a head for new classes); "
          "the step compiles again for the new size, once per resize: make it at its final size before the first "
          "step (add the tokens first, or allocate spare rows, e.g. a vocabulary padded to a multiple of 64); if "
          "the resize is deliberate, expect one compilation per size"),
    # round 11 (r11_tx_momentum_warmup): step 4 reads back the momentum buffers step 3 began
    _rule("inputs_optimizer_state_late", "inputs", "reads_state_begun_late torch_xla",
          "follows from the optimizer state begun one graph earlier (its outputs added): from here on the optimizer "
          "reads that state back ({shapes}) and updates it; the fix is there", unless="jax"),
    # round 30 (r30_tx_depth_curriculum): a graph that only adds weights made by torch.nn layers, returns them
    # updated (it trains them) and adds the ops computing with them, after the first recompilation: layers the
    # step did not run before run now (a depth schedule); never a value synced on some steps (look-alikes: a
    # model's first-step weights keep inputs_module_warmup; an embedding resized keeps inputs_resized; another head
    # on some steps comes back: path_swap). Thirteenth stop's last read: `trains` holds for an added dot alone (a
    # forward in eval reads new layers and writes nothing back), so the words claim the reads and the ops only
    _rule("inputs_layers_joined", "inputs", "added only_added module_made_inputs trains with:ops torch_xla",
          "the step now reads weights of torch.nn layers it did not use before ({shapes}), with new ops that "
          "compute with them (whether it also writes them back is not what this row checks): more (or other) layers run from this step on (a depth schedule, a block or head "
          "added): each new set of layers is a new graph; run every layer from the first step (gate a layer's "
          "output with a 0/1 tensor until its stage) so one graph serves, or expect one compilation per stage",
          unless="jax comes_back first_recompilation resized_input"),
    # round 24 (r24_tx_ul2_causal_toggle): the same words told a causal mask built inside
    # scaled_dot_product_attention(is_causal=True) on some steps, a prefix mask passed in on others, as a sync
    # missing on some steps; what was seen cannot tell the two apart, so both are said, each with its check
    _rule("inputs_seen", "inputs", "",
          "a value computed in the graph on some steps is device data (an input) on others ({shapes}); check which "
          "of two it is: a tensor synced or read before this step on some steps only (then sync at the same points "
          "every step), or a Python `if` that builds it inside the graph on some steps (a library call making it "
          "itself, such as a causal mask) and passes a tensor in on others (then make it one way every step)"),
    # -- outputs ------------------------------------------------------------------------------------------------
    _rule("outputs_made_before_loop", "outputs", "materialized removed_only",
          "follows from the inputs change: expected once: a tensor made before the loop was computed by the first "
          "step's graph and is device data from then on (call torch_xla.sync() right after creating it to keep it "
          "out of the step)", unless="jax comes_back"),
    # Dynamo round 5 (dyn_ema_global_control): tensors made before the loop on the device (copy.deepcopy of a model
    # on the device is pending ops) that the first step's sync computes and no later graph of it reads
    _rule("outputs_made_before_loop_unread", "outputs", "removed_only settles second_step torch_xla",
          "expected warm-up: the first step's graph also computed tensors made before the loop (a model copied or "
          "moved on the device, e.g. copy.deepcopy), which later steps find as device data; nothing to fix (call "
          "torch_xla.sync() right after making them to keep them out of the first step)",
          unless="jax comes_back metric_outputs"),
    # round 20 (r20_tx_swa_update_read): the same warm-up in a family that changes again later (SWA's averaging
    # starts at step 3, and its first copy looks like step 0's, so the family does not `settle`): outputs made in
    # library code (an AveragedModel's deepcopy) computed by step 0 only, step 0's graph never seen again
    _rule("outputs_made_before_loop_library", "outputs", "removed_only second_step module_state_copy torch_xla",
          "expected warm-up: the first step's graph also computed tensors that library code made before the loop "
          "(a model copied or moved on the device: copy.deepcopy, an AveragedModel or EMA copy), which later steps "
          "find as device data; nothing to fix here (call torch_xla.sync() right after making them to keep them out "
          "of the first step); the later changes of this graph are told on their own",
          unless="jax comes_back metric_outputs"),
    # thirteenth stop (d27_tie_late: the LM head tied to the embedding at step 2): one parameter's update leaves the
    # step with nothing but elementwise work (its gradient is still computed, into the weight used in its place):
    # the optimizer holds a tensor the model no longer uses. A frozen weight loses its gradient's dot too
    _rule("outputs_update_dropped", "outputs", "update_dropped",
          "from {first_step} on the step no longer updates one parameter in place, while the work computing its "
          "gradient stays: the optimizer holds a tensor the model no longer uses (a weight tied or replaced after "
          "the optimizer was built, e.g. `head.weight = emb.weight` after the first steps), so that tensor gets no "
          "gradient and torch.optim skips it (the weight used in its place gets both gradients); tie or replace "
          "weights in __init__, before the first step and before building the optimizer, so it holds the weights "
          "the model uses", unless="jax comes_back"),
    _rule("outputs_frozen", "outputs", "updates_removed switched",
          "from {first_step} on the graph stops computing the gradients and updates of some parameters and keeps "
          "it: they were frozen (requires_grad_(False)) or left out of the optimizer there; if that is deliberate, "
          "this one recompilation is its cost; otherwise freeze them before the first step", unless="jax comes_back"),
    # round 11 (r11_tx_momentum_warmup): SGD's momentum written from 0.0 to 0.9 at step 3: step 3's graph returns
    # the new buffers, step 4's reads them in torch/optim (look-alikes: tests/test_round11.py)
    _rule("outputs_optimizer_state_late", "outputs", "state_begun_late torch_xla",
          "from this graph on the optimizer keeps state it did not keep before: outputs are added with no new work, "
          "and the next graph reads them back in torch.optim. An optimizer setting that makes state was switched "
          "on after the first steps, e.g. SGD's momentum raised from 0.0 (torch keeps no momentum buffer while "
          "momentum is 0): two more compilations, expected if intended; to avoid them, set it from the first step "
          "(momentum above 0 from the start, a schedule that starts above 0)", unless="jax comes_back"),
    _rule("outputs_follow", "outputs", "lead_change added removed",
          "follows from the {lead} change: outputs changed type or shape with it", unless="outputs_recounted"),
    _rule("outputs_library_warmup", "outputs", "library_first_step", _LIBRARY_WARMUP, unless="comes_back"),
    _rule("outputs_jax", "outputs", "jax",
          "the function returns other values on some calls (a metric, a log): return the same outputs every call"),
    # crossings round 3 (norm_after_sync): a metric computed below the sync, read on some steps only: on the others
    # it is still pending at the next sync and that step's graph computes it too (an output more)
    _rule("outputs_after_sync", "outputs", "after_sync:metric torch_xla",
          "{line} runs after the step's sync ({sync}): what it computes is still pending at the next sync, so on the "
          "steps nothing reads it first the next step's graph computes it too (this graph ran on {steps}); compute "
          "it before the sync, inside the step, or read it in xm.add_step_closure; once compiled, each variant is "
          "reused", unless="jax"),
    # review 8 (T2, rev8_eval_nosync): validation every third step below the sync, never synced: its ops ride in
    # the next training step's graph; "compute it every step" is no fix for a validation, nor "inside the step".
    # after_sync:validation is the wider evidence (any user line below the step's sync, a model's forward called
    # from a validation block); after_sync:metric, the loop's own line below the sync (a metric there), wins over it
    _rule("outputs_pending_after_sync", "outputs", "after_sync:validation torch_xla",
          "the work at {line} runs after the step's sync ({sync}) on some steps (a validation, a metric) and is "
          "never synced on its own: its ops stay pending and run inside the next step's graph (this graph ran on "
          "{steps}), another graph to compile: call torch_xla.sync() right after that block (after the validation "
          "loop), or read its result there (.item()), so each training step stays one graph"),
    # review 10 F4 (tx_item_mid #1 vs #7): 1 output added, 2 removed, the weight updates gone: a branch that skipped
    # opt.step() on a spike; the constant beside it (x * 1.0 baked) changed no output
    _rule("outputs_other_values", "outputs", "outputs_recounted torch_xla",
          "the graph returns other values at {line} (another number of outputs, not the same ones with another type "
          "or shape): other code ran there (a Python `if` took the other branch, an update skipped on some steps); "
          "if a value read from a tensor (.item(), a comparison) chose the branch, compute both branches on the "
          "device and choose with torch.where, so every step runs the same graph"),
    _rule("outputs_some_steps", "outputs", "",
          "the graph's outputs differ at {line} (this graph ran on {steps}): a value is kept on some steps only (a "
          "metric, a log): compute it every step, or read it after the sync"),
    # -- ops ----------------------------------------------------------------------------------------------------
    # thirteenth stop (d27_tie_late): with outputs_update_dropped, the weight used in place of the dropped one sums
    # both gradients: ops added by the same change, not a Python `if`
    _rule("ops_update_dropped", "ops", "update_dropped",
          "follows from the parameter update left out of the step (its outputs above): the weight used in its place "
          "now takes both gradients; the fix is there", unless="jax comes_back"),
    _rule("ops_rng_seed", "ops", "rng_seed_update",
          "follows from the number of random draws in this graph: torch_xla advances its random seed once per draw "
          "(seed * 214013 + 2531011), so a graph holding one draw more or fewer has these instructions more or fewer; "
          "no branch of your code decides them", unless="jax"),
    _rule("ops_converts_follow", "ops", "converts_only with:dtype",
          "follows from the dtype change: the converts come with it"),
    _rule("ops_transposes_follow_inputs", "ops", "transpose_copy_only with:transposed_input",
          "follows from the inputs change: the transposes come with the transposed input"),
    _rule("ops_layout_follow", "ops", "layout_ops_only lead_change",
          "follows from the {lead} change: the tracer lays out the same values with other transposes or copies "
          "along with it"),
    # review 11 (F4, tx_ema_control via compare #7 #8): transposes appearing beside an input gone or added, no value
    # computed differently: the tracer's layout of the same values, not a Python branch
    _rule("ops_layout_follow_inputs", "ops", "transpose_copy_only with:inputs",
          "follows from the inputs change: the same values are laid out with other transposes or copies once the "
          "graph's inputs are numbered differently; no operation computes anything else", unless="jax"),
    _rule("ops_size_follows", "ops", "grows broadcast_reshape_only",
          "follows from the growing size: the tracer emits other broadcasts or reshapes for a size of 1 than for "
          "larger sizes; fix the size and this goes too"),
    # round 8 (spmd_load_state_mid): parameters restored from the host mid-run arrive replicated and the next step
    # annotates them again; told as the restore it is, not as a warm-up or a layer's setting
    _rule("ops_spmd_state_copy", "ops", "sharding_annotations_only module_state_copy torch_xla",
          _STATE_COPY.format(what=" (the restored parameters arrive replicated and are sharded again inside it)"),
          unless="jax"),
    _rule("ops_spmd_annotation_warmup", "ops", "sharding_annotations_only torch_xla second_step first_recompilation",
          "expected warm-up: from the second step on torch_xla's SPMD annotates the tensors the first step updated "
          "(the parameters) with their sharding (only `Sharding` custom-calls and layout ops appear); every later "
          "step reuses the graph; nothing to fix", unless="jax"),
    _rule("ops_optimizer_warmup", "ops", "with:inputs second_step settles optimizer_frames",
          "follows from the inputs change (warm-up): from the second step on the optimizer also updates the state "
          "it created on the first (momentum, moments): nothing to fix", unless="removed comes_back"),
    # review 9 (F7): no optimizer frame (plain SGD, the second micro-batch adding its gradients to the first's)
    _rule("ops_first_step_warmup", "ops", "with:inputs second_step settles",
          "follows from the inputs change (warm-up): from the second step on the graph also updates the tensors "
          "the first step created (gradients accumulated into, optimizer state): nothing to fix",
          unless="removed comes_back"),
    _rule("ops_library_warmup", "ops", "library_first_step", _LIBRARY_WARMUP, unless="rewired comes_back"),
    # round 20 (r20_tx_radam_rect_control): a library's own branch on its step count (RAdam's rectification), all
    # in library code: "run the same ops every step (torch.where)" cannot be followed and nothing needs following
    _rule("ops_library_step_branch", "ops", "library_step_branch torch_xla",
          "expected once, by the library's design: {branch}; the graph changes there once and is reused from then "
          "on; nothing to fix", unless="jax comes_back"),
    _rule("ops_checkpointing", "ops", "barrier_one_side torch_xla",
          "one graph recomputes part of the forward inside the backward behind an optimization barrier and the "
          "other does not (this graph ran on {steps}): activation checkpointing (torch_xla's checkpoint, gradient "
          "checkpointing) is on for some steps only: decide it before the first step and keep it the same",
          unless="jax"),
    _rule("ops_loop_unrolled", "ops", "block_repeats",
          "each new graph traces about the same block of ops once more ({added_each} instructions added) and the "
          "earlier graphs never come back: a Python loop whose iteration count grows in stages (a curriculum of "
          "refinement steps, a longer unrolled sequence) is unrolled once more each time; keep the iteration count "
          "fixed (run the largest count and mask the extra iterations), or loop on the device (torch_xla's "
          "fori_loop / while_loop)", unless="jax"),
    # new-user review 19, F5 (P2: AdamW stepped every 4th micro-batch): the optimizer's update appears in a graph
    # whose predecessor never ran it, with its state kept (outputs added) and its settings read (inputs added):
    # the optimizer's first step, not a setting that changed (a weight_decay raised from 0 adds ops, no state)
    _rule("ops_optimizer_first_step", "ops", "stays in_optimizer with:outputs with:inputs",
          "expected: from {first_step} on, the optimizer's update at {line} traces new ops together with new "
          "outputs (state it keeps) and new inputs (its settings): the optimizer's first step in this graph, which "
          "creates its state (Adam's exp_avg and exp_avg_sq), as when opt.step() runs every few syncs (gradient "
          "accumulation); each such graph compiles once; nothing to fix if opt.step() is meant to run there (a "
          "setting switched on that keeps new state, such as amsgrad, looks the same: then set it from the first "
          "step)",
          unless="jax first_recompilation comes_back"),
    _rule("ops_optimizer_setting", "ops", "stays in_optimizer",
          "from {first_step} on, the optimizer's update at {line} traces other ops and keeps them: a "
          "hyperparameter of the optimizer changed once (torch leaves a term out when its value is 0, such as "
          "weight_decay, and traces it when it is not): one more compilation, expected if intended; to avoid it, "
          "keep the setting on the same side of 0 from the first step", unless="jax first_recompilation comes_back"),
    # round 8 (eval_no_train_back): dropout's random bits went for good after a validation pass; the fix is the
    # mode the module was left in, not "the same setting from the first step"
    _rule("ops_dropout_stopped", "ops", "switched rng_removed torch_xla",
          "from {first_step} on, the graph at {line} no longer draws random numbers (dropout's random mask "
          "went) and keeps it so: a dropout stopped applying. Most often model.eval() was called (for a validation "
          "pass) and model.train() never again, so the model trains on without dropout: call model.train() "
          "after validation (or at the start of every training step); if dropout was switched off on purpose, "
          "this one compilation is its cost", unless="jax"),
    _rule("ops_switched_on", "ops", "switched added",
          "from {first_step} on, the graph traces ops at {line} that the earlier steps did not, and keeps them: "
          "a setting was switched on there (a Python `if` on the step, a schedule: clipping, a loss term, label "
          "smoothing, dropout raised from 0); "
          "use the same setting from the first step (switch it with a value, e.g. a weight of 0.0, not by leaving "
          "ops out), or accept this one compilation", unless="jax removed_only rewired"),
    _rule("ops_rewired", "ops", "rewired",
          "the same tensors are combined in another order (parameters, grads or a dict iterated in varying order): "
          "iterate in one fixed order"),
    _rule("ops_follow_new_argument_jax", "ops", "jax with:inputs ops_use_new_inputs",
          "follows from the inputs change: the added ops read the new argument (a Python branch on whether it is "
          "passed): pass it on every call, with a neutral value when unused", unless="removed"),
    _rule("ops_branch_jax", "ops", "jax",
          "the traced Python takes another path: keep branches and loop counts fixed (jnp.where / lax.cond)"),
    # round 14 (r14_tx_clip_after_warmup, PT_XLA_DEBUG_LEVEL=1): a library call's ops added, no line of the user's
    # on them, and compilations only: whether the call was switched on or is made on some steps cannot be seen
    _rule("ops_library_call_added", "ops", "library_call_ops compilations_only torch_xla",
          "ops were added inside library code ({library_call}: a library function called from a line of yours this "
          "capture does not name) and the capture holds compilations only, not the steps that reused them: a "
          "Python `if` of yours calls that function on some steps only (switched on after a warm-up, such as "
          "gradient clipping from step N, or chosen per step); call it on every step (with a setting that changes "
          "nothing while it is not wanted, e.g. a large max_norm), or accept one compilation per variant "
          "(PT_XLA_DEBUG_LEVEL=2 or `hlodiff record` shows which steps ran each graph, and the line)",
          unless="jax removed"),
    _rule("ops_library_setting", "ops", "library_ops",
          "the ops that differ were traced inside library code ({library_call}) and carry no line of yours: that "
          "call ran with another argument, option or mode in the other graph (approximate= on GELU, a dropout "
          "probability, train() vs eval()); find the call that reaches it and keep its settings the same",
          unless="jax"),
    # round 28 (r28_tx_gumbel_hard_switch): the same story once the library function and the user's one call of it
    # are known (explain.library_call_lines, from the installed library and the source on disk): F.gumbel_softmax
    # with hard= switched at step 4 was told with GELU/dropout/eval examples and no line
    _rule("ops_library_setting_call", "ops", "library_call_line",
          "the ops that differ were traced inside {function} ({library_call}), which your line {line} calls: that "
          "call was given another option in the other graph (a flag or a mode that picks which ops it traces; a "
          "float it is given is most often passed as device data, not traced); give it the same options from the first "
          "step (decide them before the loop), or accept one compilation per variant", unless="jax"),
    _rule("ops_made_first_step", "ops", "first_step_made",
          "expected once: the first step's graph also computed the tensors the program made before the loop (zeros, "
          "an initial value), which the later steps read as inputs, so the ops traced at {line} differ once; nothing "
          "to fix",
          unless="jax comes_back"),
    # round 10 (r10_r1_lazy_reg): work traced every Nth step only (a lazy regularizer, a periodic update): not a
    # branch to fold into torch.where, a schedule: each kind of step is one graph
    _rule("ops_periodic", "ops", "periodic torch_xla",
          "the ops traced at {line} run every {period} steps only (this graph ran on {steps}): a Python `if` on the "
          "step count adds them, and each kind of step is its own graph, compiled once: if running it every few steps is the "
          "design (a lazy regularizer, a periodic update), expected: one graph per kind of step; otherwise run that "
          "work every step, or after its own torch_xla.sync() so the training step's graph stays one"),
    # round 30 (r30_tx_spmd_act_hint_some): the only ops one graph adds are SPMD `Sharding` custom-calls and the
    # graph it differs from comes back (A,B,C,B,C): an xs.mark_sharding on a tensor the step computes, applied on
    # some steps only; torch.where is no answer (look-alikes: the second-step annotation warm-up, never back,
    # keeps ops_spmd_annotation_warmup; a restore, ops_spmd_state_copy)
    _rule("ops_sharding_hint_some_steps", "ops", "sharding_annotations_only comes_back torch_xla",
          "only sharding annotations differ (`Sharding` custom-calls; this graph ran on {steps}): an xs.mark_sharding "
          "on a tensor the step computes (an activation) is applied on some steps only, so the partitioner gets "
          "another program on those steps: annotate it on every step (move the mark_sharding out of the `if` that "
          "guards it), or on none", unless="jax second_step"),
    _rule("ops_branch", "ops", "",
          "the ops traced at {line} differ from the other graph's (this graph ran on {steps}): Python code decides "
          "per step what is traced (a Python `if`); run the same ops every step (torch.where)"),
    # -- the others -----------------------------------------------------------------------------------------------
    _rule("reordered_follow", "reordered", "lead_other",
          "follows from the {other} change: its values reach the outputs in another order"),
    _rule("reordered_library_warmup", "reordered", "library_first_step", _LIBRARY_WARMUP, unless="comes_back"),
    # round 34 (d34_param_reregister_control): a Parameter swapped in by del + register_parameter and the
    # optimizer rebuilt once: the outputs' order changed at one step and stayed (A,A,A,B,B,...): a one-time rebuild,
    # not work traced in a varying order, so "run them in a fixed order" sent a control's user after nothing. Torch
    # only: seen on torch_xla's graphs; a JAX pytree's order is the user's function's, not a rebuilt optimizer's
    _rule("reordered_switched", "reordered", "switched",
          "expected once: the same work reaches the outputs in another order from one step on and keeps it: "
          "something was rebuilt once with its items in another order (a parameter re-registered, an optimizer "
          "rebuilt over module.parameters(), a state dict reloaded); one compilation, nothing to fix",
          unless="jax comes_back"),
    _rule("reordered", "reordered", "",
          "the same work is traced in another order (callbacks, hooks, set iteration): run them in a fixed order"),
    _rule("layout_jax", "layout", "jax",
          "an argument arrives with another memory layout on some calls: make it the same every call"),
    _rule("layout", "layout", "",
          "a tensor arrives with another memory layout on some steps (.t(), permute): make it the same every step"),
    # review 22, F1 (rev22_jx_mesh_resize): num_partitions 4 -> 2, both sides on a mesh: the mesh was resized (an
    # elastic run dropping workers); "place the argument with the same sharding" cannot undo a device count
    _rule("sharding_device_count_jax", "sharding", "device_count jax",
          "expected once per device count: the program is now built for another number of devices (a mesh of "
          "another size: resized, or a sub-mesh), and XLA compiles one program per device count, whatever the "
          "arguments' shardings; after an elastic resize that is one compilation per mesh size, nothing to fix. If "
          "sizes come and go, precompile the step for each mesh size (jax.jit(f).lower(...).compile()) or keep the "
          "line that builds the mesh at one size", unless="torch_xla"),
    _rule("sharding_device_count", "sharding", "device_count",
          "expected once per device count: the program is now built for another number of devices (a mesh of "
          "another size: resized, or a sub-mesh), and XLA compiles one program per device count, whatever the "
          "tensors' shardings; after an elastic resize that is one compilation per mesh size, nothing to fix. If "
          "sizes come and go, run one warm-up step per mesh size up front, or keep the line that builds the mesh "
          "at one size"),
    _rule("sharding_warmup", "sharding", "with:inputs warm-up_only first_recompilation",
          "follows from the inputs change (warm-up): the state made on the first step (optimizer buffers) arrives "
          "as inputs sharded like its parameters, and the inputs renumber; nothing to fix", unless="comes_back"),
    _rule("sharding_state_copy", "sharding", "module_state_copy torch_xla",
          _STATE_COPY.format(what=" (the restored parameters arrive replicated where the step's own outputs were "
                                  "sharded)"), unless="jax"),
    # round 10 (r10_spmd_shard_late): weights marked with xs.mark_sharding after some steps ran unsharded (a smoke
    # test first): from then on the step's inputs arrive tiled where they were replicated, once and for good
    _rule("sharding_marked_late", "sharding", "sharded_from_replicated stays torch_xla",
          "from this step on, tensors the step reads (parameters, carried state) arrive split over the devices where "
          "earlier steps had them whole (replicated): xs.mark_sharding was applied to them after training had "
          "begun, so the step compiles once more for the new sharding: annotate them before the first step (right "
          "after moving the model to the device, before any step runs); if resharding mid-run is deliberate, expect "
          "one compilation per change", unless="jax comes_back second_step"),
    _rule("sharding_torch", "sharding", "torch_xla",
          "an input or op is sharded differently between steps: mark_sharding with the same mesh and spec every "
          "step"),
    _rule("sharding", "sharding", "",
          "an input or op is sharded differently between steps: mark the same sharding (mesh, spec) every time"),
    _rule("aliasing_jax", "aliasing", "",
          "donation was toggled between calls (donate_argnums, buffer donation): keep the donated arguments fixed",
          unless="torch_xla"),
    _rule("aliasing_warmup", "aliasing", "torch_xla donates_added_inputs first_recompilation settles",
          "follows from the inputs change (warm-up): torch_xla donates the buffers of tensors the step overwrites "
          "(XLA_ENABLE_PARAM_ALIASING), and the new inputs (optimizer state, once it exists) are overwritten in "
          "place: nothing to fix", unless="comes_back"),
    _rule("aliasing_follow_inputs", "aliasing", "torch_xla donates_added_inputs",
          "follows from the inputs change: torch_xla donates the buffers of tensors the step overwrites "
          "(XLA_ENABLE_PARAM_ALIASING), the new inputs among them: fix the inputs change and this goes too"),
    _rule("aliasing_library_warmup", "aliasing", "torch_xla library_first_step", _LIBRARY_WARMUP, unless="comes_back"),
    # review 21, F4 (rev21_tx_freeze_test; freeze_backbone, ulmfit_unfreeze): the updates of frozen weights went (of
    # unfrozen ones came), so their buffers are no longer (now) donated: a consequence, never a fix of its own
    _rule("aliasing_follow_frozen", "aliasing", "torch_xla removed_only donors_updated",
          "follows from the outputs removed above: torch_xla donates the buffers of tensors the step overwrites "
          "(XLA_ENABLE_PARAM_ALIASING), and the parameters no longer updated (frozen, or left out of the optimizer) "
          "are no longer overwritten: it comes and goes with that change, nothing of its own to change"),
    _rule("aliasing_follow_unfrozen", "aliasing", "torch_xla donors_trained",
          "follows from the outputs added above: torch_xla donates the buffers of tensors the step overwrites "
          "(XLA_ENABLE_PARAM_ALIASING), and the parameters it now trains (unfrozen, or added to the optimizer) are "
          "overwritten from here on: it comes and goes with that change, nothing of its own to change"),
    # round 32 (r32_tx_spmd_metric_after_sync_control): the HLO is identical on both sides, so the step updates the
    # same tensors in place on both: the program is not what changed. torch_xla donates a buffer only when no other
    # reference holds the tensor at the sync, so what held the parameters differed; say what was seen, what to check
    _rule("aliasing_torch_same_program", "aliasing", "torch_xla donation_only",
          "the program is the same on both sides; only which buffers torch_xla donated differs (it donates a "
          "tensor's buffer to the step's outputs only when nothing else holds a reference to that tensor at the "
          "sync; XLA_ENABLE_PARAM_ALIASING): something held these tensors at one sync and not at the other (a "
          "reference kept by a hook, a logger, a profiler or another tool, a closure, or garbage not yet "
          "collected); check what holds them around that step. Each donation set compiles once, then is reused"),
    _rule("aliasing_torch", "aliasing", "torch_xla",
          "torch_xla decides donation itself (it donates the buffers of tensors the step overwrites in place; "
          "XLA_ENABLE_PARAM_ALIASING): a tensor updated in place (add_, copy_, optimizer state) on some steps only "
          "changes it: update the same tensors in place every step"),
    _rule("compile_options", "compile_options", "",
          "the same graph was compiled with other options (XLA_FLAGS, compiler options): set them once, up front"),
    _rule("weak_type_torch", "weak_type", "torch_xla",
          "a Python scalar and a tensor were passed in turn: pass the same kind of value every step"),
    _rule("weak_type", "weak_type", "",
          "a Python scalar (weak type) and a typed array were passed in turn: pass a typed array (jnp.float32(x))"),
    # -- static arguments (JAX names them): the framework requires some to stay static --------------------------
    # round 17 (r17_jx_grl_nondiff_static): custom_vjp refuses tracers in nondiff_argnums, so "pass it traced" alone
    # raises UnexpectedTracerError; the value leaves nondiff_argnums first (read from the source when on disk)
    _rule("static_nondiff_argnums", "static_argument", "jax nondiff_static",
          "static `{arg}` ({values}) is static because it feeds `{callee}`'s nondiff_argnums (jax.custom_vjp "
          "refuses tracers there), so each value compiles again: make it an ordinary argument of `{callee}` (out "
          "of nondiff_argnums), have the backward rule return a zero cotangent for it (jnp.zeros_like), then pass "
          "it traced (drop it from static_argnums): one program for every value"),
    # round 18 (r18_jx_static_nan): a static float NaN is hashable but never equal to itself: the cache compares
    # static arguments with ==, so every call misses; "fix its value" is what the user already does
    _rule("static_nan", "static_argument", "jax nan_values",
          "static `{arg}` is NaN on every call, and NaN never equals itself: JAX compares static "
          "arguments with ==, so no call finds the program compiled for the last one and each compiles again; "
          "pass a value that equals itself instead (None, a string mode such as 'ignore', a bool flag) or pass "
          "`{arg}` traced (drop it from static_argnums/static_argnames)"),
    # round 20 (r20_jx_static_dtype_spelling): a config's "bfloat16" and jnp.bfloat16 are one dtype but two keys
    # (hashed differently); "fix its value" or "keep it out of the static arguments" miss that it sets the casts
    _rule("static_dtype_spelling", "static_argument", "jax dtype_spellings",
          "static `{arg}` is the same dtype spelled {count} ways ({values}): JAX keys a static argument by its hash "
          "and ==, and a string, a scalar type and an np.dtype hash differently, so the same program compiles once "
          "per spelling: normalize it once, e.g. `{arg} = jnp.dtype({arg})` where it is read (a config, a "
          "default), and pass that one spelling at every call; it stays static (it sets the casts)"),
    _rule("static_flag", "static_argument", "jax bool_values",
          "expected: static `{arg}` takes {count} values ({values}), one graph per value (e.g. train and eval "
          "each compile once); nothing to fix -- it must stay static (a Python `if` reads it)"),
    # crossings round 8 (x8c_jx_remat_policy_fresh): a remat policy `def`ined inside the loop, passed static: one
    # name, a new address each call; "keep it out of the static arguments" misses that a policy must be a Python
    # callable, and "fix its value" that its value never changed (look-alike: jax_remat_policy_switch's two named
    # policies keep static_choice)
    _rule("static_redefined_function", "static_argument", "jax redefined_function",
          "static `{arg}` is the function `{function}` made again before each call ({count} seen, each at a new "
          "address): a function is hashed and compared by identity, so each new one misses the cache and compiles "
          "again, though it does the same: define `{function}` once, before the loop (or at module level), and pass "
          "that one object on every call"),
    # round 27 (r27_jx_partial_static_loss): a loss configured with functools.partial(huber, delta=1.0) made anew
    # before each call and passed static: every partial prints the same, so neither the default-repr fact nor a
    # "new value" can say why it misses; a partial defines no __eq__/__hash__ (compared by identity)
    _rule("static_partial", "static_argument", "jax partial_values",
          "static `{arg}` is a functools.partial ({values}): a partial defines no __eq__ or __hash__, so it is "
          "compared by identity, and a partial made again before each call is a new static value every time, "
          "however alike it prints: make the partial once, before the loop, and pass that one object on every "
          "call; if its arguments must change, keep only the function static and pass them as traced arguments, "
          "or pass jax.tree_util.Partial(fn, *args) as an ordinary (non-static) argument, whose arguments are "
          "traced"),
    # last read of the twelfth stop (lr_jx_two_partials): partials made once before the loop (a training and an
    # evaluation loss) and passed in turn: as many compilations as partials, nothing made again
    _rule("static_partials_kept", "static_argument", "jax partials_kept",
          "static `{arg}` takes {count} functools.partials ({values}), as many as it compiled: each partial is "
          "kept and compiled once (a partial is compared by identity, so each object is its own program); "
          "expected if the choice is deliberate; for one compilation, keep only the function static and pass the "
          "partial's arguments as traced arguments, or pass jax.tree_util.Partial(fn, *args) as an ordinary "
          "(non-static) argument"),
    _rule("static_identity", "static_argument", "jax identity_values hlo_identical",
          "static `{arg}` is a new object on each call (default repr, {count} seen) and the program compiled for it "
          "is the same: it is compared by identity (its class defines no __eq__/__hash__), so equal objects miss "
          "the cache: build it once and reuse it, or give its class __eq__ and __hash__ (a frozen dataclass)"),
    _rule("static_type_only", "static_argument", "jax type_only_values",
          "static `{arg}` took one value in different types ({values}): JAX keys a static argument on its type too, "
          "so each type compiles again: pass one type on every call (e.g. float(x)), or pass it as a traced argument"),
    _rule("static_slice_start", "static_argument", "jax slice_start",
          "static `{arg}` only moves where a slice starts ({values}; its length stays): pass it as a traced argument "
          "and slice with lax.dynamic_slice(x, (start,), (size,)): one graph for every start",
          unless="required_static"),
    # round 7 (jax_scan_inner_static): padding or buckets answer shapes; a count of iterations is answered by a
    # fixed count with the extra iterations masked (with a traced count this also keeps reverse-mode grad, which
    # a while_loop with a traced bound would not)
    _rule("static_loop_count", "static_argument", "jax required_static loop_count_only",
          "static `{arg}` sets a loop's number of iterations (seen: {values}), so each count compiles again: run a "
          "fixed number of iterations every call (the largest) and mask the updates past the count, passing the "
          "count as a traced argument"),
    # review 9 F3 (j2_unrolled_solver): a Python `for _ in range(n)` over a static n is unrolled: the count need not
    # stay static, a lax loop with a traced count compiles once (fori_loop with traced bounds lowers to while_loop)
    _rule("static_unrolled_loop", "static_argument", "jax required_static unrolled_loop",
          "static `{arg}` sets how many times a Python loop runs (seen: {values}): the trace unrolls it, so each "
          "count compiles again and the program grows with it: write the loop as lax.fori_loop(0, {arg}, body, "
          "init) (or lax.while_loop) and pass `{arg}` traced (drop it from static_argnums): one graph for every "
          "count (reverse-mode grad needs a fixed count: run the largest and mask the steps past {arg})"),
    # round 9 (jax_remat_policy_switch): a static value that picks a way to build the program (a checkpoint policy,
    # an activation function, a mode string) is no size: nothing to pad or bucket; one compilation per choice
    _rule("static_choice", "static_argument", "jax required_static choice_values",
          "static `{arg}` picks how the program is built ({structure}; seen: {values}): each choice is its own "
          "program and compiles once; if the switch is deliberate (a setting changed once mid-run) that "
          "compilation is its cost, otherwise choose the value before the first call and keep it for the run"),
    # round 30 (r30_jx_vmap_bagging_axes): a static in_axes from a schedule, (0, None, None) with a shared batch and
    # (0, 0, 0) with stacked resamples: a None is "not mapped", no size; padding is the wrong advice (look-alikes:
    # jax_layerdrop_static's tuples of layer indices and scan_length's sizes keep their rows)
    _rule("static_axes_spec", "static_argument", "jax required_static axes_values",
          "static `{arg}` is an axis specification (seen: {values}: axis numbers and None, as vmap's in_axes), not a "
          "size that a fixed or bucketed value could replace; each spec is its own program, compiled once. To "
          "keep one program, pass the inputs in one form on every call (stack or broadcast the shared input along "
          "the mapped axis, so the spec never changes); if the spec switches on a schedule on purpose, each switch reuses a program compiled before"),
    # round 19 (r19_jx_onehot_max_label): num_classes = int(y.max()) + 1 per batch (8, 9, 10): buckets of a class
    # count no longer match the labels; the answer is the fixed value the data reaches (look-alikes: scan_length's
    # two lengths and jax_layerdrop_static's tuples keep static_structure; jax_static_topk's k per query moves here)
    # tenth stop (t10_jx_resumed_step_log): a global step resumed at 1000 (1000, 1001, ...) is bunched like a batch
    # statistic, and both count up in compilation order; the caller's source says it is the loop's counter: nothing
    # caps it, so no fixed value to reach; what the structure needs from it goes static, the count goes traced
    _rule("static_loop_counter", "static_argument", "jax required_static loop_counter",
          "static `{arg}` is the loop's step count (seen: {values}): it takes a new value on every call, so every call "
          "compiles again, without end, and no fixed value caps it; it sets {structure}: keep `{arg}` out of "
          "static_argnums/static_argnames and pass static only what the structure needs from it, computed on the "
          "host before the call (a boolean such as `{arg} % N == 0` for a branch: two programs), or pass `{arg}` "
          "traced and branch with lax.cond / jnp.where"),
    # round 23 (r23_jx_segment_num_nodes): the static value is a dimension of the inputs passed with it (a node
    # count for segment_sum's num_segments, the nodes concatenated unpadded): a fixed value alone would not do
    _rule("static_input_size", "static_argument", "jax required_static inputs_follow",
          "static `{arg}` is a size of the inputs themselves: arrays passed with it change shape with it (seen: "
          "{values}), so each new value compiles again, and fixing `{arg}` alone would not stop it: pad every "
          "batch's arrays to a fixed budget (the largest size the data can reach, or a few bucket sizes such as "
          "powers of two), pass that budget as `{arg}`, and mask the padding out of what is computed (for graph "
          "batches, jraph.pad_with_graphs): one compilation per budget", unless="loop_counter"),
    _rule("static_data_ceiling", "static_argument", "jax required_static data_values",
          "static `{arg}` sets the program's structure ({structure}) and its values follow the data (seen: {values}: "
          "bunched under a ceiling, as a statistic of each batch is -- its largest label + 1, a count, a length), so "
          "each new one compiles again: it must stay static, so pass the fixed value the data can reach on every call "
          "(the dataset's class count, the maximum length; at least {ceiling} here), computed once before the loop, "
          "and mask what lies past each batch's own value: one compilation", unless="loop_counter"),
    # tenth stop (lead47_jx_static_stage_branch): a static int stage (0, 1, 2) an `if` reads to switch loss terms
    # on: no size to pad, no loop to write as fori_loop (look-alikes: rev9_j2_unrolled_solver keeps
    # static_unrolled_loop, jax_layerdrop_static's tuples keep static_structure)
    _rule("static_branch", "static_argument", "jax required_static branch_values",
          "static `{arg}` switches which ops are traced (a Python `if` on it; seen: {values}): each value is its own "
          "program and compiles once; if it changes on a schedule (a stage, a mode) each switch costs one "
          "compilation and nothing needs fixing; to keep one program, pass `{arg}` traced and select with lax.cond "
          "or jnp.where (a weight of 0 turns a term off)"),
    _rule("static_structure_shapes", "static_argument", "jax required_static structure_shapes",
          "static `{arg}` sets the program's structure ({structure}), so it must stay static: reduce the values it "
          "takes (seen: {values}), e.g. pad to a few bucket sizes"),
    # eleventh stop (jax_layerdrop_static, live): a static that picks which ops run has no size to pad
    _rule("static_structure", "static_argument", "jax required_static",
          "static `{arg}` sets the program's structure ({structure}), so it must stay static: each value is its own "
          "program, compiled once; reduce the values it takes (seen: {values}) to a few fixed choices, or move what "
          "varies into traced data (a 0/1 mask over every choice) so fewer values reach the static argument"),
    _rule("static_unused", "static_argument", "jax hlo_identical",
          "static `{arg}` took a new value ({values}) without changing the computation: keep it out of the jitted "
          "function's static arguments (read it outside), or fix its value"),
    _rule("static_value", "static_argument", "jax",
          "each value of static `{arg}` compiles again ({values}): pass it as a traced argument, keep it out of "
          "the jitted function, or fix its value"),
    _rule("static_torch", "static_argument", "",
          "a Python value the graph depends on took a new value: pass it as a device tensor, or fix its value",
          unless="jax"),
    # round 21 (r21_jx_clear_caches_epoch): JAX's "never seen function ... maybe re-defined repeatedly" for the very
    # object id it compiled before, and the program calls jax.clear_caches(): the function is made once; "create and
    # jit it once, outside the loop" is what the user already does
    _rule("cache_key_caches_cleared", "cache_key", "jax new_function caches_cleared",
          "jax.clear_caches() at {cleared_at} empties every JAX cache, so the next call traces and compiles the same "
          "jitted function again (JAX's \"never seen\" names the id it compiled before): stop clearing the caches "
          "inside the loop; if host memory grows, look for what holds it (a jit made per call, sizes that keep "
          "changing, arrays kept alive) rather than dropping the compiled programs"),
    # round 10 (r10_jx_closure_table): a factory returns a new jitted closure per call and the program bakes in an
    # array it closes over: "create it once" alone would keep the first array for good (silently wrong results)
    _rule("cache_key_new_closure", "cache_key", "jax new_function with:constant",
          "the jitted function is made anew on each call of the code that defines it (a closure returned by a "
          "factory, a lambda), and its program bakes in a value it closes over (an array from the enclosing scope, "
          "a constant in the graph): jitting it once alone would keep the first value for good; make that value an "
          "argument instead: define the function once, jit it once, and pass the array at every call (traced), "
          "so one program serves every value"),
    _rule("cache_key_new_function", "cache_key", "jax new_function",
          "create and jit the function once, outside the loop, and reuse it"),
    _rule("cache_key_keyword", "cache_key", "jax keyword_call",
          "one call passes {keywords} by keyword and another positionally: JAX keys its cache on how arguments are "
          "passed, so the same function compiles again; pass them the same way (positional or keyword) at every call"),
    # crossings round 7 (x7c_jx_vjp_fn_arg, jax#3755): the pullback jax.vjp returns, passed into a jitted backward:
    # its structure holds the forward's jaxpr, new at each jax.vjp; no __eq__ of the user's can fix JAX's class
    _rule("cache_key_pullback", "cache_key", "jax pytree pullback",
          "the argument is a pullback from jax.vjp (or jax.linearize), passed into a jitted function: its pytree "
          "structure holds the traced forward, a new object at every jax.vjp, so every call's structure is new and "
          "the function compiles again every call though no shape changed; compute the forward and the backward in "
          "one jitted function (jax.vjp or jax.value_and_grad inside it, returning the gradients), or hand the "
          "residuals over as arrays (the forward returns them, the backward takes them)"),
    # round 17 (r17_jx_pytree_aux_identity): a custom pytree node whose aux_data is a new object of a class without
    # __eq__ each call: "the same keys, the same container types" is what the user already passes
    _rule("cache_key_pytree_identity", "cache_key", "jax pytree metadata_identity",
          "the pytree node `{node_class}` carries an object of class `{meta_class}` as its metadata (aux_data), a "
          "new one on each call, and `{meta_class}` is compared by identity (default repr: its class defines no __eq__/"
          "__hash__), so every call's structure is new though keys, containers and the program are the same: make "
          "the aux_data compare by value (a frozen dataclass, a tuple or a string) or build one `{meta_class}` and "
          "reuse it"),
    # round 22 (r22_jx_tx_rebuild_epoch): an optimizer of closures kept as a static field of a TrainState (flax's
    # TrainState keeps tx so), rebuilt every epoch to change the rate: the metadata reads the same but its functions
    # are new objects. Look-alikes keeping their rows: a pullback (its own row), an Info without __eq__
    # (cache_key_pytree_identity), a meta field's float that changes (jax_dataclass_meta_lr)
    _rule("cache_key_pytree_functions", "cache_key", "jax pytree metadata_functions",
          "the pytree node `{node_class}` carries functions in its metadata (a static field or aux_data, e.g. "
          "`{function}`), made anew on each call (closures from a builder, such as an optimizer rebuilt to change "
          "its rate) and compared by identity, so every call's structure is new though the program is the same: "
          "build that object once and reuse it; a value that must change (a learning rate) belongs in the data: a "
          "leaf, a schedule of the step count, or optax.inject_hyperparams"),
    _rule("cache_key_pytree", "cache_key", "jax pytree",
          "pass arguments with the same structure every call (same keys, same container types)"),
    # review 12 F5 (rev12_jx_matmul_precision, rev12_jx_promotion_eval, rev12_jx_default_device_eval): an eager op
    # (xs[0]) under `with jax.default_matmul_precision(...)` compiles again with the same HLO and no cache miss of its
    # own; JAX names the context for the jitted call on the same line. Look-alike: rev12_jx_eager_device_put (a
    # real jax.device_put, no context named): cache_key_placement stays
    _rule("cache_key_context_here", "cache_key", "jax hlo_identical context_here",
          "follows from the config context at {context_line} (`{setting}` changed there): JAX keys every "
          "compilation made under it on that setting, an operation run outside jit too, so this one compiled again "
          "with the same HLO; set `{setting}` once for the whole run and this goes too"),
    _rule("cache_key_placement", "cache_key", "jax hlo_identical placement",
          # review 8 F12: a per-device ensemble (one member committed to each device) is the same evidence as a
          # slip; the words say what was seen and what each case does instead of undoing a deliberate placement
          "the same trace compiled again with the same compiler options: the arguments live on another device or "
          "sharding than before (jax.device_put, a mesh), and JAX compiles once per placement; if a copy per device "
          "is deliberate (an ensemble, a model per device), this is expected once per device -- to compile once, "
          "stack the copies and run one sharded computation (vmap over a NamedSharding of the devices, or "
          "shard_map); if not, place the arguments on one device (or one sharding) every call"),
    _rule("cache_key_log_unjoined", "cache_key", "jax hlo_identical log_unjoined",
          "the HLO is identical, and JAX's log could not be matched to these modules (matching needs its "
          "'Compiling jit(...)' lines): read its TRACING CACHE MISS lines for this function, or capture again with "
          "JAX_LOG_COMPILES=1 beside JAX_EXPLAIN_CACHE_MISSES=1 (hlodiff record does both) so hlodiff names the "
          "argument"),
    _rule("cache_key_jax", "cache_key", "jax",
          "the HLO is identical: rerun with JAX_EXPLAIN_CACHE_MISSES=1 (hlodiff record) to see which argument "
          "changed"),
    _rule("cache_key", "cache_key", "",
          "the HLO is identical: keep the function object, argument types and compile options the same between "
          "calls"),
    _rule("mode_train_eval", "mode", "",
          "expected: train and eval steps are two graphs, each compiled once; nothing to fix (keep each behind a "
          "step function of its own so they stay apart)"),
    _rule("fallback", "*", "",
          "what differs here ({kind}, at {line}) changes between steps (this graph ran on {steps}): check which Python "
          "value or tensor sets it, and keep it the same on every step"),
)

EAGER = frozenset(("eager_op", "eager_op_same_hlo"))
"""Rows of a JAX operation run outside jit, compiled once per what it was called with: counted, not told one by one
(the live lines, :mod:`hlodiff.explain.live`)."""

RULES_BY_NAME = {r.name: r for r in RULES}
assert len(RULES_BY_NAME) == len(RULES), "rule names are unique"

EXPECTED = frozenset(("ops_optimizer_first_step", "shape_stayed_grown_data", "reordered_switched", "sharding_device_count_jax", "sharding_device_count", "dynamo_float_sets_shape", "shape_final_call_jax", "shape_size_schedule", "shape_model_width", "inputs_optimizer_state_reset", "static_flag",
    "setup_once", "eager_op", "eager_op_same_hlo", "shape_buckets", "shape_buckets_inner", "inputs_made_before_loop", "inputs_user_warmup",
    "inputs_optimizer_warmup", "inputs_first_step_warmup", "accumulation_cycle", "inputs_library_warmup", "inputs_library_state", "inputs_library_state_dumped", "inputs_library_state_kept", "inputs_state_dumped", "rotation_paths", "path_swap",
    "outputs_library_warmup",
    "ops_library_warmup", "ops_library_step_branch", "library_start", "ops_spmd_annotation_warmup", "reordered_library_warmup", "aliasing_library_warmup", "mode_train_eval",
    "dynamo_mode", "dynamo_python_flag", "dynamo_module_container", "dynamo_shape_buckets", "dynamo_parameter_shape",
    "dynamo_python_string", "dynamo_autocast", "dynamo_parameter_requires_grad", "dynamo_requires_grad_detached_pair", "dynamo_parameter_dtype", "dynamo_optimizer_groups", "dynamo_object_type",
    "dynamo_parametrized", "dynamo_object_identity", "dynamo_first_call_sync", "dynamo_compilations_only",
    "dynamo_python_dtype", "dynamo_optimizer_state_warmup", "dynamo_number_only_param",
    "dynamo_submodule_type", "dynamo_submodule_swap",
    "outputs_made_before_loop_unread", "outputs_made_before_loop_library",
    "dynamo_bridge_follows_expected", "dynamo_step_follows_expected", "dynamo_bridge_own", "carried_total_restart",
    "inputs_module_warmup", "inputs_made_first_step", "ops_made_first_step", "rotation_input_made_first_step"))
"""Rows whose fix says the compilation is expected, nothing to fix: a recompilation led by one of them is not an
unexpected one (``explain-recompile`` exits 0 for it, :mod:`hlodiff.explain.verdict`)."""
