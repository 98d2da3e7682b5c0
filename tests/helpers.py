"""What the tests share: a fixture's truth, the CLI run in-process, real modules and programmatic edits of them
(never hand-written HLO), and fixture scripts run under `hlodiff record`.

One helper per need, so that a change in how the tests read a truth or run the CLI is made once: `truth_of` for a
fixture's truth.json, `cli` for the click command run in-process, `cli_json` for its --json document, `xla_bytes`
for the bytes of a shape as XLA sees them. (The ../shared corpus gate is in conftest.py.)"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import random
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conftest import FIXTURES  # where the fixtures live is said once, beside the ../shared gate
from hlodiff.cli import main
from hlodiff.dumps import iter_graphs
from hlodiff.hlo import format_module, parse_module
from hlodiff.hlo.model import Module, Shape



def truth_of(*parts: str | Path) -> dict:
    """The truth.json of the fixture folder `FIXTURES/<parts...>` (or of an absolute folder, e.g. a fresh run).

    A fixture script writes it from what the run itself recorded (torch_xla's metrics, the compile log, the lines it
    ran), so a test's expectation comes from the run and not from the code under test."""
    return json.loads(FIXTURES.joinpath(*parts, "truth.json").read_text())


def cli(*args, columns: int = 200, env: dict[str, str] | None = None, cwd: Path | None = None,
        codes: tuple[int, ...] | None = None) -> Result:
    """The `hlodiff` click command run in-process on `args` (each passed through str()), named `hlodiff` in its
    messages as the installed command is.

    `columns` pins $COLUMNS, so that a table's layout does not depend on the terminal the tests run in; `env` adds
    variables; `cwd` runs it from that directory (relative paths); `codes`, if given, are the exit codes the test
    accepts (checked here, with the output as the message). `result.stdout` and `result.stderr` are apart,
    `result.output` is both interleaved as a terminal shows them."""
    command = [str(a) for a in args]
    variables = {"COLUMNS": str(columns), **(env or {})}
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = CliRunner().invoke(main, command, env=variables, prog_name="hlodiff")
    if codes is not None:
        assert result.exit_code in codes, result.output
    return result


def cli_json(*args, codes: tuple[int, ...] | None = None, **options) -> dict:
    """The document `hlodiff <args> --json` writes to stdout (the JSON contract: `--json > out.json`), options as
    `cli`'s."""
    return json.loads(cli(*args, "--json", codes=codes, **options).stdout)


def fix_rules_of(doc: dict) -> set[str]:
    """The fix rows every cause of an `explain-recompile --json` document records."""
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}


def jax_scenario(name: str, codes: tuple[int, ...] = (0, 1), **options) -> dict:
    """`explain-recompile --json` of the JAX scenario `name`: its dump and, as `--jax-log`, its stderr.log (mode
    d-explicit of fixtures/scenarios/README.md); options as `cli`'s."""
    folder = FIXTURES / "scenarios" / "jax" / name
    return cli_json("explain-recompile", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=codes,
                    **options)


def xla_bytes(shape: str) -> int:
    """Bytes of an array shape (`f32[4,16]`, layout optional) as XLA reads it: XLA's own parser (jaxlib, the optional
    `jax` extra; the calling test skips without it) gives the element type's numpy dtype and the dimensions, numpy
    the element's size. The oracle for hlodiff's byte counts, which must not come from hlodiff's Shape.byte_size."""
    import math

    hlo = pytest.importorskip("jaxlib._hlo", reason="XLA's parser (jaxlib) is the byte-size oracle")
    module = hlo.hlo_module_from_text(f"HloModule oracle\n\nENTRY e {{\n  ROOT p = {shape} parameter(0)\n}}\n")
    (parsed,) = hlo.XlaComputation(module.as_serialized_hlo_module_proto()).program_shape().parameter_shapes()
    assert parsed.is_array(), shape
    return parsed.numpy_dtype().itemsize * math.prod(parsed.dimensions())


def scenario(name: str) -> tuple[list, dict]:
    """Graph records of a torch_xla fixture scenario and its truth.json."""
    records = list(iter_graphs(FIXTURES / "torch_xla" / name / "graphs.hlo.0"))
    return records, truth_of("torch_xla", name)


def reparse(module: Module) -> Module:
    """Print and parse again, so edits also go through the text path."""
    return parse_module(format_module(module))


def rename_instructions(module: Module, seed: int = 0) -> Module:
    """Every instruction gets a new, unrelated name; operands follow."""
    m = copy.deepcopy(module)
    rng = random.Random(seed)
    for comp in m.computations:
        names = [i.name for i in comp.instructions]
        fresh = [f"renamed.{n}" for n in rng.sample(range(10 * len(names) + 10), len(names))]
        mapping = dict(zip(names, fresh))
        for inst in comp.instructions:
            inst.name = mapping[inst.name]
            inst.operands = tuple(mapping[o] for o in inst.operands)
    return m


def permute_parameters(module: Module, seed: int = 0) -> Module:
    """Renumber the entry parameters by a random permutation and move their lines, as a tracer might."""
    m = copy.deepcopy(module)
    entry = m.entry
    params = [i for i in entry.instructions if i.opcode == "parameter"]
    numbers = [p.parameter_number for p in params]
    shuffled = numbers[:]
    random.Random(seed).shuffle(shuffled)
    for p, n in zip(params, shuffled):
        p.parameter_number = n
    rest = [i for i in entry.instructions if i.opcode != "parameter"]
    entry.instructions = sorted(params, key=lambda p: p.parameter_number) + rest
    if entry.signature is not None:
        entry.signature = None  # the signature lists parameters in order; a reordered dump prints it anew
    m.attrs.pop("entry_computation_layout", None)
    return m


def reorder_independent(module: Module, seed: int = 0) -> Module:
    """A different valid order of the entry's instructions (a random topological order)."""
    m = copy.deepcopy(module)
    entry = m.entry
    rng = random.Random(seed)
    by_name = {i.name: i for i in entry.instructions}
    pending = {i.name: set(i.operands) for i in entry.instructions}
    done: list = []
    placed: set[str] = set()
    while pending:
        ready = sorted(n for n, ops in pending.items() if ops <= placed)
        pick = rng.choice(ready)
        done.append(by_name[pick])
        placed.add(pick)
        del pending[pick]
    entry.instructions = done
    return m


def with_shape(shape: Shape, element_type: str) -> Shape:
    return Shape(element_type, shape.dims, shape.dynamic, shape.layout)


# -- running fixture scripts under `hlodiff record` (tests/test_record_*.py) ---------------------------------------

RECORD_SHIM = Path(__file__).resolve().parent / "data" / "record_shim" / "_common.py"


def run_hlodiff(*args, cwd: Path | None = None, env: dict[str, str] | None = None, columns: int | None = None,
                stdin: bytes | None = None, text: bool = True):
    """The installed ``hlodiff`` command in a fresh process, for what `cli` in-process cannot show: a recording's
    child Python, standard input, the bytes written to a real pipe under an encoding, a terminal's width.

    `env` is the whole environment (default: this one's); `columns` sets $COLUMNS on it; `stdin` is fed as bytes;
    `text=False` gives stdout and stderr as bytes."""
    import subprocess
    import sys

    variables = dict(os.environ if env is None else env)
    if columns is not None:
        variables["COLUMNS"] = str(columns)
    command = [str(Path(sys.executable).with_name("hlodiff")), *map(str, args)]
    return subprocess.run(command, cwd=cwd, env=variables,
                          input=stdin, capture_output=True, text=text, timeout=600)


def record_json(stdout: str) -> dict:
    """The document `hlodiff record --json` prints after whatever the recorded script printed itself."""
    return json.loads(stdout[stdout.index('{\n  "schema"'):])


def script_under_record(work: Path, script: str) -> str:
    """Copy ``fixtures/torch_xla/<script>.py`` into ``work/torch_xla/`` with the shim as its ``_common`` (the same code
    and line numbers, no capture of its own); returns the path to run, relative to ``work``."""
    import shutil

    (work / "torch_xla").mkdir(exist_ok=True)
    shutil.copy(FIXTURES / "torch_xla" / f"{script}.py", work / "torch_xla")
    shutil.copy(RECORD_SHIM, work / "_common.py")
    return f"torch_xla/{script}.py"


def capture_free_env(**extra: str) -> dict[str, str]:
    """This environment without any capture variable (XLA_*, PT_XLA_*, HLODIFF_*), on the CPU, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "PT_XLA", "HLODIFF_"))}
    env.update(PJRT_DEVICE="CPU", TF_CPP_MIN_LOG_LEVEL="2", **extra)
    return env


def explained(inputs, warnings: list | None = None):
    """The explanation of the run found at ``inputs`` (:func:`hlodiff.dumps.run_folder.discover`'s result): its
    evidence read (:func:`hlodiff.dumps.evidence.read_run`), then analysed, as ``explain-recompile`` does."""
    from hlodiff.dumps.evidence import read_run
    from hlodiff.explain.recompile import explain_run

    warnings = [] if warnings is None else warnings
    return explain_run(read_run(inputs, warnings), warnings)


def capture_argv(path: str) -> list[str]:
    """What a user passes for a capture under ``fixtures/`` (score.py's layout: a save file, a ``record`` folder, a
    run folder with its logs), or a fixture's dump folder."""
    folder = FIXTURES / path
    if (folder / "graphs.hlo.0").exists():
        return [str(folder / "graphs.hlo.0")]
    if (folder / "record").is_dir():
        return [str(folder / "record")]
    if (folder / "pt_xla_debug.log").exists() or (folder / "stderr.log").exists():
        return [str(folder)]
    return [str(folder / "dump")]


def cost_of_text(tmp_path: Path, text: str, name: str = "run.hlo") -> dict:
    """``hlodiff cost --json`` on one HLO module written as ``name`` under ``tmp_path`` (a hand-made loop or step)."""
    path = tmp_path / name
    path.write_text(text)
    return cli_json("cost", str(path), codes=(0,))


def cost_scenario(name: str) -> dict:
    """``hlodiff cost --json`` on the cost scenario ``name`` (fixtures/scenarios/cost/): its record folder, or its dump
    with the JAX log beside it, as score_cost.py reads it."""
    folder = FIXTURES / "scenarios" / "cost" / name
    argv = ([str(folder / "record")] if (folder / "record").is_dir()
            else [str(folder / "dump"), "--jax-log", str(folder / "stderr.log")])
    return cli_json("cost", *argv, codes=(0,))
