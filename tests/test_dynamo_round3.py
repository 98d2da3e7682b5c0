"""Dynamo, round 3 (docs/accuracy.md): torch.compile(backend="openxla") runs whose truths were written first
(fixtures/scenarios/dynamo/). Each new reading is checked on the real run whose evidence chooses it and on the real
look-alikes that share that evidence: a module list that grows vs a Python list whose length varies; padded sizes
the user bucketed vs raw sizes (a batch of 4 and 6, lengths 16/24/20); without Dynamo's log, the forward an eval
or no_grad step compiles vs an input that now requires grad; the first step's sync cut by the bridge vs a sync
graph that changes for good."""

from __future__ import annotations

import json
import shutil

import pytest

from explain_helpers import explain_status as _explain
from helpers import FIXTURES
from hlodiff.diff.fix_rules import EXPECTED, RULES_BY_NAME
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.explain.dynamo_log_findings import recompiles_of
from hlodiff.explain.dynamo_types import DynamoRecompile
from hlodiff.explain.dynamo_recompile_fixes import choose_fix
from hlodiff.explain.dynamo_xla import padded_buckets

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _rules(doc: dict) -> set[str]:
    dynamo = doc["dynamo"] or {}
    return {r["fix_rule"] for r in dynamo.get("recompiles", []) + dynamo.get("xla_sizes", [])}


ROWS = {"dynamo_module_container": "dyn_modulelist_grow", "dynamo_shape_buckets": "dyn_bucket_control"}


@pytest.mark.parametrize("row, name", sorted(ROWS.items()))
def test_each_row_heads_the_real_run_whose_evidence_chooses_it(row, name):
    doc, status = _explain(SCENARIOS / name)
    assert row in RULES_BY_NAME and row in EXPECTED
    assert doc["headline"]["fix"].startswith("expected") and row in _rules(doc), doc["summary"]
    assert "as a tensor" not in doc["headline"]["fix"] and "pad or bucket" not in doc["headline"]["fix"]
    truth = json.loads((SCENARIOS / f"{name}.truth.json").read_text())
    assert status in truth["exit"]


def test_a_module_list_s_length_is_read_from_the_form_torch_prints():
    """torch 2.9 prints a ModuleList's failed length as `len(self._modules['blocks']._modules) != 2`: a container
    length of submodules, told as `self.blocks`; a Python list argument (`len(crops) == 2`) stays data."""
    guard = "len(self._modules['blocks']._modules) != 2"
    log = DynamoLog("x", "text", [DynamoCompile("0/0"), DynamoCompile("0/1", "forward",
                                                                       failures=[GuardFailure("0/0", guard)])])
    (r,) = recompiles_of(log)
    assert (r.kind, r.subject, r.fix_rule) == ("guard", "self.blocks", "dynamo_module_container")
    assert "len(self.blocks) was 2" in r.fix
    log.compiles[1].failures = [GuardFailure("0/0", "len(crops) == 2")]
    (r,) = recompiles_of(log)
    assert r.fix_rule == "dynamo_container_length" and not r.expected


def test_a_python_list_whose_length_varies_stays_unexpected():
    doc, status = _explain(SCENARIOS / "dyn_list_len")
    assert status == 1 and _rules(doc) == {"dynamo_container_length"}


@pytest.mark.parametrize("name", ["dyn_auto_dynamic", "dyn_module_logs_only", "dyn_int_shape/record",
                                  "dyn_mark_dynamic/record", "dyn_dynamic_true"])
def test_raw_sizes_are_no_buckets_even_when_they_recur(name):
    """Sizes the data sets (lengths 16/24/20, batches of 4 and 6, an int 4/6/8) recur too, and the graphs alone
    call some of them buckets: only sizes all padded to a multiple of 8 are the user's buckets."""
    doc, status = _explain(SCENARIOS / name)
    assert status == 1 and "dynamo_shape_buckets" not in _rules(doc), doc["summary"]
    assert not doc["headline"]["fix"].startswith("expected")


def _shape(cid: str, expected: int, actual: int, rule: str | None, xla: str = "compiled") -> DynamoRecompile:
    r = DynamoRecompile(cid, "encode", "shape",
                        GuardFailure("0/0", f"tensor 'tokens' size mismatch at index 1. expected {expected}, "
                                            f"actual {actual}"), None, "tokens", xla=xla, difference_rule=rule)
    return r


@pytest.mark.parametrize("members, bucketed", [
    ([(16, 32, "shape_buckets")], True),
    ([(16, 32, "shape_buckets"), (32, 64, "shape_buckets_inner")], True),
    ([(16, 20, "shape_buckets")], False),  # 20 is no padded size
    ([(16, 32, "shape_input")], False),  # the graphs say the sizes do not recur
    ([(16, 32, "shape_buckets"), (32, 64, "shape_input")], False),
])
def test_padded_buckets_needs_every_size_padded_and_the_graphs_to_agree(members, bucketed):
    recompiles = [_shape(f"0/{i + 1}", a, b, rule) for i, (a, b, rule) in enumerate(members)]
    padded_buckets(recompiles)
    for r in recompiles:
        choose_fix(r)
        assert (r.fix_rule == "dynamo_shape_buckets") is bucketed, r.fix
        assert r.expected is bucketed


def test_a_cache_hit_alone_never_makes_buckets():
    r = _shape("0/1", 16, 32, None, xla="cache_hit")
    padded_buckets([r])
    choose_fix(r)
    assert r.fix_rule == "dynamo_shape"


def _without_log(name: str, tmp_path) -> tuple[dict, int]:
    shutil.copytree(SCENARIOS / name / "dump", tmp_path / "dump")
    shutil.copy(SCENARIOS / name / "pt_xla_debug.log", tmp_path / "pt_xla_debug.log")
    return _explain(tmp_path / "dump")


@pytest.mark.parametrize("name", ["dyn_train_eval_dump", "dyn_no_grad_metric"])
def test_without_dynamo_s_log_an_eval_or_no_grad_forward_is_the_bridge_s_own(name, tmp_path):
    """The forward an eval / no_grad step compiles returns fewer values than the training forward (no tensors
    saved for a backward): one graph per mode, not a changed program; exit 0, no headline."""
    doc, status = _without_log(name, tmp_path)
    assert status == 0 and doc["headline"] is None and doc["dynamo"]["no_log"], doc["summary"]


def test_without_dynamo_s_log_an_input_that_now_requires_grad_stays_told(tmp_path):
    """The look-alike: requires_grad_ from step 2 makes the forward return more (what its backward needs): outputs
    added, still a changed program, exit 1."""
    doc, status = _without_log("dyn_requires_grad", tmp_path)
    assert status == 1 and doc["headline"] is not None, doc["summary"]


def test_the_first_step_s_sync_cut_by_the_bridge_is_warm_up_and_a_switched_one_is_not():
    """dyn_train_eval_dump: the optimizer step's sync graph differs on step 0 only (the bridge synced while it
    compiled): listed in first_call_syncs, not unexpected. dyn_attr_switch: the sync graph changes for good when
    the aux head comes in (switched): no first-call sync."""
    doc, status = _explain(SCENARIOS / "dyn_train_eval_dump")
    syncs = doc["dynamo"]["first_call_syncs"]
    assert status == 0 and len(syncs) == 1 and syncs[0] not in doc["unexpected"]
    doc, _ = _explain(SCENARIOS / "dyn_attr_switch")
    assert not doc["dynamo"]["first_call_syncs"]


@pytest.mark.parametrize("name", ["dyn_attr_switch", "dyn_modulelist_grow"])
def test_the_step_around_an_expected_retrace_changes_with_it(name):
    """The aux head switched on, a block added: Dynamo's recompilation is expected, and the optimizer's sync graph
    that now updates the new parameters changed in the same step, for good: expected with it, exit 0, its fix
    says so (not "a value is kept on some steps only")."""
    doc, status = _explain(SCENARIOS / name)
    follows = doc["dynamo"]["follows_expected"]
    assert status == 0 and follows and not doc["unexpected"], doc["summary"]
    causes = [c for r in doc["recompilations"] if r["graph"] in follows for c in r["causes"]]
    assert causes and all(c["fix"].startswith("expected: follows from Dynamo's recompilation 0/")
                          and c["fix_rule"] == "dynamo_step_follows_expected" for c in causes)


def test_the_same_sync_change_beside_an_unexpected_retrace_stays_unexpected(tmp_path):
    """The look-alike: dyn_attr_switch's run with Dynamo's log saying a float changed (self.scale == 0.5) instead
    of the flag: the retrace is unexpected, so the sync graph that changed with it is not excused."""
    shutil.copytree(SCENARIOS / "dyn_attr_switch", tmp_path / "run")
    log = tmp_path / "run" / "stderr.log"
    log.write_text(log.read_text().replace("self.use_aux == False", "self.scale == 0.5"))
    doc, status = _explain(tmp_path / "run")
    assert status == 1 and not doc["dynamo"]["follows_expected"] and doc["unexpected"], doc["summary"]


def test_the_bridge_graph_joined_to_a_dynamo_recompilation_takes_its_fix_from_dynamo():
    """dyn_tensor_or_float: sigma a float, then a tensor input: the joined XLA graph only multiplies in another
    order, which the graphs alone tell as "iterate in one fixed order". It follows from Dynamo's failed guard. The
    look-alike with no Dynamo recompilation behind its XLA sizes (dynamic=True) keeps the graphs' own story."""
    doc, _ = _explain(SCENARIOS / "dyn_tensor_or_float")
    (joined,) = [r for r in doc["recompilations"] if r["graph"] == doc["dynamo"]["recompiles"][0]["difference_graph"]]
    assert all(c["fix"].startswith("follows from Dynamo's recompilation 0/1") for c in joined["causes"])
    assert "fixed order" not in json.dumps(joined)
    doc, _ = _explain(SCENARIOS / "dyn_dynamic_true")
    assert not any("follows from Dynamo" in (c["fix"] or "") for r in doc["recompilations"] for c in r["causes"])
    # a joined graph telling the guard's own kind of change (a new batch size seen from both sides) keeps its story
    doc, _ = _explain(FIXTURES / "torch_xla" / "dynamo_batch")
    joined = {r["difference_graph"] for r in doc["dynamo"]["recompiles"]}
    kept = [c for r in doc["recompilations"] if r["graph"] in joined for c in r["causes"]]
    assert kept and kept[0]["kind"] == "shape" and not kept[0]["fix"].startswith("follows from Dynamo")


def test_a_compiled_optimizer_step_is_not_called_a_module_and_its_cache_hits_are_counted_among_its_recompiles():
    """torch.compile(opt.step) reaches Dynamo through torch's wrapper `inner` as a compiled nn.Module does: the
    summary claims neither; its library frames reach XLA as fewer graphs than Dynamo compiled, and the summary said
    "4 of them" of 2 recompilations."""
    doc, status = _explain(SCENARIOS / "dyn_sched_lr")
    assert status == 1 and "nn.Module" not in doc["summary"], doc["summary"]
    assert doc["dynamo"]["cache_hits"] <= len(doc["dynamo"]["recompiles"]) == 2
    assert "2 of them found the XLA graph compiled already" in doc["summary"]


def test_a_graph_break_inside_torch_s_code_is_placed_at_the_user_s_call():
    """torch.compile(opt.step): Dynamo breaks inside torch (the optimizer's own graph_break(), the scheduler's
    wrapper it skips). The finding's line is the user's call, the library frame is named as what was seen, and the
    fix never asks to move a line of torch's out of the compiled function. Breaks at the user's own print and
    .item() keep their rows and lines."""
    doc, _ = _explain(SCENARIOS / "dyn_sched_lr")
    breaks = doc["dynamo"]["graph_breaks"]
    assert breaks and all(b["fix_rule"] == "dynamo_graph_break_library" for b in breaks)
    assert all(b["location"]["file"].endswith("dyn_sched_lr.py") and b["location"]["line"] == 17 for b in breaks)
    assert "site-packages" not in doc["summary"].split("graph break", 1)[1].split(";")[0]
    assert not any("move it out" in b["fix"] for b in breaks)
    for name, row, line in (("dyn_print_break", "dynamo_graph_break_print", 16),
                            ("dyn_item_branch", "dynamo_graph_break_item", 14)):
        doc, _ = _explain(SCENARIOS / name)
        (b,) = doc["dynamo"]["graph_breaks"]
        assert (b["fix_rule"], b["location"]["line"]) == (row, line)
