"""Builds the optional compiled accelerator (hlodiff/_accel_c/, the module hlodiff._accel) when a C compiler is
at hand.

Everything else is in pyproject.toml. ``optional=True``: without a compiler (or Python headers) the install goes
on and hlodiff runs its pure-Python code, with the same results (hlodiff.accel, tests/test_accel.py).
"""

from pathlib import Path

from setuptools import Extension, setup

SOURCES = sorted(str(p.as_posix()) for p in Path("hlodiff/_accel_c").glob("*.c"))

setup(ext_modules=[Extension("hlodiff._accel", SOURCES, depends=["hlodiff/_accel_c/accel.h"], optional=True,
                             extra_compile_args=["-O2", "-fvisibility=hidden"])])
