"""Attributes that name computations (``calls``, ``to_apply``, ``branch_computations``, ...)."""

from __future__ import annotations

from hlodiff.hlo.attributes.scalars import parse_name_list, plain_name


CALL_KEYS = ("calls", "to_apply", "condition", "body", "true_computation", "false_computation",
             "branch_computations", "select", "scatter", "comparator", "called_computations")
"""Attributes whose values name computations, in the order :func:`called_computations` reports them."""


def called_computations(attrs: dict[str, str]) -> list[str]:
    """Names (without ``%``) of the computations an instruction's attributes reference.

    Ordered by :data:`CALL_KEYS` (not by the order in the text) so two printings of one instruction agree, and
    within a list attribute in written order (branch index order for ``conditional``). Each name appears once.
    """
    names: list[str] = []
    for key in CALL_KEYS:
        raw = attrs.get(key)
        if raw is None:
            continue
        text = raw.strip()
        found = parse_name_list(text) if text.startswith("{") else (plain_name(text, key),)
        for name in found:
            if name not in names:
                names.append(name)
    return names
