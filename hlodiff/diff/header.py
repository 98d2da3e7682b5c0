"""What differs in the ``HloModule`` header line: causes outside the computation.

Two modules can compute the same thing and still be two compilations: donation (``input_output_alias``,
``buffer_donor``) changes which buffers the executable may overwrite, the entry layout changes how arguments are
laid out in memory, and ``replica_count``/``num_partitions`` or frontend attributes change how it is compiled.
The header is compared only when its difference is not already a consequence of the graph's: a new input shape
rewrites ``entry_computation_layout`` too, and that is the shape cause, not a second one.
"""

from __future__ import annotations

import re

from hlodiff.diff.model import Cause
from hlodiff.errors import HloParseError
from hlodiff.hlo.attributes import parse_buffer_donor, parse_input_output_alias
from hlodiff.hlo.model import Instruction, Module

_ALIASING = ("input_output_alias", "buffer_donor", "alias_passthrough_params")
_CONFIG = ("replica_count", "num_partitions", "frontend_attributes", "allow_spmd_sharding_propagation_to_parameters",
           "allow_spmd_sharding_propagation_to_output", "spmd_parameters_shardings", "spmd_output_sharding",
           "is_scheduled")


PARTITIONING = frozenset({
    "num_partitions",                                  # module header: the SPMD partition count
    "computation_count",                               # compile_options: device_assignment's shape
    "replica_device_ids",                              # compile_options: the devices the program runs on
    "allow_spmd_sharding_propagation_to_parameters",   # compile_options: set per argument from their shardings
    "allow_spmd_sharding_propagation_to_output",
    "use_spmd_partitioning",
})
"""Option fields JAX (and PJRT) fill in from the arguments' shardings, which no user sets by hand: when only these
differ beside a changed input sharding, they follow from it (cause-graph row ``options_of_sharding``; review 4,
F5: 'set XLA_FLAGS once' for num_partitions 1 -> 4 sent the user to a flag they never set). A compile_options
cause whose changed fields are all here carries ``reason="partitioning"``."""


def header_causes(left: Module, right: Module, *, same_computation: bool,
                  parameter_mapping: list[tuple[int, int]] | None = None) -> list[Cause]:
    """Causes from the header. ``same_computation``: the normalized graphs are equal, so every header difference
    is an origin; otherwise only differences the graph cannot explain (donation, replicas, partitions) count.
    ``parameter_mapping``: (left number, right number) of the entry parameters the graph comparison matched, so
    that donation is compared tensor by tensor, not by a number an added input shifted."""
    causes: list[Cause] = []
    aliasing = _aliasing_cause(left, right, dict(parameter_mapping or ()))
    if aliasing is not None:
        causes.append(aliasing)
    lay, ray = left.attrs.get("entry_computation_layout"), right.attrs.get("entry_computation_layout")
    if same_computation and lay and ray and _layout_shapes(lay) != _layout_shapes(ray):
        causes.append(Cause("layout", "entry_computation_layout differs in the module header: "
                                      f"{_short(left.attrs.get('entry_computation_layout'))} -> "
                                      f"{_short(right.attrs.get('entry_computation_layout'))}"))
    changed = [k for k in _CONFIG if _norm(left.attrs.get(k)) != _norm(right.attrs.get(k))]
    if not same_computation:
        changed = [k for k in changed if k in ("replica_count", "num_partitions")]
    if changed:
        parts = [f"{k} {_short(left.attrs.get(k))} -> {_short(right.attrs.get(k))}" for k in changed]
        reason = "partitioning" if all(k in PARTITIONING for k in changed) else None
        if reason and resized_mesh(left, right):
            causes.append(_resized(left, right, parts))
        else:
            causes.append(Cause("compile_options", "module header: " + "; ".join(parts), reason=reason))
    return causes


def resized_mesh(left: Module, right: Module) -> bool:
    """Both programs are partitioned over several devices, and over another number of them (num_partitions 4 -> 2,
    or replica_count): the mesh itself has another size (an elastic resize, review 22 F1), which no placement of
    an argument can undo. One side on a single device (num_partitions 1 -> 4: an argument left off the mesh,
    rev4_sharding, rev10_jx_sharding, rev17_jx_sharded_eval) stays a sharding to place alike (``partitioning``)."""
    for key in ("num_partitions", "replica_count"):
        a, b = _devices(left.attrs.get(key)), _devices(right.attrs.get(key))
        if a != b and a > 1 and b > 1:
            return True
    return False


def _resized(left: Module, right: Module, parts: list[str]) -> Cause:
    """The mesh's new size as a sharding change of its own (a sharding names its devices), ``reason="device_count"``:
    the root every argument's new sharding follows from (cause-graph row ``sharding_of_resized_mesh``)."""
    before, after = (max(_devices(m.attrs.get(k)) for k in ("num_partitions", "replica_count")) for m in (left, right))
    return Cause("sharding", f"the program is built for {after} devices instead of {before} (module header: "
                             + "; ".join(parts) + ")", reason="device_count")


def _devices(value: str | None) -> int:
    try:
        return int(_norm(value) or 1)
    except (TypeError, ValueError):
        return 1


def _aliasing_cause(left: Module, right: Module, l2r: dict[int, int]) -> Cause | None:
    """Donated parameters on each side; a parameter donated on one side only is the cause, named with its shape.

    A left parameter the graph comparison matched stands for its right partner (review 3, F3: an input added at
    number 0 shifts every donated number by one while the same tensors are donated); one without a partner is an
    input the right lacks."""
    ldonated, rdonated = _donated(left), _donated(right)
    if ldonated is None or rdonated is None or ldonated == rdonated:
        return None
    lparams, rparams = _params(left), _params(right)
    if not l2r:  # nothing matched (a header compared alone): numbers are all there is
        l2r = {n: n for n in set(ldonated) | set(rdonated)}
    r2l = {r: l for l, r in l2r.items()}
    as_right = {l2r[n] for n in ldonated if n in l2r}  # a left parameter without a partner is an input removed
    if as_right == set(rdonated) and len(as_right) == len(ldonated) and any(l2r[n] != n for n in ldonated):
        return None  # the same tensors donated, renumbered: what they alias moved with the graph's own changes
    gained_right = sorted(set(rdonated) - as_right)
    lost = sorted(n for n in ldonated if l2r.get(n) not in rdonated)
    parts = []
    if gained_right:
        parts.append(f"{_count(gained_right)} donated on the right only ({_describe(gained_right, rparams)})")
    if lost:
        parts.append(f"{_count(lost)} donated on the left only ({_describe(lost, lparams)})")
    if not parts:  # same parameters, other outputs or alias kinds
        parts.append("the same parameters are aliased to other outputs")
    pairs = [(n, (lparams[n].name if n in lparams else None, rparams[m].name if (m := l2r.get(n)) in rparams else None))
             for n in lost]
    pairs += [(n, (lparams[r2l[n]].name if r2l.get(n) in lparams else None, rparams[n].name if n in rparams else None))
              for n in gained_right]  # in parameter-number order, as the header lists them
    instructions = list(dict.fromkeys(pair for _, pair in sorted(pairs, key=lambda p: p[0])))
    return Cause("aliasing", "buffer donation differs (input_output_alias/buffer_donor in the module header): "
                 + "; ".join(parts), instructions=instructions, added=bool(gained_right), removed=bool(lost))


def donated_parameters(module: Module) -> dict[int, str] | None:
    """Parameter number -> what it is aliased to (an output, or ``donor``); None when the header cannot be read."""
    return _donated(module)


def _donated(module: Module) -> dict[int, str] | None:
    """Parameter number -> what it is aliased to; None when the header cannot be read (reported elsewhere)."""
    found: dict[int, str] = {}
    try:
        if "input_output_alias" in module.attrs:
            for alias in parse_input_output_alias(module.attrs["input_output_alias"]):
                found[alias.parameter] = f"output {{{','.join(map(str, alias.output_index))}}} {alias.kind}"
        if "buffer_donor" in module.attrs:
            for donor in parse_buffer_donor(module.attrs["buffer_donor"]):
                found.setdefault(donor.parameter, "donor")
    except HloParseError:
        return None
    return found


def _params(module: Module) -> dict[int, Instruction]:
    return {p.parameter_number: p for p in module.entry.parameters() if p.parameter_number is not None}


def _describe(numbers: list[int], params: dict[int, Instruction]) -> str:
    shown = [f"parameter {n}" + (f" %{params[n].name} {params[n].shape}" if n in params else "") for n in numbers[:4]]
    return ", ".join(shown) + (" ..." if len(numbers) > 4 else "")


def _count(numbers: list[int]) -> str:
    return f"{len(numbers)} parameter{'s' if len(numbers) != 1 else ''}"


_SHAPE_RE = re.compile(r"\w+\[[^\]]*\](?:\{[^}]*\})?")


def _layout_shapes(value: str) -> list[str]:
    """The shapes with layouts a header's entry layout lists, as a sorted multiset: parameter numbering is the
    graph comparison's business (``reordered``), how each argument is laid out is the header's."""
    return sorted(_SHAPE_RE.findall(value))


def _norm(value: str | None) -> str:
    return " ".join((value or "").split())


def _short(value: str | None, limit: int = 80) -> str:
    if value is None:
        return "(none)"
    text = _norm(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
