"""Re-runs a JAX fixture script of issue 8 (real JAX 0.10.2 on the CPU) and checks it reproduces the committed
fixture byte for byte: the stderr log as JAX printed it, the dumped HLO text and protos (paths scrubbed inside the
protos too), and truth.json."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "fixtures" / "jax" / "weak_type.py"
COMMITTED = ROOT / "fixtures" / "jax" / "weak_type"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")


def test_weak_type_fixture_reproduces(tmp_path):
    out = tmp_path / "weak_type"  # same base name: scrubbed paths name it /home/user/project/weak_type
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = sorted(p.relative_to(COMMITTED) for p in COMMITTED.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert any(str(f).endswith(".hlo.pb") for f in files)
    for name in files:
        assert (out / name).read_bytes() == (COMMITTED / name).read_bytes(), name
