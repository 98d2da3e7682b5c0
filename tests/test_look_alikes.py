"""Every rule knows its look-alikes (issue 30): real runs that share a rule's surface evidence, each with its truth
written before hlodiff ran (``truth.json`` ``look``: the kinds the headline may have, the lines the user must be
pointed at, words of which the headline's fix must carry one, words no fix may carry, and whether "expected" (exit
0) is right). Stochastic depth, a frozen backbone and an EMA are not train/eval; a batch size changed once is not
buckets; a host read that sets a size is not an early read to move; a state carried without detach is not a sync
to move; a device_put is not compiler options; a static slice start wants lax.dynamic_slice; a keyword call wants
its name."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, truth_of
from hlodiff.dumps.run_folder import discover
from helpers import explained
from hlodiff.explain.verdict import exit_status


def _cases():
    cases = []
    for path in sorted(FIXTURES.glob("*/look_*/truth.json")):
        folder = path.parent
        dump = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder / "dump"
        cases.append(pytest.param(folder, dump, id=str(folder.relative_to(FIXTURES))))
    return cases


CASES = _cases()

# Where the run's captures cannot reach what the truth asks, and why: strict xfails, so a fix shows up as a pass.
NOT_YET = {
    ("line", "torch_xla/look_stochastic_depth"): "the `if` that skips the block traces nothing: no frame holds it",
    ("line", "torch_xla/look_frozen_backbone"): "requires_grad_(False) traces nothing: no frame holds it",
    ("line", "jax/look_device_put"): "JAX reuses the first call's trace and logs no miss: no stack of this call",
}


def _known(what: str, case):
    reason = NOT_YET.get((what, case.id))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(*case.values, id=case.id, marks=marks)


def _explain(folder, dump):
    jax_log = folder / "stderr.log"
    return explained(discover([str(dump)], None, None, str(jax_log) if jax_log.exists() else None), [])


def test_the_look_alike_families_have_their_runs():
    names = {c.id for c in CASES}
    assert {"torch_xla/look_stochastic_depth", "torch_xla/look_frozen_backbone", "torch_xla/look_ema",
            "torch_xla/look_batch_once", "torch_xla/look_multiscale", "torch_xla/look_host_size",
            "torch_xla/look_rnn_carry", "jax/look_device_put", "jax/look_static_slice", "jax/look_kwarg",
            "jax/look_token_list", "torch_xla/look_warmup_hides"} <= names


@pytest.mark.parametrize("folder, dump", [_known("kind", c) for c in CASES])
def test_headline_kind_fix_and_verdict(folder, dump):
    look = truth_of(folder)["look"]
    result = _explain(folder, dump)
    head = result.headline.causes[0]
    assert head.kind in look["kinds"], (head.kind, head.summary)
    assert any(word in head.fix for word in look["fix_must_any"]), head.fix
    assert [word for word in look["fix_must_not"] if word in head.fix] == [], head.fix
    assert exit_status(result) == (0 if look["expected"] else 1)


@pytest.mark.parametrize("folder, dump", [_known("line", c) for c in CASES])
def test_headline_line_is_the_decision(folder, dump):
    t = truth_of(folder)
    result = _explain(folder, dump)
    head = result.headline.causes[0]
    lines = [f.line for f in head.locations if f.file.endswith(t["user_file"])]
    assert lines and lines[0] in t["look"]["lines"], (lines, t["look"]["lines"])


def _unscrubbed(tmp_path, folder):
    """The fixture as it was before its paths were scrubbed: the script and its capture in one folder, every
    ``/home/user/project`` in the text files pointing there again (the protos, whose strings carry their length,
    are left out: a text dump is what many users keep)."""
    import shutil

    here = tmp_path / "project"
    here.mkdir()
    shutil.copy(folder.parent / f"{folder.name}.py", here)
    shutil.copytree(folder, here / folder.name, ignore=shutil.ignore_patterns("*.pb"))
    for path in (here / folder.name).rglob("*"):
        if path.is_file() and path.suffix in (".txt", ".log", ".0", "") and "debug_options" not in path.name:
            text = path.read_text(errors="replace")
            if "/home/user/project" in text:
                path.write_text(text.replace("/home/user/project", str(here)))
    return here / folder.name


@pytest.mark.parametrize("name, decision", [("torch_xla/look_stochastic_depth", "if not skip:"),
                                            ("torch_xla/look_frozen_backbone", "requires_grad_(False)"),
                                            ("jax/look_device_put", "jax.device_put((w0, x0), devices[1])")])
def test_with_the_source_on_disk_the_line_is_the_decision(tmp_path, name, decision):
    """A branch, a freeze or a placement traces nothing, so no capture holds its line; the user's file does. With
    the script on disk (as on the user's machine) the headline's first line is the `if`, the requires_grad_, the
    device_put; the dumps' own lines follow it."""
    folder = _unscrubbed(tmp_path, FIXTURES / name)
    dump = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder / "dump"
    head = _explain(folder, dump).headline.causes[0]
    source = (folder.parent / f"{folder.name}.py").read_text().splitlines()
    first = head.locations[0]
    assert first.file.startswith(str(tmp_path)) and decision in source[first.line - 1], (first, head.locations)
    assert first.line in truth_of(FIXTURES / name)["look"]["lines"]


@pytest.mark.parametrize("name, words", [("torch_xla/look_stochastic_depth", "the `if`"),
                                         ("torch_xla/look_frozen_backbone", "the requires_grad_ (or .requires_grad =) line"),
                                         ("jax/look_device_put", "jax.device_put")])
def test_without_the_source_a_hint_names_the_decision(name, words):
    """The committed fixtures' paths are scrubbed (the source is not there): the nearest user frame stays, and a
    hint says which line to look for and why no capture holds it."""
    folder = FIXTURES / name
    dump = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder / "dump"
    head = _explain(folder, dump).headline.causes[0]
    assert head.locations and head.hint and words in head.hint and "no capture" in head.hint, head.hint


def _planned_runs():
    cases = []
    for name in ("torch_xla/collate_buckets", "torch_xla/index_list", "torch_xla/look_batch_once",
                 "torch_xla/look_multiscale", "torch_xla/batch_shape", "torch_xla/kv_cache",
                 "torch_xla/seq_lengths/seq"):
        folder = FIXTURES / name
        dump = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder / "dump"
        cases.append(pytest.param(dump, id=name))
    return cases


@pytest.mark.parametrize("dump", _planned_runs())
def test_one_answer_the_fix_and_the_bucket_plan_agree(dump):
    """A plan is attached where the fix asks for a change; it must never call the sizes expected there (issue 30:
    'pad it to a fixed length' beside a plan that said 'expected'), and a fix called expected carries no plan."""
    from hlodiff.diff.fix_rules import EXPECTED

    doc = cli_json("explain-recompile", str(dump))
    planned = [c for r in doc["recompilations"] for c in r["causes"] if c.get("plan")]
    for cause in planned:
        assert (cause["plan"]["kind"] == "expected") == (cause["fix_rule"] in EXPECTED), (cause["plan"]["kind"],
                                                                                          cause["fix_rule"])


def test_an_index_that_takes_0_1_and_2_is_not_called_0_or_1():
    """slice_index_backward bakes `step % 3` (0, 1, 2) into the backward's constant: torch_xla's special scalars
    are 0 and 1 only, so a fix saying 'a Python int of 0 or 1 ... other values are passed as device data' is wrong
    there; the constant follows the slice, and its own fix names the int and the index."""
    folder = FIXTURES / "torch_xla" / "slice_index_backward"
    result = _explain(folder, folder / "graphs.hlo.0")
    constants = [c for r in result.recompilations for c in r.causes if c.kind == "constant"]
    assert constants and all("0 or 1" not in c.fix and c.fix_rule != "constant_int_special" for c in constants)
    assert result.headline.causes[0].kind == "attribute"


def test_a_cycle_seen_once_and_begun_again_is_periodic():
    """offset_index bakes `step % 3` (A,B,C,A,B): a cycle of three, seen once in full and begun again, is told as
    periodic with its period, not as sizes 'in no fixed order' (issue 30: a queue pointer that wraps)."""
    from hlodiff.explain.patterns import pattern_of

    folder = FIXTURES / "torch_xla" / "offset_index"
    result = _explain(folder, folder / "graphs.hlo.0")
    (family,) = [f for f in result.families if len(f.compiled) > 1]
    p = pattern_of(family, result.recompilations, result.families)
    assert (p.name, p.period) == ("periodic", 3)
    assert "no fixed order" not in result.summary


def test_one_cast_for_one_story():
    """Every recompilation of a dtype story casts back to the type the run began with (issue 30: x.int() for one
    recompilation and x.long() for the next of one problem): the family's first type decides the cast."""
    from hlodiff.diff.fixes import FixContext, decide

    folder = FIXTURES / "torch_xla" / "dtype_input"
    cause = next(c for r in _explain(folder, folder / "graphs.hlo.0").recompilations for c in r.causes
                 if c.kind == "dtype")
    assert "x.long()" in decide(cause, FixContext(producer="torch_xla", first_type="s64")).text
    assert "x.int()" in decide(cause, FixContext(producer="torch_xla", first_type="s32")).text


def test_the_cast_is_the_type_the_program_converts_the_input_to_on_its_own_line():
    """Round 5 (fixtures/scenarios/torch_xla/noise_aug_float64): float64 NumPy noise makes most batches f64, and
    `.to(dev).float()` converts them on the device at the same line; the run starts with an f64 batch, but the
    program works in f32: the cast is x.float(), never x.double(). Look-alikes keep the first type: dtype_input
    (no device cast: x.float() from its first type) and bf16_switch (a switch that stays)."""
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios" / "torch_xla" / "noise_aug_float64"), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "dtype" and "x.float()" in head["fix"] and "double" not in head["fix"]
    for name, cast in (("dtype_input", "x.float()"), ("bf16_switch", "torch.bfloat16")):
        doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / name / "graphs.hlo.0"), codes=(0, 1))
        assert cast in doc["headline"]["fix"], name



def test_a_jax_log_that_cannot_be_matched_is_not_asked_for_again(tmp_path):
    """JAX's log captured with JAX_EXPLAIN_CACHE_MISSES=1 alone has no 'Compiling jit(...)' lines; where its misses
    cannot be matched to the dumped modules by function name either (here its second miss is gone: one miss of
    `step` for two jit_step modules), the fix must not tell the user to rerun with the flag they already used, but
    say what matching needs (look_kwarg's log, its Compiling lines left out)."""
    import shutil

    folder = FIXTURES / "jax" / "look_kwarg"
    shutil.copytree(folder / "dump", tmp_path / "dump")
    text = "".join(l for l in (folder / "stderr.log").read_text().splitlines(keepends=True) if "Compiling" not in l)
    second = text.index("TRACING CACHE MISS", 1)
    (tmp_path / "explain.log").write_text(text[:second])
    warnings: list = []
    result = explained(discover([str(tmp_path / "dump")], None, None, str(tmp_path / "explain.log")), warnings)
    head = result.headline.causes[0]
    assert head.fix_rule == "cache_key_log_unjoined" and "JAX_LOG_COMPILES=1" in head.fix, head.fix
    assert any("1 cache miss of step but 2 jit_step modules" in w.message for w in warnings), warnings


def test_a_jax_log_without_compile_lines_joins_by_function_name(tmp_path):
    """The same log whole (both misses of `step`, no Compiling line) joins by the function's name: the headline is
    JAX's reason, as with the compile lines, and a note says how it was joined (shared jax_weak_type's capture)."""
    import shutil

    folder = FIXTURES / "jax" / "look_kwarg"
    shutil.copytree(folder / "dump", tmp_path / "dump")
    text = "".join(l for l in (folder / "stderr.log").read_text().splitlines(keepends=True) if "Compiling" not in l)
    (tmp_path / "explain.log").write_text(text)
    warnings: list = []
    alone = explained(discover([str(tmp_path / "dump")], None, None, str(tmp_path / "explain.log")), warnings)
    full = explained(discover([str(folder / "dump")], None, None, str(folder / "stderr.log")), [])
    head, want = alone.headline.causes[0], full.headline.causes[0]
    assert head.fix_rule != "cache_key_log_unjoined"
    assert (head.kind, head.fix_rule, head.fix) == (want.kind, want.fix_rule, want.fix)
    assert [str(x) for x in head.locations] == [str(x) for x in want.locations]
    assert any("joined to the dumped modules by function name (step: 2 misses" in str(w) and ": note: " in str(w)
               for w in warnings), warnings
    assert "rerun with JAX_EXPLAIN_CACHE_MISSES=1" not in head.fix
