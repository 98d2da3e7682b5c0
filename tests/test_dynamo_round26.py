"""Dynamo round 26 (docs/accuracy.md): a number Dynamo guarded that goes to a parameter torch types as a Python
number only (``label_smoothing=smoothing``) is never told "pass it as a tensor"; a few values are one graph each,
expected. One test per row of the keyword table, its look-alikes, and the round's run."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.diff.fixes import choose
from hlodiff.explain.dynamo_number_params import NUMBER_ONLY_PARAMS, number_only_param

SCENARIOS = FIXTURES / "scenarios" / "dynamo"

_CALLS = {  # one real call a user writes for each keyword of the table
    "label_smoothing": "return F.cross_entropy(logits, y, label_smoothing=smoothing)",
    "negative_slope": "h = F.leaky_relu(h, negative_slope=smoothing)",
    "eps": "h = F.layer_norm(h, (16,), eps=smoothing)",
    "momentum": "h = F.batch_norm(h, rm, rv, training=True, momentum=smoothing)",
    "beta": "return F.smooth_l1_loss(pred, y, beta=smoothing)",
    "delta": "return F.huber_loss(pred, y, delta=smoothing)",
    "margin": "return F.margin_ranking_loss(a, b, t, margin=smoothing)",
    "threshold": "h = F.softplus(h, beta=1.0, threshold=smoothing)",
    "alpha": "h = F.elu(h, alpha=smoothing)",
    "p": "h = F.dropout(h, p=smoothing, training=self.training)",
}


def test_the_table_and_its_tests_name_the_same_keywords():
    assert set(_CALLS) == set(NUMBER_ONLY_PARAMS)


@pytest.mark.parametrize("keyword", sorted(NUMBER_ONLY_PARAMS))
def test_each_keyword_of_the_table_is_read_where_the_guarded_number_is_passed_to_it(keyword):
    assert number_only_param("smoothing", _CALLS[keyword]) == keyword


@pytest.mark.parametrize("name, code", [
    ("smoothing", "return F.cross_entropy(logits, y) * smoothing"),                     # arithmetic: a tensor can
    ("smoothing", "return F.cross_entropy(logits, y, label_smoothing=0.1) * smoothing"),  # another value there
    ("smoothing", "loss = loss_fn(x, y, weight=smoothing)"),                              # a keyword not in the table
    ("smoothing", "h = F.dropout(h, p=smoothing_max - smoothing)"),                        # an expression, not the name
    ("smoothing", "y = x * 2  # label_smoothing=smoothing"),                               # a comment
    ("scale", "h = F.elu(h, alpha=scale * 2)"),
    # the table's keyword in a call the row does not name: the user's own or another library's may take a tensor
    ("beta", "kl = self.kl_term(mu, logvar, beta=beta)"),
    ("m", "ema_update(self.ema, self.model, momentum=m)"),
    ("alpha", "loss = sigmoid_focal_loss(logits, y, alpha=alpha, reduction='mean')"),
    ("beta", "loss = F.mse_loss(pred, my_scale(y, beta=beta))"),                          # inner call, not F.'s
])
def test_a_number_used_otherwise_is_not_a_number_only_parameter(name, code):
    assert number_only_param(name, code) is None


@pytest.mark.parametrize("code, keyword", [
    ("h = nn.functional.leaky_relu(h, negative_slope=smoothing)", "negative_slope"),
    ("loss = torch.nn.CrossEntropyLoss(label_smoothing=smoothing)(z, y)", "label_smoothing"),
    ("h = torch.add(h, r, alpha=smoothing)", "alpha"),
    ("h = nn.Dropout(p=smoothing)(h)", "p"),
])
def test_the_row_s_functions_and_modules_are_read_by_the_prefixes_torch_exports_them_by(code, keyword):
    assert number_only_param("smoothing", code) == keyword


def test_an_attribute_is_matched_as_the_code_writes_it():
    assert number_only_param("L['self'].ls", "ce = F.cross_entropy(z, y, label_smoothing=self.ls)") == "label_smoothing"


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "number_only_param"}, "dynamo_number_only_param"),
    ({"dynamo", "number_only_param", "limit_hit"}, "dynamo_number_only_param_limit"),
    ({"dynamo", "number_only_param", "label_smoothing", "limit_hit"}, "dynamo_label_smoothing_limit"),
    ({"dynamo", "number_only_param", "label_smoothing"}, "dynamo_number_only_param"),
    ({"dynamo", "number_only_param", "python_int", "sets_shape"}, "dynamo_int_sets_shape"),  # a size keeps its row
    ({"dynamo"}, "dynamo_python_value"),  # any other number keeps "pass it as a tensor"
])
def test_the_rows_are_chosen_on_their_evidence(facts, row):
    rule = choose("python_value", frozenset(facts))
    assert rule.name == row
    if row.startswith(("dynamo_number_only", "dynamo_label_smoothing")):
        assert "pass it as a tensor" not in rule.text and "a tensor cannot go there" in rule.text
        # the smoothed loss's formula only where the parameter is label_smoothing (eleventh stop's read)
        assert ("(1 - s) * nll" in rule.text) == (row == "dynamo_label_smoothing_limit")


def test_label_smoothing_off_for_validation_is_told_expected_never_as_a_tensor():
    """d26_smoothing_eval_arg: ``smoothing == 0.1`` at the validation call, 0.1 and 0.0 by turns: two graphs."""
    result = cli("explain-recompile", str(SCENARIOS / "d26_smoothing_eval_arg"), "--json", codes=(0, 1))
    doc = json.loads(result.stdout)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_number_only_param"}
    head = doc["headline"]
    assert head["location"]["line"] == 29 and "label_smoothing=" in head["fix"]
    assert head["fix"].startswith("expected") and "pass it as a tensor" not in head["fix"]


@pytest.mark.parametrize("subject, submodule", [
    ("self._modules['drop']", True),
    ("L['self']._modules['head']", True),
    ("fn._modules['0']._forward_pre_hooks[list(dict.keys(fn._modules['0']._forward_pre_hooks))[0]]", False),  # prune
    ("pair", False),          # dyn_tuple_or_list: an argument's container type
    ("L['head']", False),     # dyn_head_per_task: a head passed as an argument
])
def test_a_submodule_type_guard_is_told_by_its_own_row(subject, submodule):
    from hlodiff.explain.dynamo_log_findings import _SUBMODULE
    assert bool(_SUBMODULE.search(subject)) is submodule


@pytest.mark.parametrize("subject, dropout", [
    ("self._modules['drop']", True), ("L['self']._modules['attn_dropout']", True),
    ("self._modules['head']", False), ("self._modules['blocks']._modules['0']", False),
])
def test_only_a_dropout_s_slot_is_read_as_one(subject, dropout):
    from hlodiff.explain.dynamo_log_findings import _DROPOUT_SLOT
    assert bool(_DROPOUT_SLOT.search(subject)) is dropout


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "object_type", "submodule_type", "dropout_slot"}, "dynamo_submodule_type"),
    # a head or a block swapped for another class: no eval() sentence (eleventh stop's read)
    ({"dynamo", "object_type", "submodule_type"}, "dynamo_submodule_swap"),
    # past the recompile limit nothing is "compiled once and reused": the generic guard row
    ({"dynamo", "object_type", "submodule_type", "dropout_slot", "limit_hit"}, "dynamo_guard"),
    ({"dynamo", "object_type", "limit_hit"}, "dynamo_guard"),
    ({"dynamo", "object_type", "submodule_type", "parametrized"}, "dynamo_parametrized"),  # d20_weight_norm_late
    ({"dynamo", "object_type"}, "dynamo_object_type"),
])
def test_the_submodule_row_is_chosen_on_its_evidence(facts, row):
    rule = choose("guard", frozenset(facts))
    assert rule.name == row
    assert ("model.eval()" in rule.text) is (row == "dynamo_submodule_type")
    assert ("expected" in rule.text) is (row != "dynamo_guard")


def test_a_dropout_swapped_for_eval_is_told_as_the_swap_with_the_mode_as_the_way():
    """d26_eval_dropout_swap: ``___check_type_id(self._modules['drop'], ...)``: expected, one graph per setup; the
    int/float aside of the generic object-type row is no concern of a submodule."""
    result = cli("explain-recompile", str(SCENARIOS / "d26_eval_dropout_swap"), "--json", codes=(0, 1))
    doc = json.loads(result.stdout)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_submodule_type"}
    fix = doc["headline"]["fix"] if doc["headline"] else doc["dynamo"]["recompiles"][0]["fix"]
    assert "eval()" in fix and "float" not in fix and result.exit_code == 0


@pytest.mark.parametrize("name, code, k", [
    ("top_k", "vals, idx = torch.topk(logits, top_k, dim=-1)", True),
    ("top_k", "vals, idx = logits.topk(top_k)", True),
    ("top_k", "vals, idx = torch.topk(logits.float(), k=top_k)", True),
    ("L['self'].k", "scores, idx = sims.topk(self.k, dim=1)", True),
    ("n", "vals, idx = torch.topk(x[:, :n], 5)", False),       # a slice's bound: a length, the sets_shape row's
    ("top_k", "h = x[:top_k]  # topk(x, top_k) later", False),  # a comment
    ("dim", "vals, idx = torch.topk(x, 4, dim)", False),        # topk's dim, not its k
])
def test_topk_s_k_is_read_where_the_guarded_int_is_passed_as_it(name, code, k):
    from hlodiff.explain.dynamo_topk_k import topk_k_on_line
    assert topk_k_on_line(name, code) is k


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "python_int", "sets_topk", "sets_shape"}, "dynamo_int_sets_topk"),
    ({"dynamo", "python_int", "sets_shape"}, "dynamo_int_sets_shape"),  # a length keeps "mask (or pad)"
])
def test_the_topk_row_is_chosen_on_its_evidence(facts, row):
    rule = choose("python_value", frozenset(facts))
    assert rule.name == row
    assert ("pad" in rule.text) is (row == "dynamo_int_sets_shape")


def test_a_per_request_top_k_is_told_as_one_fixed_k_and_a_mask_never_padding():
    """d26_generate_topk: ``top_k == 20`` at the topk line, 20/50/40 recurring."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "d26_generate_topk"), "--json", codes=(0, 1)).stdout)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_int_sets_topk"}
    head = doc["headline"]
    assert head["location"]["line"] == 17 and "mask" in head["fix"] and "pad" not in head["fix"]
