"""Live analysis (``record --live``, ``hlodiff watch``): the cost of one more graph, and memory, as the run grows.

    python bench/live.py [--graphs 100000] [--every 10000] [--block 1000] [--capture record|save-tensors|both]

Two captures are written under bench/out/live/ (gitignored) the way a run writes them, block by block, while a
follower (:mod:`hlodiff.dumps.follow`) and a :class:`hlodiff.explain.live.LiveExplainer` read them in the same
process: what ``hlodiff record`` captures (a ``PT_XLA_DEBUG_LEVEL=2`` log, a block per execution, and an XLA dump,
a module per compilation; ``--capture record``) and a save-tensors file (an entry per execution;
``--capture save-tensors``). The graph is a real torch_xla training step (fixtures/torch_xla/slice_index, entry 1,
9 KB, with its sync frames); every ``--every`` graphs one integer constant of it changes (a new cache key: a
recompilation with one real cause), the other graphs are cache hits. The log blocks follow the layout of the
fixtures' real logs.

At each checkpoint the script prints, against the number of graphs so far:

* live, per cache hit: the follower's read plus the explainer's bookkeeping, averaged over the last block;
* live, per new compilation: the time from the entry being written to its events (the analysis of the family's
  window, :mod:`hlodiff.explain.live`);
* baseline, a plain read: the same bytes read with ``f.read`` (per graph), measured in the same run;
* baseline, a rerun: ``explain_records`` over every graph so far (what re-analysing the whole run for each new
  graph would cost);
* memory: the process's resident set and its peak so far (``VmRSS``, ``VmHWM``), read before the rerun baseline
  of that row (the rerun holds every graph at once: the peaks of later rows include it; ``--no-rerun`` for the
  live analysis's own peak).

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


_FRAMES = ("sync (/usr/lib/python3.11/site-packages/torch_xla/torch_xla.py:87)",
           "<module> (/home/user/project/slice_index.py:32)")


def _block(prefix: str, graph_hash: str, head: str) -> str:
    """A ``PT_XLA_DEBUG_LEVEL=2`` block as torch_xla 2.9 writes it (the layout of the fixtures' logs)."""
    rows = [f"{prefix}: {'=' * 80}", f"{prefix}: {head} Cause", f"{prefix}:   user torch_xla.sync",
            f"{prefix}: Graph Info: ", f"{prefix}:   Graph Hash: {graph_hash}",
            f"{prefix}:   Number of Graph Inputs: 4", f"{prefix}:   Number of Graph Outputs: 3",
            f"{prefix}: Python Frame Triggered Execution: ", *(f"{prefix}:   {f}" for f in _FRAMES),
            f"{prefix}: {'-' * 80}", f"{prefix}: {'=' * 80}", ""]
    return "\n".join(rows) + "\n"


def _post(graph_hash: str) -> str:
    rows = [f"Computation hash: {graph_hash}", "", f"Post Compilation Analysis: {'=' * 80}",
            *(f"Post Compilation Analysis: {k}: 0.000000 GB" for k in ("Graph input size", "Graph output size")),
            f"Post Compilation Analysis: {'-' * 80}", f"Post Compilation Analysis: {'=' * 80}", "", ""]
    return "\n".join(rows)


class SaveTensorsRun:
    """The run writes a save-tensors file: one entry per execution (``XLA_SAVE_TENSORS_FILE``)."""

    name = "save-tensors file"

    def __init__(self, keys: int):
        from hlodiff.dumps.follow import SaveTensorsFollower

        self.entries = variants(keys)
        self.path = OUT / "graphs.hlo.0"
        self.path.write_bytes(b"")
        self.follower = SaveTensorsFollower(str(self.path))
        self.sink = open(self.path, "ab")

    def write(self, key: int, n: int, new: bool) -> int:
        data = self.entries[key] * n
        self.sink.write(data)
        self.sink.flush()
        return len(data)

    def records(self):
        from hlodiff.dumps import iter_graphs

        return list(iter_graphs(str(self.path)))

    def plain(self) -> list[Path]:
        return [self.path]


class ExecutionsRun:
    """The run writes what ``hlodiff record`` captures: a ``PT_XLA_DEBUG_LEVEL=2`` log with a block per execution
    and an XLA dump with a module per compilation."""

    name = "record folder (log + XLA dump)"

    def __init__(self, keys: int):
        import shutil

        from hlodiff.dumps.follow_dump import ExecutionsFollower

        self.folder = OUT / "record"
        shutil.rmtree(self.folder, ignore_errors=True)
        (self.folder / "xla_dump").mkdir(parents=True)
        self.texts = []
        for entry_bytes in variants(keys):
            text = entry_bytes.decode()
            body = text[text.index("## BEGIN_GRAPH\n") + 15:text.index("\n\n\nGraph Hash: ")]
            self.texts.append((body + "\n", re.search(r"Graph Hash: (\w+)", text).group(1)))
        self.log = self.folder / "pt_xla_debug.log"
        self.log.write_text("\n")
        self.sink = open(self.log, "a")
        self.follower = ExecutionsFollower(str(self.folder), str(self.log), str(self.folder / "xla_dump"))

    def write(self, key: int, n: int, new: bool) -> int:
        body, graph_hash = self.texts[key]
        out = ""
        if new:  # XLA writes the module while it compiles; torch_xla logs the compilation once it is done
            (self.folder / "xla_dump" / f"module_{key:04d}.SyncTensorsGraph.{key}.before_optimizations.txt"
             ).write_text(body)
            out += _block("Compilation Analysis", graph_hash, "Compilation") + "\n" + _post(graph_hash)
        out += (_block("Execution Analysis", graph_hash, "Execution") + "\n") * n
        self.sink.write(out)
        self.sink.flush()
        return len(out)

    def records(self):
        from hlodiff.dumps.executions import scan_executions

        return list(scan_executions(str(self.folder / "xla_dump")))  # the log beside it is found

    def plain(self) -> list[Path]:
        return [self.log]


def run(kind, args) -> None:
    from hlodiff.explain.live import LiveExplainer
    from hlodiff.explain.recompile import explain_records

    keys = args.graphs // args.every + 1
    OUT.mkdir(parents=True, exist_ok=True)
    capture = kind(keys)
    follower = capture.follower
    explainer = LiveExplainer(warnings=follower.warnings)
    told = 0
    compile_times: list[float] = []
    print(f"\n{capture.name}:\n")
    print("| graphs so far | compilations | live, per cache hit | live, per new compilation | plain read, per graph | "
          "rerun of the whole run | RSS now / peak |")
    print("|---|---|---|---|---|---|---|")
    written = 0
    while written < args.graphs:
        key = written // args.every
        if written % args.every == 0:  # a new cache key: written alone, timed alone
            capture.write(key, 1, new=True)
            t0 = time.perf_counter()
            events = explainer.feed(follower.poll())
            compile_times.append(time.perf_counter() - t0)
            told += sum(e.kind in ("recompiled", "repeat", "expected", "pending") for e in events)
            written += 1
        n = min(args.block, args.every - written % args.every, args.graphs - written)
        size = capture.write(key, n, new=False)
        t0 = time.perf_counter()
        explainer.feed(follower.poll())
        per_hit = (time.perf_counter() - t0) / n
        written += n
        if written % args.every == 0 or written == args.graphs:
            path = capture.plain()[0]
            t0 = time.perf_counter()
            with open(path, "rb") as f:
                f.seek(max(0, path.stat().st_size - size))
                f.read()
            read = (time.perf_counter() - t0) / n
            rss, peak = memory()  # before the rerun baseline, which holds every graph at once
            rerun = "skipped"
            if not args.no_rerun:
                t0 = time.perf_counter()
                explain_records(capture.records())
                rerun = f"{time.perf_counter() - t0:.2f} s"
            print(f"| {written:,} | {len(compile_times)} | {per_hit * 1e6:.0f} us | {compile_times[-1] * 1e3:.0f} ms | "
                  f"{read * 1e6:.1f} us | {rerun} | {rss:.0f} / {peak:.0f} MB |")
    print(f"\nrecompilations told live: {told} of {len(compile_times) - 1}; warnings: {len(follower.warnings)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphs", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=10_000, help="a new cache key every this many graphs")
    parser.add_argument("--block", type=int, default=1000, help="graphs written between two polls")
    parser.add_argument("--capture", choices=["record", "save-tensors", "both"], default="both")
    parser.add_argument("--no-rerun", action="store_true", help="skip the rerun baseline (slow past 100k graphs)")
    args = parser.parse_args()
    header(f"live analysis: {args.graphs} graphs, a recompilation every {args.every}, polled every {args.block}")
    if args.capture in ("record", "both"):
        run(ExecutionsRun, args)
    if args.capture in ("save-tensors", "both"):
        run(SaveTensorsRun, args)


if __name__ == "__main__":
    main()
