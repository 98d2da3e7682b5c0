"""What round 3 of the unseen-runs work changed (docs/accuracy.md, "Round 3"), each shown on the real run it was
made for and on the real look-alikes that share its evidence.

- ``carried_total_restart``: a running value (a total, a count) restarted from 0.0 / torch.zeros at the top of a
  loop is a scalar that is a constant (or absent) on the loop's first step and device data summed into a scalar
  output on the next ones: expected, each graph compiled once. A learning rate or a loss weight of 0 (multiplied,
  made in an optimizer) shares the "0 baked here, data there" evidence and keeps its own row.
- ``record`` under ``torch_xla.launch`` on CPU devices that the program itself asked for (CPU_NUM_DEVICES set
  inside the script): the worker captures each device's save file, so the ranks are parted.
- a multi-rank ``--json`` document carries a headline: the first diverging rank's.

Inputs: real captures only (fixtures/scenarios/<engine>/<name>/, fixtures/<engine>/<fixture>/)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from explain_helpers import explain_capture as _doc, fix_rule_set as _rules
from helpers import capture_argv as _argv, cli_json
from hlodiff.capture import per_process

SCEN = FIXTURES / "scenarios"


@pytest.mark.parametrize("path", ["scenarios/torch_xla/eval_epoch_control", "scenarios/torch_xla/running_loss_epoch"])
def test_a_running_total_restarted_each_loop_is_expected(path):
    doc = _doc(path)
    head = doc["headline"]
    assert head is not None and head["kind"] in ("constant", "inputs")
    assert head["fix"].startswith("expected: a running value")
    assert "0 or 1" not in head["fix"] and "gradient accumulation" not in head["fix"]


@pytest.mark.parametrize("path", [
    "torch_xla/lr_warmup_zero", "torch_xla/lr_zero_one", "scenarios/torch_xla/cosine_to_zero",
    "scenarios/torch_xla/label_smoothing_on", "scenarios/torch_xla/dropout_ramp", "torch_xla/unsynced_init",
    "torch_xla/momentum_warmup", "scenarios/torch_xla/lazy_linear_control", "scenarios/torch_xla/onecycle_adam_control",
    "scenarios/torch_xla/review_grad_accum", "scenarios/torch_xla/accum_tail", "scenarios/torch_xla/bn_cumulative",
    "torch_xla/metric_late",
])
def test_look_alikes_of_a_restarted_total_keep_their_rows(path):
    """A 0 baked where other steps pass data (a learning rate, smoothing, a dropout p), a scalar input appearing
    after a warm-up or an accumulation: none is a running value summed into a scalar output."""
    assert "carried_total_restart" not in _rules(_doc(path))


def test_the_exit_status_of_a_restarted_total_is_zero():
    from helpers import cli

    for path in ("scenarios/torch_xla/eval_epoch_control", "scenarios/torch_xla/running_loss_epoch"):
        assert cli("explain-recompile", *_argv(path), codes=(0, 1)).exit_code == 0, path


def _head_rule(path: str) -> str | None:
    doc = _doc(path)
    head = doc.get("headline")
    for r in doc["recompilations"]:
        if head and r["graph"] == head.get("graph") and r["causes"]:
            return r["causes"][0]["fix_rule"]
    return None


def test_weights_made_in_the_first_step_are_a_module_warm_up():
    """lazy_linear_control: LazyLinear's dry run puts the weights' initialization (torch.nn.init) into step 0's
    graph; it was told 'the optimizer creates its state on the first step' (plain SGD has none)."""
    assert _head_rule("scenarios/torch_xla/lazy_linear_control") == "inputs_module_warmup"


@pytest.mark.parametrize("path", ["torch_xla/momentum_warmup", "scenarios/torch_xla/onecycle_adam_control",
                                  "torch_xla/record_adamw", "torch_xla/adamw_split", "torch_xla/unsynced_init"])
def test_optimizer_state_and_unsynced_tensors_keep_their_warm_up(path):
    assert "inputs_module_warmup" not in _rules(_doc(path))


# -- record: CPU devices as threads, asked for by the program itself ------------------------------------------------

def test_a_launch_worker_with_device_threads_writes_a_save_file_per_device(tmp_path):
    root = str(tmp_path / "run")
    env = {per_process.ROOT_ENV: root, per_process.OWNER_ENV: "7", per_process.DIR_ENV: "",
           "PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": "2"}
    assert per_process.redirect(env, pid=42, arm=False) == "pid42"
    assert env["XLA_SAVE_TENSORS_FILE"] == f"{root}/pid42/graphs.hlo" and env["XLA_SAVE_TENSORS_FMT"] == "hlo"


@pytest.mark.parametrize("extra", [
    {"CPU_NUM_DEVICES": "1"},  # one device: nothing to part
    {"PJRT_DEVICE": "TPU"},  # real devices are processes of their own
    {"XLA_SAVE_TENSORS_FILE": "/mine/graphs.hlo"},  # the user's own save file stays
])
def test_a_worker_without_device_threads_keeps_its_capture(tmp_path, extra):
    root = str(tmp_path / "run")
    env = {per_process.ROOT_ENV: root, per_process.OWNER_ENV: "7", per_process.DIR_ENV: "",
           "PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": "2", **extra}
    before = env.get("XLA_SAVE_TENSORS_FILE")
    per_process.redirect(env, pid=42, arm=False)
    assert env.get("XLA_SAVE_TENSORS_FILE") == before


def test_the_first_process_is_left_to_record():
    """The program's own process (the launcher) is the run folder; record itself sets the save file when
    CPU_NUM_DEVICES is in its environment."""
    env = {per_process.ROOT_ENV: "/run", "PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": "2"}
    assert per_process.redirect(env, pid=1, arm=False) == ""
    assert "XLA_SAVE_TENSORS_FILE" not in env


def test_the_save_file_name_is_records():
    from hlodiff.capture.env import SAVE_BASENAME

    assert per_process.SAVE_BASENAME == SAVE_BASENAME


def test_make_folder_writes_the_save_file_capture(tmp_path):
    import json

    root = tmp_path / "run"
    root.mkdir()
    (root / per_process.MANIFEST_NAME).write_text(json.dumps({"capture": "executions", "xla_dump": "xla_dump"}))
    per_process.make_folder(str(root), str(root / "pid9"), {"pid": 9, "rank": None, "device_threads": 2})
    doc = json.loads((root / "pid9" / per_process.MANIFEST_NAME).read_text())
    assert doc["capture"] == "save_tensors" and doc["save_tensors_base"] == "graphs.hlo" and doc["xla_dump"] is None
    assert "device_threads" not in doc["process"]


def test_uneven_shards_on_two_device_threads_are_told_rank_by_rank():
    """spawn_uneven_shard: rank 1's last batch of 1 row is its own graph; recorded with CPU_NUM_DEVICES set by the
    program, the two devices are two ranks and the headline is rank 1's short last batch (it was: both devices'
    graphs read as one run, 'expected: one graph per bucket', exit 0)."""
    doc = _doc("scenarios/torch_xla/spawn_uneven_shard")
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    head = doc["headline"]
    assert head["rank"] == 1 and head["kind"] == "shape" and "expected" not in head["fix"]
    assert head["location"]["line"] == 27


def test_a_job_where_nothing_recompiled_has_no_headline():
    doc = cli_json("explain-recompile", str(FIXTURES / "jax" / "ranks_steady_2p"), codes=(0, 1))
    assert "ranks" in doc and doc["headline"] is None


# -- the line of an input grown by concatenation -------------------------------------------------------------------

def _head_line(path: str) -> tuple[str, int] | None:
    loc = (_doc(path)["headline"] or {}).get("location") or {}
    return (loc["file"].rsplit("/", 1)[-1], loc["line"]) if loc else None


def test_ids_grown_by_cat_are_placed_at_the_cat():
    """hf_generate_no_cache: input_ids one token longer every step; the graph reads them in the model's forward
    (line 19, told first before) and grows them with torch.cat (line 31), the line to change."""
    assert _head_line("scenarios/torch_xla/hf_generate_no_cache") == ("hf_generate_no_cache.py", 31)


@pytest.mark.parametrize("fixture", ["kv_cache", "batch_shape"])
def test_a_cache_grown_by_cat_and_a_batch_without_one_keep_their_lines(fixture):
    """kv_cache's shape was already told at its torch.cat (line 34); batch_shape's last batch has no concatenation
    and keeps the line that made it."""
    from helpers import truth_of

    truth = truth_of("torch_xla", fixture)
    assert _head_line(f"torch_xla/{fixture}") == (truth["user_file"], truth["user_line"])
