"""Live-tensor reports printed to stdout, at scale: a ~2 GB stdout log read by explain-recompile.

    python bench/reports.py [--gb 2.0]

The log is assembled once under bench/out/reports_2gb/ (gitignored) from a real run: the stdout.log of
fixtures/torch_xla/grad_norm_order/ (threshold-0 reports printed before each sync, with the script's own lines
between them) repeated until it reaches the size, beside that run's save-tensors file. A threshold-0 log grows by
hundreds of MB per step on a real model; this one has many more, smaller reports, which costs the reader more per
byte (more boundaries, headers and frames per MB).

Measured in fresh subprocesses, side by side: a plain chunked read of the log (the floor), and
`hlodiff explain-recompile graphs.hlo.0 --json`, which finds the log beside the dump by content, streams it and
aligns every report (the extra reports describe no graph of the 4-entry dump and are counted in one warning).
Target from issue 8: peak RSS under 500 MB. Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, verdict  # noqa: E402
from explain import PLAIN_READ, measure  # noqa: E402

OUT = REPO / "bench" / "out" / "reports_2gb"
RUN = REPO / "fixtures" / "torch_xla" / "grad_norm_order"


def build(gb: float) -> Path:
    target = OUT / "stdout.log"
    stamp = OUT / f"size-{gb}"
    if target.exists() and stamp.exists():
        return target
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copy(RUN / "graphs.hlo.0", OUT / "graphs.hlo.0")
    block = (RUN / "stdout.log").read_bytes()
    with open(target, "wb") as f:
        written = 0
        while written < gb * 1e9:
            f.write(block)
            written += len(block)
    for stale in OUT.glob("size-*"):
        stale.unlink()
    stamp.touch()
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=2.0)
    args = parser.parse_args()
    header("live-tensor reports in a stdout log")
    log = build(args.gb)
    size = log.stat().st_size
    reports = 4 * (size // (RUN / "stdout.log").stat().st_size)  # the run printed one report per step, 4 steps
    print(f"-- {log.relative_to(REPO)}: {size / 1e9:.2f} GB, {reports:,} reports "
          f"(real threshold-0 reports of fixtures/torch_xla/grad_norm_order, repeated)")
    hlodiff = str(Path(sys.executable).with_name("hlodiff"))
    # explain first: ru_maxrss of children is a running maximum, so the small process comes after
    cpu0 = _children_cpu()
    ex_s, ex_rss, code = measure([hlodiff, "explain-recompile", str(OUT / "graphs.hlo.0"), "--json"])
    cpu1 = _children_cpu()
    read_s, _, _ = measure([sys.executable, "-c", PLAIN_READ, str(log)])
    read_cpu = _children_cpu() - cpu1
    ex_cpu = cpu1 - cpu0
    print(f"   plain chunked read           : {read_s:7.2f} s wall, {read_cpu:6.2f} s CPU "
          f"({size / 1e6 / read_s:.0f} MB/s)")
    print(f"   hlodiff explain-recompile    : {ex_s:7.2f} s wall, {ex_cpu:6.2f} s CPU ({size / 1e6 / ex_cpu:.0f} MB/s "
          f"of CPU time); peak RSS {ex_rss / 1e6:.0f} MB; exit {code}")
    print("   (CPU time is what the reader costs; wall time also counts waiting for a core on a busy machine)")
    print(f"   {verdict(ex_rss < 500e6)} peak RSS under 500 MB ({ex_rss / 1e6:.0f} MB)")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
