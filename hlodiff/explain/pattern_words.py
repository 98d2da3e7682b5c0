"""A family's pattern in words: the letters of its sequence (``A×41, then B,A,B,...``), the cuts of a split step,
the name, the family and its leading cause (``alternating: sync at t.py:9 switches between 2 graphs (A,B,A,B)``).

The facts are :mod:`hlodiff.explain.patterns`' :class:`~hlodiff.explain.patterns.Pattern`; this module words them
and decides nothing: the summary line, the Dynamo findings and the report take their words here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hlodiff.explain.patterns import Because, Pattern, pattern_of, runs

if TYPE_CHECKING:
    from hlodiff.explain.families import Family


SHOWN = 12
"""Letters shown before a sequence is cut; a run of ``RUN`` or more of one letter is shown as ``A×41``."""
RUN = 4


def sequence_text(letters) -> str:
    """``A,B,A,B``; long sequences run-length (``A×41, then B,A,B,...``) so what happens after a long run shows."""
    letters = list(letters)
    if len(letters) <= SHOWN:
        return ",".join(letters)
    parts: list[str] = []
    shown = 0
    for letter, n in runs(letters):
        if shown >= SHOWN:
            parts.append("...")
            break
        if n >= RUN:
            parts.append(f"{letter}\u00d7{n}")
            shown += 2
        else:
            parts.extend([letter] * n)
            shown += n
    text = ""
    for k, part in enumerate(parts):
        if k == 0:
            text = part
        elif "\u00d7" in parts[k - 1]:
            text += ", then " + part
        else:
            text += ("," if "\u00d7" not in part else ", then ") + part
    return text


def pattern_text(p: Pattern, aside: bool = True) -> str:
    """The pattern in words, e.g. ``alternating: sync at t.py:9 switches between 2 graphs (A,B,A,B) (ops at t.py:7)``;
    ``aside=False`` (the run's two-line summary) leaves out what the capture cannot show, said in the pattern list."""
    seq = sequence_text(p.letters)
    because = because_text(p.because)
    label, n = p.family, p.graphs
    if p.name == "cut short":
        return (f"cut short: {n} graph{'s' if n != 1 else ''} of {label} read before the file was cut off ({seq})"
                f"{because}; too few to name a pattern")
    if p.name == "steady":
        return f"steady: {label} compiled once in {n} graph{'s' if n != 1 else ''}"
    if p.name == "eager op":
        return (f"eager op: {label} compiled once per {_called_for(p.called_for)} it was called with ({seq}){because}, "
                "outside jit: not a step")
    if p.name == "dump":
        same = _same_text(p.seen_again, p.hidden_again)
        if p.loaded:  # a restarted run: some of the family's programs came from the persistent cache
            return (f"{n} programs of {label} ({seq}), {p.loaded} loaded from the persistent cache and "
                    f"{n - p.loaded} compiled{same}{because}")
        # review 19, F8: a dump's letters count compilations, not calls: "(A,A)" is two compilations of one HLO
        legend = "; a letter per compilation, the same letter for the same HLO" if p.seen_again and aside else ""
        return f"{n} compilations of {label} ({seq}{legend}){same}{because}{_calls_unseen(p) if aside else ''}"
    if p.name == "warm-up only":
        first = "the first graph differs" if p.at == 1 else f"the first {p.at} graphs differ"
        return f"warm-up only: at {label} {first}, then steady ({seq}){because}"
    if p.name == "setup":
        return (f"setup: {n} graphs at {label} each ran once while the program set up, before the steady steps "
                f"({seq}){because}")
    if p.name == "split":
        every = "every step after the first" if p.at else "every step"
        return (f"split: each step ({label}) is split in {_PARTS.get(p.parts, p.parts)} by "
                f"{cuts_text(p.cut_reason, p.parts - 1)} at {p.split_at}: the same {p.parts} graphs {every} "
                f"({seq}){because}")
    first = ", after a first graph that never came back" if p.at else ""
    # review 24, F3: a cycle whose every variant compiled once is bounded: say so, or "repeats" reads as recompiling
    once = ", each compiled once and then reused" if p.variants and p.compilations == p.variants else ""
    if p.name == "alternating":
        return f"alternating: {label} switches between {p.variants - p.at} graphs{first}{once} ({seq}){because}"
    if p.name == "periodic":
        return (f"periodic: {label} repeats every {p.period} graphs, {p.variants - p.at} variants{first}{once} "
                f"({seq}){because}")
    if p.name == "unbounded" and p.split_at:
        return (f"unbounded: each step ({label}) is split in {_PARTS.get(p.parts, p.parts)} by "
                f"{cuts_text(p.cut_reason, p.parts - 1)} at {p.split_at}, and the rest of the step is a new graph at "
                f"every one of the {p.at} steps ({seq}){because}")
    if p.name == "unbounded":
        return f"unbounded: a new graph every time at {label}, {p.compilations} compilations ({seq}){because}"
    if p.name == "last only":
        return f"last only: at {label} only the last graph differs ({seq}){because}"
    if p.name == "switched":
        ref = f" ({p.at_ref})" if p.at_ref else ""
        return f"switched: at {label} from graph {p.at + 1} of {n}{ref} on ({seq}){because}"
    if p.name == "one-off" and p.split_at:
        ref = f" ({p.at_ref})" if p.at_ref else ""
        return (f"one-off: each step ({label}) is split in {_PARTS.get(p.parts, 'two')} by "
                f"{cuts_text(p.cut_reason, p.parts - 1)} at {p.split_at}, the same {p.parts} graphs every step but "
                f"one: the step of graph {p.at + 1} of {n}{ref} ran {p.parts} other graphs once ({seq}){because}")
    if p.name == "one-off":
        ref = f" ({p.at_ref})" if p.at_ref else ""
        return f"one-off: at {label} graph {p.at + 1} of {n}{ref} differs once ({seq}){because}"
    if p.name == "recurring":
        return (f"recurring: {label} varies among {p.variants} graphs in no fixed order, {p.seen_again} of them seen "
                f"again ({seq}){because}")
    if p.hits_unknown:
        return (f"{p.compilations} compilations of {label} ({seq}){because}; the log has no cache hits "
                f"(PT_XLA_DEBUG_LEVEL=1): whether each step compiled anew is not seen")
    return f"{p.compilations} compilations in {n} graphs of {label} ({seq}){because}"


def _calls_unseen(p) -> str:
    """A dump's family compiled anew each time it shows (three or more, none seen again): the words a user would
    read as "every call" (unbounded) are not in the capture, which holds compilations only; say so, and what would
    tell it (the twelfth stop: fourteen JAX scenarios whose truths name it unbounded)."""
    if p.seen_again or p.graphs < 3:
        return ""
    return ("; a dump holds compilations only, so whether every call compiled anew is not seen (as many calls as "
            "compilations is a new graph every call)")


def _called_for(kinds: tuple[str, ...]) -> str:
    """``shape``, ``shape and config context``, ``shape, config context and device``: what an eager op was
    compiled for, the shape always among them (an op's first compilation is for its first shape)."""
    words = ["shape"] + [k for k in kinds if k != "shape"]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


_PARTS = {2: "two", 3: "three", 4: "four"}


_CUT_WORDS = {"read": ("an early read", "early reads"),
              "fallback": ("an op run on the CPU (no XLA lowering)", "ops run on the CPU (no XLA lowering)"),
              "data_dependent": ("an early run for a mask's values", "early runs for masks' values"),
              "anomaly_check": ("an anomaly-mode NaN check", "anomaly-mode NaN checks"),
              "mixed": ("an early execution", "early executions")}
"""What cut a step, by :func:`hlodiff.explain.cuts.cut_reason`: one cut, several."""


def cuts_text(reason: str, n: int) -> str:
    """``an early read``, ``2 ops run on the CPU (no XLA lowering)``: the cuts of a step, named by their reason."""
    one, many = _CUT_WORDS.get(reason, _CUT_WORDS["mixed"])
    return one if n == 1 else f"{n} {many}"


def _same_text(again: int, hidden: int) -> str:
    """``2 of them the same HLO again``, unless the text hides values: round 11 (r10_jx_closure_table), a closure's
    baked table prints as ``{...}`` in every graph, so the printed HLO is the same and the values are not seen."""
    if not again:
        return ""
    shown = again - hidden
    same = f"; {shown} of them the same HLO again: the cache key changed outside it" if shown else ""
    if not hidden:
        return same
    which = f"{hidden} of them" if not shown else f"{hidden} more"
    return (f"{same}; {which} print{'s' if hidden == 1 and shown else ''} the same HLO again, but with constants "
            f"elided as {{...}}: equal as far as the dump shows, the hidden values may differ")


def because_text(because: Because | None) -> str:
    if because is None:
        return ""
    where = because.location
    at = f" at {where.short()}" if where and where.line is not None else ""
    return f" ({because.kind}{at})"


def _in_brief(p: Pattern) -> str:
    """``setup: sync at t.py:33 (shape at t.py:30)``: the pattern's name, the family, its leading cause."""
    word = "" if p.name in ("dump", "compilations") else p.name
    return f"{word + ': ' if word else ''}{p.family}{because_text(p.because)}"


def describe_pattern(family: "Family", recompilations, families: list["Family"] | None = None) -> str:
    return pattern_text(pattern_of(family, recompilations, families))
