"""A JAX log of cache misses without 'Compiling jit(...)' lines (JAX_EXPLAIN_CACHE_MISSES=1 alone, the way many users
capture) joins its misses to the dumped modules by function name where that is unambiguous, and says so; where it is
not (two functions of one name, counts that differ) nothing is joined, and the warning says why. The small logs are
real JAX 0.10.2 logs (paths neutralised, Compiling lines left out); the end-to-end tests run ../shared's scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import SHARED, need_shared
from helpers import cli_json
from hlodiff.dumps.jax_log import join_modules, read_jax_log
from hlodiff.errors import InputNote, InputWarning

# outer (jitted) calls the jitted inner on a slice: inner's second trace happens inside outer's and compiles nothing
NESTED = """\
TRACING CACHE MISS at /home/user/project/nested.py:12:6 (<module>):
  never seen function:
    inner id=0 defined at /home/user/project/nested.py:3
TRACING CACHE MISS at /home/user/project/nested.py:14:10 (<module>):
  never seen function:
    outer id=0 defined at /home/user/project/nested.py:7
TRACING CACHE MISS at /home/user/project/nested.py:9:11 (outer):
  for inner defined at /home/user/project/nested.py:3
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[4] and before f32[8]
TRACING CACHE MISS at /home/user/project/nested.py:14:10 (<module>):
  for outer defined at /home/user/project/nested.py:7
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[16] and before f32[8]
"""
NESTED_MODULES = ["jit_convert_element_type", "jit_inner", "jit_outer", "jit_outer"]

# two functions named step in two files, each compiled twice
SAME_NAME = """\
TRACING CACHE MISS at /home/user/project/samename.py:9:10 (<module>):
  never seen function:
    step id=0 defined at /home/user/project/samename.py:4
TRACING CACHE MISS at /home/user/project/samename.py:10:10 (<module>):
  never seen function:
    step id=0 defined at /home/user/project/samename_b.py:3
TRACING CACHE MISS at /home/user/project/samename.py:9:10 (<module>):
  for step defined at /home/user/project/samename.py:4
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[8] and before f32[4]
TRACING CACHE MISS at /home/user/project/samename.py:10:10 (<module>):
  for step defined at /home/user/project/samename_b.py:3
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[8] and before f32[4]
"""


def _join(tmp_path, text: str, modules: list[str], wanted: bool = False):
    path = tmp_path / "explain.log"
    path.write_text(text)
    warnings: list[InputWarning] = []
    counts = {m: modules.count(m) for m in modules} if wanted else None
    return join_modules(read_jax_log(str(path), warnings, counts), modules, warnings), warnings


def test_the_kth_miss_of_a_function_is_its_kth_module_and_a_trace_inside_another_counts_for_neither(tmp_path):
    """inner's second miss is traced inside outer (its call site's frame is outer, in outer's file): it compiled no
    jit_inner module, so inner's one top-level miss is its one module and outer's two misses its two modules. Kept
    bounded (``wanted``) or whole, the join is the same."""
    for wanted in (False, True):
        joined, warnings = _join(tmp_path, NESTED, NESTED_MODULES, wanted)
        assert joined[0] is None  # an eager op: JAX explains no miss for it
        inner, first, second = joined[1:]
        assert (inner.function, inner.cache_miss.kind, inner.by_name) == ("inner", "never_seen", True)
        assert (first.cache_miss.kind, second.cache_miss.kind) == ("never_seen", "input_types")
        assert second.cache_miss.function == "outer" and second.cache_miss.reasons[0].now == "f32[16]"
        [note] = warnings
        assert isinstance(note, InputNote) and ": note: " in str(note)
        assert "inner: 1 miss and 1 jit_inner module, outer: 2 misses and 2 jit_outer modules" in note.message


def test_two_functions_of_one_name_join_nothing_and_say_so(tmp_path):
    """Which step compiled which jit_step module the log cannot say without its compile lines: nothing joined."""
    joined, warnings = _join(tmp_path, SAME_NAME, ["jit_step"] * 4)
    assert joined == [None] * 4
    [warning] = warnings
    assert not isinstance(warning, InputNote)
    assert "nothing joined" in warning.message and "more than one function is named step" in warning.message


def test_counts_that_differ_join_nothing_for_that_function_only(tmp_path):
    """outer's modules outnumber its misses (a compilation JAX explained no miss for: a donation change, a cache
    load): outer joins nothing, inner still joins, and the note names what was left out."""
    joined, warnings = _join(tmp_path, NESTED, NESTED_MODULES + ["jit_outer"])
    assert [c.function if c else None for c in joined] == [None, "inner", None, None, None]
    [note] = warnings
    assert "inner: 1 miss" in note.message and "not joined: 2 cache misses of outer but 3 jit_outer modules" \
        in note.message


def test_a_log_with_compile_lines_still_joins_by_them(tmp_path):
    """The compile lines, where present, are the join (no name join, no note): the misses of the same log with a
    Compiling line for each of outer's compilations join as before."""
    lines = NESTED.splitlines(keepends=True)
    compiling = "Compiling jit(outer) with global shapes and types (ShapedArray(float32[8]),). Argument mapping: ().\n"
    text = "".join(lines[:11]) + compiling + "".join(lines[11:]) + compiling
    joined, warnings = _join(tmp_path, text, ["jit_outer", "jit_outer"])
    assert [c.by_name for c in joined] == [False, False] and warnings == []
    assert joined[1].cache_miss.reasons[0].now == "f32[16]" and joined[1].arguments


def _capture(tmp_path, name: str):
    """Run ../shared's scenario script as make_cases2.sh does (JAX_EXPLAIN_CACHE_MISSES=1, no JAX_LOG_COMPILES)."""
    script = need_shared(SHARED / "scenarios" / "scenarios2" / f"{name}.py")
    dump, log = tmp_path / name, tmp_path / f"{name}.jax_explain.log"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_EXPLAIN_CACHE_MISSES": "1",
           "XLA_FLAGS": f"--xla_dump_to={dump} --xla_dump_hlo_as_text"}
    env.pop("JAX_LOG_COMPILES", None)
    with open(log, "w") as err:
        subprocess.run([sys.executable, str(script)], cwd=script.parent, env=env, stdout=subprocess.DEVNULL,
                       stderr=err, check=True, timeout=300)
    assert "Compiling" not in log.read_text()
    return json.dumps(cli_json("explain-recompile", str(dump), "--jax-log", str(log), codes=(0, 1))["headline"])


def test_shared_weak_type_captured_without_compile_lines(tmp_path):
    """shared jax_weak_type: a Python float then a jnp.float32 scalar; JAX's weak-type reason heads, at the call,
    with a typed-argument fix (it said "the log could not be matched" before)."""
    head = json.loads(_capture(tmp_path, "jax_weak_type"))
    assert head["kind"] == "weak_type" and head["location"]["line"] == 12, head
    assert "jnp.float32" in head["fix"] and "JAX_LOG_COMPILES" not in head["fix"]


def test_shared_remat_policy_leads_with_the_static_argument_not_the_inner_retrace(tmp_path):
    """shared jax_remat_policy: the static `policy` changes jax.checkpoint's policy; the inner `block`'s "never seen
    ... defined on the same line" misses are traced inside train_step's trace, so train_step's static-argument miss
    heads at the call (:20), not the ops at :14 told "the traced Python takes another path"."""
    head = json.loads(_capture(tmp_path, "jax_remat_policy"))
    assert head["kind"] == "static_argument" and head["location"]["line"] == 20, head
    assert "policy" in head["fix"] and "another path" not in head["fix"]


PARTIAL = '''\
import jax, jax.numpy as jnp

@jax.jit
def f(x, s):
    return jnp.tanh(x * s).sum()

@jax.jit
def g(x):
    return jnp.cos(x).sum()

x = jnp.ones((8, 16), jnp.float32)
for step, s in enumerate([0.5, jnp.float32(0.5)]):
    print(float(f(x, s)))                              # line 13: a Python float, then a typed scalar
    print(float(g(jnp.ones((4 * (step + 1),)))))       # line 14: another shape
'''


def test_a_function_left_out_of_the_name_join_is_not_told_a_placement(tmp_path):
    """f's weak-type miss is missing from the log (1 miss, 2 jit_f modules: not joined) while g joins: f's identical
    HLO must not be read as "the trace was reused, the arguments live elsewhere" (what a compilation without a miss
    means when compile lines join), but as a log not matched there; with f's miss in the log, f is told its weak
    type. A real JAX run of a small script."""
    pytest.importorskip("jax")
    (tmp_path / "partial.py").write_text(PARTIAL)
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_EXPLAIN_CACHE_MISSES": "1",
           "XLA_FLAGS": f"--xla_dump_to={tmp_path / 'dump'} --xla_dump_hlo_as_text"}
    env.pop("JAX_LOG_COMPILES", None)
    with open(tmp_path / "whole.log", "w") as err:
        subprocess.run([sys.executable, "partial.py"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=err,
                       check=True, timeout=300)
    whole = (tmp_path / "whole.log").read_text()
    second_f = whole.index("TRACING CACHE MISS", whole.index("  for f defined") - 120)
    (tmp_path / "cut.log").write_text(whole[:second_f] + whole[whole.index("TRACING CACHE MISS", second_f + 1):])

    def headline_of(log: str) -> dict:
        doc = cli_json("explain-recompile", str(tmp_path / "dump"), "--jax-log", str(tmp_path / log), codes=(1,))
        [f] = [r for r in doc["recompilations"] if r["family"] == "jit_f"]
        return f["causes"][0]

    cut = headline_of("cut.log")
    assert cut["kind"] == "cache_key" and "could not be matched" in cut["fix"] and "device" not in cut["fix"]
    told = headline_of("whole.log")
    assert told["kind"] == "weak_type" and told["locations"][0]["line"] == 13
