"""Host reads made by a library, not by the user: a step cut short by a read inside torch or torch_xla.

An early execution's stack names where the value was read. When its innermost frames are a library function known
to read a tensor on the host (``total_norm.isnan()`` in a Python ``if``), "read it after the sync" is advice the user
cannot follow: the read is not in their code. Each row names the function, what it reads, and the one change the
user can make at their call (new-user review 2026-11-27, F10). ``tests/test_library_reads.py`` has one test per row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LibraryRead:
    name: str
    file: str
    """The end of the library file's path (``torch_xla/_patched_functions.py``)."""
    functions: frozenset[str]
    """Functions of that file whose frame makes the read (the innermost library frame of the stack)."""
    call: str
    """The call as the user wrote it."""
    reads: str
    """What it reads on the host, in words."""
    fix: str
    """What the user can change at their call."""
    callers: frozenset[str] = frozenset()
    """When set, the frame just outside the reading one must be one of these (``torch/optim/adam.py:_single_tensor_adam``):
    a helper as general as torch.optim's ``_get_value`` reads many values, and only these callers read the one the
    row is about. Empty: any caller."""


def _row(name: str, file: str, functions: str, call: str, reads: str, fix: str, callers: str = "") -> LibraryRead:
    return LibraryRead(name, file, frozenset(functions.split()), call, reads, fix, frozenset(callers.split()))


LIBRARY_READS: tuple[LibraryRead, ...] = (
    _row("clip_grad_norm_nonfinite_xla", "torch_xla/_patched_functions.py", "clip_grad_norm_",
         "clip_grad_norm_(..., error_if_nonfinite=True)",
         "torch_xla's clip_grad_norm_ checks the norm on the host (total_norm.isnan() or total_norm.isinf()) "
         "when error_if_nonfinite=True",
         "pass error_if_nonfinite=False (check the norm after the sync, or in xm.add_step_closure, if you need it)"),
    _row("clip_grad_norm_nonfinite", "torch/nn/utils/clip_grad.py", "_get_total_norm clip_grad_norm_",
         "clip_grad_norm_(..., error_if_nonfinite=True)",
         "torch's clip_grad_norm_ checks the norm on the host (isnan or isinf in a Python `if`) when "
         "error_if_nonfinite=True",
         "pass error_if_nonfinite=False (check the norm after the sync, or in xm.add_step_closure, if you need it)"),
    _row("grad_scaler_found_inf", "torch/amp/grad_scaler.py", "_maybe_opt_step",
         "GradScaler.step(optimizer)",
         "GradScaler.step reads found_inf on the host (.item()) to decide whether to skip the optimizer step",
         "use a sync-free optimizer from torch_xla.amp.syncfree (syncfree.SGD, syncfree.Adam, syncfree.AdamW), "
         "which skips the step on the device"),
    # round 5 (dist_validate_args): a Distribution built on device tensors checks its parameters in __init__ and
    # each sample in log_prob (_validate_sample) with a Python `if` on the constraint's result: validate_args is on
    # by default since torch 1.8 (pytorch/pytorch#53763)
    _row("distribution_validate_args", "torch/distributions/distribution.py", "__init__ _validate_sample",
         "torch.distributions.<Distribution>(...) / .log_prob(value) (validate_args on by default)",
         "torch.distributions checks the distribution's parameters and samples on the host (a constraint's "
         "check read in a Python `if`) while validate_args is on, the default",
         "pass validate_args=False to the distribution (or call "
         "torch.distributions.Distribution.set_default_validate_args(False) once before training)"),
    # review 8 (T1, rev8_pad_multiple): on torch_xla 2.9 F.embedding_bag runs the graph of its index bookkeeping
    # (the flattened ids and the bag offsets, "user code trying to access tensor value before sync" at the model
    # call) before the step's sync, every step, and compiles it again for each new length of the ids
    _row("embedding_bag_offsets", "torch/nn/functional.py", "embedding_bag",
         "nn.EmbeddingBag / F.embedding_bag(...)",
         "torch_xla's embedding_bag runs its index bookkeeping (the flattened ids, the bag offsets) as a graph of its "
         "own before the step's sync, each step, once more for each length of the ids",
         "use nn.Embedding and reduce the bag yourself (emb(ids).mean(1), or a sum weighted by a padding mask), so "
         "the step is one graph; and pad the ids to one fixed length, so each length does not compile again"),
    # round 10 (r10_ctc_fallback, pytorch/xla#2844): torch_xla 2.9 has no lowering for CTC: aten::_ctc_loss and
    # its backward run on the CPU (met.executed_fallback_ops()), so the pending graph runs at the call, every step
    _row("ctc_loss_cpu_fallback", "torch/nn/functional.py", "ctc_loss",
         "nn.CTCLoss / F.ctc_loss(...)",
         "torch_xla has no lowering for CTC: aten::_ctc_loss and its backward run on the CPU (a fallback, listed by "
         "torch_xla.debug.metrics.executed_fallback_ops()), so the graph pending before it runs to hand the "
         "log-probabilities to the host, every step",
         "it compiles once and repeats every step (a steady cost, not a recompilation); to keep the step one graph, "
         "compute the CTC loss with device ops (the forward algorithm over the log-probabilities, a logsumexp "
         "recursion over time) instead of F.ctc_loss, or accept the split"),
    # round 14 (r14_tx_embed_maxnorm): nn.Embedding(max_norm=...) renormalises the looked-up rows in place with
    # aten::embedding_renorm_, which torch_xla 2.9 runs on the CPU (an in-place fallback: no empty out= buffer
    # comes back, so explain/cuts.py's fallback reason cannot see it; the stack names it)
    _row("embedding_max_norm_renorm", "torch/nn/functional.py", "_no_grad_embedding_renorm_",
         "nn.Embedding(..., max_norm=...) / F.embedding(..., max_norm=...)",
         "an embedding with max_norm renormalises the rows it looks up in place with embedding_renorm_, which has no "
         "XLA lowering and runs on the CPU (a fallback, listed by torch_xla.debug.metrics.executed_fallback_ops()), "
         "so the graph pending before it runs to hand the weights and ids to the host, every step",
         "it compiles once and repeats every step (a steady cost, not a recompilation); to keep the step one graph, "
         "drop max_norm and bound the rows with device ops after opt.step() (e.g. scale each row of the weight by "
         "min(1, max_norm / its norm) under torch.no_grad()), or accept the split"),
    # Dynamo round 24 (d24_save_on_cpu_steps): torch.autograd.graph.save_on_cpu's pack hook copies each tensor saved
    # for backward to the host as autograd saves it (pack_to_cpu: tensor.to("cpu")), so the pending graph runs
    # in the middle of the forward; on XLA the activations were never on a GPU to offload
    _row("save_on_cpu_pack", "torch/autograd/graph.py", "pack_to_cpu",
         "torch.autograd.graph.save_on_cpu()",
         "save_on_cpu's pack hook copies every tensor autograd saves for backward to the host as it is saved, so "
         "the graph pending before it runs in the middle of the forward (a cut step, compiled apart from the "
         "steps without the context)",
         "drop save_on_cpu on XLA (to save memory, recompute activations with torch_xla's gradient checkpointing "
         "instead), or keep the context on every step, so each step is cut the same way"),
    # round 27 (r27_tx_prune_schedule): a second prune of one parameter (torch.nn.utils.prune.l1_unstructured again
    # on a pruned weight) goes through PruningContainer, whose _combine_masks keeps the entries still unpruned with a
    # boolean index (t[mask == 1]): a nonzero, so the graph pending before the prune call runs early. It happens on
    # pruning steps only, inside torch; "apply the mask as values" is no change the user can make to it
    _row("prune_combine_masks", "torch/nn/utils/prune.py", "_combine_masks",
         "torch.nn.utils.prune.<method>(module, name, ...) on a parameter pruned before",
         "torch.nn.utils.prune combines the new mask with the earlier one (PruningContainer) by boolean-mask "
         "indexing (t[mask == 1], a nonzero whose size depends on the mask), so the graph pending before the prune "
         "call runs early to learn that size",
         "it happens on pruning steps only, once per prune; keep the training step whole by pruning between syncs "
         "(torch_xla.sync() before the prune call), and register the pruning before the first step "
         "(prune.identity(module, name)) so the forward (weight_orig * weight_mask) is the same graph at every "
         "stage; or accept one compilation per pruning stage as expected"),
    # round 25 (r25_tx_resume_state_to_device): Adam/AdamW/NAdam/RAdam/Adamax/Adagrad with capturable=False keep
    # each parameter's `step` counter as a CPU tensor and read it with _get_value (.item()) for the bias
    # correction; a read made on the XLA device means the counters were moved there (a checkpoint restored through
    # a to-device helper such as accelerate's send_to_device): one early execution per parameter, every step.
    # Only the single-tensor steps' reads of the counter (the eleventh stop's read): ASGD keeps step, eta and mu on
    # the parameter's device itself and reads them every step, no restore involved; the foreach paths of Adamax and
    # NAdam read lr by _get_value. (AdamW's step is Adam's _single_tensor_adam in torch 2.9; adamw.py has its own in
    # older releases.)
    _row("optimizer_step_count_on_device", "torch/optim/optimizer.py", "_get_value",
         "optimizer.step() (torch.optim, capturable=False)",
         "torch.optim reads each parameter's step counter on the host (_get_value, .item()) for its bias "
         "correction; the counters are CPU tensors unless the optimizer's state was moved to the XLA device (a "
         "state dict sent to the device before load_state_dict, as when a checkpoint is restored)",
         "keep the optimizer's step counters on the CPU: load the optimizer state dict as it was saved, without "
         "moving it to the device first (optimizer.load_state_dict places the moments on the parameters' device "
         "itself), or build the optimizer with capturable=True",
         callers="torch/optim/adam.py:_single_tensor_adam torch/optim/adamw.py:_single_tensor_adamw "
                 "torch/optim/nadam.py:_single_tensor_nadam torch/optim/radam.py:_single_tensor_radam "
                 "torch/optim/adamax.py:_single_tensor_adamax torch/optim/adagrad.py:_single_tensor_adagrad"),
)


def library_read(frames) -> LibraryRead | None:
    """The row whose function made the read: the innermost library frames of an early execution's stack (before
    the first frame of the user's code) are searched for a row's file and function. None when the stack starts in
    the user's code (the user's own read) or names no row."""
    frames = list(frames or ())
    for i, frame in enumerate(frames):
        if not frame.is_library:
            return None
        path = frame.file.replace("\\", "/")
        for row in LIBRARY_READS:
            if path.endswith("/" + row.file) and frame.function in row.functions and _called_from(row, frames[i + 1:]):
                return row
    return None


def _called_from(row: LibraryRead, outer) -> bool:
    """Whether the frame just outside the reading one is a caller the row allows (any, when it names none)."""
    if not row.callers:
        return True
    if not outer:
        return False
    path = outer[0].file.replace("\\", "/")
    return any(path.endswith("/" + c.rsplit(":", 1)[0]) and outer[0].function == c.rsplit(":", 1)[1]
               for c in row.callers)
