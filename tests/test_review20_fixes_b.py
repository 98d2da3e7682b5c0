"""New-user review 20 (fixtures/scenarios/dynamo/rev20_tc_dropout_schedule, jax/rev20_jx_rejit_lr).

F9: a compiled module's nn.Dropout rate on a schedule was told "keep it in a tensor (register_buffer)", which cannot
reach F.dropout's float ``p``. F5: the bridge's graph, whose constant (1 - p) changed only because Dynamo's guard on
that same p failed, was told "pass it as a device tensor" beside the guard. F7: a jitted step re-created every 3
steps was told "created anew on every call", the line that re-creates it not named.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from live_replay import printed, replay

from hlodiff.diff.fixes import choose
from hlodiff.explain.dynamo_number_params import POSITIONAL_NUMBER_ONLY, positional_number_param

DYN = FIXTURES / "scenarios" / "dynamo"
JAX = FIXTURES / "scenarios" / "jax"

# -- F9: a number torch's own module code passes by position to a float-only parameter -----------------------------

_POSITIONAL = {  # one line of torch's module code (or a user's) per row of the table
    ("dropout", 1): ("return F.dropout(input, self.p, self.training, self.inplace)", "p"),
    ("alpha_dropout", 1): ("return F.alpha_dropout(input, self.p, self.training)", "p"),
    ("feature_alpha_dropout", 1): ("return F.feature_alpha_dropout(input, self.p, self.training)", "p"),
    ("dropout1d", 1): ("return F.dropout1d(input, self.p, self.training, self.inplace)", "p"),
    ("dropout2d", 1): ("return F.dropout2d(input, self.p, self.training, self.inplace)", "p"),
    ("dropout3d", 1): ("return F.dropout3d(input, self.p, self.training, self.inplace)", "p"),
    ("leaky_relu", 1): ("return F.leaky_relu(input, self.negative_slope, self.inplace)", "negative_slope"),
    ("elu", 1): ("return F.elu(input, self.alpha, self.inplace)", "alpha"),
    ("celu", 1): ("return F.celu(input, self.alpha, self.inplace)", "alpha"),
    ("softplus", 1): ("return F.softplus(input, self.beta, 20.0)", "beta"),
    ("softplus", 2): ("return F.softplus(input, 1.0, self.threshold)", "threshold"),
    ("threshold", 1): ("return F.threshold(input, self.threshold, self.value, self.inplace)", "threshold"),
    ("hardtanh", 1): ("return F.hardtanh(input, self.min_val, self.max_val, self.inplace)", "min_val"),
    ("hardtanh", 2): ("return F.hardtanh(input, -1.0, self.max_val, self.inplace)", "max_val"),
}


def test_the_positional_table_and_its_tests_name_the_same_rows():
    assert set(_POSITIONAL) == set(POSITIONAL_NUMBER_ONLY)


@pytest.mark.parametrize("row", sorted(POSITIONAL_NUMBER_ONLY))
def test_each_row_is_read_where_the_module_s_own_number_is_passed_by_position(row):
    code, param = _POSITIONAL[row]
    attribute = code.split("self.", 1)[1].split(",")[0].split(")")[0]
    assert positional_number_param(f"self._modules['layer'].{attribute}", code) == param


@pytest.mark.parametrize("name, code", [
    ("self._modules['drop'].p", "return F.dropout(input, 0.1, self.training)"),         # another value there
    ("self._modules['drop'].p", "return my_dropout(input, self.p)"),                     # the user's own function
    ("self._modules['drop'].p", "return F.dropout(input * self.p, 0.1)"),                # arithmetic: a tensor can
    ("L['self'].scale", "return F.elu(x, 1.0) * self.scale"),
    ("self._modules['drop'].p", "return F.dropout(input, p=self.p)"),                   # a keyword: the other table
])
def test_a_number_used_otherwise_is_not_a_positional_number_only_parameter(name, code):
    assert positional_number_param(name, code) is None


def test_the_row_is_chosen_on_its_evidence_and_the_limit_keeps_its_own():
    facts = {"dynamo", "python_value", "python_float", "module_attribute", "number_only_param",
             "number_only_positional"}
    assert choose("python_value", frozenset(facts)).name == "dynamo_number_only_positional"
    assert choose("python_value", frozenset(facts | {"limit_hit"})).name == "dynamo_number_only_param_limit"


def _report(folder, engine=DYN) -> dict:
    return cli_json("explain-recompile", engine / folder, "--source-map", f"/home/user/project={engine}",
                    codes=(0, 1))


def test_a_dropout_rate_on_a_schedule_is_not_told_to_go_in_a_buffer():
    fix = _report("rev20_tc_dropout_schedule/record")["headline"]["fix"]
    assert "register_buffer" not in fix and "fixed per phase" in fix and "rand_like" in fix, fix


def test_a_dropout_rate_past_the_limit_still_says_the_calls_ran_without_dynamo():
    # look-alike (Dynamo round 9): the rate changed every step, 12 values, past the recompile limit
    fix = _report("dyn_dropout_anneal")["headline"]["fix"]
    assert "without Dynamo" in fix and "register_buffer" not in fix, fix


# -- F5: the bridge's constant follows from Dynamo's guard on the same number -------------------------------------

def test_the_bridge_s_constant_of_a_guarded_rate_is_told_as_following_from_dynamo_live():
    said = printed(replay(DYN / "rev20_tc_dropout_schedule", "c"))
    bridge = [x for x in said if "Dynamo bridge compiled again" in x]
    assert bridge and all("follows from what Dynamo did" in x for x in bridge), bridge
    assert not any("device tensor" in x for x in said), said


# -- F7: a jitted step re-created by the loop every few steps ---------------------------------------------------

def test_a_jitted_step_re_created_in_the_loop_is_told_at_that_line_and_how_often():
    doc = _report("rev20_jx_rejit_lr/record", JAX)
    head = doc["headline"]
    assert head["location"]["line"] == 26, head  # train_step = make_train_step(lr)
    causes = [c for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "cache_key"]
    assert causes and all("created anew on every call" not in c["summary"] and "3 objects compiled" in c["summary"]
                          for c in causes), causes


def test_a_function_jitted_anew_at_its_call_keeps_its_words():
    # look-alike: jax_jit_in_loop jits at the call itself (jax.jit(f)(x)): no line binds the name anew
    doc = _report("jax_jit_in_loop", JAX)
    assert doc["headline"]["kind"] == "cache_key"
    assert all("each time the loop runs" not in c["summary"] for r in doc["recompilations"] for c in r["causes"])


# -- F4: one step number per event, counted as the user's steps ----------------------------------------------------

def _steps(said: list[str], words: str) -> list[int]:
    import re

    return [int(m.group(1)) for x in said if words in x for m in [re.search(r"step (\d+)", x)] if m]


def test_dynamo_s_recompilations_are_told_once_each_at_the_user_s_steps_2_and_4():
    said = printed(replay(DYN / "rev20_tc_dropout_schedule", "c"))
    assert _steps(said, "self._modules['drop'].p") == [2, 4], said  # steps 0-5 as the program prints them
    assert not any("not expected after all" in x for x in said), said  # step 1's verdict changes once at most


def test_the_report_numbers_the_bridge_s_recompilations_by_the_user_s_steps():
    from helpers import cli

    out = cli("explain-recompile", DYN / "rev20_tc_dropout_schedule" / "record", "--source-map",
              f"/home/user/project={DYN}", codes=(0, 1)).stdout
    import re

    steps = {int(s) for s in re.findall(r"\(step (\d+)\)", out)}
    assert steps and steps <= set(range(6)), out
