"""Regenerate the small real samples in this folder (torch_xla 2.9.0 on the CPU; run from anywhere).

    PJRT_DEVICE=CPU python tests/data/dumps/make_samples.py

They cover what the committed fixtures (fixtures/) do not: graphs named by torch_xla.compile(name=...), a
PT_XLA_DEBUG_LEVEL=2 log captured from a terminal (stdout and stderr interleaved, frames cut by
PT_XLA_DEBUG_MAX_FRAME), a live-tensor report without XLA_IR_DEBUG, a report holding multi-output nodes, an SPMD
graph with an output-sharding block, and a torch_xla --xla_dump_to folder. Machine paths are replaced by neutral
ones afterwards, exactly as the fixture scripts do.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

NAMED = r'''
import sys, torch, torch_xla
dev = torch_xla.device()
w = torch.randn(4, 4, device=dev)
rep = open(sys.argv[1], "w")

@torch_xla.compile(name="train_step")
def step(x):
    y = (x @ w).relu()
    v, i = y.max(dim=1)
    return v.sum() + i.float().sum()

for n in [2, 3]:
    x = torch.randn(n, 4, device=dev)
    z = x.view(-1).sum(dim=0, keepdim=True) * 2
    rep.write(f"## SYNC {n}\n")
    rep.write(torch_xla._XLAC._xla_tensors_report(1, str(dev)))
    print("value", z.item(), flush=True)
    out = step(x)
    print("out", out.cpu(), flush=True)
'''

MULTI_OUTPUT = r'''
import torch, torch_xla
dev = torch_xla.device()
x = torch.randn(3, 4, device=dev)
v, i = x.max(dim=1)
y = v * i.float()
s = x[1:, ::2]
f = (lambda a: a * 3)(x)
print(torch_xla._XLAC._xla_tensors_report(0, str(dev)), end="")
'''

SPMD = r'''
import numpy as np, torch, torch_xla
import torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))
x = torch.randn(8, 4, device=torch_xla.device())
xs.mark_sharding(x, mesh, ("data", None))
y = (x * 2).sum(dim=1)
torch_xla.sync()
'''

XLA_DUMP = r'''
import torch, torch_xla
dev = torch_xla.device()
w = torch.randn(4, 4, device=dev)
for n in [2, 3]:
    y = (torch.ones(n, 4, device=dev) @ w).relu().sum()
    torch_xla.sync()
'''


def run(script: str, work: Path, env: dict, *args: str, merge: Path | None = None) -> None:
    path = work / "sample.py"
    path.write_text(script)
    full = dict(os.environ, PJRT_DEVICE="CPU", **env)
    out = open(merge, "w") if merge else subprocess.DEVNULL
    subprocess.run([sys.executable, str(path), *args], env=full, cwd=work, check=True, stdout=out,
                   stderr=subprocess.STDOUT if merge else subprocess.DEVNULL)


def neutral(text: str, work: Path) -> str:
    pairs = [(str(work), "/home/user/project")]
    for key in ("purelib", "platlib"):
        pairs.append((sysconfig.get_paths()[key], "/usr/lib/python3.11/site-packages"))
    pairs.append((sysconfig.get_paths()["stdlib"], "/usr/lib/python3.11"))
    for real, fake in pairs:
        for p in {real, os.path.realpath(real)}:
            text = text.replace(p, fake)
    return text


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(os.path.realpath(tmp))
        run(NAMED, work, {"XLA_SAVE_TENSORS_FILE": str(work / "named.hlo"), "XLA_SAVE_TENSORS_FMT": "hlo",
                          "PT_XLA_DEBUG_LEVEL": "2", "PT_XLA_DEBUG_MAX_FRAME": "3"},
            str(work / "report_no_ir_debug.txt"), merge=work / "pt_xla_debug_level2_terminal.log")
        run(MULTI_OUTPUT, work, {"XLA_IR_DEBUG": "1"}, merge=work / "report_multi_output.txt")
        run(SPMD, work, {"XLA_SAVE_TENSORS_FILE": str(work / "spmd.hlo"), "XLA_SAVE_TENSORS_FMT": "hlo",
                         "CPU_NUM_DEVICES": "4", "TF_CPP_MIN_LOG_LEVEL": "3"})
        run(XLA_DUMP, work, {"XLA_FLAGS": f"--xla_dump_to={work / 'xla_dump'} --xla_dump_hlo_pass_re=.*"})
        run(XLA_DUMP, work, {"XLA_SAVE_TENSORS_FILE": str(work / "lazy_ir"), "XLA_SAVE_TENSORS_FMT": "text"})
        outputs = {"named.hlo.0": "named_graphs.hlo.0", "spmd.hlo.0": "spmd_graphs.hlo.0",
                   "report_no_ir_debug.txt": "report_no_ir_debug.txt",
                   "report_multi_output.txt": "report_multi_output.txt",
                   "pt_xla_debug_level2_terminal.log": "pt_xla_debug_level2_terminal.log",
                   "lazy_ir.0": "lazy_ir_save_tensors.0"}
        for src, dst in outputs.items():
            (HERE / dst).write_text(neutral((work / src).read_text(), work))
        dump = HERE / "torch_xla_dump"
        shutil.rmtree(dump, ignore_errors=True)
        dump.mkdir()
        for f in sorted((work / "xla_dump").iterdir()):
            # keep the HLO and a few of the non-HLO files XLA writes beside it; drop the bulky .ll/.o/.mlir, and
            # keep the per-pass dumps (--xla_dump_hlo_pass_re) of the second, small module only
            per_pass = f.name.count(".after_") and "optimizations" not in f.name
            if (f.suffix == ".txt" or f.name.endswith("debug_options")) and not (per_pass and "module_0000" in f.name):
                (dump / f.name).write_text(neutral(f.read_text(), work))


if __name__ == "__main__":
    main()
