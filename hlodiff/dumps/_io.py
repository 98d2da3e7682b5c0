"""Opening dump files: plain or gzip, sniffed by content, with one-line errors for anything unreadable.

Dumps are read as bytes so that scanners can keep exact byte offsets (records re-read their HLO text later by
offset instead of holding it), and so that odd bytes in a path or a comment never abort a scan.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from typing import BinaryIO, Iterator

from hlodiff.dumps.limits import GZIP_FLOOR, LIMIT_VARIABLES, MIB, Limits, limit_error
from hlodiff.errors import HlodiffError, InputWarning

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte-order mark, which Windows editors put at the start of a file; it is not part of the dump."""
SNIFF_BYTES = 64 * 1024
"""How much of a file is looked at to decide what it is. A save-tensors header lists every Python frame of the
sync, which can take a few KB, so this is generous."""


def is_gzip(path: str) -> bool:
    """Whether the file starts with the gzip magic number (the name is not trusted: users rename dumps)."""
    with _open_raw(path) as f:
        return f.read(2) == GZIP_MAGIC


def open_binary(path: str) -> BinaryIO:
    """Open ``path`` for binary reading, decompressing transparently when it is gzip data."""
    if is_gzip(path):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return _open_raw(path)


def read_head(path: str, size: int = SNIFF_BYTES) -> bytes:
    """The first ``size`` bytes of the (decompressed) content."""
    chunks: list[bytes] = []
    got = 0
    try:
        with open_binary(path) as f:
            while got < size and (chunk := f.read(min(8192, size - got))):
                chunks.append(chunk)
                got += len(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise _os_error(path, exc) from None
        if not chunks:  # a gzip stream cut short still has a readable beginning: the scan warns later
            raise HlodiffError(f"not an HLO dump: corrupt gzip data ({exc})", path=path) from None
    return b"".join(chunks)


def names_in(folder: str) -> list[str]:
    """The names in a folder, sorted; none when it cannot be listed (finding files is best effort: the paths the
    user gave are checked by the readers, with their one-line errors)."""
    try:
        return sorted(os.listdir(folder or "."))
    except OSError:
        return []


def decode(data: bytes) -> str:
    """Bytes of a dump as text; undecodable bytes (a mangled path in metadata) become U+FFFD instead of failing."""
    return data.decode("utf-8", "replace")


def check_text(path: str, head: bytes, what: str = "an HLO dump") -> None:
    """Reject empty and binary files with the one-line error the CLI prints."""
    if not head:
        raise HlodiffError("empty file", path=path)
    packed = _packed_kind(head)
    if packed is not None:
        raise HlodiffError(f"not {what}: {packed}", path=path)
    nul = head.find(b"\0")
    if nul >= 0 and not (nul > 0 and is_nul_tail(head[nul:])):  # a NUL tail is damage the readers skip, warning
        raise HlodiffError(f"not {what}: binary data (NUL byte at offset {nul}){_binary_hint(path)}", path=path)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A stray Latin-1 byte in a user's path is text with a typo, not binary: only frequent invalid or control
        # bytes make a file binary (the text is decoded with replacement characters later).
        text = head.decode("utf-8", "replace")
        bad = text.count("\ufffd") + sum(1 for c in text if c < " " and c not in "\t\n\r\f")
        if bad > max(8, len(text) // 100):
            message = f"not {what}: binary data (invalid UTF-8 at offset {exc.start})"
            raise HlodiffError(message, path=path) from None


_BLOCK_COMMENT_RE = re.compile(rb"/\*.*?\*/", re.S)


def meaningful_lines(head: bytes, limit: int = 200) -> list[bytes]:
    """Up to ``limit`` non-blank lines of the sniff window, without ``/* */`` and ``//`` comments (FileCheck and
    RUN lines, licence headers)."""
    out = []
    for line in _BLOCK_COMMENT_RE.sub(b" ", head).splitlines():
        stripped = line.split(b"//", 1)[0].strip()
        if stripped:
            out.append(stripped)
            if len(out) >= limit:
                break
    return out


def _packed_kind(head: bytes) -> str | None:
    """A dump shared as an archive or in a compression hlodiff does not undo (gzip is undone before this)."""
    if head[257:262] == b"ustar":
        return "a tar archive; extract it first (tar xf FILE) and pass the folder"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "a zip archive; extract it first (unzip FILE) and pass the folder"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz-compressed; decompress it first (xz -dk FILE)"
    if head.startswith(b"BZh") and head[4:10] == b"1AY&SY":
        return "bzip2-compressed; decompress it first (bunzip2 -k FILE)"
    return None


def _binary_hint(path: str) -> str:
    if path.endswith(".pb"):
        return ("; an HLO proto is read only for its stacks, beside the module's text: dump both "
                "(--xla_dump_hlo_as_text --xla_dump_hlo_as_proto) and pass the folder")
    return ""


def _open_raw(path: str) -> BinaryIO:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise _os_error(path, exc) from None


def _os_error(path: str, exc: OSError) -> HlodiffError:
    """An OS error as a user error; a missing save-tensors base name gets a hint about the ordinal suffix."""
    if isinstance(exc, FileNotFoundError):
        return HlodiffError("no such file or directory" + _ordinal_hint(path), path=path)
    return HlodiffError(exc.strerror or str(exc), path=path)


def _ordinal_hint(path: str) -> str:
    """torch_xla writes XLA_SAVE_TENSORS_FILE=P to ``P.<ordinal>``, so users often name the file without it."""
    for ordinal in range(8):
        candidate = f"{path}.{ordinal}"
        if os.path.isfile(candidate):
            return f" (torch_xla appends the device ordinal to XLA_SAVE_TENSORS_FILE: did you mean {candidate}?)"
    return ""


def missing_path_error(path: str) -> HlodiffError:
    """The error for a path that does not exist."""
    return HlodiffError("no such file or directory" + _ordinal_hint(path), path=path)


class OverlongLine(bytes):
    """What :func:`lines` yields, with ``skip_long``, in place of a line longer than ``line_bytes``: its content is
    not kept (empty), ``size`` is how many bytes it had (so offsets after it stay right), ``lineno`` and ``error``
    (the located "line too long") say where. A reader that knows which graph the line is in skips only that one."""

    size: int
    lineno: int
    error: HlodiffError


def lines(f: BinaryIO, path: str, warnings: list[InputWarning] | None,
          limits: Limits | None = None, *, skip_long: bool = False) -> Iterator[bytes]:
    """The binary lines of an open dump, within :class:`Limits`: a line longer than ``line_bytes``, more than
    ``blank_lines`` blank lines in a row, or gzip data expanding past its ratio stop the scan with a located error
    as soon as they are seen (nothing unbounded is ever held).

    A gzip stream that ends early (a dump copied while being compressed) or holds corrupt data stops the
    iteration with a warning instead of an exception: what was read is good.

    ``skip_long``: a line longer than ``line_bytes`` but shorter than ``graph_bytes`` is read past (nothing of it
    kept) and stands as an :class:`OverlongLine`, so that the damage costs the graph it is in, not the rest of the
    file; a longer one is still the located error."""
    limits = limits or Limits.from_env()
    budget = None
    if isinstance(f, gzip.GzipFile):
        try:
            compressed = os.fstat(f.fileobj.fileno()).st_size  # type: ignore[union-attr]
        except (OSError, AttributeError, ValueError):
            compressed = 0
        budget = max(GZIP_FLOOR, compressed * limits.gzip_ratio)
    if _bare_cr(f):
        f = io.BufferedReader(_CrAsLf(f))  # type: ignore[arg-type]
    return _bounded_lines(f, path, warnings, limits, budget, skip_long)


def _bare_cr(f: BinaryIO) -> bool:
    """Lines end in a bare CR (classic Mac), as XLA's parser accepts (its SlashSlashCommentMacEolFormat test)."""
    peek = getattr(f, "peek", None)
    head = peek(SNIFF_BYTES)[:SNIFF_BYTES] if peek is not None else b""
    return b"\r" in head and b"\n" not in head


_CR_TO_LF = bytes.maketrans(b"\r", b"\n")


class _CrAsLf(io.RawIOBase):
    """A file whose bare CRs read as LFs: one byte for one, so byte offsets into the file stay true (records
    re-read their text by offset, and the parser reads a CR as a line end)."""

    def __init__(self, f: BinaryIO):
        self._f = f

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        data = self._f.read(len(buffer))
        n = len(data)
        buffer[:n] = data.translate(_CR_TO_LF)
        return n

    def close(self) -> None:
        super().close()
        self._f.close()


def is_nul_tail(data: bytes | str) -> bool:
    """Whether ``data`` (from the first NUL byte on) is NUL padding alone: what a crash leaves at the end of a file
    on ext4 or xfs (the size was updated, the data blocks were not)."""
    return not data.strip(b"\0" if isinstance(data, bytes) else "\0")


def nul_tail_warning(path: str, line: int) -> InputWarning:
    return InputWarning("the file ends in NUL bytes from here (what a crash leaves behind): the text before them is "
                        "used", path, line)


def _only_nul_left(f: BinaryIO) -> bool:
    """Read on (1 MiB at a time, nothing kept) and tell whether only NUL bytes are left."""
    while chunk := f.read(MIB):
        if chunk.strip(b"\0"):
            return False
    return True


def _bounded_lines(f: BinaryIO, path: str, warnings: list[InputWarning] | None, limits: Limits,
                   budget: int | None, skip_long: bool = False) -> Iterator[bytes]:
    readline = f.readline
    max_line, max_blank = limits.line_bytes, limits.blank_lines
    lineno = blanks = total = 0
    try:
        while line := readline(max_line + 1):
            lineno += 1
            n = len(line)
            if line[-1:] != b"\n" and (nul := line.find(b"\0")) >= 0 and is_nul_tail(line[nul:]) \
                    and (n <= max_line or _only_nul_left(f)):
                if nul:
                    yield line[:nul]  # the line the crash cut
                if warnings is not None:
                    warnings.append(nul_tail_warning(path, lineno))
                return
            if n <= 2 and (line == b"\n" or line == b"\r\n"):
                blanks += 1
                if blanks > max_blank:
                    raise limit_error(path, lineno, f"more than {max_blank:,} blank lines in a row",
                                      max_blank, LIMIT_VARIABLES["blank_lines"])
            else:
                blanks = 0
                if n > max_line:
                    error = limit_error(path, lineno, "line too long", max_line, LIMIT_VARIABLES["line_bytes"])
                    error.col = max_line + 1  # where the limit was hit
                    if not skip_long:
                        raise error
                    line = _read_past(readline, line, max_line, limits.graph_bytes, error, lineno)
                    n = line.size
            if budget is not None:
                total += n
                if total > budget:
                    raise limit_error(path, lineno, f"gzip data expands to more than {limits.gzip_ratio}x its "
                                      "size (a gzip bomb?)", budget, LIMIT_VARIABLES["gzip_ratio"])
            yield line
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        if warnings is not None:
            warnings.append(InputWarning(f"gzip data cut off or corrupt ({exc}); read up to here", path, lineno))


def _read_past(readline, head: bytes, max_line: int, most: int, error: HlodiffError, lineno: int) -> OverlongLine:
    """Read the rest of an over-long line (``max_line + 1`` bytes at a time, nothing kept) up to ``most`` bytes in
    all; a line longer than that is the error (a 10 GB line is not a graph's damage but the whole file's)."""
    size, last = len(head), head
    while last[-1:] != b"\n":
        last = readline(max_line + 1)
        if not last:
            break
        size += len(last)
        if size > most:
            raise error
    skipped = OverlongLine()
    skipped.size, skipped.lineno, skipped.error = size, lineno, error
    return skipped


def check_readable(path: str) -> None:
    """The one-line checks the CLI prints for a side file that is missing, not a regular file, empty or binary."""
    if not os.path.exists(path):
        raise missing_path_error(path)
    if not os.path.isfile(path):
        raise HlodiffError("not a regular file (a pipe or a device?)", path=path)
    check_text(path, read_head(path), "a text log")


def found_text_files(paths: list[str], warnings: list[InputWarning] | None) -> list[str]:
    """The side files hlodiff found itself (by name, beside a dump) that can be read as text. A file the user did
    not name costs only itself: an empty one (the stderr of a run that warned about nothing) is no evidence and
    is passed over in silence, a binary or unreadable one with a warning; the dump is still explained."""
    kept = []
    for path in paths:
        try:
            check_readable(path)
        except HlodiffError as err:
            if err.message != "empty file" and warnings is not None:
                warnings.append(InputWarning(f"{err.message}; not read", err.path or path, err.line))
            continue
        kept.append(path)
    return kept


def text_lines(path: str, warnings: list[InputWarning] | None) -> Iterator[str]:
    """Decoded lines of a side-channel text file (plain or gzip), streaming, after the one-line checks the CLI
    prints for a missing, empty or binary file."""
    for line in raw_lines(path, warnings):
        yield decode(line)


def raw_lines(path: str, warnings: list[InputWarning] | None) -> Iterator[bytes]:
    """:func:`text_lines` undecoded, for readers that skip most lines of multi-GB logs without decoding them."""
    check_readable(path)
    with open_binary(path) as f:
        yield from up_to_damage(lines(f, path, warnings), path, warnings)


def up_to_damage(it: Iterator[bytes], path: str, warnings: list[InputWarning] | None) -> Iterator[bytes]:
    """The lines of a side file up to where it cannot be read on (a line past its limit, a run of blank lines):
    damage is local, so that is a warning naming the file and line and the lines before it are used, with every
    other file of the run (with no warning list to report to, the error stands)."""
    try:
        yield from it
    except HlodiffError as err:
        if warnings is None:
            raise
        warnings.append(InputWarning(f"{err.message}; the rest of this file is skipped", err.path or path,
                                     err.line))


class Packer:
    """A graph's text compressed as it streams by, for gzip input (which cannot be re-read by offset).

    Lines are compressed in 1 MiB batches, so a long graph costs its compressed size, not its text, while it is
    read; the last few KB stay at hand for the "does it end like a whole module" check.
    """

    __slots__ = ("_z", "_parts", "_pending", "_size", "_tail")
    BATCH = 1024 * 1024
    TAIL = 4096

    def __init__(self) -> None:
        self._z = zlib.compressobj(1)
        self._parts: list[bytes] = []
        self._pending: list[bytes] = []
        self._size = 0
        self._tail = b""

    def append(self, line: bytes) -> None:
        self._pending.append(line)
        self._size += len(line)
        if self._size >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        data = b"".join(self._pending)
        self._tail = (self._tail + data)[-self.TAIL:]
        self._parts.append(self._z.compress(data))
        self._pending.clear()
        self._size = 0

    def finish(self) -> tuple[bytes, bytes]:
        """The zlib-compressed text and its last few KB."""
        self._flush()
        self._parts.append(self._z.flush())
        return b"".join(self._parts), self._tail
