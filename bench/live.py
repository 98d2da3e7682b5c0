"""Live analysis (``record --live``, ``hlodiff watch``): the cost of one more graph, and memory, as the run grows.

    python bench/live.py [--graphs 100000] [--every 10000] [--block 1000]

A save-tensors file is written under bench/out/live/ (gitignored) the way a run writes it, block by block, while
a :class:`hlodiff.dumps.follow.SaveTensorsFollower` and a :class:`hlodiff.explain.live.LiveExplainer` read it in
the same process. The graph is a real torch_xla training step (fixtures/torch_xla/slice_index, entry 1, 9 KB, with
its sync frames); every ``--every`` graphs one integer constant of it changes (a new cache key: a recompilation with one
real cause), the other graphs are cache hits.

At each checkpoint the script prints, against the number of graphs so far:

* live, per cache hit: the follower's read plus the explainer's bookkeeping, averaged over the last block;
* live, per new compilation: the time from the entry being written to its events (the analysis of the family's
  window, :mod:`hlodiff.explain.live`);
* baseline, a plain read: the same bytes read with ``f.read`` (per graph), measured in the same run;
* baseline, a rerun: ``explain_records`` over every graph so far (what re-analysing the whole run for each new
  graph would cost);
* memory: the process's resident set now and its peak (``VmRSS``, ``VmHWM``).

Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header  # noqa: E402

BENCH = str(Path(__file__).resolve().parent)
# bench/ off the path now: bench/html.py would shadow the standard library's html (networkx imports it)
sys.path[:] = [str(REPO)] + [p for p in sys.path if p and Path(p).resolve() != Path(BENCH)]
OUT = REPO / "bench" / "out" / "live"
print = functools.partial(print, flush=True)  # noqa: A001 - figures appear as they are measured


def entry(text: str, frames: str) -> bytes:
    graph_hash = hashlib.md5(text.encode()).hexdigest()
    return (f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n{frames}\n"
            f"Root Hashes: ({graph_hash[:31]})\n\n## BEGIN_GRAPH\n{text.rstrip()}\n\n\n"
            f"Graph Hash: {graph_hash}\n\n## END_GRAPH\n\n").encode()


def variants(keys: int) -> list[bytes]:
    """The slice_index step with its ``s32[] constant(2)`` set per key (2, 3, 4, ...: an integer baked in)."""
    from hlodiff.dumps import iter_graphs

    record = list(iter_graphs(str(REPO / "fixtures" / "torch_xla" / "slice_index" / "graphs.hlo.0")))[1]
    frames = "".join(f"  {f.function} ({f.file}:{f.line})\n" for f in record.frames)
    text = record.text()
    m = re.search(r"= s32\[\] constant\((2)\)", text)
    return [entry(text[:m.start(1)] + str(2 + k) + text[m.end(1):], frames) for k in range(keys)]


def memory() -> tuple[float, float]:
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphs", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=10_000, help="a new cache key every this many graphs")
    parser.add_argument("--block", type=int, default=1000, help="graphs written between two polls")
    parser.add_argument("--no-rerun", action="store_true", help="skip the rerun baseline (slow past 100k graphs)")
    args = parser.parse_args()
    header(f"live analysis: {args.graphs} graphs, a recompilation every {args.every}, polled every {args.block}")

    from hlodiff.dumps import iter_graphs
    from hlodiff.dumps.follow import SaveTensorsFollower
    from hlodiff.explain.live import LiveExplainer
    from hlodiff.explain.recompile import explain_records

    keys = variants(args.graphs // args.every + 1)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "graphs.hlo.0"
    path.write_bytes(b"")
    follower = SaveTensorsFollower(str(path))
    explainer = LiveExplainer(warnings=follower.warnings)
    told = 0
    compile_times: list[float] = []
    print("| graphs so far | live, per cache hit | live, per new compilation | plain read, per graph | "
          "rerun of the whole run | RSS now / peak |")
    print("|---|---|---|---|---|---|")
    written = 0
    with open(path, "ab") as sink:
        while written < args.graphs:
            key = written // args.every
            if written % args.every == 0:  # a new cache key: written alone, timed alone
                sink.write(keys[key])
                sink.flush()
                t0 = time.perf_counter()
                events = explainer.feed(follower.poll())
                compile_times.append(time.perf_counter() - t0)
                told += sum(e.kind in ("recompiled", "repeat", "expected", "pending") for e in events)
                written += 1
            n = min(args.block, args.every - written % args.every, args.graphs - written)
            data = keys[key] * n
            sink.write(data)
            sink.flush()
            t0 = time.perf_counter()
            explainer.feed(follower.poll())
            per_hit = (time.perf_counter() - t0) / n
            written += n
            if written % args.every == 0 or written == args.graphs or written in (args.block, 10 * args.block):
                t0 = time.perf_counter()
                with open(path, "rb") as f:
                    f.seek(max(0, path.stat().st_size - len(data)))
                    f.read()
                read = (time.perf_counter() - t0) / n
                rerun = "skipped"
                if not args.no_rerun:
                    t0 = time.perf_counter()
                    explain_records(list(iter_graphs(str(path))))
                    rerun = f"{time.perf_counter() - t0:.2f} s"
                rss, peak = memory()
                print(f"| {written:,} | {per_hit * 1e6:.0f} us | {compile_times[-1] * 1e3:.0f} ms | "
                      f"{read * 1e6:.1f} us | {rerun} | {rss:.0f} / {peak:.0f} MB |")
    print(f"recompilations told live: {told} of {len(compile_times) - 1}; warnings: {len(follower.warnings)}")


if __name__ == "__main__":
    main()
