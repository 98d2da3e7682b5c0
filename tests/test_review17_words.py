"""New-user review 17, F8: the words around a short last batch (the reviewer's X1: 10 rows in batches of 4, no
drop_last; fixtures/scenarios/torch_xla/rev10_tx_varlen is the same loop under `hlodiff record`).

"closest earlier graph #0, 46% alike" for a change that is only the batch size read as another program; the plan of
two sizes was one dense line; and live, one recompilation took three lines: the first said its fix would be "told
once the next steps show", the next told "one batch came with fewer rows ... full again", the next "the last batch
of each epoch"."""

from __future__ import annotations

import re

from conftest import FIXTURES
from helpers import cli

from live_replay import printed, replay
from hlodiff.render.plan import plan_text

TX = FIXTURES / "scenarios" / "torch_xla"
VARLEN = TX / "rev10_tx_varlen"


def _explain(case) -> str:
    return cli("explain-recompile", case, "--source-map", f"/home/user/project={TX}", columns=250, codes=(0, 1)).stdout


def _live(folder, capture: str) -> list[str]:
    return printed(replay(folder, capture))


def test_a_batch_size_change_reads_as_the_same_program_at_other_shapes():
    out = _explain(VARLEN / "record")
    head = next(x for x in out.splitlines() if "recompiled (" in x)
    assert "same program, other shapes" in head and "% alike" not in head


def test_a_change_that_is_not_only_shapes_keeps_its_similarity():
    # look-alike: accumulation's last group runs on fewer inputs (inputs and ops removed): another computation
    out = _explain(TX / "accum_tail")
    head = next(x for x in out.splitlines() if "recompiled (" in x)
    assert re.search(r"\d+% alike", head) and "other shapes" not in head


def test_the_plan_of_two_sizes_is_short():
    out = _explain(VARLEN / "record")
    plans = [x.strip() for x in out.splitlines() if x.strip().startswith("plan:")]
    assert plans and all(p.startswith("plan: sizes 4 and 2 over ") and "pad 2 up to 4 → 1 graph instead of 2" in p
                         for p in plans), plans
    assert not any("powers of two" in p or "%p" in p for p in plans)


def test_a_plan_of_several_sizes_still_offers_powers_of_two():
    # look-alike: three sizes, bucketed: the powers of two are a real alternative there
    plan = {"kind": "buckets", "dimension": "dim 0", "values": [{"size": s, "executions": 2} for s in (3, 5, 8)],
            "buckets": [8], "graphs_now": 3, "graphs_planned": 1, "padded_fraction": 0.3,
            "powers_of_two": {"graphs": 3, "buckets": [4, 8], "padded_fraction": 0.1},
            "cost_model": {"counts_from": "executions"}}
    assert "powers of two" in plan_text(plan) and "took 3 values" in plan_text(plan)


def test_a_short_last_batch_is_told_live_once_it_waited_for_the_next_steps():
    said = _live(VARLEN, "c")
    first = [x for x in said if "recompiled (" in x]
    revised = [x for x in said if "now that more of the run is known" in x]
    assert len(first) == 1 and "told once the next steps show" in first[0]
    assert len(revised) == 1 and "the last batch of each epoch is short" in revised[0], said
    assert not any("the next ones were full again" in x for x in said)


def test_a_batch_short_once_is_still_told_so():
    # look-alike: one short batch, full ones after it to the end: "one batch came with fewer rows" is the story
    said = _live(FIXTURES / "torch_xla" / "hostile_names", "a")
    assert any("now that more of the run is known" in x and "the next ones were full again" in x for x in said), said
