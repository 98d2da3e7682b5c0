"""Scale: many graphs, many compilations. Time and peak RSS of explain-recompile beside inspect and a plain read.

    python bench/scale.py [--tiny 1000000] [--big 200] [--keys 20] [--blocks 200 --blocks-keys 5] [--only tiny|big|blocks]

Two save-tensors files are assembled under bench/out/scale/ (gitignored), from real torch_xla traces:

* ``big``: 200 graphs / 20 compilations of a 16.9K-instruction model: the 12-layer transformer trace made by
  fixtures/gen_big_transformer.py (generated on first use, trace only). Each cache key is the same graph with one
  constant changed (the first LayerNorm's epsilon, a value baked into the graph), so each recompilation has one
  real cause; ten steps per key, in order.
* ``blocks`` (``--blocks 200``): graphs of the 300K-instruction JAX family of bench/gen_jax_blocks.py (``a.hlo``,
  258K instructions, 16.8 MB), framed as save-tensors entries, ``--blocks-keys`` compilations (each the step with
  the first layer-norm epsilon changed), the graphs of a key in a row: issue 34's "explain at scale" (target:
  explain-recompile within 2x inspect).
* ``tiny``: 1,000,000 entries of the smallest real graph of the fixtures (print_partial's 3 KB ``.item()`` graph,
  with its real header), 10 cache keys (one constant varied), all the rest cache hits.

Each command runs in a fresh process; peak RSS is the process's own ``VmHWM`` (``getrusage`` would report the
parent's peak after exec). Baselines, measured in the same run: a plain 1 MiB-chunk read of the file, and
``hlodiff inspect``. Targets (issue 12): explain-recompile within 3x inspect on ``big``; peak RSS under 600 MB
on ``tiny``. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, read_gz  # noqa: E402
from compare import trace_dir  # noqa: E402

OUT = REPO / "bench" / "out" / "scale"
print = functools.partial(print, flush=True)  # noqa: A001 - figures appear as they are measured
FRAMES = ("  sync (/usr/lib/python3.11/site-packages/torch_xla/torch_xla.py:87)\n"
          "  <module> (/home/user/project/train.py:40)\n")

_MEASURE = ("import sys, atexit, runpy\n"
            "hwm = lambda: next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
            "atexit.register(lambda: sys.stderr.write('VMHWM %s\\n' % hwm()))\n"
            "if sys.argv[1] == 'read':\n"
            "    with open(sys.argv[2], 'rb') as f:\n"
            "        while f.read(1 << 20):\n"
            "            pass\n"
            "else:\n"
            "    from hlodiff.cli import main\n"
            "    sys.argv = ['hlodiff'] + sys.argv[1:]\n"
            "    main()\n")


def entry(text: str, frames: str = FRAMES) -> str:
    graph_hash = hashlib.md5(text.encode()).hexdigest()
    return (f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n{frames}\n"
            f"Root Hashes: ({graph_hash[:31]})\n\n## BEGIN_GRAPH\n{text.rstrip()}\n\n\n"
            f"Graph Hash: {graph_hash}\n\n## END_GRAPH\n\n")


def vary_constant(text: str, pattern: str, value: str) -> str:
    """The same graph with the first constant matching ``pattern`` set to ``value`` (one value per cache key)."""
    m = re.search(pattern, text)
    if m is None:
        raise SystemExit(f"no constant matching {pattern!r} in the trace")
    return text[:m.start(1)] + value + text[m.end(1):]


def build_big(graphs: int, keys: int) -> Path:
    target = OUT / f"big-{graphs}-{keys}.hlo.0"
    if target.exists():
        return target
    OUT.mkdir(parents=True, exist_ok=True)
    text = read_gz(trace_dir(12) / "transformer24.hlo.gz")
    # the first LayerNorm's epsilon: a value baked into the graph, live, one per cache key
    texts = [entry(vary_constant(text, r"= f32\[\] constant\((1e-05)\)", f"{k + 1}e-05")) for k in range(keys)]
    per_key = max(1, graphs // keys)
    tmp = target.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for i in range(graphs):
            f.write(texts[min(i // per_key, keys - 1)])
    tmp.rename(target)
    return target


def build_blocks(graphs: int, keys: int) -> Path:
    target = OUT / f"blocks-{graphs}-{keys}.hlo.0"
    if target.exists():
        return target
    OUT.mkdir(parents=True, exist_ok=True)
    from gen_jax_blocks import OUT as BLOCKS_OUT, generate

    text = generate(6800, BLOCKS_OUT)[0].read_text()
    texts = [entry(vary_constant(text, r"= f32\[\] constant\((1e-05)\)", f"{k + 1}e-05")) for k in range(keys)]
    per_key = max(1, graphs // keys)
    tmp = target.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for i in range(graphs):
            f.write(texts[min(i // per_key, keys - 1)])
    tmp.rename(target)
    return target


def build_tiny(graphs: int, keys: int = 10) -> Path:
    target = OUT / f"tiny-{graphs}.hlo.0"
    if target.exists():
        return target
    OUT.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    from hlodiff.dumps import iter_graphs

    record = list(iter_graphs(str(REPO / "fixtures" / "torch_xla" / "print_partial" / "graphs.hlo.0")))[3]
    frames = "".join(f"  {f.function} ({f.file}:{f.line})\n" for f in record.frames)
    text = record.text()
    # the reduce's initial value (live: a dead constant would be normalized away)
    entries = [entry(vary_constant(text, r"= f32\[\] constant\((0)\)", str(k)), frames).encode()
               for k in range(keys)]
    tmp = target.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        for i in range(graphs):
            f.write(entries[i % keys] if i < keys * 10 else entries[-1])
    tmp.rename(target)
    return target


def measure(args: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (MB) and exit status of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    hwm = [line for line in proc.stderr.splitlines() if line.startswith("VMHWM")]
    if not hwm:
        raise SystemExit(f"{args}: no figure; stderr: {proc.stderr[-2000:]}")
    return seconds, int(hwm[-1].split()[1]) // 1024, proc.returncode


def report(name: str, path: Path, explain_args: list[str]) -> dict[str, tuple[float, int, int]]:
    size = path.stat().st_size
    print(f"\n{name}: {path.relative_to(REPO)} ({size / 1e6:,.0f} MB)")
    rows = {"plain read": measure(["read", str(path)]),
            "inspect": measure(["inspect", str(path)]),
            "explain-recompile": measure(["explain-recompile", str(path), *explain_args])}
    for label, (seconds, rss, status) in rows.items():
        print(f"   {label:<20} {seconds:8.2f} s   peak RSS {rss:6,} MB   exit {status}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiny", type=int, default=1_000_000, help="graphs in the tiny-graph file")
    ap.add_argument("--big", type=int, default=200, help="graphs in the big-model file")
    ap.add_argument("--keys", type=int, default=20, help="cache keys (compilations) in the big-model file")
    ap.add_argument("--blocks", type=int, default=0, help="graphs in the 300K-instruction JAX family file (0: none)")
    ap.add_argument("--blocks-keys", type=int, default=5, help="cache keys (compilations) in that file")
    ap.add_argument("--only", choices=("tiny", "big", "blocks"))
    args = ap.parse_args()
    header("scale: many graphs, many compilations")
    if args.blocks and args.only in (None, "blocks"):
        rows = report(f"blocks: {args.blocks} graphs / {args.blocks_keys} compilations of the 300K-instruction JAX step",
                      build_blocks(args.blocks, args.blocks_keys), ["--json"])
        ratio = rows["explain-recompile"][0] / rows["inspect"][0]
        print(f"   explain / inspect: {ratio:.2f}x  (target <= 2x: {'met' if ratio <= 2 else 'MISSED'})")
    if args.only not in ("tiny", "blocks"):
        rows = report(f"big: {args.big} graphs / {args.keys} compilations of the 12-layer trace",
                      build_big(args.big, args.keys), ["--json"])
        ratio = rows["explain-recompile"][0] / rows["inspect"][0]
        print(f"   explain / inspect: {ratio:.2f}x  (target <= 3x: {'met' if ratio <= 3 else 'MISSED'})")
    if args.only not in ("big", "blocks"):
        rows = report(f"tiny: {args.tiny:,} graphs, 10 cache keys", build_tiny(args.tiny), [])
        worst = max(rss for _, rss, _ in rows.values())
        print(f"   worst peak RSS {worst:,} MB (target < 600 MB: {'met' if worst < 600 else 'MISSED'}); "
              f"{rows['inspect'][1] * 1024 * 1024 / args.tiny:,.0f} bytes per graph "
              "for inspect (including the interpreter)")


if __name__ == "__main__":
    main()
