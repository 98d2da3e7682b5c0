"""explain-recompile on a ~1 GB torch_xla save-tensors dump: 250 graphs, 3 distinct cache keys.

    python bench/explain.py [--graphs 250] [--keep]

The dump is assembled once under bench/out/explain_1gb/ (gitignored) from real torch_xla traces: the committed
24-layer transformer and its variant (fixtures/big/) and a 12-layer trace (generated with
fixtures/gen_big_transformer.py, nothing compiled). Each entry is framed as torch_xla frames save-tensors
entries (header, frames, `## BEGIN_GRAPH`, HLO, `Graph Hash:`, `## END_GRAPH`), with the Graph Hash taken from
the text, so the 250 entries carry 3 cache keys: 200 steps of the 12-layer graph, then the two 24-layer graphs
alternating for 50 (about 1.05 GB in all).

Measured in fresh subprocesses, side by side: a plain chunked read of the file (the floor for anything that
looks at every byte) and `hlodiff explain-recompile FILE --json`; wall time and peak RSS of each.
Target from the issue: under 20 s and under 1 GB peak memory. Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, read_gz, verdict  # noqa: E402
from compare import trace_dir  # noqa: E402

OUT = REPO / "bench" / "out" / "explain_1gb"
FRAMES = ("  sync (/usr/lib/python3.11/site-packages/torch_xla/torch_xla.py:87)\n"
          "  <module> (/home/user/project/train.py:{line})\n")


def entry(text: str, line: int) -> str:
    graph_hash = hashlib.md5(text.encode()).hexdigest()
    return (f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n{FRAMES.format(line=line)}\n"
            f"Root Hashes: ({graph_hash})\n\n## BEGIN_GRAPH\n{text.rstrip()}\n\n\n"
            f"Graph Hash: {graph_hash}\n\n## END_GRAPH\n\n")


def build(graphs: int) -> Path:
    target = OUT / "graphs.hlo.0"
    if target.exists() and (OUT / f"count-{graphs}").exists():
        return target
    OUT.mkdir(parents=True, exist_ok=True)
    big = REPO / "fixtures" / "big"
    a = read_gz(big / "transformer24.hlo.gz")
    b = read_gz(big / "transformer24_variant.hlo.gz")
    small = read_gz(trace_dir(12) / "transformer24.hlo.gz")
    entries = [entry(small, 40), entry(a, 40), entry(b, 40)]
    with open(target, "w") as f:
        for i in range(graphs):
            f.write(entries[0] if i < graphs * 4 // 5 else entries[1 + (i % 2)])
    for stale in OUT.glob("count-*"):
        stale.unlink()
    (OUT / f"count-{graphs}").touch()
    return target


def measure(argv: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in bytes and exit status of a fresh subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:
        peak = before  # ru_maxrss is the maximum over all children so far; report it honestly
    return seconds, peak * 1024, proc.returncode


PLAIN_READ = ("import sys\nf = open(sys.argv[1], 'rb')\nn = 0\n"
              "while chunk := f.read(1 << 20):\n    n += len(chunk)\nprint(n)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=250)
    args = parser.parse_args()
    header("hlodiff explain-recompile benchmark")
    path = build(args.graphs)
    size = path.stat().st_size
    print(f"-- {path.relative_to(REPO)}: {size / 1e9:.2f} GB, {args.graphs} graphs, 3 cache keys "
          f"(real 12- and 24-layer transformer traces)")
    hlodiff = str(Path(sys.executable).with_name("hlodiff"))
    # The explain run goes first: ru_maxrss of children is a running maximum, so the small process comes after.
    ex_s, ex_rss, code = measure([hlodiff, "explain-recompile", str(path), "--json"])
    read_s, _, _ = measure([sys.executable, "-c", PLAIN_READ, str(path)])
    print(f"   plain chunked read           : {read_s:7.2f} s   ({size / 1e6 / read_s:.0f} MB/s)")
    print(f"   hlodiff explain-recompile    : {ex_s:7.2f} s   = {ex_s / read_s:.1f}x the plain read; "
          f"peak RSS {ex_rss / 1e6:.0f} MB; exit {code}")
    print(f"   {verdict(ex_s < 20)} under 20 s ({ex_s:.1f} s)   {verdict(ex_rss < 1e9)} under 1 GB peak memory "
          f"({ex_rss / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
