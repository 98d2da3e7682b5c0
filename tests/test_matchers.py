"""Matcher behaviours from the scenarios of XLA's hlo_diff tests, each on a small module written for it.

Each test states what a user reads in the diff: which instruction is reported as changed, and against what."""

from __future__ import annotations

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
