"""Stop 51, the last read: four rules (and one older one) narrowed after a reviewer showed each firing on a
plausible look-alike. Each test here is the look-alike, at the level where the rule decides."""

from __future__ import annotations

import pytest

from hlodiff.diff.fixes import choose
from hlodiff.dumps.rows_source import rows_cut_by

# -- 2. a leading dimension that shrank in a JAX log of compilations: how the rows were cut, read from the source ----

_JAX = frozenset({"is:shape", "on_input", "last_in_family", "leading_dim_shrank", "jax"})


@pytest.mark.parametrize("code, line, kind", [
    # x and y filtered together on the host: a size that follows the data, though both lose the same rows
    ("for s in range(9):\n    keep = x[:, 0] > t\n    w = step(w, x[keep], y[keep])\n", 3, "filter"),
    ("neg = pool[labels != label][:200]\nw = step(w, jax.device_put(neg, rep))\n", 2, "filter"),
    ("for s in range(9):\n    xs, ys = x[~done], y[~done]\n    w = step(w, xs, ys)\n", 3, "filter"),
    # a range slice: a batch, whose last one is the remainder (one array: an LM's tokens)
    ("for i in range(0, n, B):\n    w = step(w, tokens[i:i + B])\n", 2, "slice"),
    ("for i in range(0, n, B):\n    x, y = dx[i:i + B], dy[i:i + B]\n    x = x.reshape(4, -1, 8)\n"
     "    w = step(w, x, y)\n", 4, "slice"),
    # neither: a constant slice, a row by a loop counter, an array made elsewhere
    ("w = step(w, x[:200])\n", 1, ""),
    ("for i in range(9):\n    w = step(w, batches[i])\n", 2, ""),
    ("w = step(w, next(it))\n", 1, ""),
])
def test_how_a_calls_rows_are_cut_is_read_from_its_source(tmp_path, code, line, kind):
    file = tmp_path / "train.py"
    file.write_text(code)
    assert rows_cut_by(str(file), line) == kind


def test_no_file_on_disk_says_nothing_of_the_rows(tmp_path):
    assert rows_cut_by(str(tmp_path / "gone.py"), 3) == ""


def test_arrays_filtered_together_are_not_told_the_last_batch():
    """`step(w, x[keep], y[keep])`: 16 rows, then 15 mid-run; x and y shrank together (batch_rows)."""
    rule = choose("shape", _JAX | {"batch_rows", "rows_filtered"})
    assert rule.name == "shape_rows_filtered_jax"
    assert "last batch" not in rule.text and "drop" not in rule.text and "mask" in rule.text


def test_a_one_array_batch_cut_by_a_range_slice_is_the_last_batch():
    """An LM's tokens[i:i + B]: one argument, no sibling to shrink with it; the slice says it is a batch."""
    rule = choose("shape", _JAX | {"rows_sliced"})
    assert rule.name == "shape_last_batch_sliced_jax" and "last batch is short" in rule.text


def test_with_no_source_a_lone_shrunk_argument_is_told_both_ways():
    rule = choose("shape", _JAX)
    assert rule.name == "shape_data_rows_jax"
    assert "as a batch's arrays do" not in rule.text
    assert "if this is the epoch's remainder" in rule.text and "if its rows come from a filter" in rule.text
    # the two arrays of a batch, no source: still the last batch (jax_last_batch, captured without its file)
    assert choose("shape", _JAX | {"batch_rows"}).name == "shape_last_batch_jax"


# -- 3. Dynamo gave up a generator: a generator expression passed in, or the compiled function itself yields --------

_I = "I1128 11:40:58.822000 8028 torch/_dynamo/convert_frame.py:1705] "
_AFTER = ["I1128 11:40:58.900000 8028 torch/_dynamo/eval_frame.py:563] TorchDynamo attempted to trace"]


def _gave_up(function: str, line: int) -> list[str]:
    return [_I + f"WON'T CONVERT {function} /home/user/project/train.py line {line} ", _I + "due to: ",
            _I + "torch._dynamo.exc.Unsupported: Attempt to trace generator",
            _I + "  Explanation: Generators cannot be compiled directly with `torch.compile`."] + _AFTER


@pytest.mark.parametrize("function, rule, words, not_words", [
    ("<genexpr>", "dynamo_gave_up_generator", "pass a list or a tuple", "iterate outside"),
    # stop 51's look-alike: `@torch.compile def batches(xs): for x in xs: yield model(x)`
    ("batches", "dynamo_gave_up_generator_function", "compiled function is a generator", "pass a list"),
])
def test_a_generator_given_up_is_told_by_what_yields(function, rule, words, not_words):
    from hlodiff.dumps.dynamo_log import read_text_log
    from hlodiff.explain.dynamo_log_findings import breaks_of

    (found,) = breaks_of(read_text_log("stderr.log", _gave_up(function, 12), []))
    assert found.fix_rule == rule and words in found.fix and not_words not in found.fix


# -- 4. a value read in the step and an upload before the sync: sent back only when the upload uses the read -------

_OHEM = """for step in range(6):
    per = F.cross_entropy(model(x), y, reduction="none")
    idx = np.argsort(-per.detach().cpu().numpy())[:k]
    hard = torch.from_numpy(idx).to(dev)
    loss = per[hard].mean()
    torch_xla.sync()
"""
_CLIP = """def main():
    for step in range(6):
        grads = [p.grad.cpu() for p in params]
        total = float(torch.sqrt(sum((g ** 2).sum() for g in grads)))
        scale = min(1.0, 0.5 / (total + 1e-6))
        for p, g in zip(params, grads):
            p.grad = (g * scale).to(dev)
        torch_xla.sync()
"""
# the look-alike: a NaN guard reads the loss, then a target drawn with NumPy is uploaded for the same step
_GUARD = """for step in range(6):
    loss = F.mse_loss(model(x), t)
    if not math.isfinite(loss.item()):
        continue
    target = torch.from_numpy(rng.normal(size=(8, 4)).astype(np.float32)).to(dev)
    aux = F.mse_loss(model(x), target)
    torch_xla.sync()
"""


@pytest.mark.parametrize("code, read, upload, sent", [
    (_OHEM, 3, 4, True),            # x10c_ohem_host_argsort: the indices picked on the host
    (_CLIP, 3, 7, True),            # x13c_grads_cpu_clip: through the norm and the loop over the gradients
    (_GUARD, 3, 5, False),          # the host's own draw: no name of the read's
    ("v = loss.item()\nlog.append(v)\nz = torch.tensor(log).to(dev)\n", 1, 3, True),   # through an append
])
def test_an_upload_is_sent_back_only_if_it_uses_the_read(tmp_path, code, read, upload, sent):
    from hlodiff.dumps.read_flow_source import upload_uses_read

    file = tmp_path / "train.py"
    file.write_text(code)
    assert upload_uses_read(str(file), read, upload) is sent


def test_without_the_file_the_reports_alone_decide(tmp_path):
    from hlodiff.dumps.read_flow_source import upload_uses_read

    assert upload_uses_read(str(tmp_path / "gone.py"), 3, 5) is None


# -- 5. a split step whose own graph is new at every step: "unbounded" needs four steps, not three -----------------

def _split_members(steps: int) -> list:
    from types import SimpleNamespace as NS

    frame = NS(file="/home/user/project/train.py", line=16, function="<module>", is_library=False)
    members = []
    for s in range(steps):
        early = NS(record=NS(hits_seen=True, frames=(frame,)), compiled=s == 0, cache_key="early", partial=True)
        rest = NS(record=NS(hits_seen=True, frames=()), compiled=True, cache_key=f"step{s}", partial=False)
        members += [early, rest]
    return members


@pytest.mark.parametrize("steps, unbounded", [(3, False), (4, True), (5, True)])
def test_a_step_new_three_times_is_no_unbounded_trend(monkeypatch, steps, unbounded):
    from hlodiff.explain import patterns

    monkeypatch.setattr(patterns, "is_partial", lambda g: g.partial)
    monkeypatch.setattr(patterns, "user_frame", lambda frames: frames[0] if frames else None)
    split, parts, seen = patterns._split_step_new(_split_members(steps))
    assert (split is not None) is unbounded
    if unbounded:
        assert split == "train.py:16" and parts == 2 and seen == steps


def _cost_headline(name: str) -> dict:
    """The cost headline of a capture with its script at hand (as a user's run has it)."""
    from helpers import FIXTURES, cli_json

    folder = FIXTURES / "scenarios" / "cost"
    env = {"HLODIFF_SOURCE_MAP": f"/home/user/project={folder}"}
    return cli_json("cost", str(folder / name / "record"), "-q", env=env)["headline"]


def test_a_nan_guard_then_a_host_draw_is_a_plain_read_with_the_file_at_hand():
    """cost/lr51_tx_nan_guard_noise: `lv = loss.item()` at :19, `noise = torch.from_numpy(rng...).to(dev)` at :22."""
    head = _cost_headline("lr51_tx_nan_guard_noise")
    assert head["kind"] == "read_in_step" and head["location"]["line"] == 19 and not head["sent_back"]
    assert "add_step_closure" in head["fix"] and "what the host works out" not in head["fix"]


@pytest.mark.parametrize("name", ["x10c_ohem_host_argsort", "x13c_grads_cpu_clip"])
def test_values_worked_out_from_the_read_stay_sent_back_with_the_file_at_hand(name):
    head = _cost_headline(name)
    assert head["kind"] == "read_in_step" and head["sent_back"], head
