"""The accelerator's shortcuts of issue 34 keep to what the Python code does: instructions read and made at their
slots only for a type whose fields are plain slots (anything else through the attribute protocol, as Python would),
and the unpaired-names filter the matchers use equal to its list-comprehension twin.

The end-to-end equality (every fixture and corpus file parsed, hashed and diffed with the accelerator on and off)
is tests/test_accel.py's; these pin the rules that decide when a shortcut may be taken.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

import pytest

from hlodiff.accel import native
from hlodiff.diff import matchers
from hlodiff.hlo import parse_module
from hlodiff.hlo.model import Instruction

ACCEL_REQUIRED = os.environ.get("HLODIFF_REQUIRE_ACCEL", "") not in ("", "0")
pytestmark = pytest.mark.skipif(native is None and not ACCEL_REQUIRED,
                                reason="the accelerator was not built (no C compiler at install)")

FIELDS = ("name", "shape", "opcode", "operands", "attrs", "is_root", "literal", "parameter_number",
          "truncated_operands", "line", "col")


def test_instruction_layout_is_read_at_its_slots():
    assert native.register_instruction(Instruction) is True


@dataclass(slots=True)
class _WithHook:
    name: str = ""
    shape: object = None
    opcode: str = ""
    operands: tuple = ()
    attrs: dict = field(default_factory=dict)
    is_root: bool = False
    literal: str | None = None
    parameter_number: int | None = None
    truncated_operands: int = 0
    line: int = 0
    col: int = 0

    def __post_init__(self):
        self.opcode = self.opcode.upper()


class _NoSlots:
    name = shape = opcode = operands = attrs = is_root = literal = parameter_number = None
    truncated_operands = line = col = 0


def test_a_type_with_init_work_or_without_slots_is_not_taken_over():
    """A __post_init__ (work the fields alone do not show) or attributes that are not slots: the C code must call
    the type, so registering refuses and the known Instruction layout stays."""
    assert native.register_instruction(_WithHook) is False
    assert native.register_instruction(_NoSlots) is False
    assert native.register_instruction(int) is False
    assert native.register_instruction(Instruction) is True


def test_instructions_made_in_c_equal_the_dataclass_made_in_python():
    text = ("HloModule m\n\nENTRY main {\n  p0 = f32[4]{0} parameter(0)\n  c = f32[] constant(2.5)\n"
            "  b = f32[4]{0} broadcast(c), dimensions={}\n"
            "  ROOT add.1 = f32[4]{0} add(p0, b), metadata={op_name=\"x\" source_file=\"t.py\" source_line=3}\n}\n")
    module = parse_module(text)
    made = module.entry.instructions
    assert [type(i) for i in made] == [Instruction] * 4
    for inst in made:
        rebuilt = Instruction(*(getattr(inst, f) for f in FIELDS))
        assert rebuilt == inst and (rebuilt.line, rebuilt.col) == (inst.line, inst.col)
    assert made[3].operands == ("p0", "b") and made[3].is_root and made[1].literal == "2.5"
    assert made[3].attrs["metadata"].startswith("{op_name=")


def test_unpaired_names_equal_the_list_comprehension():
    rng = random.Random(34)
    for _ in range(50):
        order = [f"n.{i}" for i in rng.sample(range(400), rng.randint(0, 300))]
        paired = {name: name for name in order if rng.random() < 0.8}
        paired.update({f"other.{i}": "x" for i in range(5)})
        expected = [name for name in order if name not in paired]
        assert native.unpaired(order, paired) == expected
        assert matchers._unpaired(order, paired) == expected
