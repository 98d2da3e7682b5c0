"""HLO text -> :class:`Module`.

Written by hand for speed: dumps reach hundreds of megabytes. The text is walked line by line: the module's
structure (the header, the stack-frame tables, computations and their signatures) is read here; each instruction
is decomposed by :mod:`hlodiff.hlo.instruction_reader` (a mixin), with a few anchored regular expressions for
almost every line XLA and PyTorch/XLA print. Statements that span lines are joined here first. Attribute values
are kept as text (see :mod:`hlodiff.hlo.model`); shapes are parsed and interned.

The common lines are read by the optional compiled accelerator when it was built (:mod:`hlodiff.accel`), which
hands every line it is not sure of back to this code. What XLA rejects once a module is read (names defined twice,
cycles, declared operand shapes) is checked by :mod:`hlodiff.hlo.name_checks`.

Every syntax problem raises :class:`HloParseError` with the file, line and column.
"""

from __future__ import annotations

import os
import re

from hlodiff import progress
from hlodiff.accel import native
from hlodiff._runtime import paused_gc
from hlodiff.errors import HloParseError
from hlodiff.hlo import scan
from hlodiff.hlo.attributes import parse_buffer_donor, parse_input_output_alias, unescape
from hlodiff.hlo.escapes import bad_escape_line
from hlodiff.hlo.asyncs import check_and_wrap_asyncs
from hlodiff.hlo.checks import check_module
from hlodiff.hlo.infer import infer_shapes
from hlodiff.hlo.opcodes import async_shorthand
from hlodiff.hlo.instruction_reader import _NAME, _STR, InstructionReader
from hlodiff.hlo.model import (NO_ATTRIBUTES, Computation, FileLocation, Instruction, Module, Shape, SharedAttributes,
                               StackFrameTable)
from hlodiff.hlo.name_checks import NameChecks
from hlodiff.hlo.shapes import parse_shape_at
from hlodiff.hlo.shapes import _cache as _shape_cache

if native is not None:  # the accelerator reads instructions' fields at their slots (set up once, not per line)
    native.register_instruction(Instruction)
    native.register_no_attributes(NO_ATTRIBUTES)  # the shared attrs of an instruction without attributes
    native.register_shared_attributes(SharedAttributes)  # the attrs shared inside sharing.shared_values

_COMP_START = re.compile(r"\s*(ENTRY\s+)?%?" + _NAME + r"\s*(\(|\{\s*$)")
_MAX_HEAD_LINES = 1000
_COMP_HEAD = re.compile(r"\s*(ENTRY\s+)?%?(" + _NAME + r")\s*")
_PARAM_DECL = re.compile(r"%?(" + _NAME + r")\s*:\s*")
_TABLE_ROW = re.compile(r"\s*(\d+)\s+(.*?)\s*$")
_KV = re.compile(r"(\w+)=(-?\d+)")
_STRING_ROW = re.compile(_STR)
_HEADER_CHECKS = (("input_output_alias", parse_input_output_alias), ("buffer_donor", parse_buffer_donor))
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def parse_module(text: str, *, path: str = "<string>", first_line: int = 1) -> Module:
    """Parse one HLO module (or a bare list of computations) from ``text``.

    ``first_line`` is the file line on which ``text`` begins, so errors and instruction positions point into the
    original file even when the module was cut out of a larger dump.
    """
    with paused_gc():
        parser = _Parser(text, path, first_line)
        with progress.stage(f"parsing {os.path.basename(path)}", len(parser.lines), len(parser.lines),
                             "lines") as parser.bar:
            module = parser.parse()
    module.bad_escape_line = bad_escape_line(text, first_line)
    return module


class _Parser(NameChecks, InstructionReader):
    def __init__(self, text: str, path: str, first_line: int):
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.lines = text.split("\n")
        self.path = path
        self.first_line = first_line
        self.i = 0  # index of the next line to read
        self.pending: list[Instruction] = []  # nested anonymous instructions of the statement being read
        self.anon_names: set[str] = set()
        self.nesting = 0  # depth of the nested instruction being read
        self.shapeless = False  # some instruction left its shape to inference
        self.bar = progress.Task(None)  # lines read, for a big module
        # Operands written with a shape ('f32[2] %x'), per instruction, until the computation is checked:
        # XLA refuses a declared shape that does not match the operand's own (ShapeMismatchInOperand).
        self.declared: list[tuple[Instruction, tuple[str | Shape | None, ...]]] = []
        # How each instruction of the computation being read would be written as a typed operand ("f32[2]{0} %a"):
        # an operand list written exactly so needs no check (torch_xla writes every operand so); others are kept.
        self.typed_refs: dict[str, str] = {}
        self.declared_in: dict[int, list[tuple[Instruction, tuple[str | Shape | None, ...]]]] = {}

    # -- errors ---------------------------------------------------------------------------------------------

    def error(self, message: str, line_index: int, col: int = 0) -> HloParseError:
        return HloParseError(message, path=self.path, line=self.first_line + line_index, col=col + 1)

    def error_at(self, message: str, start_index: int, text: str, offset: int) -> HloParseError:
        """An error at ``offset`` of a statement ``text`` that began on line ``start_index``."""
        line_index = start_index + text.count("\n", 0, offset)
        col = offset - (text.rfind("\n", 0, offset) + 1)
        return self.error(message, line_index, col)

    # -- top level ------------------------------------------------------------------------------------------

    def parse(self) -> Module:
        module = Module(name="", path=self.path)
        saw_header = False
        while True:
            if native is not None:  # a run of plain computations ('name {', lines parse_lines reads, '}') in one call
                self.i = native.plain_computations(self.lines, self.i, self.first_line, _shape_cache, Instruction,
                                                   self.declared, parse_shape_at, Shape, Computation,
                                                   module.computations)
                if self.bar.active:
                    self.bar.update(self.i)
            stripped = self._next_meaningful()
            if stripped is None:
                break
            start = self.i
            if stripped.startswith("HloModule") and (len(stripped) == 9 or stripped[9] in " \t,"):
                if saw_header or module.computations:
                    raise self.error("second HloModule header in one module", start, self._indent(start))
                saw_header = True
                self._parse_header(module)
            elif stripped in _TABLES:
                self._parse_table(module.stack_frames, stripped)
            else:
                module.computations.append(self._parse_computation())
                if self.bar.active:
                    self.bar.update(self.i)
        if not module.computations:
            raise self.error("no computations found (expected 'ENTRY name {' or 'name (params) -> shape {')",
                             max(len(self.lines) - 1, 0))
        self._check_names(module)
        if self.shapeless:
            infer_shapes(module, self.path)
        odd = check_module(module, self.path)
        if odd:
            if any(op.startswith("async-") or async_shorthand(op) for op in odd):
                check_and_wrap_asyncs(module, self.path)
            module.unknown_opcodes = sorted(op for op in odd if not op.startswith("async-") and not async_shorthand(op))
        return module

    def _indent(self, index: int) -> int:
        line = self.lines[index]
        return len(line) - len(line.lstrip())

    def _next_meaningful(self) -> str | None:
        """Skip blank lines and comments; leave ``self.i`` on the next meaningful line and return it stripped."""
        while self.i < len(self.lines):
            line = self.lines[self.i]
            stripped = line.strip()
            if not stripped or stripped.startswith("//"):
                self.i += 1
                continue
            if stripped.startswith("/*"):
                self._skip_block_comment()
                continue
            return stripped
        return None

    def _skip_block_comment(self) -> None:
        """Skip a ``/* ... */`` that starts a line; text after ``*/`` on the same line is kept for parsing."""
        start = self.i
        line = self.lines[self.i]
        begin = line.index("/*")
        while True:
            end = self.lines[self.i].find("*/", begin + 2 if self.i == start else 0)
            if end >= 0:
                rest = self.lines[self.i][end + 2:]
                if rest.strip():
                    self.lines[self.i] = " " * (end + 2) + rest
                else:
                    self.i += 1
                return
            self.i += 1
            if self.i >= len(self.lines):
                raise self.error("unterminated /* comment", start, begin)

    def _statement(self) -> tuple[str, int]:
        """Read lines from ``self.i`` until brackets balance and the text does not end in ',' or '='.

        Comments are blanked out with spaces so that offsets still map to the original columns.
        """
        start = self.i
        parts: list[str] = []
        depth = 0
        while True:
            if self.i >= len(self.lines):
                raise self.error("unexpected end of input inside a statement (unbalanced brackets?)", start,
                                 self._indent(start))
            line = scan.blank_comments(self.lines[self.i])
            self.i += 1
            parts.append(line)
            depth += scan.depth_change(line)
            if depth < 0:
                raise self.error("unbalanced closing bracket", self.i - 1, len(line.rstrip()) - 1)
            tail = line.rstrip()
            if depth == 0 and tail and tail[-1] not in ",=":
                return "\n".join(parts), start

    # -- header and stack-frame tables ----------------------------------------------------------------------

    def _parse_header(self, module: Module) -> None:
        text, start = self._statement()
        m = re.match(r"\s*HloModule\s+(" + _NAME + r")\s*:?\s*", text)  # XLA accepts 'HloModule name:'

        if m is None:
            raise self.error_at("expected a module name after HloModule", start, text, text.find("HloModule") + 9)
        module.name = m.group(1)
        module.attrs = self._attributes(text, m.end(), start)
        for key, check in _HEADER_CHECKS:
            if key in module.attrs:
                try:
                    check(module.attrs[key])
                except HloParseError as e:
                    raise self.error_at(e.message, start, text, text.find(key + "=")) from None

    def _parse_table(self, table: StackFrameTable, kind: str) -> None:
        self.i += 1
        while self.i < len(self.lines):
            line = self.lines[self.i]
            m = _TABLE_ROW.match(line)
            if not line.strip() or m is None:
                return
            self._table_row(table, kind, int(m.group(1)), m.group(2), line)
            self.i += 1

    def _table_row(self, table: StackFrameTable, kind: str, key: int, value: str, line: str) -> None:
        if kind in ("FileNames", "FunctionNames"):
            if _STRING_ROW.fullmatch(value) is None:
                raise self.error(f"expected a quoted string in {kind}", self.i, line.find(value))
            target = table.file_names if kind == "FileNames" else table.function_names
            target[key] = unescape(value[1:-1])
            return
        fields = dict((k, int(v)) for k, v in _KV.findall(value))
        try:
            if kind == "FileLocations":
                table.file_locations[key] = FileLocation(
                    fields["file_name_id"], fields["function_name_id"], fields["line"],
                    fields.get("end_line"), fields.get("column"), fields.get("end_column"))
            else:
                # XLA prints parent_frame_id one higher than the id it refers to, so 1 means "no parent".
                table.frames[key] = (fields["file_location_id"], fields["parent_frame_id"] - 1)
        except KeyError as missing:
            raise self.error(f"{kind} entry lacks {missing.args[0]}", self.i, line.find(value)) from None

    # -- computations ---------------------------------------------------------------------------------------

    def _parse_computation(self) -> Computation:
        text, start = self._computation_head()
        m = _COMP_HEAD.match(text)
        if m is None:
            raise self.error_at("expected a computation ('name {' or 'ENTRY name (params) -> shape {')",
                                start, text, len(text) - len(text.lstrip()))
        comp = Computation(name=m.group(2), is_entry=bool(m.group(1)), line=self.first_line + start)
        pos = m.end()
        if pos < len(text) and text[pos] == "(":
            comp.signature, pos = self._signature(text, pos, start)
        pos = scan.skip_space(text, pos)
        if pos >= len(text) or text[pos] != "{" or text[pos + 1:].strip():
            raise self.error_at("expected '{' to open the computation body", start, text, pos)
        self._parse_body(comp)
        return comp

    def _computation_head(self) -> tuple[str, int]:
        """A computation header may wrap across lines; it ends with the line that ends in '{'."""
        start = self.i
        first = scan.blank_comments(self.lines[start])
        if _COMP_START.match(first) is None:
            raise self.error("expected 'HloModule', or a computation such as 'ENTRY name {'", start,
                             self._indent(start))
        parts = []
        while self.i < len(self.lines) and self.i - start < _MAX_HEAD_LINES:
            line = scan.blank_comments(self.lines[self.i])
            self.i += 1
            parts.append(line)
            if line.rstrip().endswith("{"):
                return "\n".join(parts), start
        raise self.error("computation header without '{'", start, self._indent(start))

    def _signature(self, text: str, pos: int, start: int) -> tuple[tuple[tuple[tuple[str, Shape], ...], Shape], int]:
        if native is not None and (read := native.signature(text, pos, _shape_cache, parse_shape_at, Shape)) is not None:
            return read  # array shapes seen before, nothing unusual: read in C
        params: list[tuple[str, Shape]] = []
        pos += 1
        while True:
            pos = scan.skip_space(text, pos)
            if pos < len(text) and text[pos] == ")":
                pos += 1
                break
            if params:
                if pos >= len(text) or text[pos] != ",":
                    raise self.error_at("expected ',' or ')' in computation parameters", start, text, pos)
                pos = scan.skip_space(text, pos + 1)
            m = _PARAM_DECL.match(text, pos)
            if m is None:
                raise self.error_at("expected 'name: shape' in computation parameters", start, text, pos)
            shape, pos = self._shape(text, m.end(), start)
            params.append((m.group(1), shape))
        pos = scan.skip_space(text, pos)
        if not text.startswith("->", pos):
            raise self.error_at("expected '->' and the result shape", start, text, pos)
        result, pos = self._shape(text, pos + 2, start)
        return (tuple(params), result), pos

    def _parse_body(self, comp: Computation) -> None:
        self.typed_refs = {}
        # The computation's names (name -> the object): the accelerator gives an operand the very object of the
        # instruction it names, so later name-keyed lookups of operands compare by identity (issue 34).
        known: dict[str, str] = {}
        while True:
            if native is not None:  # the common lines in C; it stops at the first line it leaves to this parser
                for inst in comp.instructions[len(known):]:  # the lines this parser read since: the same
                    if inst.operands:
                        inst.operands = tuple([known.get(op, op) for op in inst.operands])
                    known.setdefault(inst.name, inst.name)
                self.i = native.parse_lines(self.lines, self.i, self.first_line, self.typed_refs, _shape_cache,
                                            Instruction, comp.instructions, self.declared, parse_shape_at, Shape,
                                            known)
            stripped = self._next_meaningful()
            if stripped is None:
                raise self.error(f"computation {comp.name!r} is not closed with '}}' (file cut off?)",
                                 len(self.lines) - 1, 0)
            if stripped.startswith("}"):
                self._close_computation(comp)
                if self.declared:
                    self.declared_in[id(comp)] = self.declared
                    self.declared = []
                return
            inst = self._instruction()
            if self.pending:
                comp.instructions.extend(self.pending)
                self.pending.clear()
            comp.instructions.append(inst)

    def _close_computation(self, comp: Computation) -> None:
        line = scan.blank_comments(self.lines[self.i])
        start = self.i
        self.i += 1
        pos = line.index("}") + 1
        rest = line[pos:]
        if "//" in rest:
            rest = rest[: rest.index("//")]
        if rest.strip():
            comp.attrs = self._attributes(line[:pos] + rest, pos, start)
        if not comp.instructions:
            raise self.error(f"computation {comp.name!r} has no instructions", start, pos - 1)
