"""The table of modules JAX compiles for an operation run outside jit (hlodiff/hlo/jax_eager_ops.py): one test per
row, through both readers of the table.

* every row: the cost report does not judge the module's donation (an eager op's input lives on in the user's code);
* a ``primitive`` row: a family of its one-op modules is an eager op by its name;
* a ``numpy`` row: its name alone does not make one (a user's own jitted function may share it): its stacks decide,
  one user line for an eager call.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hlodiff.cost.donation import donation_facts, is_jax_own_module
from hlodiff.cost.source import SourceLocator
from hlodiff.explain.families import Family
from hlodiff.explain.patterns import is_eager_op
from hlodiff.graph import canonicalize
from hlodiff.hlo.jax_eager_ops import EAGER_OPS, NUMPY, PRIMITIVE, PRIVATE
from hlodiff.hlo.parser import parse_module


def _text(name: str, metadata: str = "") -> str:
    """A module updating its first input (what the cost report would call an undonated update in a user's step)."""
    meta = f", metadata={{{metadata}}}" if metadata else ""
    return (f"HloModule jit_{name}\n\nENTRY main {{\n  p0 = f32[4,2] parameter(0)\n  p1 = f32[4,2] parameter(1)\n"
            f"  ROOT r = f32[4,2] subtract(p0, p1){meta}\n}}\n")


def _family(text: str) -> Family:
    module = parse_module(text)
    graph = SimpleNamespace(instructions=3, compiled=True, _canonical=canonicalize(module))
    return Family(module.name, module.name, [graph])


@pytest.mark.parametrize("op", EAGER_OPS, ids=lambda op: op.name)
def test_each_eager_op_is_told_as_jax_s_own(op):
    text = _text(op.name)
    module = parse_module(text)
    assert is_jax_own_module(module.name) and donation_facts(module, SourceLocator(module)) == ([], [])
    user_step = parse_module(_text("train_step"))
    assert donation_facts(user_step, SourceLocator(user_step))[0]  # the same module, the user's: judged
    assert op.kind in (PRIMITIVE, NUMPY, PRIVATE)
    assert is_eager_op(_family(text)) == (op.kind == PRIMITIVE)
    if op.kind == NUMPY:  # called at one user line, with no frame of a function of that name: an eager call
        called = _text(op.name, 'op_name="jit(x)/sub" source_file="/home/u/train.py" source_line=7')
        assert is_eager_op(_family(called))
