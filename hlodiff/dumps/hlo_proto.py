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
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError

from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.hlo.model import SourceFrame

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


def read_hlo_proto(path: str) -> ProtoModule:
    """Decode an HLO proto file; HlodiffError (one line) when it is not one, or when it is bigger than
    ``HLODIFF_MAX_PROTO_BYTES`` (checked before reading: it is decoded whole)."""
    from hlodiff.dumps._io import LIMIT_VARIABLES, Limits, limit_error

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
                       sum(len(c.instructions) for c in module.computations))


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
        return read_hlo_proto(proto_path).stacks
    except HlodiffError as err:
        if warnings is not None:
            warnings.append(InputWarning(f"{err.message}; skipped: the text beside it is the graph, without the "
                                         "proto's stacks", path=proto_path))
        return {}


# -- decoding -----------------------------------------------------------------------------------------------------

def _decode(data: bytes, path: str):
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
