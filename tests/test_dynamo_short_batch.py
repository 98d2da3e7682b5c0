"""A short batch under torch.compile that full batches followed (rows filtered out of one batch mid-run) is no
epoch's last batch: Dynamo's log has no later recompilation (the full size's entry was cached), but torch_xla's
execution log runs the full-size graph again. And where Dynamo names only torch's wrapper of a compiled module, the
one call of a ``torch.compile`` result in the user's file is the line."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json

from hlodiff.dumps.python_calls import calls_of_compiled

DYN = FIXTURES / "scenarios" / "dynamo"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")


def _rules(doc) -> list[str]:
    return [r["fix_rule"] for r in doc["dynamo"]["recompiles"]]


def test_a_short_batch_mid_run_is_padded_or_masked_never_drop_last():
    """lead47_d_filtered_batch (8, 8, 7, 8, 8): the first try said 'the last batch is short ... drop_last' with no
    line; the call of the compiled model (:19) leads, and the fix keeps the batch size."""
    doc = cli_json("explain-recompile", DYN / "lead47_d_filtered_batch", *DYN_MAP, codes=(1,))
    assert _rules(doc) == ["dynamo_shape_short_batch_once"]
    r = doc["dynamo"]["recompiles"][0]
    assert (r["location"]["line"], r["located"]) == (19, "compiled_call")
    out = cli("explain-recompile", DYN / "lead47_d_filtered_batch", *DYN_MAP, codes=(1,)).stdout
    head = out.split("\n\n", 1)[0]
    assert "lead47_d_filtered_batch.py:19" in head.splitlines()[0]
    assert "drop_last" not in head and "last batch is short" not in head
    assert "mask" in head and "one call of a torch.compile result" in head


def test_an_epoch_s_last_batch_keeps_drop_last():
    """Look-alike: 28 samples in batches of 8 over two epochs (dyn_last_batch_static): the full size runs again
    after the short batch of 4, but the 4 comes again at the next epoch's end: the loader's remainder, for which
    drop_last is right (tests/test_review6.py holds it too)."""
    doc = cli_json("explain-recompile", DYN / "dyn_last_batch_static", *DYN_MAP, codes=(1,))
    assert _rules(doc) == ["dynamo_shape_last_batch"]
    assert "drop_last" in doc["headline"]["fix"]


def test_without_source_on_disk_the_wrapper_call_stays_unknown():
    doc = cli_json("explain-recompile", DYN / "lead47_d_filtered_batch", codes=(1,))
    r = doc["dynamo"]["recompiles"][0]
    assert r["located"] != "compiled_call"


def test_calls_of_compiled_count_only_calls_of_names_bound_to_torch_compile(tmp_path):
    src = tmp_path / "train.py"
    src.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\ncompiled = torch.compile(model, backend='openxla')\n"
                   "for x in []:\n    out = compiled(x)\n    ref = model(x)\n    print(out)\n")
    assert calls_of_compiled(str(src)) == [5]
    two = tmp_path / "two.py"
    two.write_text("import torch\nf = torch.compile(lambda x: x)\nf(1)\nf(2)\n")
    assert calls_of_compiled(str(two)) == [3, 4]
    assert calls_of_compiled(str(tmp_path / "gone.py")) is None
