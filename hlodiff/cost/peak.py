"""hlodiff's estimate of a graph's peak memory, for when XLA's own figure is not in the dump folder.

A liveness walk over the entry computation in its printed order (the schedule, for optimized modules:
``is_scheduled=true``), modelled on what XLA's buffer assignment does on the CPU:

* buffers are followed through views: ``bitcast`` and ``get-tuple-element`` allocate nothing, a ``tuple`` holds
  its elements' buffers (and allocates a table of pointers), a ``while`` updates its state in place;
* a buffer is allocated where it is defined and freed after its last read; the program's parameters and its
  outputs live throughout, a loop body's parameter (the loop state) only until its last read; an output that
  ``input_output_alias`` writes into a parameter's buffer (a donated input) takes no buffer of its own;
* an instruction that can write in place (``dynamic-update-slice``, elementwise ops and fusions) takes over an
  operand buffer of its size whose last read it is;
* a ``while``/``call``/``conditional`` adds what its callee needs beyond its parameters at that point;
* constants live for the whole program, reducers' scalars get their own small allocations, and temporaries sit
  at 64-byte boundaries.

Measured against XLA's ``Total bytes`` on every fixture module that has it: within 5% (docs/performance.md).
"""

from __future__ import annotations

from hlodiff.cost.memory import aliased_output_indices
from hlodiff.hlo.model import Computation, Instruction, Module, Shape

POINTER_BYTES = 8
_VIEWS = ("bitcast", "copy-done", "opt-barrier", "optimization-barrier", "add-dependency", "domain")
_IN_PLACE = ("dynamic-update-slice", "scatter", "all-reduce", "fusion", "add", "subtract", "multiply", "divide",
             "maximum", "minimum", "select", "convert", "negate", "exponential", "tanh", "clamp")
_FIRST_OPERAND_ONLY = ("dynamic-update-slice", "scatter")
TEMP_ALIGNMENT = 64
"""XLA's CPU backend places temporaries at 64-byte boundaries in its temp slab (outputs, parameters and constants
get allocations of their exact size)."""


def estimate_peak(module: Module) -> int:
    """hlodiff's peak-memory estimate of one execution of the module (see the module docstring).

    Callees are walked before their callers, each once, without recursion: a chain of thousands of nested
    ``call``/``while`` computations (which the parser reads) is estimated like any other module."""
    by_name = {c.name: c for c in module.computations}
    peaks: dict[str, int] = {}
    for comp in _callees_first(module.entry, by_name):
        peaks[comp.name] = _Buffers(comp, by_name, peaks, False).sweep()
    return (_Buffers(module.entry, by_name, peaks, True, aliased_output_indices(module)).sweep()
            + _thread_local(module))


def _called(inst: Instruction) -> list[str]:
    if inst.opcode == "while":
        return [(inst.attr("body") or "").lstrip("%"), (inst.attr("condition") or "").lstrip("%")]
    if inst.opcode in ("call", "conditional"):
        return inst.called_computation_names()
    return []


def _callees_first(entry: Computation, by_name: dict[str, Computation]) -> list[Computation]:
    """The computations ``entry`` reaches through ``while``/``call``/``conditional``, each after its own callees
    (an explicit stack, not recursion; a cycle, which the parser rejects anyway, is cut where it closes)."""
    order: list[Computation] = []
    state: dict[str, int] = {entry.name: 1}  # 1: on the stack, 2: done
    stack = [(entry, iter([n for inst in entry.instructions for n in _called(inst)]))]
    while stack:
        comp, pending = stack[-1]
        for name in pending:
            callee = by_name.get(name)
            if callee is not None and name not in state:
                state[name] = 1
                stack.append((callee, iter([n for inst in callee.instructions for n in _called(inst)])))
                break
        else:
            stack.pop()
            state[comp.name] = 2
            if comp is not entry:
                order.append(comp)
    return order


_REDUCER_USERS = ("reduce", "reduce-window", "scatter", "select-and-scatter", "sort", "map", "all-reduce",
                  "all-reduce-start", "reduce-scatter")
"""Instructions whose ``to_apply`` is a reducer or comparator. A ``call`` also names its callee ``to_apply``, but
that is a whole computation (XLA's CPU backend outlines parallel work into calls), counted by the walk itself."""


def _thread_local(module: Module) -> int:
    """Scalars of reducers and comparators (``to_apply``): XLA gives each value its own small allocation."""
    names: set[str] = set()
    for _, inst in module.instructions():
        raw = inst.attrs.get("to_apply") if inst.opcode in _REDUCER_USERS else None
        if raw:
            names.add(raw.strip().lstrip("%"))
    by_name = {c.name: c for c in module.computations}
    return sum(inst.shape.byte_size() for name in sorted(names) if name in by_name
               for inst in by_name[name].instructions if inst.opcode != "constant")


class _Buffers:
    """Buffers of one computation: which instruction defines each, who reads it last, and which ones an
    instruction writes into instead of allocating (views and in-place updates). ``peaks``: the peak live bytes
    of each callee, walked before (its parameters included). A loop body's parameter is the loop state: once read,
    its buffers take the next state, so they are released after their last read. ``aliased``: the entry's outputs
    written into donated parameters."""

    def __init__(self, comp: Computation, by_name: dict[str, Computation], peaks: dict[str, int], entry: bool,
                 aliased: list[tuple[int, ...]] = ()):
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
        last = self.last
        for i, inst in enumerate(insts):
            operands = [values.get(o) for o in inst.operands]
            for tree in operands:
                if type(tree) is int:  # most operands are one buffer: no list for them
                    last[tree] = i
                elif tree is not None:
                    for b in _leaves(tree):
                        last[b] = i
            values[inst.name] = self._define(i, inst, operands)
            if inst.opcode in ("while", "call", "conditional"):
                self.extra[i] = _callee_extra(inst, by_name, peaks)
        outputs = set(_leaves(values.get(comp.root.name)))
        if entry:  # the program's parameters belong to the caller: alive throughout
            for b in range(len(self.size)):
                if self.start[b] < 0:
                    self.last[b] = max(self.last[b], n)
        if comp.root.name in self.tables:
            outputs.add(self.tables[comp.root.name])
        for b in outputs:
            self.last[b] = n
        for index in aliased:  # written into the donated parameter's buffer, which is counted already
            for b in _leaves(_subtree(values.get(comp.root.name), index)):
                if self.start[b] >= 0 and b not in self.constants:
                    self.size[b] = 0
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
        if op in _VIEWS and operands:
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
            arrays = [o for o in (operands[:1] if op in _FIRST_OPERAND_ONLY else operands) if isinstance(o, int)]
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
                if root != new and self.start[root] >= 0 and root not in self.constants \
                        and self.last[root] == i and self.size[root] == self.size[new]:
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


def _subtree(tree, index: tuple[int, ...]):
    for i in index:
        if not isinstance(tree, tuple) or i >= len(tree):
            return None
        tree = tree[i]
    return tree


def _leaves(tree) -> list[int]:
    if tree is None:
        return []
    if isinstance(tree, int):
        return [tree]
    out = []
    for t in tree:
        out.extend(_leaves(t))
    return out


def _callee_extra(inst: Instruction, by_name: dict[str, Computation], peaks: dict[str, int]) -> int:
    """Bytes a called computation needs beyond the operands it receives (a loop body's temporaries)."""
    extra = 0
    for name in _called(inst):
        callee = by_name.get(name)
        if callee is None:
            continue
        params = sum(p.shape.byte_size() for p in callee.parameters())
        extra = max(extra, peaks.get(name, 0) - params)
    return extra
