"""hlodiff cost beside hlodiff inspect, on the 33k-instruction transformer trace and the scan-buffer dump.

    python bench/cost.py [--runs 5] [--profile]

Both commands are timed the way users run them, in fresh subprocesses (``hlodiff inspect PATH --json`` and
``hlodiff cost PATH --json``), best of ``--runs``, alternating so machine load hits both alike. The target from the
issue: cost within 2x of inspect on fixtures/big/transformer24.hlo.gz. The library figures (parse, then the cost
walks on the parsed module) say where cost's time goes. Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BIG, REPO, best_of, cold_caches, header, profile, read_gz, verdict  # noqa: E402


def wall(argv: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()[:300]}")
    return seconds


def cli_pair(path: Path, runs: int) -> tuple[float, float]:
    hlodiff = str(Path(sys.executable).with_name("hlodiff"))
    inspect, cost = [], []
    for _ in range(runs):
        inspect.append(wall([hlodiff, "inspect", str(path), "--json"]))
        cost.append(wall([hlodiff, "cost", str(path), "--json"]))
    return min(inspect), min(cost)


def library(path: Path, runs: int) -> None:
    from hlodiff.cost import module_cost
    from hlodiff.hlo.parser import parse_module

    text = read_gz(path)
    parse_s, module = best_of(lambda: parse_module(text), runs, setup=cold_caches)
    cost_s, cost = best_of(lambda: module_cost(module), runs)
    print(f"   library: parse {parse_s:.3f} s, cost walks on the parsed module {cost_s:.3f} s "
          f"({module.instruction_count():,} instructions; estimated peak {cost.estimated_peak_bytes / 1e6:.1f} MB, "
          f"{len(cost.copies)} copies)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    header("hlodiff cost benchmark")
    big = BIG / "transformer24.hlo.gz"
    scan = REPO / "fixtures" / "jax" / "scan_buffer" / "carry" / "dump"
    for label, path in (("24-layer transformer trace, 33,347 instructions", big),
                        ("JAX scan-buffer dump (optimized module + XLA memory report)", scan)):
        inspect_s, cost_s = cli_pair(path, args.runs)
        print(f"-- {label}: {path.relative_to(REPO)}")
        print(f"   hlodiff inspect --json : {inspect_s:6.3f} s   (baseline, same run)")
        print(f"   hlodiff cost --json    : {cost_s:6.3f} s   = {cost_s / inspect_s:.2f}x inspect   "
              f"{verdict(cost_s <= 2 * inspect_s)} within 2x")
    library(big, args.runs)
    if args.profile:
        from hlodiff.cost import module_cost
        from hlodiff.hlo.parser import parse_module

        text = read_gz(big)
        profile(lambda: module_cost(parse_module(text)))


if __name__ == "__main__":
    main()
