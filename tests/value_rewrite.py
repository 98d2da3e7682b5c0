"""Copies of real fixture runs with their baked scalar values and sizes rewritten into other value kinds real
programs bake in: negative fractions, ``1e-05``, nan, inf, negative zero, huge integers, booleans, complex numbers,
ramps and cycles over the steps, and sizes from 0 to 2**40.

Used by tests/test_literal_values.py (Hypothesis draws the run and the seed) and run alone to count how the CLI
ends on many copies, with whichever hlodiff is on PYTHONPATH (so the same copies can be measured before and after
a change):

    PYTHONPATH=<tree> python tests/value_rewrite.py --copies 90 --seed 0

The rewrite is deterministic for one seed. Only text HLO is rewritten (a save file's entries, a dump's ``.txt``
modules); protos beside it keep the original values, as a dump edited by hand would.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

_SCALAR_CONSTANT = re.compile(r"\b([a-z][a-z0-9]*)\[\](\{[^{}]*\})? constant\(([^(){}]*|\([^(){}]*\))\)")
_SHAPE = re.compile(r"\b((?:pred|[bfsuc][a-z0-9]*))\[([0-9,<=]+)\]")
_MODULE_START = re.compile(r"(?m)^(?=HloModule )")

_FLOATS = ["1.2", "-3.5", "0.05", "1e-05", "-1e-05", "nan", "-nan", "inf", "-inf", "-0", "0", "1", "-1", "1e+30",
           "3.40282347e+38", "2.5e-08", "0.1", "-0.125", "65504", "1e+300", "-2.2250738585072014e-308", "448"]
_INTS = ["0", "1", "-1", "-3", "7", "2147483647", "-2147483648", "9223372036854775807", str(10 ** 30),
         str(-10 ** 25), "18446744073709551615", "12345678901234567890123"]
_COMPLEX = ["(1.2, -3.5)", "(nan, inf)", "(0, -0)", "(1e-05, 0)", "(-inf, 2)"]
_SIZES = [0, 1, 2, 3, 7, 9, 100, 4096, 2 ** 31, 2 ** 40]


@dataclass(frozen=True)
class Run:
    """A real fixture run: the folder ``explain-recompile`` reads and the dump ``compare`` and ``cost`` read."""

    folder: Path
    dump: Path

    @property
    def name(self) -> str:
        return str(self.folder.relative_to(FIXTURES))


def fixture_runs() -> list[Run]:
    """Every torch_xla save file and every JAX dump folder under fixtures/torch_xla and fixtures/jax."""
    runs = []
    for top in ("torch_xla", "jax"):
        for path in sorted((FIXTURES / top).rglob("*")):
            if path.name == "graphs.hlo.0" and path.is_file():
                runs.append(Run(path.parent, path))
            elif path.name == "dump" and path.is_dir():
                runs.append(Run(path.parent, path))
    return runs


def _kind(element_type: str) -> str:
    if element_type == "pred":
        return "pred"
    if element_type.startswith("c"):
        return "complex"
    if element_type[0] in "su":
        return element_type[0]
    return "float"


_FLOAT_MAX = {"f16": 65504.0, "bf16": 3.38e38, "f32": 3.4028234e38, "f8e4m3fn": 448.0, "f8e4m3": 240.0,
              "f8e5m2": 57344.0, "f8e4m3fnuz": 240.0, "f8e5m2fnuz": 57344.0, "f8e4m3b11fnuz": 30.0}


def _fit(element_type: str, value: str, plan: dict) -> str:
    """The value, or the type's largest when it does not fit (one copy in ten keeps out-of-range values, which
    must give a located error)."""
    if plan["out_of_range"]:
        return value
    kind = _kind(element_type)
    if kind in "su" and element_type[1:].isdigit():
        bits = int(element_type[1:])
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind == "s" else (0, 2 ** bits - 1)
        return value if low <= int(value) <= high else str(high)
    if kind == "float" and element_type in _FLOAT_MAX:
        top = _FLOAT_MAX[element_type]
        number = float(value)
        return value if number != number or abs(number) in (float("inf"), 0.0) or abs(number) <= top else repr(top)
    return value


def _value(kind: str, rng: random.Random, module: int, plan: dict) -> str:
    """One value for a site of this kind in the ``module``-th graph, following the plan's mode."""
    mode = plan["mode"]
    if kind == "pred":
        return ("true", "false")[(module // plan["period"]) % 2] if mode != "random" else rng.choice(["true", "false"])
    if kind == "complex":
        return _COMPLEX[module % len(_COMPLEX)] if mode != "random" else rng.choice(_COMPLEX)
    if mode == "ramp":
        start, step = plan["ramp"][kind]
        value = start + step * module
        return repr(value) if isinstance(value, float) else str(value)
    if mode == "cycle":
        pool = plan["cycle"][kind]
        return pool[module % len(pool)]
    if kind == "float":
        return rng.choice(_FLOATS) if rng.random() < 0.7 else repr(rng.uniform(-1e6, 1e6))
    ints = _INTS if kind == "s" else [v for v in _INTS if not v.startswith("-")]
    return rng.choice(ints)


def _plan(rng: random.Random) -> dict:
    stride = rng.choice([1, 2, 3, 5])
    return {
        "mode": rng.choice(["random", "ramp", "cycle"]),
        "stride": stride, "offset": rng.randrange(stride), "period": rng.choice([1, 2, 3]),
        "ramp": {"float": rng.choice([(1.2, 0.2), (-3.5, -0.5), (1e-05, 1e-05), (0.05, 0.05), (-0.0, 1e-300)]),
                 "s": rng.choice([(0, 1), (-3, -2), (10 ** 20, 1), (2 ** 63 - 4, 1)]),
                 "u": rng.choice([(0, 8), (2 ** 64 - 8, 1), (10 ** 30, 10 ** 29)])},
        "cycle": {"float": rng.sample(_FLOATS, 3), "s": rng.sample(_INTS, 2),
                  "u": rng.sample([v for v in _INTS if not v.startswith("-")], 2)},
        "sizes": rng.random() < 0.5, "size_pool": rng.sample(_SIZES, 3), "out_of_range": rng.random() < 0.1,
    }


def rewrite_module(text: str, module: int, rng: random.Random, plan: dict, old_size: str | None) -> str:
    site = -1

    def constant(m: re.Match) -> str:
        nonlocal site
        site += 1
        if site % plan["stride"] != plan["offset"]:
            return m.group(0)
        value = _fit(m.group(1), _value(_kind(m.group(1)), rng, module, plan), plan)
        return f"{m.group(1)}[]{m.group(2) or ''} constant({value})"

    text = _SCALAR_CONSTANT.sub(constant, text)
    if old_size is not None:
        new = str(plan["size_pool"][module % len(plan["size_pool"])])

        def shape(m: re.Match) -> str:
            dims = [new if d == old_size else d for d in m.group(2).split(",")]
            return f"{m.group(1)}[{','.join(dims)}]"

        text = _SHAPE.sub(shape, text)
    return text


def _common_size(texts: list[str]) -> str | None:
    counts: dict[str, int] = {}
    for text in texts:
        for m in _SHAPE.finditer(text):
            for d in m.group(2).split(","):
                if d.isdigit() and int(d) > 1:
                    counts[d] = counts.get(d, 0) + 1
    return max(sorted(counts), key=counts.get) if counts else None


def rewrite_copy(run: Run, dest: Path, seed: int) -> Run:
    """Copy ``run`` under ``dest`` and rewrite its HLO text (see the module docstring); returns the copy's Run."""
    rng = random.Random(seed)
    plan = _plan(rng)
    folder = dest / run.folder.name
    shutil.copytree(run.folder, folder, ignore=shutil.ignore_patterns("*.mlir", "*.ll", "*.o"))
    copy = Run(folder, folder / run.dump.relative_to(run.folder))
    files = [copy.dump] if copy.dump.is_file() else sorted(p for p in copy.dump.iterdir() if p.suffix == ".txt")
    packed = {p for p in files if p.read_bytes()[:2] == b"\x1f\x8b"}  # a gzipped save file (long runs)
    texts = {p: (gzip.decompress(p.read_bytes()).decode() if p in packed else p.read_text(errors="replace"))
             for p in files}
    old_size = _common_size(list(texts.values())) if plan["sizes"] else None
    module = 0
    for path, text in texts.items():
        parts = _MODULE_START.split(text)
        out = []
        for part in parts:
            if part.startswith("HloModule "):
                part = rewrite_module(part, module, rng, plan, old_size)
                module += 1
            out.append(part)
        if path in packed:
            path.write_bytes(gzip.compress("".join(out).encode(), mtime=0))
        else:
            path.write_text("".join(out))
    return copy


COMMANDS = ("explain-recompile", "compare", "cost")


def target(run: Run, command: str) -> Path:
    return run.folder if command == "explain-recompile" else run.dump


def judge(exit_code: int, stdout: str, output: str) -> str | None:
    """What is wrong with how a command ended, or ``None``: exit 0/1 with a JSON document, or 2 with one error line."""
    if exit_code == 3 or "Traceback" in output or "internal error" in output:
        return "crash"
    if exit_code in (0, 1):
        try:
            json.loads(stdout)
        except ValueError:
            return "bad json"
        return None
    if exit_code == 2:
        errors = [line for line in output.splitlines() if ": error: " in line]
        return None if len(errors) == 1 else "unlocated error"
    return f"exit {exit_code}"


def run_cli(args: list[str]):
    from click.testing import CliRunner

    from hlodiff.cli import main

    return CliRunner().invoke(main, args, env={"COLUMNS": "200"}, prog_name="hlodiff")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=90)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    runs = fixture_runs()
    failures: dict[str, int] = {}
    exits: dict[int, int] = {}
    crashed_copies = 0
    for k in range(args.copies):
        run, seed = runs[k % len(runs)], args.seed + k
        with tempfile.TemporaryDirectory() as tmp:
            copy = rewrite_copy(run, Path(tmp), seed)
            bad, codes = [], []
            for command in COMMANDS:
                result = run_cli([command, str(target(copy, command)), "--json"])
                codes.append(str(result.exit_code))
                exits[result.exit_code] = exits.get(result.exit_code, 0) + 1
                problem = judge(result.exit_code, result.stdout, result.output)
                if problem:
                    reason = str(result.exception or "").splitlines()[0][:90] if result.exception else ""
                    bad.append(f"{command}: {problem} {reason}")
                    failures[problem] = failures.get(problem, 0) + 1
            crashed_copies += bool(bad)
            print(f"{run.name} seed={seed} exits {'/'.join(codes)}: {'; '.join(bad) or 'ok'}", flush=True)
    print(f"copies {args.copies}, copies with a failure {crashed_copies}, failures by kind {failures}, "
          f"exit statuses {dict(sorted(exits.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
