"""Every literal XLA prints reaches value analysis as a typed number, and no value crashes the commands.

The unit tests pin the one conversion (hlodiff.hlo.literal.number and its narrowings); the property test rewrites
the baked scalar values and sizes of real fixture runs (tests/value_rewrite.py: negative fractions, 1e-05, nan,
inf, -0, huge integers, booleans, complex, ramps and cycles over the steps) and runs explain-recompile, compare
and cost on the copy: exit 0 or 1 with a JSON document, or 2 with one located error line, never 3.
The suite runs a modest number of examples; `python tests/value_rewrite.py --copies N` runs many more.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import FIXTURES, cli, cli_json
from hlodiff.explain.family_values import grows
from hlodiff.hlo.literal import integer, number, parse_literal, ratio, real, size
from value_rewrite import COMMANDS, fixture_runs, judge, rewrite_copy, target

RUNS = fixture_runs()


@pytest.mark.parametrize("text, value", [
    ("1.2", 1.2), ("-3.5", -3.5), ("0.05", 0.05), ("1e-05", 1e-05), ("-2.5E+08", -2.5e8), (".5", 0.5),
    ("7", 7), ("-3", -3), ("18446744073709551615", 2 ** 64 - 1), (str(10 ** 40), 10 ** 40),
    ("inf", math.inf), ("-inf", -math.inf), ("true", True), ("false", False), ("(1, -2.5)", complex(1, -2.5)),
    ("f32[] 0.1", 0.1), ("448", 448),
])
def test_number_reads_every_printed_scalar_as_a_typed_value(text, value):
    got = number(text)
    assert got == value and type(got) is type(value)


def test_number_keeps_nan_and_negative_zero_and_refuses_what_is_no_scalar():
    assert math.isnan(number("nan")) and math.isnan(number("-nan(0x7fc00000)"))
    assert math.copysign(1.0, number("-0.0")) < 0
    for text in ("{...}", "{1, 2}", "(1, {2})", "abc", "", "9" * 5000, "1.2.3"):
        assert number(text) is None, text


def test_narrowings_say_none_rather_than_raise():
    assert real("nan") is None and real("true") is None and real("(1, 2)") is None and real("-inf") == -math.inf
    assert integer("2.0") is None and integer("8") == 8 and integer("true") is None
    assert size("<=8") == 8 and size("?") is None and size("-1") is None
    assert ratio(10 ** 400, 3) is None and ratio(1, 0) is None and ratio(3, 2) == 1.5


def test_number_and_the_literal_reader_agree():
    """One conversion: what number() gives is the value parse_literal stores."""
    for text in ("1.2", "-0", "1e-05", "nan", "-inf", "123456789012345678901", "true", "(1, 2)"):
        a, b = number(text), parse_literal(text).values[0]
        assert a == b or (a != a and b != b)


@pytest.mark.parametrize("values, expected", [
    (("1.2", "1.4", "1.6", "1.8"), True),           # a ramped float: steps equal up to rounding
    (("8", "16", "24"), True), (("8", "16", "32"), False), (("3", "2", "1"), False),
    (("nan", "1", "2"), False), (("inf", "1", "2"), False), (("1", "2", str(10 ** 400)), False),
    ((str(10 ** 400), str(10 ** 400 + 1), str(10 ** 400 + 2)), True), (("true", "false", "true"), False),
])
def test_grows_reads_baked_values_of_every_kind(values, expected):
    assert grows(values) is expected


def test_a_ramped_float_is_told_not_crashed():
    """focal_gamma's shape (a float exponent ramped 1.2, 1.4, ...) rebuilt on a real run: the lr_constant fixture's
    learning rate rewritten into a ramp. It crashed explain-recompile with int('1.2')."""
    with tempfile.TemporaryDirectory() as tmp:
        run = next(r for r in RUNS if r.name == "torch_xla/lr_constant")
        copy = Path(tmp) / "lr"
        shutil.copytree(run.folder, copy)
        save = copy / "graphs.hlo.0"
        lr = [entry for entry in save.read_text().split("constant(0.1)")]
        text = lr[0] + "".join(f"constant({1.2 + 0.2 * k!r}){part}" for k, part in enumerate(lr[1:]))
        save.write_text(text)
        doc = cli_json("explain-recompile", copy, codes=(0, 1))
        assert doc["recompilations"], doc


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(RUNS), st.integers(0, 2 ** 31), st.sampled_from(COMMANDS))
def test_rewritten_values_never_crash_a_command(run, seed, command):
    with tempfile.TemporaryDirectory() as tmp:
        copy = rewrite_copy(run, Path(tmp), seed)
        result = cli(command, target(copy, command), "--json")
        assert judge(result.exit_code, result.stdout, result.output) is None, (run.name, seed, result.output[-2000:])


def test_the_generator_changes_values_over_the_steps():
    """The property test would prove nothing if the rewrite left the runs alone."""
    run = next(r for r in RUNS if r.name == "torch_xla/lr_constant")
    with tempfile.TemporaryDirectory() as tmp:
        changed = [rewrite_copy(run, Path(tmp) / str(seed), seed).dump.read_text() != run.dump.read_text()
                   for seed in range(3)]
    assert all(changed)
    assert FIXTURES in run.folder.parents


def test_value_lists_know_booleans_in_either_spelling():
    """HLO prints `true`, JAX's cache-miss log `True` (a static `train` flag): both are booleans, whose fix says one
    graph per value is expected (fixtures/jax/train_flag)."""
    from hlodiff.diff.value_facts import _values_facts

    assert _values_facts(("True", "False"))[2] and _values_facts(("true", "false"))[2]
    assert not _values_facts(("1", "0"))[2]
    doc = cli_json("explain-recompile", FIXTURES / "jax" / "train_flag", codes=(0, 1))
    assert "nothing to fix" in doc["recompilations"][0]["causes"][0]["fix"]
