"""What XLA rejects once a module is read: computations or instructions defined twice, a second ENTRY or ROOT,
calls to computations that do not exist, recursion, operands that are not defined, cycles, parameter numbers used
twice, and typed operands whose declared shape is not their definition's (ShapeMismatchInOperand).

A mixin of the parser (:class:`hlodiff.hlo.parser._Parser`): the checks run after a module is read, need the
parser's lines and positions to say where, and are an idea of their own (XLA's verifier-like rules at parse time).
"""

from __future__ import annotations

import re

from hlodiff.accel import native
from hlodiff.errors import HloParseError
from hlodiff.hlo.attributes import CALL_KEYS
from hlodiff.hlo.model import Computation, Instruction, Module, Shape
from hlodiff.hlo.shapes import ARRAY_SHAPE, ShapeSyntaxError, parse_shape_at, remember
from hlodiff.hlo.shapes import _cache as _shape_cache

_CALL_KEYS = frozenset(CALL_KEYS)


class NameChecks:
    """The checks, as methods of the parser: ``self`` has ``path``, ``first_line``, ``lines``, ``declared_in`` and
    ``error``."""

    def _check_names(self, module: Module) -> None:
        """What XLA itself rejects: names, roots, parameters and calls that do not add up, and cycles."""
        self._check_computations(module)
        comps = module.computations
        if native is not None:  # the computations names_in_order finds clean need nothing more unless shapes were
            todo = set(native.names_in_order_each(comps))  # declared in them (most: one call for them all)
            if self.declared_in:
                todo.update(i for i, comp in enumerate(comps) if id(comp) in self.declared_in)
            comps = [comps[i] for i in sorted(todo)]
        for comp in comps:
            self._check_computation(comp)

    def _check_computations(self, module: Module) -> None:
        if native is not None and isinstance(module.computations, list):
            # The calls map in C (a caller naming its callee plainly read there: 13,600 a side of the 300K pair);
            # None when a rule is broken, which the loop below finds first and says where
            calls = native.calls_each(module.computations, _CALL_KEYS, _callees)
            if calls is not None:
                self._check_no_recursion(calls)
                return
        names: dict[str, Computation] = {}
        entry: Computation | None = None
        for comp in module.computations:
            if comp.name in names:
                raise self.error(f"computation {comp.name!r} defined twice", comp.line - self.first_line)
            names[comp.name] = comp
            if comp.is_entry:
                if entry is not None:
                    raise self.error(f"a second ENTRY computation {comp.name!r} (the first is {entry.name!r})",
                                     comp.line - self.first_line)
                entry = comp
        # The computations that call others, in module order, with their calls (most call nothing: an unrolled
        # step's small reductions, 13,600 a side of issue 34's 300K pair, get no entry and no walk)
        calls: dict[str, list[tuple[str, Instruction]]] = {}
        if native is not None:  # one call: the computations that call others, with their calling instructions
            callers_of = native.with_attribute_each(module.computations, _CALL_KEYS)
        else:
            callers_of = [(comp, comp.instructions) for comp in module.computations]
        for comp, callers in callers_of:
            for inst in callers:
                if inst.attrs and not _CALL_KEYS.isdisjoint(inst.attrs):
                    for callee in _callees(inst.attrs):
                        if callee not in names:
                            raise HloParseError(f"{inst.name!r} calls computation {callee!r}, which is not defined",
                                                path=self.path, line=inst.line, col=inst.col)
                        calls.setdefault(comp.name, []).append((callee, inst))
        self._check_no_recursion(calls)

    def _check_no_recursion(self, calls: dict[str, list[tuple[str, Instruction]]]) -> None:
        """HLO has no recursion: a computation may not call itself, directly or not. ``calls`` holds only the
        computations that call: one that calls nothing closes no cycle, and the walk would enter and leave it
        without looking at another edge, so leaving it out finds the same first edge."""
        edge = _back_edge(calls, lambda name: [callee for callee, _ in calls[name] if callee in calls])
        if edge is not None:
            name, callee = edge
            inst = next(inst for c, inst in calls[name] if c == callee)
            raise HloParseError(f"computation {callee!r} calls itself (through {inst.name!r} in {name!r})",
                                path=self.path, line=inst.line, col=inst.col)

    def _check_computation(self, comp: Computation) -> None:
        forward = native.names_in_order(comp.instructions) if native is not None else None
        if forward is None:  # the loop below, which says where a rule is broken
            forward = self._check_instruction_names(comp)
        declared = self.declared_in.pop(id(comp), None)
        if declared:
            self._check_declared_shapes(comp, declared)
        if not forward:
            return  # every operand defined before its use: no cycle is possible
        defined = {inst.name for inst in comp.instructions}
        for inst in comp.instructions:
            for operand in inst.operands:
                if operand not in defined:
                    line, col = self._operand_position(inst, operand)
                    raise HloParseError(f"operand {operand!r} of {inst.name!r} is not defined in {comp.name!r}",
                                        path=self.path, line=line, col=col)
        self._check_acyclic(comp)

    def _check_instruction_names(self, comp: Computation) -> bool:
        """Names defined once, one ROOT, distinct parameter numbers; whether an operand is used before its
        definition."""
        defined: set[str] = set()
        forward = False
        roots = 0
        params: set[int] = set()
        for inst in comp.instructions:
            if inst.name in defined:
                raise HloParseError(f"instruction {inst.name!r} defined twice in {comp.name!r}",
                                    path=self.path, line=inst.line, col=inst.col)
            forward = forward or not defined.issuperset(inst.operands)
            defined.add(inst.name)
            roots += inst.is_root
            if roots > 1 and inst.is_root:
                raise HloParseError(f"a second ROOT in {comp.name!r}", path=self.path, line=inst.line, col=inst.col)
            if inst.parameter_number is not None:
                if inst.parameter_number < 0 or inst.parameter_number in params:
                    raise HloParseError(f"parameter number {inst.parameter_number} is negative or used twice in "
                                        f"{comp.name!r}", path=self.path, line=inst.line, col=inst.col)
                params.add(inst.parameter_number)
        return forward

    def _check_declared_shapes(self, comp: Computation, declared) -> None:
        """An operand written with a shape must have that shape, layouts aside (XLA's ShapeUtil::Compatible):
        the declared shape is read back from the shape table, so the common case is one identity test."""
        by_name = comp.by_name()
        for inst, shapes in declared:
            for i, (operand, text) in enumerate(zip(inst.operands, shapes)):
                if text is None:
                    continue
                want = text if isinstance(text, Shape) else _shape_cache.get(text)
                if want is None:
                    want = self._declared_shape(inst, operand, i, text)
                got = by_name.get(operand)
                if got is None or got.shape is None or got.shape is want or _same_shape(got.shape, want):
                    continue
                line, col = self._operand_position(inst, operand, inst.operands[:i].count(operand))
                col = self._declared_column(line, col)
                raise HloParseError(f"The declared operand shape {want} is not compatible with the shape of the "
                                    f"operand instruction {got.shape} ({operand!r} of {inst.name!r})",
                                    path=self.path, line=line, col=col)

    def _declared_shape(self, inst: Instruction, operand: str, i: int, text: str) -> Shape:
        try:
            shape, end = parse_shape_at(text, 0)
            if end != len(text):
                raise ShapeSyntaxError("unexpected text after the shape", end)
            return remember(text, shape)  # tuple shapes recur (get-tuple-element operands)
        except ShapeSyntaxError as e:
            line, col = self._operand_position(inst, operand, inst.operands[:i].count(operand))
            raise HloParseError(f"the shape declared for operand {operand!r}: {e}", path=self.path, line=line,
                                col=self._declared_column(line, col)) from None

    def _declared_column(self, line: int, col: int) -> int:
        """The column of the array shape written just before the operand name at ``col`` (where XLA points), else
        ``col`` (a tuple shape, or a name written without a shape)."""
        index = line - self.first_line
        if not 0 <= index < len(self.lines):
            return col
        before = self.lines[index][:col - 1].rstrip()
        for pos in range(len(before) - 1, max(len(before) - 256, 0), -1):
            if before[pos - 1] in " (," and ARRAY_SHAPE.fullmatch(before, pos) is not None:
                return pos + 1
        return col

    def _operand_position(self, inst: Instruction, operand: str, nth: int = 0) -> tuple[int, int]:
        """Where ``operand`` is written (its ``nth`` further use) in ``inst``'s operand list (the name the error is
        about), else the instruction's own position. Looks at the statement's first few lines only (operands
        rarely wrap)."""
        token = re.compile(r"(?<![\w.\-])%?" + re.escape(operand) + r"(?![\w.\-])")
        first = inst.line - self.first_line
        for index in range(max(first, 0), min(first + 4, len(self.lines))):
            text = self.lines[index]
            start = text.find("(", inst.col - 1 if index == first else 0)
            if start < 0 and index == first:
                continue
            for m in token.finditer(text, start + 1):
                if nth == 0:
                    return self.first_line + index, m.start() + 1
                nth -= 1
        return inst.line, inst.col

    def _check_acyclic(self, comp: Computation) -> None:
        by_name = {inst.name: inst for inst in comp.instructions}
        edge = _back_edge(by_name, lambda name: by_name[name].operands)
        if edge is not None:
            name, op = edge
            inst = by_name[op]
            raise HloParseError(f"instruction {op!r} depends on itself (a cycle through {name!r})",
                                path=self.path, line=inst.line, col=inst.col)


def _back_edge(nodes, successors) -> tuple[str, str] | None:
    """The first edge (from, to) that closes a cycle, in a depth-first walk over ``nodes``; ``None`` if acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in nodes:
        if state.get(start):
            continue
        state[start] = 1
        stack = [(start, iter(successors(start)))]
        while stack:
            name, edges = stack[-1]
            nxt = next(edges, None)
            if nxt is None:
                state[name] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return name, nxt
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(successors(nxt))))
    return None


def _same_shape(a: Shape, b: Shape) -> bool:
    """Same element types and dimensions, layouts aside (XLA's ShapeUtil::Compatible), tuples element-wise."""
    if a.tuple_shapes or b.tuple_shapes:
        return (len(a.tuple_shapes) == len(b.tuple_shapes)
                and all(_same_shape(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes)))
    return a.element_type == b.element_type and a.dims == b.dims


def _callees(attrs: dict[str, str]) -> list[str]:
    """Computation names in call attributes (a plain regex: the typed parser is too slow for every module), in
    :data:`CALL_KEYS` order; the keys present found by one set intersection (most callers have one)."""
    present = _CALL_KEYS.intersection(attrs)
    if len(present) == 1:
        return _CALLEE.findall(attrs[next(iter(present))])
    return [name for key in CALL_KEYS if key in present for name in _CALLEE.findall(attrs[key])]


_CALLEE = re.compile(r"%?([A-Za-z0-9_.\-]+)")
