"""explain-recompile over 8 ranks: serially, with --jobs 2, and on a local Dask cluster, side by side.

    python bench/ranks.py [--steps 6] [--runs 2]

The job is assembled once under bench/out/ranks_8/ (gitignored) from the real 24-layer transformer traces in
fixtures/big/ (torch_xla traces, 6.97 MB of HLO each), framed as torch_xla save-tensors entries the way
bench/explain.py frames them: one file per ordinal, graphs.hlo.0 ... graphs.hlo.7, each with --steps entries of
the transformer step; ordinal 5 runs the variant trace (one more output, permuted parameters) at step 3, as a rank
that computed an extra metric once would. Every rank therefore parses and canonicalizes at least one 33k-instruction
graph, which is what makes per-rank work worth spreading.

Measured in fresh subprocesses (wall time, CPU time of the process tree, exit status), best of --runs:
  * a plain chunked read of the 8 files (the floor);
  * `hlodiff explain-recompile BASE --json --jobs 1` (serial: the baseline);
  * `... --jobs 2` (worker processes);
  * `... --scheduler local --jobs 2` (a Dask LocalCluster of 2 worker processes, started by the command; its
    start-up is included, as a user pays it).
The three hlodiff outputs are compared byte for byte. Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, read_gz  # noqa: E402
from explain import entry  # noqa: E402

OUT = REPO / "bench" / "out" / "ranks_8"
RANKS = 8
ODD_RANK, ODD_STEP = 5, 3


def build(steps: int) -> Path:
    base = OUT / "graphs.hlo"
    marker = OUT / f"steps-{steps}"
    if marker.exists() and all((OUT / f"graphs.hlo.{r}").exists() for r in range(RANKS)):
        return base
    OUT.mkdir(parents=True, exist_ok=True)
    big = REPO / "fixtures" / "big"
    a = entry(read_gz(big / "transformer24.hlo.gz"), 40)
    b = entry(read_gz(big / "transformer24_variant.hlo.gz"), 40)
    for rank in range(RANKS):
        with open(OUT / f"graphs.hlo.{rank}", "w") as f:
            for step in range(steps):
                f.write(b if (rank == ODD_RANK and step == ODD_STEP) else a)
    for stale in OUT.glob("steps-*"):
        stale.unlink()
    marker.touch()
    return base


PLAIN_READ = ("import sys\nn = 0\nfor p in sys.argv[1:]:\n    f = open(p, 'rb')\n"
              "    while chunk := f.read(1 << 20):\n        n += len(chunk)\nprint(n)\n")


def timed(argv: list[str], runs: int) -> tuple[float, float, bytes, int]:
    """Best wall seconds, the CPU seconds (user + system, the command and every process it waited for) of that
    run, its stdout and exit status."""
    best, cpu, out, code = float("inf"), 0.0, b"", 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if wall < best:
            best = wall
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        out, code = proc.stdout, proc.returncode
        if code not in (0, 1):
            print(f"   ! {' '.join(argv[1:])} exited {code}: {proc.stderr.decode()[-400:]}")
    return best, cpu, out, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    header("hlodiff explain-recompile over 8 ranks: serial, --jobs 2, Dask LocalCluster")
    base = build(args.steps)
    files = [str(OUT / f"graphs.hlo.{r}") for r in range(RANKS)]
    size = sum(Path(p).stat().st_size for p in files)
    print(f"-- {base.relative_to(REPO)}.0-7: {RANKS} ranks x {args.steps} entries, {size / 1e6:.0f} MB; rank "
          f"{ODD_RANK} runs the variant graph at step {ODD_STEP}; best of {args.runs}")
    hlodiff = str(Path(sys.executable).with_name("hlodiff"))
    cmd = [hlodiff, "explain-recompile", str(base), "--json"]
    read_s, _, _, _ = timed([sys.executable, "-c", PLAIN_READ, *files], args.runs)
    serial_s, serial_cpu, serial_out, code = timed(cmd + ["--jobs", "1"], args.runs)
    jobs_s, jobs_cpu, jobs_out, _ = timed(cmd + ["--jobs", "2"], args.runs)
    dask_s, dask_cpu, dask_out, _ = timed(cmd + ["--scheduler", "local", "--jobs", "2"], args.runs)
    print(f"   {'plain read of the 8 files':<36}: {read_s:7.2f} s")
    print(f"   {'serial (--jobs 1, the baseline)':<36}: {serial_s:7.2f} s   cpu {serial_cpu:6.1f} s   exit {code}")
    for label, wall, cpu, out in (("--jobs 2 (worker processes)", jobs_s, jobs_cpu, jobs_out),
                                  ("--scheduler local (Dask, 2 workers)", dask_s, dask_cpu, dask_out)):
        print(f"   {label:<36}: {wall:7.2f} s   cpu {cpu:6.1f} s   {serial_s / wall:.2f}x the serial speed; output "
              f"{'identical' if out == serial_out else 'DIFFERENT'}")
    idle = max(0.0, len(os.sched_getaffinity(0)) - os.getloadavg()[0])
    print(f"   (wall time can only shrink with idle CPUs: load average now {os.getloadavg()[0]:.2f} on "
          f"{len(os.sched_getaffinity(0))} CPUs, about {idle:.1f} idle)")

if __name__ == "__main__":
    main()
