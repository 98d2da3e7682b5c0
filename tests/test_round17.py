"""Round 17 (blind, torch_xla and JAX): what the first try got wrong, on its real captures (fixtures/scenarios/*),
beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json

from hlodiff.dumps.anomaly_checks import is_anomaly_check
from hlodiff.dumps.xla_dump import scan_xla_dump

SC = FIXTURES / "scenarios"
TX = SC / "torch_xla"


def _doc(path, *extra, codes=(0, 1)) -> dict:
    return cli_json("explain-recompile", str(path), *extra, codes=codes)


def _partial_reasons(doc) -> set[str]:
    return {c["reason"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "partial"}


def test_anomaly_mode_s_checks_are_told_as_the_cuts_of_every_step():
    """r17_tx_detect_anomaly: set_detect_anomaly(True) cuts each step into 11 graphs (10 NaN checks compiled inside
    backward(), never announced nor logged when they run). The first try left them out: one graph a step, no
    headline, exit 0."""
    doc = _doc(TX / "r17_tx_detect_anomaly", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and "set_detect_anomaly(False)" in head["fix"]
    assert ".item()" not in head["fix"] and "add_step_closure" not in head["fix"]
    assert _partial_reasons(doc) == {"anomaly_check"}
    assert any(p.startswith("split: ") and "split in 11 by 10 anomaly-mode NaN checks" in p for p in doc["patterns"])


def test_a_check_is_an_any_isnan_module_and_the_step_is_not():
    modules = list(scan_xla_dump(str(TX / "r17_tx_detect_anomaly" / "dump"), []))
    seen = {m.module_number: is_anomaly_check(m) for m in modules}
    assert seen[0] and seen[9] and not seen[10]  # ten checks, then the step's own graph (loss, weights)


@pytest.mark.parametrize("fixture", [
    # compilations torch_xla does not announce that are no NaN check: CTC's and EmbeddingBag's internals
    TX / "r10_ctc_fallback", TX / "rev8_pad_multiple_byhand", TX / "rev8_pad_multiple" / "record",
    # isnan/isinf read inside clip_grad_norm_(error_if_nonfinite=True): announced, a library's read
    TX / "review2_clip_nonfinite" / "graphs.hlo.0",
])
def test_look_alikes_keep_their_cuts(fixture):
    assert "anomaly_check" not in _partial_reasons(_doc(fixture))
