"""What JAX's words for a pytree cache miss say beyond "the structure changed": a node whose metadata is an object
compared by identity, or holds functions made anew on each call; a pullback passed into jit; a list that changed
length; an argument passed by keyword on one call and by position on another. Each is a fact read from the
reason's text, for a row of :mod:`hlodiff.diff.fix_rules` (:mod:`hlodiff.explain.jax_causes` builds the cause).
"""

from __future__ import annotations

import re


_NODE_META = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'> with pytree metadata <(?:[\w.]+\.)?(\w+) object at 0x[0-9a-f]+>")


def metadata_identity(now: str | None, before: str | None) -> str:
    """``"Batch:Info"`` when JAX's pytree reason shows one node class whose metadata (aux_data) is, on both calls,
    an object of one class printed with the default repr (``<__main__.Info object at 0x...>``): a class without
    __eq__/__hash__, compared by identity, so a new object each call never matches (round 17,
    r17_jx_pytree_aux_identity). Empty otherwise (metadata that differ by value: a dataclass's meta field)."""
    a, b = _NODE_META.search(now or ""), _NODE_META.search(before or "")
    if a is None or b is None or a.groups() != b.groups():
        return ""
    return f"{a.group(1)}:{a.group(2)}"


_NODE_FUNC_META = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'> with pytree metadata (.*?<function ([\w.<>]+) at 0x[0-9a-f]+>.*)")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def metadata_functions(reason) -> str:
    """``"TrainState:make_sgd.<locals>.init"`` when JAX's pytree reason shows one node class whose metadata holds
    functions and reads the same on both calls once the functions' addresses are left out: functions made anew on
    each call (closures from a builder: an optimizer kept as a static field, as flax's TrainState keeps ``tx``,
    rebuilt each epoch), compared by identity (round 22, r22_jx_tx_rebuild_epoch). Empty otherwise: metadata that
    differ by value (a meta field's learning rate), objects of a class without __eq__ (:func:`metadata_identity`),
    a pullback (:func:`is_pullback`, its own row)."""
    if is_pullback(reason):
        return ""
    a, b = _NODE_FUNC_META.search(reason.now or ""), _NODE_FUNC_META.search(reason.before or "")
    if a is None or b is None or a.group(1) != b.group(1):
        return ""
    if _ADDRESS.sub("", a.group(2)) != _ADDRESS.sub("", b.group(2)):
        return ""
    return f"{a.group(1)}:{a.group(3)}"


PULLBACK_NODES = ("jax._src.api.VJP", "_vjp_pullback_wrapper", "_vjp3_callable", "_lift_linearized")
"""Words of JAX's pytree reason that name a pullback node: ``jax.vjp``'s ``VJP`` (JAX 0.7 on, its metadata a
partial of ``_vjp3_callable`` holding the forward's jaxpr), the ``Partial`` of ``_vjp_pullback_wrapper`` older JAX
returns, ``jax.linearize``'s ``_lift_linearized``. Crossings round 7 (x7c_jx_vjp_fn_arg, jax#3755)."""


def is_pullback(reason) -> bool:
    """The node JAX names is a pullback (:data:`PULLBACK_NODES`): a function jax.vjp returned, passed into jit. Both
    sides when JAX's item was read into ``now``/``before``; else its text (a pullback's metadata prints the forward's
    jaxpr over many lines, which the one-line item pattern does not take)."""
    if reason.now is not None and reason.before is not None:
        return all(any(w in side for w in PULLBACK_NODES) for side in (reason.now, reason.before))
    return any(w in (reason.text or "") for w in PULLBACK_NODES)


_LENGTHS = re.compile(r"now (list|tuple) of length (\d+) and before (?:list|tuple) of length (\d+)")


def list_length(text: str) -> str:
    """``"list:1 -> 2"`` when JAX's pytree reason says an argument's list (tuple) changed length, else ""."""
    m = _LENGTHS.search(text)
    return f"{m.group(1)}:{m.group(3)} -> {m.group(2)}" if m is not None else ""


# JAX's words when one call passes an argument by keyword and another positionally: the positional tuple's length
# changes and the keyword dict gains (or loses) the names.
KEYWORDS = re.compile(r"input path \[1\], now <class 'dict'>.*?key sets: \{([^}]*)\}", re.S)
