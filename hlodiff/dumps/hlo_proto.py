"""HLO protos in XLA dump folders (``--xla_dump_hlo_as_proto``): the full Python stack of every instruction.

torch_xla's HLO *text* keeps only the innermost Python frame of an instruction (``source_file``/``source_line``),
often inside torch (``torch/optim/sgd.py``), so the user's line is lost. The proto of the same module keeps a
``stack_frame_index`` (filled by torch_xla when ``XLA_HLO_DEBUG=1``, and by JAX) that every instruction's
``metadata.stack_frame_id`` points into: file, function and line of each frame up to ``<module>``. XLA writes
``module_NNNN.NAME.STAGE.hlo.pb`` beside ``module_NNNN.NAME.STAGE.txt``; the text stays the graph hlodiff compares,
the proto lends it the stacks (matched by instruction name).

Decoding uses the ``protobuf`` runtime with the message subset declared in :mod:`hlodiff.dumps.hlo_messages`.
A file can hold an ``HloModuleProto``, an ``HloProto`` (what dump folders hold) or an ``HloSnapshot``; the bytes do
not say which, so each is tried and the one that decodes into a well-formed module wins. Anything else (a
``compile_options.pb``, a truncated file) is a one-line error, never a traceback.

Stack frame ids are 1-based everywhere in the proto, 0 meaning "none"; ``parent_frame_id`` names the caller frame.
(XLA's text printer prints ``parent_frame_id`` one higher — see :class:`hlodiff.hlo.model.StackFrameTable`.)
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from functools import lru_cache

from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.hlo.literal import value_text
from hlodiff.hlo.model import Module, SourceFrame

CONTAINERS = ("HloProto", "HloModuleProto", "HloSnapshot")


@dataclass(frozen=True, slots=True)
class AliasEntry:
    """One ``input_output_alias`` entry: output ``{output_index}`` may reuse parameter ``parameter``'s buffer."""

    output_index: tuple[int, ...]
    parameter: int
    parameter_index: tuple[int, ...]
    kind: str  # "may-alias" | "must-alias" | "undefined"


@dataclass(slots=True)
class ProtoModule:
    """What hlodiff takes from an HLO proto."""

    path: str
    container: str
    name: str
    stacks: dict[str, tuple[SourceFrame, ...]] = field(default_factory=dict)
    """Instruction name -> its Python stack, innermost frame first (only instructions that have one)."""
    aliases: tuple[AliasEntry, ...] = ()
    buffer_donors: tuple[tuple[int, tuple[int, ...]], ...] = ()
    instructions: int = 0
    constants: dict[str, tuple] = field(default_factory=dict)
    """Constant name -> its values, flat in the literal's order, for constants with more than one value: the text
    prints those as ``{...}`` past a few elements; the proto keeps every value."""


def read_hlo_proto(path: str) -> ProtoModule:
    """Decode an HLO proto file; HlodiffError (one line) when it is not one, or when it is bigger than
    ``HLODIFF_MAX_PROTO_BYTES`` (checked before reading: it is decoded whole)."""
    from hlodiff.dumps.limits import LIMIT_VARIABLES, Limits, limit_error

    limit = Limits.from_env().proto_bytes
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > limit:
                raise limit_error(path, None, "HLO proto too big to read", limit, LIMIT_VARIABLES["proto_bytes"])
            data = f.read(limit + 1)
    except OSError as exc:
        raise HlodiffError(exc.strerror or str(exc), path=path) from None
    if not data:
        raise HlodiffError("empty file", path=path)
    if len(data) > limit:  # grew while being read
        raise limit_error(path, None, "HLO proto too big to read", limit, LIMIT_VARIABLES["proto_bytes"])
    container, module = _decode(data, path)
    return ProtoModule(path, container, module.name, _stacks(module, path), _aliases(module), _donors(module),
                       sum(len(c.instructions) for c in module.computations), _constants(module))


def read_cached(path: str) -> ProtoModule:
    """:func:`read_hlo_proto`, read once per file version: its stacks and its constants' values are asked for by
    different readers of one graph."""
    try:
        st = os.stat(path)
    except OSError:
        return read_hlo_proto(path)  # says why, in one line
    return _read_once(path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=16)
def _read_once(path: str, _mtime: int, _size: int) -> ProtoModule:
    return read_hlo_proto(path)


def proto_beside(text_path: str) -> str | None:
    """The ``.hlo.pb`` XLA wrote for the same module and stage as a ``.txt`` dump file, if any."""
    if not text_path.endswith(".txt"):
        return None
    candidate = text_path[:-len(".txt")] + ".hlo.pb"
    return candidate if os.path.isfile(candidate) else None


def stacks_for(proto_path: str, warnings: list[InputWarning] | None) -> dict[str, tuple[SourceFrame, ...]]:
    """The stacks of a proto beside a text module; a proto that cannot be read is a warning (the text still
    stands on its own)."""
    try:
        return read_cached(proto_path).stacks
    except HlodiffError as err:
        if warnings is not None:
            warnings.append(InputWarning(f"{err.message}; skipped: the text beside it is the graph, without the "
                                         "proto's stacks", path=proto_path))
        return {}


# -- decoding -----------------------------------------------------------------------------------------------------

def _decode(data: bytes, path: str):
    from google.protobuf.message import DecodeError  # here: a comparison of two text files never decodes a proto

    from hlodiff.dumps import hlo_messages as hm

    for container in CONTAINERS:
        cls = getattr(hm, container)
        try:
            message = cls.FromString(data)
        except (DecodeError, ValueError, RuntimeError):
            continue
        module = {"HloProto": lambda m: m.hlo_module, "HloSnapshot": lambda m: m.hlo.hlo_module,
                  "HloModuleProto": lambda m: m}[container](message)
        if _well_formed(module):
            return container, module
    raise HlodiffError("not an HLO proto (HloModuleProto, HloProto or HloSnapshot)", path=path)


def _well_formed(module) -> bool:
    """A real module has a name, computations of named instructions with opcodes, and an entry among them."""
    if not module.name or not module.computations:
        return False
    names = {c.name for c in module.computations}
    ids = {c.id for c in module.computations}
    if module.entry_computation_name not in names and module.entry_computation_id not in ids:
        return False
    return all(c.name and c.instructions and all(i.name and i.opcode for i in c.instructions)
               for c in module.computations)


def _stacks(module, path: str) -> dict[str, tuple[SourceFrame, ...]]:
    index = module.stack_frame_index
    cache: dict[int, tuple[SourceFrame, ...]] = {}
    stacks: dict[str, tuple[SourceFrame, ...]] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            frame_id = inst.metadata.stack_frame_id
            if frame_id:
                stack = cache.get(frame_id)
                if stack is None:
                    stack = cache[frame_id] = resolve(index, frame_id)
                if stack:
                    stacks[inst.name] = stack
    return stacks


def resolve(index, frame_id: int) -> tuple[SourceFrame, ...]:
    """The chain from ``frame_id`` through its parents, innermost first; ids are 1-based, 0 ends the chain. A
    dangling id or a cycle ends it too (what was resolved so far is kept)."""
    chain: list[SourceFrame] = []
    seen: set[int] = set()
    frames, locations = index.stack_frames, index.file_locations
    while 0 < frame_id <= len(frames) and frame_id not in seen:
        seen.add(frame_id)
        frame = frames[frame_id - 1]
        if 0 < frame.file_location_id <= len(locations):
            loc = locations[frame.file_location_id - 1]
            chain.append(SourceFrame(_at(index.file_names, loc.file_name_id) or "<unknown>", loc.line or None,
                                     _at(index.function_names, loc.function_name_id)))
        frame_id = frame.parent_frame_id
    return tuple(chain)


def _at(values, one_based: int) -> str | None:
    return values[one_based - 1] if 0 < one_based <= len(values) else None


def _aliases(module) -> tuple[AliasEntry, ...]:
    kinds = {0: "undefined", 1: "may-alias", 2: "must-alias"}
    return tuple(AliasEntry(tuple(e.output_shape_index), e.parameter_number, tuple(e.parameter_shape_index),
                            kinds.get(e.kind, str(e.kind)))
                 for e in module.input_output_alias.entries)


def _donors(module) -> tuple[tuple[int, tuple[int, ...]], ...]:
    return tuple((e.parameter_number, tuple(e.parameter_shape_index)) for e in module.buffer_donor.entries)


# -- constants' values ----------------------------------------------------------------------------------------------

def values_for(proto_path: str, warnings: list[InputWarning] | None) -> dict[str, tuple]:
    """The constants' values of a proto beside a text module (see :attr:`ProtoModule.constants`); a proto that
    cannot be read is a warning, as in :func:`stacks_for` (only one of the two readers warns)."""
    try:
        return read_cached(proto_path).constants
    except HlodiffError:
        return {}


def fill_elided(module: Module, values: dict[str, tuple]) -> int:
    """Write the proto's values into the text module's elided constants (``constant({...})``), as the text would
    print them in full; returns how many were filled. A constant whose value count does not fit its shape is left
    elided (another module's proto): the graph then says its values are hidden rather than show wrong ones."""
    filled = 0
    if not values:
        return 0
    for _, inst in module.instructions():
        if inst.opcode != "constant" or not inst.literal or "..." not in inst.literal:
            continue
        found = values.get(inst.name)
        dims = inst.shape.dims
        if found is None or inst.shape.tuple_shapes or any(inst.shape.dynamic or ()):
            continue
        count = 1
        for d in dims:
            count *= d
        if count != len(found) or count > _MAX_FILLED:
            continue
        inst.literal = _nested(found, tuple(dims))
        filled += 1
    return filled


_MAX_FILLED = 1 << 20
"""Largest constant whose values are written out (a million elements: a few MB of text)."""

_PACKED = {"u8s": "B", "s8s": "b", "u16s": "H", "s16s": "h", "f16s": "e"}


def _constants(module) -> dict[str, tuple]:
    found: dict[str, tuple] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode == "constant" and inst.HasField("literal"):
                values = _literal_values(inst.literal)
                if values is not None and len(values) > 1:
                    found[inst.name] = values
    return found


def _literal_values(lit) -> tuple | None:
    """The one array field a literal fills, as Python values; None for tuples and types not declared (f8, s4)."""
    if lit.tuple_literals:
        return None
    for name in ("preds", "s32s", "s64s", "u32s", "u64s", "f32s", "f64s"):
        values = getattr(lit, name)
        if values:
            return tuple(bool(v) for v in values) if name == "preds" else tuple(values)
    for name in ("c64s", "c128s"):
        values = getattr(lit, name)
        if values:
            return tuple(complex(a, b) for a, b in zip(values[::2], values[1::2]))
    for name, code in _PACKED.items():
        raw = getattr(lit, name)
        if raw:
            size = struct.calcsize(code)
            return struct.unpack(f"<{len(raw) // size}{code}", raw[:len(raw) - len(raw) % size])
    raw = lit.bf16s
    if raw:  # the high half of an f32
        return tuple(struct.unpack("<f", b"\0\0" + raw[i:i + 2])[0] for i in range(0, len(raw) - 1, 2))
    return None


def _nested(values: tuple, dims: tuple[int, ...]) -> str:
    """``{{1,2},{3,4}}`` for dims (2, 2), in the literal text's notation (row-major)."""
    if not dims:
        return value_text(values[0])
    if len(dims) == 1:
        return "{" + ",".join(value_text(v) for v in values) + "}"
    step = len(values) // dims[0] if dims[0] else 0
    return "{" + ",".join(_nested(values[k * step:(k + 1) * step], dims[1:]) for k in range(dims[0])) + "}"
