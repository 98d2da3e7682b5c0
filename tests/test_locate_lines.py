"""Lines where the value is made or enters the graph, then where it is used (issue 19, item 3), on real fixtures:
each test reads the located line from the fixture's truth.json."""

from __future__ import annotations



from helpers import cli, cli_json, truth_of
from conftest import FIXTURES


def test_reordered_outputs_take_the_proto_stacks_of_their_defining_instructions():
    """Metric callbacks run in a shuffled order: a pure reordering whose HLO text names only torch's lines. The
    protos' stacks of the moved outputs meet at the line that runs the callbacks; that line comes first, never
    "no captured stack reaches your code"."""
    truth = truth_of("torch_xla", "metric_callbacks_order")
    dump = FIXTURES / "torch_xla" / "metric_callbacks_order" / "dump"
    text = next(dump.glob("module_0003*before_optimizations.txt")).read_text()
    assert f'{truth["user_file"]}" source_line={truth["user_line"]}' not in text  # the text alone cannot say it
    doc = cli_json("explain-recompile", str(dump), codes=(0, 1))
    assert len(doc["recompilations"]) == len(truth["compilations"]) - 1
    for recompilation in doc["recompilations"]:
        [cause] = [c for c in recompilation["causes"] if c["kind"] == truth["cause"]]
        first = cause["locations"][0]
        assert first["file"].endswith("/" + truth["user_file"]) and first["line"] == truth["user_line"]
        assert not cause.get("hint")


def _project_copy(tmp_path, fixture, project):
    """The fixture's run with its neutral ``/home/user/project`` paths pointing at ``project`` (where the script
    really is), so the callers' source is on disk as on the user's machine. The protos keep the neutral paths, so
    they are left out (the text dumps hold the same stack tables)."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(fixture, run)
    for path in run.rglob("*"):
        if path.suffix == ".pb":
            path.unlink()
        elif path.is_file() and path.name != "truth.json":
            text = path.read_text(errors="replace")
            if "/home/user/project" in text:
                path.write_text(text.replace("/home/user/project", str(project)))
    return run


def _lead(doc: dict, kind: str) -> dict:
    [recompilation] = doc["recompilations"]
    cause = recompilation["causes"][0]
    assert cause["kind"] == kind
    return cause


def _lines(cause: dict) -> list[tuple[str, int]]:
    return [(loc["file"].rsplit("/", 1)[-1], loc["line"]) for loc in cause["locations"]]


def test_a_jax_argument_is_located_at_the_call_before_the_use_inside_jit():
    """`labels` turns int32 -> float32 outside jit: JAX's call site comes first, the first line inside jit that
    reads the argument after it (the dumped script's source is not on this machine, as usual)."""
    truth = truth_of("jax", "arg_dtype_outside")
    doc = cli_json("explain-recompile", str(FIXTURES / "jax" / "arg_dtype_outside"), codes=(0, 1))
    cause = _lead(doc, truth["cause"])
    name = truth["user_file"]
    assert _lines(cause)[:2] == [(name, truth["user_line"]), (name, truth["use_line"])]
    assert cause["locations"][0]["function"] == "train_step"
    assert cause["stacks"][0][0]["line"] == truth["outer_line"]  # the call's own caller: the loop


def test_the_line_that_made_a_jax_argument_comes_first_when_the_source_is_on_disk(tmp_path):
    """With the script on disk, the line that made the float labels (`labels = labels * np.float32(1.0)`) leads:
    it is the line to change; the call and the use follow."""
    truth = truth_of("jax", "arg_dtype_outside")
    run = _project_copy(tmp_path, FIXTURES / "jax" / "arg_dtype_outside", FIXTURES / "jax")
    cause = _lead(cli_json("explain-recompile", str(run), codes=(0, 1)), truth["cause"])
    name = truth["user_file"]
    assert _lines(cause)[:3] == [(name, truth["made_line"]), (name, truth["user_line"]), (name, truth["use_line"])]


def test_without_the_jax_log_the_call_comes_from_the_stack(tmp_path):
    """Only the dump (no stderr.log): the call is the first frame outside the jitted function on the use's
    stack."""
    import shutil

    truth = truth_of("jax", "arg_dtype_outside")
    shutil.copytree(FIXTURES / "jax" / "arg_dtype_outside" / "dump", tmp_path / "dump")
    cause = _lead(cli_json("explain-recompile", str(tmp_path / "dump"), codes=(0, 1)), truth["cause"])
    name = truth["user_file"]
    assert _lines(cause)[:2] == [(name, truth["user_line"]), (name, truth["use_line"])]


def test_argument_made_at_reads_the_callers_source():
    from hlodiff.dumps.python_source import argument_made_at

    truth = truth_of("jax", "arg_dtype_outside")
    script = str(FIXTURES / "jax" / "arg_dtype_outside.py")
    call = truth["user_line"]
    assert argument_made_at(script, call, "loss_fn", "labels") == truth["made_line"]  # the rebinding in the `if`
    assert argument_made_at(script, call, "loss_fn", "x") == truth["made_line"] - 2  # `x, labels = load_batch()`
    assert argument_made_at(script, call, "loss_fn", "w") is None  # a module global: not made in train_step
    assert argument_made_at(script, truth["outer_line"], "train_step", "step") is not None  # the `for` target
    assert argument_made_at("/nonexistent/train.py", call, "loss_fn", "labels") is None


def test_argument_made_at_keyword_and_expression_arguments(tmp_path):
    from hlodiff.dumps.python_source import argument_made_at

    src = tmp_path / "train.py"
    src.write_text("def run(f, batch):\n"
                   "    y = batch['y']\n"
                   "    y = y.astype('float32')\n"
                   "    f(batch['x'], labels=y)\n"
                   "    return f(batch['x'] * 2, y)\n")
    assert argument_made_at(str(src), 4, "f", "labels") == 3
    assert argument_made_at(str(src), 5, "f", "x", ["x", "labels"]) is None  # made on the call's own line
    assert argument_made_at(str(src), 5, "f", "labels", ["x", "labels"]) == 3


def test_a_python_int_slice_index_is_not_located_at_loss_backward():
    """`h[:, step % 3]` on the model's output: the gradient's update-slice carries the index as a constant traced
    by `select_backward` (no user frame; the gradient tensors were made at `loss.backward()`). Every cause is
    located at the indexing line, from the live-tensor report and from the protos alike."""
    truth = truth_of("torch_xla", "slice_index_backward")
    run = FIXTURES / "torch_xla" / "slice_index_backward"
    for source in (run, run / "dump"):
        doc = cli_json("explain-recompile", str(source), codes=(0, 1))
        assert len(doc["recompilations"]) == len(truth["compilations"]) - 1
        for recompilation in doc["recompilations"]:
            for cause in recompilation["causes"]:
                lines = [loc["line"] for loc in cause["locations"]]
                assert lines and lines[0] == truth["user_line"], (source, cause["kind"], lines)
                assert truth["backward_line"] not in lines


def test_a_save_file_takes_the_stacks_of_the_xla_dump_protos_beside_it(tmp_path):
    """graphs.hlo.0 and the XLA dump of the same run, no live-tensor report: the save file's HLO names only torch's
    lines, the dump's protos (the same modules, instruction for instruction) hold the user's. The protos of
    another run are not taken."""
    import shutil

    truth = truth_of("torch_xla", "grad_norm_order")
    folder = FIXTURES / "torch_xla" / "grad_norm_order"
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(folder / "graphs.hlo.0", run / "graphs.hlo.0")
    alone = _lead(cli_json("explain-recompile", str(run / "graphs.hlo.0"), codes=(0, 1)), truth["cause"])
    assert alone["locations"] == [] and alone["hint"]
    shutil.copytree(FIXTURES / "torch_xla" / "slice_index_backward" / "dump", run / "dump")  # another run's
    doc = cli_json("explain-recompile", str(run / "graphs.hlo.0"), codes=(0, 1))
    assert _lead(doc, truth["cause"])["locations"] == []
    shutil.rmtree(run / "dump")
    shutil.copytree(folder / "dump", run / "dump")
    cause = _lead(cli_json("explain-recompile", str(run / "graphs.hlo.0"), codes=(0, 1)), truth["cause"])
    assert _lines(cause)[0] == (truth["user_file"], truth["user_line"]) and not cause["hint"]


def test_stacks_meet_where_one_line_dispatches_to_several_functions():
    """The meeting line is a line that called different functions for the reordered values (callbacks), never a
    `main()` they both merely ran under."""
    from hlodiff.explain.locate import meeting_frames
    from hlodiff.hlo.model import SourceFrame as F

    run = "/home/user/project/run.py"
    main_line, loop = F(run, 90, "<module>"), F(run, 40, "main")
    mse, l1 = F(run, 10, "mse"), F(run, 14, "l1")
    assert meeting_frames([[mse, loop, main_line], [l1, loop, main_line]]) == [loop, mse, l1]
    train, evaluate = F(run, 50, "main"), F(run, 52, "main")
    assert meeting_frames([[F(run, 20, "step"), train, main_line], [F(run, 30, "ev"), evaluate, main_line]]) == \
        [F(run, 20, "step"), F(run, 30, "ev")]
    assert meeting_frames([[mse, loop, main_line]], others=[[l1, loop, main_line]]) == [loop, mse]


def test_source_map_points_a_copied_capture_at_the_sources_where_they_are_now():
    """The capture names /home/user/project/...; with --source-map to where the script is now, the line that made
    the argument leads, as when the capture is read on the machine that made it. Without it, a hint names the
    missing source and the option."""
    truth = truth_of("jax", "arg_dtype_outside")
    run = str(FIXTURES / "jax" / "arg_dtype_outside")
    name = truth["user_file"]
    mapped = cli_json("explain-recompile", run, "--source-map", f"/home/user/project={FIXTURES / 'jax'}",
                      codes=(0, 1))
    assert _lines(_lead(mapped, truth["cause"]))[:3] == [(name, truth["made_line"]), (name, truth["user_line"]),
                                                         (name, truth["use_line"])]
    assert not any("source not found" in h for h in mapped["hints"])
    plain = cli_json("explain-recompile", run, codes=(0, 1))
    assert _lines(_lead(plain, truth["cause"]))[0] == (name, truth["user_line"])
    assert any(f"/home/user/project/{name}" in h and "--source-map /home/user/project=DIR" in h
               for h in plain["hints"]), plain["hints"]


def test_a_source_map_without_new_is_a_usage_error():
    result = cli("explain-recompile", str(FIXTURES / "jax" / "arg_dtype_outside"), "--source-map", "/home/user",
                 codes=(2,))
    assert "--source-map takes OLD=NEW" in result.stderr and len(result.stderr.strip().splitlines()) == 1
