"""The optional compiled accelerator, or ``None``.

``hlodiff/_accel_c/`` runs the per-instruction hot loops of parsing and hashing in C when the install could compile
it (``setup.py`` builds it with ``optional=True``). Every function in it has a pure-Python twin that stays the
reference and the fallback; results are the same either way (``tests/test_accel.py`` runs both on the corpus).
``HLODIFF_PURE_PYTHON=1`` turns the accelerator off, to compare or to rule it out.

A module built from other C sources than the ones beside the package (a checkout updated without rebuilding) is
not used: its functions may lack one the Python code now calls, or take other arguments, and a run would stop with
an internal error (review 7). The Python code runs instead, and :data:`stale` says so.
"""

from __future__ import annotations

import os
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "_accel_c"


def source_digest(folder: Path) -> str | None:
    """The digest setup.py compiles into the module (``SOURCE_DIGEST``), of the C sources in ``folder``; None
    when the sources are not there (an installed wheel ships the module only)."""
    files = sorted(folder.glob("*.[ch]")) if folder.is_dir() else []
    if not files:
        return None
    try:  # what hashlib.blake2b is, without loading OpenSSL's module at start-up (as graph/fingerprint.py)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import blake2b
    h = blake2b(digest_size=16)
    for p in files:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def usable(module, folder: Path = SOURCES) -> bool:
    """The built module matches the sources beside it, or there are none to compare with."""
    expected = source_digest(folder)
    return expected is None or getattr(module, "SOURCE_DIGEST", None) == expected


native = None
stale = False
"""A module was built, but from other sources than these: rebuild it (``pip install -e .``) to run the C code."""
if os.environ.get("HLODIFF_PURE_PYTHON", "") in ("", "0"):
    try:
        from hlodiff import _accel as native  # type: ignore[no-redef]
    except ImportError:  # not built (no compiler at install time): the Python code runs
        native = None
    if native is not None and not usable(native):
        native, stale = None, True
