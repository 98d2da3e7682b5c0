"""hlodiff.dumps: finding graphs in save-tensors files, XLA dump folders and HLO files.

Every input is a real output: the committed fixtures (fixtures/, see fixtures/README.md), the shared HLO corpus,
and the small samples in tests/data/dumps/ (made by tests/data/dumps/make_samples.py) for what the fixtures do not
cover. Cut-off, renamed, gzipped or re-numbered variants are derived from them in a temporary folder.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import truth_of
from hlodiff.dumps import GraphRecord, detect_kind, dump_stages, iter_graphs, resolve_ref, split_ref
from hlodiff.errors import GraphCutOff, HlodiffError, HloParseError, InputWarning
from hlodiff.hlo import parse_module
from hlodiff.hlo.model import SourceFrame

from conftest import CORPUS, FIXTURES, need_shared

DATA = Path(__file__).resolve().parent / "data" / "dumps"
TORCH = FIXTURES / "torch_xla"
JAX_DUMP = FIXTURES / "jax" / "recompile_shape" / "dump"
SCENARIOS = sorted(p.parent.name for p in TORCH.glob("*/graphs.hlo.0")) if TORCH.is_dir() else []
GRAPH_HASH_RE = re.compile(r"^Graph Hash: ([0-9a-f]+)$", re.M)


def fixture(name: str) -> Path:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"fixture {name} not present")
    return path


def save_file(scenario: str = "item_partial") -> Path:
    return fixture(f"torch_xla/{scenario}/graphs.hlo.0")


def scan(path, **kw) -> tuple[list[GraphRecord], list[InputWarning]]:
    warnings: list[InputWarning] = []
    return list(iter_graphs(path, warnings, **kw)), warnings


def file_line(path: Path, n: int) -> str:
    return path.read_text().splitlines()[n - 1]


def cut_copy(src: Path, tmp_path: Path, nbytes: int, name: str = "graphs.hlo.0") -> Path:
    """A copy of a real dump as a killed run leaves it: the first ``nbytes`` bytes."""
    dst = tmp_path / name
    dst.write_bytes(src.read_bytes()[:nbytes])
    return dst


def nth(data: bytes, needle: bytes, n: int) -> int:
    """Offset of the n-th (0-based) occurrence of ``needle``."""
    pos = -1
    for _ in range(n + 1):
        pos = data.index(needle, pos + 1)
    return pos


# ---------------------------------------------------------------------------------------------------------------
# torch_xla save-tensors files
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario", SCENARIOS)
def test_save_tensors_entries_match_truth(scenario):
    path = save_file(scenario)
    truth = truth_of(path.parent)
    entries, compilations = _ordinal0_truth(truth)
    records, warnings = scan(path)
    assert warnings == []
    assert [r.index for r in records] == [e["entry"] for e in entries]
    assert [r.graph_hash for r in records] == [e["graph_hash"] for e in entries]
    assert all(r.kind == "save_tensors" and r.complete and r.stage is None for r in records)
    assert [r.ref for r in records] == [f"{path}#{i}" for i in range(len(records))]
    # the cache key is the Graph Hash: its first sightings are exactly the compilations
    seen: set[str | None] = set()
    compiled = [r.index for r in records if not (r.cache_key() in seen or seen.add(r.cache_key()))]
    assert compiled == compilations


def _ordinal0_truth(truth: dict) -> tuple[list[dict], list[int]]:
    """Entries and compilations of ``graphs.hlo.0``: multi-ordinal scenarios keep them per ordinal."""
    if "ordinals" not in truth:
        return truth["entries"], truth["compilations"]
    first = next(o for o in truth["ordinals"] if o["ordinal"] == 0)
    entries = [{"entry": i, "graph_hash": h} for i, h in enumerate(first["graph_hashes"])]
    return entries, first["first_sightings"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_save_tensors_text_is_exactly_the_module(scenario):
    path = save_file(scenario)
    data = path.read_bytes()  # long_run stores it gzipped, as a user may: the reader goes by content
    gz = data[:2] == b"\x1f\x8b"
    lines = (gzip.decompress(data) if gz else data).decode().splitlines()
    for r in scan(path)[0]:
        text = r.text()
        assert (r.packed_text is None) != gz  # plain files are re-read by offset, gzip ones kept compressed
        assert lines[r.start_line - 2] == "## BEGIN_GRAPH"
        assert text.splitlines()[0] == lines[r.start_line - 1]
        assert text.startswith(f"HloModule {r.module_name}, entry_computation_layout=")
        assert text.endswith("}\n") and "Graph Hash" not in text and "## END_GRAPH" not in text
        body = lines[r.start_line - 1:r.start_line - 1 + len(text.splitlines())]
        assert "\n".join(body) + "\n" == text


def test_save_tensors_header_fields():
    path = save_file("item_partial")
    truth = truth_of(path.parent)
    for r, entry in zip(scan(path)[0], truth["entries"]):
        assert r.graph_name is None and r.output_sharding == () and r.module_number is None
        assert all(re.fullmatch(r"[0-9a-f]{1,32}", h) for h in r.root_hashes)
        user = SourceFrame("/home/user/project/item_partial.py", r.frames[-1].line, "<module>")
        assert r.frames[-1] == user
        if entry["trigger"] == "item":  # .item() syncs from the user's line directly
            assert r.frames == (user,)
        else:
            assert r.frames[0] == SourceFrame("/usr/lib/python3.11/site-packages/torch_xla/torch_xla.py", 87, "sync")


def test_root_hashes_without_zero_padding_and_one_per_output():
    """torch_xla prints hashes without zero padding; there is one root hash per graph output."""
    from hlodiff.dumps.debug_log import read_compilations

    all_hashes = []
    for scenario in SCENARIOS:
        path = save_file(scenario)
        outputs = {c.graph_hash: c.num_outputs for c in read_compilations(path.parent / "pt_xla_debug.log")}
        for r in scan(path)[0]:
            all_hashes += r.root_hashes
            if r.graph_hash in outputs:
                assert len(r.root_hashes) == outputs[r.graph_hash]
    assert any(len(h) < 32 for h in all_hashes)


def test_module_parses_with_file_lines():
    path = save_file("batch_shape")
    records = scan(path)[0]
    module = records[5].module()
    assert module.name == records[5].module_name
    param = module.entry.parameters()[0]
    assert file_line(path, param.line).lstrip().startswith(f"%{param.name} = ")


def test_named_graphs_from_torch_xla_compile():
    records, warnings = scan(DATA / "named_graphs.hlo.0")
    assert warnings == []
    assert [r.graph_name for r in records] == [None, "train_step_clear_pending", "train_step"] * 2
    assert records[2].frames[0].function == "sync" and records[2].frames[-1].function == "<module>"
    assert all(r.graph_hash for r in records)


def test_output_sharding_block_belongs_to_the_graph_before_it():
    records, warnings = scan(DATA / "spmd_graphs.hlo.0")
    assert warnings == []
    [r] = records
    assert r.output_sharding == ("f32[8,4] {devices=[4,1]0,1,2,3}", "f32[8] {devices=[4]0,1,2,3}")
    assert r.graph_hash and "OUTPUT_SHARDING" not in r.text()


@pytest.mark.parametrize("name", ["graphs.hlo.3", "graphs.hlo.12", "renamed.txt", "no_suffix"])
def test_detected_by_content_for_any_ordinal_or_name(tmp_path, name):
    src = save_file("slice_index")
    dst = tmp_path / name
    shutil.copy(src, dst)
    expected = scan(src)[0]
    records = scan(dst)[0]
    assert detect_kind(dst) == "save_tensors"
    assert [(r.index, r.graph_hash, r.start_line, r.text()) for r in records] == \
           [(r.index, r.graph_hash, r.start_line, r.text()) for r in expected]
    assert records[1].ref == f"{dst}#1"


@pytest.mark.parametrize("name", ["graphs.hlo.0.gz", "graphs.hlo.0"])
def test_gzip_save_tensors(tmp_path, name):
    src = save_file("metric_even_steps")
    dst = tmp_path / name
    dst.write_bytes(gzip.compress(src.read_bytes()))
    expected = scan(src)[0]
    records, warnings = scan(dst)
    assert warnings == []
    assert all(r.packed_text is not None for r in records)
    assert [(r.graph_hash, r.start_line, r.root_hashes, r.frames, r.text()) for r in records] == \
           [(r.graph_hash, r.start_line, r.root_hashes, r.frames, r.text()) for r in expected]


def test_cut_off_inside_a_graph(tmp_path):
    src = save_file("item_partial")
    data = src.read_bytes()
    cut_at = (nth(data, b"## BEGIN_GRAPH", 4) + nth(data, b"Graph Hash:", 4)) // 2  # inside entry 4's HLO
    assert nth(data, b"## BEGIN_GRAPH", 4) < cut_at < nth(data, b"## BEGIN_GRAPH", 5)
    records, warnings = scan(cut_copy(src, tmp_path, cut_at))
    full = scan(src)[0]
    assert [r.graph_hash for r in records] == [r.graph_hash for r in full[:4]]
    header_line = data[:nth(data, b"[ScheduleSyncTensorsGraph]", 4)].count(b"\n") + 1
    last_line = data[:cut_at].count(b"\n") + 1  # where the file now ends: what the user looks at
    assert warnings == [GraphCutOff(f"graph 4 cut off mid-write (it begins at line {header_line}; the file ends "
                                    "here); skipped", str(tmp_path / "graphs.hlo.0"), last_line,
                                    source=str(tmp_path / "graphs.hlo.0"), index=4)]  # a warning and evidence


def test_cut_off_inside_a_header(tmp_path):
    src = save_file("steady")
    data = src.read_bytes()
    cut_at = nth(data, b"Root Hashes:", 5) + 20
    records, warnings = scan(cut_copy(src, tmp_path, cut_at))
    assert len(records) == 5 and all(r.complete for r in records)
    assert [w.message.split(" (")[0] for w in warnings] == ["graph 5 cut off mid-write"]
    assert warnings[0].line == data[:cut_at].count(b"\n") + 1


def test_cut_off_between_module_and_graph_hash_keeps_the_whole_module(tmp_path):
    src = save_file("lr_constant")
    data = src.read_bytes()
    for cut_at in (nth(data, b"Graph Hash:", 5), nth(data, b"Graph Hash:", 5) + 20):  # before / inside the line
        records, warnings = scan(cut_copy(src, tmp_path, cut_at))
        full = scan(src)[0]
        assert len(records) == 6
        last = records[-1]
        assert not last.complete and last.graph_hash is None and last.cache_key() is None
        assert last.text() == full[-1].text()
        assert [w.message for w in warnings] == \
               ["graph 5 has no Graph Hash (the run stopped before writing it); kept as incomplete"]


def test_cut_off_after_graph_hash_is_complete(tmp_path):
    src = save_file("lr_constant")
    data = src.read_bytes()
    cut_at = data.index(b"\n", nth(data, b"Graph Hash:", 5)) + 1
    records, warnings = scan(cut_copy(src, tmp_path, cut_at))
    assert warnings == [] and len(records) == 6 and records[-1].complete
    assert records[-1].graph_hash == scan(src)[0][-1].graph_hash


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fraction=st.floats(min_value=0.0, max_value=1.0))
def test_any_cut_yields_a_prefix_and_never_raises(tmp_path_factory, fraction):
    src = save_file("dtype_zeros_like")
    data = src.read_bytes()
    cut_at = max(1, int(len(data) * fraction))
    path = cut_copy(src, tmp_path_factory.mktemp("cut"), cut_at)
    full = scan(src)[0]
    records, warnings = scan(path)
    assert [r.index for r in records] == list(range(len(records)))
    assert len(records) <= len(full)
    for r, f in zip(records, full):
        assert r.start_line == f.start_line and r.root_hashes == f.root_hashes
        if r.complete:
            assert r.graph_hash == f.graph_hash and r.text() == f.text()
    assert all(r.complete for r in records[:-1])
    assert len(warnings) <= 1
    # a cut exactly after an entry's END_GRAPH leaves a whole file of fewer graphs: nothing shows it was cut
    at_boundary = data[:cut_at].rstrip().endswith(b"## END_GRAPH")
    if cut_at < len(data) and data[cut_at:].strip() and len(records) < len(full) and not at_boundary:
        assert len(warnings) == 1


def test_garbage_between_entries_is_skipped_with_a_warning(tmp_path):
    src = save_file("steady")
    data = src.read_bytes()
    at = nth(data, b"[ScheduleSyncTensorsGraph]", 2)
    junk = b"WARNING: some unrelated log line\nanother one\n"
    dst = tmp_path / "graphs.hlo.0"
    dst.write_bytes(data[:at] + junk + data[at:])
    records, warnings = scan(dst)
    assert [r.graph_hash for r in records] == [r.graph_hash for r in scan(src)[0]]
    assert warnings == [InputWarning("unexpected text between graphs; skipped", str(dst), data[:at].count(b"\n") + 1)]


def test_older_hashes_form_without_graph_hash(tmp_path):
    # No real dump from torch_xla before Dec 2023 is available: derive one from a real 2.9 file by rewriting its
    # header lines the way the older releases wrote them ("Hashes:" instead of "Root Hashes:", no "Graph Hash:").
    src = save_file("slice_index")
    text = src.read_text()
    old = re.sub(r"^Root Hashes: ", "Hashes: ", text, flags=re.M)
    old = re.sub(r"^Graph Hash: [0-9a-f]+\n\n", "", old, flags=re.M)
    assert "Graph Hash" not in old and old.count("## END_GRAPH") == 6
    dst = tmp_path / "graphs.hlo.0"
    dst.write_text(old)
    records, warnings = scan(dst)
    full = scan(src)[0]
    assert warnings == []
    assert [r.root_hashes for r in records] == [r.root_hashes for r in full]
    assert [r.text() for r in records] == [r.text() for r in full]
    assert all(r.graph_hash is None and r.cache_key() is None and r.complete for r in records)


def test_entry_without_begin_graph_is_skipped(tmp_path):
    src = save_file("steady")
    data = src.read_bytes()
    start, end = nth(data, b"## BEGIN_GRAPH", 1), nth(data, b"[ScheduleSyncTensorsGraph]", 2)
    dst = tmp_path / "graphs.hlo.0"
    dst.write_bytes(data[:start] + data[end:])  # entry 1 keeps its header only
    records, warnings = scan(dst)
    assert [r.index for r in records] == [0, 2, 3, 4, 5]
    assert [w.message for w in warnings] == ["graph 1 has no '## BEGIN_GRAPH' line; skipped"]
    with pytest.raises(HlodiffError, match=r"graph #1 was skipped"):
        resolve_ref(f"{dst}#1")


def test_lazy_ir_save_file_is_rejected_with_the_fix():
    with pytest.raises(HlodiffError) as info:
        scan(DATA / "lazy_ir_save_tensors.0")
    assert info.value.line == 9
    assert "lazy IR text (XLA_SAVE_TENSORS_FMT=text)" in info.value.message
    assert "XLA_SAVE_TENSORS_FMT=hlo" in info.value.message


def test_scan_of_a_large_file_is_streaming(tmp_path):
    """A few hundred real entries back to back (about 20 MB) scan without holding HLO text (speed: bench/)."""
    src = save_file("metric_even_steps")
    big = tmp_path / "graphs.hlo.0"
    with open(big, "wb") as f:
        for _ in range(130):
            f.write(src.read_bytes())
    records, warnings = scan(big)
    assert len(records) == 130 * 6 and warnings == []
    assert all(r.packed_text is None for r in records)
    assert records[-1].text() == scan(src)[0][-1].text()


# ---------------------------------------------------------------------------------------------------------------
# XLA dump folders
# ---------------------------------------------------------------------------------------------------------------

def test_jax_dump_default_stage_is_before_optimizations():
    dump = fixture("jax/recompile_shape/dump")
    truth = truth_of(dump.parent)
    records, warnings = scan(dump)
    assert warnings == []
    expected = [m for call in truth["modules"] for m in call["modules"]]
    assert [f"module_{r.module_number:04d}.{r.module_name}" for r in records] == expected
    assert [r.module_number for r in records] == [0, 2, 4]
    for i, r in enumerate(records):
        assert (r.kind, r.stage, r.index, r.start_line) == ("xla_dump", "before_optimizations", i, 1)
        assert r.source == str(dump)
        assert r.ref == f"{dump}#{i}"
        assert Path(r.path).name == f"module_{r.module_number:04d}.jit_step.before_optimizations.txt"
        assert r.cache_key() == f"module_{r.module_number}"
        assert r.text() == Path(r.path).read_text().rstrip("\n") + "\n"
    assert records[1].module().name == "jit_step"


def test_jax_dump_stage_selection():
    dump = fixture("jax/recompile_shape/dump")
    assert dump_stages(dump) == ["before_optimizations", "cpu_after_optimizations"]
    every = scan(dump, stage="all")[0]
    assert [(r.module_number, r.stage) for r in every] == [
        (n, s) for n in (0, 2, 4) for s in ("before_optimizations", "cpu_after_optimizations")]
    assert [r.index for r in every] == list(range(6))
    for stage in ("after_optimizations", "cpu_after_optimizations"):
        records = scan(dump, stage=stage)[0]
        assert [r.stage for r in records] == ["cpu_after_optimizations"] * 3
        assert "is_scheduled=true" in records[0].text().splitlines()[0]
    with pytest.raises(HlodiffError, match=r"no module was dumped at stage 'sm_90_gpu_after_optimizations' "
                                           r"\(stages present: before_optimizations, cpu_after_optimizations\)"):
        scan(dump, stage="sm_90_gpu_after_optimizations")


def test_torch_xla_dump_with_dotted_module_names_and_pass_dumps():
    dump = DATA / "torch_xla_dump"
    records = scan(dump)[0]
    assert [(r.module_number, r.module_name, r.stage) for r in records] == [
        (0, "SyncTensorsGraph.76", "before_optimizations"), (2, "SyncTensorsGraph.19", "before_optimizations")]
    every = scan(dump, stage="all")[0]
    stages = [r.stage for r in every if r.module_number == 2]
    assert stages[0] == "before_optimizations" and stages[-1] == "cpu_after_optimizations"
    passes = stages[1:-1]
    assert len(passes) == 21 and [int(s[:4]) for s in passes] == list(range(21))
    assert passes[6] == "0006.simplification.after_algsimp.before_simplify-sorts"
    # a pass name selects the dumps taken right after that pass
    after_algsimp = scan(dump, stage="algsimp")[0]
    assert [r.stage for r in after_algsimp] == ["0006.simplification.after_algsimp.before_simplify-sorts"]
    assert after_algsimp[0].module().name == "SyncTensorsGraph.19"
    exact = scan(dump, stage="0017.copy-insertion.after_adding_copies_to_resolve_interference")[0]
    assert len(exact) == 1 and exact[0].module_number == 2


def test_dump_without_before_optimizations_falls_back_to_the_final_hlo(tmp_path):
    dump = fixture("jax/recompile_shape/dump")
    for f in dump.iterdir():
        if f.is_file() and "before_optimizations" not in f.name:
            shutil.copy(f, tmp_path / f.name)
    records = scan(tmp_path)[0]
    assert [(r.module_number, r.stage) for r in records] == [(n, "cpu_after_optimizations") for n in (0, 2, 4)]


def test_folder_with_only_non_hlo_files(tmp_path):
    dump = fixture("jax/recompile_shape/dump")
    for f in dump.iterdir():
        if f.is_dir():
            shutil.copytree(f, tmp_path / f.name)
        elif not f.name.endswith(("before_optimizations.txt", "cpu_after_optimizations.txt")):
            shutil.copy(f, tmp_path / f.name)
    assert any(f.suffix == ".o" for f in tmp_path.iterdir()) and any(f.is_dir() for f in tmp_path.iterdir())
    with pytest.raises(HlodiffError, match="no HLO modules found in") as info:
        scan(tmp_path)
    assert info.value.path == str(tmp_path)
    assert "\n" not in str(info.value)


def test_txt_named_like_hlo_but_holding_something_else_is_ignored(tmp_path):
    dump = fixture("jax/recompile_shape/dump")
    shutil.copy(dump / "module_0000.jit_step.before_optimizations.txt", tmp_path)
    shutil.copy(dump / "module_0002.jit_step.cpu_after_optimizations-buffer-assignment.txt",
                tmp_path / "module_0002.jit_step.before_optimizations.txt")
    assert [r.module_number for r in scan(tmp_path)[0]] == [0]


def test_folder_holding_a_save_file_names_it():
    folder = save_file("steady").parent
    with pytest.raises(HlodiffError, match=r"no HLO modules found in .*steady \(it holds graphs\.hlo\.0: pass that"):
        scan(folder)


def test_empty_folder(tmp_path):
    with pytest.raises(HlodiffError, match=f"no HLO modules found in {re.escape(str(tmp_path))}"):
        scan(tmp_path)


# ---------------------------------------------------------------------------------------------------------------
# single HLO files
# ---------------------------------------------------------------------------------------------------------------

def corpus(name: str) -> Path:
    return need_shared(CORPUS / name)


@pytest.mark.parametrize("name, start_line, module_name", [
    ("gpu_hlo.hlo", 3, "module"),                          # FileCheck RUN line before the module
    ("xnn.parallel_dots.optimized.hlo", 2, "ynn_parallel_dots"),  # /* comment */ before the module
    ("scatter_add.hlo", 1, None),                          # bare computations with // CHECK lines, no HloModule
    ("diffrax.b380012920.hlo", 1, "jit__lambda_"),         # ends with "} // main.731"
    ("test_as_stride_bug.IrToHlo.202.hlo", 1, "IrToHlo.202"),
])
def test_single_hlo_files(name, start_line, module_name):
    path = corpus(name)
    records, warnings = scan(path)
    assert warnings == []
    [r] = records
    assert (r.kind, r.index, r.start_line, r.module_name, r.complete) == ("hlo_file", 0, start_line, module_name, True)
    assert r.graph_hash is None and r.cache_key() is None and r.frames == ()
    assert r.module().instruction_count() > 0


def test_every_corpus_file_is_read():
    files = sorted(need_shared(CORPUS).glob("*.hlo"))
    assert files
    for path in files:
        records, warnings = scan(path)
        assert len(records) == 1 and warnings == [], path


def test_file_with_several_modules(tmp_path):
    dump = fixture("jax/recompile_shape/dump")
    parts = [dump / "module_0000.jit_step.before_optimizations.txt",
             dump / "module_0002.jit_step.cpu_after_optimizations.txt"]
    combined = tmp_path / "two.hlo"
    combined.write_text("".join(p.read_text() for p in parts))
    records = scan(combined)[0]
    assert [r.index for r in records] == [0, 1]
    assert records[1].start_line == parts[0].read_text().count("\n") + 1
    assert [r.text() for r in records] == [p.read_text().rstrip("\n") + "\n" for p in parts]
    assert records[1].module().name == "jit_step"


def test_big_gzip_hlo_file():
    path = fixture("big/transformer24.hlo.gz")
    info = json.loads((path.parent / "transformer24.json").read_text())["files"]["transformer24"]
    records, warnings = scan(path)
    assert warnings == [] and len(records) == 1
    text = records[0].text()
    raw = gzip.decompress(path.read_bytes())
    assert len(raw) == info["bytes"] and text == raw.decode().rstrip("\n") + "\n"
    assert records[0].module().instruction_count() == info["instructions"]


def test_cut_hlo_file_is_flagged(tmp_path):
    src = fixture("jax/recompile_shape/dump") / "module_0002.jit_step.before_optimizations.txt"
    data = src.read_bytes()
    path = cut_copy(src, tmp_path, len(data) * 2 // 3, "cut.hlo")
    records, warnings = scan(path)
    assert not records[0].complete
    last_line = data[:len(data) * 2 // 3].count(b"\n") + 1
    assert warnings == [InputWarning("module 0 does not end with '}' (file cut off? it begins at line 1, its text "
                                     "ends here)", str(path), last_line)]
    with pytest.raises(HloParseError, match=f"cut off: its text ends at line {last_line}"):
        records[0].module()


def test_truncated_gzip_stream_warns_and_keeps_what_was_read(tmp_path):
    src = save_file("steady")
    packed = gzip.compress(src.read_bytes())
    path = tmp_path / "graphs.hlo.0.gz"
    path.write_bytes(packed[: len(packed) * 3 // 4])
    records, warnings = scan(path)
    full = scan(src)[0]
    assert 0 < len(records) < len(full)
    for r, f in zip(records, full):
        if r.complete:
            assert r.text() == f.text() and r.graph_hash == f.graph_hash
    assert any(w.message.startswith("gzip data cut off or corrupt") for w in warnings)


# ---------------------------------------------------------------------------------------------------------------
# errors: one line, located, exit status 2 at the CLI
# ---------------------------------------------------------------------------------------------------------------

def test_error_nonexistent_path(tmp_path):
    with pytest.raises(HlodiffError) as info:
        scan(tmp_path / "nope.hlo")
    assert str(info.value) == f"{tmp_path / 'nope.hlo'}: no such file or directory"


def test_errors_are_raised_by_the_call_not_the_first_record(tmp_path):
    with pytest.raises(HlodiffError, match="no such file"):
        iter_graphs(tmp_path / "nope")
    with pytest.raises(HlodiffError, match="no HLO modules found"):
        iter_graphs(tmp_path)


def test_error_names_the_ordinal_file_torch_xla_wrote(tmp_path):
    shutil.copy(save_file("steady"), tmp_path / "graphs.hlo.0")
    with pytest.raises(HlodiffError, match=r"did you mean .*graphs\.hlo\.0\?"):
        scan(tmp_path / "graphs.hlo")


def test_error_empty_file(tmp_path):
    (tmp_path / "empty.hlo").write_bytes(b"")
    with pytest.raises(HlodiffError, match="empty file"):
        scan(tmp_path / "empty.hlo")


def test_error_binary_file():
    obj = next(fixture("jax/recompile_shape/dump").glob("*.o"))
    with pytest.raises(HlodiffError, match=r"not an HLO dump: binary data"):
        scan(obj)


@pytest.mark.parametrize("name, why", [
    ("tensors_report.txt", "live-tensor report"),
    ("pt_xla_debug.log", "PT_XLA_DEBUG log"),
    ("truth.json", "first line is '{'"),
])
def test_error_other_text_files(name, why):
    path = save_file("steady").parent / name
    with pytest.raises(HlodiffError) as info:
        scan(path)
    assert info.value.message.startswith("not an HLO dump: ") and why in info.value.message
    assert (info.value.path, info.value.line) == (str(path), 1)


def test_error_python_source():
    script = fixture("torch_xla/steady.py")
    with pytest.raises(HlodiffError, match=r"not an HLO dump: first line is .*expected 'HloModule'"):
        scan(script)


# ---------------------------------------------------------------------------------------------------------------
# PATH#N references
# ---------------------------------------------------------------------------------------------------------------

def test_resolve_ref():
    path = save_file("item_partial")
    assert resolve_ref(f"{path}#3").graph_hash == "b172ecb25972b26b9ec235b5a3016d7e"
    assert resolve_ref(f"{path}#-1").index == 6
    dump = fixture("jax/recompile_shape/dump")
    assert resolve_ref(f"{dump}#2").module_number == 4
    assert resolve_ref(f"{dump}#1", stage="all").stage == "cpu_after_optimizations"


def test_resolve_ref_out_of_range():
    path = save_file("item_partial")
    with pytest.raises(HlodiffError) as info:
        resolve_ref(f"{path}#7")
    assert info.value.message == "no graph #7: there are 7 graphs (#0 to #6)"
    assert info.value.path == str(path)
    with pytest.raises(HlodiffError, match=r"no graph #-8: there are 7 graphs"):
        resolve_ref(f"{path}#-8")


def test_resolve_ref_without_index():
    path = save_file("item_partial")
    with pytest.raises(HlodiffError, match=r"holds 7 graphs; name one as .*#N"):
        resolve_ref(str(path))
    assert resolve_ref(str(DATA / "spmd_graphs.hlo.0")).index == 0


def test_split_ref(tmp_path):
    assert split_ref("graphs.hlo.0#12") == ("graphs.hlo.0", 12)
    assert split_ref("a#b/graphs.hlo.0#-1") == ("a#b/graphs.hlo.0", -1)
    assert split_ref("graphs.hlo.0") == ("graphs.hlo.0", None)
    odd = tmp_path / "run#2"  # an existing path that merely ends like a reference
    shutil.copy(save_file("steady"), odd)
    assert split_ref(str(odd)) == (str(odd), None)


@pytest.mark.parametrize("name", ["Comments", "NoEntry", "SlashSlashComments"])
def test_module_name_of_a_header_with_a_colon_is_the_parsers(name):
    """XLA's own parser tests write `HloModule comments:`: the dump reader records the name the parser gives
    (without the colon), which `inspect` prints and graph references use."""
    path = need_shared(CORPUS.parent / "xla_parser" / "valid" / f"test.{name}.hlo")
    (record,) = iter_graphs(path)
    assert re.search(r"^HloModule \S+:", path.read_text(), re.M)
    assert record.module_name == parse_module(path.read_text()).name and ":" not in record.module_name
