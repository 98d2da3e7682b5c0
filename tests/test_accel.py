"""The compiled accelerator (hlodiff/_accel_c/) gives what the pure-Python code gives, on every real file.

Each test reads or hashes the same input twice, once with the accelerator and once with it switched off (the
modules' ``native`` set to ``None``, what ``HLODIFF_PURE_PYTHON=1`` or an install without a compiler gives), and
compares everything a user could see: instructions field by field with their lines and columns, the errors with
their positions, labels, node hashes, fingerprints and normalized texts. The oracle is the Python code, which the
rest of the suite checks against XLA's verdicts and real runs.
"""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from conftest import FIXTURES, SHARED, need_shared, shared_params
from helpers import run_hlodiff
from hlodiff import accel
from hlodiff.diff import diff_canonical
from hlodiff.dumps import iter_graphs
from hlodiff.errors import HloParseError
from hlodiff.graph import canonicalize
from hlodiff.graph.fingerprint import normalized_text
from hlodiff.graph.canonical import CanonicalComputation
from hlodiff.hlo import parse_module
from hlodiff.hlo.shapes import _cache as shape_cache

native = accel.native
parser_module = importlib.import_module("hlodiff.hlo.parser")
fingerprint_module = importlib.import_module("hlodiff.graph.fingerprint")
ACCEL_REQUIRED = os.environ.get("HLODIFF_REQUIRE_ACCEL", "") not in ("", "0")
"""Under `.ci/run` (a machine with a C compiler) the accelerator must have been built: its tests fail, not skip."""
needs_native = pytest.mark.skipif(native is None and not ACCEL_REQUIRED,
                                  reason="the accelerator was not built (no C compiler at install)")


def test_accelerator_built_where_required():
    """A build of hlodiff/_accel_c/ that failed is silent at install (the extension is optional): CI says so."""
    if not ACCEL_REQUIRED:
        pytest.skip("HLODIFF_REQUIRE_ACCEL is not set (only .ci/run requires the accelerator)")
    assert native is not None, "hlodiff._accel was not built: see the build log of pip install"
CORPUS_ROOT = SHARED / "corpus"


def _corpus() -> list:
    files = []
    for sub in ("hlo", "wild", "neuron", "xla_parser/valid", "xla_parser/invalid"):
        folder = CORPUS_ROOT / sub
        if folder.is_dir():
            files += sorted(p for p in folder.iterdir() if p.is_file() and p.suffix not in (".md", ".tsv", ".pb"))
    return files


def _fixture_texts() -> list:
    texts = sorted(FIXTURES.glob("torch_xla/*/graphs.hlo.0")) + sorted(FIXTURES.glob("big/*.hlo.gz"))
    return texts + sorted(FIXTURES.glob("jax/*/dump/*.txt"))[:200]


def _read(path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return data.decode("utf-8", "surrogateescape")


def _switch(monkeypatch, on: bool) -> None:
    """The accelerator on or off in every hlodiff module that uses it (each holds ``native`` from hlodiff.accel)."""
    users = [mod for name, mod in sorted(sys.modules.items())
             if name.startswith("hlodiff.") and name != "hlodiff.accel" and getattr(mod, "native", False) is native]
    assert {parser_module, fingerprint_module} <= set(users)
    for mod in users:
        monkeypatch.setattr(mod, "native", native if on else None)


def _outcome(text: str, path: str, use_native: bool, monkeypatch) -> tuple:
    """Everything parsing and canonicalizing ``text`` shows, with the accelerator on or off."""
    _switch(monkeypatch, use_native)
    shape_cache.clear()  # each side finds its shapes from scratch (the fast path reads only cached shapes)
    try:
        module = parse_module(text, path=path)
    except HloParseError as e:
        return ("error", str(e), e.line, e.col)
    insts = [(c.name, c.signature, c.line, [(i.name, i.shape, i.opcode, i.operands, list(i.attrs.items()), i.is_root,
                                             i.literal, i.parameter_number, i.truncated_operands, i.line, i.col)
                                            for i in c.instructions])
             for c in module.computations]
    insts.append(module)  # and everything else the module holds (header, tables, unknown opcodes), by equality
    try:
        cm = canonicalize(module)
    except HloParseError as e:
        return ("parsed", insts, "canonicalize error", str(e))
    hashes = {name: (cc.labels, cc.anon, _exact_read(cc)) for name, cc in cm.computations.items()}
    return ("parsed", insts, cm.fingerprint, hashes, normalized_text(cm), cm.computation_hashes)


def _exact_read(cc) -> dict[str, str]:
    """The exact hashes anything reads: the root's and those of the nodes the root does not reach (the
    accelerator keeps only these on big graphs; the Python code keeps every node's)."""
    reached, stack = {cc.root}, [cc.root]
    while stack:
        for op in cc.operands[stack.pop()]:
            if op not in reached:
                reached.add(op)
                stack.append(op)
    return {n: h for n, h in cc.hashes.items() if n == cc.root or n not in reached}


@needs_native
@pytest.mark.parametrize("path", shared_params(_corpus(), CORPUS_ROOT), ids=lambda p: getattr(p, "name", None))
def test_corpus_file_reads_the_same_both_ways(path, monkeypatch):
    text = _read(need_shared(path))
    assert _outcome(text, str(path), True, monkeypatch) == _outcome(text, str(path), False, monkeypatch)


@needs_native
@pytest.mark.parametrize("path", _fixture_texts(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_dump_reads_the_same_both_ways(path, monkeypatch):
    text = _read(path)
    assert _outcome(text, str(path), True, monkeypatch) == _outcome(text, str(path), False, monkeypatch)


def _diff_outcome(left_text: str, right_text: str, use_native: bool, monkeypatch) -> tuple:
    """The diff of two modules as the CLI's JSON has it, and how each pair was matched."""
    _switch(monkeypatch, use_native)
    shape_cache.clear()
    left, right = (canonicalize(parse_module(t)) for t in (left_text, right_text))
    diff = diff_canonical(left, right)
    matched = [(list(cd.matching.l2r.items()), list(cd.matching.how.items())) for cd in diff.computations]
    return json.dumps(diff.to_json(), sort_keys=True), matched


def _pairs() -> list:
    """Consecutive graphs of every torch_xla fixture run, and the big transformer pair."""
    pairs = []
    for path in sorted(FIXTURES.glob("torch_xla/*/graphs.hlo.0")):
        records = list(iter_graphs(path))[:4]
        pairs += [pytest.param(a, b, id=f"{path.parent.name}#{a.index}-{b.index}")
                  for a, b in zip(records, records[1:])]
    return pairs


@needs_native
@pytest.mark.parametrize("left,right", _pairs())
def test_fixture_pair_diffs_the_same_both_ways(left, right, monkeypatch):
    texts = (left.text(), right.text())
    assert _diff_outcome(*texts, True, monkeypatch) == _diff_outcome(*texts, False, monkeypatch)


@needs_native
def test_big_pair_diffs_the_same_both_ways(monkeypatch):
    """The 33k-instruction pair: permuted parameters, reordered outputs, one more output."""
    texts = [_read(FIXTURES / "big" / f"transformer24{v}.hlo.gz") for v in ("", "_variant")]
    assert _diff_outcome(*texts, True, monkeypatch) == _diff_outcome(*texts, False, monkeypatch)


# Lines the fast path must leave to the Python parser, each next to the common line it follows. Small modules
# written for one rule each; the outcome (instructions or error, with positions) must not depend on the path.
_LINES = {
    "typed operands": '  %add.3 = f32[2]{0} add(f32[2]{0} %a.1, f32[2]{0} %b.2), metadata={op_type="aten__add"}',
    "other spacing": "  %add.3 = f32[2]{0} add(f32[2]{0}  %a.1, f32[2]{0} %b.2)",
    "declared shape differs": "  %add.3 = f32[2]{0} add(f32[3]{0} %a.1, f32[2]{0} %b.2)",
    "forward reference": "  %add.3 = f32[2]{0} add(f32[2]{0} %a.1, f32[2]{0} %later.9)",
    "untyped": "  %add.3 = f32[2]{0} add(%a.1, b.2), sharding={replicated}",
    "comment": "  %add.3 = f32[2]{0} add(%a.1, %b.2) /* a comment */",
    "line comment": "  %add.3 = f32[2]{0} add(%a.1, %b.2) // a comment",
    "slashes in a string": '  %add.3 = f32[2]{0} add(%a.1, %b.2), metadata={source_file="/home/user/t.py" source_line=3}',
    "non-ASCII": '  %add.3 = f32[2]{0} add(%a.1, %b.2), metadata={source_file="/home/usér/t.py"}',
    "duplicate attribute": "  %add.3 = f32[2]{0} add(%a.1, %b.2), sharding={replicated}, sharding={maximal device=0}",
    "unknown attribute value": "  %add.3 = f32[2]{0} add(%a.1, %b.2), sharding=<<x>>",
    "iota groups": "  %ar.3 = f32[2]{0} all-reduce(%a.1), replica_groups=[2,1]<=[2], to_apply=%sum",
    "tuple shape": "  %t.3 = (f32[2]{0}, f32[2]{0}) tuple(%a.1, %b.2)",
    "unseen shape": "  %c.3 = f32[7,7]{1,0} broadcast(%a.1), dimensions={}",
    "parameter with spaces": "  %p.3 = f32[2]{0} parameter( 2 )",
    "parameter not a number": "  %p.3 = f32[2]{0} parameter(x)",
    "constant": "  %c.3 = f32[2]{0} constant({1,   2})",
    "three nested parentheses": "  %c.3 = f32[2]{0} custom-call(%a.1), custom_call_target=\"f(g(h(x)))\"",
    "tab": "\t%add.3 = f32[2]{0}\tadd(%a.1, %b.2)",
    "form feed": "  %add.3 = f32[2]{0} add(%a.1,\f%b.2)",
    "ROOT named ROOT": "  ROOT = f32[2]{0} add(%a.1, %b.2)",
    "tuple-typed operand": "  %g.3 = f32[2]{0} get-tuple-element((f32[2]{0}, f32[2]{0}) %tup.8), index=0",
    "tuple operand declared wrong": "  %g.3 = f32[2]{0} get-tuple-element((f32[3]{0}, f32[2]{0}) %tup.8), index=0",
    "mixed typed and untyped": "  %add.3 = f32[2]{0} add(f32[2]{0} %a.1, %b.2)",
    "last comma": "  %add.3 = f32[2]{0} add(f32[2]{0} %a.1, %b.2,)",
    "tuple result": "  %t.3 = (f32[2]{0}, (f32[2]{0}, s32[])) tuple(%a.1, %tup2.9)",
    "tuple result, space before '('": "  %t.3 = (f32[2]{0}, f32[2]{0})tuple (%a.1, %b.2)",
    "index comment in a tuple": "  %t.3 = (f32[2]{0}, /*index=1*/f32[2]{0}) tuple(f32[2]{0} %a.1, f32[2]{0} %b.2)",
    "block comment inside a string": '  %add.3 = f32[2]{0} add(%a.1, %b.2), metadata={op_name="a/*b*/c"}',
    "unterminated block comment": "  %add.3 = f32[2]{0} add(%a.1, %b.2) /* never closed",
    "line comment after a block comment": "  %add.3 = f32[2]{0} add(%a.1, /* b */ %b.2) // end",
    "unknown element type in a tuple": "  %t.3 = (f32[2]{0}, q7[2]{0}) tuple(%a.1, %b.2)",
    "buffer in a tuple": "  %t.3 = (f32[2]{0}, b(f32[2]{0})) tuple(%a.1, %b.2)",
}


def _module_with(line: str) -> str:
    return "\n".join([
        "HloModule m",
        "",
        "%sum (x: f32[], y: f32[]) -> f32[] {",
        "  %x = f32[] parameter(0)",
        "  %y = f32[] parameter(1)",
        "  ROOT %s = f32[] add(f32[] %x, f32[] %y)",
        "}",
        "",
        "ENTRY %main (a.1: f32[2], b.2: f32[2]) -> f32[2] {",
        "  %a.1 = f32[2]{0} parameter(0)",
        "  %b.2 = f32[2]{0} parameter(1)",
        "  %later.9 = f32[2]{0} negate(f32[2]{0} %a.1)",
        "  %tup.8 = (f32[2]{0}, f32[2]{0}) tuple(f32[2]{0} %a.1, f32[2]{0} %b.2)",
        "  %s.7 = s32[] constant(1)",
        "  %tup2.9 = (f32[2]{0}, s32[]) tuple(f32[2]{0} %a.1, s32[] %s.7)",
        "  %g.6 = f32[2]{0} get-tuple-element((f32[2]{0}, f32[2]{0}) %tup.8), index=1",
        line,
        "  ROOT %out.4 = f32[2]{0} add(f32[2]{0} %a.1, f32[2]{0} %b.2)",
        "}",
        "",
    ])


@needs_native
@pytest.mark.parametrize("line", list(_LINES.values()), ids=list(_LINES))
def test_odd_line_reads_the_same_both_ways(line, monkeypatch):
    text = _module_with(line)
    assert _outcome(text, "m.hlo", True, monkeypatch) == _outcome(text, "m.hlo", False, monkeypatch)


@needs_native
def test_fast_path_reads_torch_xla_lines_and_stops_where_it_must():
    """The accelerator does its job: it takes torch_xla's lines (typed operands, metadata with a path, a tuple with
    index comments) and stops at a line it leaves to the parser (a statement continued on the next line),
    returning that line's index."""
    shape_cache.clear()
    parse_module(_module_with(_LINES["typed operands"]))  # fills the shape cache as a first computation would
    lines = [
        '  %a.1 = f32[2]{0} parameter(0), metadata={source_file="/home/user/t.py" source_line=3}',
        '  %n.2 = f32[2]{0} negate(f32[2]{0} %a.1), metadata={op_type="aten__neg" op_name="aten__neg"}',
        "",
        "  %t.3 = (f32[2]{0}, /*index=1*/f32[2]{0}) tuple(f32[2]{0} %n.2, f32[2]{0} %a.1)",
        "  %m.4 = f32[2]{0} multiply(%a.1,",
        "      %n.2)",
        "}",
    ]
    out: list = []
    refs: dict = {}
    args = (refs, shape_cache, parser_module.Instruction, out, [], parser_module.parse_shape_at, parser_module.Shape)
    assert native.parse_lines(lines, 0, 10, *args) == 4
    assert [(i.name, i.opcode, i.operands, i.parameter_number, i.line, i.col) for i in out] == [
        ("a.1", "parameter", (), 0, 10, 3), ("n.2", "negate", ("a.1",), None, 11, 3),
        ("t.3", "tuple", ("n.2", "a.1"), None, 13, 3)]
    assert out[1].attrs == {"metadata": '{op_type="aten__neg" op_name="aten__neg"}'}
    assert str(out[2].shape) == "(f32[2]{0}, f32[2]{0})"
    assert native.parse_lines(lines, 6, 10, *args) == 6  # the computation's end is the parser's


@needs_native
@pytest.mark.parametrize("size", [0, 1, 111, 127, 128, 129, 255, 256, 257, 1000])
@pytest.mark.parametrize("digest", [8, 12, 16, 64])
def test_blake2b_matches_hashlib(size, digest):
    data = hashlib.sha512(str(size).encode()).digest() * (size // 64 + 1)
    data = data[:size]
    assert native.blake2b_hex(data, digest) == hashlib.blake2b(data, digest_size=digest).hexdigest()


def test_pure_python_switch_turns_the_accelerator_off():
    """``HLODIFF_PURE_PYTHON=1`` runs the Python code (what an install without a compiler runs), and the CLI's
    answer is the same byte for byte."""
    pair = [str(FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0") + f"#{n}" for n in (1, 2)]
    probe = [sys.executable, "-c", "from hlodiff.accel import native; print(native is None)"]
    pure_env = {**os.environ, "HLODIFF_PURE_PYTHON": "1"}
    assert subprocess.run(probe, env=pure_env, capture_output=True, text=True).stdout.strip() == "True"
    pure = run_hlodiff("compare", *pair, "--json", env=pure_env)
    fast = run_hlodiff("compare", *pair, "--json")
    assert pure.returncode == fast.returncode and pure.returncode in (0, 1)
    assert pure.stdout == fast.stdout and '"causes"' in pure.stdout


@pytest.mark.parametrize("use_native", [True, False], ids=["accelerator", "pure Python"])
def test_long_tuple_shapes_are_not_kept_by_their_text(use_native, monkeypatch):
    """The shape cache keeps short tuple texts (get-tuple-element operands recur) but not a root tuple of hundreds
    of outputs, which differs from module to module: a run of thousands of distinct modules would grow it without
    bound."""
    if use_native and native is None and not ACCEL_REQUIRED:
        pytest.skip("the accelerator was not built (no C compiler at install)")
    from hlodiff.hlo.shapes import CACHED_TUPLE_TEXT

    _switch(monkeypatch, use_native)
    shape_cache.clear()
    module = parse_module(_read(FIXTURES / "big" / "transformer24.hlo.gz"))
    assert len(str(module.entry.root.shape)) > 10 * CACHED_TUPLE_TEXT  # the case: a root tuple of 875 outputs
    assert max(map(len, shape_cache)) <= CACHED_TUPLE_TEXT
    assert any(key.startswith("(") for key in shape_cache)  # short tuples are still found by their text


@needs_native
@pytest.mark.parametrize("name", ["big/transformer24.hlo.gz", "torch_xla/metric_even_steps/graphs.hlo.0"])
def test_operands_name_their_definition_by_the_same_object(name, monkeypatch):
    """An operand read by the accelerator is the very string object of the instruction it names (typed operands as
    torch_xla writes them, untyped as JAX does): every name-keyed lookup of an operand (hashes, walks, matching)
    then finds its key by identity, and a 300K-instruction pair holds each name once (issue 34: 0.9x the time,
    48 MB less). The Python parser's operands are equal strings, which the parity tests above compare."""
    _switch(monkeypatch, True)
    shape_cache.clear()
    module = parse_module(_read(FIXTURES / name) if name.endswith(".gz") else next(iter_graphs(FIXTURES / name)).text())
    shared = total = 0
    for comp in module.computations:
        defined = {inst.name: inst.name for inst in comp.instructions}
        for inst in comp.instructions:
            for op in inst.operands:
                total += 1
                shared += op is defined.get(op)
    assert total > 100 and shared == total


@needs_native
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="lowering the block pair needs the jax extra")
def test_unrolled_blocks_pair_diffs_the_same_both_ways(tmp_path, monkeypatch):
    """bench/gen_jax_blocks.py's pair at 40 blocks (the 300K benchmark's program): a changed constant in block 20
    makes every later block's hashes differ, so half the entry is paired top-down (most pairs there with one free
    operand, which the accelerator pairs itself), and two outputs swapped."""
    from test_shared_constants import _lower

    texts = [open(_lower(tmp_path / "a.hlo", 40, -1, False, every=10)).read(),
             open(_lower(tmp_path / "b.hlo", 40, 20, True, every=10)).read()]
    fast = _diff_outcome(*texts, True, monkeypatch)
    assert fast == _diff_outcome(*texts, False, monkeypatch)
    assert sum(how == "top_down" for _, how in fast[1][0][1]) > 100


@needs_native
def test_matching_over_positions_pairs_as_the_name_keyed_walks(monkeypatch):
    """The 33k-instruction pair (permuted parameters, reordered outputs, one more output): the matchers' walks over
    the two graph indexes' positions (pairs.c) make the same pairs, by the same matchers, in the same order (the
    order reports list them in) as the pure-Python walks over name-keyed maps."""
    texts = [_read(FIXTURES / "big" / f"transformer24{v}.hlo.gz") for v in ("", "_variant")]
    fast = _diff_outcome(*texts, True, monkeypatch)
    mirrored = [bool(cd.matching._pairs) for cd in diff_canonical(*(canonicalize(parse_module(t)) for t in texts))
                .computations]
    assert fast == _diff_outcome(*texts, False, monkeypatch)
    assert mirrored[0] and len(fast[1][0][0]) > 20000


def _fresh(name: str) -> str:
    """An equal name held by another string object (a name the parser did not share)."""
    return "".join(list(name))


@needs_native
@pytest.mark.parametrize("operands", [
    {"a": (), "b": ("a",), "c": ("a", "b"), "p": (), "d": ("c", "c", "p"), "e": ()},  # operand-first, dead "e"
    {"d": ("c", "p"), "c": ("b", "a"), "b": ("a",), "a": (), "p": (), "e": ("d",)},  # users first
], ids=["operand-first", "users-first"])
def test_graph_index_walks_as_the_dict_walks(operands):
    """The integer-array form of a computation answers as the dict walks do, with operands spelled by other string
    objects than the keys (found by value), in either text order."""
    operands = {name: tuple(_fresh(op) for op in ops) for name, ops in operands.items()}
    index = native.graph_index(operands)
    assert native.index_ordered(index) == native.defined_before_use(operands)
    for roots in (["d"], ["d", "e"], ["a"]):
        assert native.index_live_count(index, roots) == len(native.live(list(roots), operands))
    for root in operands:
        assert native.index_postorder(index, _fresh(root)) == native.postorder(root, operands)[0]
    users = native.users_of(operands)
    assert native.index_users(index) == users and list(native.index_users(index)) == list(users)
    assert {name: native.index_users_of(index, _fresh(name)) for name in operands} == users
    params = {"a", "p", "e"}
    ids_dict, ids_index = {}, {}
    native.number_params(["c", "p"], {"d"}, set(params), operands, ids_dict)
    native.index_number_params(index, [_fresh("c"), "p"], "d", set(params), ids_index)
    assert list(ids_index.items()) == list(ids_dict.items()) and ids_dict
    assert native.graph_index({"a": ("missing",)}) is None  # the dict walks raise their KeyError instead
    with pytest.raises(KeyError):
        native.index_postorder(index, "missing")
    native.index_compact(index)  # without its table of names: the same answers
    for root in operands:
        assert native.index_postorder(index, root) == native.index_postorder(index, _fresh(root)) \
            == native.postorder(root, operands)[0]
        assert native.index_users_of(index, root) == users[root]  # its table made again for the users asked
    with pytest.raises(KeyError):
        native.index_users_of(index, "missing")
    with pytest.raises(KeyError):
        native.index_postorder(index, "missing")


@needs_native
def test_passes_that_rewrite_operands_drop_the_index(monkeypatch):
    """Tuple plumbing and dead code change operand lists after the index may exist: it is made again from them."""
    from hlodiff.graph import canonical
    from hlodiff.graph.canonical import build_computation, graph_index
    from hlodiff.graph.passes import dead_code, tuple_plumbing

    monkeypatch.setattr(canonical, "INDEX_MIN", 0)  # an index for this small computation too

    text = ("HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n"
            "  %unused = f32[2] negate(f32[2] %p)\n  %t = (f32[2], f32[2]) tuple(f32[2] %p, f32[2] %p)\n"
            "  %g = f32[2] get-tuple-element((f32[2], f32[2]) %t), index=1\n  ROOT %r = f32[2] add(f32[2] %g, f32[2] %p)\n}\n")
    module = parse_module(text)
    cc = build_computation(module.entry)
    assert graph_index(cc) is not None
    cm = type("CM", (), {"computations": {cc.name: cc}})()
    assert dead_code.run(cm).count == 1 and cc._index is None
    assert graph_index(cc) is not None
    assert tuple_plumbing.run(cm).count == 1 and cc._index is None
    assert cm.computations[cc.name].operands["r"] == ("p", "p")


@pytest.mark.parametrize("gte", [True, False], ids=["a tuple read", "no get-tuple-element"])
def test_metadata_and_tuple_counts_from_the_build_walk_as_by_walking(gte, monkeypatch):
    """The metadata and tuple-plumbing passes take what the walk that built each computation's maps counted, less
    what dead code and tuple plumbing removed: their reports say what walking every instruction again says (the
    Python twin), here with a dead instruction and a folded read that carry metadata."""
    from hlodiff.graph import Normalization

    meta = ', metadata={op_name="x" source_file="t.py" source_line=%d}'
    read = ("  %%t = (f32[2], f32[2]) tuple(f32[2] %%p, f32[2] %%p)\n"
            "  %%g = f32[2] get-tuple-element((f32[2], f32[2]) %%t), index=1" + meta % 5 + "\n") if gte else ""
    text = ("HloModule m\n\nENTRY %%main (p: f32[2]) -> f32[2] {\n  %%p = f32[2] parameter(0)" + meta % 3 + "\n"
            "  %%unused = f32[2] negate(f32[2] %%p)" + meta % 4 + "\n" + read
            + "  ROOT %%r = f32[2] add(f32[2] %%" + ("g" if gte else "p") + ", f32[2] %%p)" + meta % 6 + "\n}\n") % ()
    reports = []
    for on in (True, False):
        _switch(monkeypatch, on)
        cm = canonicalize(parse_module(text), Normalization())
        reports.append([(r.name, r.summary, r.count) for r in cm.reports])
        monkeypatch.undo()
    assert reports[0] == reports[1]
    counts = {name: count for name, _, count in reports[0]}
    assert counts["metadata"] == 2  # p and r: the dead negate and the folded read are gone
    assert counts.get("tuple_plumbing", 0) == (1 if gte else 0)


def _chain_module(users_first: bool, op: str = "negate") -> str:
    """A 22-instruction entry (over the size that gets a graph index), written operand-first or users-first."""
    body = ["  %p = f32[2] parameter(0)", "  %n0 = f32[2] negate(f32[2] %p)"]
    body += [f"  %n{i} = f32[2] {op if i == 10 else 'negate'}(f32[2] %n{i - 1})" for i in range(1, 20)]
    body.append("  ROOT %r = (f32[2], f32[2]) tuple(f32[2] %n19, f32[2] %p)")
    if users_first:
        body.reverse()
    return "HloModule m\n\nENTRY %main (p: f32[2]) -> (f32[2], f32[2]) {\n" + "\n".join(body) + "\n}\n"


@needs_native
@pytest.mark.parametrize("users_first", [False, True], ids=["operand-first", "users-first"])
def test_indexed_computation_hashes_and_diffs_as_python_does(users_first, monkeypatch):
    """An entry big enough for a graph index, in either text order (users-first takes the dict walks over an index
    that is not operand-first): the same labels, hashes, normalized text and diff as the Python twin."""
    text = _chain_module(users_first)
    assert _outcome(text, "m.hlo", True, monkeypatch) == _outcome(text, "m.hlo", False, monkeypatch)
    monkeypatch.undo()  # the accelerator back in every module, for the next pair of runs
    changed = _chain_module(users_first, op="exponential")
    assert _diff_outcome(text, changed, True, monkeypatch) == _diff_outcome(text, changed, False, monkeypatch)


@needs_native
def test_top_down_over_positions_asks_only_about_the_pairs_it_compares(monkeypatch):
    """The walk over positions reads each side's opcodes once; a node without an instruction (canonicalize makes
    none, but the name-keyed walks raise their KeyError only for a pair they compare) does not stop it: the same
    pairs as the Python walk, top-down ones among them."""
    from hlodiff.diff.matchers import match_computations

    outcomes = []
    for on in (True, False):
        _switch(monkeypatch, on)
        shape_cache.clear()
        sides = [canonicalize(parse_module(_chain_module(False, op))).entry for op in ("negate", "exponential")]
        del sides[0].insts["n0"]  # paired by equal hashes: never compared
        m = match_computations(*sides)
        outcomes.append((list(m.l2r.items()), list(m.how.items())))
        assert (m.mirror() is not None) == on
    assert outcomes[0] == outcomes[1] and any(how == "top_down" for _, how in outcomes[0][1])


@needs_native
def test_unsettled_pairs_over_the_indexes_as_over_the_maps():
    """Classification's filter read by position through both graph indexes leaves out exactly the pairs the
    name-keyed filter leaves out, in the same order, and finds the same instructions without a pair, on the
    33k-instruction pair (permuted parameters, reordered
    outputs, one more output); a labels or instructions map keyed by other objects of the same names makes it
    decline (None), so the caller takes the name-keyed walks."""
    from hlodiff.graph.canonical import graph_index

    texts = [_read(FIXTURES / "big" / f"transformer24{v}.hlo.gz") for v in ("", "_variant")]
    shape_cache.clear()
    diff = diff_canonical(*(canonicalize(parse_module(t)) for t in texts))
    indexed = unpaired = 0
    for cd in diff.computations:
        m = cd.matching
        lix, rix = graph_index(m.left), graph_index(m.right)
        if not (lix and rix):
            continue
        by_name = native.unsettled_pairs(m.l2r, m.left.labels, m.right.labels, m.left.operands, m.right.operands)
        linsts, rinsts = m.left.insts, m.right.insts
        by_position = native.index_unsettled(m.l2r, lix, rix, m.left.labels, m.right.labels, linsts, rinsts)
        assert by_position[0] == by_name
        assert by_position[1] == [(n, i) for n, i in linsts.items() if n not in m.l2r]
        assert by_position[2] == [(n, i) for n, i in rinsts.items() if n not in m.r2l]
        mirror = m.mirror()  # the matchers' pairs as positions (pairs.c): the same answers without a table made
        assert mirror is not None and native.pairs_unsettled(mirror, m.left.labels, m.right.labels, linsts,
                                                             rinsts) == by_position
        for count_metadata in (True, False):
            assert native.pairs_renamed_and_metadata(mirror, linsts, rinsts, count_metadata) \
                == native.renamed_and_metadata(m.l2r, linsts, rinsts, count_metadata)
        indexed += 1
        unpaired += len(by_position[1]) + len(by_position[2])
        if len(by_name) > 1:
            fresh = {_fresh(k): v for k, v in m.left.labels.items()}
            assert native.index_unsettled(m.l2r, lix, rix, fresh, m.right.labels, linsts, rinsts) is None
            fresh = {_fresh(k): v for k, v in rinsts.items()}
            assert native.index_unsettled(m.l2r, lix, rix, m.left.labels, m.right.labels, linsts, fresh) is None
    assert indexed and unpaired and any(len(cd.matching.l2r) > 10000 for cd in diff.computations)


def test_a_module_built_from_other_sources_is_not_used(tmp_path):
    # review 7: a checkout updated without rebuilding ran new Python code against an old module and stopped with
    # "internal error: module 'hlodiff._accel' has no attribute 'index_unsettled'"; such a module is now set aside
    from types import SimpleNamespace

    from hlodiff import accel

    (tmp_path / "a.c").write_text("int f(void) { return 1; }\n")
    (tmp_path / "accel.h").write_text("int f(void);\n")
    built = SimpleNamespace(SOURCE_DIGEST=accel.source_digest(tmp_path))
    assert accel.usable(built, tmp_path)
    (tmp_path / "a.c").write_text("int f(void) { return 2; }\n")  # the sources moved on, the module did not
    assert not accel.usable(built, tmp_path)
    assert not accel.usable(SimpleNamespace(), tmp_path)  # a module from before digests were compiled in
    assert accel.usable(SimpleNamespace(), tmp_path / "absent")  # an installed wheel: nothing to compare with


def test_the_built_module_matches_its_sources_and_setup_py_digests_them_the_same_way():
    import importlib.util
    from pathlib import Path

    from hlodiff import accel

    root = Path(accel.__file__).resolve().parent.parent
    text = (root / "setup.py").read_text()
    namespace: dict = {}
    exec(compile(text.split("\nsetup(")[0], str(root / "setup.py"), "exec"), namespace)  # the digest, not setup()
    assert namespace["source_digest"](accel.SOURCES) == accel.source_digest(accel.SOURCES)
    if accel.native is not None:
        assert accel.native.SOURCE_DIGEST == accel.source_digest(accel.SOURCES)


def _calls_module(entry_size: int) -> str:
    """Calls of every spelling a call attribute has (one name, a braced list of names, with or without '%'), in an
    entry small or big enough for a graph index, and a frontend attribute beside one."""
    regions = "".join(f"%r{k}.{k} (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n"
                      f"  %b = f32[] parameter(1)\n  ROOT %s = f32[] {op}(f32[] %a, f32[] %b)\n}}\n\n"
                      for k, op in enumerate(("add", "maximum", "add")))
    body = ["  %p = f32[4] parameter(0)", "  %z = f32[] constant(0)", "  %i = s32[] constant(1)"]
    body += [f"  %n{k} = f32[4] negate(f32[4] {'%p' if k == 0 else f'%n{k - 1}'})" for k in range(entry_size)]
    last = f"%n{entry_size - 1}"
    body += [f"  %red = f32[] reduce(f32[4] {last}, f32[] %z), dimensions={{0}}, to_apply=%r0.0",
             f"  %red2 = f32[] reduce(f32[4] {last}, f32[] %z), dimensions={{0}}, to_apply=r1.1, "
             'frontend_attributes={_xla_stream="1"}',
             f"  %call = f32[4] map(f32[4] {last}, f32[4] %p), dimensions={{0}}, to_apply=%r2.2",
             "  %c = f32[] conditional(s32[] %i, f32[] %red, f32[] %red2), branch_computations={%neg.3, neg.3}",
             "  ROOT %t = (f32[], f32[4]) tuple(f32[] %c, f32[4] %call)"]
    return ("HloModule m\n\n" + regions + "%neg.3 (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
            "  ROOT %y = f32[] negate(f32[] %x)\n}\n\nENTRY %main (p: f32[4]) -> (f32[], f32[4]) {\n" + "\n".join(body)
            + "\n}\n")


@needs_native
def test_reachable_computations_walked_in_c_as_in_python(monkeypatch):
    """The walk that finds what the entry calls (callees first, the entry last) gives the Python twin's list: plain
    callees read in C, lists and two-key calls (a while's condition and body) read by called_computations, an
    uncalled computation left out, and a malformed callee the same error."""
    from hlodiff.graph import canonical
    from hlodiff.hlo.attributes import called_computations

    text = _calls_module(2).replace(
        "ENTRY %main", "%cond.4 (s: s32[]) -> pred[] {\n  %s = s32[] parameter(0)\n"
        "  ROOT %lt = pred[] compare(s32[] %s, s32[] %s), direction=LT\n}\n\n"
        "%body.5 (s: s32[]) -> s32[] {\n  ROOT %s = s32[] parameter(0)\n}\n\n"
        "%unused.6 (s: s32[]) -> s32[] {\n  ROOT %s = s32[] parameter(0)\n}\n\nENTRY %main").replace(
        "  ROOT %t", "  %w = s32[] while(s32[] %i), condition=%cond.4, body=%body.5\n  ROOT %t")
    module = parse_module(text)
    asked = []
    monkeypatch.setattr(canonical, "called_computations", lambda attrs: asked.append(attrs) or called_computations(attrs))
    fast = [c.name for c in canonical.reachable_computations(module)]
    assert sorted(len(attrs) for attrs in asked) == [1, 2]  # the braced list and the while; three plain ones in C
    monkeypatch.setattr(canonical, "native", None)
    assert fast == [c.name for c in canonical.reachable_computations(module)]
    assert "unused.6" not in fast and fast[-1] == "main" and {"r0.0", "r1.1", "r2.2", "neg.3", "body.5"} <= set(fast)
    red = next(inst for inst in module.entry.instructions if inst.name == "red")
    red.attrs = {"dimensions": "{0}", "to_apply": "%%r0.0"}  # not a name
    errors = []
    for on in (None, native):
        monkeypatch.setattr(canonical, "native", on)
        with pytest.raises(HloParseError) as caught:
            canonical.reachable_computations(module)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@needs_native
@pytest.mark.parametrize("entry_size", [2, 40], ids=["no index", "indexed"])
def test_call_attributes_labelled_in_c_as_in_python(entry_size, monkeypatch):
    """A call's label holds its callees' hashes (#hash for each name): made in C now, not by the Python label, with
    the same text for each spelling of a callee list."""
    text = _calls_module(entry_size)
    python_labels = []
    label = fingerprint_module._label
    monkeypatch.setattr(fingerprint_module, "_label", lambda *a, **k: python_labels.append(a[1].name) or label(*a, **k))
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    assert python_labels == []  # every call labelled in C
    assert fast[0] == "parsed" and fast == _outcome(text, "m.hlo", False, monkeypatch)
    assert {"red", "red2", "call", "c"} <= set(python_labels)  # the reference made them in Python
    labels = fast[3]["main"][0]
    assert re.fullmatch(r"conditional\|f32\[\]\|branch_computations=\{#([0-9a-f]{24}), #\1\}", labels["c"])
    assert re.fullmatch(r"reduce\|f32\[\]\|dimensions=\{0\}\|to_apply=#[0-9a-f]{24}\|"
                        r'frontend_attributes=\{_xla_stream="1"\}', labels["red2"])


@needs_native
def test_recurring_labels_with_attributes_are_one_string(monkeypatch):
    """Unrolled blocks repeat labels that carry attributes (a broadcast's dimensions, a reduce's callee): one string
    for each text, whatever the graph's size, the same text as the Python label; a long literal is not kept."""
    body = ["  %p = f32[4] parameter(0)", "  %z = f32[] constant(0)"]
    for k in range(30):
        prev = "%p" if k == 0 else f"%a{k - 1}"
        body += [f"  %b{k} = f32[4,8]{{1,0}} broadcast(f32[4] {prev}), dimensions={{0}}",
                 f"  %a{k} = f32[4] reduce(f32[4,8]{{1,0}} %b{k}, f32[] %z), dimensions={{1}}, to_apply=%r{k}"]
    body += ["  %big = f32[300] constant({" + ",".join(["1.5"] * 300) + "})",
             "  ROOT %t = (f32[4], f32[300]) tuple(f32[4] %a29, f32[300] %big)"]
    regions = "".join(f"%r{k} (x: f32[], y: f32[]) -> f32[] {{\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
                      f"  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n}}\n\n" for k in range(30))
    text = "HloModule m\n\n" + regions + "ENTRY %main (p: f32[4]) -> (f32[4], f32[300]) {\n" + "\n".join(body) + "\n}\n"
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    labels = canonicalize(parse_module(text)).entry.labels
    assert fast == _outcome(text, "m.hlo", False, monkeypatch)
    for prefix in ("b", "a"):  # the broadcasts, the reduces
        texts = [v for n, v in labels.items() if n[0] == prefix and n[1:].isdigit()]
        assert len(texts) == 30 and len({id(v) for v in texts}) == 1, prefix
    monkeypatch.undo()
    again = canonicalize(parse_module(text)).entry.labels
    assert again["big"] == labels["big"] and again["big"] is not labels["big"]


def _regions_module(n: int = 30) -> str:
    """An unrolled step's shape: n alike two-parameter reductions, each called by one reduce of the entry."""
    regions = "".join(f"%r{k} (x: f32[], y: f32[]) -> f32[] {{\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
                      f"  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n}}\n\n" for k in range(n))
    body = ["  %p = f32[4] parameter(0)", "  %z = f32[] constant(0)"]
    body += [f"  %a{k} = f32[] reduce(f32[4] %p, f32[] %z), dimensions={{0}}, to_apply=%r{k}" for k in range(n)]
    body.append(f"  ROOT %t = f32[] add(f32[] %a0, f32[] %a{n - 1})")
    return "HloModule m\n\n" + regions + "ENTRY %main (p: f32[4]) -> f32[] {\n" + "\n".join(body) + "\n}\n"


@needs_native
def test_label_counts_make_the_maps_of_one_small_computation_per_hash(monkeypatch):
    """Explain ranks earlier graphs by their label multisets (every computation's): with the maps of alike small
    computations not kept, one of each hash makes them again (not 13,600 a graph), and the counts are the Python
    path's."""
    text = _regions_module()
    _switch(monkeypatch, True)
    cm = canonicalize(parse_module(text))
    counts = cm.label_counts()
    assert sum(cm.computations[f"r{k}"]._refill is None for k in range(30)) == 1
    _switch(monkeypatch, False)
    kept = canonicalize(parse_module(text))
    assert counts == Counter(label for cc in kept.computations.values() for label in cc.labels.values())
    assert sum(counts.values()) == 30 * 3 + 5  # the entry: p, z, the two reduces its root reads (dead code), the root


@needs_native
def test_identical_small_computations_share_their_hash_strings(monkeypatch):
    """An unrolled step calls one small reduction per block, all alike: their exact hashes and computation hashes
    are one string per text (not four per region, 4 MB a side of the 300K pair), with the values the Python path
    computes."""
    text = _regions_module()
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    assert fast[0] == "parsed" and fast == _outcome(text, "m.hlo", False, monkeypatch)
    monkeypatch.undo()  # the accelerator back on
    cm = canonicalize(parse_module(text))
    ccs = [cm.computations[f"r{k}"] for k in range(30)]
    for node in ("x", "y", "s"):
        assert len({cc.hashes[node] for cc in ccs}) == 1 and len({id(cc.hashes[node]) for cc in ccs}) == 1, node
    region_hashes = [cm.computation_hashes[f"r{k}"] for k in range(30)]
    assert len(set(region_hashes)) == 1 and len({id(h) for h in region_hashes}) == 1


def _dead_chain_module(dead_op: str) -> str:
    """An entry big enough for a graph index, with a chain of two instructions the root does not reach."""
    body = ["  %p = f32[4] parameter(0)"]
    body += [f"  %n{k} = f32[4] negate(f32[4] {'%p' if k == 0 else f'%n{k - 1}'})" for k in range(30)]
    body += ["  %d0 = f32[4] exponential(f32[4] %n3)", f"  %d1 = f32[4] {dead_op}(f32[4] %d0)",
             "  ROOT %r = f32[4] abs(f32[4] %n29)"]
    return "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n" + "\n".join(body) + "\n}\n"


@needs_native
def test_nodes_the_root_does_not_reach_keep_their_hashes_in_c(monkeypatch):
    """The accelerator keeps only the exact hashes that are read (the root's, and those of the nodes the root does
    not reach): with dead code kept, such nodes still order the normalized text and change the fingerprint, the
    same both ways."""
    from hlodiff.graph import Normalization

    def seen(text: str) -> tuple[str, str, bool]:
        cm = canonicalize(parse_module(text), Normalization(dead_code=False))
        return cm.fingerprint, normalized_text(cm), cm.entry._index is not None

    neg, sine = _dead_chain_module("negate"), _dead_chain_module("sine")
    _switch(monkeypatch, True)
    fast = seen(neg), seen(sine)
    _switch(monkeypatch, False)
    assert [f[:2] for f in fast] == [seen(neg)[:2], seen(sine)[:2]]
    assert fast[0][2] and fast[1][2]  # the accelerator's indexed path ran
    assert fast[0][0] != fast[1][0]
    assert "exponential" in fast[0][1] and "sine" in fast[1][1]


def _small_calls_module() -> str:
    """Small called computations of every kind the one-call path meets: plain ones, one calling another (its
    label holds the callee's hash), one printed root first, one with a side effect; the entry calls them all."""
    comps = [
        "%r0 (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
        "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n",
        "%r1 (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
        "  ROOT %s = f32[] call(f32[] %b, f32[] %a), to_apply=%r0\n}\n",
        "%r2 (a: f32[], b: f32[]) -> f32[] {\n  ROOT %s = f32[] maximum(f32[] %a, f32[] %b)\n"
        "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n}\n",
        "%r3 (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
        '  %cc = () custom-call(f32[] %a), custom_call_target="log", custom_call_has_side_effect=true\n'
        "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n",
        "%r4 (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(1)\n  %b = f32[] parameter(0)\n"
        "  ROOT %s = f32[] call(f32[] %a, f32[] %b), to_apply=%r1\n}\n",
    ]
    body = ["  %p = f32[4] parameter(0)", "  %z = f32[] constant(0)"]
    body += [f"  %red{k} = f32[] reduce(f32[4] %p, f32[] %z), dimensions={{0}}, to_apply=%r{k}" for k in range(5)]
    body += ["  ROOT %t = (f32[], f32[], f32[], f32[], f32[]) tuple(" + ", ".join(f"f32[] %red{k}" for k in range(5))
             + ")"]
    return ("HloModule m\n\n" + "\n".join(comps) + "\nENTRY %main (p: f32[4]) -> (f32[], f32[], f32[], f32[], f32[]) {\n"
            + "\n".join(body) + "\n}\n")


@needs_native
def test_small_computations_hashed_in_one_call_as_in_python(monkeypatch):
    """Runs of small called computations are hashed in one C call each (hash_small), which stops at what it does
    not take (root printed first, a side effect, the entry) and leaves it to the Python path: the same labels,
    hashes, fingerprint and normalized text as the Python code, and a callee hashed before its caller."""
    text = _small_calls_module()
    in_python = []
    general = fingerprint_module._hash_computation
    monkeypatch.setattr(fingerprint_module, "_hash_computation",
                        lambda cm, cc, *a: in_python.append(cc.name) or general(cm, cc, *a))
    _switch(monkeypatch, True)
    canonicalize(parse_module(text))  # (reading the maps of the others makes them again: _outcome does below)
    assert sorted(in_python) == ["main", "r2", "r3"]  # root printed first, a side effect, the entry
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    assert fast[0] == "parsed" and fast == _outcome(text, "m.hlo", False, monkeypatch)
    labels = fast[3]["r4"][0]
    assert labels["s"] == "call|f32[]|to_apply=#" + fast[5]["r1"]


@needs_native
def test_small_computations_keep_their_hash_and_make_their_maps_again_when_read(monkeypatch):
    """hash_small keeps a small called computation's hash, not its maps (labels, hashes, parameter numbers: 22 MiB
    for the 13,600 reductions a side of an unrolled step); a reader gets them made again, equal to what the Python
    path keeps, and a change inside such a computation is compared as without the accelerator."""
    text = _small_calls_module()
    _switch(monkeypatch, True)
    cm = canonicalize(parse_module(text))
    small = [cm.computations[n] for n in ("r0", "r1", "r4")]
    assert all(cc._labels is None and cc._refill is not None for cc in small)  # hash_small's, not kept
    assert all(cc._labels is not None for cc in (cm.computations["r2"], cm.computations["r3"], cm.entry))
    made = {cc.name: (cc.param_ids, cc.labels, cc.anon, cc.hashes) for cc in small}
    assert all(cc._refill is None for cc in small)  # made once
    changed = text.replace("ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n%r1", "ROOT %s = f32[] multiply(f32[] %a, "
                           "f32[] %b)\n}\n\n%r1")
    assert changed != text
    fast = _diff_outcome(text, changed, True, monkeypatch)
    assert '"multiply"' in fast[0] and fast == _diff_outcome(text, changed, False, monkeypatch)  # (now off)
    kept = canonicalize(parse_module(text)).computations
    assert made == {n: (kept[n].param_ids, kept[n].labels, kept[n].anon, kept[n].hashes) for n in made}
    assert made["r4"][0] == {"a": 1, "b": 0}  # r4 reads its parameters in the other order


@needs_native
def test_small_computations_make_their_instruction_maps_again_when_read(monkeypatch):
    """hash_small drops a small called computation's insts and operands too (two dicts each: 10 MB for the 27,000
    reductions of the 300K pair), and only when no pass changed them: read, they are made again, in the same
    order, the same objects the Python path keeps; the names pass counts instructions without making them."""
    dead = "  %d = f32[] negate(f32[] %a)\n  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n%r1"
    text = _small_calls_module().replace("  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n%r1", dead, 1)
    assert "%d = f32[] negate" in text
    _switch(monkeypatch, True)
    cm = canonicalize(parse_module(text))
    dropped = [cm.computations[n] for n in ("r1", "r4")]
    assert all(cc._size == 3 and cc._params is None for cc in dropped)  # dropped, their size kept
    assert cm.computations["r0"]._size == -1  # dead code removed %d: its maps are not what the text says
    names = next(r for r in cm.reports if r.name == "names")
    assert all(cc._size == 3 for cc in dropped)  # counted, not made
    made = {cc.name: (cc.insts, cc.operands) for cc in dropped}
    assert all(cc._size == -1 and type(cc) is CanonicalComputation for cc in dropped)  # made once, plain again
    _switch(monkeypatch, False)
    kept = canonicalize(parse_module(text))
    assert names.count == next(r for r in kept.reports if r.name == "names").count == 3 + 3 + 3 + 4 + 3 + 8
    for n, (insts, operands) in made.items():
        assert list(insts.items()) == [(k, v) for k, v in kept.computations[n].insts.items()]
        assert list(operands.items()) == list(kept.computations[n].operands.items())
        assert cm.computations[n].parameters() == kept.computations[n].parameters() == ["a", "b"]


@needs_native
def test_scanning_every_instruction_does_not_make_dropped_maps_again(monkeypatch):
    """Explain's checks that scan every instruction of a graph (slices, while conditions, opcode counts, shapes,
    frames) read each computation's instructions() and so leave hash_small's dropped maps dropped (the 300K family's
    13,600 reductions a side), seeing the same instructions in the same order as the Python path's maps: a
    computation dead code changed gives its own maps (the removed instruction is not there)."""
    dead = "  %d = f32[] negate(f32[] %a)\n  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n%r1"
    text = _small_calls_module().replace("  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n%r1", dead, 1)
    _switch(monkeypatch, True)
    cm = canonicalize(parse_module(text))
    seen = {n: [i.name for i in cc.instructions()] for n, cc in cm.computations.items()}
    assert all(cm.computations[n]._size == 3 for n in ("r1", "r4"))  # still dropped
    _switch(monkeypatch, False)
    kept = canonicalize(parse_module(text)).computations
    assert seen == {n: list(cc.insts) for n, cc in kept.items()}
    assert "d" not in seen["r0"]


@needs_native
@pytest.mark.parametrize("broken", [(1, 3), (3, 1)], ids=["duplicate first", "undefined first"])
def test_first_broken_computation_is_the_one_reported_both_ways(broken, monkeypatch):
    """The computations the accelerator finds clean are checked no further (one call for all of them); the others
    are checked in module order, so the error is the first broken computation's, whichever way it is read."""
    dup, undefined = broken
    comps = []
    for k in range(5):
        second = "  %a = f32[] parameter(1)" if k == dup else "  %b = f32[] parameter(1)"
        root = "  ROOT %s = f32[] add(f32[] %a, f32[] %nowhere)" if k == undefined else \
            "  ROOT %s = f32[] add(f32[] %a, f32[] %b)"
        comps.append(f"%r{k} (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n{second}\n{root}\n}}\n")
    body = ["  %p = f32[4] parameter(0)", "  %z = f32[] constant(0)"]
    body += [f"  %red{k} = f32[] reduce(f32[4] %p, f32[] %z), dimensions={{0}}, to_apply=%r{k}" for k in range(5)]
    body.append("  ROOT %t = (f32[], f32[]) tuple(f32[] %red0, f32[] %red4)")
    text = "HloModule m\n\n" + "\n".join(comps) + "\nENTRY %main (p: f32[4]) -> (f32[], f32[]) {\n" + \
        "\n".join(body) + "\n}\n"
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    assert fast[0] == "error" and f"r{min(broken)}" in fast[1]
    assert fast == _outcome(text, "m.hlo", False, monkeypatch)


@needs_native
def test_first_call_of_an_undefined_computation_is_reported_both_ways(monkeypatch):
    """The instructions that call are found for the whole module in one C call (with_attribute_each); the first
    call of a computation that does not exist, in module order, is still the one reported."""
    comps = [f"%r{k} (a: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n"
             f"  ROOT %s = f32[] call(f32[] %a), to_apply=%{'missing' + str(k) if k in (2, 4) else 'leaf'}\n}}\n"
             for k in range(5)]
    leaf = "%leaf (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n"
    body = ["  %p = f32[] parameter(0)"] + [f"  %c{k} = f32[] call(f32[] %p), to_apply=%r{k}" for k in range(5)]
    body.append("  ROOT %t = (f32[], f32[]) tuple(f32[] %c0, f32[] %c4)")
    text = "HloModule m\n\n" + leaf + "\n" + "\n".join(comps) + "\nENTRY %main (p: f32[]) -> (f32[], f32[]) {\n" + \
        "\n".join(body) + "\n}\n"
    fine = _outcome(text.replace("%missing2", "%leaf").replace("%missing4", "%leaf"), "m.hlo", True, monkeypatch)
    assert fine[0] == "parsed" and set(fine[3]) == {"main", "leaf", "r0", "r1", "r2", "r3", "r4"}  # all reached
    fast = _outcome(text, "m.hlo", True, monkeypatch)  # (the switch goes one way: C first)
    assert fast[0] == "error" and "'missing2'" in fast[1]
    assert fast == _outcome(text, "m.hlo", False, monkeypatch)


_BROADCASTS = {  # entry bodies: a broadcast the triage in C passes over (dimensions given), or hands to the rule
    "with dimensions": "  p = f32[2]{0} parameter(0)\n  ROOT b = f32[3,2]{1,0} broadcast(p), dimensions={1}",
    "non-scalar without dimensions": "  p = f32[2]{0} parameter(0)\n  ROOT b = f32[3,2]{1,0} broadcast(p)",
    "scalar without dimensions": "  p = f32[] parameter(0)\n  ROOT b = f32[3,2]{1,0} broadcast(p)",
    "with dimensions and a bad control predecessor": "  p = f32[2]{0} parameter(0)\n"
        "  ROOT b = f32[3,2]{1,0} broadcast(p), dimensions={1}, control-predecessors={%nowhere}",
}


@needs_native
@pytest.mark.parametrize("case", sorted(_BROADCASTS))
def test_broadcasts_the_c_triage_passes_over_read_as_the_rule_reads_them(case, monkeypatch):
    """The triage in C does not hand the broadcast rule a broadcast with dimensions (the rule returns at once for
    it): the same verdict and error both ways, and the other rules on such a broadcast still run."""
    text = "HloModule m\n\nENTRY e {\n" + _BROADCASTS[case] + "\n}\n"
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    assert fast == _outcome(text, "m.hlo", False, monkeypatch)
    assert (fast[0] == "error") == case.startswith(("non-scalar", "with dimensions and"))


_CALL_RULES = {  # each breaks a rule of the calls between computations (None: none broken)
    "fine": None,
    "defined twice": ("%neg.3 (x", "%neg.3 (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n\n%neg.3 (x"),
    "a second ENTRY": ("%neg.3 (x", "ENTRY %neg.3 (x"),
    "recursion": ("ROOT %y = f32[] negate(f32[] %x)", "ROOT %y = f32[] call(f32[] %x), to_apply=%neg.3"),
    "a listed callee undefined": ("branch_computations={%neg.3, neg.3}", "branch_computations={%neg.3, neg.9}"),
    "a plain callee undefined": ("to_apply=r1.1", "to_apply=r1.9"),
}


@needs_native
@pytest.mark.parametrize("rule", sorted(_CALL_RULES))
def test_calls_between_computations_checked_in_c_as_in_python(rule, monkeypatch):
    """The map of calls the recursion check walks is made in C (plain callees read there, lists by the regular
    expression); a module that breaks a rule gets the Python loop's first error, with its position."""
    text = _calls_module(2)
    if _CALL_RULES[rule] is not None:
        text = text.replace(*_CALL_RULES[rule], 1)
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    assert fast[0] == ("parsed" if _CALL_RULES[rule] is None else "error")
    assert fast == _outcome(text, "m.hlo", False, monkeypatch)


_PLAIN = "r{k} {{\n  a.{k} = f32[] parameter(0)\n  b.{k} = f32[] parameter(1)\n  ROOT s.{k} = f32[] add(a.{k}, b.{k})\n}}\n"
_LEFT_TO_PYTHON = {  # a computation plain_computations does not read whole, for the Python parser to read
    "signature": "%x (p: f32[], q: f32[]) -> f32[] {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n"
                 "  ROOT s = f32[] add(p, q)\n}\n",
    "comment inside": "x {\n  p = f32[] parameter(0)\n  // a note\n  q = f32[] parameter(1)\n  ROOT s = f32[] add(p, q)\n}\n",
    "attributes after the brace": "x {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n"
                                  "  ROOT s = f32[] add(p, q)\n}, execution_thread=\"side\"\n",
    "typed operand": "x {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n  ROOT s = f32[] add(f32[2] p, q)\n}\n",
    "no instruction": "x {\n}\n",
    "named like a header": "HloModulex {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n  ROOT s = f32[] add(p, q)\n}\n",
}


@needs_native
@pytest.mark.parametrize("odd", sorted(_LEFT_TO_PYTHON))
def test_run_of_plain_computations_reads_the_same_both_ways(odd, monkeypatch):
    """Computations written ``name {``, their lines all parse_lines', closed by ``}`` are read in one C call
    (``plain_computations``, issue 34: 13,600 small reductions a side of the 300K pair); the first it does not read
    whole stops the run, undone, and the Python parser reads it and goes on. Errors included, the module is the
    same both ways."""
    text = ("HloModule m\n\n" + _PLAIN.format(k=0) + "\n" + _PLAIN.format(k=1) + "\n" + _LEFT_TO_PYTHON[odd] + "\n"
            + _PLAIN.format(k=2) + "\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
            + "".join(f"  d{k} = f32[] reduce(p, z), dimensions={{0}}, to_apply=r{k}\n" for k in range(3))
            + "  ROOT t = (f32[], f32[], f32[]) tuple(d0, d1, d2)\n}\n")
    lines = text.split("\n")
    comps, declared = [], []
    parse_module(_PLAIN.format(k=9))  # its shapes known (parse_lines reads only shapes seen before)
    stop = native.plain_computations(lines, 2, 1, shape_cache, parser_module.Instruction, declared,
                                     parser_module.parse_shape_at, parser_module.Shape, parser_module.Computation,
                                     comps)
    assert [c.name for c in comps] == ["r0", "r1"] and declared == []  # read whole; the odd one left, untouched
    assert lines[stop].startswith(_LEFT_TO_PYTHON[odd].split("\n")[0])
    fast = _outcome(text, "m.hlo", True, monkeypatch)
    assert fast == _outcome(text, "m.hlo", False, monkeypatch)
    assert (fast[0] == "error") == (odd in ("no instruction", "typed operand"))
