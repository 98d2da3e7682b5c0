"""What a short command does with the memory it frees (hlodiff._runtime.freed_memory_kept_for_command).

Each case runs in a fresh interpreter: the setting is process-wide and lasts, so the test process's own state
would decide the answer."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hlodiff.accel import native

REPO = Path(__file__).resolve().parents[1]
PROBE = """
import resource, sys
from hlodiff._runtime import freed_memory_kept_for_command
if sys.argv[1] == "kept":
    freed_memory_kept_for_command()
buffer = bytearray(16 << 20)  # a 16 MB text, say, read and freed
del buffer
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
buffer = bytearray(16 << 20)  # the next buffer of that size
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _glibc() -> bool:
    try:
        return hasattr(ctypes.CDLL(None), "mallopt") and sys.platform.startswith("linux")
    except OSError:
        return False


def _faults(mode: str, pure: bool = False) -> int:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("HLODIFF_PURE_PYTHON", None)
    if pure:
        env["HLODIFF_PURE_PYTHON"] = "1"
    out = subprocess.run([sys.executable, "-c", PROBE, mode], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(not _glibc() or native is None, reason="glibc's setting, taken with the accelerator")
def test_a_buffer_made_after_one_was_freed_reuses_its_pages():
    """Without the setting glibc unmaps the freed 16 MB and the next buffer faults in 4,096 fresh pages; with it the
    freed memory is the next buffer's."""
    assert _faults("default") > 2000
    assert _faults("kept") < 200


@pytest.mark.skipif(not _glibc(), reason="the setting is glibc's (mallopt)")
def test_the_pure_python_path_leaves_glibc_as_it_is():
    """Without the accelerator the setting is not taken (it raised that path's peak and saved no time)."""
    assert _faults("kept", pure=True) > 2000
