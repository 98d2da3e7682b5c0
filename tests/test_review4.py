"""New-user review 4 (docs/reviews/2026-11-27-new-user-4.md): what the user noticed in the lines after the headline,
asserted on the real captures of the review's programs (fixtures/scenarios/*/rev4_*, captured by
fixtures/scenarios/capture.py). The headlines are scored by tests/test_accuracy.py from the truths; these tests hold
the secondary lines, `compare` and `cost` to what the reviewer expected (/work/notes/review4/expectations.md)."""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES
from helpers import cli

SCEN = FIXTURES / "scenarios"


def _out(*args, columns: int = 200) -> str:
    return cli(*args, columns=columns, codes=(0, 1)).stdout


# -- F1: compare DUMP on a growing torch.stack(history) ------------------------------------------------------------

def test_f1_compare_dump_leads_with_the_running_value_fix():
    """Each pair of the growing history: the first fix a user reads is the running value (the stack's fix), never
    'index with a device tensor' (the constant is mean()'s divisor) or 'h = h.detach()' (the code detaches)."""
    text = _out("compare", SCEN / "torch_xla" / "rev4_history" / "dump")
    pairs = text.split("\n\n")[1:]
    assert len(pairs) == 4, text
    for pair in pairs:
        fixes = re.findall(r"fix: (.*)", pair)
        assert fixes and "running value" in fixes[0], pair
        assert "h.detach()" not in pair and "index_select" not in pair, pair


def test_f1_explain_tells_the_divisor_under_the_stack():
    """explain-recompile on the same run: the constant 1 -> 2 (the mean's divisor) follows from the stack that grew;
    it is no second root with an index fix."""
    text = _out("explain-recompile", SCEN / "torch_xla" / "rev4_history")
    assert "index_select" not in text, text


# -- F2: compare A B on a Python-int slice offset ------------------------------------------------------------------

def test_f2_compare_pair_does_not_claim_only_0_and_1_are_baked():
    """The offset of `cache[:, pos] = k` is baked for every value (the run compiled for 2 and 3 too): a pair 0 -> 1
    must not say other values are passed as device data; it still says to make the position a device tensor."""
    kv = SCEN / "torch_xla" / "rev4_kvcache" / "graphs.hlo.0"
    text = _out("compare", f"{kv}#0", f"{kv}#1")
    assert "0 or 1" not in text and "other values are passed" not in text, text
    assert "device tensor" in text, text


_SLICED = """HloModule m{n}, entry_computation_layout={{(f32[8,16]{{1,0}})->f32[1,16]{{1,0}}}}

ENTRY %main (p0: f32[8,16]) -> f32[1,16] {{
  %p0 = f32[8,16]{{1,0}} parameter(0)
  %i = s64[] constant({i})
  %z = s64[] constant(0)
  ROOT %ds = f32[1,16]{{1,0}} dynamic-slice(f32[8,16]{{1,0}} %p0, s64[] %i, s64[] %z), dynamic_slice_sizes={{1,16}}
}}
"""
_SCALED = """HloModule m{n}, entry_computation_layout={{(f32[8,16]{{1,0}})->f32[8,16]{{1,0}}}}

ENTRY %main (p0: f32[8,16]) -> f32[8,16] {{
  %p0 = f32[8,16]{{1,0}} parameter(0)
  %i = f32[] constant({i})
  %b = f32[8,16]{{1,0}} broadcast(f32[] %i), dimensions={{}}
  ROOT %m = f32[8,16]{{1,0}} multiply(f32[8,16]{{1,0}} %p0, f32[8,16]{{1,0}} %b)
}}
"""


@pytest.mark.parametrize("module, rule", [(_SLICED, "constant_any"), (_SCALED, "constant_special")])
def test_f2_a_start_index_is_baked_for_every_value_a_scale_of_0_or_1_is_special(tmp_path, module, rule):
    """The rows of diff.classify.INDEX_OPERANDS on one rule's small modules: a constant 0 -> 1 that starts a
    dynamic-slice (as dynamic-update-slice on rev4_kvcache above) is an index, baked whatever its value; the
    look-alike, a 0 -> 1 scale in arithmetic, keeps torch_xla's special-scalar story."""
    from helpers import cli_json
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(module.format(n=0, i=0)), b.write_text(module.format(n=1, i=1))
    doc = cli_json("compare", a, b, codes=(1,))
    (cause,) = [c for c in doc["diff"]["causes"] if c["kind"] == "constant"] if "diff" in doc else \
        [c for c in doc["causes"] if c["kind"] == "constant"]
    assert cause["fix_rule"] == rule, cause
    assert ("0 or 1" in cause["fix"]) == (module is _SCALED), cause


# -- F3: tensors made before the loop, computed in step 0's graph --------------------------------------------------

@pytest.mark.parametrize("run", ["rev4_kvcache/graphs.hlo.0", "rev4_lr_float"])
def test_f3_setup_in_step_0_is_no_python_if(run):
    """Step 0 also computed the tensors created before the loop (t3: cache/tok at :7-:8; t7: w at :7): the details
    must not send the user to a Python `if` or to syncing at the same points; there is no `if` in either program."""
    text = _out("explain-recompile", SCEN / "torch_xla" / run)
    assert "a Python `if`" not in text, text
    assert "sync at the same points" not in text, text
    assert "expected once: the first step's graph also computed" in text, text


# -- F4: the short last batch ----------------------------------------------------------------------------------------

def test_f4_the_short_batch_is_placed_where_it_is_made_not_at_a_weight_of_its_shape():
    """Batches f32[4,8], f32[4,8], f32[2,8] into a Linear(8, 2) whose weight is f32[2,8] too: the previous step's
    updated weight (made at :17, opt.step()) has the short batch's shape, but it is the weight's new value; the
    line is the batch's, :14."""
    text = _out("explain-recompile", SCEN / "torch_xla" / "rev4_lastbatch" / "record")
    assert "(shape at rev4_lastbatch.py:14)" in text.splitlines()[0], text


# -- F5: sharding drags the compile options ------------------------------------------------------------------------

def test_f5_compile_options_from_the_sharding_do_not_ask_for_xla_flags():
    """num_partitions 1 -> 4 and computation_count follow from the sharded argument; the user never set XLA_FLAGS."""
    text = _out("explain-recompile", SCEN / "jax" / "rev4_sharding")
    assert "sharding" in text.splitlines()[0], text
    assert "XLA_FLAGS" not in text, text


# -- F6: .item() clipping: the detail explains the data-dependent recompilation ---------------------------------------

def test_f6_detail_leads_with_the_data_dependent_recompilation():
    """A,B,A,C,...: B (#1) is the first tail after the .item(), C (#3) the step where clipping was not taken. The
    first detailed section is C against B, the recompilation the headline's 'different graphs followed the read'
    means."""
    text = _out("explain-recompile", SCEN / "torch_xla" / "rev4_item_clip" / "record")
    first = next(line for line in text.splitlines() if " recompiled " in line)
    assert "record#3 recompiled" in first, text


# -- F7: cost piped ------------------------------------------------------------------------------------------------

def test_f7_cost_at_120_columns_keeps_the_aliasing_column():
    """Piped (120 columns), the table still says what is aliased: a step without donation shows it."""
    text = _out("cost", SCEN / "jax" / "rev4_nodonate" / "dump", columns=120)
    assert "left out" not in text or "aliased" not in text.split("left out", 1)[1].splitlines()[0], text
    assert "aliased" in text, text


# -- F8: wording -----------------------------------------------------------------------------------------------------

def test_f8_no_recompilation_wording_for_eager_ops():
    """'0 recompilations of the jitted functions': the eager ops' sections are not called 'recompiled' and no
    'recompilations cost' is given beside 0 recompilations."""
    text = _out("explain-recompile", SCEN / "jax" / "rev4_nodonate")
    assert "recompilations cost" not in text.splitlines()[0], text
    assert "recompiled (jit_broadcast_in_dim)" not in text, text
    assert "compiled for another shape (jit_broadcast_in_dim)" in text, text


def test_f8_graph_numbers_agree_between_headline_and_details():
    """The headline counts the family's graphs from 1 ("graph 4 of 6"), the details name the dump's "#3": the
    headline gives the dump's number too, and it is the one the detail's section names."""
    text = _out("explain-recompile", SCEN / "torch_xla" / "rev4_seqlen")
    said = re.search(r"graph \d+ of \d+ \(#(\d+)\)", text.splitlines()[0])
    section = re.search(r"dump#(\d+) recompiled", text)
    assert said and section, text
    assert said.group(1) == section.group(1), text


def test_f8_plural_of_one_graph():
    text = _out("explain-recompile", SCEN / "torch_xla" / "rev4_seqlen")
    assert not re.search(r"\b1 graphs\b", text), text


def test_f8_static_argument_fix_names_every_value():
    """temperature took 1.0, 0.8, 0.6, 0.4 (each compiled): the fix lists them all, not two of four."""
    text = _out("explain-recompile", SCEN / "jax" / "rev4_static_temp")
    fix = next(line for line in text.splitlines() if line.startswith("fix:"))
    assert "0.6" in fix and ("0.4" in fix or "0.3999" in fix), fix
