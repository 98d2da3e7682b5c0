"""Constants the text prints as `{...}`: read from the protos beside it, or equality is unknown, never "equal".

arange_window (fixtures/torch_xla/arange_window.py) compiles four graphs that differ only in the values of an
s64[64] arange constant. Its save file hides them; its dump's protos hold them. A copy of the save file alone
(the capture most users have) must not be called equal, nor told as identical HLO; the dump must show the change
at the arange line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import FIXTURES, cli, cli_json, truth_of

RUN = FIXTURES / "torch_xla" / "arange_window"
TRUTH = truth_of("torch_xla", "arange_window")


@pytest.fixture
def text_only(tmp_path: Path) -> Path:
    """The run as captured with the save file only (no XLA dump beside it)."""
    for name in ("graphs.hlo.0", "pt_xla_debug.log", "tensors_report.txt"):
        shutil.copy(RUN / name, tmp_path / name)
    return tmp_path


def _fix_words_hold(text: str, must_hint: bool) -> None:
    low = text.lower()
    for word in TRUTH["fix_must"] + (TRUTH["hidden_hint_must"] if must_hint else []):
        assert word.lower() in low, word
    for word in TRUTH["fix_must_not"]:
        assert word.lower() not in low, word


def test_text_only_compare_says_unknown_not_equal(text_only):
    save = text_only / "graphs.hlo.0"
    doc = cli_json("compare", f"{save}#0", f"{save}#1", codes=(1,))
    assert doc["equal"] is False and doc["equality"] == "unknown" and doc["hidden_constants"] == 1
    (cause,) = doc["causes"]
    assert cause["kind"] == "constant" and cause["locations"][0]["line"] == TRUTH["user_line"]
    _fix_words_hold(cause["fix"], must_hint=True)
    assert "equal after normalization" not in cli("compare", f"{save}#0", f"{save}#1").output


def test_text_only_explain_names_the_constant_line_and_the_capture(text_only):
    doc = cli_json("explain-recompile", text_only, codes=(1,))
    assert len(doc["recompilations"]) == len(TRUTH["compilations"]) - 1
    for r in doc["recompilations"]:
        kinds = [c["kind"] for c in r["causes"]]
        assert kinds[0] == "constant" and "cache_key" not in kinds, kinds
        assert r["causes"][0]["locations"][0]["line"] == TRUTH["user_line"]
        _fix_words_hold(r["causes"][0]["fix"], must_hint=True)


def test_text_only_fingerprint_warns_that_equal_prints_may_differ(text_only):
    save = text_only / "graphs.hlo.0"
    result = cli("fingerprint", save, codes=(0,))
    assert "{...}" in result.stderr and "xla_dump_hlo_as_proto" in result.stderr
    doc = cli_json("fingerprint", save, codes=(0,))
    assert all(g["hidden_constants"] == 1 for g in doc["graphs"])
    assert len({g["fingerprint"] for g in doc["graphs"]}) == 1  # the text alone cannot tell them apart


@pytest.mark.parametrize("where", ["dump", "."])
def test_protos_beside_give_the_values(where):
    """The XLA dump (protos beside its text), and the save file with that dump beside it."""
    doc = cli_json("explain-recompile", RUN / where, codes=(0, 1))
    assert len(doc["recompilations"]) == len(TRUTH["compilations"]) - 1
    for r in doc["recompilations"]:
        cause = r["causes"][0]
        assert cause["kind"] == "constant" and cause["locations"][0]["line"] == TRUTH["user_line"]
        assert "{...}" not in cause["summary"] and "unknown" not in cause["summary"]
        _fix_words_hold(cause["fix"], must_hint=False)


def test_dump_compare_and_fingerprint_see_the_values():
    doc = cli_json("compare", RUN / "dump", codes=(1,))
    changes = doc["comparisons"]
    assert len(changes) == len(TRUTH["compilations"]) - 1
    assert all(c["equality"] == "different" and c["hidden_constants"] == 0 for c in changes)
    first = changes[0]["causes"][0]["instructions"]
    assert first, changes[0]
    prints = cli_json("fingerprint", RUN / "dump", codes=(0,))["graphs"]
    assert len(prints) == len(TRUTH["compilations"])
    assert len({g["fingerprint"] for g in prints}) == len(prints)  # the values tell the four graphs apart



def test_one_dump_file_named_alone_reads_its_proto():
    """`compare a.txt b.txt` on two modules of the dump: the protos beside them give the values."""
    first, second = sorted((RUN / "dump").glob("module_*.before_optimizations.txt"))[:2]
    doc = cli_json("compare", first, second, codes=(1,))
    assert doc["equality"] == "different" and doc["causes"][0]["kind"] == "constant"
    assert "{...}" not in doc["causes"][0]["summary"]
    assert cli_json("compare", first, first, codes=(0,))["equality"] == "equal"


def test_values_on_one_side_only_are_unknown_not_a_value_change(text_only):
    """The dump's module (values from its proto) against the save file's graph (values hidden): the text cannot
    say whether the values changed, so no "value changed {...} -> {0,1,...}"."""
    first = sorted((RUN / "dump").glob("module_*.before_optimizations.txt"))[1]
    doc = cli_json("compare", first, f"{text_only / 'graphs.hlo.0'}#1", codes=(1,))
    assert doc["equality"] == "unknown"
    (cause,) = doc["causes"]
    assert "unknown" in cause["summary"] and not any("literal" in c["kinds"] for c in doc["changes"])


def test_proto_values_of_every_declared_type_are_written_as_the_text_would_print_them():
    """Each array field of XLA's LiteralProto (its field numbers checked on arange_window's real s64 protos above)
    gives values; packed 16-bit floats and bytes are unpacked; f8 is not declared and stays hidden."""
    import struct

    from hlodiff.dumps import hlo_messages as hm
    from hlodiff.dumps.hlo_proto import _literal_values, _nested

    lit_cls = hm.HloModuleProto().computations.add().instructions.add().literal.__class__
    cases = [
        (dict(f32s=[1.5, -0.0, float("inf")]), (1.5, -0.0, float("inf"))),
        (dict(preds=[True, False]), (True, False)),
        (dict(u64s=[2 ** 64 - 1, 0]), (2 ** 64 - 1, 0)),
        (dict(c64s=[1.0, -2.0, 0.5, 0.0]), (complex(1, -2), complex(0.5, 0))),
        (dict(bf16s=struct.pack("<2H", 0x3FC0, 0xC000)), (1.5, -2.0)),   # bf16: the top half of an f32
        (dict(f16s=struct.pack("<2e", 0.25, -8.0)), (0.25, -8.0)),
        (dict(s8s=bytes([0xFF, 0x01])), (-1, 1)),
    ]
    for fields, expected in cases:
        assert _literal_values(lit_cls(**fields)) == expected, fields
    assert _literal_values(lit_cls()) is None
    assert _nested((1, 2, 3, 4, 5, 6), (2, 3)) == "{{1,2,3},{4,5,6}}"
    assert _nested((1.0, float("nan"), True), (3,)) == "{1,nan,true}"
