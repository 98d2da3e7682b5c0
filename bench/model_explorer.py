"""What --model-explorer-out adds to `compare`: time, peak memory and file sizes, beside the same command without
it, in one run.

    python bench/model_explorer.py [--runs 3]

Input: the 33k-instruction pair of fixtures/big/ (`compare A B -q` vs `compare A B -q --model-explorer-out DIR`).
Each figure is the best of N fresh subprocesses (wall seconds, peak RSS). Serving (--model-explorer) is not timed:
it waits for Ctrl-C, and the browser's own processing is Model Explorer's. Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BIG, REPO, header  # noqa: E402


def best(argv: list[str], runs: int) -> tuple[float, int]:
    """Fastest wall time of ``runs`` fresh subprocesses, and the largest peak RSS (bytes) among them."""
    times, peak = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        times.append(time.perf_counter() - t0)
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
    return min(times), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    header("Model Explorer files")
    cli = [sys.executable, "-m", "hlodiff.cli", "compare", str(BIG / "transformer24.hlo.gz"),
           str(BIG / "transformer24_variant.hlo.gz"), "-q"]
    with tempfile.TemporaryDirectory() as tmp:
        base_s, base_rss = best(cli, args.runs)
        me_s, me_rss = best([*cli, "--model-explorer-out", tmp], args.runs)
        sizes = {p.name: p.stat().st_size for p in sorted(Path(tmp).iterdir())}
    print("-- compare fixtures/big/transformer24.hlo.gz transformer24_variant.hlo.gz")
    print(f"   without {base_s:6.2f} s {base_rss / 2**20:7.0f} MiB   with --model-explorer-out {me_s:6.2f} s "
          f"{me_rss / 2**20:7.0f} MiB   (+{me_s - base_s:.2f} s, {me_s / base_s:.2f}x)")
    print("   " + ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in sizes.items()))


if __name__ == "__main__":
    main()
