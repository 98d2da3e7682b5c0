"""Parser throughput and memory, beside a one-regex scan of the same text in the same run.

    python bench/parse.py [--runs 5] [--profile]

Inputs: (a) fixtures/big/transformer24.hlo.gz (a real 33k-instruction torch_xla trace; decompressed in memory
first, only the parse is timed) and (b) ../shared/corpus/hlo/nv_maxtext_1n1g_jit_train_step_before_optimization.hlo
(skipped if absent). For each: best-of-N MB/s of ``parse_module`` and of the baseline scan, their ratio, and the
tracemalloc peak during one extra parse divided by the text size. Caches are emptied before every run.
Second baseline (needs the optional ``jax`` extra): XLA's own C++ parser through jaxlib's ``hlo_module_from_text``
(parser only, no verifier), timed the same way on the same text.
Targets (from the issues): parse >= 25 MB/s, parse time <= 8x scan time, peak memory <= 10x the text, parse time
<= 1.2x XLA's parser. Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import BIG, SCAN_PATTERN, SHARED_HLO, best_of, cold_caches, header, mb, profile, read_gz, verdict  # noqa: E402

from hlodiff.hlo import parse_module  # noqa: E402

TARGET_MBS, TARGET_RATIO, TARGET_MEM, TARGET_XLA = 25.0, 8.0, 10.0, 1.2
SCAN = re.compile(SCAN_PATTERN, re.M)


def inputs() -> list[tuple[str, str | None]]:
    maxtext = SHARED_HLO / "nv_maxtext_1n1g_jit_train_step_before_optimization.hlo"
    return [
        ("fixtures/big/transformer24.hlo.gz (torch_xla, decompressed)", read_gz(BIG / "transformer24.hlo.gz")),
        (f"../shared/corpus/hlo/{maxtext.name} (JAX MaxText)",
         maxtext.read_text() if maxtext.exists() else None),
    ]


def xla_parser():
    """jaxlib's binding of XLA's HLO text parser, or ``None`` without the jax extra."""
    try:
        from jaxlib import _hlo
    except ImportError:
        return None
    return getattr(_hlo, "hlo_module_from_text", None)


def parse_peak(text: str) -> int:
    """tracemalloc peak while parsing (the text itself is allocated before tracing starts)."""
    cold_caches()
    tracemalloc.start()
    tracemalloc.reset_peak()
    module = parse_module(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del module
    gc.collect()
    return peak


def bench(label: str, text: str, runs: int, do_profile: bool) -> list[bool]:
    size = len(text.encode())
    t_parse, module = best_of(lambda: parse_module(text), runs, setup=cold_caches)
    n_inst = sum(len(c.instructions) for c in module.computations)
    n_comp = len(module.computations)
    del module
    gc.collect()
    t_scan, found = best_of(lambda: SCAN.findall(text), runs)
    peak = parse_peak(text)
    parse_mbs, scan_mbs = mb(size) / t_parse, mb(size) / t_scan
    ratio, mem = t_parse / t_scan, peak / len(text)
    print(f"\n-- {label}")
    print(f"   text: {mb(size):.2f} MB, {text.count(chr(10)):,} lines, {n_comp} computations, "
          f"{n_inst:,} instructions parsed ({len(found):,} lines matched by the scan)")
    print(f"   parse_module : {t_parse * 1e3:8.1f} ms  {parse_mbs:7.1f} MB/s   (best of {runs}, cold caches)")
    print(f"   regex scan   : {t_scan * 1e3:8.1f} ms  {scan_mbs:7.1f} MB/s   (best of {runs})")
    print(f"   parse / scan : {ratio:.1f}x")
    print(f"   parse peak memory (tracemalloc): {mb(peak):.1f} MB = {mem:.1f}x text")
    results = [parse_mbs >= TARGET_MBS, ratio <= TARGET_RATIO, mem <= TARGET_MEM]
    xla = xla_parser()
    if xla is None:
        print("   XLA parser   : jaxlib not installed, skipped")
    else:
        t_xla, _ = best_of(lambda: xla(text), runs)
        results.append(t_parse / t_xla <= TARGET_XLA)
        print(f"   XLA parser   : {t_xla * 1e3:8.1f} ms  {mb(size) / t_xla:7.1f} MB/s   (jaxlib hlo_module_from_text, "
              f"best of {runs})")
        print(f"   {verdict(results[-1])} parse <= {TARGET_XLA:g}x XLA's parser ({t_parse / t_xla:.2f}x)")
    print(f"   {verdict(results[0])} parse >= {TARGET_MBS:g} MB/s ({parse_mbs:.1f})   "
          f"{verdict(results[1])} parse <= {TARGET_RATIO:g}x scan ({ratio:.1f}x)   "
          f"{verdict(results[2])} memory <= {TARGET_MEM:g}x text ({mem:.1f}x)")
    if do_profile:
        cold_caches()
        profile(lambda: parse_module(text))
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per measurement; the best is kept (default 5)")
    ap.add_argument("--profile", action="store_true", help="also print a cProfile of one parse per input")
    args = ap.parse_args(argv)
    header("hlodiff parse benchmark")
    print("MB = 10^6 bytes of UTF-8 text. Baseline scan: one re.findall(re.M) of")
    print(f"   {SCAN_PATTERN}")
    t0 = time.perf_counter()
    misses = 0
    for label, text in inputs():
        if text is None:
            print(f"\n-- {label}: not found, skipped")
            continue
        misses += sum(not ok for ok in bench(label, text, args.runs, args.profile))
    print(f"\n{misses} target(s) missed; total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
