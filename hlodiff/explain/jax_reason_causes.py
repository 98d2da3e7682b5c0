"""One of JAX's reasons for a cache miss as a cause in the shared vocabulary, with the fix for what JAX named: a weak
type (a tree's scalars made weak at once: one cause), a static argument's value (its fix chosen later, from what
it changed in the graph), a sharding, a typed PRNG key, a function object never seen (or one a cache clearing
forgot), a pytree structure, a tracing context; the graph's own reasons (types, debug info) make none. JAX's words
are quoted on one line, cut between words. :mod:`hlodiff.explain.jax_causes` joins them to the recompilation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.diff.fixes import FixContext, decide
from hlodiff.diff.model import Cause
from hlodiff.dumps.source_lines import NoSources, SourceLines
from hlodiff.dumps.jax_cache_miss import JaxCacheMiss, JaxReason
from hlodiff.hlo.model import SourceFrame
from hlodiff.explain.jax_cleared import caches_cleared, cleared_at
from hlodiff.explain.jax_contexts import context_fix
from hlodiff.explain.jax_pytree_reasons import KEYWORDS, is_pullback, list_length, metadata_functions, metadata_identity
from hlodiff.explain.argument_lines import made_then_call
from hlodiff.explain.jax_weak_types import WeakLeaf, dtype_of, leaf_fix, rebuilt_tree, tree_cause

_URL = re.compile(r"https?://\S+$")
_GRAPH_SHOWS = frozenset({"input_types", "debug_info"})
_PRNG_KEY = re.compile(r"\bkey<\w+>")
"""JAX's dtype of a typed PRNG key (``key<fry>``, ``key<rbg>``)."""


@dataclass(frozen=True, slots=True)
class JaxCause:
    """A cause from JAX's log and the fix that goes with what JAX named (the argument, the function)."""

    cause: Cause
    fix: str
    argument: str = ""
    values: tuple[str, ...] = ()
    pair: tuple[str, ...] = ()
    """A static argument's value before and now, as JAX compared them (``values`` holds the run's)."""


def rebuilt_tree_cause(reasons: list[JaxReason], miss: JaxCacheMiss, sources: SourceLines) -> JaxCause | None:
    """One cause when every weak-type reason names a leaf of one argument made weak at once
    (:func:`hlodiff.explain.jax_weak_types.rebuilt_tree`), else None."""
    weak = [x for x in reasons if x.kind == "weak_type"]
    leaves = [WeakLeaf(x.argument or "", dtype_of(x.now or x.before), "weak_type=True" in (x.now or ""),
                       "weak_type=True" in (x.before or "")) for x in weak]
    root = rebuilt_tree(leaves)
    if root is None:
        return None
    quote = f'JAX: "{_cut(_URL.sub("", weak[0].text.strip()), 140)}"'
    cause, fix = tree_cause(root, leaves, quote, miss, sources)
    cause.reason = "weak_type"
    return JaxCause(cause, fix, root)


def _same_text(now: str | None, before: str | None) -> bool:
    """JAX's two printed values are the same text (spacing aside): the log could not show what differs."""
    return now is not None and before is not None and " ".join(now.split()) == " ".join(before.split())


def _element_type(text: str | None) -> str:
    """``key<fry>[4]({})`` -> ``key<fry>``: JAX's type text without its dimensions (and what follows them)."""
    return (text or "").split("[", 1)[0].strip()


def reason_cause(reason: JaxReason, miss: JaxCacheMiss, sources: SourceLines,
           compiled: int | None = None) -> JaxCause | None:
    """``compiled``: how many times the recompilation's family compiled (a function made anew: one per object)."""
    quote = _cut(_URL.sub("", reason.text.strip()), 140)
    where = [miss.call_site] if miss.call_site is not None else []
    said = f'JAX: "{quote}"'
    if reason.kind == "weak_type":
        arg = reason.argument or "an argument"
        return JaxCause(Cause("weak_type", f"`{arg}` was {_weak(reason.before)} and is now {_weak(reason.now)} "
                                           f"({said})", where),
                        leaf_fix(arg, reason.now, reason.before))
    if reason.kind == "static_argument":
        arg, note = _argument_name(reason.argument, miss, sources)
        return JaxCause(Cause("static_argument", f"static argument `{arg}`{note} changed: {reason.before} -> "
                                                 f"{reason.now} ({said})", where),
                        "", arg, tuple(v for v in (reason.before, reason.now) if v),  # chosen in merge_jax
                        tuple(v for v in (reason.before, reason.now) if v))
    if reason.kind == "sharding":
        placed = made_then_call(miss.call_site, miss.function, reason.argument, miss.defined_at, sources=sources)
        if _same_text(reason.now, reason.before):
            # review 22, F2: JAX prints a sharding by its axes only ({Auto: ('data',)}), so a mesh over other
            # devices prints alike: quoting two equal texts as the difference tells the reader nothing
            said = (f"JAX prints it alike before and after ({_cut(reason.now or '', 60)}): what differs is not in "
                    "its text, the devices of the mesh it is placed on")
        return JaxCause(Cause("sharding", f"argument `{reason.argument}` arrives with another sharding ({said})",
                              placed),
                        "place the argument with the same sharding every call (jax.device_put with one NamedSharding)")
    if reason.kind == "input_types" and _PRNG_KEY.search(f"{reason.now} {reason.before}") \
            and _element_type(reason.now) != _element_type(reason.before):
        # a typed key (key<fry>[]) lowers to the same u32 words as raw key data: the HLO hardly shows the change.
        # Keys of one type in another number (key<fry>[2] -> key<fry>[4], split(key, n) with another n) are a
        # shape change the graph shows (round 7, jax_split_count), not a key type.
        arg = reason.argument or "an argument"
        cause = Cause("dtype", f"argument `{arg}` is now {reason.now}, before {reason.before} ({said})", where,
                      element_types=(reason.before, reason.now))
        choice = decide(cause, FixContext(producer="jax", argument=arg))
        cause.fix_rule = choice.rule.name
        return JaxCause(cause, choice.text)
    if reason.kind in _GRAPH_SHOWS:
        return None
    if reason.kind in ("never_seen", "redefined_function"):
        defined = f" defined at {miss.defined_at.where}" if miss.defined_at is not None else ""
        again = " on every call" if reason.kind == "redefined_function" and not compiled else ""
        said = f'JAX: "{_quote(miss.text)}"'
        if (cleared := cleared_at(miss, sources)) is not None:
            cause, text = caches_cleared(miss, cleared, defined, said, where)
            return JaxCause(cause, text)
        # JAX names the function the object wraps: a `functools.partial` (or a `jax.jit`) of a function defined
        # once is as new as a function redefined (review 3, F6), so the words claim neither
        how = "(the function redefined, or a `functools.partial` or `jax.jit` of it made again)"
        call = miss.call_site
        rebound = sources.rebound_in_loop(call.file, call.line, miss.function) if call is not None else []
        if rebound:
            # review 20, F7: the loop's line that makes the object anew is the one to change, and it runs when the
            # program says (every 3 steps), not "on every call"
            at = SourceFrame(call.file, rebound[0], call.function)
            where = [at, *where]
            again = f" at {at.short()}, each time the loop runs that line"
            how = f"(`{miss.function}` is bound to a new function there, not on every call)"
        if compiled and compiled > 1:
            how = f"{how[:-1]}; {compiled} objects compiled in this run, one compilation each)"
        cause = Cause("cache_key", f"JAX had never seen this function object: an object for `{miss.function}`"
                                   f"{defined} is created anew{again} {how} ({said})", where)
        choice = decide(cause, FixContext(producer="jax", new_function=True))
        cause.fix_rule = choice.rule.name
        return JaxCause(cause, choice.text)
    if reason.kind == "pytree":
        cause = Cause("cache_key", f"the arguments' pytree structure changed ({said})", where,
                      none_leaf="NoneType" in reason.text, list_length=list_length(reason.text))
        keywords = KEYWORDS.search(miss.text or "")
        choice = decide(cause, FixContext(producer="jax", pytree=True,
                                          keywords=keywords.group(1) if keywords else "",
                                          metadata_identity=metadata_identity(reason.now, reason.before),
                                          metadata_functions=metadata_functions(reason),
                                          pullback=is_pullback(reason)))
        cause.fix_rule = choice.rule.name
        return JaxCause(cause, choice.text)
    if reason.kind == "tracing_context":
        return JaxCause(Cause("cache_key", f"the tracing context changed ({said})", where),
                        context_fix(reason.argument))
    return JaxCause(Cause("cache_key", f"JAX's cache missed ({said})", where),
                    "keep the function object, arguments and configuration the same between calls")


def _quote(text: str, limit: int = 160) -> str:
    """JAX's message after its ``TRACING CACHE MISS at ...`` line, on one line."""
    body = " ".join(line.strip() for line in text.splitlines()[1:])
    return _cut(_URL.sub("", body), limit)


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut between words (JAX's dotted class names are never split)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 3]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:") + "..."


def _weak(text: str | None) -> str:
    if not text:
        return "?"
    weak = "weak_type=True" in text
    base = text.split("{", 1)[0]
    return f"a weakly typed {base} (a Python scalar)" if weak else f"a typed {base}"


def _argument_name(path: str | None, miss: JaxCacheMiss | None = None,
                   sources: SourceLines = NoSources()) -> tuple[str, str]:
    """The argument's name and a note: ``[1]['log_every']`` -> (``log_every``, ""); ``[0][1]`` (positional
    argument 1) -> (``n_layers``, `` (argnum 1)``) when the function's source is on disk, else (``argnum 1``, "")."""
    if not path:
        return "?", ""
    names = re.findall(r"\['([^']+)'\]", path)
    if names:
        return names[-1], ""
    m = re.fullmatch(r"\[0\]\[(\d+)\]", path.strip())
    if m is None:
        return path, ""
    index = int(m.group(1))
    defined = miss.defined_at if miss is not None else None
    params = sources.parameter_names(defined.file, defined.line) if defined is not None else None
    if params and index < len(params):
        return params[index], f" (argnum {index})"
    return f"argnum {index}", ""
