"""The Python line behind an instruction, from its metadata: the user's own frame when there is one."""

from __future__ import annotations

from hlodiff.errors import HlodiffError
from hlodiff.hlo.attributes import parse_metadata
from hlodiff.hlo.model import Instruction, Module, SourceFrame, user_frame


class SourceLocator:
    """Resolves ``metadata={source_file source_line}`` or ``stack_frame_id`` (JAX) to a frame."""

    def __init__(self, module: Module):
        self.module = module

    def frames(self, inst: Instruction) -> list[SourceFrame]:
        raw = inst.attrs.get("metadata")
        if not raw:
            return []
        try:
            meta = parse_metadata(raw)
        except HlodiffError:
            return []
        if meta.stack_frame_id and self.module.stack_frames:
            chain = self.module.stack_frames.resolve(meta.stack_frame_id)
            if chain:
                return chain
        if meta.source_file:
            return [SourceFrame(meta.source_file, meta.source_line, None)]
        return []

    def op(self, inst: Instruction) -> str:
        """What computed a value, in the producer's words: ``aten__permute``, ``jit(step)/transpose``, else the
        HLO opcode."""
        raw = inst.attrs.get("metadata")
        if raw:
            try:
                meta = parse_metadata(raw)
            except HlodiffError:
                meta = None
            if meta is not None and (meta.op_type or meta.op_name):
                return meta.op_type or meta.op_name or inst.opcode
        return inst.opcode

    def frame(self, inst: Instruction) -> SourceFrame | None:
        """The innermost user frame, else the innermost frame, else None."""
        frames = self.frames(inst)
        if not frames:
            return None
        return user_frame(frames) or frames[0]
