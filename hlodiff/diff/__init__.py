"""Matching and classified differences between two modules. Depends on :mod:`hlodiff.graph` and below."""

from hlodiff.diff.compare import diff_canonical, diff_modules
from hlodiff.diff.model import CAUSE_KINDS, Cause, Change, Ignored, InstructionRef, ModuleDiff

__all__ = ["CAUSE_KINDS", "Cause", "Change", "Ignored", "InstructionRef", "ModuleDiff", "diff_canonical",
           "diff_modules"]
