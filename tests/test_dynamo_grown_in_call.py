"""A container the compiled function itself adds to (``self.norm_history.append(...)`` in a compiled forward):
Dynamo guards its length on the line that grows it, every call breaks the guard the call before installed, and no
argument of the loop's is of another length. The row ``dynamo_grown_in_call`` says so at that line; the look-alikes
whose length guard names a line that only reads the container (a bank the loop grows, a list argument, a hook's
lambda appending to a global) keep their rows."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli, cli_json

from hlodiff.explain.dynamo_guard_kinds import _classify, local_truth_name
from hlodiff.explain.dynamo_guard_lines import grown_on_line

DYN = FIXTURES / "scenarios" / "dynamo"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")


@pytest.mark.parametrize("name, code", [
    ("self.norm_history", "        self.norm_history.append(out.detach().norm())"),
    ("L['self'].seen", "self.seen.extend(ids)"),
    ("self.hist", "self.hist += [x.mean()]"),
    ("self.cache", "self.cache[key] = value"),
    ("HISTORY", "HISTORY.append(loss)"),
])
def test_a_line_that_adds_to_the_guarded_container_grows_it(name, code):
    assert grown_on_line(name, code)


@pytest.mark.parametrize("name, code", [
    ("bank", "protos = torch.stack(bank)"),  # dyn_closure_bank: the compiled code reads what the loop grows
    ("acts", "model.register_forward_hook(lambda m, i, o: acts.append(o.shape))"),  # review3_hook_guard
    ("crops", "return torch.stack([enc(c) for c in crops]).mean(0).sum()"),  # dyn_list_len: an argument
    ("self.norm_history", "self.other.append(x)"),
    ("self.hist", "if self.hist[-1] == x: pass"),
    ("self.norm_history", None),
])
def test_a_line_that_reads_it_or_grows_another_does_not(name, code):
    assert not grown_on_line(name, code)


def test_the_truth_of_a_module_attribute_is_a_guard_on_that_attribute():
    kind, subject, _, facts = _classify("not self.norm_history")
    assert (kind, subject) == ("guard", "self.norm_history") and "attribute_truth" in facts
    kind, subject, _, facts = _classify("not G['__import___main__'].acts")  # a global keeps its own row
    assert "attribute_truth" not in facts and "global_truth" in facts


def test_a_history_grown_in_the_compiled_forward_is_told_at_the_append():
    """d23_norm_history: the first try said 'pass a fixed number of items ... pad with masked items' at the call;
    the append (:23) leads, the call (:32) beside it, and the fix keeps the history out of the forward."""
    doc = cli_json("explain-recompile", DYN / "d23_norm_history", *DYN_MAP, codes=(1,))
    rules = {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}
    assert rules == {"dynamo_grown_in_call"}
    assert doc["headline"]["location"]["line"] == 23
    fix = doc["headline"]["fix"]
    assert "append it after the call" in fix and "pad" not in fix and "fixed number of items" not in fix
    head = cli("explain-recompile", DYN / "d23_norm_history", *DYN_MAP, codes=(1,)).stdout.splitlines()[1]
    assert "d23_norm_history.py:23, called at d23_norm_history.py:32" in head


@pytest.mark.parametrize("name, row", [
    ("dyn_closure_bank", "dynamo_global_length"),
    ("review3_hook_guard", "dynamo_global_length"),
    ("dyn_list_len", "dynamo_container_length"),
    ("dyn_varargs_len", "dynamo_container_length"),
])
def test_look_alikes_whose_guard_line_only_reads_keep_their_rows(name, row):
    folder = DYN / name
    target = folder / "record" if (folder / "record").is_dir() else folder
    doc = cli_json("explain-recompile", target, *DYN_MAP, codes=(1,))
    rules = {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}
    assert row in rules and "dynamo_grown_in_call" not in rules


@pytest.mark.parametrize("guard, name", [
    ("not history", "history"),
    ("not L['history']", "history"),
    ("flag", "flag"),
    ("not self.norm_history", None),  # a module attribute: attribute_truth above
    ("not G['__import___main__'].acts", None),  # a global: global_truth
    ("len(history) == 1", None),
    (None, None),
])
def test_the_truth_of_a_plain_local_name_is_read_for_its_name(guard, name):
    assert local_truth_name(guard) == name


def test_a_mutable_default_grown_in_the_compiled_function_is_told_at_the_append_from_its_first_recompile():
    """d33_smooth_default_list: `history=[]` appended to every call; the first recompile's guard is `not history`
    (the list was empty at the first compile), the later ones `len(history) == n`. Every one is the container the
    function grows, its guard at the append (:17), from the first on (the live first word said 'find what that
    guard checks')."""
    doc = cli_json("explain-recompile", DYN / "d33_smooth_default_list", *DYN_MAP, codes=(1,))
    recompiles = doc["dynamo"]["recompiles"]
    assert {r["fix_rule"] for r in recompiles} == {"dynamo_grown_in_call"}
    assert recompiles[0]["guard"] == "not history" and recompiles[0]["subject"] == "history"
    assert recompiles[0]["guard_at"]["line"] == 17  # the append; the one call (:28) leads, as for every function
    assert "outside" in doc["headline"]["fix"] and "expected" not in doc["headline"]["fix"]


def test_a_local_truth_guard_whose_line_only_reads_it_stays_unread():
    """A flag or a list read on the guard's line (`if not mask:`) is no container the function grows: no subject
    is made up for it here."""
    from hlodiff.explain.dynamo_guard_lines import grown_on_line
    assert local_truth_name("not mask") == "mask" and not grown_on_line("mask", "        if not mask: return x")
