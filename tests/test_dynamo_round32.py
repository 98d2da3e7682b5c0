"""Dynamo round 32 (docs/accuracy.md): a `with` on a context manager Dynamo cannot enter (a threading.Lock) gives
the compiled function up from that line ("Graph break: skip"); a generator expression passed to a compiled function
is given up with it (``WON'T CONVERT <genexpr>``, logged outside the graph-break channel); the same tensor passed
to one compiled module with and without ``.detach()`` (a GAN's discriminator) is one graph per setting, expected.
One test per row, its look-alikes, the readers on real lines, and the round's runs."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.diff.fixes import choose
from hlodiff.dumps.detach_pair_source import called_detached_and_not
from hlodiff.dumps.dynamo_log import GAVE_UP, read_text_log

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_MAP = {"HLODIFF_SOURCE_MAP": f"/home/user/project={SCENARIOS}"}
_P = "V1128 11:42:14.244000 10218 torch/_dynamo/convert_frame.py:1688] [0/0] [__graph_breaks] "
_I = "I1128 11:40:58.822000 8028 torch/_dynamo/convert_frame.py:1705] "


def _explain(name: str, env: dict | None = None) -> dict:
    return json.loads(cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1), env=env).stdout)


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "frame_skipped"}, "dynamo_graph_break_frame_skipped"),
    ({"dynamo", "frame_skipped", "raised"}, "dynamo_graph_break_raised"),          # fullgraph=True keeps its row
    ({"dynamo", "op:generator_frame"}, "dynamo_gave_up_generator"),
    ({"dynamo", "op:generator_function"}, "dynamo_gave_up_generator_function"),
    ({"dynamo", "gave_up"}, "dynamo_gave_up"),                                      # a backend failure keeps its row
    ({"dynamo", "op:file_io"}, "dynamo_graph_break_file_io"),
    ({"dynamo"}, "dynamo_graph_break"),
])
def test_the_break_rows_are_chosen_on_their_evidence(facts, row):
    assert choose("graph_break", frozenset(facts)).name == row


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "requires_grad", "detached_pair"}, "dynamo_requires_grad_detached_pair"),
    ({"dynamo", "requires_grad", "detached_pair", "limit_hit"}, "dynamo_requires_grad"),
    ({"dynamo", "requires_grad"}, "dynamo_requires_grad"),                         # an adversarial pass keeps it
    ({"dynamo", "requires_grad", "parameter_requires_grad"}, "dynamo_parameter_requires_grad"),
])
def test_the_requires_grad_rows_are_chosen_on_their_evidence(facts, row):
    rule = choose("guard", frozenset(facts))
    assert rule.name == row
    if row.endswith("detached_pair"):
        assert rule.text.startswith("expected") and "detach" not in rule.text  # never tell the user to cut it


def _skip_record(user_frame: bool) -> list[str]:
    lines = [_P + "Graph break: skip: from user code at:"]
    if user_frame:
        lines += [_P + '  File "/home/user/project/train.py", line 24, in forward',
                  _P + "    with self.stats_lock:"]
    lines += [_P + "Traceback (most recent call last):",
              _P + '  File "/usr/lib/python3.11/site-packages/torch/_dynamo/exc.py", line 596, in unimplemented_v2',
              _P + "    raise Unsupported(msg)",
              _P + "torch._dynamo.exc.Unsupported: Unsupported context manager",
              _P + "  Explanation: Dynamo does not know how to enter a `lock` context manager.",
              _P + "  Developer debug context: Attempted SETUP_WITH/BEFORE_WITH on UserDefinedObjectVariable(lock)"]
    return lines


def test_a_skip_record_is_read_at_the_users_line():
    log = read_text_log("stderr.log", _skip_record(True), [])
    (brk,) = log.graph_breaks
    assert brk.skipped and (brk.at.file, brk.at.line) == ("/home/user/project/train.py", 24)
    assert brk.reason == "Unsupported context manager" and "`lock`" in brk.explanation


def test_a_skip_record_without_a_user_frame_is_not_a_break_of_the_users():
    """dyn_tolist_split: the backend failed on a traced graph; its WON'T CONVERT record tells that story."""
    assert read_text_log("stderr.log", _skip_record(False), []).graph_breaks == []


def _wont_convert(file: str, then: list[str]) -> list[str]:
    return [_I + f"WON'T CONVERT <genexpr> {file} line 36 ", _I + "due to: ",
            _I + "torch._dynamo.exc.Unsupported: Attempt to trace generator",
            _I + "  Explanation: Generators cannot be compiled directly with `torch.compile`."] + then


def test_a_users_generator_given_up_is_read_once_its_record_ends():
    after = ["I1128 11:40:58.900000 8028 torch/_dynamo/eval_frame.py:563] TorchDynamo attempted to trace"]
    (brk,) = read_text_log("stderr.log", _wont_convert("/home/user/project/train.py", after), []).graph_breaks
    assert brk.reason == GAVE_UP and brk.at.line == 36 and "Generators" in brk.explanation
    # still being written (nothing after it yet): kept for a later read, not told half
    assert read_text_log("stderr.log", _wont_convert("/home/user/project/train.py", []), []).graph_breaks == []


def test_a_generator_of_torchs_own_given_up_is_not_the_users():
    """d30_saliency_autograd_grad: typing.py's genexprs are given up while Dynamo traces the user's function."""
    after = ["I1128 11:40:58.900000 8028 torch/_dynamo/eval_frame.py:563] TorchDynamo attempted to trace"]
    assert read_text_log("stderr.log", _wont_convert("/usr/lib/python3.11/typing.py", after), []).graph_breaks == []


_C = "disc = torch.compile(D)\nmodel = torch.compile(net)\nnet.head = torch.compile(net.head)\n"


@pytest.mark.parametrize("code, line, pair", [
    (_C + "d = disc(real) + disc(fake.detach())\ng = disc(fake)\n", 5, True),        # the GAN's two updates
    (_C + "d = disc(real) + disc(fake.detach())\ng = disc(fake)\n", 4, True),
    (_C + "d = disc(fake.detach())\ng = disc(real)\n", 5, False),                   # another tensor: no pair
    (_C + "x.requires_grad_(True)\ny = model(x)\nz = model(x)\n", 5, False),        # an adversarial pass
    (_C + "d = disc(fake.detach())\ng = other(fake)\n", 4, False),                  # another callable
    (_C + "a = net.head(h.detach())\nb = net.head(h)\n", 5, True),
    # stop 51, look-alikes: a loss given X and X.detach() on the compiled model's line is no pair of the model's
    (_C + "a = F.cross_entropy(model(x), y)\nb = F.cross_entropy(x.detach(), y)\nc = F.cross_entropy(x, y)\n",
     4, False),
    # an FGSM loop that probes the compiled model with x.detach(): x is made to require grad by the file
    (_C + "x.requires_grad_(True)\nl = model(x)\nprint(model(x.detach()).argmax(1))\n", 5, False),
    (_C + "x = torch.zeros(4, requires_grad=True)\nl = model(x)\np = model(x.detach())\n", 5, False),
    # an uncompiled callable's pair is none
    ("d = disc(real) + disc(fake.detach())\ng = disc(fake)\n", 2, False),
])
def test_a_callable_given_a_tensor_and_its_detach_is_read_as_a_pair(tmp_path, code, line, pair):
    file = tmp_path / "train.py"
    file.write_text(code)
    assert called_detached_and_not(str(file), line) is pair


@pytest.mark.parametrize("callee, position, pair", [
    (None, None, True), ("disc", 0, True),
    ("disc", 1, False),   # the guard names args[1]: the pair is at args[0]
    ("gen", None, False),  # Dynamo names another compiled callable than the one with the pair
])
def test_the_pair_is_the_guards_callable_and_position(tmp_path, callee, position, pair):
    file = tmp_path / "train.py"
    file.write_text("disc = torch.compile(D)\ngen = torch.compile(G)\nd = disc(fake.detach(), c)\n"
                    "g = disc(fake, c) + gen(fake)\n")
    assert called_detached_and_not(str(file), 4, callee, position) is pair


def test_a_lock_in_forward_is_told_as_the_function_given_up():
    """d32_lock_forward: `with self.stats_lock:` at :24; no graph, eager every call; nothing recompiles."""
    doc = _explain("d32_lock_forward", _MAP)
    head, (brk,) = doc["headline"], doc["dynamo"]["graph_breaks"]
    assert head["location"]["line"] == 24 and brk["fix_rule"] == "dynamo_graph_break_frame_skipped"
    assert "lock taken around the call" in head["fix"] and "as a tensor" not in head["fix"]


def test_a_generator_argument_is_told_pass_a_list():
    """d32_genexpr_arg: `(head(h) for head in net.heads)` passed at :36."""
    doc = _explain("d32_genexpr_arg", _MAP)
    head, (brk,) = doc["headline"], doc["dynamo"]["graph_breaks"]
    assert head["location"]["line"] == 36 and brk["fix_rule"] == "dynamo_gave_up_generator"
    assert "list" in head["fix"] and ".tolist()" not in head["fix"]


def test_the_gans_discriminator_is_expected_and_its_look_alike_is_not():
    """d32_gan_d_calls_control: fake.detach() and fake to one compiled D; rev12_dc_adv_requires_grad: an input
    made to require grad for an adversarial pass keeps the row asking for one setting."""
    gan = json.loads(cli("explain-recompile", str(SCENARIOS / "d32_gan_d_calls_control"), "--json", codes=(0,),
                         env=_MAP).stdout)  # exit 0: nothing unexpected
    assert {r["fix_rule"] for r in gan["dynamo"]["recompiles"]} == {"dynamo_requires_grad_detached_pair"}
    assert gan["headline"] is None or gan["headline"]["fix"].startswith("expected")
    adv = _explain("rev12_dc_adv_requires_grad", _MAP)
    assert {r["fix_rule"] for r in adv["dynamo"]["recompiles"]} == {"dynamo_requires_grad"}


def test_without_the_source_the_gan_keeps_the_general_row():
    """The pair is read from the file on disk only."""
    doc = _explain("d32_gan_d_calls_control")
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_requires_grad"}


def test_a_resume_function_skipped_where_it_broke_is_one_break():
    """d23_file_log_break: the break at `open` and the resume function's skip record at the same `with open(...)`:
    one break of the user's (1 in the log), the file-I/O row as before."""
    (brk,) = _explain("d23_file_log_break", _MAP)["dynamo"]["graph_breaks"]
    assert brk["count"] == 1 and brk["fix_rule"] == "dynamo_graph_break_file_io"
