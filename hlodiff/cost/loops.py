"""Where each computation runs and how often: the ``while`` loops of a module and their trip counts.

Copies and other per-iteration costs are only meaningful with a multiplier, so the module's call graph is walked
from the entry: a ``while`` body runs ``trip_count`` times per execution of its caller, ``call`` and
``conditional`` targets run in their caller's context, and computations applied inside an instruction (fusions,
reducers, sort comparators) are not separate program steps and are not visited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.hlo.attributes import parse_backend_config
from hlodiff.errors import HlodiffError
from hlodiff.hlo.literal import integer
from hlodiff.hlo.model import Computation, Instruction, Module

_CONTROL_CALLS = ("call", "conditional", "async-start")
_COMPUTATION_NAMES = re.compile(r"%?([^\s,{}%]+)")
MAX_CONTEXTS = 10_000
"""A computation called from many sites is visited once per site; beyond this many, a module is pathological."""


@dataclass(frozen=True, slots=True)
class Context:
    """A computation as the program runs it: inside which loop (innermost ``while``) and how many times per
    execution of the graph (None when some enclosing loop's trip count is unknown)."""

    computation: Computation
    loop: str | None
    times: int | None
    loop_trip_count: int | None = None


@dataclass(frozen=True, slots=True)
class Loop:
    name: str
    computation: str
    body: str
    trip_count: int | None
    trip_source: str | None
    times: int | None
    """Executions of the whole loop per graph execution (enclosing loops), None when unknown."""

    def to_json(self) -> dict:
        return {"name": self.name, "computation": self.computation, "body": self.body,
                "trip_count": self.trip_count, "trip_count_source": self.trip_source}


def contexts(module: Module) -> tuple[list[Context], list[Loop]]:
    """Every (computation, loop, multiplier) the program runs, entry first, and every loop found."""
    by_name = {c.name: c for c in module.computations}
    out: list[Context] = []
    loops: list[Loop] = []
    listed: set[tuple[str, str]] = set()
    stack = [Context(module.entry, None, 1)]
    while stack:
        ctx = stack.pop()
        out.append(ctx)
        if len(out) > MAX_CONTEXTS:
            break
        pending = []
        for inst in ctx.computation.instructions:
            if inst.opcode == "while":
                trip, source = trip_count(inst, ctx.computation, by_name)
                body = by_name.get(_one(inst.attr("body")))
                if (inst.name, ctx.computation.name) not in listed:  # a computation called from two places
                    listed.add((inst.name, ctx.computation.name))
                    loops.append(Loop(inst.name, ctx.computation.name, body.name if body else "?", trip, source,
                                      ctx.times))
                times = None if ctx.times is None or trip is None else ctx.times * trip
                for key in ("condition", "body"):
                    callee = by_name.get(_one(inst.attr(key)))
                    if callee is not None:
                        pending.append(Context(callee, inst.name, times, trip))
            elif inst.opcode in _CONTROL_CALLS:
                for name in inst.called_computation_names():
                    callee = by_name.get(name)
                    if callee is not None:
                        pending.append(Context(callee, ctx.loop, ctx.times, ctx.loop_trip_count))
        stack.extend(reversed(pending))
    return out, loops


def _one(raw: str | None) -> str:
    if not raw:
        return ""
    m = _COMPUTATION_NAMES.search(raw)
    return m.group(1) if m else ""


def trip_count(inst: Instruction, caller: Computation, by_name: dict[str, Computation]) -> tuple[int | None, str | None]:
    """XLA's ``known_trip_count`` from the backend config, else the loop's bounds (``i < N`` counted up by 1 from a
    constant), else unknown."""
    raw = inst.attr("backend_config")
    if raw:
        try:
            config = parse_backend_config(raw)
        except HlodiffError:
            config = None
        value = config.value if config is not None and config.is_json else None
        if isinstance(value, dict):
            known = value.get("known_trip_count")
            n = known.get("n") if isinstance(known, dict) else None
            try:
                if n is not None and int(n) >= 0:
                    return int(n), "known_trip_count"
            except (TypeError, ValueError):
                pass
    bound = _trip_from_bounds(inst, caller, by_name)
    return (bound, "bounds") if bound is not None else (None, None)


def _trip_from_bounds(inst: Instruction, caller: Computation, by_name: dict[str, Computation]) -> int | None:
    """``while(tuple(..., constant(s), ...))`` whose condition is ``gte(p, k) < constant(N)`` and whose body
    sets element ``k`` to ``gte(p, k) + constant(1)``: N - s iterations."""
    cond = by_name.get(_one(inst.attr("condition")))
    body = by_name.get(_one(inst.attr("body")))
    if cond is None or body is None or len(inst.operands) != 1:
        return None
    c_insts = cond.by_name()
    root = cond.root
    if root.opcode != "compare" or root.attr("direction") not in ("LT", "GT") or len(root.operands) != 2:
        return None
    lhs, rhs = (c_insts.get(o) for o in root.operands)
    if root.attr("direction") == "GT":
        lhs, rhs = rhs, lhs
    if lhs is None or rhs is None or lhs.opcode != "get-tuple-element" or rhs.opcode != "constant":
        return None
    k = _index(lhs)
    limit = _int_literal(rhs)
    start = _init_constant(inst, k, caller)
    if k is None or limit is None or start is None or not _counts_up_by_one(body, k):
        return None
    return max(limit - start, 0)


def _index(inst: Instruction) -> int | None:
    try:
        return int(inst.attr("index", ""))
    except ValueError:
        return None


def _int_literal(inst: Instruction) -> int | None:
    return integer(inst.literal or "")


def _init_constant(inst: Instruction, k: int | None, caller: Computation) -> int | None:
    if k is None:
        return None
    insts = caller.by_name()
    init = insts.get(inst.operands[0])
    if init is None or init.opcode != "tuple" or k >= len(init.operands):
        return None
    element = insts.get(init.operands[k])
    return _int_literal(element) if element is not None and element.opcode == "constant" else None


def _counts_up_by_one(body: Computation, k: int) -> bool:
    insts = body.by_name()
    root = body.root
    if root.opcode != "tuple" or k >= len(root.operands):
        return False
    step = insts.get(root.operands[k])
    if step is None or step.opcode != "add" or len(step.operands) != 2:
        return False
    kinds = sorted((insts[o].opcode, _index(insts[o]) if insts[o].opcode == "get-tuple-element" else _int_literal(insts[o]))
                   for o in step.operands if o in insts)
    return kinds == [("constant", 1), ("get-tuple-element", k)]
