"""Mutated real dumps read the same with the accelerator and without: the same module (instructions with lines and
columns, signatures, headers), or the same located error. The C reader must hand every line it is not sure of back
to the Python parser, so broken text is where it would most easily go its own way (or crash)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_accel import _outcome, _read, needs_native
from test_fuzz_parser import SOURCES, SYNTAX, mutate, mutation

# torch_xla's way of writing (typed operands, metadata with paths, index comments in tuples), which the accelerator
# reads most, beside the XLA dump modules of the fuzz test.
from conftest import FIXTURES

_TORCH_XLA = [_read(p) for p in sorted(FIXTURES.glob("torch_xla/*/graphs.hlo.0")) if p.stat().st_size < 60_000]
_BLOCKS = [block[block.index("HloModule"):block.index("\n\nGraph Hash")]
           for text in _TORCH_XLA for block in text.split("## BEGIN_GRAPH")[1:2] if "\n\nGraph Hash" in block]
_EXTRA = ["f32[2]{0} %", "  %x.1 = f32[] constant(1)\n", ", metadata={op_type=\"x\"}", "\t", "\u00e9", "\x0c", "\r"]


@needs_native
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SOURCES + _BLOCKS), st.lists(mutation, min_size=1, max_size=4),
       st.sampled_from(SYNTAX + _EXTRA))
def test_mutated_dump_reads_the_same_both_ways(source, steps, extra):
    text = mutate(source, steps)
    if extra in _EXTRA:  # one more edit of the kinds the fast path must notice (a tab, a form feed, non-ASCII)
        at = len(text) // 2
        text = text[:at] + extra + text[at:]
    from _pytest.monkeypatch import MonkeyPatch

    with MonkeyPatch.context() as monkeypatch:
        fast = _outcome(text, "fuzz.hlo", True, monkeypatch)
        pure = _outcome(text, "fuzz.hlo", False, monkeypatch)
    assert fast == pure
