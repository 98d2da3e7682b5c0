"""Bounded reads: peak RSS of hlodiff on inputs that grow without bound, beside a plain read of the same file.

    python bench/memory.py [--lines 1000000] [--graphs 40000] [--distinct 40000] [--proto-gb 3]

Inputs, assembled under bench/out/memory/ (gitignored) from real fixtures:

* ``jax/jax-1000000.log``: the JAX log of fixtures/jax/weak_type (JAX 0.10.2, ``JAX_EXPLAIN_CACHE_MISSES=1
  JAX_LOG_COMPILES=1``) repeated to ``--lines`` lines (a long run printing the same messages), explained with
  the fixture's dump: ``explain-recompile DUMP --jax-log jax-1M.log``. Target (issue 21): under 100 MB.
* ``hits/hits-40000.hlo.0``: ``--graphs`` entries of a save-tensors file, torch_xla's entry layout with the smallest
  module a sync can give (one constant returned), all one cache key: every entry after the first is a cache hit.
  Target: ``explain-recompile`` under 200 MB.
* ``distinct/distinct-40000.hlo.0``: ``--distinct`` entries of the same smallest module, each returning another
  constant: every entry is a compilation of one family (a recompilation each). It took over 10 minutes before
  2026-11-26 (work per recompilation that walked the whole family); explained in seconds now.
* a copy of fixtures/jax/weak_type/dump whose first ``.hlo.pb`` is a ``--proto-gb`` GB sparse file (no disk
  used): ``inspect`` and ``explain-recompile`` skip it past HLODIFF_MAX_PROTO_BYTES instead of reading it whole.

Each command runs in a fresh process; peak RSS is the process's own ``VmHWM`` (as bench/scale.py measures it).
Baselines, measured in the same run: a plain 1 MiB-chunk read of the file, and ``hlodiff --version`` (the
interpreter and hlodiff's imports). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header  # noqa: E402
from scale import measure  # noqa: E402

OUT = REPO / "bench" / "out" / "memory"
JAX = REPO / "fixtures" / "jax" / "weak_type"
print = functools.partial(print, flush=True)  # noqa: A001 - figures appear as they are measured


def build_jax_log(lines: int) -> Path:
    target = OUT / "jax" / f"jax-{lines}.log"  # each input in its own folder: a log is found beside a dump
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        src = (JAX / "stderr.log").read_text()
        with open(target, "w") as f:
            for _ in range(lines // src.count("\n") + 1):
                f.write(src)
    return target


def tiny_entry(constant: int) -> str:
    text = (f"HloModule IrToHlo.4, entry_computation_layout={{()->(f32[])}}\n\nENTRY %IrToHlo.4 () -> (f32[]) {{\n"
            f"  %constant.1 = f32[] constant({constant})\n  ROOT %tuple.2 = (f32[]) tuple(f32[] %constant.1)\n}}\n")
    graph_hash = hashlib.md5(text.encode()).hexdigest()
    return (f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  <module> (/home/user/project/train.py:40)\n\n"
            f"Root Hashes: ({graph_hash[:31]})\n\n## BEGIN_GRAPH\n{text}\n\nGraph Hash: {graph_hash}\n\n"
            "## END_GRAPH\n\n")


def build_hits(graphs: int) -> Path:
    target = OUT / "hits" / f"hits-{graphs}.hlo.0"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        entry = tiny_entry(0)
        with open(target, "w") as f:
            for _ in range(graphs):
                f.write(entry)
    return target


def build_distinct(graphs: int) -> Path:
    target = OUT / "distinct" / f"distinct-{graphs}.hlo.0"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w") as f:
            for i in range(graphs):
                f.write(tiny_entry(i))
    return target


def build_sparse_proto(gb: int) -> Path:
    dump = OUT / f"sparse-proto-{gb}g"
    if dump.exists():
        shutil.rmtree(dump)
    shutil.copytree(JAX / "dump", dump)
    proto = sorted(dump.glob("*before_optimizations.hlo.pb"))[0]
    os.truncate(proto, gb << 30)
    return dump


def row(label: str, args: list[str]) -> None:
    seconds, rss, status = measure(args)
    print(f"   {label:<34} {seconds:8.2f} s   peak RSS {rss:6,} MB   exit {status}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--graphs", type=int, default=40_000)
    ap.add_argument("--distinct", type=int, default=40_000)
    ap.add_argument("--proto-gb", type=int, default=3)
    args = ap.parse_args()
    header("memory: bounded reads")
    OUT.mkdir(parents=True, exist_ok=True)
    print("\ninterpreter and imports")
    row("hlodiff --version", ["--version"])

    log = build_jax_log(args.lines)
    print(f"\nJAX log: {log.relative_to(REPO)} ({log.stat().st_size / 1e6:,.0f} MB, {args.lines:,} lines)")
    row("plain read", ["read", str(log)])
    row("explain-recompile --jax-log", ["explain-recompile", str(JAX / "dump"), "--jax-log", str(log)])

    hits = build_hits(args.graphs)
    print(f"\nsave-tensors: {hits.relative_to(REPO)} ({hits.stat().st_size / 1e6:,.0f} MB, {args.graphs:,} graphs, "
          "1 compilation)")
    row("plain read", ["read", str(hits)])
    row("inspect", ["inspect", str(hits)])
    row("explain-recompile", ["explain-recompile", str(hits)])
    row("explain-recompile --json", ["explain-recompile", "--json", str(hits)])

    distinct = build_distinct(args.distinct)
    print(f"\nsave-tensors: {distinct.relative_to(REPO)} ({distinct.stat().st_size / 1e6:,.0f} MB, {args.distinct:,} "
          f"graphs, each a compilation)")
    row("plain read", ["read", str(distinct)])
    row("explain-recompile", ["explain-recompile", str(distinct)])
    row("explain-recompile --json", ["explain-recompile", "--json", str(distinct)])

    dump = build_sparse_proto(args.proto_gb)
    print(f"\nXLA dump with a {args.proto_gb} GB sparse .hlo.pb: {dump.relative_to(REPO)}")
    row("inspect", ["inspect", str(dump)])
    row("explain-recompile", ["explain-recompile", str(dump)])
    shutil.rmtree(dump)


if __name__ == "__main__":
    main()
