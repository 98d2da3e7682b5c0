"""Rules of hlodiff's peak-memory estimate, each on a small module written for it (the whole estimate is checked
against XLA's own figure on the real fixture modules in tests/test_cost.py).

Both rules were found on a real torch_xla 2.9 optimized CPU module of a 4-layer transformer step (XLA's total
17,689,168 bytes): the estimate said 218,562,700 because every computation a ``call`` runs (the CPU backend outlines
parallel work into 156 of them) was counted as if it were a reducer's scalars; after the fix it says 17,682,888.
"""

from __future__ import annotations

from hlodiff.cost.peak import estimate_peak
from hlodiff.hlo import parse_module

N = 1024  # f32[N]: 4 KiB, a multiple of the 64-byte alignment of temporaries
KIB4 = 4 * N


def test_a_called_computation_counts_once_as_the_call_not_again_as_reducer_scalars():
    called = parse_module(f"""HloModule t
%body (x: f32[{N}]) -> f32[{N}] {{
  %x = f32[{N}] parameter(0)
  %y = f32[{N}] multiply(%x, %x)
  ROOT %z = f32[{N}] add(%y, %x)
}}
ENTRY %e (p: f32[{N}]) -> f32[{N}] {{
  %p = f32[{N}] parameter(0)
  ROOT %c = f32[{N}] call(%p), to_apply=%body
}}
""")
    # the parameter, the call's result, and at most the body's two temporaries while it runs
    assert KIB4 * 2 <= estimate_peak(called) <= KIB4 * 4


def test_a_reducers_scalars_still_count():
    reduced = parse_module(f"""HloModule t
%add (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}}
ENTRY %e (p: f32[{N}]) -> f32[] {{
  %p = f32[{N}] parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %zero), dimensions={{0}}, to_apply=%add
}}
""")
    # parameter + constant + the result + the reducer's three scalars (a, b, s)
    assert estimate_peak(reduced) == KIB4 + 4 + 4 + 3 * 4


def test_an_output_written_into_a_donated_parameter_takes_no_buffer_of_its_own():
    body = (f"\nENTRY %e (p: f32[{N}]) -> f32[{N}] {{\n  %p = f32[{N}] parameter(0)\n"
            f"  ROOT %n = f32[{N}] negate(%p)\n}}\n")
    donated = parse_module("HloModule t, input_output_alias={ {}: (0, {}, may-alias) }" + body)
    kept = parse_module("HloModule t" + body)
    assert estimate_peak(kept) == 2 * KIB4
    assert estimate_peak(donated) == KIB4
