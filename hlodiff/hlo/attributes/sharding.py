"""Device assignments and ``sharding={...}``: iota forms expanded to explicit device ids, so two spellings of one
assignment compare equal."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import prod

from hlodiff.hlo.attributes.cursor import Cursor
from hlodiff.hlo.attributes.metadata import Metadata, metadata_list_at
from hlodiff.hlo.attributes.scalars import INT_RE, MAX_DEVICES, fail, short


def iota_devices(reshape: tuple[int, ...] | list[int], perm: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Device ids of ``<=[reshape]T(perm)``: ``range(prod(reshape))`` reshaped, transposed by ``perm``, flattened."""
    if len(perm) != len(reshape) or sorted(perm) != list(range(len(reshape))):
        raise fail("iota", f"T{tuple(perm)} is not a permutation of {len(reshape)} dimensions")
    if any(d < 0 for d in reshape):
        raise fail("iota", "negative dimension")
    if prod(reshape) > MAX_DEVICES:
        raise fail("iota", f"more than {MAX_DEVICES} devices")
    strides = [prod(reshape[i + 1:]) for i in range(len(reshape))]
    out = [0]
    for p in perm:
        step = strides[p]
        out = [base + i * step for base in out for i in range(reshape[p])]
    return tuple(out)


def iota_at(cur: Cursor) -> tuple[int, ...]:
    """``[reshape]`` optionally followed by ``T(perm)``; the ``<=`` is already consumed."""
    reshape = cur.ints("[", "]")
    if not reshape:
        raise cur.error("empty iota reshape dimensions")
    perm = list(range(len(reshape)))
    if cur.peek() == "T":
        cur.next()
        perm = cur.ints("(", ")")
    return iota_devices(reshape, perm)


def _tile_assignment_at(cur: Cursor) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``[dims]`` then explicit ids ``0,1,2,3`` or an iota ``<=[..]T(..)``; returns (dims, expanded ids)."""
    dims = tuple(cur.ints("[", "]"))
    if not dims or any(d < 0 for d in dims):
        raise cur.error("expected non-empty, non-negative tile dimensions")
    if prod(dims) > MAX_DEVICES:
        raise cur.error(f"more than {MAX_DEVICES} tiles")
    if cur.eat("<="):
        devices = iota_at(cur)
    else:
        ids = [cur.int()]
        while cur.peek() == "," and INT_RE.fullmatch(cur.peek(1)):
            cur.next()
            ids.append(cur.int())
        devices = tuple(ids)
    if len(devices) != prod(dims):
        raise cur.error(f"{len(devices)} devices do not fill tile dimensions {list(dims)}")
    return dims, devices


# -- sharding -------------------------------------------------------------------------------------------------

_SHARDING_FLAGS = frozenset({"replicated", "manual", "maximal", "unknown", "unreduced"})
_SUBGROUP_TYPES = frozenset({"replicated", "manual", "maximal", "unreduced"})


@dataclass(frozen=True, slots=True)
class Sharding:
    """An ``HloSharding``: how an array is split (or not) over devices.

    ``kind`` is ``replicated``, ``manual``, ``maximal`` (one device, in ``devices``), ``unknown``, ``unreduced``,
    ``tiled`` (``tile_shape`` tiles over the explicit ``devices``; trailing tile dimensions are subgroups whose
    types are ``last_tile_dims``, ``last_tile_dim_replicate`` being ``("replicated",)``), ``tuple`` (one sharding
    per leaf in ``elements``) or ``named`` (a newer mesh sharding, kept as canonical token text in ``named``).
    ``shard_group`` is ``("as", n)`` or ``("like", n)``. ``metadata`` and ``text`` are provenance only.
    """

    kind: str
    tile_shape: tuple[int, ...] = ()
    devices: tuple[int, ...] = ()
    last_tile_dims: tuple[str, ...] = ()
    shard_group: tuple[str, int] | None = None
    elements: tuple["Sharding", ...] = ()
    named: str = ""
    metadata: tuple[Metadata, ...] = field(default=(), compare=False)
    text: str = field(default="", compare=False)

    @property
    def is_tuple(self) -> bool:
        return self.kind == "tuple"

    def __str__(self) -> str:
        """Canonical text: explicit device ids (never the iota form), no metadata."""
        if self.kind == "tuple":
            return "{" + ", ".join(str(e) for e in self.elements) + "}"
        if self.kind == "named":
            return self.named
        if self.kind == "maximal":
            body = f"maximal device={self.devices[0]}"
        elif self.kind == "tiled":
            body = "devices=[" + ",".join(map(str, self.tile_shape)) + "]" + ",".join(map(str, self.devices))
            if self.last_tile_dims == ("replicated",):
                body += " last_tile_dim_replicate"
            elif self.last_tile_dims:
                body += " last_tile_dims={" + ", ".join(self.last_tile_dims) + "}"
        else:
            body = self.kind
        if self.shard_group:
            body += f" shard_{self.shard_group[0]} {self.shard_group[1]}"
        return "{" + body + "}"


def parse_sharding(raw: str) -> Sharding:
    """Parse ``sharding={...}``: single forms, tuple shardings ``{{...}, {...}}`` and ``{}`` (empty tuple)."""
    cur = Cursor(raw, "sharding")
    cur.expect("{")
    if cur.peek() in ("{", "}"):
        elements: list[Sharding] = []
        if cur.peek() == "{":
            cur.next()
            elements.append(_single_sharding(cur))
            while cur.eat(","):
                cur.expect("{")
                elements.append(_single_sharding(cur))
        cur.expect("}")
        cur.end()
        return Sharding("tuple", elements=tuple(elements), text=raw.strip())
    sharding = _single_sharding(cur)
    cur.end()
    return replace(sharding, text=raw.strip())


def _single_sharding(cur: Cursor) -> Sharding:
    """The body of one ``{...}`` sharding after its ``{``, through its ``}``."""
    if cur.peek() in ("mesh", "maximal_mesh"):
        return _named_sharding(cur)
    flags: set[str] = set()
    device: int | None = None
    tiles: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    subgroups: tuple[str, ...] = ()
    group: tuple[str, int] | None = None
    metadata: tuple[Metadata, ...] = ()
    while not cur.eat("}"):
        tok = cur.next()
        if tok in _SHARDING_FLAGS:
            flags.add(tok)
        elif tok == "last_tile_dim_replicate":
            subgroups = ("replicated",)
        elif tok in ("shard_as", "shard_like"):
            group = (tok[6:], cur.int())
        elif tok in ("device", "devices", "metadata", "last_tile_dims"):
            cur.expect("=")
            if tok == "device":
                device = cur.int()
            elif tok == "devices":
                tiles = _tile_assignment_at(cur)
            elif tok == "metadata":
                metadata = metadata_list_at(cur)
            else:
                subgroups = _subgroup_types_at(cur)
        else:
            raise cur.error(f"unexpected {short(tok)}")
    return _build_sharding(cur, flags, device, tiles, subgroups, group, metadata)


def _subgroup_types_at(cur: Cursor) -> tuple[str, ...]:
    cur.expect("{")
    types: list[str] = []
    while not cur.eat("}"):
        if types:
            cur.expect(",")
        tok = cur.next()
        if tok not in _SUBGROUP_TYPES:
            raise cur.error(f"unknown subgroup type {short(tok)}")
        types.append(tok)
    return tuple(types)


def _build_sharding(cur: Cursor, flags: set[str], device: int | None,
                    tiles: tuple[tuple[int, ...], tuple[int, ...]] | None, subgroups: tuple[str, ...],
                    group: tuple[str, int] | None, metadata: tuple[Metadata, ...]) -> Sharding:
    """Check the combination the way XLA does and build the value."""
    if len(flags) > 1:
        raise cur.error(f"conflicting kinds {sorted(flags)}")
    kind = next(iter(flags)) if flags else "tiled"
    if kind == "maximal":
        if device is None or tiles is not None:
            raise cur.error("maximal shardings need exactly one device=")
        return Sharding("maximal", devices=(device,), shard_group=group, metadata=metadata)
    if kind != "tiled":
        if device is not None or tiles is not None:
            raise cur.error(f"{kind} shardings take no devices")
        return Sharding(kind, shard_group=group, metadata=metadata)
    if tiles is None or device is not None:
        raise cur.error("expected devices=[...] (or replicated, manual, maximal, unknown)")
    dims, devices = tiles
    if len(subgroups) > len(dims):
        raise cur.error(f"{len(subgroups)} subgroup dimensions but only {len(dims)} tile dimensions")
    if len(subgroups) == len(dims) and len(set(subgroups)) == 1 and subgroups[0] in ("replicated", "manual"):
        # Every tile dimension is a subgroup of one type: XLA reads this as plain replicated (or manual).
        return Sharding(subgroups[0], shard_group=group, metadata=metadata)
    return Sharding("tiled", dims, devices, subgroups, group, metadata=metadata)


def _named_sharding(cur: Cursor) -> Sharding:
    """``{mesh[x=2,y=4], [{x}, {}], replicated={y}}`` and ``{maximal_mesh[device_id=0]}``: kept as tokens.

    These newer mesh shardings are rare in dumps; hlodiff only needs to tell two of them apart, so their
    whitespace-free token text is the value (checked for balanced brackets, not interpreted).
    """
    start = cur.pos - 1  # the '{' already consumed
    depth = 1
    metadata: tuple[Metadata, ...] = ()
    while depth:
        if cur.peek() == "metadata" and cur.peek(1) == "=" and depth == 1:
            cur.pos += 2
            metadata = metadata_list_at(cur)
            continue
        tok = cur.next()
        depth += tok in ("{", "[", "(")
        depth -= tok in ("}", "]", ")")
    return Sharding("named", named=_join_tokens(cur.toks[start:cur.pos]), metadata=metadata)


def _join_tokens(tokens: list[str]) -> str:
    out = ""
    for tok in tokens:
        if out and out[-1] not in "{[(,=" and tok not in "}]),=":
            out += " "
        out += tok
    return out
