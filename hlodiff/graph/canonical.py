"""Canonical graphs: one networkx DiGraph per computation, built from a parsed module.

Nodes are instruction names, edges run from operand to user (``pos`` holds the first operand position). The
operand order itself lives in ``operands`` because a DiGraph keeps one edge per pair, and ``add(x, x)`` needs two.
Only computations reachable from the entry are built: anything else in the file does not execute.

Normalization passes (:mod:`hlodiff.graph.passes`) rewrite these graphs in place; fingerprints
(:mod:`hlodiff.graph.fingerprint`) are computed on the result.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from hlodiff.accel import native
from hlodiff.hlo.attributes import CALL_KEYS, Metadata, called_computations, parse_metadata
from hlodiff.hlo.model import NO_ATTRIBUTES, Computation, Instruction, Module, SourceFrame
from hlodiff.errors import HlodiffError

if TYPE_CHECKING:
    import networkx as nx


_CALL_KEYS = frozenset(CALL_KEYS)


@dataclass(frozen=True, slots=True)
class Normalization:
    """Which normalization passes run. Each field is one pass; see :mod:`hlodiff.graph.passes`."""

    names: bool = True
    parameter_order: bool = True
    dead_code: bool = True
    tuple_plumbing: bool = True
    metadata: bool = True
    layouts: bool = False

    @classmethod
    def without(cls, *names: str, ignore_layouts: bool = False) -> "Normalization":
        """All default passes except ``names`` (CLI spellings with '-' accepted)."""
        fields = {f: True for f in PASS_NAMES}
        fields["layouts"] = ignore_layouts
        for name in names:
            key = name.replace("-", "_")
            if key not in fields:
                raise HlodiffError(f"unknown normalization pass {name!r}; known: {', '.join(PASS_NAMES)}")
            fields[key] = False
        return cls(**fields)


PASS_NAMES = ("names", "parameter_order", "dead_code", "tuple_plumbing", "metadata", "layouts")


@dataclass(slots=True)
class PassReport:
    """What one normalization pass removed or ignored, in words a report can print."""

    name: str
    summary: str
    count: int = 0


@dataclass(slots=True)
class CanonicalComputation:
    """A computation as a graph, plus the per-node facts the passes and the differ share.

    ``operands`` is the source of truth (passes rewrite it); its values are the instructions' own operand tuples
    (no copy per node: passes replace an entry, never change one); :attr:`graph` is built from it on first use,
    after the passes, because fingerprinting alone never needs it and most called computations are never diffed.
    """

    computation: Computation
    # Unset once hash_small dropped a small computation's maps (and made it a _Dropped, whose __getattr__ makes
    # them again on first read; _size keeps their size); plain slots otherwise, read with no call: the entry's
    # are read in hot loops
    insts: dict[str, Instruction]
    operands: dict[str, tuple[str, ...]]
    root: str
    # The per-node facts hashing fills, read through the properties below (param_ids, hashes, anon, labels): made
    # on first use, and for a small called computation hashed with the accelerator not kept at all, made again
    # by _refill when something reads them (see _facts)
    _param_ids: dict[str, int] | None = None
    _hashes: dict[str, str] | None = None
    _anon: dict[str, str] | None = None
    _labels: dict[str, str] | None = None
    _refill: "Callable[[CanonicalComputation], None] | None" = None
    # Dropped by passes (kept for reports), through remove_instruction: one shared read-only empty dict until then
    # (most computations lose nothing: 13,600 small reductions a side of an unrolled 300K-instruction step)
    removed: dict[str, Instruction] = field(default_factory=lambda: NO_ATTRIBUTES)
    _graph: "nx.DiGraph | None" = None
    _users: dict[str, list[str]] | None = None
    _effects: tuple[str, ...] | None = None  # a tuple: most are the one empty tuple
    _params: list[str] | None = None
    _postorder: list[str] | None = None  # kept by hlodiff.graph.fingerprint once the hashes exist
    _index: object | None = None  # the accelerator's integer-array form of ``operands`` (graph_index)
    # Counted by the accelerator in the walk that builds the maps (None: not counted): instructions with a metadata
    # attribute, and get-tuple-elements, as built (the passes only remove instructions, into ``removed``)
    _with_metadata: int | None = None
    _gtes: int | None = None
    _size: int = -1  # len(insts) while hash_small's drop of the maps lasts, else -1

    @property
    def name(self) -> str:
        return self.computation.name

    def size(self) -> int:
        """How many instructions (without remaking maps hash_small dropped)."""
        return self._size if self._size >= 0 else len(self.insts)

    def instructions(self):
        """Every instruction, in order, without remaking the maps hash_small dropped: a dropped computation's maps
        are exactly its parsed instructions (dropped only when no pass removed or rewrote one), so the parsed list
        serves. Why: explain's checks that scan every computation of a graph would otherwise make the maps of all
        13,600 small reductions a side of a 300K-family graph again (issue 34, memory)."""
        return self.computation.instructions if self._size >= 0 else self.insts.values()

    def _restore(self) -> None:
        """The maps of a small computation whose maps hash_small dropped after hashing, made again from its
        computation: hash_small drops them only when no pass changed them (nothing removed, every operand list the
        instruction's own), so the same maps, in the same order. Why: 13,600 three-instruction reductions a side of
        the 300K pair each kept two small dicts, about 10 MB for both sides, that comparing equal computations never
        reads (issue 34, memory)."""
        self.insts, self.operands = native.index_computation(self.computation.instructions, SIDE_EFFECTS)[:2]
        self._size = -1
        self.__class__ = CanonicalComputation

    @property
    def param_ids(self) -> dict[str, int]:
        """Canonical parameter numbers."""
        if self._param_ids is None:
            self._facts()
        return self._param_ids

    @param_ids.setter
    def param_ids(self, ids: dict[str, int]) -> None:
        if self._param_ids is None:
            self._facts()
        self._param_ids = ids

    @property
    def hashes(self) -> dict[str, str]:
        """Exact Merkle hashes of nodes' subgraphs: the root's and those of the nodes the root does not reach (all
        that is read: the root's holds the others'); small computations, and graphs hashed without the
        accelerator's index, keep every node's."""
        if self._hashes is None:
            self._facts()
        return self._hashes

    @property
    def anon(self) -> dict[str, str]:
        """The same with parameters known by shape only."""
        if self._anon is None:
            self._facts()
        return self._anon

    @property
    def labels(self) -> dict[str, str]:
        """Each node's own comparable text."""
        if self._labels is None:
            self._facts()
        return self._labels

    def _facts(self) -> None:
        """Empty maps for hashing to fill; or, for a small called computation whose maps hashing did not keep, the
        maps made again by the same steps. Why: an unrolled step calls one small reduction per block (13,600 a
        side of the 300K pair), whose four maps cost 22 MiB for both sides and are read for the few a report
        shows; the computation's hash, all that comparing reads of the others, is kept (issue 34, memory)."""
        refill, self._refill = self._refill, None
        self._param_ids, self._hashes, self._anon, self._labels = {}, {}, {}, {}
        if refill is not None:
            refill(self)

    @property
    def graph(self) -> "nx.DiGraph":
        """Instructions as nodes, operand -> user edges with ``pos`` (the first operand position)."""
        if self._graph is None:
            import networkx as nx  # imported on first use: it costs 0.1 s at start-up

            graph = nx.DiGraph()
            graph.add_nodes_from(self.insts)
            edges: dict[tuple[str, str], int] = {}
            for name, ops in self.operands.items():
                for pos, op in enumerate(ops):
                    edges.setdefault((op, name), pos)
            graph.add_edges_from((u, v, {"pos": pos}) for (u, v), pos in edges.items())
            self._graph = graph
        return self._graph

    def users(self, name: str) -> list[str]:
        """Instructions that use ``name``, in text order, each once (a plain map: lookups on 30k-node graphs are
        hot; through the accelerator's graph index, the users of that name alone, as arrays: a report asks for a
        few hundred names, and a list per node of a 300K-instruction graph cost 0.25 s a side)."""
        if self._users is None and native is not None:
            index = graph_index(self)
            if index is not None:  # one name's users from the index's arrays: no list made for every node
                return native.index_users_of(index, name)
            self._users = native.users_of(self.operands)
        if self._users is None:
            users: dict[str, list[str]] = {n: [] for n in self.operands}
            for user, ops in self.operands.items():
                for op in dict.fromkeys(ops):
                    users[op].append(user)
            self._users = users
        return self._users[name]

    def parameters(self) -> list[str]:
        """Parameter names in text order, found once (no pass removes a parameter: they are the calling
        convention). A new list each call: callers may sort or extend it."""
        if self._params is None:
            self._params = [n for n, inst in self.insts.items() if inst.opcode == "parameter"]
        return list(self._params)

    def outputs(self) -> list[str]:
        """The computation's outputs: the root tuple's elements, or the root itself."""
        root = self.insts[self.root]
        if root.opcode == "tuple":
            return list(self.operands[self.root])
        return [self.root]


class _Dropped(CanonicalComputation):
    """A small computation whose insts and operands hash_small dropped (unset slots): the first read makes them
    again and makes it a CanonicalComputation. A class of its own, not a ``__getattr__`` on CanonicalComputation:
    that hook stops the interpreter from specializing every attribute read of every computation (the entry's
    insts and operands are read in hot loops: 0.1 s of the 300K pair's 2 s as a property, measured)."""

    __slots__ = ()

    def __getattr__(self, name: str):
        if name in ("insts", "operands"):
            self._restore()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


CanonicalComputation._dropped = _Dropped  # the class hash_small gives a computation whose maps it drops


@dataclass(slots=True)
class CanonicalModule:
    """A module after normalization: its computation graphs, what each pass did, and its fingerprint."""

    module: Module
    options: Normalization
    computations: dict[str, CanonicalComputation]
    entry: CanonicalComputation
    reports: list[PassReport] = field(default_factory=list)
    computation_hashes: dict[str, str] = field(default_factory=dict)
    fingerprint: str = ""
    _metadata: dict[int, Metadata] = field(default_factory=dict)

    def label_counts(self) -> "Counter[str]":
        """How many nodes of every computation carry each label. A small called computation whose maps hashing
        did not keep counts as the first of its hash did (equal hashes, equal labels: every node the root does
        not reach is a parameter, and the hash holds their labels), so an unrolled step's 13,600 reductions make
        their maps again once, not each (explain's candidate ranking reads this for every compiled graph)."""
        counts: Counter[str] = Counter()
        by_hash: dict[str, Counter[str]] = {}
        for cc in self.computations.values():
            if cc._refill is None:
                counts.update(cc.labels.values())
                continue
            key = self.computation_hashes[cc.name]
            same = by_hash.get(key)
            if same is None:
                same = by_hash[key] = Counter(cc.labels.values())
            counts.update(same)
        return counts

    def metadata(self, inst: Instruction) -> Metadata:
        """Typed metadata of an instruction (cached; empty when absent or unreadable)."""
        key = id(inst)
        meta = self._metadata.get(key)
        if meta is None:
            raw = inst.attrs.get("metadata")
            try:
                meta = parse_metadata(raw) if raw else Metadata()
            except HlodiffError:
                meta = Metadata()
            self._metadata[key] = meta
        return meta

    def frames(self, inst: Instruction) -> list[SourceFrame]:
        """Python frames for an instruction, innermost first: the stack-frame table, else source_file/line."""
        meta = self.metadata(inst)
        if meta.stack_frame_id and self.module.stack_frames:
            chain = self.module.stack_frames.resolve(meta.stack_frame_id)
            if chain:
                return chain
        if (stack := self.module.full_stacks.get(inst.name)) is not None:
            return list(stack)
        if meta.source_file:
            return [SourceFrame(meta.source_file, meta.source_line, None)]
        return []


def build_computation(comp: Computation) -> CanonicalComputation:
    if native is not None:  # the maps, the parameters and the side effects in one walk
        insts, operands, params, effects, with_metadata, gtes = native.index_computation(comp.instructions,
                                                                                         SIDE_EFFECTS)
        cc = CanonicalComputation(comp, insts, operands, comp.root.name)
        cc._params, cc._effects = params, effects
        if with_metadata >= 0:
            cc._with_metadata, cc._gtes = with_metadata, gtes
        return cc
    insts = {inst.name: inst for inst in comp.instructions}
    operands = {inst.name: tuple(inst.operands) for inst in comp.instructions}
    return CanonicalComputation(comp, insts, operands, comp.root.name)


def graph_index(cc: CanonicalComputation):
    """The accelerator's form of ``cc.operands`` as integer arrays (positions in the map's order), made once and
    kept until a pass changes an operand list (those passes set ``cc._index = None``); ``None`` without the
    accelerator or when an operand names no instruction (the dict walks then raise their ``KeyError``). The walks
    and hash loops read it instead of probing name-keyed maps: the same results, fewer cache misses."""
    if cc._index is None and native is not None:  # small maps stay in cache: an index would only cost memory
        cc._index = len(cc.operands) >= INDEX_MIN and native.graph_index(cc.operands) or False
    return cc._index or None


INDEX_MIN = 16  # computations smaller than this (most called computations: 3-instruction reductions) get none


def _defined_before_use(operands: dict[str, list[str]]) -> bool:
    if native is not None:
        return native.defined_before_use(operands)
    placed: set[str] = set()
    add = placed.add
    for name, ops in operands.items():
        for op in ops:
            if op not in placed:
                return False
        add(name)
    return True


def topological_order(cc: "CanonicalComputation") -> list[str]:
    """Operands before users, every node once (a depth-first post-order over the operand lists)."""
    operands = cc.operands
    index = graph_index(cc)
    if index is not None and native.index_ordered(index):
        return list(operands)
    if index is None and _defined_before_use(operands):  # printed so (what XLA and the tracers write): the walk returns that order
        return list(operands)
    order: list[str] = []
    placed = set()
    for start in operands:
        if start in placed:
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            name, i = stack[-1]
            ops = operands[name]
            if i < len(ops):
                stack[-1] = (name, i + 1)
                op = ops[i]
                if op not in placed:
                    stack.append((op, 0))
            else:
                stack.pop()
                if name not in placed:
                    placed.add(name)
                    order.append(name)
    return order


SIDE_EFFECTS = frozenset({"outfeed", "infeed", "send", "send-done", "recv", "recv-done",
                          "rng-get-and-update-state", "after-all"})


def has_side_effect(inst: Instruction) -> bool:
    """Instructions XLA keeps although no output uses them (a print, an outfeed, a send)."""
    return inst.opcode in SIDE_EFFECTS or inst.attrs.get("custom_call_has_side_effect") == "true"


def side_effect_roots(cc: "CanonicalComputation") -> tuple[str, ...]:
    """Instructions with a side effect, found once per computation (no pass removes them: they are live)."""
    if cc._effects is None:
        effects = SIDE_EFFECTS
        cc._effects = tuple(name for name, inst in cc.insts.items()
                            if inst.opcode in effects or (inst.attrs and "custom_call_has_side_effect" in inst.attrs
                                                          and has_side_effect(inst)))
    return cc._effects


def remove_instruction(cc: "CanonicalComputation", name: str) -> Instruction:
    """Drop ``name`` from the graph's maps into ``removed`` (what a pass took out, for its report); the
    computation gets a ``removed`` of its own on its first removal."""
    if cc.removed is NO_ATTRIBUTES:
        cc.removed = {}
    inst = cc.removed[name] = cc.insts.pop(name)
    del cc.operands[name]
    cc._index = None
    return inst


def live_nodes(cc: "CanonicalComputation", extra_roots: list[str] = ()) -> set[str]:
    """The root (and ``extra_roots``) and everything they depend on."""
    if native is not None:
        return native.live([cc.root, *extra_roots], cc.operands)
    live = {cc.root, *extra_roots}
    stack = [cc.root, *extra_roots]
    operands = cc.operands
    while stack:
        for op in operands[stack.pop()]:
            if op not in live:
                live.add(op)
                stack.append(op)
    return live


def reachable_computations(module: Module) -> list[Computation]:
    """Computations the entry calls, directly or not, callees before callers, the entry last."""
    if native is not None and isinstance(module.computations, list):
        # The same walk in C, each computation's callers found when it is visited, and a caller that names its
        # callee plainly (an unrolled step's 13,600 reduces a side: to_apply=%region_N) read there: 40 ms -> 15 ms
        return native.reachable_order(module.computations, module.entry, _CALL_KEYS, called_computations)
    by_name = {c.name: c for c in module.computations}
    order: list[Computation] = []
    state: dict[str, int] = {}
    stack: list[tuple[Computation, bool]] = [(module.entry, False)]
    while stack:
        comp, done = stack.pop()
        if done:
            if state.get(comp.name) != 2:
                state[comp.name] = 2
                order.append(comp)
            continue
        if state.get(comp.name):
            continue
        state[comp.name] = 1
        stack.append((comp, True))
        for inst in comp.instructions:
            if not inst.attrs or _CALL_KEYS.isdisjoint(inst.attrs):
                continue
            for callee in called_computations(inst.attrs):
                target = by_name.get(callee)
                if target is not None and not state.get(callee):
                    stack.append((target, False))
    return order
