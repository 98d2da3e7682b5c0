"""New-user review 22 (2026-11-28): jx2, a JAX mesh shrinking from 4 to 2 devices between calls of one jitted step
(F1: told as 'place the argument with the same sharding every call'; F2: JAX's equal printed shardings quoted as
the difference), checked on the scenario made from it and on the sharding look-alikes that share its evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import cli, cli_json
from hlodiff.diff.header import resized_mesh
from hlodiff.hlo.model import Module

SCEN = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios" / "jax"
JX2 = SCEN / "rev22_jx_mesh_resize" / "record"


# -- F1: a resized mesh leads as the device count, expected once per mesh size ---------------------------------------

def test_a_resized_mesh_is_told_as_the_device_count_and_expected():
    doc = cli_json("explain-recompile", str(JX2), codes=(0,))  # a one-off resize: nothing unexpected
    head = doc["headline"]
    assert head["kind"] == "sharding" and head["location"]["line"] == 21
    assert "device count" in head["fix"] and "device_put" not in head["fix"]
    text = cli("explain-recompile", str(JX2), codes=(0,)).stdout
    assert "same sharding every call" not in text.split("\n\n")[0]
    assert "sharding  the program is built for 2 devices instead of 4 (module header: num_partitions 4 -> 2)" in text


@pytest.mark.parametrize("left, right, resized", [
    ({"num_partitions": "4"}, {"num_partitions": "2"}, True),     # the mesh shrank (jx2)
    ({"num_partitions": "2"}, {"num_partitions": "8"}, True),     # the mesh grew
    ({"replica_count": "4"}, {"replica_count": "2"}, True),       # replicas, the other device count
    ({}, {"num_partitions": "4"}, False),                         # an argument off the mesh (rev4_sharding)
    ({"num_partitions": "4"}, {"num_partitions": "1"}, False),    # back on one device (rev17_jx_sharded_eval)
    ({"num_partitions": "4"}, {"num_partitions": "4"}, False),    # same mesh size, another spec
])
def test_each_device_count_change_is_a_resize_only_with_a_mesh_on_both_sides(left, right, resized):
    assert resized_mesh(Module("m", attrs=left), Module("m", attrs=right)) is resized


@pytest.mark.parametrize("name, line", [("rev4_sharding", None), ("rev10_jx_sharding", 19),
                                        ("rev17_jx_sharded_eval", None)])
def test_look_alike_an_argument_off_the_mesh_keeps_the_sharding_story(name, line):
    head = cli_json("explain-recompile", str(SCEN / name), codes=(1,))["headline"]
    assert head["kind"] == "sharding" and "device count" not in head["fix"]
    assert line is None or head["location"]["line"] == line


# -- F2: equal printed values are said as equal, not quoted as the difference ---------------------------------------

def test_equal_printed_shardings_are_not_quoted_as_the_difference():
    text = cli("explain-recompile", str(JX2), codes=(0,)).stdout
    assert "now f32[32,64]({Auto: ('data',)}) and before f32[32,64]({Auto: ('data',)})" not in text
    assert "JAX prints it alike before and after" in text and "devices of the mesh" in text


def test_look_alike_different_printed_shardings_keep_jax_s_quote():
    text = cli("explain-recompile", str(SCEN / "rev4_sharding"), codes=(1,)).stdout
    assert "now f32[16,8]({Auto: ('data',)}) and before f32[16,8]({})" in text
    assert "prints it alike" not in text


# -- F6: the stories' counts add up to the run's, and the headline's story comes first ------------------------------

TX1 = SCEN.parent / "torch_xla" / "rev22_tx_early_exit" / "record"


def test_the_stories_counts_add_up_and_the_headline_s_story_is_first():
    text = cli("explain-recompile", str(TX1), codes=(1,)).stdout
    stories = [line for line in text.splitlines() if line.startswith("story: ")]
    assert "3 recompilations" in text.splitlines()[0]
    assert stories == [
        "story: 5 of the run's 8 compilations, 1 of them a recompilation, one root (partial at rev22_tx_early_exit.py:13)",
        "story: 2 of the 3 recompilations, one root (constant at rev22_tx_early_exit.py:9)"]


@pytest.mark.parametrize("counted, said", [(1, "3 compilations, 1 of them a recompilation"),
                                           (2, "3 compilations, 2 of them recompilations"),
                                           (3, "3 recompilations, one root")])
def test_each_count_of_a_story_s_own_recompilations(counted, said):
    from hlodiff.explain.stories import Story
    from hlodiff.render.story_view import story_sentence

    story = Story("f", "shape", None, ("#1", "#2", "#3"), "#1", (), "", None)
    assert said in story_sentence(story, None, counted)
