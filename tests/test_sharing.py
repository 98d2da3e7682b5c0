"""Two modules read for one comparison share the objects of their equal values (issue 34's memory), and nothing a
reader sees changes: the modules equal those read apart, with the accelerator and without: line numbers, and the
attributes of instructions written alike on either side."""

from __future__ import annotations

import contextlib
import copy
import pickle

import pytest

from test_accel import _switch
from hlodiff.accel import native
from hlodiff.hlo import parse_module
from hlodiff.hlo.model import SharedAttributes
from hlodiff.hlo.sharing import shared_values
from hlodiff.hlo.shapes import _cache as shape_cache

LEFT = """HloModule m

region_0.1 {
  a.2 = f32[] parameter(0)
  b.3 = f32[] parameter(1)
  ROOT add.4 = f32[] add(a.2, b.3)
}

ENTRY main.9 {
  p.5 = f32[4,16]{1,0} parameter(0)
  c.6 = f32[] constant(0)
  r.7 = f32[4]{0} reduce(p.5, c.6), dimensions={1}, to_apply=region_0.1
  b.8 = f32[4,16]{1,0} broadcast(r.7), dimensions={0}
  b.10 = f32[4,16]{1,0} broadcast(r.7), dimensions={0}
  ROOT m.11 = f32[4,16]{1,0} multiply(b.8, b.10)
}
"""
RIGHT = LEFT.replace("constant(0)", "constant(1)").replace("multiply(b.8, b.10)", "add(b.10, b.8)")
BOTH = [True, False] if native is not None else [False]


def _read(text: str):
    shape_cache.clear()
    return parse_module(text, first_line=1000)  # line numbers past the ones Python keeps one object for


def _insts(module):
    return {i.name: i for c in module.computations for i in c.instructions}


@pytest.mark.parametrize("use_native", BOTH, ids=lambda on: "accelerator" if on else "pure Python")
def test_the_right_module_holds_the_left_modules_objects(use_native, monkeypatch):
    if native is not None:
        _switch(monkeypatch, use_native)
    with shared_values():
        left, right = _read(LEFT), _read(RIGHT)
    apart_left, apart_right = _read(LEFT), _read(RIGHT)
    assert (left, right) == (apart_left, apart_right)  # every field a reader sees, as read apart
    li, ri = _insts(left), _insts(right)
    for name, inst in ri.items():
        assert inst.line is li[name].line and inst.line > 1000
    # attributes written alike: one dict, on either side; a different text gets its own
    assert ri["b.8"].attrs is li["b.8"].attrs is li["b.10"].attrs and isinstance(li["b.8"].attrs, SharedAttributes)
    assert ri["r.7"].attrs is li["r.7"].attrs and ri["r.7"].attrs is not li["b.8"].attrs
    assert ri["r.7"].attrs == {"dimensions": "{1}", "to_apply": "region_0.1"}
    # read apart, nothing is shared
    ai, bi = _insts(apart_left), _insts(apart_right)
    assert bi["r.7"].line is not ai["r.7"].line and bi["b.8"].attrs is not ai["b.8"].attrs


@pytest.mark.parametrize("use_native", BOTH, ids=lambda on: "accelerator" if on else "pure Python")
def test_shared_attributes_refuse_a_write_and_copy_as_a_plain_dict(use_native, monkeypatch):
    if native is not None:
        _switch(monkeypatch, use_native)
    with shared_values():
        left = _read(LEFT)
    li = _insts(left)
    shared = li["b.8"].attrs
    with pytest.raises(TypeError):
        shared["dimensions"] = "{1}"
    with pytest.raises(TypeError):
        shared.update(x="1")
    assert li["b.10"].attrs == {"dimensions": "{0}"}  # the other instruction is unchanged
    li["b.8"].attrs = {**shared, "dimensions": "{1}"}  # how an instruction gets attributes of its own
    assert li["b.10"].attrs == {"dimensions": "{0}"}
    for copied in (pickle.loads(pickle.dumps(left)), copy.deepcopy(left)):
        assert copied == left
        attrs = _insts(copied)["b.10"].attrs
        assert type(attrs) is dict and attrs == {"dimensions": "{0}"}
        attrs["dimensions"] = "{1}"  # a copy's attrs are its own


def test_sharing_ends_with_the_block_and_nests():
    with shared_values():
        with shared_values():
            inner = _read(LEFT)
        still = _read(LEFT)  # the outer block still shares
    after = _read(LEFT)
    ii, si, ai = _insts(inner), _insts(still), _insts(after)
    assert si["r.7"].line is ii["r.7"].line and si["b.8"].attrs is ii["b.8"].attrs
    assert ai["r.7"].line is not ii["r.7"].line and type(ai["b.8"].attrs) is dict


@pytest.mark.parametrize("use_native", BOTH, ids=lambda on: "accelerator" if on else "pure Python")
def test_the_graphs_compare_keeps_of_a_dump_share_their_attributes(use_native, monkeypatch):
    """``compare DUMP`` keeps every graph it compares (a dump of 200 graphs of one model held each one's own
    attributes: 741 MB for 40 graphs of the 17K-instruction model, 497 MB shared); its report is the one made
    without sharing."""
    from conftest import FIXTURES

    from hlodiff import api
    from hlodiff.hlo import sharing

    if native is not None:
        _switch(monkeypatch, use_native)
    dump = str(FIXTURES / "torch_xla/collate_buckets/graphs.hlo.0")
    shared = api.compare_dump(dump)
    step = shared.steps[0]
    left = _insts(step.left._module)
    alike = [i for c in step.right._module.computations for i in c.instructions if i.attrs and i.name in left
             and i.attrs == left[i.name].attrs]
    assert alike and all(i.attrs is left[i.name].attrs for i in alike)
    monkeypatch.setattr(sharing, "shared_values", _apart)
    assert api.compare_dump(dump).to_json() == shared.to_json()


@contextlib.contextmanager
def _apart():
    yield


@pytest.mark.parametrize("use_native", BOTH, ids=lambda on: "accelerator" if on else "pure Python")
def test_computations_share_their_empty_attributes_and_removals_until_they_have_their_own(use_native, monkeypatch):
    """Issue 34: an unrolled step's 13,600 small reductions a side each held an empty attrs, an empty dict of what
    the passes removed and an empty list of side effects (5 MB for the 300K pair). They share one read-only empty
    dict (and the empty tuple); a computation with attributes, or one a pass took an instruction from, has its own,
    and what a reader sees is the same: the report counts the one dead instruction, its computation keeps it."""
    from hlodiff.graph import Normalization, canonicalize

    if native is not None:
        _switch(monkeypatch, use_native)
    text = LEFT.replace("ROOT add.4", "n.1 = f32[] negate(a.2)\n  ROOT add.4")  # dead in the reduction
    text = text.replace("ENTRY main.9 {", "other.12 {\n  q.13 = f32[] parameter(0)\n  ROOT q.14 = f32[] negate(q.13)\n"
                        "}, execution_thread=\"side\"\n\nENTRY main.9 {")
    module = _read(text)
    region, other, main = module.computations
    assert region.attrs == {} and region.attrs is main.attrs and other.attrs == {"execution_thread": '"side"'}
    with pytest.raises(TypeError):
        main.attrs["execution_thread"] = '"main"'
    assert region.attrs == {} and pickle.loads(pickle.dumps(module)) == module == copy.deepcopy(module)
    cm = canonicalize(module, Normalization())
    reduce_, entry = cm.computations["region_0.1"], cm.entry
    assert [r.count for r in cm.reports if r.name == "dead_code"] == [1]
    assert list(reduce_.removed) == ["n.1"] and "n.1" not in reduce_.insts
    assert entry.removed == {} and entry.removed is not reduce_.removed
    with pytest.raises(TypeError):
        entry.removed["x"] = entry.insts["p.5"]
    assert reduce_.removed is not main.attrs and entry.removed is main.attrs  # the one shared empty dict
