"""Which of a run's compiled programs are the user's: in ``compare-runs``' list, the user's own jitted functions
come before the operations JAX compiled for calls outside jit (``jit_broadcast_in_dim`` for ``jnp.ones``,
``jit__reduce_sum`` for ``x.sum()`` on a concrete array), which are listed after them in run order.

New-user review 14, F8: six eager ops came first and ``jit_update``, the one program the reviewer cared about,
seventh and without its line. The name decides (:data:`hlodiff.hlo.jax_eager_ops.NAMES`, JAX's operations and its
own private helpers, ``jit__normal``; a user's private function or lambda, ``jit__train_step``, ``jit__lambda``, is
the user's: tenth stop, t10_runs_private_step): across two runs a program is known by its module and the stacks of one compilation, and an
eager op and a user's function of the same name (``multiply``) are rare enough to be listed with the eager ops.
"""

from __future__ import annotations

from hlodiff.hlo.jax_eager_ops import NAMES


def is_users_program(program: str) -> bool:
    """``program`` (a module name) is not a JAX module compiled for an operation run eagerly; torch_xla's graphs
    (``SyncTensorsGraph``) are the user's steps."""
    if not program.startswith("jit_"):
        return True
    return program.removeprefix("jit_") not in NAMES


def users_first(verdicts: list) -> list:
    """``verdicts`` (anything with a ``program``) with the user's programs first, each part in its own order."""
    return ([v for v in verdicts if is_users_program(v.program)]
            + [v for v in verdicts if not is_users_program(v.program)])
