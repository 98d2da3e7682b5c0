"""Memory figures of a graph: parameter, output and aliased bytes, and an estimate of peak memory.

The estimate is a liveness walk over the entry computation in its printed order (the schedule, for optimized
modules: ``is_scheduled=true``). Parameters live throughout; every other value is allocated where it is defined
and freed after its last use; outputs stay live to the end. Views (``bitcast``, ``get-tuple-element``) allocate
nothing, a ``tuple`` allocates its pointer table, an instruction that can write into an operand dying there (an
in-place ``dynamic-update-slice``, an elementwise fusion of the same size, a loop's state) reuses it, and a
called ``while`` body or ``call`` adds its own peak above its parameters at that point. XLA's buffer assignment
knows more (it packs temporaries into shared slabs, and counts constants and thread-local scratch), which is why
XLA's own figure is preferred when the dump folder has it.
"""

from __future__ import annotations

from hlodiff.cost.model import Tally
from hlodiff.errors import HlodiffError
from hlodiff.hlo.attributes import parse_input_output_alias
from hlodiff.hlo.model import Computation, Instruction, Module, Shape

POINTER_BYTES = 8
_NO_ALLOCATION = ("bitcast", "get-tuple-element", "parameter", "after-all", "add-dependency", "opt-barrier",
                  "optimization-barrier", "copy-done", "domain")
_IN_PLACE = ("dynamic-update-slice", "scatter", "while", "all-reduce", "fusion", "add", "subtract", "multiply",
             "divide", "maximum", "minimum", "select", "convert", "negate", "exponential", "tanh", "clamp")


def parameters(module: Module) -> Tally:
    params = module.entry.parameters()
    return Tally(sum(_leaf_count(p.shape) for p in params), sum(p.shape.byte_size() for p in params))


def outputs(module: Module) -> Tally:
    root = module.entry.root.shape
    return Tally(_leaf_count(root), root.byte_size())


def output_shapes(module: Module) -> list[Shape]:
    return list(module.entry.root.shape.leaves())


def aliased_bytes(module: Module) -> int:
    """Bytes of the outputs that reuse a parameter's buffer (``input_output_alias`` in the module header)."""
    raw = module.attrs.get("input_output_alias")
    if not raw:
        return 0
    try:
        aliases = parse_input_output_alias(raw)
    except HlodiffError:
        return 0
    root = module.entry.root.shape
    total = 0
    for alias in aliases:
        shape = _subshape(root, alias.output_index)
        if shape is not None:
            total += shape.byte_size()
    return total


def _subshape(shape: Shape, index: tuple[int, ...]) -> Shape | None:
    for i in index:
        if not shape.is_tuple or i >= len(shape.tuple_shapes):
            return None
        shape = shape.tuple_shapes[i]
    return shape


def _leaf_count(shape: Shape) -> int:
    return sum(1 for _ in shape.leaves())


def allocation_bytes(shape: Shape) -> int:
    """What defining a value of this shape allocates: its array, or a tuple's table of pointers."""
    if shape.is_tuple:
        return POINTER_BYTES * len(shape.tuple_shapes)
    return shape.byte_size()


def estimate_peak(module: Module) -> int:
    """hlodiff's peak-memory estimate of one execution of the module (see the module docstring)."""
    by_name = {c.name: c for c in module.computations}
    return _peak(module.entry, by_name, set(), entry=True)


def _peak(comp: Computation, by_name: dict[str, Computation], active: set[str], entry: bool = False) -> int:
    """Peak live bytes while ``comp`` runs, including its parameters."""
    if comp.name in active:  # recursion is rejected by the parser; never loop here
        return 0
    active = active | {comp.name}
    insts = comp.instructions
    last_use: dict[str, int] = {}
    for i, inst in enumerate(insts):
        for operand in inst.operands:
            last_use[operand] = i
    keep = _kept_to_end(comp)
    size: dict[str, int] = {}
    live = 0
    for inst in insts:
        if inst.opcode == "parameter":
            size[inst.name] = inst.shape.byte_size()
            live += size[inst.name]
            keep.add(inst.name)
    peak = live
    for i, inst in enumerate(insts):
        if inst.opcode == "parameter":
            continue
        dying = [o for o in dict.fromkeys(inst.operands) if last_use.get(o) == i and o not in keep and o in size]
        own = 0 if inst.opcode in _NO_ALLOCATION else allocation_bytes(inst.shape)
        reused = _reused_operand(inst, own, dying, size)
        if reused is not None:
            size[inst.name], size[reused] = size[reused], 0
            own = 0
        else:
            size[inst.name] = own
        extra = _callee_extra(inst, by_name, active)
        live += own
        peak = max(peak, live + extra)
        for operand in dying:
            live -= size.get(operand, 0)
            size[operand] = 0
        if inst.name not in last_use and inst.name not in keep:
            live -= size[inst.name]  # defined and never used (dead code)
            size[inst.name] = 0
    return peak


def _kept_to_end(comp: Computation) -> set[str]:
    """The root and what it forwards (a tuple's elements, through views): alive until the computation ends."""
    insts = comp.by_name()
    keep: set[str] = set()
    todo = [comp.root.name]
    while todo:
        name = todo.pop()
        if name in keep or name not in insts:
            continue
        keep.add(name)
        inst = insts[name]
        if inst.opcode in ("tuple", "bitcast", "get-tuple-element"):
            todo.extend(inst.operands)
    return keep


def _reused_operand(inst: Instruction, own: int, dying: list[str], size: dict[str, int]) -> str | None:
    """A dying operand whose buffer this instruction can write its result into."""
    if own == 0 or inst.opcode not in _IN_PLACE:
        return None
    if inst.opcode in ("dynamic-update-slice", "scatter", "while"):
        candidates = dying[:1] if dying and inst.operands and dying[0] == inst.operands[0] else []
    else:
        candidates = dying
    for operand in candidates:
        if size.get(operand) == own:
            return operand
    return None


def _callee_extra(inst: Instruction, by_name: dict[str, Computation], active: set[str]) -> int:
    """Bytes a called computation needs beyond the operands it receives (a loop body's temporaries)."""
    if inst.opcode == "while":
        names = [(inst.attr("body") or "").lstrip("%"), (inst.attr("condition") or "").lstrip("%")]
    elif inst.opcode in ("call", "conditional"):
        names = inst.called_computation_names()
    else:
        return 0
    extra = 0
    for name in names:
        callee = by_name.get(name)
        if callee is None:
            continue
        params = sum(p.shape.byte_size() for p in callee.parameters())
        extra = max(extra, _peak(callee, by_name, active) - params)
    return extra
