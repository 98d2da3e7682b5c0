"""The HLO module model: what a dump says, kept faithfully.

Attribute values are stored as the exact text that followed ``key=`` (so nothing is ever dropped, and printing
reproduces them); typed views of the attributes that hlodiff reasons about live in :mod:`hlodiff.hlo.attributes`
and are computed on demand. Shapes are parsed eagerly, interned, and immutable, because every later layer compares
them. Source positions (``line``) never take part in equality: a module printed and parsed again is equal to itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from hlodiff.hlo.installed import is_library_path

# Bits per element for every primitive type the HLO text format knows. ``token`` and ``opaque`` have no size.
ELEMENT_BITS: dict[str, int] = {
    "pred": 8, "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128,
    "f8e4m3fn": 8, "f8e5m2": 8, "f8e4m3fnuz": 8, "f8e5m2fnuz": 8, "f8e4m3b11fnuz": 8, "f8e3m4": 8,
    "f8e4m3": 8, "f8e8m0fnu": 8, "f4e2m1fn": 4, "f6e2m3fn": 6, "f6e3m2fn": 6, "token": 0, "opaque": 0,
}

UNBOUNDED = -1
"""Dimension size stored for ``?`` (an unbounded dynamic dimension)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A layout: ``{1,0:T(8,128)(2,1)E(4)S(1)}``.

    ``minor_to_major`` is the list before ``:``; the items after it are split into the ones hlodiff reads
    (tiles, element size, memory space) and the rest, kept verbatim in ``extra`` in their original order.
    """

    minor_to_major: tuple[int, ...]
    tiles: tuple[tuple[str, ...], ...] = ()
    element_size_bits: int | None = None
    memory_space: int | None = None
    extra: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = ",".join(map(str, self.minor_to_major))
        items = ""
        if self.tiles:
            items += "T" + "".join("(" + ",".join(tile) + ")" for tile in self.tiles)
        if self.element_size_bits is not None:
            items += f"E({self.element_size_bits})"
        if self.memory_space is not None:
            items += f"S({self.memory_space})"
        items += "".join(self.extra)
        return "{" + text + (":" + items if items else "") + "}"


@dataclass(frozen=True, slots=True)
class Shape:
    """An array shape (``f32[2,<=8]{1,0}``), a tuple shape (``(f32[], s32[2])``), ``token[]`` or ``opaque[]``.

    ``dims`` holds sizes (the bound for ``<=N`` dims, :data:`UNBOUNDED` for ``?``); ``dynamic`` marks which
    dimensions are dynamic. ``tuple_shapes`` is set only when ``element_type == "tuple"``, or holds the one
    buffered array of a buffer shape ``b(f32[2])`` (``element_type == "buffer"``, XLA's custom-call buffers).
    """

    element_type: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple["Shape", ...] = ()

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def rank(self) -> int:
        return len(self.dims)

    def num_elements(self) -> int:
        """Elements of an array shape (bounded dims count at their bound, unbounded as 0)."""
        n = 1
        for d in self.dims:
            n *= max(d, 0)
        return n

    def byte_size(self) -> int:
        """Bytes occupied, summed over tuple leaves; sub-byte types are packed."""
        if self.tuple_shapes:
            return sum(s.byte_size() for s in self.tuple_shapes)
        bits = ELEMENT_BITS.get(self.element_type, 0)
        return (self.num_elements() * bits + 7) // 8

    def leaves(self) -> Iterator["Shape"]:
        """Array leaves in order (the shape itself when it is not a tuple)."""
        if self.is_tuple:
            for s in self.tuple_shapes:
                yield from s.leaves()
        else:
            yield self

    def without_layout(self) -> "Shape":
        if self.tuple_shapes:
            return Shape(self.element_type, tuple_shapes=tuple(s.without_layout() for s in self.tuple_shapes))
        if self.layout is None:
            return self
        return Shape(self.element_type, self.dims, self.dynamic)

    def dims_text(self) -> str:
        parts = []
        for d, dyn in zip(self.dims, self.dynamic):
            if d == UNBOUNDED:
                parts.append("?")
            else:
                parts.append(f"<={d}" if dyn else str(d))
        return "[" + ",".join(parts) + "]"

    def __str__(self) -> str:
        if self.is_tuple:
            return "(" + ", ".join(map(str, self.tuple_shapes)) + ")"
        if self.element_type == "buffer":
            return f"b({self.tuple_shapes[0]})"
        text = self.element_type + self.dims_text()
        if self.layout is not None:
            text += str(self.layout)
        return text


@dataclass(frozen=True, slots=True)
class SourceFrame:
    """One Python frame: where a user (or library) line produced part of a graph."""

    file: str
    line: int | None
    function: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{self.function} ({where})" if self.function else where

    @property
    def where(self) -> str:
        """``file:line`` (or just the file), the file spelled without ``..`` steps (``run/../train.py`` as Python
        recorded a script started as ``python ../train.py``) for reading; JSON keeps the path as recorded."""
        file = self.file
        if "/." in file:
            import posixpath

            file = posixpath.normpath(file)
        return file if self.line is None else f"{file}:{self.line}"

    def short(self) -> str:
        """``train.py:12``: the file's name and the line (the name alone without a line), for one-line summaries."""
        name = self.file.replace("\\", "/").rsplit("/", 1)[-1]
        return name if self.line is None else f"{name}:{self.line}"

    @property
    def is_library(self) -> bool:
        """A frame of installed code (torch, torch_xla, JAX, the stdlib, any installed package): secondary to the
        user's own code. Decided by where the file is installed (:mod:`hlodiff.hlo.installed`), so a project
        folder named ``jax`` holds user code."""
        return is_library_path(self.file)

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "function": self.function}


def user_frame(frames) -> "SourceFrame | None":
    """The innermost frame outside installed libraries, else ``None``."""
    for frame in frames:
        if not frame.is_library:
            return frame
    return None


def runs_after(later, earlier) -> bool:
    """Whether the code at stack ``later`` comes below the code at stack ``earlier`` in what runs both: in the
    outermost frame where the two stacks part (the same function, e.g. the training loop), ``later``'s line is the
    greater. Stacks innermost first; False when they share no frame or a line is unknown. A value read below the
    step's sync reads what the step computed (cost's reads in the step, explain's cut steps both ask this)."""
    for r, s in zip(reversed(later), reversed(earlier)):
        if (r.file, r.function) != (s.file, s.function) or r.line is None or s.line is None:
            return False
        if r.line != s.line:
            return r.line > s.line
    return False


@dataclass(frozen=True, slots=True)
class FileLocation:
    """An entry of the ``FileLocations`` table."""

    file_name_id: int
    function_name_id: int
    line: int
    end_line: int | None = None
    column: int | None = None
    end_column: int | None = None


@dataclass(slots=True)
class StackFrameTable:
    """The module-level ``FileNames``/``FunctionNames``/``FileLocations``/``StackFrames`` tables (newer JAX/XLA).

    Instructions refer to it with ``metadata={... stack_frame_id=N}``; :meth:`resolve` turns that id into the
    Python stack, innermost frame first.

    Parent ids: in the proto, ``parent_frame_id`` is the caller's 1-based id and 0 means none. XLA's text printer
    (JAX 0.10.2's jaxlib, checked against the ``.hlo.pb`` dumped beside the text) prints it *plus one*, so a root
    frame prints ``parent_frame_id=1`` and may look like its own parent; the parser stores ``printed - 1``.
    A printer that prints the proto value itself shows a root as ``parent_frame_id=0`` (stored as -1): when any
    frame says so, the whole table is read that way instead.
    """

    file_names: dict[int, str] = field(default_factory=dict)
    function_names: dict[int, str] = field(default_factory=dict)
    file_locations: dict[int, FileLocation] = field(default_factory=dict)
    frames: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (file_location_id, parent_frame_id)
    _parent_offset: int | None = field(default=None, repr=False, compare=False)

    def parent_offset(self) -> int:
        """What to add to a stored parent id to get the proto's (see the class docstring)."""
        if self._parent_offset is None:
            self._parent_offset = 1 if any(parent < 0 for _, parent in self.frames.values()) else 0
        return self._parent_offset

    def resolve(self, frame_id: int) -> list[SourceFrame]:
        """The chain of frames from ``frame_id`` up through its parents; ids are 1-based and 0 ends the chain."""
        chain: list[SourceFrame] = []
        seen: set[int] = set()
        offset = self.parent_offset()
        while frame_id and frame_id in self.frames and frame_id not in seen:
            seen.add(frame_id)
            loc_id, parent = self.frames[frame_id]
            parent += offset
            loc = self.file_locations.get(loc_id)
            if loc is not None:
                chain.append(SourceFrame(
                    self.file_names.get(loc.file_name_id, "<unknown>"),
                    loc.line,
                    self.function_names.get(loc.function_name_id),
                ))
            frame_id = parent
        return chain

    def __bool__(self) -> bool:
        return bool(self.file_names or self.function_names or self.file_locations or self.frames)


class _NoAttributes(dict):
    """The one empty ``attrs`` of every parsed instruction that has no attribute (most of them: 197K of the 258K
    instructions a side of an unrolled 300K-instruction step; an empty dict each was 12.6 MB a side, issue 34), and of
    every computation without attributes (the 13,600 small reductions a side of that step). Reads as an empty dict;
    changing it raises, since every such instruction and computation shares it: give the owner a dict of its own
    instead (``inst.attrs = {...}``). Pickled and copied as itself."""

    __slots__ = ()

    def _shared(self, *args, **kwargs):
        raise TypeError("this empty dict is shared (parsed instructions and computations without attributes): "
                        "assign a new dict instead")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _shared

    def __reduce__(self):
        return "NO_ATTRIBUTES"


NO_ATTRIBUTES: dict[str, str] = _NoAttributes()
"""The shared ``attrs`` of a parsed instruction or computation without attributes (see :class:`_NoAttributes`)."""


def _no_attributes() -> dict[str, str]:
    return NO_ATTRIBUTES


class SharedAttributes(dict):
    """The ``attrs`` of parsed instructions whose attributes are written alike (``dimensions={0}`` on 40,800
    broadcasts a side of an unrolled 300K-instruction step, and the other side's equal lines), one dict for all of
    them while the modules of a comparison are read (:mod:`hlodiff.hlo.sharing`): 180 bytes an instruction, 20 MB for
    the 300K pair (issue 34). Reads as a dict; changing it raises, since other instructions share it: give the
    instruction a dict of its own instead (``inst.attrs = {...}``). Pickled and copied as a plain dict."""

    __slots__ = ()

    def _shared(self, *args, **kwargs):
        raise TypeError("parsed instructions written alike share their attrs: assign a new dict instead")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _shared

    def __reduce__(self):
        return dict, (dict(self),)


@dataclass(slots=True, eq=True)
class Instruction:
    """``[ROOT] name = shape opcode(operands), key=value, ...``.

    ``operands`` are instruction names without ``%``. For ``constant`` the text between the parentheses is in
    ``literal`` and for ``parameter`` the number is in ``parameter_number``; neither has operands.
    ``attrs`` maps each attribute key to its value text exactly as written, in order.
    ``truncated_operands`` counts operands a printer elided with ``...(+N)``.
    """

    name: str
    shape: Shape
    opcode: str
    operands: tuple[str, ...] = ()
    attrs: dict[str, str] = field(default_factory=dict)
    is_root: bool = False
    literal: str | None = None
    parameter_number: int | None = None
    truncated_operands: int = 0
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)

    def attr(self, key: str, default: str | None = None) -> str | None:
        return self.attrs.get(key, default)

    def called_computation_names(self) -> list[str]:
        """Names of computations this instruction calls (to_apply, calls, body, condition, branches, ...)."""
        from hlodiff.hlo.attributes import called_computations

        return called_computations(self.attrs)


@dataclass(slots=True, eq=True)
class Computation:
    """A named list of instructions; ``signature`` is ``None`` when the text gave no ``(params) -> result``."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)
    is_entry: bool = False
    signature: tuple[tuple[tuple[str, Shape], ...], Shape] | None = None
    attrs: dict[str, str] = field(default_factory=_no_attributes)  # e.g. execution_thread="..."; shared when none
    line: int = field(default=0, compare=False)
    implicit: bool = False  # built by the parser (async shorthand's wrapped computation), not printed

    @property
    def root(self) -> Instruction:
        """The ROOT instruction, or the last one when none is marked."""
        for inst in self.instructions:
            if inst.is_root:
                return inst
        return self.instructions[-1]

    def by_name(self) -> dict[str, Instruction]:
        return {inst.name: inst for inst in self.instructions}

    def parameters(self) -> list[Instruction]:
        """Parameter instructions sorted by parameter number."""
        params = [i for i in self.instructions if i.opcode == "parameter"]
        params.sort(key=lambda i: i.parameter_number if i.parameter_number is not None else -1)
        return params


@dataclass(slots=True, eq=True)
class Module:
    """A parsed ``HloModule``. ``name`` is empty for bare computations with no header."""

    name: str
    computations: list[Computation] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)
    stack_frames: StackFrameTable = field(default_factory=StackFrameTable)
    path: str = field(default="<string>", compare=False)
    full_stacks: dict[str, tuple[SourceFrame, ...]] = field(default_factory=dict, compare=False)
    """Instruction name -> full Python stack (innermost first) from the HLO proto dumped beside the text, for
    dumps whose text keeps only the innermost frame (torch_xla)."""
    unknown_opcodes: list[str] = field(default_factory=list, compare=False)  # read as written; worth a warning
    bad_escape_line: int | None = field(default=None, compare=False)
    """Line of the first unknown escape in a quoted string (:mod:`hlodiff.hlo.escapes`); worth a warning."""

    @property
    def entry(self) -> Computation:
        """The ENTRY computation, or the last one when none is marked."""
        for comp in self.computations:
            if comp.is_entry:
                return comp
        return self.computations[-1]

    def computation(self, name: str) -> Computation:
        for comp in self.computations:
            if comp.name == name:
                return comp
        raise KeyError(name)

    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    def instructions(self) -> Iterator[tuple[Computation, Instruction]]:
        for comp in self.computations:
            for inst in comp.instructions:
                yield comp, inst
