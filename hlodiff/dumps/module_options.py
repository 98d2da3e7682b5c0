"""Compile options XLA writes beside each module of a dump folder.

With ``--xla_dump_to`` XLA writes, next to ``module_NNNN.NAME.before_optimizations.txt``, the options that module
was compiled with: ``module_NNNN.NAME.debug_options`` (DebugOptions), sometimes ``.execution_options.txt``,
``.flagfile`` and ``.hlo_module_config.txt``, and (JAX, PJRT) ``module_NNNN.NAME/compile_options.textproto``. Two
compilations of an identical graph with different options are two cache entries; these files say which option
changed. Text protos are flattened to ``path.to.field: value`` entries (repeated fields keep every value), so two
modules are compared key by key without a protobuf schema.
"""

from __future__ import annotations

import os

from hlodiff.dumps.graph_record import GraphRecord

_SIDE_FILES = (".debug_options", ".execution_options.txt", ".execution_options", ".flagfile",
               ".hlo_module_config.txt", "/compile_options.textproto")
_MAX_BYTES = 1 << 20
_IGNORED = ("xla_dump_to", "xla_dump_", "device_ordinal", "xla_detailed_logging", "xla_enable_dumping")
"""Where the dump goes, which device ran it and how much XLA logs do not change the compiled program (JAX turns
detailed logging off for later compilations of a run)."""


DUMPED_KINDS = ("xla_dump", "executions")
"""Records read from a module file of an XLA dump folder: a dump read alone, or joined with torch_xla's debug log
(each execution points at its module's file, with the options beside it)."""


def module_options(record: GraphRecord) -> dict[str, tuple[str, ...]] | None:
    """Flattened options of an XLA dump module, keyed ``file:field.path``; None when none were written."""
    prefix = _prefix(record)
    if prefix is None:
        return None
    found: dict[str, list[str]] = {}
    any_file = False
    for suffix in _SIDE_FILES:
        path = prefix + suffix
        try:
            if not os.path.isfile(path) or os.path.getsize(path) > _MAX_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        any_file = True
        label = suffix.lstrip("./")
        for key, value in flatten_text_proto(text):
            if not key.split(".")[-1].startswith(_IGNORED):
                found.setdefault(f"{label}:{key}", []).append(value)
    if not any_file:
        return None
    return {k: tuple(sorted(v)) for k, v in found.items()}


def _prefix(record: GraphRecord) -> str | None:
    """``DIR/module_0004.jit_step`` for ``DIR/module_0004.jit_step.before_optimizations.txt``."""
    if record.kind not in DUMPED_KINDS or not record.stage:
        return None
    tail = f".{record.stage}.txt"
    if not record.path.endswith(tail):
        return None
    return record.path[: -len(tail)]


def flatten_text_proto(text: str) -> list[tuple[str, str]]:
    """``a { b: 1 }`` -> ``[("a.b", "1")]``; also reads ``--flag=value`` lines of a flagfile."""
    out: list[tuple[str, str]] = []
    stack: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("--"):
            key, _, value = line[2:].partition("=")
            out.append((key, value))
        elif line.endswith("{"):
            stack.append(line[:-1].strip().rstrip(":").strip())
        elif line == "}":
            if stack:
                stack.pop()
        elif ":" in line:
            key, _, value = line.partition(":")
            out.append((".".join([*stack, key.strip()]), value.strip()))
    return out
