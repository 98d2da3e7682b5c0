"""Every fixture run's outputs and exit statuses, written to a folder: the safety net of a pure restructure.

Run it once on the tree before the change and once after, then diff the two folders (``diff -r``); a restructure
that keeps behaviour leaves them byte for byte equal::

    PYTHONPATH=. python tests/snapshot_outputs.py /tmp/house_before
    PYTHONPATH=. python tests/snapshot_outputs.py /tmp/house_after && diff -r /tmp/house_before /tmp/house_after

Each run of ``fixtures/torch_xla``, ``fixtures/jax``, ``fixtures/scenarios/{torch_xla,jax,dynamo}`` (and the dumps of
``../shared/scenarios`` when present) goes through ``explain-recompile`` (terminal and ``--json``), ``compare`` (``--json``), ``cost
--json``, ``inspect --json``; a pair of runs (``run_a``, ``run_b``) through ``compare-runs`` (terminal and
``--json``) and each run alone.
The commands run in this one process through click's runner (as the tests' ``cli`` helper does), from the repository
root with relative paths, so the outputs name no machine path and the whole corpus takes a minute, not an hour.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "scenarios"


def runs() -> list[Path]:
    """Fixture folders holding one run (or a pair ``run_a``/``run_b``), relative to the repository root."""
    found: list[Path] = []
    for parent in ("fixtures/torch_xla", "fixtures/jax", "fixtures/scenarios/torch_xla", "fixtures/scenarios/jax",
                   "fixtures/scenarios/dynamo"):
        base = ROOT / parent
        if base.is_dir():
            found += [p.relative_to(ROOT) for p in sorted(base.iterdir()) if p.is_dir() and not p.name.startswith("_")]
    if SHARED.is_dir():  # dumps made from the shared scenarios, when a helper left any there
        found += [p for p in sorted(SHARED.rglob("graphs.hlo.0"))]
    return found


def commands(run: Path) -> list[tuple[str, list[str]]]:
    if (ROOT / run / "run_a").is_dir() and (ROOT / run / "run_b").is_dir():
        a, b = str(run / "run_a"), str(run / "run_b")
        return [("compare-runs", ["compare-runs", a, b]), ("compare-runs.json", ["compare-runs", a, b, "--json"]),
                ("a.explain", ["explain-recompile", a]), ("b.explain", ["explain-recompile", b]),
                ("b.explain.json", ["explain-recompile", b, "--json"])]
    target = str(run)
    save = ROOT / run / "graphs.hlo.0"
    dump = str(run / "graphs.hlo.0") if save.is_file() else target
    return [("explain", ["explain-recompile", target]), ("explain.json", ["explain-recompile", target, "--json"]),
            ("compare.json", ["compare", dump, "--json"]), ("cost.json", ["cost", target, "--json"]),
            ("inspect.json", ["inspect", dump, "--json"])]


def main(out: str) -> int:
    from hlodiff.cli import main as hlodiff

    os.chdir(ROOT)
    os.makedirs(out, exist_ok=True)
    started = time.perf_counter()
    big = [("big.compare.json", ["compare", "fixtures/big/transformer24.hlo.gz",
                                 "fixtures/big/transformer24_variant.hlo.gz", "--json"])]
    jobs = [(Path("fixtures/big"), big)] + [(run, commands(run)) for run in runs()]
    for run, steps in jobs:
        name = str(run).replace("/", "__")
        for label, args in steps:
            result = CliRunner().invoke(hlodiff, args, env={"COLUMNS": "200"}, prog_name="hlodiff")
            crash = ""
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                crash = f"\nEXCEPTION {type(result.exception).__name__}: {result.exception}\n"
            Path(out, f"{name}.{label}").write_text(
                f"$ hlodiff {' '.join(args)}\nexit {result.exit_code}{crash}\n--- stdout\n{result.stdout}"
                f"--- stderr\n{result.stderr}")
    print(f"{sum(len(s) for _, s in jobs)} outputs of {len(jobs)} runs in {time.perf_counter() - started:.0f}s "
          f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/house_snapshot"))
