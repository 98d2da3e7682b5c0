"""Interleaved A/B of ``hlodiff compare A B --json`` between source trees, beside XLA's parse of both texts.

    python bench/compare_ab.py --trees /tmp/before,/tmp/after [--rounds 5] [--pairs 17K,300K] [--pure]

Each TREE is a folder holding an ``hlodiff/`` package (a ``git archive`` of a commit, with its compiled
``_accel*.so`` copied in); each runs as a fresh CLI process with ``PYTHONPATH=TREE``, its bytecode written once
beforehand (as after ``pip install``), and runs in that folder: ``python -m`` puts the working folder first on
``sys.path``, before ``PYTHONPATH``, so a CLI started from a checkout would import the checkout's hlodiff whatever
the tree (before 2026-11-27 04:30 this script ran every tree from the caller's folder). Every round runs XLA's
C++ parser (jaxlib ``hlo_module_from_text``, in a child process) on both texts of each pair, then each tree, in
alternating order round by round, so that load from other processes falls on all of them. CPU seconds (user +
system) and peak RSS of each child come from ``wait4``. Printed: per round, then minima, medians and the median of
the per-round ratios to XLA; peak RSS beside the texts' size. The machine is shared: compare ratios within rounds,
not absolute times across runs.

Pairs: ``17K`` is the 12-layer torch_xla pair (``bench/compare.py``'s, decompressed to ``bench/out/``), ``300K``
the unrolled JAX pair of ``bench/gen_jax_blocks.py`` (6,800 blocks). Both must have been generated already
(``python bench/compare.py --cli-only --blocks 6800`` makes both).
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
PAIRS = {"17K": (OUT / "layers12" / "transformer24.hlo.gz", OUT / "layers12" / "transformer24_variant.hlo.gz"),
         "300K": (OUT / "jax_blocks" / "a.hlo", OUT / "jax_blocks" / "b.hlo")}
XLA = ("import sys, time\nfrom jaxlib._hlo import hlo_module_from_text\n"
       "ta, tb = open(sys.argv[1]).read(), open(sys.argv[2]).read()\n"
       "t = time.process_time(); hlo_module_from_text(ta); hlo_module_from_text(tb); print(time.process_time() - t)")


def plain(path: Path) -> Path:
    """The pair's text as a plain file (what XLA's parser and the CLI read alike)."""
    if path.suffix != ".gz":
        return path
    out = OUT / "ab" / path.name[:-3]
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def child(cmd: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, int, str]:
    """CPU seconds, peak RSS in bytes and stdout of one child process, run in ``cwd``."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, out


def tree_env(tree: str, pure: bool) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=tree, COLUMNS="200", PYTHONPYCACHEPREFIX=str(OUT / "ab" / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pure:
        env["HLODIFF_PURE_PYTHON"] = "1"
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", required=True, help="comma-separated folders holding an hlodiff/ package")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pairs", default="17K,300K")
    ap.add_argument("--pure", action="store_true", help="HLODIFF_PURE_PYTHON=1 for every tree")
    args = ap.parse_args(argv)
    trees, pairs = [str(Path(t).resolve()) for t in args.trees.split(",")], args.pairs.split(",")
    files = {p: tuple(plain(f) for f in PAIRS[p]) for p in pairs}
    cpu = {(p, t): [] for p in pairs for t in [*trees, "xla"]}
    rss = {(p, t): [] for p in pairs for t in trees}
    outputs: dict[tuple[str, str], set[str]] = {(p, t): set() for p in pairs for t in trees}
    for tree in trees:  # bytecode written once
        child([sys.executable, "-m", "hlodiff.cli", "--version"], tree_env(tree, False), cwd=tree)
    for r in range(args.rounds):
        order = trees if r % 2 == 0 else trees[::-1]
        for p in pairs:
            a, b = files[p]
            cpu[(p, "xla")].append(float(subprocess.run([sys.executable, "-c", XLA, str(a), str(b)],
                                                        capture_output=True, text=True, check=True).stdout))
            for tree in order:
                seconds, peak, out = child([sys.executable, "-m", "hlodiff.cli", "compare", str(a), str(b), "--json"],
                                           tree_env(tree, args.pure), cwd=tree)
                cpu[(p, tree)].append(seconds)
                rss[(p, tree)].append(peak)
                outputs[(p, tree)].add(out)
        print(f"round {r + 1}, load {os.getloadavg()[0]:.1f}: " + "  ".join(
            f"{p} {Path(t).name}={cpu[(p, t)][-1]:.2f}" for p in pairs for t in [*trees, "xla"]), flush=True)
    for p in pairs:
        xla = cpu[(p, "xla")]
        size = sum(f.stat().st_size for f in files[p])
        same = len({o for t in trees for o in outputs[(p, t)]}) == 1
        print(f"\n{p}: XLA both texts min {min(xla):.3f} s, median {statistics.median(xla):.3f} s; "
              f"--json output {'identical' if same else 'DIFFERS'} across trees and rounds")
        for tree in trees:
            v = cpu[(p, tree)]
            ratios = [x / y for x, y in zip(v, xla)]
            print(f"  {tree}: min {min(v):.3f} s, median {statistics.median(v):.3f} s; min/min {min(v) / min(xla):.2f}x,"
                  f" median of round ratios {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-"
                  f"{max(ratios):.2f}x); peak {max(rss[(p, tree)]) / 1e6:.0f} MB = {max(rss[(p, tree)]) / size:.1f}x "
                  "the texts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
