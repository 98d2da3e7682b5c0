"""Stories and labels (issue 19): recompilations sharing a root told once with their values; families of
torch_xla.compile named by the user's line; run patterns run-length when long; similarity never "100%" when
anything differs; JAX's eager ops after the real story. Real runs from fixtures/, truth from their truth.json."""

from __future__ import annotations

import re

import pytest

from helpers import FIXTURES, cli, cli_json, truth_of
from hlodiff.dumps.run_folder import discover
from hlodiff.explain.families import compile_block_line
from hlodiff.explain.pattern_words import sequence_text
from hlodiff.explain.patterns import runs
from helpers import explained
from hlodiff.hlo.model import SourceFrame
from hlodiff.render.story_view import alike_text
from hlodiff.testing.stability import HloStabilityError, check_path

GROWTH = FIXTURES / "torch_xla" / "unbounded_growth"


def explain(path):
    return explained(discover([str(path)], None, None), [])


# -- stories -----------------------------------------------------------------------------------------------------


def test_a_growing_size_is_one_story_with_its_values():
    """unbounded_growth: `torch.zeros(step + 1)` every step; every recompilation has its root at that line."""
    t = truth_of("torch_xla", "unbounded_growth")
    result = explain(GROWTH / "graphs.hlo.0")
    (story,) = result.stories
    compiled = [e["entry"] for e in t["entries"] if e["compiled"]]
    assert [int(ref.rsplit("#", 1)[1]) for ref in story.recompilations] == compiled[1:]
    assert story.kind == t["cause"] and story.location.line == t["user_line"]
    assert story.what == "size" and story.values == ("2", "3", "4", "5")
    assert story.trend is not None and story.trend.by == 1 and story.trend.every_step


def test_a_story_is_told_once_the_rest_one_line_each():
    out = cli("explain-recompile", str(GROWTH)).output
    assert out.count("recompiled (") == 1  # the lead in full
    assert re.search(r"story: the size at unbounded_growth\.py:23 grows by 1 every step: 2, 3, 4, 5 - a new graph "
                     r"each time", out)
    rest = [line for line in out.splitlines() if re.match(r"\s+#\d \(step \d\): ", line)]
    assert len(rest) == 3


def test_json_stories_reference_their_recompilations():
    doc = cli_json("explain-recompile", str(GROWTH))
    (story,) = doc["stories"]
    refs = [r["graph"] for r in doc["recompilations"]]
    assert story["recompilations"] == refs and story["lead"] in refs
    assert story["trend"] == {"by": 1, "every_step": True} and story["values"] == ["2", "3", "4", "5"]


def test_html_groups_a_story(tmp_path):
    html = tmp_path / "r.html"
    cli("explain-recompile", str(GROWTH), "--html", str(html))
    text = html.read_text()
    assert text.count("class='story'") == 1 and "grows by 1 every step" in text
    assert text.count("The two graphs around each change") == 1  # the lead in full, the rest one line each
    for n in (1, 2, 3, 4):  # the timeline's links still land on every recompilation
        assert f"id='recompile-{n}'" in text


def test_recompilations_with_different_roots_are_different_stories():
    result = explain(FIXTURES / "torch_xla" / "setup_accumulate" / "graphs.hlo.0")
    families = [s.family for s in result.stories]
    assert len(result.stories) >= 2 and len(set(families)) == 2


def test_the_failure_message_tells_the_story():
    """The pytest plugin's message is the explanation of the late graphs: one story, the root first."""
    with pytest.raises(HloStabilityError) as err:
        check_path(GROWTH).assert_stable(warmup=1)
    message = str(err.value)
    assert "grows by 1 every step" in message and message.count("recompiled (") == 1
    with pytest.raises(HloStabilityError) as err:
        check_path(FIXTURES / "torch_xla" / "item_partial").assert_stable(warmup=1)
    lines = str(err.value).splitlines()
    partial = next(i for i, line in enumerate(lines) if line.startswith("  partial "))
    with_it = next(i for i, line in enumerate(lines) if line.strip() == "with it:")
    assert partial < with_it < next(i for i, line in enumerate(lines) if line.lstrip().startswith("outputs "))


# -- labels ------------------------------------------------------------------------------------------------------


def test_torch_xla_compile_families_are_named_by_the_users_line():
    """tests/data/dumps/named_graphs.hlo.0 (a real torch_xla.compile run): its syncs come from the context manager."""
    result = explain(FIXTURES.parent / "tests" / "data" / "dumps" / "named_graphs.hlo.0")
    labels = [f.label for f in result.families]
    assert "train_step torch_xla.compile at sample.py:19" in labels
    assert not any("contextlib" in label for label in labels)


def test_the_compile_block_skips_context_manager_plumbing_from_any_python():
    """A dump from another machine: its Python is not where hlodiff runs, so contextlib may not read as library."""
    frames = (SourceFrame("/opt/venv/lib/python3.10/site-packages/torch_xla/torch_xla.py", 87, "sync"),
              SourceFrame("/opt/venv/lib/python3.10/site-packages/torch_xla/torch_xla.py", 214, "_compile"),
              SourceFrame("/opt/py/lib/python3.10/contextlib.py", 144, "__exit__"),
              SourceFrame("/home/me/train.py", 51, "<module>"))
    assert compile_block_line(frames) == frames[-1]
    assert compile_block_line(frames[2:]) is None  # no torch_xla.compile frame: a plain sync


def test_long_patterns_are_run_length():
    letters = ["A"] * 41 + ["B", "A"] * 6
    assert sequence_text(letters) == "A\u00d741, then B,A,B,A,B,A,B,A,B,A,..."
    assert sequence_text(list("ABAB")) == "A,B,A,B"
    assert runs("AAB") == [("A", 2), ("B", 1)]


def test_pattern_facts_are_typed_in_json():
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" /
                                                                                   "setup_accumulate"))
    patterns = {f["pattern"]["name"]: f["pattern"] for f in doc["families"]}
    t = truth_of("torch_xla", "setup_accumulate")
    assert patterns["periodic"]["period"] == t["patterns"]["periodic"]["period"]
    assert patterns["periodic"]["runs"][:3] == [["A", 1], ["B", 1], ["C", 1]]


def test_similarity_is_never_100_percent_when_anything_differs():
    assert alike_text(0.9996, False) == ">99% alike" and alike_text(1.0, True) == "100% alike"
    assert alike_text(0.97, False) == "97% alike"
    result = explain(FIXTURES / "torch_xla" / "slice_index" / "graphs.hlo.0")
    (r,) = result.recompilations
    out = cli("explain-recompile", str(FIXTURES / "torch_xla" / "slice_index")).output
    assert not r.diff.equal and "100% alike" not in out


def test_jax_eager_ops_come_after_the_real_story():
    result = explain(FIXTURES / "jax" / "scan_dtype" / "dump")
    assert result.stories[0].family == "jit_f" and all(s.family.startswith("jit_") for s in result.stories)
    out = cli("explain-recompile", str(FIXTURES / "jax" / "scan_dtype" / "dump")).output
    import re  # an eager op's section says "compiled for another shape" (review 4, F8)
    blocks = [m.group(1) for line in out.splitlines()
              if (m := re.search(r" (?:recompiled|compiled for another shape) \(([^)]*)\)", line))]
    assert blocks[0] == "jit_f" and len(blocks) > 1
    patterns = [line.strip() for line in out.splitlines() if line.startswith("  ") and "compil" in line
                and not line.startswith("   ")]
    eager = [i for i, p in enumerate(patterns) if p.startswith("eager op")]
    assert eager and all(i > j for i in eager for j, p in enumerate(patterns) if not p.startswith("eager op"))
