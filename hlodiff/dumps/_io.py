"""Opening dump files: plain or gzip, sniffed by content, with one-line errors for anything unreadable.

Dumps are read as bytes so that scanners can keep exact byte offsets (records re-read their HLO text later by
offset instead of holding it), and so that odd bytes in a path or a comment never abort a scan.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from typing import BinaryIO, Iterator

from hlodiff.errors import HlodiffError, InputWarning

GZIP_MAGIC = b"\x1f\x8b"
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


def decode(data: bytes) -> str:
    """Bytes of a dump as text; undecodable bytes (a mangled path in metadata) become U+FFFD instead of failing."""
    return data.decode("utf-8", "replace")


def check_text(path: str, head: bytes) -> None:
    """Reject empty and binary files with the one-line error the CLI prints."""
    if not head:
        raise HlodiffError("empty file", path=path)
    nul = head.find(b"\0")
    if nul >= 0:
        raise HlodiffError(f"not an HLO dump: binary data (NUL byte at offset {nul}){_binary_hint(path)}", path=path)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A stray Latin-1 byte in a user's path is text with a typo, not binary: only frequent invalid or control
        # bytes make a file binary (the text is decoded with replacement characters later).
        text = head.decode("utf-8", "replace")
        bad = text.count("\ufffd") + sum(1 for c in text if c < " " and c not in "\t\n\r\f")
        if bad > max(8, len(text) // 100):
            message = f"not an HLO dump: binary data (invalid UTF-8 at offset {exc.start})"
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


def _binary_hint(path: str) -> str:
    if path.endswith(".pb"):
        return "; HLO protos are not supported, dump text (--xla_dump_hlo_as_text)"
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


def lines(f: BinaryIO, path: str, warnings: list[InputWarning] | None) -> Iterator[bytes]:
    """The binary lines of an open dump. A gzip stream that ends early (a dump copied while being compressed)
    or holds corrupt data stops the iteration with a warning instead of an exception: what was read is good."""
    if not isinstance(f, gzip.GzipFile):
        return iter(f)
    return _gzip_lines(f, path, warnings)


def _gzip_lines(f: gzip.GzipFile, path: str, warnings: list[InputWarning] | None) -> Iterator[bytes]:
    count = 0
    try:
        for line in f:
            count += 1
            yield line
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        if warnings is not None:
            warnings.append(InputWarning(f"gzip data cut off or corrupt ({exc}); read up to here", path, count))


def text_lines(path: str, warnings: list[InputWarning] | None) -> Iterator[str]:
    """Decoded lines of a side-channel text file (plain or gzip), streaming, after the one-line checks the CLI
    prints for a missing, empty or binary file."""
    if not os.path.exists(path):
        raise missing_path_error(path)
    if not os.path.isfile(path):
        raise HlodiffError("not a regular file (a pipe or a device?)", path=path)
    check_text(path, read_head(path))
    with open_binary(path) as f:
        for line in lines(f, path, warnings):
            yield decode(line)
