"""Weak types JAX names as its cache miss: the fix for one leaf, and one cause for a tree rebuilt from Python numbers.

JAX keys its cache on each leaf's weak type: ``jnp.asarray(0.01)`` is a weakly typed f32, ``jnp.float32(0.01)`` a
typed one. The fix for one leaf names a typed constructor of that leaf's own dtype (review 19, F2: an int32 counter
told ``jnp.float32(x)`` would miss again on its dtype). When every leaf JAX names in one argument went from typed to
weakly typed at once (8 scalars of an optimizer state), the tree was rebuilt from Python numbers (a checkpoint that
wrote 0-d leaves as plain numbers, then ``jax.tree.map(jnp.asarray, ...)``): one cause, told once, at the line that
made the argument (the restore) and the call, with the fix that restores into the dtypes of the tree the step was
first given. "Always a Python scalar" is no option for state the jitted step hands back typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.diff.model import Cause
from hlodiff.dumps.jax_cache_miss import JaxCacheMiss
from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.argument_lines import made_then_call

TYPED_CONSTRUCTORS = {"f32": "jnp.float32", "f16": "jnp.float16", "bf16": "jnp.bfloat16", "f64": "jnp.float64",
                      "i32": "jnp.int32", "i64": "jnp.int64", "u32": "jnp.uint32", "c64": "jnp.complex64"}
"""JAX's short dtype (in its cache-miss text, ``i32[]{weak_type=True}``) -> the typed constructor a fix names. Weak
types exist for Python's int, float and complex only, so these are the dtypes they take (x64 off and on)."""

FALLBACK_CONSTRUCTOR = "jnp.asarray(x, dtype)"
"""A dtype not in :data:`TYPED_CONSTRUCTORS` (JAX's text unreadable): the constructor with the dtype left to name."""

TREE_FIX = ("restore the tree into the dtypes of the one the step was first given (its template, such as "
            "opt.init(params)): jax.tree.map(lambda t, x: jnp.asarray(x, t.dtype), template, restored); "
            "jnp.asarray of a Python number is weakly typed, of a value with the template's dtype is not ({dtypes})")
"""The fix for a tree whose scalars all came back weakly typed (review 19, F2)."""

_ROOT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True, slots=True)
class WeakLeaf:
    """One leaf JAX named: its path (``s.hyperparams['b1']``), its dtype, and whether it is weak now."""

    path: str
    dtype: str
    weak_now: bool
    weak_before: bool


def dtype_of(text: str | None) -> str:
    """``i32[]{weak_type=True}`` -> ``i32``."""
    return (text or "").split("[", 1)[0].split("{", 1)[0].strip()


def typed_constructor(text: str | None) -> str:
    """The typed constructor for the dtype of JAX's type text (:data:`TYPED_CONSTRUCTORS`)."""
    dtype = dtype_of(text)
    return f"{TYPED_CONSTRUCTORS[dtype]}(x)" if dtype in TYPED_CONSTRUCTORS else FALLBACK_CONSTRUCTOR


def leaf_fix(argument: str, now: str | None, before: str | None) -> str:
    """The fix for one leaf whose weak type changed, with a constructor of its own dtype."""
    return (f"pass `{argument}` with one type every call: always a typed array ({typed_constructor(now or before)}) "
            "or always a Python scalar")


def root_of(path: str | None) -> str | None:
    """``s.inner_state[0].count`` -> ``s``; None for a path that names no argument."""
    m = _ROOT.match(path or "")
    return m.group(0) if m else None


def rebuilt_tree(leaves: list[WeakLeaf]) -> str | None:
    """The argument whose leaves all went from typed to weakly typed at one miss, two or more of them: a tree
    rebuilt from Python numbers. None when the leaves name several arguments, one leaf, or another direction."""
    roots = {root_of(leaf.path) for leaf in leaves}
    if len(leaves) < 2 or len(roots) != 1 or None in roots:
        return None
    if not all(leaf.weak_now and not leaf.weak_before for leaf in leaves):
        return None
    return roots.pop()


def tree_cause(root: str, leaves: list[WeakLeaf], quote: str, miss: JaxCacheMiss,
               sources: SourceLines) -> tuple[Cause, str]:
    """One cause for the rebuilt tree, located where the argument was made (the restore) and at the call."""
    named = ", ".join(f"`{leaf.path}` {leaf.dtype}" for leaf in leaves)
    where = made_then_call(miss.call_site, miss.function, root, miss.defined_at, sources=sources)
    summary = (f"every scalar leaf of `{root}` JAX names ({len(leaves)}: {named}) was typed and is now weakly "
               f"typed (a Python number): the tree was rebuilt from Python scalars, as a checkpoint restored from "
               f"plain numbers is ({quote})")
    counts = {}
    for leaf in leaves:
        counts[leaf.dtype] = counts.get(leaf.dtype, 0) + 1
    kept = ", ".join(f"{n} {dtype}" for dtype, n in counts.items())
    return Cause("weak_type", summary, where), TREE_FIX.format(dtypes=f"{kept} leaves, each kept in its dtype")
