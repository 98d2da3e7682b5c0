"""What the values a run saw say, for the fix's facts (:mod:`hlodiff.diff.fix_facts`): booleans, 0/1/-1 (torch_xla's
special scalars), whole numbers bunched under a ceiling (a batch statistic), default object reprs (compared by identity), one number in other types, one dtype spelled two ways, choices rather than
sizes, 1/n counting up (a cumulative average's weight), and the values as a fix lists them."""

from __future__ import annotations

import re

from hlodiff.hlo.literal import number


def _special(text: str) -> bool:
    """A scalar of exactly 0, 1 or -1 (in any notation: ``1``, ``1.0``, ``1e0``, ``-0``) or a boolean."""
    value = number(text)
    return isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1, -1))


_VALUES_SEEN: dict[int, tuple[tuple[str, ...], tuple[str, str, bool]]] = {}


_PRNG_KEY = re.compile(r"\bkey<\w+>")
"""JAX's dtype of a typed PRNG key (``key<fry>``): one of the two types a changed argument had."""


_OBJECT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-fA-F]+>$")
"""Python's default repr: an object whose class defines no __eq__/__hash__, compared (and hashed) by identity."""


_FUNCTION_REPR = re.compile(r"^<function ([\w.<>]+) at 0x[0-9a-fA-F]+>$")
"""Python's repr of a function: hashed and compared by identity, so the same ``def`` run again is a new key."""


_PARTIAL_REPR = re.compile(r"^functools\.partial\((.*)\)$", re.S)
"""Python's repr of a functools.partial: it defines no __eq__ or __hash__ of its own, so it is compared by identity,
and two partials of one function with the same arguments print the same yet are two keys."""


def partial_objects(values: tuple[str, ...]) -> bool:
    """Round 27 (r27_jx_partial_static_loss): every value a static argument took is a functools.partial. Its repr
    names the wrapped function and the arguments, not the partial's identity, so a new partial on every call shows as
    one repeated value (or as a few, when an argument changes too): either way the cache compares the partials by
    identity, and the default-repr and redefined-function facts cannot see it."""
    seen = list(dict.fromkeys(v.strip() for v in values))
    return bool(seen) and all(_PARTIAL_REPR.match(v) for v in seen)


def redefined_function(values: tuple[str, ...]) -> str | None:
    """Crossings round 8 (x8c_jx_remat_policy_fresh): two or more functions of one name at different addresses (a
    remat policy, a loss or an activation defined inside the loop, each ``def`` or ``lambda`` a new object) -> that
    name; None for functions of different names (a real choice of two, jax_remat_policy_switch) or anything else.
    Every lambda is named ``<lambda>``, so two lambdas may as well be two different functions switched on purpose
    (``lambda *_, **__: True`` and ``lambda *_, **__: False``): their repr cannot tell, and "define it once" would be
    wrong for a real choice (the eleventh stop's read); they are left to the rows for a choice."""
    seen = [_FUNCTION_REPR.match(v.strip()) for v in dict.fromkeys(values)]
    if len(seen) < 2 or not all(seen):
        return None
    names = {m.group(1) for m in seen}
    if len(names) != 1 or (name := names.pop()).rsplit(".", 1)[-1] == "<lambda>":
        return None
    return name


_CHOICE_REPR = re.compile(r"""^(<function [\w.<>]+ at 0x[0-9a-fA-F]+>|<built-in function \w+>|[A-Za-z_][\w.]*\(.*\)"""
                          r"""|'[^']*'|"[^"]*")$""")


_NUMERIC_CTOR = re.compile(r"^(?:np\.|numpy\.|jnp\.|Array\(|array\(|u?int\d*\(|float\d*\(|bfloat16\(|complex\d*\()"
                           r"|dtype=")
"""Round 9 (jax_remat_policy_switch): static values that are choices, not sizes: functions (a jax.checkpoint
policy, an activation), constructed option objects with their own repr (DotsSaveable(...)), strings (a mode name).
A NumPy/JAX scalar or array repr is a number, not a choice."""


def _choice_value(value: str) -> bool:
    return bool(_CHOICE_REPR.match(value)) and not _NUMERIC_CTOR.search(value)


def _reciprocal_counts(values: tuple[str, ...]) -> bool:
    """``0.5, 0.333333343, 0.25, 0.2``: 1/n for n counting up by one, three or more: the weight of a cumulative
    average (BatchNorm's momentum=None passes 1/num_batches_tracked; a running mean updated with 1/step)."""
    ns = []
    for v in dict.fromkeys(values):
        x = number(v.strip())
        if isinstance(x, (int, float)) and not isinstance(x, bool) and x in (0, 1):
            continue  # 1 is 1/1; 0 the weight before the first count (BatchNorm starts from 0.0)
        if not isinstance(x, float) or not 0 < x < 1:
            return False
        n = round(1 / x)
        if abs(1 / x - n) > 1e-3 * n:
            return False
        ns.append(n)
    return len(ns) >= 3 and all(b == a + 1 for a, b in zip(ns, ns[1:]))


def _all_nan(values: tuple[str, ...]) -> bool:
    """Every value a NaN (``nan``, ``NaN``, ``float('nan')``): a static argument NaN is hashable but never equal to
    itself, so each call misses the cache though the value "stays" (the run's values are listed once each: one
    ``nan`` for every call)."""
    texts = [v.strip().lower().replace(" ", "") for v in values]
    return bool(texts) and all(t in ("nan", "-nan", "float('nan')", 'float("nan")', "np.nan", "jnp.nan")
                                   for t in texts)


def data_ceiling(values: tuple[str, ...]) -> int | None:
    """Round 19 (r19_jx_onehot_max_label): three or more whole numbers, all at least 1 and the largest at most twice
    the smallest (``8, 9, 10``; ``5, 7, 9``): the values a statistic of each batch takes under a ceiling the data
    sets (its largest label + 1, a count of positives, a length), not a counter from 0, not sizes spread over
    buckets (64, 128, 256). Returns the largest seen (the ceiling is at least that), else None."""
    numbers = [number(v.strip()) for v in dict.fromkeys(values)]
    if len(numbers) < 3 or any(isinstance(n, bool) or not isinstance(n, int) for n in numbers):
        return None
    low, high = min(numbers), max(numbers)
    return high if low >= 1 and high <= 2 * low else None


def up_by_one(values: tuple[str, ...]) -> int | None:
    """Leftovers of the fourteenth stop (x14c_jx_kv_host_slice, jax_kv_concat): three or more whole numbers in the
    order compiled, each one more than the last (``1, 2, ..., 8``): a buffer filled one row per call (a KV cache, a
    decoded prefix), not sizes drawn from the data (``54, 52, 58``) nor spread over buckets. Returns the largest."""
    numbers = [number(v.strip()) for v in values]
    if len(numbers) < 3 or any(isinstance(n, bool) or not isinstance(n, int) for n in numbers):
        return None
    return numbers[-1] if all(b - a == 1 for a, b in zip(numbers, numbers[1:])) else None


def whole_numbers(values: tuple[str, ...]) -> bool:
    """Two or more different whole numbers (``0, 1, 2``; no bool, no float): a stage, a mode or a count."""
    numbers = [number(v.strip()) for v in dict.fromkeys(values)]
    return len(numbers) >= 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in numbers)


_AXIS = re.compile(r"^(?:-?\d+|None)$")
MAX_AXIS = 8
"""An axis index is below this (no input of rank 8 or more in these programs); a larger number is a size."""


def axes_specs(values: tuple[str, ...]) -> bool:
    """Round 30 (r30_jx_vmap_bagging_axes): two or more different tuples of axis numbers and None, some None (``(0,
    None, None)``, ``(0, 0, 0)``): an axis specification (vmap's in_axes/out_axes) chosen per call, not a size: a
    None says "not mapped", which no padding can express. Every number must be a small axis index (below
    :data:`MAX_AXIS`): ``(256, None)`` is a static pad target (None: keep this dimension), a size."""
    unique = [v.strip() for v in dict.fromkeys(values)]
    if len(unique) < 2:
        return False
    items = []
    for v in unique:
        if not (v.startswith("(") and v.endswith(")")) or v == "()":
            return False
        parts = [p.strip() for p in v[1:-1].split(",") if p.strip()]
        if not parts or not all(_AXIS.match(p) for p in parts):
            return False
        items.extend(parts)
    return "None" in items and all(p == "None" or abs(int(p)) < MAX_AXIS for p in items)


_DTYPE_NAMES = frozenset(
    "bool int4 int8 int16 int32 int64 uint4 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 complex64 "
    "complex128 float8_e4m3fn float8_e5m2 float8_e4m3b11fnuz float8_e4m3fnuz float8_e5m2fnuz".split())

_DTYPE_SPELLING = re.compile(r"""^(?:<class '(?:[\w.]+\.)?(\w+)'>|dtype\(['"]?(\w+)['"]?\)|['"](\w+)['"]"""
                             r"""|(?:jnp\.|np\.|numpy\.|jax\.numpy\.)?(\w+))$""")
"""Round 20 (r20_jx_static_dtype_spelling): the texts one dtype takes as a static argument in JAX's log: a string
(``'bfloat16'``), a scalar type (``<class 'jax.numpy.bfloat16'>``), an np.dtype (``dtype('bfloat16')``)."""


def dtype_spelling(values: tuple[str, ...]) -> str | None:
    """The dtype's name when two or more different texts all spell that one dtype (a config's string, jnp's scalar
    type, an np.dtype): JAX keys a static argument by hash and ==, and these hash differently, so the same dtype
    compiles once per spelling. None otherwise (two dtypes are a real choice)."""
    unique = list(dict.fromkeys(v.strip() for v in values))
    if len(unique) < 2:
        return None
    names = set()
    for text in unique:
        m = _DTYPE_SPELLING.match(text)
        name = next((g for g in m.groups() if g), None) if m else None
        if name not in _DTYPE_NAMES:
            return None
        names.add(name)
    return names.pop() if len(names) == 1 else None


def _equal_numbers(values: set[str]) -> bool:
    """Different texts of one number (``0`` and ``0.0``, ``1`` and ``True``): equal, only their types differ."""
    numbers = [number(v.strip().lower()) for v in values]
    if any(not isinstance(n, (bool, int, float)) for n in numbers):
        return False
    return all(n == numbers[0] for n in numbers[1:])


def _values_facts(values: tuple[str, ...]) -> tuple[str, str, bool]:
    """The values as listed in a fix, how many there are, whether they are booleans. Every cause of a family shares
    one tuple of values (2,000 sizes in a run of 2,000 recompilations): worked out once per tuple, found again by
    identity (the tuple is kept with the answer, so its id cannot be reused meanwhile)."""
    known = _VALUES_SEEN.get(id(values))
    if known is not None and known[0] is values:
        return known[1]
    unique = list(dict.fromkeys(values))
    answer = (", ".join(unique[:6]) + (", ..." if len(unique) > 6 else ""), str(len(unique)),
              all(isinstance(number(v.lower()), bool) for v in unique))  # JAX's log prints True
    if len(_VALUES_SEEN) > 256:
        _VALUES_SEEN.clear()
    _VALUES_SEEN[id(values)] = (values, answer)
    return answer
