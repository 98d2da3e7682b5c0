"""JAX's eager ops: a family compiled for a call outside the user's jit (``jnp.ones``, ``x * 0.1`` on a concrete
array), compiled once per shape it was called with. Such a family is named ``eager op``, never the headline, and
no step of the user's; the primitives' table is :data:`hlodiff.hlo.jax_eager_ops.PRIMITIVES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hlodiff.hlo.jax_eager_ops import PRIMITIVES

if TYPE_CHECKING:
    from hlodiff.explain.families import Family


_EAGER_MAX_INSTRUCTIONS = 12
"""A primitive's eager module holds its one op and the parameters and plumbing around it: no more than this."""


def is_eager_op(family: "Family") -> bool:
    """A JAX family compiled for a call outside the user's jit: one-op modules named after a primitive
    (``jit_broadcast_in_dim``), or a function of JAX's own run eagerly (``jit__normal`` from ``jax.random.normal``,
    ``jit_multiply`` from ``x * 0.1`` on a concrete array). JAX keeps only user frames in a module's stacks, so a
    function of the user's shows up in them by name; one of JAX's shows only its caller."""
    if not family.module_name.startswith("jit_"):
        return False
    name = family.module_name.removeprefix("jit_")
    if name in PRIMITIVES and all(g.instructions <= _EAGER_MAX_INSTRUCTIONS for g in family.members):
        return True
    compiled = [g for g in family.members if g.compiled]
    return bool(compiled) and all(_called_from_user_code_only(g, name) for g in compiled)


def _called_from_user_code_only(graph, name: str) -> bool:
    """Some instruction has a stack, no frame of any stack is the jitted function itself (``name``, as JAX
    spells it in the module name: ``_lambda`` for ``<lambda>``), and every stack starts at one user line: an
    eager call is one line of the user's, while a user function traced under a wrapper of JAX's own name
    (``jit__fun`` from ``jax.pmap``, which traces the user's function through shard_map) has its operations on
    the several lines of that function."""
    cm = graph._canonical
    if cm is None:
        return False
    wanted = {name, name.rstrip("_"), "<lambda>" if name.strip("_") == "lambda" else name}
    lines = set()
    for comp in cm.module.computations:
        for inst in comp.instructions:
            frames = cm.frames(inst)
            if frames:
                # JAX records qualified names: main.<locals>.train_step, Trainer.step
                if any(f.function and f.function.rsplit(".", 1)[-1] in wanted for f in frames):
                    return False
                lines.add((frames[0].file, frames[0].line))
                if len(lines) > 1:
                    return False
    return bool(lines)


SHAPE, CONTEXT, PLACEMENT = "shape", "config context", "device"
"""What an eager op was compiled anew for, in the words of its family's line (``once per shape and device``)."""

_SLICE_SIZES = ("attribute:slice", "attribute:dynamic_slice_sizes")


def called_for(cause) -> str:
    """What an eager op's recompilation was compiled for, from its leading cause: :data:`CONTEXT` when JAX named a
    config context on its line (review 12 F5: ``xs[0]`` inside ``with jax.default_matmul_precision(...)``, the same
    HLO), :data:`PLACEMENT` when its arguments live on another device or sharding, else :data:`SHAPE` (a new shape
    or dtype of an argument, or a slice of another length)."""
    if cause.reason == "tracing_context":
        return CONTEXT
    if cause.kind == "sharding" or cause.fix_rule == "cache_key_placement":
        return PLACEMENT
    return SHAPE


def result_resized(cause) -> bool:
    """A slice of another length (``data[0, 0]`` beside ``data[step]``: ``dynamic_slice_sizes={1,1,8,16}`` where it
    was ``{1,2,8,16}``, the same input): for an op run outside jit the slice's size is the shape it was called for,
    so its family is told as a shape, like its siblings (review 12 F8c), though the graph shows an attribute."""
    return cause.kind == "attribute" and any(
        "shape" in o.kinds and any(k in o.kinds for k in _SLICE_SIZES) for o in cause.origins)
