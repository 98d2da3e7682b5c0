"""Every real public HLO file parses, and printing then parsing gives back an equal module."""

from __future__ import annotations

import pytest

from conftest import ROOT, corpus_files
from hlodiff.hlo import format_module, parse_module

CORPUS_FILES = corpus_files()


def test_corpus_is_present():
    assert len(CORPUS_FILES) >= 18, "the shared corpus should be checked out beside this repo"


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_file_parses_and_round_trips(path):
    text = path.read_text()
    module = parse_module(text, path=str(path))
    assert module.instruction_count() > 0
    # Every operand names an instruction of its computation, and every instruction line was read.
    written = sum(len(c.instructions) for c in module.computations if not c.implicit)
    assert written == _count_instruction_statements(text)
    again = parse_module(format_module(module))
    assert again == module


def _count_instruction_statements(text: str) -> int:
    """Instruction statements counted naively: lines holding ' = ' whose left side is one name (not a comment)."""
    count = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//") or " = " not in stripped:
            continue
        left = stripped.split(" = ", 1)[0].removeprefix("ROOT ").strip()
        if left and " " not in left and "(" not in left and '"' not in left:
            count += 1
    return count


def test_maxtext_entry_and_sizes():
    path = next(p for p in CORPUS_FILES if p.name.startswith("nv_maxtext"))
    module = parse_module(path.read_text())
    assert module.name == "jit_train_step"
    assert module.entry.is_entry
    assert "input_output_alias" in module.attrs
    root = module.entry.root
    assert root.opcode == "tuple" and root.is_root


def test_fsdp_torch_xla_dump_keeps_sharding_and_frontend_attributes():
    path = next(p for p in CORPUS_FILES if p.name.startswith("sharding_fsdp"))
    module = parse_module(path.read_text())
    shardings = {i.attrs["sharding"] for _, i in module.instructions() if "sharding" in i.attrs}
    assert "{devices=[2,1]0,1}" in shardings


def _fixture_graphs():
    from hlodiff.dumps import iter_graphs

    fixtures = ROOT / "fixtures"
    sources = sorted(fixtures.glob("torch_xla/*/graphs.hlo.0")) + [fixtures / "jax" / "recompile_shape" / "dump"]
    sources += sorted((fixtures / "big").glob("*.hlo.gz"))
    for source in sources:
        for record in iter_graphs(source, stage="all" if source.is_dir() else None):
            yield pytest.param(record, id=record.ref.replace(str(fixtures) + "/", ""))


@pytest.mark.parametrize("record", list(_fixture_graphs()))
def test_every_fixture_graph_parses_and_round_trips(record):
    module = record.module()
    assert module.instruction_count() > 0
    assert parse_module(format_module(module)) == module
