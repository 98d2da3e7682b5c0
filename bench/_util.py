"""Helpers shared by the benchmarks (not a test module: nothing here asserts a timing)."""

from __future__ import annotations

import cProfile
import gc
import gzip
import io
import platform
import pstats
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIG = REPO / "fixtures" / "big"
OUT = REPO / "bench" / "out"  # gitignored: generated traces and temp files
SHARED_HLO = REPO.parent / "shared" / "corpus" / "hlo"

# Baseline "parser": one regex pass that finds instruction lines (name, shape, opcode) and nothing else.
SCAN_PATTERN = r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\S+)\s+([\w\-]+)\("


def read_gz(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode()


def cold_caches() -> None:
    """Empty hlodiff's process-wide memo tables so every run pays what a fresh CLI process pays.

    (Shapes are interned in ``hlodiff.hlo.shapes._cache``; metadata parsing is ``lru_cache``d.)"""
    from hlodiff.hlo import attributes, shapes

    cache = getattr(shapes, "_cache", None)
    if hasattr(cache, "clear"):
        cache.clear()
    for name in dir(attributes):
        fn = getattr(attributes, name)
        if callable(getattr(fn, "cache_clear", None)):
            fn.cache_clear()
    gc.collect()


def best_of(fn, runs: int, setup=None):
    """Call ``fn`` ``runs`` times (``setup`` before each, untimed); return (best seconds, last result)."""
    best, result = float("inf"), None
    for _ in range(runs):
        if setup:
            setup()
        result = None
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def mb(n_bytes: int) -> float:
    return n_bytes / 1e6


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def machine() -> str:
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    except OSError:
        cpu = platform.processor() or "?"
    import os

    return f"Python {platform.python_version()}, {platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} cpus"


def hlodiff_version() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "hlodiff"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{rev}{' + uncommitted changes in hlodiff/' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        return "?"


def header(title: str) -> None:
    print(f"== {title} ==")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}   hlodiff @ {hlodiff_version()}")
    import os

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {machine()}; load average before the run {load} (other work on the machine skews timings)")


def profile(fn, top: int = 25) -> None:
    """Run ``fn`` once under cProfile and print the functions with the largest own and cumulative time."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    for key in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(top)
        text = buf.getvalue()
        start = text.find("   ncalls")
        print(f"-- cProfile, top {top} by {key} --")
        print(text[start:].rstrip() if start >= 0 else text.rstrip())
    sys.stdout.flush()
