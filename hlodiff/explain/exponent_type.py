"""Two JAX programs that raise to one power, an integer in one run and a float in the other.

JAX lowers ``x ** n`` by the Python type of ``n``: an ``int`` traces ``integer_pow`` (multiplies, no constant), a
``float`` traces ``pow`` (XLA's ``power`` with the exponent as a broadcast constant). The same number written ``2``
in one run and ``2.0`` in the other (a config file rewritten by a tool, a command-line option parsed as float, a
static argument read from either) is therefore another program and cache entry (observed: round 12's
runs12_pow_config, ``"reg_p": 2`` then ``2.0``: 2 multiplies removed, 4 power, 2 broadcast, 2 constant added).
The graph diff sees another path through the traced code; the words say it is the exponent's type.

JAX names each instruction's primitive in its ``op_name`` (``jit(train_step)/jvp()/integer_pow``), so the evidence
is a user line whose instructions are ``integer_pow`` in one program and ``pow`` in the other, never both.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.hlo.attributes.metadata import parse_metadata
from hlodiff.hlo.model import Module, user_frame

EXPONENT_TYPE = "exponent type"
"""``KeyDifference.name`` of :func:`exponent_type_differences` (``source`` ``"hlo"``); ``a``/``b`` say
``"integer (integer_pow) at file.py:32"`` or ``"float (pow) at file.py:32"``."""

_PRIMITIVES = {"integer_pow": "integer", "pow": "float"}


def exponent_type_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("hlo", "exponent type", A's kind at the line, B's)]`` for the first user line whose powers
    are all ``integer_pow`` in one program and all ``pow`` in the other; else empty (the same kind on both sides:
    another exponent of one type is a constant or an ops difference the graph diff tells)."""
    if a is None or b is None:
        return []
    powers = [_powers(r.module()) for r in (a, b)]
    for where in sorted(set(powers[0]) & set(powers[1])):
        kinds = (powers[0][where], powers[1][where])
        if len(kinds[0]) == 1 and len(kinds[1]) == 1 and kinds[0] != kinds[1]:
            said = [f"{_PRIMITIVES[next(iter(k))]} ({next(iter(k))}) at {where[0]}:{where[1]}" for k in kinds]
            return [KeyDifference("hlo", EXPONENT_TYPE, said[0], said[1])]
    return []


def _powers(module: Module) -> dict[tuple[str, int], set[str]]:
    """(user file basename, line) -> the power primitives (``integer_pow``, ``pow``) traced there."""
    found: dict[tuple[str, int], set[str]] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            raw = inst.attrs.get("metadata")
            if not raw or "pow" not in raw:
                continue
            meta = parse_metadata(raw)
            prims = {_primitive(part) for part in (meta.op_name or "").split(";")} & set(_PRIMITIVES)
            where = _user_line(module, meta)
            if prims and where is not None:
                found.setdefault(where, set()).update(prims)
    return found


def _primitive(op_name: str) -> str:
    """``jit(train_step)/jvp()/integer_pow`` -> ``integer_pow``."""
    return op_name.rstrip("/").rpartition("/")[2]


def _user_line(module: Module, meta) -> tuple[str, int] | None:
    if meta.stack_frame_id and module.stack_frames:
        frame = user_frame(module.stack_frames.resolve(meta.stack_frame_id))
        if frame is not None and frame.line:
            return frame.file.rpartition("/")[2], frame.line
    if meta.source_file and meta.source_line:
        return meta.source_file.rpartition("/")[2], meta.source_line
    return None
