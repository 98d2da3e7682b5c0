"""The eleventh stop's leftovers, mended at the twelfth (docs/accuracy.md, "Leftovers of the eleventh stop").

Review 18's F7 (a compiled module's forward guarded by value: the README promises the call, hlodiff told the guard's
line), its c3 words (Dynamo's internal ``___stack2`` in the headline; "6 graph breaks at :12" over an entry that says
"1 in the log"), and the JAX dump patterns that cannot show "every call" (fourteen WRONG_NOW rows) saying so."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json

from hlodiff.explain.dynamo_types import DynamoFindings, GraphBreakFinding
from hlodiff.hlo.model import SourceFrame

DYN = FIXTURES / "scenarios" / "dynamo"
JAX = FIXTURES / "scenarios" / "jax"
REV18 = FIXTURES / "reviews" / "rev18_temperature_float"


# -- F7: the call leads, the guard's line beside it -----------------------------------------------------------------

def test_a_compiled_modules_forward_guarded_by_value_is_told_at_its_one_call_with_the_guard_line_beside():
    r = cli_json("explain-recompile", REV18, "--source-map", f"/home/user/project={REV18}",
                 codes=(0, 1))["dynamo"]["recompiles"][0]
    assert r["function"] == "forward" and r["located"] == "source_call"
    assert r["location"]["line"] == 20 and r["guard_at"]["line"] == 9  # step_fn(x, t); self.temperature's use


def test_without_the_source_the_guard_line_stays():
    r = cli_json("explain-recompile", REV18, codes=(0, 1))["dynamo"]["recompiles"][0]
    assert r["located"] == "guard" and r["location"]["line"] == 9


# -- review 18's c3: Dynamo's internal names and the break counts ---------------------------------------------------

def test_a_value_dynamo_names_stack_n_is_told_as_the_value_made_at_the_break():
    doc = cli_json("explain-recompile", DYN / "d17_perf_counter", "--source-map", f"/home/user/project={DYN}",
                   codes=(0, 1))
    r = doc["dynamo"]["recompiles"][0]
    assert r["subject"].startswith("___stack") and r["subject_words"].startswith("the value made at d17_perf_counter")
    assert "___stack" not in doc["summary"].split("; ")[1], doc["summary"]


def _break(reason: str, count: int) -> GraphBreakFinding:
    return GraphBreakFinding(reason, None, SourceFrame("/p/c3.py", 12, "forward"), None, count, 7)


def test_the_summary_counts_the_first_break_finding_as_its_entry_does():
    found = DynamoFindings(logs=["t.log"], graph_breaks=[_break("Unsupported Tensor.item() call", 1),
                                                         _break("Logger not supported", 5)])
    text = found.sentence()
    assert "1 graph break at c3.py:12 (Unsupported Tensor.item() call)" in text, text
    assert "(+1 more graph break finding below)" in text and "6 graph breaks" not in text
    alone = DynamoFindings(logs=["t.log"], graph_breaks=[_break("Logger not supported", 5)]).sentence()
    assert "5 graph breaks at c3.py:12 (Logger not supported)" in alone and "more graph break" not in alone


# -- JAX dumps: compilations only, said where "every call" would be read --------------------------------------------

@pytest.mark.parametrize("name", ["review3_list_arg", "rev6_static_step", "rev4_static_temp"])
def test_a_dump_family_new_every_time_says_the_calls_are_not_seen(name):
    doc = cli_json("explain-recompile", JAX / name, codes=(0, 1))
    assert any("whether every call compiled anew is not seen" in p for p in doc["patterns"]), doc["patterns"]
    assert "not seen" not in doc["summary"]  # the two-line summary stays short


@pytest.mark.parametrize("name", ["jax_split_count", "rev11_jx_static_obj"])
def test_a_dump_family_of_two_or_seen_again_makes_no_such_claim(name):
    # two compilations (A,B); six of the same HLO (A,A,A,A,A,A): the words would claim nothing the reader lacks
    doc = cli_json("explain-recompile", JAX / name, codes=(0, 1))
    assert not any("whether every call" in p for p in doc["patterns"]), doc["patterns"]


# -- gradual unfreezing: updates added and kept, not an update on some steps --------------------------------------

TX = FIXTURES / "scenarios" / "torch_xla"


def _causes(folder) -> list[dict]:
    doc = cli_json("explain-recompile", folder, "--source-map", f"/home/user/project={TX}", codes=(0, 1))
    return doc, [c for r in doc["recompilations"] for c in r["causes"]]


def test_unfrozen_layers_are_told_as_unfreezing_at_the_requires_grad_line():
    doc, causes = _causes(TX / "ulmfit_unfreeze" / "record")
    # (with main's round 27 row merged, the weights read and rewritten from step 2 on take inputs_trained_from_step)
    assert {c["fix_rule"] for c in causes} & {"outputs_unfrozen", "inputs_trained_from_step"}
    assert doc["headline"]["location"]["line"] == 15  # layers[...].requires_grad_(True)
    assert "EMA" not in doc["headline"]["fix"] and "unfrozen" in doc["headline"]["fix"]


@pytest.mark.parametrize("folder", ["ema_every4"])
def test_an_update_that_comes_back_keeps_the_some_steps_row(folder):
    # the EMA every 4 steps: the graph without it comes back (comes_back), so it is no unfreezing
    _, causes = _causes(TX / folder)
    rules = {c["fix_rule"] for c in causes}
    assert "outputs_unfrozen" not in rules and "inputs_updated_some_steps" in rules, rules


# -- a history carried into the next step: the assignment that carries it ------------------------------------------

from hlodiff.dumps.carried_source import carried_without_detach  # noqa: E402

_LOOP = "import torch\nc = torch.zeros(4)\ntotal = 0\nfor s in range(3):\n    f = g(s)\n{body}\n    opt.step()\n"


@pytest.mark.parametrize("body, lines", [
    ("    c = 0.9 * c + 0.1 * f.mean(0)", [6]),          # the centre of center_no_detach
    ("    total += f.sum()", [6]),                          # a running total of tensors
    ("    c = 0.9 * c + 0.1 * f.mean(0).detach()", []),     # detached where carried
    ("    total += f.sum().item()", []),                    # a Python number
    ("    with torch.no_grad():\n        c = 0.9 * c + 0.1 * f.mean(0)", []),  # no history under no_grad
    ("    h = f * 2\n    h = h + 1", []),                   # made anew each iteration, not carried
    ("    c = c + f.mean(0)\n    total += f.sum()", [6, 7]),  # two: the caller names neither
])
def test_the_assignment_that_carries_a_history_is_found(tmp_path, body, lines):
    src = tmp_path / "train.py"
    src.write_text(_LOOP.format(body=body))
    assert carried_without_detach(str(src), 5) == lines


def test_a_carried_centre_is_told_at_its_assignment():
    doc = cli_json("explain-recompile", TX / "center_no_detach", "--source-map", f"/home/user/project={TX}",
                   codes=(1,))
    assert doc["headline"]["location"]["line"] == 15 and "see center_no_detach.py:15" in doc["headline"]["fix"]


# -- the same ops added at every step: the call in the loop that adds them ------------------------------------------

from hlodiff.dumps.evidence import Run  # noqa: E402
from hlodiff.explain.decision_line import MODEL_ADDITIONS, calls_named_in_loop  # noqa: E402


@pytest.mark.parametrize("name", MODEL_ADDITIONS)
def test_each_model_addition_in_the_loop_is_the_decision_and_one_before_it_is_not(tmp_path, name):
    src = tmp_path / "train.py"
    src.write_text(f"import torch\nm.{name}(f)\nfor s in range(3):\n    m.{name}(f)\n    loss = m(x).sum()\n")
    assert calls_named_in_loop(Run([]).sources, str(src), 5) == [4]


def test_a_hook_registered_every_step_is_told_at_its_registration():
    doc = cli_json("explain-recompile", TX / "x7c_tx_hook_in_loop" / "record", "--source-map",
                   f"/home/user/project={TX}", codes=(1,))
    assert doc["headline"]["location"]["line"] == 22  # enc.register_forward_hook(clamp_hook)
    assert "see x7c_tx_hook_in_loop.py:22" in doc["headline"]["fix"]
