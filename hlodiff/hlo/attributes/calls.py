"""Attributes that name computations (``calls``, ``to_apply``, ``branch_computations``, ...)."""

from __future__ import annotations

from hlodiff.hlo.attributes.scalars import parse_name_list, plain_name


CALL_KEYS = ("calls", "to_apply", "condition", "body", "true_computation", "false_computation",
             "branch_computations", "select", "scatter", "comparator", "called_computations")
"""Attributes whose values name computations, in the order :func:`called_computations` reports them."""


_CALL_KEY_SET = frozenset(CALL_KEYS)


def called_computations(attrs: dict[str, str]) -> list[str]:
    """Names (without ``%``) of the computations an instruction's attributes reference.

    Ordered by :data:`CALL_KEYS` (not by the order in the text) so two printings of one instruction agree, and
    within a list attribute in written order (branch index order for ``conditional``). Each name appears once.
    The keys present are found by one set intersection over the attributes (most callers have one: an unrolled
    step's 13,600 reduces each ask), not by eleven lookups.
    """
    present = _CALL_KEY_SET.intersection(attrs)
    if not present:
        return []
    names: list[str] = []
    for key in present if len(present) == 1 else [key for key in CALL_KEYS if key in present]:
        text = attrs[key].strip()
        found = parse_name_list(text) if text.startswith("{") else (plain_name(text, key),)
        for name in found:
            if name not in names:
                names.append(name)
    return names
