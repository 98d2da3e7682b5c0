"""What XLA's parser reads that a dump writer rarely prints, and what it rejects beyond the grammar.

Each test is one small module written for one rule (the real modules of XLA's test suite are read in
tests/test_corpus.py)."""

from __future__ import annotations

import pytest

from hlodiff.errors import HloParseError
from hlodiff.hlo import format_module, parse_module


def _module(body: str, header: str = "HloModule m") -> str:
    return f"{header}\n\nENTRY e {{\n{body}\n}}\n"


def _error(text: str) -> HloParseError:
    with pytest.raises(HloParseError) as caught:
        parse_module(text, path="t.hlo")
    return caught.value


# -- reading ------------------------------------------------------------------------------------------------------

def test_module_name_may_end_in_a_colon():
    assert parse_module(_module("  ROOT p = f32[] parameter(0)", "HloModule comments:")).name == "comments"


def test_attribute_values_with_a_space_are_kept_whole():
    text = _module('  p = f32[2] parameter(0)\n'
                   '  ROOT c = f32[2] custom-call(p), custom_call_target="foo", literal=s32[2]{0} {1, 2}, '
                   'backend_config="x"')
    root = parse_module(text).entry.root
    assert root.attrs["literal"] == "s32[2]{0} {1, 2}" and root.attrs["backend_config"] == '"x"'
    mesh = ("HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), "
            "replica_groups=mesh['axis_0'=2,'axis_1'=2] {'axis_1'}, to_apply=add\n}\n")
    assert parse_module(mesh).entry.root.attrs["replica_groups"] == "mesh['axis_0'=2,'axis_1'=2] {'axis_1'}"


def test_buffer_shapes_read_and_print_back():
    text = _module('  p = f32[] parameter(0)\n  ROOT b = b(f32[2,4]) custom-call(p), custom_call_target="Pin"')
    module = parse_module(text)
    assert str(module.entry.root.shape) == "b(f32[2,4])"
    assert module.entry.root.shape.byte_size() == 32
    assert parse_module(format_module(module)) == module


def test_opcode_on_the_line_after_the_shape():
    text = _module("  a = f32[4] parameter(0)\n  ROOT n = (f32[4], f32[4])\n    tuple(a, a)")
    root = parse_module(text).entry.root
    assert root.opcode == "tuple" and root.operands == ("a", "a")


def test_shapes_left_out_are_inferred_like_xla():
    text = ("HloModule m\n\nneg {\n  x = f32[2] parameter(0)\n  ROOT n = negate(x)\n}\n\n"
            "ENTRY e {\n  a = f32[2,10] parameter(0)\n  b = f32[10,3] parameter(1)\n  d = dot(a, b), "
            "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  c = compare(a, a), direction=LT\n"
            "  t = tuple(d, c)\n  g = get-tuple-element(t), index=1\n  v = f32[2] parameter(2)\n"
            "  k = call(v), to_apply=neg\n  ROOT r = tuple(g, k)\n}\n")
    by = parse_module(text).entry.by_name()
    assert str(by["d"].shape) == "f32[2,3]"
    assert str(by["c"].shape) == "pred[2,10]"
    assert str(by["g"].shape) == "pred[2,10]"
    assert str(by["k"].shape) == "f32[2]"
    assert str(by["r"].shape) == "(pred[2,10], f32[2])"


def test_sort_topk_and_ids_are_inferred_too():
    text = _module("  a = f32[3,8] parameter(0)\n  b = s32[3,8] parameter(1)\n  t = topk(a), k=2, largest=true\n"
                   "  s = sort(a, b), dimensions={1}, to_apply=lt\n  ROOT r = replica-id()")
    text = ("HloModule m\n\nlt {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  i = s32[] parameter(2)\n"
            "  j = s32[] parameter(3)\n  ROOT c = pred[] compare(x, y), direction=LT\n}\n\n" + text.split("\n\n", 1)[1])
    by = parse_module(text).entry.by_name()
    assert str(by["t"].shape) == "(f32[3,2], s32[3,2])"
    assert str(by["s"].shape) == "(f32[3,8], s32[3,8])"
    assert str(by["r"].shape) == "u32[]"


def test_a_shape_hlodiff_cannot_infer_is_a_located_error():
    e = _error(_module("  a = f32[4] parameter(0)\n  ROOT r = reshape(a)"))
    assert (e.line, e.col) == (5, 8) and "cannot infer the shape of 'reshape'" in e.message


def test_nested_anonymous_instructions_become_instructions_named_like_xlas():
    text = _module("  ROOT root = add(f32[10] parameter(0), multiply(f32[10] parameter(1), f32[10] parameter(2)))")
    entry = parse_module(text).entry
    assert [i.name for i in entry.instructions] == [
        "parameter.anon", "parameter.anon.1", "parameter.anon.2", "multiply.anon", "root"]
    assert entry.root.operands == ("parameter.anon", "multiply.anon")
    assert str(entry.root.shape) == "f32[10]"


def test_async_shorthand_counts_the_computation_xla_wraps_it_in():
    text = _module('  p = f32[10] parameter(0)\n'
                   '  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target="foo"\n'
                   '  ROOT d = f32[20] custom-call-done(s)')
    module = parse_module(text)
    wrapped = [c for c in module.computations if c.implicit]
    assert [i.opcode for i in wrapped[0].instructions] == ["parameter", "custom-call"]
    assert module.instruction_count() == 5
    assert "async_wrapped" not in format_module(module)  # XLA prints the shorthand again, so does hlodiff
    assert parse_module(format_module(module)) == module


# -- rejecting ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, line, col, words", [
    ("  ROOT p = g32[] parameter(0)", 4, 12, "unknown element type 'g32'"),
    ("  ROOT c = u4[] constant(16)", 4, 3, "out of range"),
    ("  ROOT c = f16[] constant(-65520)", 4, 3, "out of range"),
    ("  ROOT c = f32[2,3] constant({1, 2, 3, 4, 5, 6})", 4, 3, "dimensions"),
    ("  ROOT c = bf16[1] constant({nan(0x3ff)})", 4, 3, "NaN payload"),
    ("  a = token[] after-all()\n  ROOT b = token[] after-all(), control-predecessors={%nowhere}", 5, 3,
     "'nowhere' is not defined"),
    ('  ROOT c = f32[1] custom-call(), custom_call_target="f", api_version=API_VERSION_NEW', 4, 3,
     "API version"),
    ("  p = f32[2] parameter(0)\n  ROOT u = ((f32[2]), f32[2], s32[]) all-gather-update(p)", 5, 3,
     "expects opcode but sees: all-gather-update"),
])
def test_faults_in_the_text_are_one_located_error(body, line, col, words):
    e = _error(_module(body))
    assert (e.line, e.col) == (line, col) and words in e.message


def test_convolution_dim_labels_must_name_each_dimension_once():
    body = ("  a = f32[1,2,1] parameter(0)\n  b = f32[1,1,1] parameter(1)\n  ROOT c = f32[1,2,1] convolution(a, b), "
            "window={size=1}, dim_labels=00_01->10")
    assert "unique lhs dimension numbers" in _error(_module(body)).message


def test_malformed_aliasing_in_the_header_points_at_it():
    e = _error(_module("  ROOT p = f32[] parameter(0)", "HloModule m, input_output_alias={ {0, a}: (0, {0}) }"))
    assert (e.line, e.col) == (1, 14) and "input_output_alias" in e.message


def test_an_unknown_opcode_is_read_and_named_for_a_warning():
    module = parse_module(_module("  p = f32[] parameter(0)\n  ROOT x = f32[] frobnicate(p)"))
    assert module.entry.root.opcode == "frobnicate" and module.unknown_opcodes == ["frobnicate"]


# -- hostile input stays one line ----------------------------------------------------------------------------------

def test_deeply_nested_instructions_are_one_error_not_a_crash():
    text = _module("  ROOT r = " + "negate(" * 300 + "f32[] parameter(0)" + ")" * 300)
    assert "nested instructions more than 32 deep" in _error(text).message


def test_a_long_chain_of_shape_less_forward_references_is_inferred():
    chain = "".join(f"  a{i} = negate(a{i + 1})\n" for i in range(3000))
    text = _module(f"  p = f32[2] parameter(0)\n{chain}  a3000 = f32[2] negate(p)\n  ROOT r = f32[2] negate(a0)")
    assert str(parse_module(text).entry.by_name()["a0"].shape) == "f32[2]"


@pytest.mark.parametrize("element_type", ["f32", "f64", "s32"])
def test_a_constant_with_hundreds_of_digits_is_out_of_range(element_type):
    e = _error(_module(f"  ROOT c = {element_type}[] constant(1{'0' * 400})"))
    assert "out of range" in e.message and e.line == 4


# -- issue 23: what XLA's parser reads and rejects, each from a test of XLA's own ---------------------------------

def test_a_scalar_literal_fills_an_array_shaped_constant():
    """XLA's parser fills every element of an array from one scalar (``%c = f32[8,2048]{1,0} constant(0)``);
    hlo_diff's tests write constants so (hlo_computation_graph_matcher_test.cc, MatchComputationConstants:
    ``c25 = bf16[1] constant(0.0)``). XLA still wants the nested form for complex types and arrays without
    elements, and a value in range (each checked against jaxlib 0.10.2's parser)."""
    module = parse_module(_module("  ROOT %c = f32[8,2048]{1,0} constant(0)"))
    assert module.entry.root.shape.dims == (8, 2048) and module.entry.root.literal == "0"
    assert parse_module(format_module(module)) == module
    hlo_diff = parse_module(_module('  c25 = bf16[1] constant(0.0), metadata={source_file="test.cc" source_line=42}\n'
                                    "  ROOT n = bf16[1] negate(c25)", "HloModule module, is_scheduled=true"))
    assert hlo_diff.entry.instructions[0].literal == "0.0"
    assert "out of range" in _error(_module("  ROOT c = s8[4]{0} constant(300)")).message
    assert "nested array in rank 1" in _error(_module("  ROOT c = c64[2]{0} constant(1)")).message
    assert "nested array in rank 1" in _error(_module("  ROOT c = f32[0]{0} constant(1)")).message


def test_lines_ending_in_a_bare_cr_read():
    """hlo_parser_test.cc, SlashSlashCommentMacEolFormat: a module whose lines end in a bare CR, with // comments,
    reads, and the instruction is found on its own line."""
    text = ("HloModule slash_slash_comment:\r// Garbage\rENTRY c1 {\r// Foo bar\r"
            "ROOT const1 = f32[1]{0} constant({12345}) // Something else\r}")
    root = parse_module(text).entry.root
    assert (root.name, root.literal, root.line) == ("const1", "{12345}", 5)


def test_an_operand_declared_with_another_shape_is_rejected_at_the_declaration():
    """hlo_parser_test.cc, ShapeMismatchInOperand: XLA refuses an operand written with a shape that is not its
    definition's ("The declared operand shape f32[2,5]{1,0} is not compatible with the shape of the operand
    instruction f32[2,2]{1,0}"), layouts aside."""
    text = ("HloModule foobar\n\nENTRY %entrycomp (p: f32[2,2]) -> f32[2,2] {\n  %p = f32[2,2] parameter(0)\n"
            "  %constant.1 = f32[2,2] constant({{1, 2}, {3, 4}})\n"
            "  ROOT %add.1 = f32[2,2] add(f32[2,2] %p, f32[2,5] %constant.1)\n}\n")
    e = _error(text)
    assert (e.line, e.col) == (6, 43)  # XLA says 7:43: its test text starts with a newline
    assert "declared operand shape f32[2,5]" in e.message and "operand instruction f32[2,2]" in e.message
    # Layouts may differ (XLA compares shapes layout aside), and a tuple operand is compared element-wise.
    ok = _module("  p = f32[2,2]{0,1} parameter(0)\n  t = (f32[2,2]{0,1}) tuple(f32[2,2]{0,1} %p)\n"
                 "  ROOT a = f32[2,2]{1,0} get-tuple-element((f32[2,2]{1,0}) %t), index=0")
    assert parse_module(ok).entry.root.operands == ("t",)
    bad = _module("  p = f32[2] parameter(0)\n  t = (f32[2]) tuple(p)\n  ROOT a = f32[2] get-tuple-element((s32[2]) t), "
                  "index=0")
    assert "declared operand shape (s32[2])" in _error(bad).message


def test_the_same_operand_twice_is_located_at_the_mismatching_use():
    e = _error(_module("  p = f32[2,2]{1,0} parameter(0)\n  ROOT a = f32[2,2]{1,0} add(f32[2,2]{1,0} %p, f32[2,3]{1,0} %p)"))
    assert (e.line, e.col) == (5, 48)


def test_custom_call_with_unspecified_api_version_is_rejected():
    """hlo_parser_test.cc, CustomCallWithUnspecifiedVersion: XLA refuses api_version=API_VERSION_UNSPECIFIED
    ("Invalid API version")."""
    text = ("HloModule custom_call\n\nENTRY %CustomCall () -> f32[1,2,3] {\n  %constant = f32[1]{0} constant({12345})\n"
            "  ROOT %custom-call.1 = f32[1,2,3]{0,2,1} custom-call(f32[1]{0} %constant), custom_call_target=\"foo\", "
            "api_version=API_VERSION_UNSPECIFIED\n}\n")
    e = _error(text)
    assert (e.line, e.col) == (5, 3) and "Invalid API version: API_VERSION_UNSPECIFIED" in e.message


@pytest.mark.parametrize("prefix", sorted(__import__("hlodiff.hlo.checks", fromlist=["x"])
                                          .UNSPECIFIED_API_VERSION_WRITERS))
def test_writers_known_to_print_an_unspecified_api_version_are_read(prefix):
    """One row per writer in the table: its custom-calls keep the version its XLA printed (AWS Neuron's dumps in
    ../shared/corpus/neuron carry it on every custom-call)."""
    text = _module(f'  p = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(p), custom_call_target="{prefix}Gelu", '
                   "api_version=API_VERSION_UNSPECIFIED")
    assert parse_module(text).entry.root.attrs["api_version"] == "API_VERSION_UNSPECIFIED"


def test_a_declared_operand_shape_is_checked_in_a_statement_that_wraps():
    text = _module("  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(f32[2]{0} p,\n                      f32[3] p)")
    e = _error(text)
    assert (e.line, e.col) == (6, 23) and "declared operand shape f32[3]" in e.message
