"""What a fix asks of the user is a typed fact the analysis reads (the exit status, bucket plans, the run's count of
warm-ups), never the fix's words: each row of the fix table has the stance its words tell the user, and a fix a
maker wrote carries its own."""

from __future__ import annotations

import pytest

from hlodiff.diff.fix_rules import EXPECTED, RULES, RULES_BY_NAME
from hlodiff.diff.fix_stance import FOLLOWS_RULES, WARMUP_RULES, FixStance, stance_of_rule
from hlodiff.diff.model import Cause


def _told(words: str) -> FixStance:
    """What a reader takes from the fix's opening words."""
    if words.startswith("follows from"):
        return FixStance.FOLLOWS
    if words.startswith("expected warm-up"):
        return FixStance.WARMUP
    return FixStance.EXPECTED if words.startswith("expected") else FixStance.CHANGE


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_each_rows_stance_is_what_its_words_tell_the_user(rule):
    # a row added or reworded without its stance (fix_stance.py) fails here, before a verdict goes wrong
    assert stance_of_rule(rule.name) is _told(rule.text)


def test_the_stance_tables_name_rows_of_the_fix_table():
    assert FOLLOWS_RULES <= set(RULES_BY_NAME) and WARMUP_RULES <= set(RULES_BY_NAME)
    assert WARMUP_RULES <= EXPECTED and not FOLLOWS_RULES & EXPECTED


def test_a_rows_stance_holds_whatever_its_words_say():
    cause = Cause("inputs", "1 input added (f32[4])", fix="reworded: nothing here", fix_rule="inputs_optimizer_warmup")
    assert cause.fix_stance is FixStance.WARMUP


def test_a_written_fix_carries_its_makers_stance_and_no_fix_none():
    cause = Cause("shape", "shape changed on parameter %p.1: f32[4] -> f32[8]")
    assert cause.fix_stance is None
    cause.fix, cause.fix_rule = RULES_BY_NAME["cut_follows"].text, "cut_follows"
    cause.write_fix("follows from the static argument change above", FixStance.FOLLOWS)
    assert (cause.fix_rule, cause.fix_stance) == (None, FixStance.FOLLOWS)
    other = Cause("shape", "shape changed on parameter %q.2: f32[2] -> f32[3]")
    other.take_fix(cause)
    assert (other.fix, other.fix_stance) == (cause.fix, FixStance.FOLLOWS)
    other.write_fix("seen: two functions of this name")
    assert other.fix_stance is FixStance.CHANGE


def _causes(left: str, right: str):
    from hlodiff.diff import diff_modules
    from hlodiff.hlo.parser import parse_module

    return diff_modules(parse_module(left), parse_module(right)).causes


_MODULE = """HloModule m

ENTRY main {{
  p = f32[{n}] parameter(0)
  c = f32[] constant({c})
  b = f32[{n}] broadcast(c), dimensions={{}}
  ROOT a = f32[{n}] add(p, b)
}}
"""


def test_a_shape_change_on_an_input_is_said_on_the_parameter_as_a_fact():
    # the cause graph's code-path swap asks "a shape change on a parameter" of this fact, not of the summary's words
    (shape,) = [c for c in _causes(_MODULE.format(n=4, c=1), _MODULE.format(n=8, c=1)) if c.kind == "shape"]
    assert shape.on_parameter and "on parameter" in shape.summary
    (constant,) = _causes(_MODULE.format(n=4, c=1), _MODULE.format(n=4, c=2))
    assert constant.kind == "constant" and not constant.on_parameter
