"""torch_xla counter values a program printed itself, outside a metrics report.

``torch_xla.debug.metrics.counter_value(name)`` is how the torch_xla docs read one counter, and a training script
prints it beside its own logs: ``print({k: met.counter_value(k) for k in ...})``,
``print(f"PersistentCacheMiss={met.counter_value('PersistentCacheMiss')}")``. ``counter_value`` returns None for a
counter that never counted (torch_xla 2.9 creates a counter on its first event), so a printed None is a 0 that was
read, not a value left out: whether run B looked its cache up at all can rest on it. A metrics report's own
``Counter:`` / ``Value:`` blocks are read by :func:`hlodiff.dumps.compile_cache.read_torch_cache_facts`.
"""

from __future__ import annotations

import re

PRINTED_VALUE = r"""['"]?\s*[:=]\s*(\d+|None)\b"""
"""What follows a counter's name in a printed value: an optional closing quote (a dict's key), ``:`` or ``=``,
then the number or None."""


def printed_counters(line: str, names: tuple[str, ...]) -> dict[str, int]:
    """``{name: value}`` of each counter of ``names`` printed on ``line`` by name with its value (None -> 0)."""
    found = {}
    for name in names:
        if name not in line:  # most lines of a log name no counter: no pattern run for them
            continue
        for m in re.finditer(rf"(?<![\w.]){re.escape(name)}{PRINTED_VALUE}", line):
            found[name] = 0 if m.group(1) == "None" else int(m.group(1))
    return found
