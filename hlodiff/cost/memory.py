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


def output_producers(module: Module) -> list[Instruction | None]:
    """The instruction computing each output of a tuple ROOT (through views), None where unknown."""
    entry = module.entry
    root = entry.root
    if root.opcode != "tuple" or len(root.operands) != len(root.shape.tuple_shapes):
        return [None] * len(output_shapes(module))
    insts = entry.by_name()
    out: list[Instruction | None] = []
    for name in root.operands:
        inst = insts.get(name)
        while inst is not None and inst.opcode in ("bitcast", "copy") and inst.operands:
            inst = insts.get(inst.operands[0])
        if inst is not None and inst.shape.is_tuple:
            out.extend([None] * sum(1 for _ in inst.shape.leaves()))
        else:
            out.append(inst)
    return out


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


TEMP_ALIGNMENT = 64
"""XLA's CPU backend places temporaries at 64-byte boundaries in its temp slab (outputs, parameters and constants
get allocations of their exact size)."""


def estimate_peak(module: Module) -> int:
    """hlodiff's peak-memory estimate of one execution of the module (see the module docstring)."""
    by_name = {c.name: c for c in module.computations}
    return _peak(module.entry, by_name, frozenset(), entry=True) + _thread_local(module)


def _thread_local(module: Module) -> int:
    """Scalars of reducers and comparators (``to_apply``): XLA gives each value its own small allocation."""
    names: set[str] = set()
    for _, inst in module.instructions():
        raw = inst.attrs.get("to_apply")
        if raw:
            names.add(raw.strip().lstrip("%"))
    by_name = {c.name: c for c in module.computations}
    return sum(inst.shape.byte_size() for name in sorted(names) if name in by_name
               for inst in by_name[name].instructions if inst.opcode != "constant")


def _peak(comp: Computation, by_name: dict[str, Computation], active: frozenset[str], entry: bool = False) -> int:
    """Peak live bytes while ``comp`` runs, including its parameters. A loop body's parameter is the loop state:
    once read, its buffers take the next state, so they are released after their last read."""
    if comp.name in active:  # recursion is rejected by the parser; never loop here
        return 0
    active = active | {comp.name}
    walk = _Buffers(comp, by_name, active, entry)
    return walk.sweep()


class _Buffers:
    """Buffers of one computation: which instruction defines each, who reads it last, and which ones an
    instruction writes into instead of allocating (views and in-place updates)."""

    def __init__(self, comp: Computation, by_name: dict[str, Computation], active: frozenset[str], entry: bool):
        self.size: list[int] = []
        self.start: list[int] = []
        self.last: list[int] = []
        self.extra: dict[int, int] = {}
        self.candidates: list[tuple[int, int, list[int]]] = []
        self.owner: dict[int, int] = {}
        self.constants: set[int] = set()
        self.tables: dict[str, int] = {}
        values: dict[str, object] = {}
        insts = comp.instructions
        n = len(insts)
        for i, inst in enumerate(insts):
            operands = [values.get(o) for o in inst.operands]
            for tree in operands:
                for b in _leaves(tree):
                    self.last[b] = i
            values[inst.name] = self._define(i, inst, operands)
            if inst.opcode in ("while", "call", "conditional"):
                self.extra[i] = _callee_extra(inst, by_name, active)
        outputs = set(_leaves(values.get(comp.root.name)))
        if entry:  # the program's parameters belong to the caller: alive throughout
            for b in range(len(self.size)):
                if self.start[b] < 0:
                    self.last[b] = max(self.last[b], n)
        if comp.root.name in self.tables:
            outputs.add(self.tables[comp.root.name])
        for b in outputs:
            self.last[b] = n
        for b in range(len(self.size)):  # temporaries sit at aligned offsets
            if self.start[b] >= 0 and b not in outputs and b not in self.constants:
                self.size[b] = -(-self.size[b] // TEMP_ALIGNMENT) * TEMP_ALIGNMENT
        self.n = n

    def _new(self, nbytes: int, at: int) -> int:
        self.size.append(nbytes)
        self.start.append(at)
        self.last.append(at)
        return len(self.size) - 1

    def _fresh(self, shape: Shape, at: int):
        if shape.is_tuple:
            return tuple(self._fresh(s, at) for s in shape.tuple_shapes)
        return self._new(shape.byte_size(), at)

    def _define(self, i: int, inst: Instruction, operands: list):
        op = inst.opcode
        if op == "parameter":
            return self._fresh(inst.shape, -1)  # live from the start
        if op in ("bitcast", "copy-done", "opt-barrier", "optimization-barrier", "add-dependency", "domain") \
                and operands:
            return operands[0]
        if op == "get-tuple-element" and operands and isinstance(operands[0], tuple):
            try:
                return operands[0][int(inst.attr("index", "0") or 0)]
            except (ValueError, IndexError):
                return self._fresh(inst.shape, i)
        if op == "constant" and not inst.shape.is_tuple:
            b = self._new(inst.shape.byte_size(), -1)  # constants are allocated for the whole program
            self.constants.add(b)
            self.last[b] = 1 << 60
            return b
        if op == "tuple":
            self.tables[inst.name] = self._new(POINTER_BYTES * len(inst.operands), i)
            return tuple(operands)
        if op == "while" and operands and operands[0] is not None:
            return operands[0]  # the loop updates its state in place
        tree = self._fresh(inst.shape, i)
        if op in _IN_PLACE and isinstance(tree, int):
            first_only = op in ("dynamic-update-slice", "scatter")
            arrays = [o for o in (operands[:1] if first_only else operands) if isinstance(o, int)]
            if arrays:
                self.candidates.append((i, tree, arrays))
        return tree

    def _owner(self, b: int) -> int:
        while b in self.owner:
            b = self.owner[b]
        return b

    def _reuse(self) -> None:
        """An in-place result takes over an operand buffer of its size whose last read is its own definition
        (never a parameter: the caller's data, or the loop state)."""
        for i, new, operands in self.candidates:
            for b in operands:
                root = self._owner(b)
                if root != new and self.start[root] >= 0 and root not in self.constants and self.last[root] == i and self.size[root] == self.size[new]:
                    self.owner[new] = root
                    self.last[root] = max(self.last[root], self.last[new])
                    self.size[new] = 0
                    break

    def sweep(self) -> int:
        """Allocate each buffer where it is defined and free it after its last read; report the highest total."""
        self._reuse()
        frees: dict[int, int] = {}
        allocs: dict[int, int] = {}
        live = 0
        for b, (nbytes, start) in enumerate(zip(self.size, self.start)):
            if start < 0:
                live += nbytes
            else:
                allocs[start] = allocs.get(start, 0) + nbytes
            frees[self.last[b]] = frees.get(self.last[b], 0) + nbytes
        peak = live
        for i in range(self.n):
            live += allocs.get(i, 0)
            peak = max(peak, live + self.extra.get(i, 0))
            live -= frees.get(i, 0)
        return peak


def _leaves(tree) -> list[int]:
    if tree is None:
        return []
    if isinstance(tree, int):
        return [tree]
    out = []
    for t in tree:
        out.extend(_leaves(t))
    return out


def _callee_extra(inst: Instruction, by_name: dict[str, Computation], active: frozenset[str]) -> int:
    """Bytes a called computation needs beyond the operands it receives (a loop body's temporaries)."""
    if inst.opcode == "while":
        names = [(inst.attr("body") or "").lstrip("%"), (inst.attr("condition") or "").lstrip("%")]
    else:
        names = inst.called_computation_names()
    extra = 0
    for name in names:
        callee = by_name.get(name)
        if callee is None:
            continue
        params = sum(p.shape.byte_size() for p in callee.parameters())
        extra = max(extra, _peak(callee, by_name, active) - params)
    return extra
