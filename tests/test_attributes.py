"""Typed attribute parsers (hlodiff.hlo.attributes) and constant literals (hlodiff.hlo.literal).

Inputs are copied from the real dumps in ../shared/corpus/hlo, or from XLA's own parser tests for forms the
corpus lacks (maximal/unknown shardings, source_target_pairs, buffer_donor); one grammar rule per test. The corpus
tests at the end run every parser over every attribute of every corpus file, and a Hypothesis test checks that
mutated real values only ever raise HloParseError.
"""

from __future__ import annotations

import math
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlodiff.errors import HloParseError
from hlodiff.hlo.attributes import (
    ATTRIBUTE_PARSERS,
    Alias,
    BackendConfig,
    BufferDonor,
    Metadata,
    OperandAlias,
    Window,
    WindowDim,
    called_computations,
    iota_devices,
    parse_attribute,
    parse_backend_config,
    parse_bool,
    parse_bool_list,
    parse_buffer_donor,
    parse_computation_layout,
    parse_dim_labels,
    parse_direction,
    parse_frontend_attributes,
    parse_input_output_alias,
    parse_int,
    parse_int_list,
    parse_metadata,
    parse_name_list,
    parse_output_operand_aliasing,
    parse_padding_config,
    parse_replica_groups,
    parse_shape_list,
    parse_sharding,
    parse_slice,
    parse_source_target_pairs,
    parse_string,
    parse_window,
    unescape,
    validate_attributes,
)
from hlodiff.hlo.literal import parse_literal

from conftest import CORPUS, need_shared  # ../shared/corpus/hlo: the whole-corpus tests skip without it


# -- called computations ----------------------------------------------------------------------------------------


def test_called_computations_reduce_to_apply_strips_percent():
    assert called_computations({"dimensions": "{1}", "to_apply": "%reduce_add"}) == ["reduce_add"]


def test_called_computations_while_lists_condition_before_body():
    attrs = {"body": "region_13.140", "condition": "region_15.188"}
    assert called_computations(attrs) == ["region_15.188", "region_13.140"]


def test_called_computations_conditional_branches_in_index_order():
    assert called_computations({"branch_computations": "{region_1.16, region_2.18}"}) == ["region_1.16",
                                                                                         "region_2.18"]


def test_called_computations_fusion_calls_and_repeated_names_once():
    attrs = {"kind": "kCustom", "calls": "ynn_fusion_0", "called_computations": "{%ynn_fusion_0, %other}"}
    assert called_computations(attrs) == ["ynn_fusion_0", "other"]


def test_called_computations_select_and_scatter_and_old_conditional():
    assert called_computations({"select": "%ge", "scatter": "%add"}) == ["ge", "add"]
    assert called_computations({"true_computation": "t", "false_computation": "f"}) == ["t", "f"]


def test_called_computations_none_for_plain_instruction():
    assert called_computations({"dimensions": "{1,0}", "metadata": "{op_name=\"x\"}"}) == []


def test_called_computations_rejects_garbage_name():
    with pytest.raises(HloParseError, match="to_apply"):
        called_computations({"to_apply": "a b"})


# -- metadata ---------------------------------------------------------------------------------------------------


def test_metadata_torch_xla_fields_typed():
    raw = ('{op_type="aten__permute" op_name="aten__permute" '
           'source_file="/home/ubuntu/kahfi/pytorch/torch/nn/modules/linear.py" source_line=114}')
    m = parse_metadata(raw)
    assert m == Metadata("aten__permute", "aten__permute", "/home/ubuntu/kahfi/pytorch/torch/nn/modules/linear.py",
                         114)


def test_metadata_stack_frame_id():
    m = parse_metadata('{op_name="jit(_threefry_split)/slice" stack_frame_id=1}')
    assert (m.op_name, m.stack_frame_id, m.source_file) == ("jit(_threefry_split)/slice", 1, None)


def test_metadata_unescapes_quotes_in_jax_op_names():
    m = parse_metadata("{op_name=\"state.params[\\'params\\'][\\'token_embedder\\'][\\'embedding\\']\"}")
    assert m.op_name == "state.params['params']['token_embedder']['embedding']"


def test_metadata_unescapes_double_quote_backslash_and_newline():
    m = parse_metadata(r'{op_name="say \"hi\"\\n" source_file="a\nb"}')
    assert m.op_name == 'say "hi"\\n'
    assert m.source_file == "a\nb"


def test_metadata_other_keys_kept_raw_in_order():
    m = parse_metadata('{op_type="dot" op_name="x" source_file="m.py" source_line=3 source_end_line=5 '
                       'source_column=7 profile_type={1,2} deduplicated_name="fusion.3" scheduling_name="s"}')
    assert m.extra == (("source_end_line", "5"), ("source_column", "7"), ("profile_type", "{1,2}"),
                       ("deduplicated_name", '"fusion.3"'), ("scheduling_name", '"s"'))
    assert m.get("deduplicated_name") == '"fusion.3"'


def test_metadata_empty():
    assert parse_metadata("{}") == Metadata()


def test_metadata_braces_inside_string_values():
    m = parse_metadata('{op_name="jit(f)/cond[branches={x}]" source_line=2}')
    assert m.op_name == "jit(f)/cond[branches={x}]" and m.source_line == 2


@pytest.mark.parametrize("raw, reason", [
    ('{op_name="a" junk}', "unexpected"),
    ("{op_name=a}", "quoted"),
    ("{source_line=twelve}", "integer"),
    ('{op_name="a" op_name="b"}', "duplicate"),
    ('{op_name="a}', "unexpected"),
    ('op_name="a"', "expected"),
])
def test_metadata_malformed(raw, reason):
    with pytest.raises(HloParseError, match=f"bad metadata: .*{reason}"):
        parse_metadata(raw)


# -- sharding ---------------------------------------------------------------------------------------------------


def test_sharding_replicated():
    s = parse_sharding("{replicated}")
    assert s.kind == "replicated" and s.devices == () and str(s) == "{replicated}"


def test_sharding_manual_and_unknown():
    assert parse_sharding("{manual}").kind == "manual"
    assert parse_sharding("{unknown}").kind == "unknown"


def test_sharding_maximal_device():
    s = parse_sharding("{maximal device=1}")
    assert s.kind == "maximal" and s.devices == (1,) and str(s) == "{maximal device=1}"


def test_sharding_explicit_devices():
    s = parse_sharding("{devices=[4,1,1,1]0,1,2,3}")
    assert (s.kind, s.tile_shape, s.devices) == ("tiled", (4, 1, 1, 1), (0, 1, 2, 3))


def test_sharding_iota_with_transpose_is_expanded():
    s = parse_sharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    assert s.tile_shape == (1, 4, 2)
    assert s.devices == (0, 4, 1, 5, 2, 6, 3, 7)
    assert s.last_tile_dims == ("replicated",)


def test_sharding_iota_equals_explicit_spelling():
    assert parse_sharding("{devices=[8,1,1]<=[8]}") == parse_sharding("{devices=[8,1,1]0,1,2,3,4,5,6,7}")
    assert parse_sharding("{devices=[2,2]<=[2,2]T(1,0)}") == parse_sharding("{devices=[2,2]0,2,1,3}")
    assert parse_sharding("{devices=[2,2]<=[4]}") != parse_sharding("{devices=[2,2]0,2,1,3}")


def test_sharding_last_tile_dim_replicate_equals_last_tile_dims_replicated():
    a = parse_sharding("{devices=[2,2]0,1,2,3 last_tile_dim_replicate}")
    b = parse_sharding("{devices=[2,2]0,1,2,3 last_tile_dims={replicated}}")
    assert a == b and str(a) == "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}"


def test_sharding_last_tile_dims_several_types():
    s = parse_sharding("{devices=[2,1,2,2]<=[8] last_tile_dims={manual, replicated}}")
    assert s.last_tile_dims == ("manual", "replicated") and len(s.devices) == 8


def test_sharding_all_dimensions_replicated_subgroup_is_replicated():
    assert parse_sharding("{devices=[2]0,1 last_tile_dim_replicate}") == parse_sharding("{replicated}")


def test_sharding_metadata_inside_is_provenance_only():
    a = parse_sharding('{devices=[2,4]<=[8] metadata={op_name="x_"}}')
    b = parse_sharding("{devices=[2,4]<=[8]}")
    assert a.metadata == (Metadata(op_name="x_"),)
    assert a == b


def test_sharding_metadata_list_inside():
    s = parse_sharding('{replicated metadata={{op_name="a"}, {op_name="b" source_line=3}}}')
    assert [m.op_name for m in s.metadata] == ["a", "b"] and s.metadata[1].source_line == 3


def test_sharding_tuple_with_index_comments():
    s = parse_sharding("{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, "
                       "/*index=5*/{devices=[2,1]0,1}}")
    assert s.kind == "tuple" and len(s.elements) == 6
    assert s.elements[5].devices == (0, 1)
    assert str(s).startswith("{{replicated}, {replicated}")


def test_sharding_empty_tuple():
    s = parse_sharding("{}")
    assert s.kind == "tuple" and s.elements == ()


def test_sharding_shard_as_and_like():
    assert parse_sharding("{devices=[2]0,1 shard_as 1}").shard_group == ("as", 1)
    assert parse_sharding("{replicated shard_like 2}").shard_group == ("like", 2)
    assert parse_sharding("{replicated shard_like 2}") != parse_sharding("{replicated}")


def test_sharding_named_mesh_kept_as_text():
    a = parse_sharding("{mesh[x=2,y=4], [{x}, {}], replicated={y}}")
    b = parse_sharding("{mesh[x=2, y=4],[{x},{}],replicated={y}}")
    assert a.kind == "named" and a == b
    assert a != parse_sharding("{mesh[x=2,y=4], [{y}, {}]}")


@pytest.mark.parametrize("raw, reason", [
    ("{devices=[2,2]0,1,2}", "do not fill"),
    ("{devices=[2,2]<=[8]}", "do not fill"),
    ("{devices=[2,4]<=[2,4]T(0,0)}", "permutation"),
    ("{maximal}", "device="),
    ("{replicated devices=[2]0,1}", "no devices"),
    ("{replicated manual}", "conflicting"),
    ("{devices=[2]0,1 last_tile_dims={bogus}}", "subgroup"),
    ("{devices=[2]0,1 last_tile_dims={manual, replicated}}", "subgroup dimensions"),
    ("{tiled}", "unexpected"),
    ("{replicated", "end"),
    ("{devices=[4096,4096]<=[16777216]}", "more than"),
])
def test_sharding_malformed(raw, reason):
    with pytest.raises(HloParseError, match=f"bad (sharding|iota): .*{reason}"):
        parse_sharding(raw)


def test_iota_devices_matches_numpy_semantics():
    # iota(24).reshape(2,3,4).transpose(2,0,1).flatten()
    expected = [d for k in range(4) for i in range(2) for j in range(3) for d in [i * 12 + j * 4 + k]]
    assert iota_devices([2, 3, 4], [2, 0, 1]) == tuple(expected)


# -- collectives ------------------------------------------------------------------------------------------------


def test_replica_groups_explicit():
    assert parse_replica_groups("{{0,4,8,12},{1,5,9,13},{2,6,10,14},{3,7,11,15}}")[1] == (1, 5, 9, 13)


def test_replica_groups_empty_means_all():
    assert parse_replica_groups("{}") == ()


def test_replica_groups_iota():
    assert parse_replica_groups("[2,4]<=[8]") == ((0, 1, 2, 3), (4, 5, 6, 7))


def test_replica_groups_iota_transposed_equals_explicit():
    assert parse_replica_groups("[4,2]<=[2,4]T(1,0)") == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert parse_replica_groups("[4,2]<=[2,4]T(1,0)") == parse_replica_groups("{{0,4},{1,5},{2,6},{3,7}}")


@pytest.mark.parametrize("raw", ["[2,4]<=[6]", "[8]<=[8]", "{{0,1},{2,3}", "{{0,1} {2,3}}", "{0,1}"])
def test_replica_groups_malformed(raw):
    with pytest.raises(HloParseError, match="bad replica_groups"):
        parse_replica_groups(raw)


def test_source_target_pairs():
    assert parse_source_target_pairs("{{0,1},{1,2},{2,3}}") == ((0, 1), (1, 2), (2, 3))
    with pytest.raises(HloParseError, match="pair"):
        parse_source_target_pairs("{{0,1,2}}")


# -- lists, slices, windows -------------------------------------------------------------------------------------


def test_int_list():
    assert parse_int_list("{1,2,0,3}") == (1, 2, 0, 3)
    assert parse_int_list("{}") == ()
    assert parse_int_list("{0, 1}") == (0, 1)


@pytest.mark.parametrize("raw", ["{1,}", "1,2", "{a}", "{1 2}", "{"])
def test_int_list_malformed(raw):
    with pytest.raises(HloParseError, match="bad integer list"):
        parse_int_list(raw)


def test_name_list_precision():
    assert parse_name_list("{highest,highest}") == ("highest", "highest")
    assert parse_name_list("{%add.1, %mul}") == ("add.1", "mul")


def test_slice_default_and_explicit_stride():
    assert parse_slice("{[0:16], [0:2048], [0:8], [64:128]}") == ((0, 16, 1), (0, 2048, 1), (0, 8, 1),
                                                                  (64, 128, 1))
    assert parse_slice("{[2:3:4], [5:6:7], [8:9]}") == ((2, 3, 4), (5, 6, 7), (8, 9, 1))
    assert parse_slice("{}") == ()


@pytest.mark.parametrize("raw", ["{[0]}", "{[0:1:2:3]}", "{[0:1] [1:2]}", "[0:1]"])
def test_slice_malformed(raw):
    with pytest.raises(HloParseError, match="bad slice"):
        parse_slice(raw)


def test_window_from_depthwise_conv():
    w = parse_window("{size=3x3 pad=1_1x1_1}")
    assert w == Window((WindowDim(3, pad_low=1, pad_high=1), WindowDim(3, pad_low=1, pad_high=1)))
    assert str(w) == "{size=3x3 pad=1_1x1_1}"


def test_window_all_fields_any_order_negative_pad():
    w = parse_window("{stride=2x1 size=3x2 pad=-1_0x0_2 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}")
    assert w.dims == (WindowDim(3, 2, -1, 0, 1, 3, False), WindowDim(2, 1, 0, 2, 2, 1, True))


def test_window_empty():
    assert parse_window("{}") == Window(())


@pytest.mark.parametrize("raw, reason", [
    ("{size=3x3 stride=2}", "dimensions"),
    ("{stride=2}", "missing size"),
    ("{size=3 size=3}", "duplicate"),
    ("{size=3 foo=1}", "unexpected"),
    ("{size=3 pad=1}", "pad"),
])
def test_window_malformed(raw, reason):
    with pytest.raises(HloParseError, match=f"bad window: .*{reason}"):
        parse_window(raw)


def test_dim_labels_conv():
    d = parse_dim_labels("bf01_oi01->bf01")
    assert (d.input_batch, d.input_feature, d.input_spatial) == (0, 1, (2, 3))
    assert (d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial) == (1, 0, (2, 3))
    assert (d.output_batch, d.output_feature, d.output_spatial) == (0, 1, (2, 3))
    assert str(d) == "bf01_oi01->bf01"


def test_dim_labels_channels_last_and_reordered_spatial():
    d = parse_dim_labels("b10f_10io->b01f")
    assert d.input_spatial == (2, 1) and d.kernel_spatial == (1, 0) and d.output_spatial == (1, 2)


@pytest.mark.parametrize("raw", ["b01f_01io", "bb0f_0io->b0f", "b01f_0io->b01f", "b0x_0io->b0f"])
def test_dim_labels_malformed(raw):
    with pytest.raises(HloParseError, match="bad dim_labels"):
        parse_dim_labels(raw)


def test_padding_config():
    assert parse_padding_config("0_0x1_2_3") == ((0, 0, 0), (1, 2, 3))
    with pytest.raises(HloParseError, match="bad padding"):
        parse_padding_config("0x1")


# -- scalars, strings, free-form configs ------------------------------------------------------------------------


def test_string_bool_int_enum():
    assert parse_string('"lapack_dtrsm_ffi"') == "lapack_dtrsm_ffi"
    assert parse_bool("true") is True and parse_bool("false") is False
    assert parse_int("-3") == -3
    assert parse_direction("LT") == "LT"
    assert parse_attribute("kind", "kLoop") == "kLoop"
    for bad, fn in (("lapack", parse_string), ("True", parse_bool), ("1.5", parse_int), ("LESS", parse_direction)):
        with pytest.raises(HloParseError):
            fn(bad)


def test_unescape_octal_utf8_and_hex():
    assert unescape(r"caf\303\251") == "café"
    assert unescape(r"\x41\t\?") == "A\t?"
    with pytest.raises(HloParseError, match="unknown escape"):
        unescape(r"\q")


def test_bool_list():
    assert parse_bool_list("{true,true,true}") == (True, True, True)
    assert parse_bool_list("{false,false,false}") == (False, False, False)
    assert parse_bool_list("true") == (True,)


def test_backend_config_json_object_key_order_irrelevant():
    raw = ('{"operation_queue_id":"0","wait_on_operation_queues":[],"collective_backend_config":'
           '{"is_sync":true,"no_parallel_custom_call":false},"force_earliest_schedule":false}')
    b = parse_backend_config(raw)
    assert b.is_json and b.value["collective_backend_config"]["is_sync"] is True
    reordered = ('{"force_earliest_schedule":false, "operation_queue_id":"0", "wait_on_operation_queues":[], '
                 '"collective_backend_config":{"no_parallel_custom_call":false,"is_sync":true}}')
    assert parse_backend_config(reordered) == b
    assert parse_backend_config(raw.replace('"0"', '"1"')) != b


def test_backend_config_quoted_json_string():
    b = parse_backend_config(r'"{\"operation_queue_id\":\"0\"}"')
    assert b.value == {"operation_queue_id": "0"} and b == parse_backend_config('{"operation_queue_id":"0"}')


def test_backend_config_mlir_dict_and_non_json_kept_as_text():
    b = parse_backend_config("{diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}")
    assert not b.is_json and b.value is None and b.text.startswith("{diag = 78")
    c = parse_backend_config('{"fusion_config": {kind: "__ynn_fusion"}}')
    assert not c.is_json and c.canonical == '{"fusion_config": {kind: "__ynn_fusion"}}'


def test_backend_config_empty_forms():
    assert parse_backend_config("{}") == BackendConfig("{}", "{}", {}, True)
    assert parse_backend_config('""').text == ""


@pytest.mark.parametrize("raw", ["{diag = 78", "78", '"unterminated'])
def test_backend_config_malformed(raw):
    with pytest.raises(HloParseError, match="bad (backend_config|string)"):
        parse_backend_config(raw)


def test_frontend_attributes():
    assert parse_frontend_attributes('{fingerprint_before_lhs="dc46abf59da87806a5471cb64481d2d4"}') == {
        "fingerprint_before_lhs": "dc46abf59da87806a5471cb64481d2d4"}
    attrs = parse_frontend_attributes('{_xla_compute_type="host", _xla_stream_annotation="1", '
                                      'cfg={"a": [1, "}"]}, q="say \\"x\\""}')
    assert list(attrs) == ["_xla_compute_type", "_xla_stream_annotation", "cfg", "q"]
    assert attrs["cfg"] == '{"a": [1, "}"]}' and attrs["q"] == 'say "x"'
    assert parse_frontend_attributes("{}") == {}
    for bad in ("{a=1}", '{a="x" b="y"}', '{a="x"', '{a="x"} tail'):
        with pytest.raises(HloParseError, match="bad frontend_attributes"):
            parse_frontend_attributes(bad)


# -- module header and aliasing ---------------------------------------------------------------------------------


def test_input_output_alias():
    got = parse_input_output_alias("{ {0}: (17, {}, may-alias), {1}: (18, {}, may-alias), {2, 1}: (0, {3}) }")
    assert got == (Alias((0,), 17, ()), Alias((1,), 18, ()), Alias((2, 1), 0, (3,)))
    assert parse_input_output_alias("{ {0}: (0, {1}, must-alias) }")[0].kind == "must-alias"
    assert parse_input_output_alias("{}") == ()
    with pytest.raises(HloParseError, match="alias kind"):
        parse_input_output_alias("{ {0}: (0, {}, maybe) }")


def test_buffer_donor():
    assert parse_buffer_donor("{ (0, {0}), (0, {1}) }") == (BufferDonor(0, (0,)), BufferDonor(0, (1,)))
    with pytest.raises(HloParseError, match="bad buffer_donor"):
        parse_buffer_donor("{ (0) }")


def test_output_operand_aliasing():
    assert parse_output_operand_aliasing("{{}: (1, {})}") == (OperandAlias((), 1, ()),)
    assert parse_output_operand_aliasing("{{0}: (0, {})}") == (OperandAlias((0,), 0, ()),)


def test_entry_computation_layout_texts_without_index_comments():
    layout = parse_computation_layout(
        "{(f32[])->(f32[], f32[], f32[10]{0}, f32[10]{0}, s32[], /*index=5*/s32[], s32[], s32[], s32[])}")
    assert layout.parameters == ("f32[]",)
    assert layout.result == "(f32[], f32[], f32[10]{0}, f32[10]{0}, s32[], s32[], s32[], s32[], s32[])"


def test_entry_computation_layout_with_shape_callback():
    from hlodiff.hlo.shapes import parse_shape

    layout = parse_computation_layout("{(s32[2,256]{1,0}, s32[1024,1024]{1,0})->s32[2,256]{1,0}}", parse_shape)
    assert [p.dims for p in layout.parameters] == [(2, 256), (1024, 1024)]
    assert layout.result.layout.minor_to_major == (1, 0)


def test_entry_computation_layout_no_parameters_and_malformed():
    assert parse_computation_layout("{()->f32[]}").parameters == ()
    for bad in ("{(f32[])}", "{(f32[]->f32[]}", "(f32[])->f32[]", "{(f32[],)->f32[]}"):
        with pytest.raises(HloParseError, match="bad entry_computation_layout"):
            parse_computation_layout(bad)


def test_shape_list():
    assert parse_shape_list("{f64[3,3]{0,1}, f64[3,1]{0,1}}") == ("f64[3,3]{0,1}", "f64[3,1]{0,1}")


# -- literals ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw, text, value", [
    ("0", "0", 0),
    ("-inf", "-inf", -math.inf),
    ("inf", "inf", math.inf),
    ("true", "true", True),
    ("1e-05", "1e-05", 1e-05),
    ("0.98002553", "0.98002553", 0.98002553),
    ("-1.5E+3", "-1500", -1500.0),
    ("0x1F", "31", 31),
    ("18446744073709551615", "18446744073709551615", 18446744073709551615),
])
def test_literal_scalars(raw, text, value):
    lit = parse_literal(raw)
    assert lit.text == text and lit.values == (value,) and lit.is_scalar


def test_literal_nan_forms_keep_sign_and_payload():
    assert [parse_literal(r).text for r in ("nan", "-nan", "nan(0x7fc00000)", "-nan(0x0001)")] == [
        "nan", "-nan", "nan(0x7fc00000)", "-nan(0x1)"]
    assert math.isnan(parse_literal("nan").values[0])
    assert parse_literal("nan") == parse_literal("nan") != parse_literal("-nan")


def test_literal_equal_iff_same_value():
    assert parse_literal("1") == parse_literal("1.0") == parse_literal("1e0")
    assert parse_literal("{0, 1, 2, 3}") == parse_literal("{0,1.0,2,3}")
    assert parse_literal("{0, 1, 2, 3}") != parse_literal("{0, 1, 2, 4}")
    assert parse_literal("0") != parse_literal("-0.0")


def test_literal_vector_from_corpus():
    lit = parse_literal("{0, 0.161, 0.327, 0.9, 0.98002553, 1, 1}")
    assert lit.dims == (7,) and lit.values[1] == 0.161 and lit.text == "{0,0.161,0.327,0.9,0.98002553,1,1}"


def test_literal_nested_array():
    lit = parse_literal("{ {1, 2}, {3, 4}, {5, 6} }")
    assert lit.dims == (3, 2) and lit.values == (1, 2, 3, 4, 5, 6) and lit.text == "{{1,2},{3,4},{5,6}}"
    assert parse_literal("{ {}, {} }").dims == (2, 0)


def test_literal_elided():
    lit = parse_literal("{...}")
    assert lit.elided and lit.values == () and lit.text == "{...}"


def test_literal_tuple_and_complex():
    t = parse_literal("( 1, {2, 3}, true )", "tuple")
    assert t.is_tuple and [e.text for e in t.elements] == ["1", "{2,3}", "true"] and t.text == "(1, {2,3}, true)"
    c = parse_literal("(1, -2.5)", "c64")
    assert c.values == (complex(1, -2.5),) and c.text == "(1,-2.5)"
    assert parse_literal("(1, 2)", "tuple").is_tuple
    arr = parse_literal("{(1, 2), (3, 4)}", "c128")
    assert arr.dims == (2,) and arr.values == (1 + 2j, 3 + 4j)


def test_literal_old_printer_shape_prefix_ignored():
    assert parse_literal("f32[2]{0} {1, 2}") == parse_literal("{1, 2}")


@pytest.mark.parametrize("raw", ["", "{1, 2", "{1,,2}", "{1 2}", "{{1,2},{3}}", "{{1},2}", "1 2", "abc", "{1,}",
                                 "-true", "(1, 2", "{" * 100 + "}" * 100])
def test_literal_malformed(raw):
    with pytest.raises(HloParseError, match="bad literal"):
        parse_literal(raw)


# -- validate_attributes ----------------------------------------------------------------------------------------


def test_validate_attributes_names_the_failing_attribute():
    with pytest.raises(HloParseError) as e:
        validate_attributes({"metadata": "{}", "lhs_contracting_dims": "{1"})
    assert e.value.message.startswith("attribute lhs_contracting_dims: bad integer list")
    assert e.value.line is None  # the caller adds path and line
    with pytest.raises(HloParseError) as e:
        validate_attributes({"sharding": "{devices=[2]0}"})
    assert e.value.message.startswith("attribute sharding: bad sharding")


def test_validate_attributes_ignores_unknown_keys():
    validate_attributes({"some_future_attr": "{{ whatever", "dimensions": "{0}"})


def test_parse_attribute_types_known_keys_and_keeps_unknown_text():
    assert parse_attribute("dimensions", "{1,0}") == (1, 0)
    assert parse_attribute("replica_groups", "[2,4]<=[8]") == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert parse_attribute("mystery", " raw ") == " raw "


# -- the whole corpus -------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def corpus_modules():
    from hlodiff.hlo.parser import parse_module

    paths = sorted(need_shared(CORPUS).glob("*.hlo"))
    return [parse_module(p.read_text(), path=str(p)) for p in paths]


@lru_cache(maxsize=1)
def corpus_values() -> tuple[tuple[str, str], ...]:
    """Every (key, value) of every header and instruction in the corpus, plus ("constant", literal text)."""
    out = []
    for module in corpus_modules():
        out.extend(module.attrs.items())
        for _, inst in module.instructions():
            out.extend(inst.attrs.items())
            if inst.literal is not None:
                out.append(("constant", inst.literal))
    return tuple(out)


@pytest.mark.needs_shared(CORPUS)
def test_corpus_every_attribute_parses():
    failures = []
    counts: dict[str, int] = {}
    for module in corpus_modules():
        for attrs in [module.attrs] + [inst.attrs for _, inst in module.instructions()]:
            try:
                validate_attributes(attrs)
            except HloParseError as e:
                failures.append(f"{module.path}: {e.message}")
            for key in attrs:
                counts[key] = counts.get(key, 0) + 1
    assert failures == []
    unknown = sorted(k for k in counts if k not in ATTRIBUTE_PARSERS)
    assert unknown == []  # every attribute key in the corpus has a typed parser
    assert counts["metadata"] > 2400 and counts["sharding"] > 100 and counts["replica_groups"] >= 6


@pytest.mark.needs_shared(CORPUS)
def test_corpus_typed_values_are_sensible():
    seen_iota_sharding = seen_iota_groups = False
    for module in corpus_modules():
        for _, inst in module.instructions():
            a = inst.attrs
            if "sharding" in a:
                s = parse_sharding(a["sharding"])
                for leaf in s.elements or (s,):
                    if leaf.kind == "tiled":
                        assert sorted(leaf.devices) == list(range(len(leaf.devices)))
                seen_iota_sharding |= "<=" in a["sharding"]
            if "replica_groups" in a:
                groups = parse_replica_groups(a["replica_groups"])
                flat = [d for g in groups for d in g]
                assert sorted(flat) == list(range(len(flat)))
                seen_iota_groups |= "<=" in a["replica_groups"]
            if "metadata" in a:
                m = parse_metadata(a["metadata"])
                assert m.source_line is None or m.source_line > 0
                assert "\\'" not in (m.op_name or "")
            for name in called_computations(a):
                module.computation(name)  # every referenced computation exists
    assert seen_iota_sharding and seen_iota_groups


@pytest.mark.needs_shared(CORPUS)
def test_corpus_every_constant_parses():
    n = 0
    for module in corpus_modules():
        for _, inst in module.instructions():
            if inst.literal is None:
                continue
            lit = parse_literal(inst.literal, inst.shape.element_type)
            n += 1
            if not lit.elided and not lit.is_tuple:
                assert len(lit.values) == max(inst.shape.num_elements(), 1) or inst.shape.num_elements() == 0
    assert n > 200


# -- robustness -------------------------------------------------------------------------------------------------

_PARSERS = dict(ATTRIBUTE_PARSERS, constant=parse_literal, string=parse_string, name_list=parse_name_list,
                replica_groups=parse_replica_groups, backend_config=parse_backend_config)
_ALPHABET = '{}[]()<=>,:;_-+x."\\\'/* \n%0123456789abcdeTfilnrstuvyz'


def _mutate(data: st.DataObject, value: str) -> str:
    """One random edit of a real value: insert, delete, duplicate or replace a span."""
    if not value:
        return data.draw(st.text(_ALPHABET, max_size=20))
    i = data.draw(st.integers(0, len(value)))
    j = data.draw(st.integers(i, min(len(value), i + 8)))
    kind = data.draw(st.sampled_from(["insert", "delete", "duplicate", "replace", "truncate"]))
    piece = data.draw(st.text(_ALPHABET, min_size=1, max_size=4))
    if kind == "insert":
        return value[:i] + piece + value[i:]
    if kind == "delete":
        return value[:i] + value[j:]
    if kind == "duplicate":
        return value[:j] + value[i:j] + value[j:]
    if kind == "replace":
        return value[:i] + piece + value[j:]
    return value[:i]


def _only_parse_errors(parser, text: str) -> None:
    try:
        parser(text)
    except HloParseError:
        pass


@pytest.mark.needs_shared(CORPUS)
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_corpus_values_raise_only_parse_errors(data):
    values = corpus_values()
    key, value = data.draw(st.sampled_from(values))
    text = value
    for _ in range(data.draw(st.integers(1, 3))):
        text = _mutate(data, text)
    parser = _PARSERS.get(key, parse_string)
    _only_parse_errors(parser, text)
    other = data.draw(st.sampled_from(sorted(_PARSERS)))
    _only_parse_errors(_PARSERS[other], text)  # and a value fed to the wrong parser


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(sorted(_PARSERS)), st.text(_ALPHABET, max_size=60))
def test_random_text_raises_only_parse_errors(key, text):
    _only_parse_errors(_PARSERS[key], text)
    _only_parse_errors(parse_metadata, "{" + text + "}")
    _only_parse_errors(called_computations, {"to_apply": text, "branch_computations": text})


def test_huge_numbers_are_parse_errors_not_crashes():
    digits = "9" * 5000
    for parser, text in ((parse_int, digits), (parse_int_list, "{" + digits + "}"), (parse_literal, digits),
                         (parse_sharding, "{maximal device=" + digits + "}"),
                         (parse_metadata, "{source_line=" + digits + "}")):
        with pytest.raises(HloParseError):
            parser(text)
