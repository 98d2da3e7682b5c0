"""One HLO statement's text -> :class:`Instruction`: name, shape, opcode, operands, attributes.

A mixin of the parser (:class:`hlodiff.hlo.parser._Parser`), which reads the module's structure (header,
stack-frame tables, computations) and hands each instruction line here. The common one-line instruction is
decomposed by a few anchored regular expressions; a statement that spans lines, or nests deeper than they allow,
by the bracket- and string-aware scanner (:mod:`hlodiff.hlo.scan`). Nested anonymous instructions become
instructions of their own, as XLA makes them. Attribute values are kept as text.
"""

from __future__ import annotations

import re

from hlodiff.hlo import scan
from hlodiff.hlo.model import NO_ATTRIBUTES, Instruction, Shape
from hlodiff.hlo.shapes import ARRAY_SHAPE, ShapeSyntaxError, parse_shape_at, remember
from hlodiff.hlo.sharing import share_attributes, share_line
from hlodiff.hlo.shapes import _cache as _shape_cache

_NAME = r"[A-Za-z0-9_.\-]+"

_HEAD = re.compile(r"\s*(ROOT\s+)?%?(" + _NAME + r")\s*=\s*")
_OPCODE = re.compile(r"\s*([A-Za-z][A-Za-z0-9_\-]*)\s*\(")
# An operand list with up to two levels of nested parentheses (tuple-typed operands, complex literals).
_PAREN_BODY = re.compile(r"((?:[^()]++|\((?:[^()]++|\([^()]*\))*+\))*+)\)")
_STR = r'"(?:[^"\\]++|\\.)*+"'
_B0 = r"\{(?:[^{}\"]++|" + _STR + r")*+\}"
_B1 = r"\{(?:[^{}\"]++|" + _STR + "|" + _B0 + r")*+\}"
_B2 = r"\{(?:[^{}\"]++|" + _STR + "|" + _B1 + r")*+\}"
_B3 = r"\{(?:[^{}\"]++|" + _STR + "|" + _B2 + r")*+\}"
_IOTA = r"\[[^\]]*\]<=\[[^\]]*\](?:T\([^()]*\))?"
_VALUE = "(" + _STR + "|" + _B3 + "|" + _IOTA + r"|[^,\s{}\"()]+(?:\([^()]*\))?)"
_ATTR = re.compile(r"\s*,\s*(" + _NAME + r")\s*=\s*" + _VALUE + r"\s*")
_OPERAND_ITEM = re.compile(
    r"\s*(?:([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?|\((?:[^()]|\([^()]*\))*\))\s+)?%?(" + _NAME + r")\s*(?:,|$)"
)
_UNTYPED_OPERANDS = re.compile(r"\s*%?" + _NAME + r"\s*(?:,\s*%?" + _NAME + r"\s*)*")
_ARRAY = r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?"
# One match for the common line: name, array shape, opcode, operand list (two levels of nested parentheses).
_LINE = re.compile(r"\s*(ROOT\s+)?%?(" + _NAME + r")\s*=\s*(" + _ARRAY + r")\s+([A-Za-z][A-Za-z0-9_\-]*)\("
                   r"((?:[^()]++|\((?:[^()]++|\([^()]*\))*+\))*+)\)")
# Operands printed with their shapes and a '%' on every name (torch_xla and older XLA).
_TYPED_OPERANDS = re.compile(r"\s*" + _ARRAY + r"\s+%" + _NAME + r"(?:\s*,\s*" + _ARRAY + r"\s+%" + _NAME + r")*\s*")
_OPERAND_NAME = re.compile(r"%?(" + _NAME + r")\s*")
_PCT_NAME = re.compile(r"%(" + _NAME + r")")
_TYPED_PAIR = re.compile(r"(" + _ARRAY + r")\s+%(" + _NAME + r")")
_TRUNCATED = re.compile(r"\.\.\.\s*\(\s*\+\s*(\d+)\s*\)")
_MAX_NESTED = 200  # nested anonymous instructions per statement: hand-written modules have a few
_MAX_NESTING = 32  # and their depth (each level rescans the rest of the statement)
_ATTR_KEY = re.compile(r"(" + _NAME + r")\s*=\s*")
# Values XLA writes with a space: a typed literal (``literal=s32[2]{0} {1, 2}``, ``literal=f32[] 0.1``), mesh
# replica groups (``mesh['a'=2,'b'=2] {'b'}``).
_SPACED_VALUE = re.compile(r"\S+\s+\{.*\}", re.S)


class InstructionReader:
    """The instruction reader, as methods of the parser: ``self`` has ``lines``, ``i``, ``first_line``,
    ``pending``, ``anon_names``, ``nesting``, ``shapeless``, ``typed_refs``, ``declared``, ``error``,
    ``error_at``, ``_indent`` and ``_statement``."""

    # -- instructions ---------------------------------------------------------------------------------------

    def _instruction(self) -> Instruction:
        start = self.i
        line = self.lines[start]
        if "=" not in line and line.rstrip().endswith("{"):
            raise self.error("missing '}' before this line: the previous computation is not closed", start,
                             self._indent(start))
        if "/" in line:
            line = scan.blank_comments(line)
        if line.rstrip()[-1:] not in (",", "="):
            inst = self._fast_instruction(line, start)
            if inst is not None:
                self.i += 1
                return inst
        text, start = self._statement()
        return self._slow_instruction(text, start)

    def _fast_instruction(self, line: str, index: int) -> Instruction | None:
        """Decompose a one-line instruction with anchored regexes; ``None`` sends it to the general path.

        The common case (an array shape) is one regex match for name, shape, opcode and operand list; tuple
        shapes take a second step through the shape parser.
        """
        m = _LINE.match(line)
        shape_text = None
        if m is not None:
            root_word, name, shape_text, opcode, body = m.groups()  # one call, not five
            shape = _shape_cache.get(shape_text)
            if shape is None:
                try:
                    shape = parse_shape_at(shape_text, 0)[0]
                except ShapeSyntaxError:
                    return None
            end, root = m.end(), root_word is not None
        else:
            m = _HEAD.match(line)
            if m is None:
                return None
            try:
                shape, pos = parse_shape_at(line, m.end())
            except ShapeSyntaxError:
                return None
            if shape.is_tuple and line[m.end()] == "(":  # a tuple shape read once, then found by its text
                remember(line[m.end():pos], shape)
            mo = _OPCODE.match(line, pos)
            if mo is None:
                return None
            mb = _PAREN_BODY.match(line, mo.end())
            if mb is None:
                return None
            opcode, body, end = mo.group(1), mb.group(1), mb.end()
            name, root = m.group(2), m.group(1) is not None
        # The column of the first character, from the match (no stripped copy of a long line): ROOT, or the name
        # and the '%' before it.
        indent = m.start(1) if root else m.start(2) - (line[m.start(2) - 1:m.start(2)] == "%")
        inst = Instruction(name, shape, opcode, (), NO_ATTRIBUTES, root, None, None, 0,
                           share_line(self.first_line + index), indent + 1)
        if shape_text is not None:
            self.typed_refs[name] = shape_text + " %" + name
        if not self._fill_operands(inst, body, line, index, end - len(body) - 1):
            return None
        if end < len(line):
            attrs = self._fast_attributes(line, end)
            if attrs is None:
                return None
            inst.attrs = share_attributes(line, end, attrs) if attrs else NO_ATTRIBUTES
        return inst

    def _fast_attributes(self, text: str, pos: int) -> dict[str, str] | None:
        attrs: dict[str, str] = {}
        end = len(text)
        while pos < end:
            m = _ATTR.match(text, pos)
            if m is None:
                return None if text[pos:].strip() else attrs
            key = m.group(1)
            if key in attrs:
                return None  # let the general path report it with a position
            attrs[key] = m.group(2)
            pos = m.end()
        return attrs

    def _slow_instruction(self, text: str, start: int) -> Instruction:
        m = _HEAD.match(text)
        if m is None:
            at = len(text) - len(text.lstrip())
            if text.lstrip().startswith(("ENTRY", "HloModule")) or text.rstrip().endswith("{"):
                raise self.error_at("missing '}' before this line (computation not closed)", start, text, at)
            raise self.error_at("expected an instruction 'name = shape opcode(operands)'", start, text, at)
        shape, pos = self._optional_shape(text, m.end(), start)
        if pos >= len(text.rstrip()) and self.i < len(self.lines) and _OPCODE.match(self.lines[self.i]):
            more, _ = self._statement()  # 'name = shape' with the opcode on the next line
            text += "\n" + more
        first_col = m.start(2) - (text.rfind("\n", 0, m.start(2)) + 1)
        inst, close = self._instruction_rhs(m.group(2), shape, text, pos, start)
        inst.is_root = m.group(1) is not None
        inst.line = self.first_line + start + text.count("\n", 0, m.start(2))
        inst.col = first_col + 1
        inst.attrs = self._attributes(text, close + 1, start) or NO_ATTRIBUTES
        return inst

    def _optional_shape(self, text: str, pos: int, start: int) -> tuple[Shape | None, int]:
        """The result shape, or ``None`` when the opcode follows directly (XLA infers the shape then)."""
        pos = scan.skip_space(text, pos)
        if pos < len(text) and text[pos] != "(" and not text.startswith("b(", pos) \
                and _OPCODE.match(text, pos) is not None:
            return None, pos
        return self._shape(text, pos, start)

    def _instruction_rhs(self, name: str, shape: Shape | None, text: str, pos: int,
                         start: int) -> tuple[Instruction, int]:
        """``opcode(operands)`` at ``pos``: the instruction (attributes not read) and the offset of its ')'."""
        mo = _OPCODE.match(text, pos)
        if mo is None:
            raise self.error_at("expected an opcode followed by '('", start, text, scan.skip_space(text, pos))
        close = scan.closing(text, mo.end() - 1)
        if close < 0:
            raise self.error_at("unbalanced '(' in operand list", start, text, mo.end() - 1)
        inst = Instruction(name, shape, mo.group(1))  # type: ignore[arg-type]  # None until inferred
        if shape is None:
            self.shapeless = True
        body = text[mo.end():close]
        if not self._fill_operands(inst, body, text, start, mo.end()):
            self._slow_operands(inst, body, text, start, mo.end())
        return inst, close

    def _fill_operands(self, inst: Instruction, body: str, text: str, start: int, offset: int) -> bool:
        """Fill operands (or the literal / parameter number) from the text inside the parentheses."""
        opcode = inst.opcode
        if opcode == "constant":
            inst.literal = " ".join(body.split())
            return True
        if opcode == "parameter":
            try:
                inst.parameter_number = int(body)
            except ValueError:
                raise self.error_at("parameter number must be an integer", start, text, offset) from None
            return True
        if not body.strip():
            return True
        if "[" not in body and "(" not in body:
            if _UNTYPED_OPERANDS.fullmatch(body) is None:
                return False
            inst.operands = tuple(piece.strip().lstrip("%") for piece in body.split(","))
            return True
        if _TYPED_OPERANDS.fullmatch(body) is not None:
            names = _PCT_NAME.findall(body)
            inst.operands = tuple(names)
            refs = self.typed_refs
            try:
                written = (refs[names[0]] if len(names) == 1 else ", ".join(map(refs.__getitem__, names))) == body
            except KeyError:  # an operand defined later, or with a tuple shape
                written = False
            if not written:  # a forward reference, other spacing or another shape: checked after the computation
                self.declared.append((inst, tuple(shape for shape, _ in _TYPED_PAIR.findall(body))))
            return True
        names, shapes = [], []
        pos = 0
        for m in _OPERAND_ITEM.finditer(body):
            if m.start() != pos:
                return False
            names.append(m.group(2))
            shapes.append(m.group(1))
            pos = m.end()
        if pos != len(body):
            return False
        inst.operands = tuple(names)
        refs = self.typed_refs
        if any(shape and refs.get(name) != shape + " %" + name for shape, name in zip(shapes, names)):
            self.declared.append((inst, tuple(shapes)))
        return True

    def _slow_operands(self, inst: Instruction, body: str, text: str, start: int, offset: int) -> None:
        names: list[str] = []
        shapes: list[Shape | None] = []
        for piece, at in scan.split_top_level(body):
            stripped = piece.strip()
            m = _TRUNCATED.fullmatch(stripped)
            if m:
                inst.truncated_operands += int(m.group(1))
                continue
            where = offset + at + (len(piece) - len(piece.lstrip()))
            names.append(self._operand(stripped, text, where, start, shapes))
        inst.operands = tuple(names)
        if any(shape is not None for shape in shapes):
            self.declared.append((inst, tuple(shapes)))

    def _operand(self, piece: str, text: str, where: int, start: int, shapes: list[Shape | None]) -> str:
        """One operand: ``[shape] name``, or a nested anonymous instruction ``[shape] opcode(operands)``,
        which becomes an instruction of its own placed before the one that uses it (as XLA does)."""
        shape: Shape | None = None
        pos = 0
        if piece[:1] == "(" or piece.startswith("b(") or ARRAY_SHAPE.match(piece):
            try:
                shape, pos = parse_shape_at(piece, 0)
            except ShapeSyntaxError as e:
                raise self.error_at(str(e), start, text, where + e.offset) from None
            pos = scan.skip_space(piece, pos)
        m = _OPERAND_NAME.match(piece, pos)
        if m is None or (m.end() != len(piece) and piece[m.end()] != "("):
            raise self.error_at(f"cannot read {piece[:40]!r} as an instruction name or a nested instruction",
                                start, text, where + pos)
        if m.end() == len(piece):
            shapes.append(shape)
            return m.group(1)
        shapes.append(None)  # a nested instruction: its shape is its own, not a declaration
        if len(self.pending) >= _MAX_NESTED or self.nesting >= _MAX_NESTING:
            raise self.error_at(f"nested instructions more than {_MAX_NESTING} deep or {_MAX_NESTED} in one statement",
                                start, text, where)
        self.nesting += 1
        try:
            inst, close = self._instruction_rhs(self._anon_name(m.group(1)), shape, text, where + pos, start)
        finally:
            self.nesting -= 1
        if close != where + len(piece) - 1:
            raise self.error_at("unexpected text after a nested instruction", start, text, close + 1)
        inst.line = self.first_line + start + text.count("\n", 0, where)
        inst.col = where - (text.rfind("\n", 0, where) + 1) + 1
        self.pending.append(inst)
        return inst.name

    def _anon_name(self, opcode: str) -> str:
        """``opcode.anon``, then ``opcode.anon.1``, ...: the names XLA gives nested instructions."""
        name = opcode + ".anon"
        n = 0
        while name in self.anon_names:
            n += 1
            name = f"{opcode}.anon.{n}"
        self.anon_names.add(name)
        return name

    # -- attributes and shapes ------------------------------------------------------------------------------

    def _attributes(self, text: str, pos: int, start: int) -> dict[str, str]:
        """``, key=value, ...`` up to the end of ``text``; values are kept verbatim."""
        attrs: dict[str, str] = {}
        end = len(text.rstrip())
        while True:
            pos = scan.skip_space(text, pos)
            if pos >= end:
                return attrs
            if text[pos] != ",":
                raise self.error_at(f"expected ',' before the next attribute, found {text[pos:pos + 20]!r}",
                                    start, text, pos)
            pos = scan.skip_space(text, pos + 1)
            m = _ATTR_KEY.match(text, pos)
            if m is None:
                raise self.error_at("expected an attribute 'key=value'", start, text, pos)
            key = m.group(1)
            if key in attrs:
                raise self.error_at(f"duplicate attribute {key!r}", start, text, pos)
            value_end = scan.value_end(text, m.end())
            if value_end < 0:
                raise self.error_at(f"unbalanced brackets or quotes in the value of {key!r}", start, text, m.end())
            value = text[m.end():value_end].strip()
            if not value:
                raise self.error_at(f"attribute {key!r} has no value", start, text, m.end())
            if value[0] not in "{[(\"" and len(value.split()) > 1 and key != "literal" \
                    and not _SPACED_VALUE.fullmatch(value):
                raise self.error_at(f"unexpected text after the value of {key!r}", start, text,
                                    m.end() + len(value.split()[0]) + 1)
            attrs[key] = value
            pos = value_end

    def _shape(self, text: str, pos: int, start: int) -> tuple[Shape, int]:
        try:
            return parse_shape_at(text, pos)
        except ShapeSyntaxError as e:
            raise self.error_at(str(e), start, text, e.offset) from None
