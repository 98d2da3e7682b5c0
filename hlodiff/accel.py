"""The optional compiled accelerator, or ``None``.

``hlodiff/_accel_c/`` runs the per-instruction hot loops of parsing and hashing in C when the install could compile
it (``setup.py`` builds it with ``optional=True``). Every function in it has a pure-Python twin that stays the
reference and the fallback; results are the same either way (``tests/test_accel.py`` runs both on the corpus).
``HLODIFF_PURE_PYTHON=1`` turns the accelerator off, to compare or to rule it out.
"""

from __future__ import annotations

import os

native = None
if os.environ.get("HLODIFF_PURE_PYTHON", "") in ("", "0"):
    try:
        from hlodiff import _accel as native  # type: ignore[no-redef]
    except ImportError:  # not built (no compiler at install time): the Python code runs
        native = None
