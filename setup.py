"""Builds the optional compiled accelerator (hlodiff/_accel.c) when a C compiler is at hand.

Everything else is in pyproject.toml. ``optional=True``: without a compiler (or Python headers) the install goes
on and hlodiff runs its pure-Python code, with the same results (hlodiff.accel, tests/test_accel.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("hlodiff._accel", ["hlodiff/_accel.c"], optional=True,
                             extra_compile_args=["-O2"])])
