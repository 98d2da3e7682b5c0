"""hlodiff cost on real dumps: bytes are computed here from the fixtures' own shapes, never copied from hlodiff."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from helpers import FIXTURES
from hlodiff.cli import main
from hlodiff.hlo.shapes import parse_shape

JAX_DUMP = FIXTURES / "jax" / "recompile_shape" / "dump"
PIPELINE = FIXTURES / "torch_xla" / "pipeline"


def run(*args: str):
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})


def cost_json(*args: str) -> dict:
    result = run("cost", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def nbytes(*shapes: str) -> int:
    total = 0
    for text in shapes:
        dims = [int(d) for d in re.fullmatch(r"f32\[(.*)\]", text).group(1).split(",") if d]
        n = 4
        for d in dims:
            n *= d
        total += n
    return total


def test_jax_dump_uses_xla_memory_report_and_optimized_modules():
    doc = cost_json(str(JAX_DUMP))
    assert doc["schema"] == "hlodiff.cost/1"
    first = doc["graphs"][0]
    hlo = (JAX_DUMP / "module_0000.jit_step.cpu_after_optimizations.txt").read_text()
    layout = re.search(r"entry_computation_layout=\{\((.*?)\)->\((.*?)\)\}", hlo)
    params = [s.split("{")[0] for s in layout.group(1).split(", ")]
    outs = [s.split("{")[0] for s in layout.group(2).split(", ")]
    assert first["parameters"] == {"count": len(params), "bytes": nbytes(*params)}
    assert first["outputs"] == {"count": len(outs), "bytes": nbytes(*outs)}
    report = (JAX_DUMP / "module_0000.jit_step.cpu_after_optimizations-memory-usage-report.txt").read_text()
    assert first["peak_source"] == "xla"
    assert first["peak_bytes"] == int(re.search(r"Total bytes: (\d+)", report).group(1))
    # the estimate is measured against XLA's figure
    assert abs(first["estimated_peak_bytes"] - first["peak_bytes"]) <= 0.15 * first["peak_bytes"]


def test_dump_without_buffer_assignment_is_estimated_and_says_so(tmp_path):
    for p in JAX_DUMP.glob("module_0000.jit_step.*.txt"):
        if "buffer-assignment" not in p.name and "memory-usage" not in p.name and "live-range" not in p.name:
            (tmp_path / p.name).write_bytes(p.read_bytes())
    doc = cost_json(str(tmp_path))
    assert doc["graphs"][0]["peak_source"] == "estimate"
    assert any("peak memory is hlodiff's estimate" in w for w in doc["warnings"])


def test_pipeline_boundary_names_forward_activations_by_tensor_id():
    folder = PIPELINE / "mb2"
    doc = cost_json(str(folder / "graphs.hlo.0"))
    first = doc["boundaries"][0]
    assert first["from"].endswith("#0") and first["to"].endswith("#1")
    assert first["bytes"] == sum(nbytes(t["shape"]) for t in first["tensors"])
    assert first["bytes"] == sum(parse_shape(t["shape"]).byte_size() for t in first["tensors"])


def test_bad_inputs_are_one_line_errors():
    result = run("cost", str(FIXTURES / "nope"))
    assert result.exit_code == 2 and "error:" in result.output and "Traceback" not in result.output
