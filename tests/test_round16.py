"""Round 16 (blind, small): what the first try got wrong, on its real capture (fixtures/scenarios/jax/
r16_jx_restore_mesh_axis), and the row of diff.classify.SHARDING_FRONTEND_KEYS on one rule's small modules, beside
the look-alike that shares its evidence (another frontend attribute changing: an op attribute)."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json

JX = FIXTURES / "scenarios" / "jax"


def test_weights_restored_on_a_mesh_named_otherwise_are_a_sharding_change():
    """r16_jx_restore_mesh_axis: the weights restored onto a mesh of the same 4 devices with axis 'x' instead of
    'data'; the HLO differs only in Shardy's xla.sdy.sharding entries. The first try headed with 'an op attribute
    follows a Python value that changes' inside train_step (line 20); JAX's log names the argument's sharding."""
    run = JX / "r16_jx_restore_mesh_axis"
    doc = cli_json("explain-recompile", str(run / "dump"), "--jax-log", str(run / "stderr.log"), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "sharding" and head["location"]["line"] == 36, head
    assert "same sharding" in head["fix"] and "op attribute" not in head["fix"], head


_MODULE = """HloModule m{n}, entry_computation_layout={{(f32[8,16]{{1,0}})->f32[8,16]{{1,0}}}}

ENTRY %main (p0: f32[8,16]) -> f32[8,16] {{
  %p0 = f32[8,16]{{1,0}} parameter(0), sharding={{devices=[4,1]<=[4]}}, frontend_attributes={{{attrs}}}
  ROOT %n = f32[8,16]{{1,0}} negate(f32[8,16]{{1,0}} %p0)
}}
"""
_SDY = 'xla.sdy.sharding="#sdy.sharding<@mesh, [{{\\"{axis}\\"}}, {{}}]>"'


@pytest.mark.parametrize("left, right, kind", [
    (_SDY.format(axis="data"), _SDY.format(axis="x"), "sharding"),              # the row: a placement only
    ('_xla_compute_type="host"', '_xla_compute_type="device"', "attribute"),    # look-alike: another entry
    (_SDY.format(axis="data") + ', _xla_compute_type="host"',
     _SDY.format(axis="x") + ', _xla_compute_type="device"', "attribute"),     # both change: not a placement only
])
def test_a_frontend_attribute_naming_a_placement_is_a_sharding_change(tmp_path, left, right, kind):
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(_MODULE.format(n=0, attrs=left)), b.write_text(_MODULE.format(n=1, attrs=right))
    doc = cli_json("compare", a, b, codes=(1,))
    causes = doc["diff"]["causes"] if "diff" in doc else doc["causes"]
    assert {c["kind"] for c in causes} == {kind}, causes
