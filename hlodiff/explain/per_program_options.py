"""Whether an XLA option that differs between two runs was set for one program only.

XLA_FLAGS reach every program a process compiles, so JAX writes the same debug options beside each dumped module;
`jax.jit(f, compiler_options={...})` (or `.lower(...).compile(compiler_options=...)`) reaches the options of that
function's program alone. When run B's other programs (compiled or loaded: XLA writes their `debug_options` either
way) do not hold the value the recompiled program holds, the option came from that function's `compiler_options`,
and telling the user to compare XLA_FLAGS would send them to the wrong place (round 9: `runs9_jit_compiler_options`).
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference

DEBUG_OPTIONS = "debug_options"
"""The dump file an XLA debug option is read from (:class:`KeyDifference`'s ``source``)."""


def set_for_this_program(difference: KeyDifference, program: str, records: list[GraphRecord], options) -> list[str]:
    """The other programs of the run (by module name) whose dumped debug options do not hold ``difference``'s value
    of run B, when every other program with dumped options is one of them (empty: the option may be the process's,
    or nothing else was dumped). ``options`` reads a record's flattened options (``Run.module_options``)."""
    if difference.source != DEBUG_OPTIONS or difference.b is None:
        return []
    key = f"{DEBUG_OPTIONS}:{difference.name}"
    without: list[str] = []
    for record in records:
        name = (record.module_name or "").rstrip("_")
        if record.kind != "xla_dump" or not name or name == program.rstrip("_") or name in without:
            continue
        found = options(record)
        if found is None:
            continue
        if difference.b in found.get(key, ()):
            return []  # another program holds it too: a setting of the process, not of one function
        without.append(name)
    return without
