"""The 300K-instruction pair of issue 34: an unrolled step of N identical blocks as JAX lowers it, twice.

    python bench/gen_jax_blocks.py [--blocks 6800] [--out bench/out/jax_blocks]

Each block is a matmul, a layer norm with a baked epsilon and a GELU with a residual (about 44 HLO lines with
JAX's metadata); one scalar output every 500 blocks. ``a.hlo`` has epsilon 1e-05 everywhere. ``b.hlo`` is the
same program with two independent changes a user could make: block N/2 uses epsilon 1e-06 (XLA text shares the
equal constants, so the change is an added constant and broadcast used by one block's add), and the first two
scalar outputs are swapped. 6,800 blocks give about 299,000 lines and 16.8 MB per file (JAX 0.10.2). Nothing is
compiled; lowering takes about a minute per file. The output is gitignored (bench/out/).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "jax_blocks"


def step_of(blocks: int, eps_block: int, swap: bool, every: int = 500):
    import jax
    import jax.numpy as jnp

    def step(x, ws):
        outs = []
        for i in range(blocks):
            h = x @ ws[i % 4]
            mu = h.mean(-1, keepdims=True)
            var = ((h - mu) ** 2).mean(-1, keepdims=True)
            eps = 1e-6 if i == eps_block else 1e-5
            h = (h - mu) / jnp.sqrt(var + eps)
            x = jax.nn.gelu(h) + x
            if i % every == every - 1:
                outs.append(x.sum())
        if swap and len(outs) >= 2:
            outs[0], outs[1] = outs[1], outs[0]
        return x, outs

    return step


def generate(blocks: int, out: Path) -> tuple[Path, Path]:
    """Write ``a.hlo`` and ``b.hlo`` (and what they are in ``pair.json``) unless already there for ``blocks``."""
    import jax
    import jax.numpy as jnp

    manifest = out / "pair.json"
    a, b = out / "a.hlo", out / "b.hlo"
    if manifest.exists() and json.loads(manifest.read_text()).get("blocks") == blocks and a.exists() and b.exists():
        return a, b
    out.mkdir(parents=True, exist_ok=True)
    x, ws = jnp.ones((4, 16)), [jnp.ones((16, 16))] * 4
    for path, eps_block, swap in ((a, -1, False), (b, blocks // 2, True)):
        text = jax.jit(step_of(blocks, eps_block, swap)).lower(x, ws).compiler_ir("hlo").as_hlo_text()
        path.write_text(text)
    manifest.write_text(json.dumps({"blocks": blocks, "changed_block": blocks // 2, "epsilon": ["1e-05", "1e-06"],
                                    "swapped_outputs": [1, 2], "jax": jax.__version__}, indent=1))
    return a, b


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--blocks", type=int, default=6800)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    a, b = generate(args.blocks, args.out)
    for p in (a, b):
        print(f"{p}: {p.stat().st_size / 1e6:.1f} MB, {p.read_text().count(chr(10)):,} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
