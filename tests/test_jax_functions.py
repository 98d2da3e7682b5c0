"""JAX functions that share a module name are families of their own (review F5 remainder).

Inputs: real runs whose truth was written before hlodiff read them (fixtures/scenarios/jax/): jax_grad_and_forward
(`jax.jit(jax.value_and_grad(loss))` beside `jax.jit(loss)`, both `jit_loss`), jax_two_steps (two `@jax.jit def
step` in two files, two jitted lambdas), review_seq_len (the review's j3: `jax.jit(jax.grad(embed_loss))`
recompiling per length, then the `@jax.jit` forward, traced first inside the gradient). Look-alikes that must stay
one family: a function re-created per call (recreated_jit), a donation toggle, compile options, a static argument,
a new shape (the fixtures under fixtures/jax/).
"""

from __future__ import annotations

import shutil

import pytest

from helpers import FIXTURES, cli, cli_json

SCEN = FIXTURES / "scenarios" / "jax"


def _families(doc, name):
    return [f for f in doc["families"] if f["label"].split(" (", 1)[0] == name]


def test_a_gradient_and_its_forward_are_two_functions_not_a_recompilation():
    doc = cli_json("explain-recompile", str(SCEN / "jax_grad_and_forward"), codes=(0,))
    assert doc["headline"] is None
    loss = _families(doc, "jit_loss")
    assert [len(f["compiled"]) for f in loss] == [1, 1]
    assert loss[1]["another_function"]["reason"] == "new_object"
    assert loss[1]["another_function"]["where"]["line"] == 27  # evaluate(w, xv, yv): JAX's call site
    assert not [r for r in doc["recompilations"] if r["family"].startswith("jit_loss")]
    out = cli("explain-recompile", str(SCEN / "jax_grad_and_forward"), codes=(0,)).stdout
    assert "another path" not in out and "created anew" not in out
    assert "jit_loss (another function of this name called at jax_grad_and_forward.py:27)" in out.splitlines()[0]


def test_two_functions_named_step_in_two_files_are_two_families():
    doc = cli_json("explain-recompile", str(SCEN / "jax_two_steps"), codes=(0,))
    assert doc["headline"] is None
    step = _families(doc, "jit_step")
    assert [len(f["compiled"]) for f in step] == [1, 1]
    split = step[1]["another_function"]
    assert split["reason"] == "defined_at"
    assert split["where"]["file"].endswith("_jax_finetune_step.py") and split["where"]["line"] == 5
    lambdas = _families(doc, "jit__lambda")
    assert [f.get("another_function", {}).get("reason") for f in lambdas] == [None, "defined_at"]
    assert lambdas[1]["another_function"]["where"]["line"] == 20


def test_without_the_log_functions_in_other_files_still_split(tmp_path):
    """Only the dump: the two `step`s' own frames lie in two files, the two lambdas' on two lines (a lambda is one
    expression): two functions each, nothing recompiled."""
    shutil.copytree(SCEN / "jax_two_steps" / "dump", tmp_path / "dump")
    doc = cli_json("explain-recompile", str(tmp_path / "dump"), codes=(0,))
    step = _families(doc, "jit_step")
    assert [f.get("another_function", {}).get("reason") for f in step] == [None, "own_frames"]
    assert step[1]["another_function"]["where"]["file"].endswith("_jax_finetune_step.py")
    lambdas = _families(doc, "jit__lambda")
    assert [f.get("another_function", {}).get("where", {}).get("line") for f in lambdas] == [None, 20]
    assert doc["headline"] is None


def test_without_the_log_a_lambda_recreated_on_one_line_stays_one_family(tmp_path):
    """Look-alike: recreated_jit jits a new lambda on the same line every call; its frames share the line."""
    shutil.copytree(FIXTURES / "jax" / "recreated_jit" / "dump", tmp_path / "dump")
    doc = cli_json("explain-recompile", str(tmp_path / "dump"), codes=(1,))
    (family,) = _families(doc, "jit__lambda")
    assert len(family["compiled"]) == 4 and "another_function" not in family


def test_the_forward_traced_inside_its_gradient_is_not_told_as_a_recompilation():
    """review_seq_len: the last module is the forward `embed_loss(emb, tokens)` (:19), compiled with no new trace
    for the gradient's last arguments: its own family, never 'the traced Python takes another path'; the
    gradient's 6 compilations keep their shape story."""
    doc = cli_json("explain-recompile", str(SCEN / "review_seq_len"), codes=(1,))
    grad, forward = _families(doc, "jit_embed_loss")
    assert len(grad["compiled"]) == 6 and len(forward["compiled"]) == 1
    assert forward["another_function"]["reason"] == "traced_inside"
    assert forward["another_function"]["where"]["line"] == 19
    assert doc["headline"]["kind"] == "shape"
    out = cli("explain-recompile", str(SCEN / "review_seq_len"), codes=(1,)).stdout
    assert "another path" not in out and "6 compilations of jit_embed_loss" in out


@pytest.mark.parametrize("fixture, family, compiled", [
    ("recreated_jit", "jit__lambda", 4),     # a function re-created per call: the story itself
    ("donate_toggle", "jit_update", 2),      # same arguments, same results, no new trace: donation
    ("compile_options", "jit_loss", 2),      # the same trace compiled with other options
    ("static_argnum", "jit_apply", 2),       # a static argument changes the program
    ("recompile_shape", "jit_step", 3),      # a new shape, then a static argument
    ("scan_dtype", "jit_f", 2),              # jax.jit(jax.grad(f)) recompiling for a dtype
])
def test_one_function_recompiling_stays_one_family(fixture, family, compiled):
    doc = cli_json("explain-recompile", str(FIXTURES / "jax" / fixture), codes=(0, 1))
    found = _families(doc, family)
    assert len(found) == 1 and len(found[0]["compiled"]) == compiled
    assert "another_function" not in found[0]


def test_without_the_log_a_gradient_and_its_forward_are_told_apart_by_their_name_stacks(tmp_path):
    """Only the dump: the two jit_loss modules have the same arguments, other results and other call lines, and
    their own frames lie on the same lines. Until the tenth stop the story said what was seen ('either two functions
    or a static argument'); the gradient's operations all lie under JAX's jvp/transpose name stack and the
    forward's under none, which no static argument does: two functions, nothing recompiled."""
    shutil.copytree(SCEN / "jax_grad_and_forward" / "dump", tmp_path / "dump")
    doc = cli_json("explain-recompile", str(tmp_path / "dump"), codes=(0,))
    assert doc["headline"] is None
    assert "jit_loss (another function of this name called at jax_grad_and_forward.py:27)" in doc["summary"]


def test_without_the_log_a_static_argument_called_from_one_line_keeps_its_story(tmp_path):
    """Look-alike: jax_static_topk's k changes the results for the same arguments, but every call is from one
    line: one function recompiling, told as before."""
    shutil.copytree(SCEN / "jax_static_topk" / "dump", tmp_path / "dump")
    doc = cli_json("explain-recompile", str(tmp_path / "dump"), codes=(1,))
    assert not doc["headline"]["fix"].startswith("seen:")
    assert not any(c["fix"] and c["fix"].startswith("seen:") for r in doc["recompilations"] for c in r["causes"])
