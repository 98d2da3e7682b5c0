"""What the HTML report adds: time and page size, beside the same command without --html, in one run.

    python bench/html.py [--runs 3] [--big]

Inputs: the 33k-instruction pair of fixtures/big/ (`compare A B --json` vs `compare A B --json --html FILE`) and
a real fixture run (`explain-recompile fixtures/torch_xla/dtype_zeros_like/graphs.hlo.0 --json` with and without
`--html`). With `--big`, also the ~1 GB dump that bench/explain.py builds (explain-recompile, with and without).
Each figure is the best of N fresh subprocesses (wall seconds, peak RSS); the page size is printed beside the
input size. Prints figures only; nothing is asserted.
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


def run(argv: list[str]) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    seconds = time.perf_counter() - t0
    peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
    return seconds, peak * 1024


def best(argv: list[str], runs: int) -> tuple[float, int]:
    results = [run(argv) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def case(title: str, args: list[str], inputs_bytes: int, runs: int) -> None:
    cli = [sys.executable, "-m", "hlodiff.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        base_s, _ = best([*cli, *args, "--json"], runs)
        html_s, _ = best([*cli, *args, "--json", "--html", str(page)], runs)
        size = page.stat().st_size
    print(f"-- {title}")
    print(f"   without --html {base_s:6.2f} s   with --html {html_s:6.2f} s   (+{html_s - base_s:.2f} s, "
          f"{html_s / base_s:.2f}x)")
    print(f"   page {size / 1e3:,.1f} KB for {inputs_bytes / 1e6:,.2f} MB of dump text")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="also the ~1 GB dump of bench/explain.py")
    args = parser.parse_args()
    header("HTML report")
    import gzip

    a, b = BIG / "transformer24.hlo.gz", BIG / "transformer24_variant.hlo.gz"
    text_bytes = sum(len(gzip.decompress(p.read_bytes())) for p in (a, b))
    case("compare, 33k-instruction pair (fixtures/big)", ["compare", str(a), str(b)], text_bytes, args.runs)
    dump = REPO / "fixtures" / "torch_xla" / "dtype_zeros_like" / "graphs.hlo.0"
    case("explain-recompile, dtype_zeros_like fixture", ["explain-recompile", str(dump)], dump.stat().st_size,
         args.runs)
    if args.big:
        from explain import build

        path = build(250)
        case("explain-recompile, 1 GB dump (250 graphs, 3 keys)", ["explain-recompile", str(path)],
             path.stat().st_size, 1)


if __name__ == "__main__":
    main()
