"""``replica_groups`` and ``source_target_pairs`` of collectives."""

from __future__ import annotations

from math import prod

from hlodiff.hlo.attributes.cursor import Cursor
from hlodiff.hlo.attributes.scalars import MAX_DEVICES
from hlodiff.hlo.attributes.sharding import iota_at


def parse_replica_groups(raw: str) -> tuple[tuple[int, ...], ...]:
    """``{{0,1},{2,3}}``, ``{}`` (all devices in one group) or iota ``[2,4]<=[8]`` / ``[4,2]<=[2,4]T(1,0)``.

    The iota form ``[G,S]<=...`` is G groups of S devices taken row by row from the expanded device list, so it
    compares equal to the explicit list it abbreviates.
    """
    cur = Cursor(raw, "replica_groups")
    if cur.peek() == "[":
        shape = cur.ints("[", "]")
        if len(shape) != 2 or min(shape) < 0:
            raise cur.error("iota replica groups need [groups,group_size]")
        if prod(shape) > MAX_DEVICES:
            raise cur.error(f"more than {MAX_DEVICES} devices")
        cur.expect("<=")
        devices = iota_at(cur)
        cur.end()
        if len(devices) != prod(shape):
            raise cur.error(f"{len(devices)} devices do not fill {shape[0]} groups of {shape[1]}")
        size = shape[1]
        return tuple(devices[i * size:(i + 1) * size] for i in range(shape[0]))
    groups = cur.int_lists()
    cur.end()
    return tuple(tuple(g) for g in groups)


def parse_source_target_pairs(raw: str) -> tuple[tuple[int, int], ...]:
    """``source_target_pairs={{0,1},{1,2}}`` of collective-permute."""
    cur = Cursor(raw, "source_target_pairs")
    pairs = cur.int_lists()
    cur.end()
    if any(len(p) != 2 for p in pairs):
        raise cur.error("every pair needs exactly a source and a target")
    return tuple((p[0], p[1]) for p in pairs)
