"""What capture costs a real torch_xla training loop: plain vs `hlodiff record` vs the pytest plugin.

The loop (issue 9): ``nn.TransformerEncoder`` (d_model 128, 4 heads, feed-forward 512), 4 and 16 layers, AdamW,
12 steps on a fixed batch, on the CPU. Each variant runs in a fresh process; variants are interleaved round by
round (the machine is shared); each run reports its per-step times (``torch_xla.sync(wait=True)`` ends a step, so a
step's time includes its execution) and the figures are medians:

* steady step: median of steps 4-11 of a run, then the median over rounds;
* compiling steps: steps 0 and 1 (AdamW's first step differs, so both compile), summed, median over rounds;
* the step after the last compilation (step 2), where the capture takes its one live-tensor report;
* ``record_always`` (optional variant): ``hlodiff record --lines always`` (source lines on every step; ``record``
  is the default ``--lines auto``, which switches them off on steady steps);
* ``flags`` (optional variant): the plain loop with ``XLA_IR_DEBUG=1 XLA_HLO_DEBUG=1`` only, the torch_xla settings
  ``record`` uses for source lines: torch_xla then walks the whole Python stack for every traced IR node;
* bytes: what the capture wrote (the record folder, the plugin's --hlodiff-dir) beside XLA's own dump of the same
  run (``--xla_dump_to --xla_dump_hlo_as_text``, the baseline variant ``xla_dump``).

Targets: ``record`` and the plugin <= 1.1x the plain steady step on both sizes, <= 2x on compiling steps, disk <=
1.5x XLA's dump.

    python bench/capture.py [--rounds 3] [--layers 4,16] [--fast-compile]

``--fast-compile`` adds ``--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true`` to every
variant alike (the 16-layer compile is long on a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import REPO, header, mb  # noqa: E402

STEPS = 12
STEADY = range(4, 12)
COMPILING = (0, 1)
FAST = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"

TRAIN = '''
import json, os, sys, time
import torch
import torch_xla


def train(layers, steps=%(steps)d):
    device = torch_xla.device()
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, dropout=0.0,
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(8, 32, 128).to(device)
    target = torch.randn(8, 32, 128).to(device)
    torch_xla.sync(wait=True)
    times = []
    for step in range(steps):
        t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync(wait=True)
        times.append(time.perf_counter() - t0)
    with open(os.environ["BENCH_TIMES"], "w") as f:
        json.dump(times, f)


if __name__ == "__main__":
    train(int(sys.argv[1]))
'''

PIPELINE_STEPS = 200
PIPELINE_STEADY = range(100, 200)

PIPELINE = '''
import json, os, sys, time
import torch
import torch_xla


def make():
    """A 3-layer MLP, SGD with momentum; per step 2 microbatches, each forward and backward synced apart, then the
    optimizer synced: 5 graphs a step, the program of issue 32 (pytorch/xla#6347)."""
    device = torch_xla.device()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 40), torch.nn.ReLU(), torch.nn.Linear(40, 24), torch.nn.ReLU(),
                                torch.nn.Linear(24, 8)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(8, 16).to(device), torch.randn(8, 8).to(device)

    def step(micro=2):
        opt.zero_grad()
        for xs, ys in zip(x.chunk(micro), y.chunk(micro)):
            loss = torch.nn.functional.mse_loss(model(xs), ys) / micro
            torch_xla.sync()
            loss.backward()
            torch_xla.sync()
        opt.step()
        torch_xla.sync(wait=True)

    torch_xla.sync(wait=True)
    return step


def train(steps=%(steps)d):
    step = make()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    with open(os.environ["BENCH_TIMES"], "w") as f:
        json.dump(times, f)


def paired(warm=60, blocks=%(blocks)d, size=5):
    """Under record: after warm-up, alternate blocks of steps with the sync hook in place and with torch_xla's own
    sync (the hook's state kept), and time the hook's own calls (its before/after around each step marker)."""
    import torch_xla.torch_xla as txm

    step = make()
    for _ in range(warm):
        step()
    hooked = txm.sync
    original = getattr(hooked, "_hlodiff_original", None)
    state = getattr(torch_xla, "_hlodiff_sync_hook", None)
    if original is None or state is None:
        raise SystemExit("paired: the sync hook is not installed (run under hlodiff record)")
    spent = [0.0, 0]

    def timed(fn):
        def call(*args):
            t0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                spent[0] += time.perf_counter() - t0
                spent[1] += 1
        return call

    state.before, state.after = timed(state.before), timed(state.after)
    on, off = [], []
    for b in range(blocks):
        for use, acc in ((hooked, on), (original, off)) if b %% 2 == 0 else ((original, off), (hooked, on)):
            txm.sync = torch_xla.sync = use
            for _ in range(size):
                t0 = time.perf_counter()
                step()
                acc.append(time.perf_counter() - t0)
    txm.sync = torch_xla.sync = hooked
    with open(os.environ["BENCH_TIMES"], "w") as f:
        json.dump({"on": on, "off": off, "hook_seconds": spent[0], "hook_calls": spent[1],
                   "syncs": len(on) * 5, "steady": bool(state.steady), "period": getattr(state, "period", None)}, f)


if __name__ == "__main__":
    paired() if sys.argv[1:] == ["paired"] else train()
'''

PLUGIN_TEST = '''
import os
from train import train


def test_train(hlo_graphs):
    with hlo_graphs.record():
        train(int(os.environ["BENCH_LAYERS"]))
'''


def run_variant(variant: str, layers: int, work: Path, fast: bool, model: str = "transformer") -> dict:
    """One fresh process; returns its step times, the bytes it wrote and its wall time."""
    script = [str(work / "train.py"), str(layers)] if model == "transformer" else [str(work / "pipeline.py")]
    run_dir = Path(tempfile.mkdtemp(prefix=f"{variant}-{layers}-", dir=work))
    times_file = run_dir / "times.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "PT_XLA", "HLODIFF_"))}
    env.update(PJRT_DEVICE="CPU", TF_CPP_MIN_LOG_LEVEL="2", BENCH_TIMES=str(times_file), BENCH_LAYERS=str(layers),
               PYTHONPATH=os.pathsep.join((str(work), str(REPO))))  # this tree's hlodiff, not an installed one
    flags = [FAST] if fast else []
    out = run_dir / "out"
    if variant == "plain":
        cmd = [sys.executable, *script]
    elif variant == "xla_dump":
        flags.append(f"--xla_dump_to={out} --xla_dump_hlo_as_text")
        cmd = [sys.executable, *script]
    elif variant == "flags":  # torch_xla's own source-line flags, nothing of hlodiff: what record's lines cost
        env.update(XLA_IR_DEBUG="1", XLA_HLO_DEBUG="1")
        cmd = [sys.executable, *script]
    elif variant == "save_tensors":
        env.update(XLA_SAVE_TENSORS_FILE=str(out / "graphs.hlo"), XLA_SAVE_TENSORS_FMT="hlo")
        out.mkdir()
        cmd = [sys.executable, *script]
    elif variant == "debug_log":  # torch_xla's own per-execution log that record turns on, nothing of hlodiff
        env.update(PT_XLA_DEBUG_LEVEL="2", PT_XLA_DEBUG_FILE=str(run_dir / "pt_xla_debug.log"))
        cmd = [sys.executable, *script]
    elif variant in ("record", "record_always", "record_nolive"):  # --lines auto (the default) / always
        lines = "always" if variant == "record_always" else "auto"
        live = ["--no-live"] if variant == "record_nolive" else []
        cmd = [sys.executable, "-m", "hlodiff.cli", "record", "--lines", lines, *live, "--out", str(out), "--",
               sys.executable, *script]
    elif variant == "paired":  # one process under record: the hook on and off in alternate blocks
        cmd = [sys.executable, "-m", "hlodiff.cli", "record", "--no-live", "--out", str(out), "--",
               sys.executable, str(work / "pipeline.py"), "paired"]
    elif variant == "plugin":
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hlodiff-dir", str(out),
               str(work / "test_plugin_bench.py")]
    else:
        raise ValueError(variant)
    if flags:
        env["XLA_FLAGS"] = " ".join(flags)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if not times_file.exists():
        raise SystemExit(f"{variant} ({layers} layers) failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}"
                         f"\n{proc.stderr[-3000:]}")
    times = json.loads(times_file.read_text())
    written = _bytes(out)
    shutil.rmtree(run_dir, ignore_errors=True)
    return {"times": times, "bytes": written, "wall": wall}


def _bytes(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def summarize(runs: list[dict]) -> dict:
    steady = statistics.median(statistics.median(r["times"][i] for i in STEADY) for r in runs)
    compiling = statistics.median(sum(r["times"][i] for i in COMPILING) for r in runs)
    after = statistics.median(r["times"][2] for r in runs)
    spread = [statistics.median(r["times"][i] for i in STEADY) for r in runs]
    return {"steady": steady, "compiling": compiling, "after": after, "bytes": statistics.median(r["bytes"] for r in runs),
            "spread": (min(spread), max(spread)), "wall": statistics.median(r["wall"] for r in runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layers", default="4,16")
    parser.add_argument("--variants", default="plain,record,plugin,xla_dump")
    parser.add_argument("--fast-compile", action="store_true")
    parser.add_argument("--model", choices=("transformer", "pipeline"), default="transformer",
                        help="pipeline: issue 32's program (5 syncs a step of a few ms; variants plain, debug_log, "
                             "record, record_nolive, paired)")
    parser.add_argument("--blocks", type=int, default=80, help="paired: alternating blocks of 5 steps")
    args = parser.parse_args()
    if args.model == "pipeline":
        return pipeline_main(args)
    layers = [int(n) for n in args.layers.split(",")]
    variants = args.variants.split(",")
    header("capture cost on a real torch_xla training loop (TransformerEncoder d_model 128, AdamW, 12 steps)")
    print(f"rounds {args.rounds}, variants interleaved per round: {', '.join(variants)}"
          f"{'; XLA_FLAGS ' + FAST + ' for every variant' if args.fast_compile else ''}")
    work = Path(tempfile.mkdtemp(prefix="hlodiff-bench-capture-"))
    try:
        (work / "train.py").write_text(textwrap.dedent(TRAIN % {"steps": STEPS}).lstrip())
        (work / "test_plugin_bench.py").write_text(textwrap.dedent(PLUGIN_TEST).lstrip())
        results: dict[tuple[int, str], list[dict]] = {}
        for n in layers:
            for r in range(args.rounds):
                order = variants[r % len(variants):] + variants[:r % len(variants)]  # rotate: no fixed position
                for variant in order:
                    results.setdefault((n, variant), []).append(run_variant(variant, n, work, args.fast_compile))
                    print(f"  {n} layers, round {r + 1}, {variant}: steady "
                          f"{statistics.median(results[(n, variant)][-1]['times'][i] for i in STEADY) * 1e3:.0f} ms",
                          flush=True)
        report(layers, variants, results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def pipeline_main(args) -> None:
    """Issue 32's program, plain and under record, fresh processes interleaved round by round; ``paired`` runs the
    hook on and off in one process (what the hook itself costs, apart from what torch_xla's own logging costs)."""
    variants = [v for v in args.variants.split(",") if v != "plugin" and v != "xla_dump"] \
        if args.variants != "plain,record,plugin,xla_dump" else ["plain", "debug_log", "record", "paired"]
    header("capture cost on issue 32's pipeline (3-layer MLP, 2 microbatches, forward/backward/optimizer synced "
           f"apart: 5 syncs a step), {PIPELINE_STEPS} steps, steady = steps {PIPELINE_STEADY.start}-"
           f"{PIPELINE_STEADY.stop - 1}")
    print(f"rounds {args.rounds}, variants interleaved per round: {', '.join(variants)}; load average at start "
          f"{'/'.join(f'{x:.1f}' for x in os.getloadavg())}")
    work = Path(tempfile.mkdtemp(prefix="hlodiff-bench-capture-"))
    try:
        (work / "pipeline.py").write_text(textwrap.dedent(PIPELINE % {"steps": PIPELINE_STEPS,
                                                                       "blocks": args.blocks}).lstrip())
        results: dict[str, list[dict]] = {}
        for r in range(args.rounds):
            order = variants[r % len(variants):] + variants[:r % len(variants)]
            for variant in order:
                res = run_variant(variant, 0, work, args.fast_compile, model="pipeline")
                results.setdefault(variant, []).append(res)
                print(f"  round {r + 1}, {variant}: {_pipeline_line(variant, res)}; load "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
        pipeline_report(variants, results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _pipeline_line(variant: str, res: dict) -> str:
    t = res["times"]
    if variant == "paired":
        on, off = statistics.median(t["on"]), statistics.median(t["off"])
        return (f"hook on {on * 1e3:.2f} ms, off {off * 1e3:.2f} ms: {on / off:.3f}x (min {min(t['on']) * 1e3:.2f} / "
                f"{min(t['off']) * 1e3:.2f} ms: {min(t['on']) / min(t['off']):.3f}x); the hook's own calls "
                f"{t['hook_seconds'] / t['syncs'] * 1e6:.1f} us a sync; steady {t['steady']} period {t['period']}")
    steady = [t[i] for i in PIPELINE_STEADY]
    return f"steady median {statistics.median(steady) * 1e3:.2f} ms, min {min(steady) * 1e3:.2f} ms"


def pipeline_report(variants: list[str], results: dict) -> None:
    print()
    print("| variant | steady step, median of runs (ms) | vs plain | runs' medians (ms) | fastest step (ms) | vs plain |")
    print("|---|---|---|---|---|---|")
    plain = None
    for v in variants:
        runs = results.get(v, [])
        if v == "paired" or not runs:
            continue
        medians = [statistics.median(r["times"][i] for i in PIPELINE_STEADY) for r in runs]
        fastest = min(min(r["times"][i] for i in PIPELINE_STEADY) for r in runs)
        med = statistics.median(medians)
        if v == "plain":
            plain = (med, fastest)
        ratio = f"{med / plain[0]:.2f}x" if plain else "-"
        fratio = f"{fastest / plain[1]:.2f}x" if plain else "-"
        print(f"| {v} | {med * 1e3:.2f} | {ratio} | {', '.join(f'{m * 1e3:.1f}' for m in medians)} | "
              f"{fastest * 1e3:.2f} | {fratio} |")
    for r in results.get("paired", []):
        print(f"paired: {_pipeline_line('paired', r)}")
    pairs = results.get("paired", [])
    if pairs:
        ratios = [statistics.median(r["times"]["on"]) / statistics.median(r["times"]["off"]) for r in pairs]
        per_sync = [r["times"]["hook_seconds"] / r["times"]["syncs"] * 1e6 for r in pairs]
        print(f"paired over rounds: median ratio {statistics.median(ratios):.3f}x (rounds "
              f"{', '.join(f'{x:.3f}' for x in ratios)}); hook {statistics.median(per_sync):.1f} us a sync")


def report(layers: list[int], variants: list[str], results: dict) -> None:
    print()
    print("| layers | variant | steady step (ms) | vs plain | steady spread over rounds (ms) | compiling steps 0+1 (s) "
          "| vs plain | step 2 (ms) | written (MB) | vs XLA dump |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    verdicts = []
    for n in layers:
        s = {v: summarize(results[(n, v)]) for v in variants if (n, v) in results}
        plain = s.get("plain")
        dump = s.get("xla_dump")
        for v, f in s.items():
            ratio = f["steady"] / plain["steady"] if plain else float("nan")
            cratio = f["compiling"] / plain["compiling"] if plain else float("nan")
            dratio = f["bytes"] / dump["bytes"] if dump and dump["bytes"] and f["bytes"] else float("nan")
            print(f"| {n} | {v} | {f['steady'] * 1e3:.1f} | {ratio:.2f}x | {f['spread'][0] * 1e3:.0f}-"
                  f"{f['spread'][1] * 1e3:.0f} | {f['compiling']:.2f} | {cratio:.2f}x | {f['after'] * 1e3:.0f} | "
                  f"{mb(f['bytes']):.2f} | {dratio:.2f}x |")
            if v in ("record", "plugin") and plain:
                verdicts.append(f"{n} layers, {v}: steady {ratio:.2f}x ({'met' if ratio <= 1.1 else 'MISSED'} <= 1.1x), "
                                f"compiling {cratio:.2f}x ({'met' if cratio <= 2 else 'MISSED'} <= 2x)"
                                + (f", disk {dratio:.2f}x XLA's dump ({'met' if dratio <= 1.5 else 'MISSED'} <= 1.5x)"
                                   if dump else ""))
    print()
    for line in verdicts:
        print(line)


if __name__ == "__main__":
    main()
