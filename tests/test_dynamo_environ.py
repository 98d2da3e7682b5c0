"""An environment variable read inside the compiled function (``os.environ.get("NET_DEBUG")`` in a forward): Dynamo
traces through the stdlib's frozen ``os`` module and guards the bytes it read, its guard's line in ``<frozen os>``.
The guard is told by its own row (``dynamo_environ``: read it once, pass it as an argument) at the user's read,
found in the guard tree above the frozen line, never at ``<frozen os>`` or the forward's def."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json

from hlodiff.dumps.dynamo_guards import _user_line_above
from hlodiff.dumps.dynamo_log import guard_failure
from hlodiff.explain.dynamo_guard_kinds import _classify

DYN = FIXTURES / "scenarios" / "dynamo"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")
GUARD = "G['os'].environ._data[b'NET_DEBUG'] == b'0'"


def test_a_guard_whose_line_is_in_a_frozen_module_keeps_its_text_apart_from_the_comment():
    f = guard_failure("0/0", f"{GUARD}                   #   # <frozen os>:680 in __getitem__")
    assert f.guard == GUARD and f.source.file == "<frozen os>" and f.source.line == 680 and f.source.is_library


def test_environment_guards_are_told_by_the_variable():
    kind, subject, seen, facts = _classify(GUARD)
    assert (kind, subject) == ("guard", "os.environ['NET_DEBUG']") and "environ" in facts and "'0'" in seen
    kind, subject, seen, facts = _classify("not ___dict_contains(b'NET_DEBUG', G['os'].environ._data)")
    assert subject == "os.environ['NET_DEBUG']" and "environ" in facts and "not set" in seen
    # a global's value that is no environment variable keeps its own reading
    assert "environ" not in _classify("G['__import___main__'].SCALE == 2.0")[3]


def test_the_user_line_above_a_frozen_guard_is_on_the_same_root_object():
    tree = [("ID_MATCH", "___check_obj_id(G['torch'], 1)  # x = torch.ones(2)  # t.py:10 in f"),
            ("TYPE_MATCH", "___check_type_id(G['os'].environ, 2)  # if os.environ.get('A'):  # t.py:12 in f"),
            ("TYPE_MATCH", "___check_type_id(G['os'].environ._data, 3)  #   # <frozen os>:676 in __getitem__"),
            ("EQUALS_MATCH", "G['os'].environ._data[b'A'] == b'1'  #   # <frozen os>:680 in __getitem__")]
    assert _user_line_above(tree, "G['os'].environ._data[b'A'] == b'1'") == "if os.environ.get('A'):  # t.py:12 in f"
    assert _user_line_above(tree[:1] + tree[2:], "G['os'].environ._data[b'A'] == b'1'") is None  # torch's root
    assert _user_line_above(tree, "G['os'].environ._data[b'B'] == b'1'") is None  # not in the tree


def test_an_environment_switch_read_in_the_forward_is_told_at_the_read():
    """d23_env_debug: the first try said the generic guard fix, quoting '<frozen os>', at the forward's def :31.
    Since the twelfth stop (review 18, F7: the README's rule) the one call of the compiled module leads and the read
    is beside it."""
    doc = cli_json("explain-recompile", DYN / "d23_env_debug", *DYN_MAP, codes=(0, 1))
    r = doc["dynamo"]["recompiles"][0]
    assert r["fix_rule"] == "dynamo_environ" and r["guard_at"]["line"] == 33
    assert r["location"]["line"] == 45 and r["located"] == "source_call"
    assert "frozen" not in doc["headline"]["fix"] and "argument" in doc["headline"]["fix"]
    out = cli("explain-recompile", DYN / "d23_env_debug", *DYN_MAP, codes=(0, 1)).stdout
    assert "frozen" not in out.split("\n\n", 1)[0]
