"""Matcher behaviours from the scenarios of XLA's hlo_diff tests, each on a small module written for it.

Each test states what a user reads in the diff: which instruction is reported as changed, and against what."""

from __future__ import annotations

from conftest import FIXTURES
from helpers import cli_json

from hlodiff.diff.matchers import match_computations
from hlodiff.graph import canonicalize
from hlodiff.hlo import parse_module


def _match(left: str, right: str):
    lcm, rcm = canonicalize(parse_module(left)), canonicalize(parse_module(right))
    return match_computations(lcm.entry, rcm.entry, lcm, rcm)


FUSED = """
%{name} {{
  %x = f32[8] parameter(0)
  %c = f32[] constant({c})
  %b = f32[8] broadcast(%c), dimensions={{}}
  ROOT %o = f32[8] {op}(%x, %b)
}}
"""


def _fusions(order: str, c_mul: str, c_add: str, moves: str = "") -> str:
    """sub(fusion(p0) doing multiply, fusion(p1) doing add), operands in ``order`` ("ma" or "am")."""
    body = FUSED.format(name="fmul", c=c_mul, op="multiply") + FUSED.format(name="fadd", c=c_add, op="add")
    p0 = "%p0"
    if moves:
        body_moves = f"  %mv = f32[8] {moves}(%p0)\n"
        p0 = "%mv"
    else:
        body_moves = ""
    a = f"%m = f32[8] fusion({p0}), kind=kLoop, calls=%fmul"
    b = "%a = f32[8] fusion(%p1), kind=kLoop, calls=%fadd"
    ops = "%m, %a" if order == "ma" else "%a, %m"
    return (f"HloModule t\n{body}\nENTRY %e {{\n  %p0 = f32[8] parameter(0)\n  %p1 = f32[8] parameter(1)\n"
            f"{body_moves}  {a}\n  {b}\n  ROOT %r = f32[8] subtract({ops})\n}}\n")


def test_operand_subgraphs_that_trade_places_pair_by_content_not_position():
    # Both fusions changed (new constants) and swapped places: a positional matcher pairs multiply with add.
    m = _match(_fusions("ma", "2", "3"), _fusions("am", "5", "7"))
    assert m.l2r["m"] == "m" and m.l2r["a"] == "a"


def _three(order: list[int], c: str, move: str) -> str:
    """tuple of three like fusions, fusion i reading parameter i through a ``move``; outputs in ``order``."""
    body = FUSED.format(name="fmul", c=c, op="multiply")
    lines = [f"  %p{i} = f32[8] parameter({i})\n  %v{i} = f32[8] {move}(%p{i})\n"
             f"  %f{i} = f32[8] fusion(%v{i}), kind=kLoop, calls=%fmul\n" for i in range(3)]
    outs = ", ".join(f"%f{i}" for i in order)
    return (f"HloModule t\n{body}\nENTRY %e {{\n{''.join(lines)}"
            f"  ROOT %r = (f32[8], f32[8], f32[8]) tuple({outs})\n}}\n")


def test_trading_places_looks_through_bitcast_and_copy():
    # Three like fusions (changed constant) in another order, each reading its input through a copy on the left
    # and a bitcast on the right: only the values behind the moves tell which is which.
    m = _match(_three([0, 1, 2], "2", "copy"), _three([2, 0, 1], "5", "bitcast"))
    assert [m.l2r[f"f{i}"] for i in range(3)] == ["f0", "f1", "f2"]


def test_trading_places_looks_into_fusion_bodies_when_inputs_say_nothing():
    # Both fusions read the same parameter: only their bodies (multiply vs add) tell them apart.
    left = _fusions("ma", "2", "3").replace("fusion(%p1)", "fusion(%p0)")
    right = _fusions("am", "5", "7").replace("fusion(%p1)", "fusion(%p0)")
    m = _match(left, right)
    assert m.l2r["m"] == "m" and m.l2r["a"] == "a"


def _params(names_lines: list[tuple[str, int]]) -> str:
    lines = [f'  %{n} = f32[4] parameter({i}), metadata={{op_name="{n}" source_file="train.py" source_line={line}}}'
             for i, (n, line) in enumerate(names_lines)]
    used = names_lines[0][0]
    return "HloModule t\n\nENTRY %e {\n" + "\n".join(lines) + f"\n  ROOT %n = f32[4] negate(%{used})\n}}\n"


def test_identical_candidates_pair_by_metadata():
    # Three unused parameters of one shape: only op_name / source line tell which is which.
    left = _params([("w", 10), ("u1", 11), ("u2", 12), ("u3", 13)])
    right = _params([("w", 10), ("u3", 13), ("u1", 11), ("u2", 12)])
    m = _match(left, right)
    assert m.l2r["u1"] == "u1" and m.l2r["u2"] == "u2" and m.l2r["u3"] == "u3"


def test_metadata_does_not_pair_different_instructions():
    # Same op_name on two different operations: metadata alone must not pair them.
    meta = ', metadata={op_name="step" source_file="a.py" source_line=3}'
    left = f"HloModule t\n\nENTRY %e {{\n  %p = f32[4] parameter(0)\n  ROOT %x = f32[4] negate(%p){meta}\n}}\n"
    right = (f"HloModule t\n\nENTRY %e {{\n  %p = f32[4] parameter(0)\n  %y = f32[4] sine(%p){meta}\n"
             f"  ROOT %x = f32[4] negate(%p)\n}}\n")
    m = _match(left, right)
    assert m.l2r["x"] == "x" and "y" not in m.r2l


def test_roots_are_not_paired_when_the_right_root_is_a_left_instruction():
    left = ("HloModule t\n\nENTRY %e {\n  %p = f32[4] parameter(0)\n  %n = f32[4] negate(%p)\n"
            "  %s = f32[4] sine(%n)\n  ROOT %t = (f32[4], f32[4]) tuple(%n, %s)\n}\n")
    right = "HloModule t\n\nENTRY %e {\n  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p)\n}\n"
    m = _match(left, right)
    assert m.l2r["n"] == "n" and "t" not in m.l2r


def test_roots_still_pair_when_nothing_better_exists():
    left = "HloModule t\n\nENTRY %e {\n  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p)\n}\n"
    right = "HloModule t\n\nENTRY %e {\n  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] sine(%p)\n}\n"
    assert _match(left, right).l2r["n"] == "n"


def test_quoted_and_unquoted_composite_attributes_are_one_value():
    body = ("HloModule t\n\n%c {{\n  %x = f32[] parameter(0)\n  ROOT %n = f32[] negate(%x)\n}}\n\n"
            "ENTRY %e {{\n  %p = f32[] parameter(0)\n  ROOT %k = f32[] call(%p), to_apply=%c, is_composite=true, "
            "frontend_attributes={{composite.attributes={attrs},composite.name=\"my.op\",composite.version=\"0\"}}\n}}\n")
    unquoted = body.format(attrs="{n = 1 : i32}")
    quoted = body.format(attrs='"{n = 1 : i32}"')
    assert canonicalize(parse_module(unquoted)).fingerprint == canonicalize(parse_module(quoted)).fingerprint
    other = body.format(attrs="{n = 2 : i32}")
    assert canonicalize(parse_module(unquoted)).fingerprint != canonicalize(parse_module(other)).fingerprint


_ADD = "%add {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n"


def test_operands_of_users_paired_bottom_up_pair_by_position_before_constants_pair_by_value():
    # eval vs train (torch.nn.Dropout): the train graph adds a u64 seed constant 0 and another f32 0. The sum's add and
    # reduce pair bottom-up (through the bias); the reduce's f32 0 must then pair with the reduce's f32 0, not with
    # the seed by value alone, which reported a dtype change (f32 -> u64) no one made.
    left = ("HloModule t\n" + _ADD + "ENTRY %e {\n  %p = f32[8] parameter(0)\n  %q = f32[8] parameter(1)\n"
            "  %a = f32[8] add(%p, %q)\n  %z = f32[] constant(0)\n"
            "  %r = f32[] reduce(%a, %z), dimensions={0}, to_apply=%add\n  ROOT %t = (f32[]) tuple(%r)\n}\n")
    right = ("HloModule t\n" + _ADD + "ENTRY %e {\n  %p = f32[8] parameter(0)\n  %q = f32[8] parameter(1)\n"
             "  %seed = u64[] constant(0)\n  %bits = u64[8] broadcast(%seed), dimensions={}\n"
             "  %mask = f32[8] convert(%bits)\n  %zero = f32[] constant(0)\n"
             "  %b = f32[8] broadcast(%zero), dimensions={}\n  %keep = f32[8] maximum(%mask, %b)\n"
             "  %m = f32[8] multiply(%p, %keep)\n  %a = f32[8] add(%m, %q)\n  %z = f32[] constant(0)\n"
             "  %r = f32[] reduce(%a, %z), dimensions={0}, to_apply=%add\n"
             "  ROOT %t = (f32[], u64[8]) tuple(%r, %bits)\n}\n")
    m = _match(left, right)
    assert (m.l2r["a"], m.l2r["r"]) == ("a", "r")
    assert m.l2r["z"] == "z"


# -- one test per matcher, on the scenarios of hlo_diff's own tests (xla/hlo/tools/hlo_diff) ----------------------

def _start(left: str, right: str):
    """A matching with nothing paired yet, and both sides' instructions operands first."""
    from hlodiff.diff.mapping import Matching
    from hlodiff.graph.fingerprint import _postorder

    lcm, rcm = canonicalize(parse_module(left)), canonicalize(parse_module(right))
    m = Matching(lcm.entry, rcm.entry, left_module=lcm, right_module=rcm)
    return m, _postorder(lcm.entry), _postorder(rcm.entry)


_FIVE = ("HloModule module, is_scheduled=true\n\nENTRY entry {{\n" +
         "".join(f"  constant.{i} = f32[] constant(0)\n" for i in range(5)) +
         "  add.0 = f32[] add(constant.0, constant.1)\n  {mid} = f32[] {op}(constant.2, constant.3)\n"
         "  add.3 = f32[] add(add.0, {mid})\n  add.4 = f32[] add(add.3, constant.4)\n}}\n")


def test_top_down_stops_at_an_instruction_of_another_opcode():
    """hlo_diff top_down_matcher_test.cc, GreedyTopDownMatcherStopAtUnmatchedType: from the paired roots, operands
    pair downwards until an opcode differs (subtract.1 vs add.1); nothing below it is paired by position."""
    from hlodiff.diff.matchers import match_top_down

    m, left_order, _ = _start(_FIVE.format(mid="subtract.1", op="subtract"), _FIVE.format(mid="add.1", op="add"))
    m.add("add.4", "add.4", "root")
    match_top_down(m, left_order)
    assert m.l2r == {"add.4": "add.4", "add.3": "add.3", "constant.4": "constant.4", "add.0": "add.0",
                     "constant.0": "constant.0", "constant.1": "constant.1"}


def test_exact_pairs_equal_subgraphs_only_where_the_pairing_is_unambiguous():
    """hlo_diff exact_subgraph_matcher_test.cc: subgraphs with equal hashes pair, each node with its counterpart.
    On GreedyTopDownMatcherStopAtUnmatchedType's modules, add.0 computes the same value as the right's add.1 (both
    add two zeros): one left, two right candidates, so exact matching leaves it to the matchers that look at
    users; subtract.1 has no equal at all. The five equal constants pair in order."""
    from hlodiff.diff.matchers import match_exact

    m, left_order, right_order = _start(_FIVE.format(mid="subtract.1", op="subtract"),
                                        _FIVE.format(mid="add.1", op="add"))
    match_exact(m, left_order, right_order)
    assert m.l2r == {f"constant.{i}": f"constant.{i}" for i in range(5)}


def test_bottom_up_pairs_users_of_paired_operands_with_the_same_opcode():
    """hlo_diff bottom_up_matcher_test.cc, GreedyLimitedCandidatesBottomUpMatcher: with the constants and add.0
    paired, add.3 pairs through add.0 and add.4 through add.3; subtract.1 has only a user of another opcode (add.1)
    across from it and stays unpaired."""
    from hlodiff.diff.matchers import match_bottom_up

    m, left_order, right_order = _start(_FIVE.format(mid="subtract.1", op="subtract"),
                                        _FIVE.format(mid="add.1", op="add"))
    for name in [f"constant.{i}" for i in range(5)] + ["add.0"]:
        m.add(name, name, "manual")
    match_bottom_up(m, left_order, right_order)
    assert (m.l2r.get("add.3"), m.l2r.get("add.4")) == ("add.3", "add.4")
    assert "subtract.1" not in m.l2r and "add.1" not in m.r2l


def test_leftover_parameters_pair_by_properties_not_position():
    """hlo_diff hlo_computation_graph_matcher_test.cc, MatchComputationParams: parameters pair by shape, then by
    op_name, source line and sharding, whatever their numbers: p24 (source line 42) goes with p15, not with the
    first f32[10] parameter left over (p12 or p13)."""
    left = ("HloModule module, is_scheduled=true\n\nENTRY entry {\n"
            '  p21 = f32[10]{0} parameter(0), metadata={op_name="first-phase"}\n'
            '  p22 = f32[10]{0:T(128)} parameter(1), metadata={op_name="first-phase.multiple-matches", '
            'source_file="test.cc", source_line=43}\n'
            "  p23 = f32[20]{0} parameter(2)\n"
            '  p24 = f32[10]{0} parameter(3), metadata={source_file="test.cc", source_line=42}\n'
            "  p25 = f32[10]{0} parameter(4), sharding={maximal device=1}\n"
            "  p26 = f32[30]{0} parameter(5), sharding={maximal device=1}\n\n"
            "  add21 = f32[10]{0} add(p21, p22)\n}\n")
    right = ("HloModule module, is_scheduled=true\n\nENTRY entry {\n"
             '  p11 = f32[10]{0} parameter(0), metadata={op_name="first-phase"}\n'
             '  p12 = f32[10]{0} parameter(1), metadata={op_name="first-phase.multiple-matches"}\n'
             '  p13 = f32[10]{0} parameter(2), metadata={op_name="first-phase.multiple-matches"}\n'
             "  p14 = f32[20]{0} parameter(3)\n"
             '  p15 = f32[10]{0} parameter(4), metadata={source_file="test.cc", source_line=42}\n'
             "  p16 = f32[10]{0} parameter(5), sharding={maximal device=1}\n"
             "  p17 = f32[30]{0} parameter(6)\n"
             '  p18 = f32[10]{0:T(128)} parameter(7), metadata={source_file="test.cc", source_line=43}\n\n'
             "  ROOT add22 = f32[10]{0} add(p11, p18)\n}\n")
    m = _match(left, right)
    assert m.l2r == {"p21": "p11", "p22": "p18", "p23": "p14", "p24": "p15", "p25": "p16", "p26": "p17",
                     "add21": "add22"}


def test_tie_break_pairs_one_candidate_among_several_by_source_line():
    """The tie-break decides as soon as one side has a choice (one left parameter, three right ones)."""
    from hlodiff.diff.similarity import tie_break

    left = _params([("w", 10), ("u", 12)])
    right = _params([("w", 10), ("a", 11), ("b", 12), ("c", 13)]).replace('op_name="b"', 'op_name="u"')
    lcm, rcm = canonicalize(parse_module(left)), canonicalize(parse_module(right))
    assert tie_break(lcm.entry, rcm.entry, ["u"], ["a", "b", "c"]) == [("u", "b")]


def test_a_matched_pair_whose_operand_changed_shape_is_changed():
    """hlo_diff hlo_diff_result_test.cc, MatchedDifferentShapeMarkAsChanged: parameter.0 went from f32 to f64;
    it and its user add.0 are changed, parameter.1 is not."""
    from hlodiff.diff import diff_modules

    left = ("HloModule module, is_scheduled=true\n\nENTRY entry {\n  parameter.0 = f32[] parameter(0)\n"
            "  parameter.1 = f32[] parameter(1)\n  add.0 = f32[] add(parameter.0, parameter.1)\n}\n")
    right = left.replace("parameter.0 = f32[]", "parameter.0 = f64[]")
    d = diff_modules(parse_module(left), parse_module(right))
    changed = {(c.left.name, c.right.name): c.kinds for c in d.changes if c.side == "changed"}
    assert changed == {("parameter.0", "parameter.0"): ("element_type",), ("add.0", "add.0"): ("operand_shape",)}
    assert d.stats["unchanged"] == 1 and [c.kind for c in d.causes] == ["dtype"]


_TRACED = """HloModule module, is_scheduled=true

fused_computation0 {{
  param_0 = f32[] parameter(0)
  ROOT negate.0 = f32[] negate(param_0)
}}

fused_computation1 {{
  param_1 = f32[] parameter(0)
  ROOT abs.0 = f32[] abs(param_1)
}}

ENTRY entry {{
  constant.0 = f32[] constant(0)
  bitcast.0 = f32[] bitcast(constant.0)
  copy.0 = f32[] copy(bitcast.0)
  fusion.0 = f32[] fusion(bitcast.0), kind=kLoop, calls=fused_computation{a}
  fusion.1 = f32[] fusion(copy.0), kind=kLoop, calls=fused_computation{b}
  ROOT add.0 = f32[] add(fusion.0, fusion.1)
}}
"""


def test_fusions_that_swapped_bodies_pair_by_what_they_compute():
    """hlo_diff bottom_up_matcher_test.cc, GreedyLimitedCandidatesBottomUpMatcherHloValueTraced: the two fusions
    read the same value (through a bitcast and a copy) and swapped their bodies; each pairs with the fusion that
    computes what it computes (fusion.0 with fusion.1), not with the one at its position."""
    m = _match(_TRACED.format(a="0", b="1"), _TRACED.format(a="1", b="0"))
    assert (m.l2r["fusion.0"], m.l2r["fusion.1"]) == ("fusion.1", "fusion.0")
    assert all(m.l2r[n] == n for n in ("constant.0", "bitcast.0", "copy.0", "add.0"))


def _causes(left, right) -> list[tuple[str, str | None]]:
    report = cli_json("compare", str(left), str(right), codes=(0, 1))
    return [(c["kind"], c.get("summary")) for c in report["causes"]]


def test_an_input_moved_to_other_users_is_not_reported_baked():
    """Review 7: a loss dict gains an l2 term every third step; the backward then adds ``grad * 1`` beside SGD's
    ``-lr``, and the lr parameter (sgd.py:375 on both sides) moved to other users. It must stay paired with
    itself: no "input became the constant 1" (the report told the user to start an lr warm-up above 0)."""
    dump = FIXTURES / "scenarios/torch_xla/rev7_loss_dict/record/xla_dump"
    left, right = sorted(dump.glob("module_000[03]*before_optimizations.txt"))
    kinds = [kind for kind, _ in _causes(left, right)]
    assert "constant" not in kinds and "ops" in kinds


def test_an_lr_of_zero_baked_on_the_first_step_is_still_reported():
    """The look-alike sharing the evidence (a scalar parameter on one side, a constant at its place on the other):
    a warm-up from lr 0 bakes the 0 on the first step and passes the lr as device data after."""
    dump = FIXTURES / "scenarios/torch_xla/warmup_from_zero/dump"
    left, right = sorted(dump.glob("module_000[01]*before_optimizations.txt"))
    causes = _causes(left, right)
    assert any(kind == "constant" and "baked into the left graph" in summary for kind, summary in causes), causes


def test_each_pair_keeps_the_matcher_that_made_it_across_the_one_undone_pair(monkeypatch):
    """``Matching.how`` is kept as runs over the pairing order, not a map per pair: each pair still answers with the
    matcher that was running when it appeared, and the lr parameter of review 7, paired top-down with a constant
    and then undone and paired again with its moved twin, answers "leftover" while the pairs after it keep theirs."""
    import hlodiff.diff.matchers as matchers

    dump = FIXTURES / "scenarios/torch_xla/rev7_loss_dict/record/xla_dump"
    lcm, rcm = (canonicalize(parse_module(p.read_text()))
                for p in sorted(dump.glob("module_000[03]*before_optimizations.txt")))
    seen: dict[str, str] = {}  # left name -> the matcher running when it first appeared in l2r

    def watched(fn, kind):
        def run(m, *args):
            out = fn(m, *args)
            seen.update((name, kind) for name in m.l2r if name not in seen)
            return out
        return run

    for name, kind in (("match_exact", "exact"), ("match_top_down", "top_down"), ("match_bottom_up", "bottom_up"),
                       ("match_leftovers", "leftover"), ("unbake_moved_inputs", "leftover")):
        monkeypatch.setattr(matchers, name, watched(getattr(matchers, name), kind))
    m = match_computations(lcm.entry, rcm.entry, lcm, rcm)
    seen[lcm.entry.root] = "root"
    undone = [name for name, how in m.how.items() if how == "leftover"]
    assert undone and all(lcm.entry.insts[name].opcode == "parameter" for name in undone)
    assert list(m.how.items()) == [(name, "leftover" if name in undone else seen[name]) for name in m.l2r]
    assert {"exact", "top_down", "bottom_up"} <= set(m.how.values())


def test_undone_pairs_leave_every_other_pair_its_matcher():
    """Pairs undone inside a matcher's run, at its start and a whole run: the rest keep their matchers, in order,
    as a map written pair by pair (the model here) would have them."""
    from hlodiff.diff.mapping import Matching

    m, model = Matching(None, None), {}
    steps = [("add", "a", "exact"), ("add", "b", "exact"), ("add", "c", "top_down"), ("add", "d", "top_down"),
             ("add", "e", "bottom_up"), ("drop", "b"), ("drop", "c"), ("drop", "d"), ("add", "b", "leftover"),
             ("add", "c", "leftover"), ("drop", "a"), ("add", "f", "exact")]
    for op, name, *how in steps:
        if op == "add":
            assert m.add(name, name.upper(), how[0])
            model[name] = how[0]
        else:
            m.drop(name)
            del model[name]
        assert list(m.how.items()) == list(model.items())
