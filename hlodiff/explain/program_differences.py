"""What differs between run A's program and run B's as the two programs show it: the device count a program was
built for, which parameters changed shape (and whether they are state the step returns), element types a setting
switches (64-bit, 16-bit floats), a lowering a JAX setting chooses, the user lines in the metadata, the PRNG key's
implementation, the matmul precision under one key, donation. Each is a :class:`hlodiff.explain.run_differences.
KeyDifference` (donation: a cause); :mod:`hlodiff.explain.across_runs` turns them into verdicts.
"""

from __future__ import annotations

import posixpath
import re

from hlodiff.diff.model import Cause
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.hlo.attributes import parse_metadata


DEVICE_COUNT_ATTRIBUTES = ("num_partitions", "replica_count")
"""Module-header attributes that count the devices a program was built for (SPMD partitions, replicas): another
value in run B is another machine's program, whatever sharding difference the graph diff then shows."""


def parameter_shape_differences(a: GraphRecord | None,
                                b: GraphRecord | None) -> tuple[list[KeyDifference], bool]:
    """The entry parameters whose shapes differ between A's program and B's (by parameter number), and whether
    every one of them is state the step returns updated (each shape is among its program's outputs, in A and in B:
    a model's weights, optimizer state), i.e. another model rather than another batch."""
    if a is None or b is None:
        return [], False
    sides = [_entry_shapes(r) for r in (a, b)]
    found = [KeyDifference("parameter", name, old, sides[1][0][n][1])
             for n, (name, old) in sorted(sides[0][0].items())
             if n in sides[1][0] and sides[1][0][n][1] != old]
    state = bool(found) and all(d.a in sides[0][1] and d.b in sides[1][1] for d in found)
    return found, state


_ARRAY_RE = re.compile(r"^(\w+)\[([\d,]*)\]$")


def length_dimension(differences: list[KeyDifference]) -> int | None:
    """The one dimension every differing input changes in, when each keeps its element type, rank and dimension 0
    and they all go between the same two sizes there (``s32[8,122]`` / ``f32[8,122]`` -> ``s32[8,115]`` /
    ``f32[8,115]``: dimension 1); None otherwise (dimension 0, several dimensions, another rank or type). Whether it
    is a length or a time-major batch is :func:`leading_dim_shared`'s evidence."""
    found: set[tuple[int, str, str]] = set()
    for d in differences:
        a, b = _ARRAY_RE.match(d.a or ""), _ARRAY_RE.match(d.b or "")
        if a is None or b is None or a.group(1) != b.group(1):
            return None
        dims_a, dims_b = a.group(2).split(","), b.group(2).split(",")
        changed = [k for k, (x, y) in enumerate(zip(dims_a, dims_b)) if x != y]
        if len(dims_a) != len(dims_b) or len(dims_a) < 2 or len(changed) != 1 or changed[0] == 0:
            return None
        found.add((changed[0], dims_a[changed[0]], dims_b[changed[0]]))
    return next(iter(found))[0] if len(found) == 1 else None


def leading_dim_shared(differences: list[KeyDifference], a: GraphRecord | None) -> bool:
    """Another input of A's program, one that kept its shape and is not state the step returns, starts with the
    differing inputs' dimension 0 (runs10_pad_longest: y f32[8,4] beside tokens s32[8,122] -> s32[8,115]): that
    dimension is the batch they share, so the one that changed is a length. Without it the changed dimension may
    as well be the batch of a time-major [T, B] input (the last read of the twelfth stop: s32[35,8] -> s32[35,16]
    with the batch size from argv)."""
    if a is None or not differences:
        return False
    leads = {m.group(2).split(",")[0] for d in differences if (m := _ARRAY_RE.match(d.a or ""))}
    if len(leads) != 1:
        return False
    lead = leads.pop()
    params, outputs = _entry_shapes(a)
    changed = {d.name for d in differences}
    for name, shape in params.values():
        m = _ARRAY_RE.match(shape)
        if name in changed or m is None or not m.group(2) or shape in outputs:
            continue
        if m.group(2).split(",")[0] == lead:
            return True
    return False


def _entry_shapes(rec: GraphRecord) -> tuple[dict[int, tuple[str, str]], set[str]]:
    """``({parameter number: (name, shape)}, {output shapes})`` of a program's entry, shapes without layout."""
    entry = next((c for c in rec.module().computations if c.is_entry), None)
    if entry is None:
        return {}, set()
    params = {i.parameter_number: (i.name, str(i.shape.without_layout())) for i in entry.instructions
              if i.opcode == "parameter" and i.parameter_number is not None}
    outputs = {str(leaf.without_layout()) for leaf in entry.root.shape.leaves()}
    return params, outputs


WIDE_TYPES = {"s64": "s32", "u64": "u32", "f64": "f32", "c128": "c64"}
"""64-bit element types and their 32-bit counterparts: what ``jax_enable_x64`` switches JAX's defaults between
(integer indices, Python floats), so a program that gains only these between two runs of one script was traced with
x64 on in one run and off in the other."""


def wide_type_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """The 64-bit element types (:data:`WIDE_TYPES`) only one of the two programs uses, when every element type
    the programs do not share is one of them or its 32-bit counterpart, and one side only has wide types of its
    own: ``[KeyDifference("element_types", "64-bit types", A's, B's)]`` (None on the other side), else empty."""
    return widened_types(a, b, WIDE_TYPES, "64-bit types")


def widened_types(a: GraphRecord | None, b: GraphRecord | None, table: dict[str, str], name: str, *,
                  narrow_side_pure: bool = False) -> list[KeyDifference]:
    """The wide element types of ``table`` (wide -> its narrow counterpart) only one program uses, when every
    element type the two do not share is one of them or its counterpart, and one side only has wide types of its
    own: ``[KeyDifference("element_types", name, A's, B's)]``, else empty. ``narrow_side_pure``: the other side
    has none of the wide types at all (a switch that lowers every one of them, as ``XLA_USE_32BIT_LONG`` does)."""
    if a is None or b is None:
        return []
    types = [element_types(r) for r in (a, b)]
    only = [types[0] - types[1], types[1] - types[0]]
    wide = [o & set(table) for o in only]
    if not (only[0] | only[1]) <= set(table) | set(table.values()) or bool(wide[0]) == bool(wide[1]):
        return []  # another type than the switch's differs, or wide types of its own on both sides (or neither)
    if narrow_side_pure and any(t in types[i] for i in (0, 1) if not wide[i] for t in table):
        return []  # the side without the switch still has wide types of its own: not a global lowering
    return [KeyDifference("element_types", name, ", ".join(sorted(wide[0])) or None,
                          ", ".join(sorted(wide[1])) or None)]


LOW_PRECISION_TYPES = ("bf16", "f16")
"""16-bit floating types: what mixed precision (``torch.autocast``, a model cast to bf16, a dtype setting) brings
into a program that otherwise computes in f32."""


def low_precision_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """The 16-bit float types (:data:`LOW_PRECISION_TYPES`) only one of the two programs uses, when they are all
    the element types the programs do not share: ``[KeyDifference("element_types", "16-bit floats", A's, B's)]``
    (None on the other side), else empty."""
    if a is None or b is None:
        return []
    types = [element_types(r) for r in (a, b)]
    only = [types[0] - types[1], types[1] - types[0]]
    if bool(only[0]) == bool(only[1]) or not (only[0] | only[1]) <= set(LOW_PRECISION_TYPES):
        return []  # both sides have types of their own, or another type differs
    return [KeyDifference("element_types", "16-bit floats", ", ".join(sorted(only[0])) or None,
                          ", ".join(sorted(only[1])) or None)]


def same_argument_types(a: GraphRecord | None, b: GraphRecord | None) -> bool:
    """Both programs take arguments of the same types and shapes, in order (their entry computations' parameters):
    what "with the same argument types" claims; False when either program cannot be read."""
    if a is None or b is None:
        return False
    kinds = []
    for rec in (a, b):
        entry = next((c for c in rec.module().computations if c.is_entry), None)
        if entry is None:
            return False
        params = sorted((i for i in entry.instructions if i.opcode == "parameter"),
                        key=lambda i: i.parameter_number if i.parameter_number is not None else -1)
        kinds.append([str(i.shape).partition("{")[0] for i in params])
    return kinds[0] == kinds[1]


def element_types(rec: GraphRecord) -> set[str]:
    return {leaf.element_type for c in rec.module().computations for i in c.instructions
            for leaf in i.shape.leaves()}


def device_count_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """The module-header device counts (:data:`DEVICE_COUNT_ATTRIBUTES`) that differ between A's and B's program
    (an attribute left out is 1, XLA's default)."""
    if a is None or b is None:
        return []
    heads = [_header_attributes(r) for r in (a, b)]
    return [KeyDifference("module", name, heads[0].get(name, "1"), heads[1].get(name, "1"))
            for name in DEVICE_COUNT_ATTRIBUTES if heads[0].get(name, "1") != heads[1].get(name, "1")]


def _header_attributes(rec: GraphRecord) -> dict[str, str]:
    """``name=<int>`` attributes of the ``HloModule`` line of a dumped program."""
    for line in rec.text().splitlines():
        if line.startswith("HloModule "):
            return dict(re.findall(r"\b(\w+)=(\d+)\b", line))
    return {}


LOWERING_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("threefry2x32", "iota_2x32_shape", "jax_threefry_partitionable"),
)
"""``(computation, op_name, setting)``: a JAX setting that changes how a library function is lowered, seen in the
program as a computation of that name which, when the setting is on, comes with instructions of that op_name.
``jax_threefry_partitionable`` on draws random bits from a counter shaped as the output (``iota_2x32_shape``), off
from one flat counter (observed with JAX 0.10.2 in `_threefry_split` and a jitted `bernoulli`); its default changed
in JAX 0.5.0, so an upgrade or a setting pinned on one host makes every random draw another program."""


def lowering_setting_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """The settings of :data:`LOWERING_SETTINGS` whose lowering both programs use, on in one and off in the other:
    ``KeyDifference("lowering", setting, "on"/"off", "on"/"off")``."""
    if a is None or b is None:
        return []
    found = []
    for computation, op_name, setting in LOWERING_SETTINGS:
        sides = [_lowering(r, computation, op_name) for r in (a, b)]
        if None not in sides and sides[0] != sides[1]:
            found.append(KeyDifference("lowering", setting, "on" if sides[0] else "off", "on" if sides[1] else "off"))
    return found


def _lowering(rec: GraphRecord, computation: str, op_name: str) -> bool | None:
    """None when the program has no computation named ``computation`` (or ``computation.N``); else whether an
    instruction carries ``op_name`` (the last part of its path: ``jit(_threefry_split)/iota_2x32_shape``)."""
    module = rec.module()
    if not any(c.name.lstrip("%").split(".")[0] == computation for c in module.computations):
        return None
    return any("metadata" in i.attrs and (parse_metadata(i.attrs["metadata"]).op_name or "").rsplit("/", 1)[-1]
               == op_name for c in module.computations for i in c.instructions)


def source_line_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """The first user line the two programs' instructions name differently (their metadata's stacks, instruction
    by instruction): ``[KeyDifference("metadata", "source line", "file.py:8", "file.py:12")]``, else empty. JAX
    hashes a program without its debug info unless ``jax_compilation_cache_include_metadata_in_key`` is on, so
    the same program whose lines moved is another key only with that setting (observed with JAX 0.10.2)."""
    if a is None or b is None:
        return []
    sides = [_user_lines(r) for r in (a, b)]
    if len(sides[0]) != len(sides[1]):
        return []  # not one program instruction by instruction: the graph diff says more than the lines
    for left, right in zip(*sides):
        if left != right and left is not None and right is not None:
            return [KeyDifference("metadata", "source line", left, right)]
    return []


def _user_lines(rec: GraphRecord) -> list[str | None]:
    from hlodiff.graph import canonicalize
    from hlodiff.hlo.model import user_frame

    module = rec.module()
    canonical = canonicalize(module)
    out = []
    for c in module.computations:
        for inst in c.instructions:
            frame = user_frame(canonical.frames(inst))
            out.append(None if frame is None else f"{posixpath.basename(frame.file)}:{frame.line}")
    return out


PRNG_KEY_SHAPES: dict[str, str] = {
    "u32[2]": "threefry2x32",
    "u32[4]": "rbg",
    "u32[2,2]": "rbg",
}
"""A raw PRNG key's shape -> the ``jax_default_prng_impl`` that makes keys of it (observed with JAX 0.10.2:
``jax.random.PRNGKey(0)`` is ``u32[2]`` under threefry2x32 and ``u32[4]`` under rbg / unsafe_rbg, which
``fold_in`` and ``split`` take as ``u32[2,2]``). Read only where a program draws random bits
(:data:`RANDOM_BITS`)."""

RANDOM_BITS = ("threefry2x32", "rng-bit-generator")
"""How a JAX program draws random bits: a call of the ``threefry2x32`` computation, or XLA's ``rng-bit-generator``
(rbg, unsafe_rbg)."""


def prng_impl_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("lowering", "jax_default_prng_impl", A's, B's)]`` when every parameter whose shape differs
    between two programs that draw random bits is a raw key of another implementation (:data:`PRNG_KEY_SHAPES`):
    the setting, not the user's data, changed the key's shape. Else empty."""
    if a is None or b is None or not any(_draws_random_bits(r) for r in (a, b)):
        return []
    found, _ = parameter_shape_differences(a, b)
    impls = {(PRNG_KEY_SHAPES.get(d.a or ""), PRNG_KEY_SHAPES.get(d.b or "")) for d in found}
    if len(impls) != 1:
        return []
    left, right = impls.pop()
    if left is None or right is None or left == right:
        return []
    return [KeyDifference("lowering", "jax_default_prng_impl", left, right)]


def _draws_random_bits(rec: GraphRecord) -> bool:
    module = rec.module()
    return any(c.name.lstrip("%").split(".")[0] == RANDOM_BITS[0] for c in module.computations) or any(
        i.opcode == RANDOM_BITS[1] for c in module.computations for i in c.instructions)


SAME_KEY_PROGRAM = "same_key_program"
"""``KeyDifference.source`` of what differs between two programs filed under one key (torch_xla's graph hash): a
program the key does not cover, so an entry loaded under it would be run A's program, not run B's."""

PRECISION_ATTRIBUTE = "operand_precision"
"""The dot/convolution attribute a matmul precision setting writes (``torch_xla.backends.set_mat_mul_precision``,
``jax_default_matmul_precision``); absent is XLA's default."""


def precision_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference(SAME_KEY_PROGRAM, "operand_precision", A's values, B's values)]`` when the two programs'
    dots and convolutions carry other precisions ("default" where the attribute is left out), else empty."""
    if a is None or b is None:
        return []
    sides = [_precisions(r) for r in (a, b)]
    if sides[0] == sides[1]:
        return []
    return [KeyDifference(SAME_KEY_PROGRAM, PRECISION_ATTRIBUTE, ", ".join(sorted(sides[0])),
                          ", ".join(sorted(sides[1])))]


def _precisions(rec: GraphRecord) -> set[str]:
    return {i.attrs.get(PRECISION_ATTRIBUTE, "default").strip("{}") for c in rec.module().computations
            for i in c.instructions if i.opcode in ("dot", "convolution")}


def donation_difference(a: GraphRecord | None, b: GraphRecord | None) -> Cause | None:
    """The ``aliasing`` cause of two programs whose graphs are the same but whose module headers donate other
    buffers (``input_output_alias`` / ``buffer_donor``: ``donate_argnums`` in JAX). The normalized graph leaves the
    header out, yet donation is lowered into the program JAX hashes, so it is another program and another key."""
    if a is None or b is None:
        return None
    from hlodiff.diff.header import header_causes

    causes = header_causes(a.module(), b.module(), same_computation=True)
    return next((c for c in causes if c.kind == "aliasing"), None)
