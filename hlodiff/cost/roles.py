"""What a tensor crossing between graphs is to the training program: an activation saved for backward, a gradient,
a parameter, optimizer state, or other (issue 32, pytorch/xla#6347).

Two facts decide, both read from the live-tensor report printed before each graph (Python frames and IR):

* the **phase** of each graph: what the tensors it computes were traced by. A tensor whose frames pass through
  ``torch/autograd`` (``loss.backward()``) was made by the backward; through ``torch/optim`` by the optimizer's
  step; otherwise by the forward. Without frames (torch_xla records them only while ``XLA_IR_DEBUG`` is on), an IR
  op named ``*_backward`` marks a backward; else the phase is unknown. A graph's phase is the latest one its
  tensors were made in (optimizer after backward after forward): a backward graph also computes, say, the
  forward's pending loss when the program did not sync it apart;
* **where the tensor goes**: the phase of the graph that made it and of each graph that reads it. A tensor made by
  the optimizer is a parameter when some forward or backward reads it, optimizer state when only optimizer steps
  do.

:data:`ROLE_RULES` is the table (one test per row in ``tests/test_cross_roles.py``).
"""

from __future__ import annotations

from hlodiff.dumps.tensors_report import LiveTensor

ACTIVATION, GRADIENT, PARAMETER, OPTIMIZER_STATE, OTHER = (
    "activation", "gradient", "parameter", "optimizer_state", "other")
ROLES = (ACTIVATION, GRADIENT, PARAMETER, OPTIMIZER_STATE, OTHER)

FORWARD, BACKWARD, OPTIMIZER = "forward", "backward", "optimizer"
_ORDER = {FORWARD: 0, BACKWARD: 1, OPTIMIZER: 2}

PHASE_FRAMES: tuple[tuple[str, str | None, str], ...] = (
    # (a path the frame's file contains, its function (None: any), phase)
    ("/torch/optim/", None, OPTIMIZER),              # optimizer.step() and what it calls
    ("/torch/autograd/", "backward", BACKWARD),       # torch.autograd.backward (loss.backward() calls it)
    ("/torch/autograd/", "grad", BACKWARD),           # torch.autograd.grad
    ("/torch/_tensor.py", "backward", BACKWARD),      # Tensor.backward
)
"""A frame matching a row marks the phase (rows checked in this order, across all frames of a tensor). Only the
backward entry points mark a backward: a custom ``autograd.Function``'s forward also runs in ``torch/autograd``."""

ROLE_RULES: tuple[tuple[str | None, str | None, str], ...] = (
    # (phase that made it, phase of the graph reading it: None = any, role)
    (FORWARD, BACKWARD, ACTIVATION),          # saved by autograd for the backward that reads it
    (FORWARD, OPTIMIZER, ACTIVATION),         # ... read by a graph running the backward and the optimizer's step
                                              # (its phase is the latest): an optimizer step alone reads no
                                              # forward output (pytorch/xla#6347: a sync after the forward only)
    (BACKWARD, BACKWARD, GRADIENT),           # accumulated by the next microbatch's backward
    (BACKWARD, OPTIMIZER, GRADIENT),          # consumed by the optimizer's step
    (OPTIMIZER, FORWARD, PARAMETER),          # the updated weights the next step's forward reads
    (OPTIMIZER, BACKWARD, PARAMETER),         # ... or its backward (a weight it needs for the input's gradient)
    (OPTIMIZER, OPTIMIZER, OPTIMIZER_STATE),  # momentum, Adam moments: read by the next step alone
    (FORWARD, FORWARD, OTHER),                # e.g. a later microbatch's slice of the input batch
)
"""Rows are matched in order; a pair no row names is ``other``. The optimizer -> optimizer row is overridden to
``parameter`` when the same tensor also crosses into a forward or backward (:func:`role_of`)."""


def tensor_phase(tensor: LiveTensor) -> str | None:
    """The phase that traced a tensor, from its frames, else from its IR; None when neither tells.

    torch_xla prints the frames of the last node in post order that has any: the root's own when it was traced
    with source lines, else an older node's. So frames that name the optimizer or a backward decide either way
    (nothing later comes from an earlier phase's op), but forward-looking frames count only when the root has its
    own location; an op named ``*_backward`` in the IR marks a backward (autograd's engine runs the backward on its
    own thread, where torch_xla records no frames)."""
    frames = [(f.file.replace("\\", "/"), f.function) for f in tensor.frames]
    for marker, function, phase in PHASE_FRAMES:
        if any(marker in file and (function is None or name == function) for file, name in frames):
            return phase
    if any(node.op.endswith("_backward") for node in tensor.ir):
        return BACKWARD
    roots = [node for node in tensor.ir if node.is_root]
    if frames and (not tensor.ir or any(node.location is not None for node in roots)):
        return FORWARD
    return None


def graph_phase(outputs: list[LiveTensor]) -> str | None:
    """The latest phase among the tensors a graph computes (None when none tells)."""
    phases = [p for p in (tensor_phase(t) for t in outputs) if p is not None]
    return max(phases, key=_ORDER.__getitem__) if phases else None


FROZEN_FORWARD_ROLE = OTHER
"""What a forward graph hands on when it read weights and none of them is ever trained (a teacher under no_grad, a
frozen backbone synced apart: ``hlodiff record``'s ``params=`` keeps their ids from sync to sync while the trained
weights get new ones): no gradient reaches the graph that made it, so it is data the next graph reads as it reads a
batch, not an activation held for that graph's backward (cost round 3, ``xla_teacher_sync_control``)."""


SAVED_ACTIVATION_SOURCES = frozenset((BACKWARD, OPTIMIZER))
"""Phases of a graph that may hand on a forward's tensor held only by autograd: a graph that ran a backward or an
optimizer's step (its phase is the latest) and also a forward whose saved tensors a later graph's backward reads
(a GAN's generator run beside the discriminator's update, then synced apart from its own loss: crossings round 6,
``x6c_gan_fake_held``)."""


def saved_activation(made_in: str | None, read_in: str | None, own_phase: str | None, held_by_name: bool) -> bool:
    """A tensor its own frames place in the forward (``own_phase``), made by a graph of a later phase
    (:data:`SAVED_ACTIVATION_SOURCES`), that a graph running a backward reads while no name of the program holds it
    (``held_by_name`` False: the reading graph's report lists no such tensor, only autograd's saved tensors keep it)
    is an activation saved for that backward. A forward value the program keeps (a running total, the previous
    step's output) is listed by name and keeps the graph's role."""
    return (made_in in SAVED_ACTIVATION_SOURCES and own_phase == FORWARD and read_in in (BACKWARD, OPTIMIZER)
            and not held_by_name)


def role_of(made_in: str | None, read_in: str | None, read_by_model: bool = False,
            is_parameter: bool = False, from_frozen: bool = False, saved: bool = False) -> str:
    """The role of a tensor made in phase ``made_in`` and read by a graph of phase ``read_in``; ``read_by_model``:
    some forward or backward graph reads the same tensor too (then an optimizer's output is a parameter);
    ``is_parameter``: an ``nn.Parameter`` held it when ``hlodiff record`` reported (``params=``), which settles it
    where the phases cannot (a whole step in one graph reads the weights and the momenta alike); ``from_frozen``:
    the graph that made it is a forward of untrained weights (:data:`FROZEN_FORWARD_ROLE`); ``saved``: an activation
    autograd alone keeps for the reading graph's backward (:func:`saved_activation`)."""
    if saved and not is_parameter:
        return ACTIVATION
    if made_in == FORWARD and from_frozen:
        return FROZEN_FORWARD_ROLE
    if made_in == OPTIMIZER and (read_by_model or is_parameter):
        return PARAMETER
    for source, target, role in ROLE_RULES:
        if source == made_in and (target is None or target == read_in):
            return role
    return OTHER
