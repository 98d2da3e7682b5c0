"""Round 22 (blind, small): a pytree's metadata holding functions made anew on each call (an optimizer of closures
kept as a static field of a TrainState, rebuilt every epoch to change its rate) is told as such, and the pytree
look-alikes that share JAX's "pytree metadata" evidence keep their rows."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of

from hlodiff.dumps.jax_cache_miss import JaxReason
from hlodiff.explain.jax_pytree_reasons import metadata_functions

SC = FIXTURES / "scenarios" / "jax"


def _doc(name: str, codes=(0, 1)) -> dict:
    folder = SC / name
    return cli_json("explain-recompile", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=codes)


def test_an_optimizer_rebuilt_as_static_metadata_is_told_to_be_built_once():
    """r22_jx_tx_rebuild_epoch: the first try said 'pass arguments with the same structure every call (same keys,
    same container types)', which the user already does."""
    doc = _doc("r22_jx_tx_rebuild_epoch", codes=(1,))
    fix = doc["headline"]["fix"]
    assert "`TrainState`" in fix and "inject_hyperparams" in fix and "same keys" not in fix
    assert "cache_key_pytree_functions" in fix_rules_of(doc)


@pytest.mark.parametrize("name, rule", [
    ("r17_jx_pytree_aux_identity", "cache_key_pytree_identity"),   # an Info without __eq__: no function in it
    ("x7c_jx_vjp_fn_arg", "cache_key_pullback"),                  # a pullback's metadata holds functions too
    ("jax_namedtuple_restore", "cache_key_pytree"),               # a NamedTuple restored as a tuple
])
def test_pytree_look_alikes_keep_their_rows(name, rule):
    doc = _doc(name)
    assert rule in fix_rules_of(doc) and "cache_key_pytree_functions" not in fix_rules_of(doc)


def test_metadata_that_differ_by_value_hold_no_new_functions():
    assert "cache_key_pytree_functions" not in fix_rules_of(_doc("jax_dataclass_meta_lr"))


_NOW = "<class '__main__.S'> with pytree metadata (Tx(init=<function mk.<locals>.init at 0x7f01>),)"


@pytest.mark.parametrize("before, found", [
    ("<class '__main__.S'> with pytree metadata (Tx(init=<function mk.<locals>.init at 0x7f99>),)", "S:mk.<locals>.init"),
    ("<class '__main__.S'> with pytree metadata (Tx(init=<function other at 0x7f99>),)", ""),    # another function
    ("<class '__main__.T'> with pytree metadata (Tx(init=<function mk.<locals>.init at 0x7f99>),)", ""),  # another node
    ("<class '__main__.S'> with pytree metadata <__main__.Info object at 0x7f99>", ""),           # no function
])
def test_new_functions_are_read_from_jaxs_pytree_reason(before, found):
    assert metadata_functions(JaxReason("pytree", None, _NOW, before, _NOW)) == found
