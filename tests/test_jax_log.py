"""JAX's own account of its recompilations (JAX_EXPLAIN_CACHE_MISSES=1, JAX_LOG_COMPILES=1), read from the stderr
of real JAX 0.10.2 runs (fixtures/jax/*/stderr.log, see fixtures/README.md), joined to the dumped modules, and
found beside a dump by content."""

from __future__ import annotations

import json

import pytest

from helpers import cli, cli_json, truth_of
from hlodiff.dumps.jax_log import join_modules, module_name, read_jax_log
from hlodiff.dumps.run_folder import discover
from hlodiff.errors import InputWarning

from conftest import FIXTURES

JAX = FIXTURES / "jax"


def _modules(dump) -> list[str]:
    return [p.name.split(".")[1] for p in sorted(dump.glob("module_*.before_optimizations.txt"))]


@pytest.mark.parametrize("scenario,kind,argument,now,before", [
    ("weak_type", "weak_type", "scale", "f32[]{weak_type=False}", "f32[]{weak_type=True}"),
    ("static_argument", "static_argument", "[1]['log_every']", "100", "10"),
    ("user_project/run", "input_types", "x", "f32[2,8]", "f32[4,8]"),
])
def test_cache_miss_reasons_with_the_users_line(scenario, kind, argument, now, before):
    truth = truth_of(JAX / scenario)
    warnings: list[InputWarning] = []
    log = read_jax_log(str(JAX / scenario / "stderr.log"), warnings)
    assert warnings == []
    assert [c.ordinal for c in log.compilations] == [0, 1] == list(range(len(truth["compilations"])))
    first, second = log.compilations
    assert first.cache_miss.kind == "never_seen" and first.cache_miss.defined_at.line is not None
    miss = second.cache_miss
    assert miss.kind == kind
    [reason] = miss.reasons
    assert (reason.argument, reason.now, reason.before) == (argument, now, before)
    assert reason.text in miss.text and miss.text.startswith("TRACING CACHE MISS at ")
    assert miss.call_site.file.endswith("/" + truth["user_file"]) and miss.call_site.line == truth["user_line"]
    assert miss.function == first.function and second.module_name == _modules(JAX / scenario / "dump")[1]


def test_donation_change_compiles_without_an_explanation():
    log = read_jax_log(str(JAX / "donate_toggle" / "stderr.log"))
    assert [c.function for c in log.compilations] == ["update", "update"]
    assert log.compilations[0].cache_miss.kind == "never_seen"
    assert log.compilations[1].cache_miss is None  # JAX prints nothing for a donate_argnums change


def test_join_modules_pairs_the_nth_module_with_the_nth_compilation():
    log = read_jax_log(str(JAX / "recompile_shape" / "jax_log.txt"))  # logging-prefixed format
    joined = join_modules(log, _modules(JAX / "recompile_shape" / "dump"))
    assert [c.cache_miss.kind for c in joined] == ["never_seen", "input_types", "static_argument"]
    assert [c.cache_miss.call_site.line for c in joined[1:]] == \
        [r["user_line"] for r in truth_of(JAX / "recompile_shape")["recompiles"]]


def test_a_log_of_another_run_joins_nothing_and_says_so():
    log = read_jax_log(str(JAX / "weak_type" / "stderr.log"))
    warnings: list[InputWarning] = []
    assert join_modules(log, _modules(JAX / "donate_toggle" / "dump"), warnings) == [None, None]
    [w] = warnings
    assert "another run" in w.message and "jit_step" in w.message


def test_a_log_of_another_run_sharing_jax_helpers_still_says_so():
    """Every JAX run compiles helpers (jit_convert_element_type): a join of those alone must not hide that the
    run's own functions (jit_f here, the log's jit_step) joined nothing."""
    log = read_jax_log(str(JAX / "ranks_static_2p" / "rank1" / "jax_log.txt"))
    modules = _modules(JAX / "debug_print" / "dump")
    warnings: list[InputWarning] = []
    joined = join_modules(log, modules, warnings)
    assert any(joined) and all(c is None for n, c in zip(modules, joined) if n == "jit_f")
    [w] = warnings
    assert "another run" in w.message and "jit_step" in w.message and "jit_f joined nothing" in w.message
    assert w.line == next(c.line for c in log.compilations if c.module_name in ("jit_step", "jit__identity_fn"))


def test_own_log_missing_a_compile_line_is_no_other_run():
    """compile_options: jax.jit(f, compiler_options=...) compiles again without a second compile line."""
    log = read_jax_log(str(JAX / "compile_options" / "stderr.log"))
    warnings: list[InputWarning] = []
    assert join_modules(log, _modules(JAX / "compile_options" / "dump"), warnings)[1] is None
    assert warnings == []


def test_cache_misses_without_compile_lines_join_by_the_functions_name(tmp_path):
    """JAX_EXPLAIN_CACHE_MISSES=1 without JAX_LOG_COMPILES=1 prints the misses only (the compile lines removed
    from a real log, as that run would print it): one function `step`, two misses, two jit_step modules, so each
    module gets the miss its compile line would have given it, and a note says the join was by name (shared
    jax_weak_type's capture); with a miss gone the counts differ and the warning says nothing joined, and why."""
    text = (JAX / "static_argument" / "stderr.log").read_text()
    path = tmp_path / "stderr.log"
    misses = "".join(line for line in text.splitlines(keepends=True)
                     if "Compiling " not in line and "Finished " not in line)
    path.write_text(misses)
    modules = _modules(JAX / "static_argument" / "dump")
    warnings: list[InputWarning] = []
    log = read_jax_log(str(path), warnings)
    assert log.cache_misses and not log.compilations and warnings == []
    by_lines = join_modules(read_jax_log(str(JAX / "static_argument" / "stderr.log")), modules)
    by_name = join_modules(log, modules, warnings)
    assert [c.cache_miss.text for c in by_name] == [c.cache_miss.text for c in by_lines]
    [w] = warnings
    assert ": note: " in str(w) and "by function name (step: 2 misses and 2 jit_step modules)" in w.message
    first = misses.index("TRACING CACHE MISS")
    path.write_text(misses[:first] + misses[misses.index("TRACING CACHE MISS", first + 1):])
    warnings = []
    assert join_modules(read_jax_log(str(path), warnings), modules, warnings) == [None, None]
    [w] = warnings
    assert "JAX_LOG_COMPILES=1" in w.message and "1 cache miss of step but 2 jit_step modules" in w.message


def test_jax_log_option_refuses_a_file_that_is_no_jax_log():
    """A torch_xla stdout log given as --jax-log: one line, exit 2, like --tensors-report with a wrong file."""
    torch_log = FIXTURES / "torch_xla" / "lr_zero_one" / "stdout.log"
    for dump in (JAX / "weak_type" / "dump", FIXTURES / "torch_xla" / "lr_zero_one" / "graphs.hlo.0"):
        out = cli("explain-recompile", str(dump), "--jax-log", str(torch_log))
        assert out.exit_code == 2, out.output
        assert out.output == f"{torch_log}:1: error: not a JAX log: no 'TRACING CACHE MISS' or 'Compiling " \
                             "jit(...)' line (capture stderr with JAX_EXPLAIN_CACHE_MISSES=1 JAX_LOG_COMPILES=1)\n"


def test_unrelated_text_is_a_warning(tmp_path):
    path = tmp_path / "notes.log"
    path.write_text("epoch 1 loss 0.3\nsaving checkpoint\n")
    warnings: list[InputWarning] = []
    log = read_jax_log(str(path), warnings)
    assert log.compilations == [] and log.cache_misses == []
    [w] = warnings
    assert "not a JAX_EXPLAIN_CACHE_MISSES" in w.message


def test_module_names_follow_jax():
    assert module_name("jit(step)") == "jit_step"
    assert module_name("jit(<lambda>)") == "jit__lambda"  # as in fixtures/jax/other_reasons/dump


def test_jax_log_found_beside_a_dump_folder_by_content():
    inputs = discover([str(JAX / "weak_type" / "dump")], None, None)
    assert inputs.jax_logs == [str(JAX / "weak_type" / "stderr.log")]
    given = discover([str(JAX / "weak_type" / "dump")], None, None, str(JAX / "static_argument" / "stderr.log"))
    assert given.jax_logs == [str(JAX / "static_argument" / "stderr.log")]


def test_cli_lists_the_jax_log_in_json_inputs():
    out = cli("explain-recompile", str(JAX / "weak_type" / "dump"),
                                    "--jax-log", str(JAX / "weak_type" / "stderr.log"), "--json")
    assert out.exit_code == 1, out.output
    doc = json.loads(out.output)
    assert doc["inputs"]["jax_logs"] == [str(JAX / "weak_type" / "stderr.log")]


def test_jax_other_reasons_sharding_redefinition_and_context():
    """fixtures/jax/other_reasons: what JAX 0.10.2 prints for a sharding change, a jit re-created on every call,
    and a config context, on 4 CPU devices; every compilation joins its dumped module."""
    truth = truth_of(JAX / "other_reasons")
    warnings: list[InputWarning] = []
    log = read_jax_log(str(JAX / "other_reasons" / "stderr.log"), warnings)
    joined = join_modules(log, _modules(JAX / "other_reasons" / "dump"), warnings)
    assert warnings == [] and all(joined) and len(joined) == len(truth["compilations"])
    by_call = {r["call"]: r for r in truth["recompiles"]}
    for call, compilation in enumerate(joined):
        miss = compilation.cache_miss
        if call in by_call:
            assert miss.kind == by_call[call]["cause"]
            assert miss.call_site.line == by_call[call]["user_line"]
        else:
            assert miss.kind == "never_seen"
    sharding = joined[1].cache_miss.reasons[0]
    assert (sharding.argument, sharding.now, sharding.before) == \
        ("x", "f32[4,4@d]({Explicit: ('d',)})", "f32[4@d,4]({Explicit: ('d',)})")
    assert [r.kind for r in joined[3].cache_miss.reasons] == ["redefined_function", "never_seen"]
    assert joined[3].function == "<lambda>" and joined[3].module_name == "jit__lambda"
    [context] = joined[4].cache_miss.reasons
    assert (context.argument, context.now, context.before) == ("jax_default_matmul_precision", "highest", "None")


def test_modules_named_with_or_without_jax_trailing_underscore_join_their_compilations():
    """fixtures/jax/recreated_jit: JAX 0.10.2 dumps `jit(<lambda>)` as `jit__lambda`; older JAX kept the trailing
    underscore (`jit__lambda_`, as in the corpus' diffrax dump). Both spellings join the log's compilations."""
    log = read_jax_log(str(JAX / "recreated_jit" / "stderr.log"), [])
    modules = _modules(JAX / "recreated_jit" / "dump")
    assert set(modules) == {"jit__lambda"}
    for names in (modules, [m + "_" for m in modules]):
        joined = join_modules(log, names)
        assert all(joined) and [c.function for c in joined] == ["<lambda>"] * len(modules)


def test_a_run_folder_stands_for_the_dump_inside_it_and_its_logs_are_read():
    """Users point at the folder their script wrote (`--xla_dump_to=dump` and the stderr beside it), not at the
    dump: explain-recompile of fixtures/jax/weak_type reads weak_type/dump and weak_type/stderr.log, and says
    exactly what it says of the dump folder itself; inspect and compare take the run folder too."""
    run_dir = JAX / "weak_type"
    inputs = discover([str(run_dir)], None, None)
    assert inputs.paths == [str(run_dir / "dump")] and inputs.jax_logs == [str(run_dir / "stderr.log")]
    by_run = cli("explain-recompile", str(run_dir))
    by_dump = cli("explain-recompile", str(run_dir / "dump"))
    assert by_run.exit_code == by_dump.exit_code == 1
    assert by_run.output == by_dump.output and "(weak_type at weak_type.py:" in by_run.output
    listed = cli("inspect", str(run_dir), "--json")
    assert listed.exit_code == 0 and len(json.loads(listed.output)["graphs"]) == 2
    pair = cli("compare", f"{run_dir}#0", f"{run_dir}#1", "--json")
    assert pair.exit_code in (0, 1) and json.loads(pair.output)["left_ref"] == f"{run_dir / 'dump'}#0"


def test_a_recording_inside_a_run_folder_is_read_and_two_dumps_are_not_guessed(tmp_path):
    import shutil

    record = FIXTURES / "torch_xla" / "record_adamw"
    out = cli("explain-recompile", str(record), "--json")
    doc = json.loads(out.output)
    assert doc["recompilations"] and doc["unexpected"] == []  # AdamW's warm-up step: recompiled, as expected
    assert out.exit_code == 0, out.output
    read = doc["inputs"]
    assert read["dumps"] == [str(record / "dump")]
    # the manifest names the report and the log; found by name and by content too, each is still read once
    assert read["tensors_reports"] == [str(record / "dump" / "tensors_report.txt")]
    assert read["debug_logs"] == [str(record / "dump" / "pt_xla_debug.log")]
    for name in ("a", "b"):  # two dumps side by side in a folder with no dump of its own: not one run
        shutil.copytree(JAX / "weak_type" / "dump", tmp_path / "runs" / name / "dump")
    assert discover([str(tmp_path / "runs" / "a")], None, None).paths == [str(tmp_path / "runs" / "a" / "dump")]
    from hlodiff.dumps.run_folder import dump_inside

    assert dump_inside(str(tmp_path / "runs")) is None


def test_inspect_names_the_line_that_called_each_jitted_function():
    """JAX's stacks keep the user's frames: a compiled function's trigger is the outermost one its instructions
    share, the call (torch_xla's is the sync line); JAX's helpers with no frame of the user's have none."""
    doc = cli_json("inspect", str(JAX / "weak_type"))
    assert [g["trigger"]["line"] for g in doc["graphs"]] == [31, truth_of(JAX / "weak_type")["user_line"]]
    assert all(g["trigger"]["file"].endswith("weak_type.py") for g in doc["graphs"])


def test_a_long_log_keeps_only_what_can_join_a_dumped_module(tmp_path):
    """Streamed with bounded state: a log repeating a run 5,000 times joins like the run itself, keeping the
    compilations the dump's modules can join (not one object per line or per compilation)."""
    src = (JAX / "weak_type" / "stderr.log").read_text()
    long_log = tmp_path / "stderr.log"
    long_log.write_text(src * 5000)
    modules = _modules(JAX / "weak_type" / "dump")
    wanted = {name: modules.count(name) for name in modules}
    log = read_jax_log(str(long_log), [], wanted)
    assert len(log.compilations) == len(modules) and log.cache_misses == []
    assert log.miss_count == 10_000 and log.first_miss_line == 1
    joined = join_modules(log, modules)
    full = join_modules(read_jax_log(str(JAX / "weak_type" / "stderr.log")), modules)
    assert [(c.cache_miss.kind, c.line) for c in joined] == [(c.cache_miss.kind, c.line) for c in full]
