"""What torch_xla's source-line capture costs a training step by itself, paired within one process.

``hlodiff record`` gets the user's line from torch_xla's ``XLA_IR_DEBUG=1`` / ``XLA_HLO_DEBUG=1``: for every traced
IR node torch_xla walks the whole Python stack (``GetPythonFrames``; no depth bound, only on/off). Across fresh
processes this machine's step times vary by +-15%, more than the effect (``bench/capture.py``), so this measures it
paired: one process, the loop of ``bench/capture.py`` (TransformerEncoder, 4 layers, d_model 128, AdamW),
``torch_xla._XLAC._set_ir_debug`` switched on and off on alternate steps (the graph hash does not change, nothing
recompiles: checked at the end), at the script's own stack depth and with N more Python frames above the step (as
under pytest, or in a deep training framework). Prints medians of the traced time and the whole step.

    python bench/ir_debug.py [--steps 64] [--depths 0,15,30]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import header  # noqa: E402

CHILD = r'''
import json, statistics, sys, time
import torch, torch_xla
import torch_xla.debug.metrics as met

steps, depth = int(sys.argv[1]), int(sys.argv[2])
xlac = torch_xla._XLAC
device = torch_xla.device()
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, dropout=0.0, batch_first=True)
model = torch.nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(8, 32, 128).to(device)
target = torch.randn(8, 32, 128).to(device)
torch_xla.sync(wait=True)


def step():
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    opt.zero_grad()


def nested(n):
    return step() if n == 0 else nested(n - 1)


times = {"on": [], "off": []}
for i in range(steps):
    mode = "on" if i % 2 == 0 else "off"
    xlac._set_ir_debug(mode == "on")
    t0 = time.perf_counter()
    nested(depth)
    t1 = time.perf_counter()
    torch_xla.sync(wait=True)
    t2 = time.perf_counter()
    if i >= 6:  # steps 0-3 compile (AdamW's first step differs); a margin after them
        times[mode].append((t1 - t0, t2 - t0))
print(json.dumps({mode: {"trace": statistics.median(a for a, _ in v), "step": statistics.median(b for _, b in v)}
                  for mode, v in times.items()} | {"compilations": met.counter_value("UncachedCompile")}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--depths", default="0,15,30")
    args = parser.parse_args()
    header("torch_xla XLA_IR_DEBUG cost per step, paired in one process (TransformerEncoder 4 layers, AdamW)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "PT_XLA", "HLODIFF_"))}
    env.update(PJRT_DEVICE="CPU", TF_CPP_MIN_LOG_LEVEL="2", XLA_IR_DEBUG="1", XLA_HLO_DEBUG="1")
    print("| extra frames | traced, lines off (ms) | traced, lines on (ms) | step, lines off (ms) "
          "| step, lines on (ms) | step on/off | compilations |")
    print("|---|---|---|---|---|---|---|")
    for depth in (int(d) for d in args.depths.split(",")):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(args.steps), str(depth)], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-3000:])
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        on, off = r["on"], r["off"]
        print(f"| {depth} | {off['trace'] * 1e3:.1f} | {on['trace'] * 1e3:.1f} | {off['step'] * 1e3:.1f} | "
              f"{on['step'] * 1e3:.1f} | {on['step'] / off['step']:.2f}x | {r['compilations']} |", flush=True)


if __name__ == "__main__":
    main()
