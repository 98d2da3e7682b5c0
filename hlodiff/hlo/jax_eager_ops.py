"""The modules JAX compiles for one operation run outside the user's jit, by the name JAX gives them.

Code that calls a JAX operation on concrete arrays, outside any jitted function of the user's, still compiles: JAX
jits the operation itself and names the module ``jit_<operation>``. Two kinds of name occur:

* ``primitive``: a lax primitive bound eagerly (``jnp.ones`` binds ``broadcast_in_dim``, ``x.astype`` binds
  ``convert_element_type``, a ``device_put`` stages ``jit_stage``): a one-op module;
* ``numpy``: a ``jax.numpy`` function JAX jits as a whole (``jit_multiply`` for ``x * 0.1``, ``jit_clip``): a few
  ops, named after the function, which a user's own jitted function of that name could share.

* ``private``: a private helper of JAX's own that its public function jits (``jit__normal`` from
  ``jax.random.normal``, ``jit__mean`` from ``jnp.mean``, ``jit__threefry_split`` from ``jax.random.split``): named
  with a leading underscore, as a user's private function (``_train_step`` -> ``jit__train_step``) or a jitted lambda
  (``jit__lambda``) is too, so only the names below are JAX's (tenth stop, t10_runs_private_step: compare-runs listed
  the user's two programs as eager ops, after them and without their lines).

Who reads this: :func:`hlodiff.explain.eager_ops.is_eager_op` (a family of one-op modules of a primitive is an
eager op, not a step of the user's; a function's name alone is not enough, its stacks decide) and
:func:`hlodiff.cost.donation.is_jax_own_module` (an eager op's input usually lives on in the user's code: not
donating it is no finding). Knowledge as data, one test per row (tests/test_jax_eager_ops.py).
"""

from __future__ import annotations

from dataclasses import dataclass

PRIMITIVE = "primitive"
NUMPY = "numpy"
PRIVATE = "private"


@dataclass(frozen=True, slots=True)
class EagerOp:
    """One operation JAX compiles as ``jit_<name>`` when the user runs it outside jit."""

    name: str
    kind: str
    """:data:`PRIMITIVE` (a one-op module), :data:`NUMPY` (a jax.numpy function jitted whole) or :data:`PRIVATE` (a
    private helper of JAX's, its name with the leading underscore)."""


EAGER_OPS: tuple[EagerOp, ...] = (
    *(EagerOp(name, PRIMITIVE) for name in (
        "broadcast_in_dim", "convert_element_type", "iota", "reshape", "squeeze", "expand_dims", "concatenate",
        "transpose", "add", "sub", "mul", "div", "neg", "max", "min", "pow", "integer_pow", "exp", "log", "sqrt",
        "rsqrt", "tanh", "logistic", "abs", "sign", "select_n", "eq", "ne", "lt", "le", "gt", "ge", "and", "or",
        "not", "dot_general", "reduce_sum", "reduce_max", "reduce_min", "argmax", "argmin", "cumsum", "pad",
        "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "scatter-add", "scatter_add", "clamp", "copy",
        "copy_p", "rem", "floor", "ceil", "round", "erf", "sin", "cos", "random_bits", "random_seed", "random_wrap",
        "random_unwrap", "threefry2x32", "slice", "split", "sort", "stage")),
    *(EagerOp(name, NUMPY) for name in (
        "subtract", "multiply", "divide", "negative", "maximum", "minimum", "matmul", "where", "clip", "true_divide",
        "square")),
    # the private helpers seen in the real dumps of fixtures/ (jax.random's key and sampling helpers, jnp's
    # reductions and array methods, pjit's device_put identity), each a function defined in jax/_src
    *(EagerOp(name, PRIVATE) for name in (
        "_normal", "_randint", "_threefry_seed", "_threefry_split", "_threefry_fold_in", "_reduce_sum", "_mean",
        "_std", "_argmax", "_where", "_pad", "_multi_slice", "_identity_fn")),
    # the same modules' siblings in jax/_src (random/core.py, numpy/reductions.py): jitted the same way
    *(EagerOp(name, PRIVATE) for name in (
        "_uniform", "_bernoulli", "_var", "_argmin", "_reduce_max", "_reduce_min", "_reduce_prod", "_reduce_any",
        "_reduce_all")),
)

PRIMITIVES = frozenset(op.name for op in EAGER_OPS if op.kind == PRIMITIVE)
"""The names of the one-op modules."""

PRIVATE_HELPERS = frozenset(op.name for op in EAGER_OPS if op.kind == PRIVATE)
"""The private helpers of JAX's own (``_normal``): ``jit__<name>`` of any other name is the user's."""

NAMES = frozenset(op.name for op in EAGER_OPS)
"""Every name JAX gives a module it compiles for an operation run outside jit."""
