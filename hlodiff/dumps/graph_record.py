"""One graph found in a dump, with where it came from; its HLO text is fetched only when asked for."""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hlodiff.dumps._io import decode
from hlodiff.dumps.limits import LIMIT_VARIABLES, Limits, limit_error
from hlodiff.errors import HloParseError, HlodiffError
from hlodiff.hlo.model import SourceFrame

if TYPE_CHECKING:
    from hlodiff.hlo.model import Module

KINDS = ("save_tensors", "xla_dump", "hlo_file", "executions")
TRACED_KINDS = ("save_tensors", "executions")
"""Kinds whose records are torch_xla executions: keyed by ``Graph Hash``, with the Python frames of the sync."""
DUMPED_KINDS = ("xla_dump", "executions")
"""Kinds whose modules are files of an XLA dump folder (XLA's option, proto and memory files sit beside them)."""
LOADED_STAGE = "after_optimizations"
"""XLA dumps a program JAX loaded from its persistent compilation cache as ``module_N.NAME.after_optimizations.txt``
(no platform prefix, no ``before_optimizations``): it never compiled it. A record of that stage was loaded."""


@dataclass(slots=True)
class GraphRecord:
    """A graph and its provenance.

    The HLO text is not stored: a save-tensors file can be 1 GB with 250 graphs, so a record keeps the byte
    offset and length of its text and :meth:`text` reads just that slice. Records from gzip files keep their text
    zlib-compressed instead (a gzip stream cannot be seeked cheaply).

    ``path`` is the file that holds the text (errors point there); ``source`` is what the user named — the same
    file, or the XLA dump folder — and is what ``ref`` (``SOURCE#INDEX``, what users type) is built from.
    """

    path: str
    index: int
    kind: str
    start_line: int
    source: str = ""
    graph_name: str | None = None
    frames: tuple[SourceFrame, ...] = ()
    root_hashes: tuple[str, ...] = ()
    graph_hash: str | None = None
    output_sharding: tuple[str, ...] = ()
    module_number: int | None = None
    module_name: str | None = None
    stage: str | None = None
    complete: bool = True
    byte_offset: int = 0
    byte_length: int = -1
    """Length of the text in bytes; -1 means "to the end of the file"."""
    packed_text: bytes | None = field(default=None, repr=False, compare=False)
    """zlib-compressed text, for sources that cannot be re-read by offset (gzip)."""
    proto_path: str | None = None
    """The HLO proto XLA dumped beside this module's text (``--xla_dump_hlo_as_proto``): full Python stacks."""
    hits_seen: bool = True
    """False for an ``executions`` record read from a log of compilations alone (``PT_XLA_DEBUG_LEVEL=1``): it has
    the sync's frames, but a cache hit left no record, so nothing may be said of the steps between compilations."""

    def __post_init__(self) -> None:
        if not self.source:
            self.source = self.path

    @property
    def ref(self) -> str:
        """``SOURCE#INDEX``: how users name this graph on the command line."""
        return f"{self.source}#{self.index}"

    def text(self) -> str:
        """The HLO text of this graph, read from disk on each call (callers that need it twice keep it)."""
        if self.packed_text is not None:
            return _trim(decode(zlib.decompress(self.packed_text)))
        try:
            with open(self.path, "rb") as f:
                if self.byte_length < 0:
                    _check_size(self.path, os.fstat(f.fileno()).st_size - self.byte_offset)
                f.seek(self.byte_offset)
                data = f.read() if self.byte_length < 0 else f.read(self.byte_length)
        except OSError as exc:
            raise HlodiffError(f"cannot re-read graph text: {exc.strerror or exc}", path=self.path) from None
        if self.byte_length >= 0 and len(data) != self.byte_length:
            raise HlodiffError("file shrank since it was scanned", path=self.path, line=self.start_line)
        return _trim(decode(data))

    def cache_key(self) -> str | None:
        """What the producer keyed its compilation cache on: equal keys mean the second graph was not compiled.

        torch_xla (save-tensors files and recorded executions): the ``Graph Hash``. XLA dump folders: XLA writes a module only when it compiles it, so every
        module number is its own compilation. Plain HLO files: unknown.
        """
        if self.kind in TRACED_KINDS:
            return self.graph_hash
        if self.kind == "xla_dump" and self.module_number is not None:
            return f"module_{self.module_number}"
        return None

    def module(self) -> Module:
        """Parse the HLO text; errors point at lines of the original file. The values of constants the text
        elides (``{...}``) are read from the HLO proto beside it, when there is one."""
        text = self.text()
        module = self.parse(text)
        if self.proto_path and "{...}" in text:
            from hlodiff.dumps.hlo_proto import fill_elided, values_for

            fill_elided(module, values_for(self.proto_path, None))
        return module

    def parse(self, text: str) -> Module:
        """Parse this graph's ``text`` (read once by the caller); a graph cut off mid-write says where it ends."""
        from hlodiff.hlo.parser import parse_module  # lazy: scanning must not pay for the parser

        try:
            return parse_module(text, path=self.path, first_line=self.start_line)
        except HloParseError as err:
            if self.complete:
                raise
            end = self.start_line + text.rstrip("\n").count("\n")
            message = err.message.removesuffix(" (file cut off?)")  # the guess is now known: say it once
            raise HloParseError(f"{message} (the graph is cut off: its text ends at line {end})",
                                path=err.path, line=err.line, col=err.col) from None

    def describe(self) -> str:
        """A short human description: ``graphs.hlo.0#3 (IrToHlo.72, hash 1f2e…)``."""
        parts = [p for p in (self.module_name, self.stage, self.graph_name) if p]
        if self.graph_hash:
            parts.append(f"hash {self.graph_hash}")
        if not self.complete:
            parts.append("incomplete")
        return f"{self.ref} ({', '.join(parts)})" if parts else self.ref


def _check_size(path: str, size: int) -> None:
    """A module file (XLA dump folders) bigger than any graph can meaningfully be is refused before it is read."""
    limits = Limits.from_env()
    if size > limits.graph_bytes:
        raise limit_error(path, 1, "module too big to read", limits.graph_bytes, LIMIT_VARIABLES["graph_bytes"])


def _trim(text: str) -> str:
    """Drop the blank lines a dump leaves after the module (torch_xla writes two before ``Graph Hash``), and a
    byte-order mark some editors put at the start of a file."""
    text = text.lstrip("\ufeff")
    if text.endswith("\n") and not text.endswith(("\n\n", "\r\n")):
        return text  # already so (most files): rstrip and + would copy the whole text twice (34 MB a side at 300K)
    return text.rstrip("\r\n") + "\n" if text else text
