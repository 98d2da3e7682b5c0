"""Builds the optional compiled accelerator (hlodiff/_accel_c/, the module hlodiff._accel) when a C compiler is
at hand.

Everything else is in pyproject.toml. ``optional=True``: without a compiler (or Python headers) the install goes
on and hlodiff runs its pure-Python code, with the same results (hlodiff.accel, tests/test_accel.py).
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

SOURCES = sorted(str(p.as_posix()) for p in Path("hlodiff/_accel_c").glob("*.c"))


def source_digest(folder: Path) -> str:
    """The digest hlodiff.accel recomputes at import (the same rule, kept in step by tests/test_accel.py): a module
    built from other sources than the ones beside it is not used (a tree updated without rebuilding)."""
    h = hashlib.blake2b(digest_size=16)
    for p in sorted(folder.glob("*.[ch]")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


setup(ext_modules=[Extension("hlodiff._accel", SOURCES, depends=["hlodiff/_accel_c/accel.h"], optional=True,
                             define_macros=[("HLODIFF_ACCEL_SOURCE_DIGEST",
                                             '"' + source_digest(Path("hlodiff/_accel_c")) + '"')],
                             extra_compile_args=["-O2", "-fvisibility=hidden"])])
