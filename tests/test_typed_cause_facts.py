"""The analysis reads typed facts a cause carries, never its own sentence: rewording a summary (or emptying it)
leaves the facts and the fix chosen from them unchanged (house rule: typed facts first, words only in renderers)."""

from __future__ import annotations

from dataclasses import replace

from hlodiff.diff.fix_facts import evidence
from hlodiff.diff.fixes import FixContext, decide
from hlodiff.diff.header import header_causes
from hlodiff.diff.model import Change, InstructionRef
from hlodiff.diff.summaries import absorb, inputs_cause, origin_cause
from hlodiff.hlo.parser import parse_module


def _ref(name, opcode, shape):
    return InstructionRef("main", name, opcode, shape)


def _reworded(cause):
    return replace(cause, summary="reworded")


def test_inputs_added_where_instructions_went_is_a_warm_up_whatever_the_words():
    """Optimizer state appearing as inputs where the first step computed it: the warm-up fact comes from the
    counts the cause was built with."""
    cause = inputs_cause([Change(None, _ref("p3", "parameter", "f32[4]"))], "")
    absorb(cause, [Change(_ref("m1", "multiply", "f32[4]"), None), Change(_ref("a1", "add", "f32[4]"), None)])
    ctx = FixContext(producer="torch_xla", first_recompilation=True, settles=True)
    facts = evidence(cause, ctx).facts
    assert {"added", "removed", "warmup"} <= facts and "removed_only" not in facts
    assert evidence(_reworded(cause), ctx).facts == facts
    assert decide(_reworded(cause), ctx).rule.name == decide(cause, ctx).rule.name


def test_a_typed_prng_key_is_read_from_the_element_types_not_the_sentence():
    change = Change(_ref("p0", "parameter", "u32[2]"), _ref("p0", "parameter", "key<fry>[]"), ("element_type",),
                    {"element_type": ("u32", "key<fry>")})
    cause = origin_cause("dtype", [change], "")
    assert "prng_key" in evidence(_reworded(cause), FixContext(producer="jax")).facts
    plain = origin_cause("dtype", [replace(change, details={"element_type": ("f32", "bf16")})], "")
    assert "prng_key" not in evidence(plain, FixContext(producer="jax")).facts


def test_donation_gained_by_added_inputs_only_follows_from_them_whatever_the_words():
    left = parse_module("HloModule m\n\nENTRY e {\n  p0 = f32[4] parameter(0)\n  ROOT r = f32[4] negate(p0)\n}\n")
    right = parse_module("HloModule m, input_output_alias={ {}: (1, {}, may-alias) }\n\nENTRY e {\n"
                         "  p0 = f32[4] parameter(0)\n  p1 = f32[4] parameter(1)\n  ROOT r = f32[4] add(p0, p1)\n}\n")
    (cause,) = [c for c in header_causes(left, right, same_computation=False, parameter_mapping=[(0, 0)])
                if c.kind == "aliasing"]
    ctx = FixContext(producer="torch_xla", added_inputs=frozenset({"p1"}))
    assert "donates_added_inputs" in evidence(_reworded(cause), ctx).facts
    lost = header_causes(right, left, same_computation=False, parameter_mapping=[(0, 0)])
    assert all("donates_added_inputs" not in evidence(c, ctx).facts for c in lost)


def _after_sync_facts(line: int, function: str = "<module>", sync_line: int = 19) -> frozenset[str]:
    from hlodiff.diff.model import Cause
    from hlodiff.hlo.model import SourceFrame
    cause = Cause("outputs", "1 output added", locations=[SourceFrame("/home/user/project/train.py", line, function)])
    sync = SourceFrame("/home/user/project/train.py", sync_line, "<module>")
    return evidence(cause, FixContext(producer="torch_xla", sync_at=sync)).facts


def test_an_output_made_below_the_sync_that_ran_the_graph_was_computed_after_the_previous_sync():
    """norm_after_sync (crossings round 3): the norm at :20, below the sync at :19, is pending into the next step."""
    assert "after_sync:metric" in _after_sync_facts(20)


def test_an_output_made_above_the_sync_or_elsewhere_is_no_value_computed_after_it():
    """metric_even_steps' look-alike: a metric kept on some steps above the sync; a line in another function (a
    model's forward) cannot be ordered against the loop's sync."""
    assert "after_sync:metric" not in _after_sync_facts(15)
    assert "after_sync:metric" not in _after_sync_facts(40, function="forward")


def test_after_sync_is_one_fact_whose_field_says_metric_or_validation():
    """rev8_eval_nosync's look-alike: explain found every added output's line below the sync (made_after_sync); the
    cause's own line below the sync in the loop (a metric) is the narrower evidence and wins; never both facts."""
    from hlodiff.diff.model import Cause
    from hlodiff.hlo.model import SourceFrame
    sync = SourceFrame("/home/user/project/train.py", 19, "<module>")

    def facts(line: int, function: str) -> frozenset[str]:
        cause = Cause("outputs", "1 output added", locations=[SourceFrame("/home/user/project/train.py", line,
                                                                         function)])
        ctx = FixContext(producer="torch_xla", sync_at=sync, made_after_sync="train.py:19")
        return frozenset(f for f in evidence(cause, ctx).facts if f.startswith("after_sync"))

    assert facts(20, "<module>") == {"after_sync:metric"}
    assert facts(40, "forward") == {"after_sync:validation"}
