"""Process-level tuning shared by the hot paths."""

from __future__ import annotations

import gc
from contextlib import contextmanager

_depth = 0


@contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector while a phase allocates hundreds of thousands of objects.

    Parsing and comparing a 35k-instruction module builds no reference cycles that need collecting, yet the
    collector would walk the whole growing heap again and again (20% of a large compare). Reference counting
    still frees everything; the collector resumes afterwards if it was on.
    """
    global _depth
    was_enabled = gc.isenabled()
    _depth += 1
    gc.disable()
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and was_enabled:
            gc.enable()


def collector_off_for_command() -> None:
    """Turn the cyclic collector off for the rest of a short command that holds a bounded set of objects (two
    modules being compared): each phase pauses it anyway, and between phases it would walk both parsed modules
    again for nothing (0.15 s of comparing two 33k-instruction modules). Reference counting still frees memory."""
    gc.disable()



def freed_memory_kept_for_command() -> None:
    """Keep memory the process frees for its own later allocations, for the rest of a short command (glibc only;
    elsewhere nothing changes). By default glibc maps each allocation past 128 KB (a big dict's table, a file's
    text) on its own and unmaps it when freed, and gives the top of the heap back past 128 KB free: every dict that
    grows, and every buffer made after another was freed, then touches fresh pages, each a page fault the kernel
    must zero. Comparing the 300K-instruction pair took 144K faults for a 366 MB peak; kept, 105K (0.04-0.1 s of
    system time), the peak the same. Allocations past 32 MB (glibc's limit for this setting) are still mapped
    apart. With the accelerator only: the pure-Python parse's many short-lived allocations leave holes in a heap
    that is no longer trimmed (the 17K pair's peak 61 -> 68 MB) and it gained no time."""
    from hlodiff.accel import native

    if native is None:
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: the largest glibc takes
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: what the command frees stays for its next allocations

@contextmanager
def sparse_collections(threshold: int = 20_000):
    """Run the cyclic collector less often while a long analysis builds up objects it keeps (a summary per graph of a
    run): with the default threshold (700 allocations) the collector walked the growing heap so often that explaining
    8,000 distinct graphs spent a quarter of its time in it. Garbage cycles are still collected, only in fewer, larger
    batches (peak memory within 1 % on that run)."""
    old = gc.get_threshold()
    gc.set_threshold(threshold, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def silence_stdout() -> None:
    """The reader closed the pipe (``hlodiff inspect ... | head``): what is left to print goes to /dev/null, so that
    neither the rest of the report nor the interpreter's last flush fails, and the command's exit status stands
    (a failed flush at exit would turn it into 1 or 120, a wrong verdict for a script with ``set -o pipefail``)."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def flush_stdout() -> None:
    """Flush the report now, while a closed pipe can still be told from a failure."""
    import sys

    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except (OSError, ValueError, AttributeError):
        pass
