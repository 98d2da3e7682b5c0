"""The HLO layer: model, text parser and printer. Depends on nothing else in hlodiff."""

from hlodiff.hlo.model import Computation, Instruction, Layout, Module, Shape, SourceFrame, StackFrameTable
from hlodiff.hlo.parser import parse_module
from hlodiff.hlo.printer import format_instruction, format_module

__all__ = [
    "Computation", "Instruction", "Layout", "Module", "Shape", "SourceFrame", "StackFrameTable",
    "parse_module", "format_instruction", "format_module",
]
