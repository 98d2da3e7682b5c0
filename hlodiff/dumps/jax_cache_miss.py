"""One ``TRACING CACHE MISS`` message of JAX's log, read into typed reasons: which function, called where, defined
where, and each reason JAX gives (:class:`JaxReason`: a static argument's value, a weak type, a pytree, a sharding,
a tracing context, ...), with JAX's own line.

:mod:`hlodiff.dumps.jax_log` streams the log, cuts each message out of it (:data:`MISS_RE` starts one, indented
lines continue it) and hands it to :func:`parse_miss`; the message format is described there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.hlo.model import SourceFrame

MISS_RE = re.compile(r"TRACING CACHE MISS at (.*):$")
_CALLSITE_RE = re.compile(r"^(.*?):(\d+)(?::\d+)? \((.*)\)$")
_NEVER_SEEN_RE = re.compile(r"^\s{4}(\S+) id=(\d+)(?: defined at (.*))?$")
_FOR_RE = re.compile(r"^\s{2}for (\S+)(?: defined at (.*))?$")
_ITEM_RE = re.compile(r"^\s{2}\* (.*)$")
_WEAK_RE = re.compile(r"\{weak_type=(True|False)\}")
_TYPES_ITEM_RE = re.compile(r"^at (.*?), now (.*) and before (.*?)(?:https?://\S+)?$")
_PYTREE_ITEM_RE = re.compile(r"^at input path (.*?), now (.*) and before (.*), so (.*)$")
_CONTEXT_ITEM_RE = re.compile(r"^(\S+) differs: now (.*) and before (.*)$")
_STATIC_RE = re.compile(r"Static\(val=(.*)\)$")
_SHARDING_HINT = re.compile(r"\(\{|NamedSharding|PartitionSpec|mesh")

REASON_KINDS = ("never_seen", "redefined_function", "static_argument", "pytree", "debug_info", "weak_type",
                "input_types", "sharding", "tracing_context", "unknown")
"""Every ``JaxReason.kind``."""


@dataclass(frozen=True, slots=True)
class JaxReason:
    """One reason JAX gives for a cache miss, with JAX's own line.

    ``kind``: ``never_seen`` (first call of the function), ``redefined_function`` (another function was defined on
    the same line: probably re-created each call), ``static_argument`` (a static argument's value; ``argument`` is
    JAX's input path, e.g. ``[1]['log_every']``), ``pytree`` (another pytree structure), ``debug_info``,
    ``weak_type`` (a Python scalar vs a typed array), ``input_types`` (shape or dtype), ``sharding``,
    ``tracing_context`` (a config or context manager such as ``jax.default_matmul_precision``; ``argument`` is the
    context name), ``unknown`` (JAX could not tell). ``now`` / ``before`` are JAX's texts for the two values.
    """

    kind: str
    argument: str | None
    now: str | None
    before: str | None
    text: str


@dataclass(frozen=True, slots=True)
class JaxCacheMiss:
    """One ``TRACING CACHE MISS`` message: which function, called where, and why JAX traced it again.

    ``call_site`` is the user's line that called the jitted function (JAX reports the innermost user frame);
    ``defined_at`` where the function is defined. ``text`` is JAX's message verbatim, ``line`` its first line in
    the log (1-based).
    """

    function: str
    call_site: SourceFrame | None
    defined_at: SourceFrame | None
    reasons: tuple[JaxReason, ...]
    text: str
    line: int
    same_object: bool = False
    """JAX called the function "never seen" with the same object id (not 0, which captures write for ids they
    neutralise) that it named at this function's previous "never seen" message (same name, same definition line):
    an object JAX had traced before was new to it again. Its caches were emptied in between (``jax.clear_caches()``),
    or a function freed and made anew at the same address: the log alone cannot tell which (round 21,
    r21_jx_clear_caches_epoch)."""

    @property
    def kind(self) -> str:
        """The headline reason (the first one JAX gives)."""
        return self.reasons[0].kind if self.reasons else "unknown"


def parse_miss(block: list[str], line: int) -> tuple[JaxCacheMiss, int]:
    """The message, and the object id JAX named for a function it never saw (0 when none or neutralised)."""
    call_site = _frame(MISS_RE.match(block[0]).group(1))
    function, defined_at, object_id = "", None, 0
    reasons: list[JaxReason] = []
    section = ""
    for text in block[1:]:
        if (m := _NEVER_SEEN_RE.match(text)) is not None and not function:
            function, defined_at = m.group(1), _definition(m.group(3), m.group(1))
            object_id = int(m.group(2))
            reasons.append(JaxReason("never_seen", None, None, None, text.strip()))
        elif (m := _FOR_RE.match(text)) is not None and not function:
            function, defined_at = m.group(1), _definition(m.group(2), m.group(1))
        elif "re-defined repeatedly" in text or "defined on the same line" in text:
            if not any(r.kind == "redefined_function" for r in reasons):
                reasons.insert(0, JaxReason("redefined_function", None, None, None, text.strip()))
        elif (m := _ITEM_RE.match(text)) is not None:
            reasons.append(_item(section, m.group(1), text.strip()))
        elif text.strip() and not text.startswith("  all previously seen") and "never seen function" not in text:
            section = text.strip()
            if not section.endswith(":"):  # a one-line explanation: "Debug info doesn't match."
                reasons.append(_section_reason(section))
    return JaxCacheMiss(function, call_site, defined_at, tuple(_dedupe(reasons)), "\n".join(block), line), object_id


def _item(section: str, item: str, text: str) -> JaxReason:
    if section.startswith("different input pytree") and (m := _PYTREE_ITEM_RE.match(item)) is not None:
        now, before = m.group(2), m.group(3)
        static_now, static_before = _STATIC_RE.search(now), _STATIC_RE.search(before)
        if static_now and static_before:
            return JaxReason("static_argument", m.group(1), static_now.group(1), static_before.group(1), text)
        return JaxReason("pytree", m.group(1), now, before, text)
    if section.startswith("different input types") and (m := _TYPES_ITEM_RE.match(item)) is not None:
        now, before = m.group(2), m.group(3)
        weak_now, weak_before = _WEAK_RE.search(now), _WEAK_RE.search(before)
        if weak_now and weak_before and weak_now.group(1) != weak_before.group(1):
            kind = "weak_type"
        elif _SHARDING_HINT.search(now + before) and _type_part(now) == _type_part(before):
            kind = "sharding"  # the same type placed otherwise; another type with the same placement is a type
        else:
            kind = "input_types"
        return JaxReason(kind, m.group(1), now, before, text)
    if section.startswith("Tracing context") and (m := _CONTEXT_ITEM_RE.match(item)) is not None:
        return JaxReason("tracing_context", m.group(1), m.group(2), m.group(3), text)
    return JaxReason(_section_kind(section), None, None, None, text)


def _type_part(text: str) -> str:
    """``u32[2]({})`` -> ``u32[2]``, ``f32[4@d,4]({...})`` -> ``f32[4,4]``: the type JAX prints, without the
    sharding it prints after it and on the dimensions (``@d``: sharded along mesh axis d)."""
    return re.sub(r"@(\([^)]*\)|\w+)", "", text.split("(", 1)[0]).strip()


def _section_reason(section: str) -> JaxReason:
    return JaxReason(_section_kind(section), None, None, None, section)


def _section_kind(section: str) -> str:
    if section.startswith("Debug info"):
        return "debug_info"
    if section.startswith("Tracing context"):
        return "tracing_context"
    if section.startswith("different input pytree"):
        return "pytree"
    if section.startswith("different input types"):
        return "input_types"
    return "unknown"


def _dedupe(reasons: list[JaxReason]) -> list[JaxReason]:
    """A section header with items ("Tracing context doesn't match" + its items) keeps the items only."""
    detailed = {r.kind for r in reasons if r.argument is not None}
    return [r for r in reasons if r.argument is not None or r.kind not in detailed]


def _frame(text: str) -> SourceFrame | None:
    m = _CALLSITE_RE.match(text.strip())
    if m is None:
        return None
    return SourceFrame(m.group(1), int(m.group(2)), m.group(3))


def call_site(text: str) -> SourceFrame | None:
    """``FILE:LINE:COL (function)``, the text after ``TRACING CACHE MISS at``, as a frame (None if it is not one)."""
    return _frame(text)


def _definition(text: str | None, function: str) -> SourceFrame | None:
    if not text:
        return None
    file, colon, line = text.strip().rpartition(":")
    if colon and line.isdigit():
        return SourceFrame(file, int(line), function)
    return SourceFrame(text.strip(), None, function)
