"""Every real public HLO file parses, and printing then parsing gives back an equal module."""

from __future__ import annotations

import pytest

from conftest import CORPUS, FIXTURES, SHARED, corpus_files, shared_params
from hlodiff.hlo import format_module, parse_module

CORPUS_FILES = corpus_files()


@pytest.mark.needs_shared(CORPUS)
def test_corpus_is_present():
    assert len(CORPUS_FILES) >= 18, "the shared corpus should be checked out beside this repo"


@pytest.mark.parametrize("path", shared_params(CORPUS_FILES, CORPUS), ids=lambda p: getattr(p, "name", None))
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


@pytest.mark.needs_shared(CORPUS)
def test_maxtext_entry_and_sizes():
    path = next(p for p in CORPUS_FILES if p.name.startswith("nv_maxtext"))
    module = parse_module(path.read_text())
    assert module.name == "jit_train_step"
    assert module.entry.is_entry
    assert "input_output_alias" in module.attrs
    root = module.entry.root
    assert root.opcode == "tuple" and root.is_root


@pytest.mark.needs_shared(CORPUS)
def test_fsdp_torch_xla_dump_keeps_sharding_and_frontend_attributes():
    path = next(p for p in CORPUS_FILES if p.name.startswith("sharding_fsdp"))
    module = parse_module(path.read_text())
    shardings = {i.attrs["sharding"] for _, i in module.instructions() if "sharding" in i.attrs}
    assert "{devices=[2,1]0,1}" in shardings


def _fixture_graphs():
    from hlodiff.dumps import iter_graphs

    fixtures = FIXTURES
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


# -- XLA's own parser tests and wild dumps (../shared/corpus/xla_parser, ../shared/corpus/wild) -------------------

XLA_PARSER = SHARED / "corpus" / "xla_parser"
WILD = SHARED / "corpus" / "wild"

# Invalid modules hlodiff reads anyway: their fault is a semantic rule of one opcode that XLA's parser checks while
# building the instruction and that a diff does not need (docs/limits.md, "Which HLO text hlodiff reads, and what it
# leaves to XLA"). strict: the day one of them is rejected, the list must shrink.
ACCEPTED_INVALID: dict[str, str] = {}


def _manifest() -> list[dict[str, str]]:
    import csv

    path = XLA_PARSER / "MANIFEST.tsv"
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [row for row in csv.DictReader(f, delimiter="\t") if row["status"] in ("valid", "invalid")]


MANIFEST = _manifest()


def _xla_case(row):
    marks = []
    if row["name"] in ACCEPTED_INVALID:
        marks.append(pytest.mark.xfail(strict=True, reason=ACCEPTED_INVALID[row["name"]]))
    return pytest.param(row, id=row["name"], marks=marks)


@pytest.mark.needs_shared(XLA_PARSER / "MANIFEST.tsv")
def test_xla_parser_corpus_is_present():
    assert len([r for r in MANIFEST if r["status"] == "valid"]) == 246
    assert len([r for r in MANIFEST if r["status"] == "invalid"]) == 90


@pytest.mark.parametrize("row", shared_params([_xla_case(r) for r in MANIFEST if r["status"] == "valid"],
                                              XLA_PARSER / "MANIFEST.tsv"))
def test_xla_valid_module_reads_with_xlas_instruction_count(row):
    path = XLA_PARSER / "valid" / (row["name"] + ".hlo")
    module = parse_module(path.read_text(), path=str(path))
    assert module.instruction_count() == int(row["xla_instructions"])


@pytest.mark.parametrize("row", shared_params([_xla_case(r) for r in MANIFEST if r["status"] == "invalid"],
                                              XLA_PARSER / "MANIFEST.tsv"))
def test_xla_invalid_module_is_one_located_error(row):
    from hlodiff.errors import HloParseError

    path = XLA_PARSER / "invalid" / (row["name"] + ".hlo")
    with pytest.raises(HloParseError) as caught:
        parse_module(path.read_text(), path=str(path))
    assert caught.value.line is not None and caught.value.col is not None
    assert "\n" not in str(caught.value)


def _wild_valid() -> list[str]:
    """File names whose 'Judged' column in wild/SOURCES.md starts with 'valid'."""
    path = WILD / "SOURCES.md"
    if not path.is_file():
        return []
    names = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1].startswith("`") and cells[-2].startswith("valid"):
            names.append(cells[1].split("`")[1].rstrip("/"))
    return names


@pytest.mark.parametrize("name", shared_params(_wild_valid(), WILD / "SOURCES.md"))
def test_wild_valid_file_reads(name):
    from hlodiff.dumps import iter_graphs

    path = WILD / name
    records = list(iter_graphs(path, stage="all" if path.is_dir() else None))
    assert records
    for record in records:
        assert record.module().instruction_count() > 0


@pytest.mark.needs_shared(WILD / "SOURCES.md")
def test_wild_set_is_listed():
    assert len(_wild_valid()) >= 45
