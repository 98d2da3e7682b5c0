"""One grammar rule per test, on tiny strings cut from real dumps (the corpus file each comes from is named)."""

from __future__ import annotations

import pytest

from hlodiff.errors import HloParseError
from hlodiff.hlo import format_module, parse_module
from hlodiff.hlo.model import UNBOUNDED
from hlodiff.hlo.shapes import parse_shape


def entry(*lines: str) -> str:
    return "HloModule m\n\nENTRY %e {\n" + "\n".join("  " + line for line in lines) + "\n}\n"


def test_names_with_dots_and_dashes_and_optional_percent():
    m = parse_module(entry("%p827.13201 = f32[] parameter(0)",
                           "get-tuple-element.13249 = f32[] negate(p827.13201)"))
    assert [i.name for i in m.entry.instructions] == ["p827.13201", "get-tuple-element.13249"]
    assert m.entry.instructions[1].operands == ("p827.13201",)


def test_typed_and_untyped_operands_give_the_same_names():
    typed = parse_module(entry("%x = f32[2]{0} parameter(0)",
                               "ROOT %a = f32[2]{0} add(f32[2]{0} %x, f32[2]{0} %x)"))
    untyped = parse_module(entry("%x = f32[2]{0} parameter(0)", "ROOT %a = f32[2]{0} add(%x, %x)"))
    assert typed == untyped
    assert typed.entry.root.operands == ("x", "x")


def test_tuple_typed_operand_and_index_comments():
    # torch_xla prints tuple-typed operands; long lists carry /*index=5*/ markers (test_as_stride_bug).
    m = parse_module(entry(
        "%p = (f32[], s32[2]{0}) parameter(0)",
        "%g = f32[] get-tuple-element((f32[], s32[2]{0}) %p), index=0",
        "ROOT %t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) "
        "tuple(f32[] %g, f32[] %g, f32[] %g, f32[] %g, f32[] %g, /*index=5*/f32[] %g)"))
    assert m.entry.instructions[1].operands == ("p",)
    assert m.entry.instructions[1].attrs == {"index": "0"}
    assert m.entry.root.operands == ("g",) * 6
    assert len(m.entry.root.shape.tuple_shapes) == 6


def test_root_defaults_to_last_instruction_and_entry_to_last_computation():
    # u4_all_gather_1x8.hlo: a bare computation, no header, no ENTRY, no ROOT.
    m = parse_module("e {\n  a = u4[1024,512]{1,0:E(4)} parameter(0)\n"
                     "  b = u4[1024,4096]{1,0:E(4)} all-gather(a), dimensions={1}\n}")
    assert m.name == ""
    assert m.entry.name == "e"
    assert m.entry.root.name == "b"
    assert m.entry.root.shape.layout.element_size_bits == 4


def test_computation_signature_with_tuple_result_and_comment():
    m = parse_module("HloModule m\n\n%c (Arg_0.1: s32[], Arg_1.1: (u32[20], u32[])) -> (s32[], /*index=1*/u32[]) {\n"
                     "  %Arg_0.1 = s32[] parameter(0)\n  %Arg_1.1 = (u32[20], u32[]) parameter(1)\n"
                     "  %g = u32[] get-tuple-element(%Arg_1.1), index=1\n"
                     "  ROOT %t = (s32[], u32[]) tuple(%Arg_0.1, %g)\n}\n")
    params, result = m.entry.signature
    assert [name for name, _ in params] == ["Arg_0.1", "Arg_1.1"]
    assert params[1][1].is_tuple and result.is_tuple


def test_header_attributes_are_kept_verbatim():
    text = ("HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, "
            "input_output_alias={ {0}: (0, {}, may-alias) }, num_partitions=8\n\nENTRY %e {\n"
            "  ROOT %p = f32[2]{0} parameter(0)\n}\n")
    m = parse_module(text)
    assert m.attrs == {
        "is_scheduled": "true",
        "entry_computation_layout": "{(f32[2]{0})->f32[2]{0}}",
        "input_output_alias": "{ {0}: (0, {}, may-alias) }",
        "num_partitions": "8",
    }


def test_unknown_attributes_and_quoted_values_with_commas_survive_printing():
    line = ('ROOT %c = f32[2]{0} custom-call(%p), custom_call_target="Foo,Bar", '
            'backend_config={"a":{"b":[1,2]}}, future_attr={x=1, y={2}}, '
            'metadata={op_type="aten__mul" op_name="a, \\"b\\"" source_file="t.py" source_line=3}')
    m = parse_module(entry("%p = f32[2]{0} parameter(0)", line))
    root = m.entry.root
    assert root.attrs["custom_call_target"] == '"Foo,Bar"'
    assert root.attrs["future_attr"] == "{x=1, y={2}}"
    assert parse_module(format_module(m)) == m


def test_multi_line_instruction_with_operands_on_separate_lines():
    # scatter_add.hlo spreads one instruction over many lines.
    text = ("add {\n  %p0 = f32[] parameter(0)\n  %p1 = f32[] parameter(1)\n  ROOT %sum = f32[] add(%p0, %p1)\n}\n"
            "scatter {\n  %o = f32[10,5] parameter(0)\n  %i = s32[24,1] parameter(1)\n"
            "  ROOT %s = f32[10,5] scatter(\n      f32[10,5] %o,\n      s32[24,1] %i\n    ),\n"
            "    update_window_dims={1,2},\n    to_apply=add\n}")
    m = parse_module(text)
    root = m.entry.root
    assert root.operands == ("o", "i")
    assert root.attrs == {"update_window_dims": "{1,2}", "to_apply": "add"}
    assert root.line == 9


def test_comments_everywhere():
    text = ("// RUN: something %s\n/* a block\n comment */\nHloModule m // trailing\n\n"
            "ENTRY e {\n  a = f32[] parameter(0) // why\n  ROOT b = f32[] negate(a)\n} // e\n// CHECK: foo\n")
    m = parse_module(text)
    assert [i.name for i in m.entry.instructions] == ["a", "b"]


def test_literals_kept_as_text():
    m = parse_module(entry("%a = f32[] constant(-inf)", "%b = f32[2,2]{1,0} constant({ {1, 2}, {3, 4} })",
                           "%c = f32[1000]{0} constant({...})", "%d = (f32[], pred[]) constant((1, true))",
                           "ROOT %t = (f32[], f32[2,2]{1,0}) tuple(%a, %b)"))
    literals = [i.literal for i in m.entry.instructions[:4]]
    assert literals == ["-inf", "{ {1, 2}, {3, 4} }", "{...}", "(1, true)"]


def test_iota_replica_groups_and_sharding_values():
    # jax_shardy_propagation_partitioning: replica_groups=[2,4]<=[8], iota shardings with T(1,0).
    m = parse_module("HloModule m\n\n%add {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
                     "  ROOT %s = f32[] add(%a, %b)\n}\n\n" + entry(
        "%x = f32[8]{0} parameter(0), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
        "ROOT %r = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups=[2,4]<=[8], to_apply=%add"
    ).split("\n", 2)[2])
    assert m.entry.instructions[0].attrs["sharding"] == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    assert m.entry.root.attrs["replica_groups"] == "[2,4]<=[8]"


@pytest.mark.parametrize("text,dims,dynamic", [
    ("f32[2,3]{1,0}", (2, 3), (False, False)),
    ("f32[<=16,8]", (16, 8), (True, False)),
    ("f32[?,8]", (UNBOUNDED, 8), (True, False)),
    ("f64[2, 4]", (2, 4), (False, False)),
    ("pred[]", (), ()),
])
def test_array_shapes(text, dims, dynamic):
    shape = parse_shape(text)
    assert shape.dims == dims and shape.dynamic == dynamic


def test_tiled_layout_memory_space_and_unknown_items():
    shape = parse_shape("bf16[8,128]{1,0:T(8,128)(2,1)E(16)S(1)L(4)}")
    layout = shape.layout
    assert layout.minor_to_major == (1, 0)
    assert layout.tiles == (("8", "128"), ("2", "1"))
    assert layout.element_size_bits == 16 and layout.memory_space == 1
    assert layout.extra == ("L(4)",)
    assert parse_shape(str(shape)) == shape


def test_tuple_shape_byte_size():
    shape = parse_shape("(f32[2,3]{1,0}, (s8[4]{0}, token[]), u4[3]{0})")
    assert shape.byte_size() == 24 + 4 + 2
    assert [s.element_type for s in shape.leaves()] == ["f32", "s8", "token", "u4"]


def test_stack_frame_table_resolves_to_python_stack():
    # The table layout of jax_shardy_propagation_partitioning.main.0_spmd.hlo.
    text = ('HloModule jit_f\n\nFileNames\n1 "/home/u/s.py"\n\nFunctionNames\n1 "<module>"\n2 "main"\n3 "main.<locals>.f"\n\n'
            "FileLocations\n1 {file_name_id=1 function_name_id=1 line=85 end_line=85 column=13 end_column=19}\n"
            "2 {file_name_id=1 function_name_id=2 line=65 end_line=65 column=19 end_column=49}\n"
            "3 {file_name_id=1 function_name_id=3 line=63 end_line=63 column=20 end_column=29}\n\n"
            "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n2 {file_location_id=2 parent_frame_id=2}\n"
            "3 {file_location_id=3 parent_frame_id=3}\n\n\n"
            "ENTRY %main {\n  ROOT %x = f32[] parameter(0), metadata={op_name=\"x\" stack_frame_id=3}\n}\n")
    m = parse_module(text)
    chain = m.stack_frames.resolve(3)
    assert [(f.function, f.line) for f in chain] == [("main.<locals>.f", 63), ("main", 65), ("<module>", 85)]
    assert parse_module(format_module(m)) == m


def test_unknown_opcode_is_accepted():
    m = parse_module(entry("%p = f32[] parameter(0)", "ROOT %x = f32[] brand-new-op(%p), new_attr=1"))
    assert m.entry.root.opcode == "brand-new-op"


def test_truncated_operand_list():
    m = parse_module(entry("%p = f32[] parameter(0)", "ROOT %t = (f32[], f32[], f32[]) tuple(%p, ...(+2))"))
    assert m.entry.root.operands == ("p",)
    assert m.entry.root.truncated_operands == 2


@pytest.mark.parametrize("text,where,words", [
    ("", "f.hlo:1:1", "no computations"),
    ("HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] add(a, a\n", "f.hlo:5:", "end of input"),
    ("HloModule m\n\nENTRY e {\n  a = f32[x] parameter(0)\n}\n", "f.hlo:4:11", "bad dimension"),
    ("HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(c)\n}\n", "f.hlo:5:20", "'c'"),  # at the undefined operand
    ("HloModule m\n\nENTRY e {\n  a = f32[] parameter(0), k=1, k=2\n}\n", "f.hlo:4:", "duplicate attribute"),
    ("HloModule m\n\nc {\n  a = f32[] parameter(0)\n\nENTRY e {\n  a = f32[] parameter(0)\n}\n", "f.hlo:6:1",
     "not closed"),
    ("\x00\x01garbage\x7f", "f.hlo:1:1", "expected 'HloModule'"),
    ("HloModule m\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, a)\n}\n", "f.hlo:5:3",
     "depends on itself"),
    ("HloModule m\n\nENTRY e {\n  b = f32[] negate(a)\n  ROOT a = f32[] negate(b)\n}\n", "f.hlo:", "cycle"),
    ("HloModule m\n\nc {\n  ROOT p = f32[] parameter(0)\n}\n\nc {\n  ROOT p = f32[] parameter(0)\n}\n",
     "f.hlo:7:1", "defined twice"),
    ("HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n\nENTRY f {\n  ROOT p = f32[] parameter(0)\n}\n",
     "f.hlo:7:1", "second ENTRY"),
    ("HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] negate(p)\n}\n", "f.hlo:5:3",
     "second ROOT"),
    ("HloModule m\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT q = f32[] parameter(0)\n}\n", "f.hlo:5:3",
     "used twice"),
    ("HloModule m\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT q = f32[] call(p), to_apply=nowhere\n}\n",
     "f.hlo:5:3", "not defined"),
    ("HloModule m\n\nf {\n  x = f32[] parameter(0)\n  ROOT a = f32[] call(x), to_apply=f\n}\n\n"
     "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT q = f32[] call(p), to_apply=f\n}\n", "f.hlo:5:3", "calls itself"),
])
def test_errors_name_file_line_and_column(text, where, words):
    with pytest.raises(HloParseError) as err:
        parse_module(text, path="f.hlo")
    assert str(err.value).startswith(where)
    assert words in str(err.value)


def test_first_line_offsets_positions_into_the_enclosing_file():
    with pytest.raises(HloParseError) as err:
        parse_module("HloModule m\n\nENTRY e {\n  a = f32[x] parameter(0)\n}\n", path="dump.hlo.0", first_line=101)
    assert str(err.value).startswith("dump.hlo.0:104:")


def test_recursion_reported_is_the_first_cycle_in_module_order_among_computations_calling_nothing():
    # Computations that call nothing are left out of the recursion walk (issue 34: an unrolled step has thousands);
    # the cycle reported stays the first one the walk meets in module order, through the leaves around it.
    leaf = "r{n} {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\n"
    call = "  {v} = f32[] call({x}), to_apply={f}\n"
    text = ("HloModule m\n\n" + leaf.format(n=0)
            + "g {\n  x = f32[] parameter(0)\n" + call.format(v="y", x="x", f="r0").replace("call(x)", "call(x, x)")
            + "  ROOT z = f32[] call(y), to_apply=h\n}\n\n" + leaf.format(n=1)
            + "h {\n  x = f32[] parameter(0)\n  ROOT w = f32[] call(x), to_apply=g\n}\n\n"
            + "a {\n  x = f32[] parameter(0)\n  ROOT w = f32[] call(x), to_apply=b\n}\n\n"
            + "b {\n  x = f32[] parameter(0)\n  ROOT w = f32[] call(x), to_apply=a\n}\n\n"
            + "ENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] call(p, p), to_apply=r1\n"
            + "  ROOT o = f32[] call(q), to_apply=g\n}\n")
    with pytest.raises(HloParseError) as err:
        parse_module(text, path="f.hlo")
    assert "computation 'g' calls itself (through 'w' in 'h')" in str(err.value)
    assert str(err.value).startswith("f.hlo:23:3")


def test_instructions_without_attributes_share_one_empty_attrs_that_cannot_change_them_all():
    # Issue 34: an empty dict per instruction without attributes was 12.6 MB a side of an unrolled 300K step.
    # They share one; writing to it would change every such instruction at once, so it raises instead, while a
    # copy of the module (a worker's pickle, deepcopy) still compares equal and reads empty.
    import copy
    import pickle

    m = parse_module(entry("%x = f32[2]{0} parameter(0)", "%n = f32[2]{0} negate(%x)   ",
                           "ROOT %a = f32[2]{0} add(%x, %n), metadata={op_name=\"add\"}"))
    x, n, a = m.entry.instructions
    assert x.attrs == {} and n.attrs == {} and x.attrs is n.attrs
    assert a.attrs == {"metadata": '{op_name="add"}'}
    with pytest.raises(TypeError):
        x.attrs["sharding"] = "{replicated}"
    assert n.attrs == {}
    for again in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert again == m and again.entry.instructions[0].attrs == {}
        again.entry.instructions[0].attrs = {"sharding": "{replicated}"}  # its own dict: the others stay empty
        assert again.entry.instructions[1].attrs == {} and again != m
