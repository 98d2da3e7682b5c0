"""Module -> HLO text.

The output is what XLA itself accepts (names with ``%``, untyped operands, one instruction per line) and what
:func:`hlodiff.hlo.parser.parse_module` reads back to an equal module. Reports use it to show excerpts, and the
normalizer uses :func:`format_instruction` for readable canonical text.
"""

from __future__ import annotations

import json

from hlodiff.hlo.model import Computation, Instruction, Module, StackFrameTable


def format_instruction(inst: Instruction, *, operand_names: list[str] | None = None,
                       name: str | None = None, skip_attrs: frozenset[str] = frozenset()) -> str:
    """One instruction line; ``operand_names``/``name`` substitute names (used for canonical text)."""
    prefix = "ROOT " if inst.is_root else ""
    if inst.opcode == "constant":
        inner = inst.literal or ""
    elif inst.opcode == "parameter":
        inner = str(inst.parameter_number)
    else:
        operands = operand_names if operand_names is not None else ["%" + o for o in inst.operands]
        if inst.truncated_operands:
            operands = [*operands, f"...(+{inst.truncated_operands})"]
        inner = ", ".join(operands)
    text = f"{prefix}%{name if name is not None else inst.name} = {inst.shape} {inst.opcode}({inner})"
    for key, value in inst.attrs.items():
        if key not in skip_attrs:
            text += f", {key}={' '.join(value.split()) if chr(10) in value else value}"
    return text


def format_computation(comp: Computation) -> str:
    head = ("ENTRY " if comp.is_entry else "") + "%" + comp.name
    if comp.signature is not None:
        params, result = comp.signature
        head += " (" + ", ".join(f"{n}: {s}" for n, s in params) + f") -> {result}"
    lines = [head + " {"]
    lines.extend("  " + format_instruction(inst) for inst in comp.instructions)
    tail = "}"
    for key, value in comp.attrs.items():
        tail += f", {key}={value}"
    lines.append(tail)
    return "\n".join(lines)


def format_module(module: Module) -> str:
    """The whole module as HLO text, ending in a newline."""
    parts = []
    if module.name:
        header = f"HloModule {module.name}"
        for key, value in module.attrs.items():
            header += f", {key}={value}"
        parts.append(header)
    if module.stack_frames:
        parts.append(_format_stack_frames(module.stack_frames))
    parts.extend(format_computation(c) for c in module.computations if not c.implicit)
    return "\n\n".join(parts) + "\n"


def _format_stack_frames(table: StackFrameTable) -> str:
    blocks = []
    if table.file_names:
        blocks.append("FileNames\n" + "\n".join(f"{k} {json.dumps(v)}" for k, v in table.file_names.items()))
    if table.function_names:
        blocks.append("FunctionNames\n" + "\n".join(f"{k} {json.dumps(v)}" for k, v in table.function_names.items()))
    if table.file_locations:
        rows = []
        for k, loc in table.file_locations.items():
            row = f"{k} {{file_name_id={loc.file_name_id} function_name_id={loc.function_name_id} line={loc.line}"
            for key in ("end_line", "column", "end_column"):
                value = getattr(loc, key)
                if value is not None:
                    row += f" {key}={value}"
            rows.append(row + "}")
        blocks.append("FileLocations\n" + "\n".join(rows))
    if table.frames:
        blocks.append("StackFrames\n" + "\n".join(
            f"{k} {{file_location_id={loc} parent_frame_id={parent + 1}}}" for k, (loc, parent) in table.frames.items()))
    return "\n\n".join(blocks)
