"""Dynamo round 24 (docs/accuracy.md): torch's seeding calls Dynamo marks as skipped (``torch.manual_seed`` inside
the compiled forward) get their own fix -- seed before the call -- while any other skipped function keeps the
generic break row; with the round's run."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_log import DynamoLog, GraphBreak
from hlodiff.explain.dynamo import breaks_of
from hlodiff.explain.dynamo_break_calls import SKIPPED_CALLS, break_call_facts
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_CALL = SourceFrame("/p/train.py", 32, "<module>")
_LINE = SourceFrame("/p/train.py", 20, "forward")
_SKIPPED = "Attempted to call function marked as skipped"


def _skipped(name: str) -> GraphBreak:
    explanation = (f"Dynamo developers have intentionally marked that the function `{name}` in file "
                   "`/usr/lib/python3.11/site-packages/torch/_compile.py` should not be traced.")
    return GraphBreak("0/0", _SKIPPED, explanation, at=_LINE, call=_CALL, frames=(_CALL, _LINE))


@pytest.mark.parametrize("name", sorted(n for names, _ in SKIPPED_CALLS for n in names))
def test_each_seeding_call_dynamo_skips_gets_the_seed_before_the_call_fix(name):
    assert "op:rng_seed" in break_call_facts(_skipped(name))
    (f,) = breaks_of(DynamoLog("x", "text", graph_breaks=[_skipped(name)]))
    assert f.fix_rule == "dynamo_graph_break_rng_seed" and "before the call" in f.fix
    assert f.location.line == 20


@pytest.mark.parametrize("name", ["seeded_init", "warn", "manual_seed_all_wrapper"])
def test_other_skipped_functions_keep_the_generic_row(name):
    assert "op:rng_seed" not in break_call_facts(_skipped(name))
    (f,) = breaks_of(DynamoLog("x", "text", graph_breaks=[_skipped(name)]))
    assert f.fix_rule == "dynamo_graph_break"


def test_the_seed_in_the_forward_is_told_at_its_line_with_exit_0():
    result = cli("explain-recompile", str(SCENARIOS / "d24_seed_in_forward"), "--json", codes=(0, 1))
    doc = json.loads(result.stdout)
    (brk,) = doc["dynamo"]["graph_breaks"]
    assert brk["fix_rule"] == "dynamo_graph_break_rng_seed" and result.exit_code == 0
    assert doc["headline"]["location"]["line"] == 20 and "outside" in doc["headline"]["fix"]


@pytest.mark.parametrize("name, code, read", [
    ("x", "key = id(x)", True),
    ("x", "if id(x) not in MEANS:", True),
    ("x", "key = id( x )  # the cache key", True),
    ("x", "key = id(xs)", False),                       # another name
    ("x", "key = self.id(x)", False),                   # a method of the user's, not the builtin
    ("phase", "if phase is Phase.TRAIN:", False),       # dyn_enum_phase: an enum compared with `is`
    ("x", "y = x * 2  # keyed by id(x) once", False),   # a comment
])
def test_identity_on_line_reads_the_statement_only(name, code, read):
    from hlodiff.explain.dynamo_guard_lines import identity_on_line
    assert identity_on_line(name, code) is read


def test_an_id_keyed_cache_inside_the_compiled_function_is_told_as_the_id_read():
    """d24_id_cache: ``___check_obj_id(x, ...)`` at ``key = id(x)``, every call a new batch tensor, past the limit:
    the id() read is the finding (keep the cache outside), never "expected" or a mode to pick."""
    result = cli("explain-recompile", str(SCENARIOS / "d24_id_cache"), "--json", codes=(1,))
    doc = json.loads(result.stdout)
    head = doc["headline"]
    assert head["kind"] == "guard" and "id()-keyed" in head["fix"] and "outside the compiled function" in head["fix"]
    assert not head["fix"].startswith("expected")
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_identity_read"}


def test_a_bridge_graph_between_a_cut_and_the_steps_sync_does_not_take_the_cut_live():
    """Live (d24_save_on_cpu_steps): the graph a cut preceded is the step's sync, not the bridge's backward or
    input sync that runs between them; a graph after the sync finds no cut before it."""
    from hlodiff.dumps.graph_record import GraphRecord
    from hlodiff.explain.live_cuts import HeldCuts

    def rec(i: int) -> GraphRecord:
        return GraphRecord(path="run", index=i, kind="xla_dump", start_line=0, source="run")

    cuts = HeldCuts()
    cuts.read(rec(9), cut=True)
    cuts.read(rec(10), cut=False, bridge=True)
    cuts.read(rec(11), cut=False, bridge=True)
    cuts.read(rec(12), cut=False)
    cuts.read(rec(13), cut=False)
    assert cuts.before == {rec(12).ref: rec(9)}


def test_a_python_int_that_sets_a_shape_leaves_no_symbolic_size_to_blame_on_the_bridge():
    """d24_prompt_pool_grow: Dynamo recompiled for each size of the growing ParameterList (``..._size == 1``, an int
    that sets a shape): each size is its own static graph, so no "Dynamo traced it once with a symbolic size, pad to
    buckets" finding beside it (it was printed under the right headline)."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "d24_prompt_pool_grow"), "--json", codes=(0, 1)).stdout)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_int_sets_shape"}
    assert doc["dynamo"]["xla_sizes"] == []
    assert "bucket" not in doc["headline"]["fix"]
