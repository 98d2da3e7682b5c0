"""HLO protos dumped with --xla_dump_hlo_as_proto (real torch_xla 2.9 and JAX 0.10.2 runs, see fixtures/README.md):
full Python stacks per instruction, the three proto containers, the printed StackFrames table checked against the
proto, and protos that are not HLO."""

from __future__ import annotations

import shutil

import pytest
from google.protobuf import descriptor_pb2

from helpers import cli, cli_json
from hlodiff.dumps import hlo_messages as hm
from hlodiff.dumps import iter_graphs
from hlodiff.dumps.hlo_proto import read_hlo_proto
from hlodiff.dumps.tensors_report import read_reports
from hlodiff.errors import HlodiffError
from hlodiff.graph import canonicalize
from hlodiff.hlo.model import user_frame
from hlodiff.hlo.parser import parse_module

from conftest import FIXTURES

GRAD = FIXTURES / "torch_xla" / "grad_norm_order"
JAX_DUMPS = [d for d in sorted((FIXTURES / "jax").glob("*/dump")) + [FIXTURES / "jax" / "user_project" / "run" / "dump"]
             if any(d.glob("*.hlo.pb"))]


def _first_proto(dump):
    return sorted(dump.glob("module_*.before_optimizations.hlo.pb"))[0]


def test_torch_xla_proto_gives_the_full_stack_the_text_lacks():
    pb = _first_proto(GRAD / "dump")
    proto = read_hlo_proto(str(pb))
    assert proto.container == "HloProto" and proto.name.startswith("SyncTensorsGraph")
    text = parse_module(pb.with_name(pb.name.replace(".hlo.pb", ".txt")).read_text())
    assert not text.stack_frames  # torch_xla's text has no StackFrames table, only the innermost frame
    concat = next(i for _, i in _instructions(text) if i.opcode == "concatenate")
    stack = proto.stacks[concat.name]
    meta = canonicalize(text).metadata(concat)
    assert (stack[0].file, stack[0].line) == (meta.source_file, meta.source_line)  # the innermost frame agrees
    assert "/site-packages/torch_xla/" in stack[0].file
    user = user_frame(stack)
    assert (user.file, user.line, user.function) == ("/home/user/project/grad_norm_order.py", 36, "<module>")


def test_proto_stack_agrees_with_the_live_tensor_report_for_the_same_op():
    """The stack op in the report (IR location) and in the proto (innermost frame) is one line, and both lead
    to the same user line: two captures, one truth."""
    proto = read_hlo_proto(str(_first_proto(GRAD / "dump")))
    report = read_reports(GRAD / "stdout.log")[0]
    tensor = next(t for t in report.tensors if any(n.op == "aten::stack" for n in t.ir))
    node = next(n for n in tensor.ir if n.op == "aten::stack")
    text = parse_module(_first_proto(GRAD / "dump").with_name(
        _first_proto(GRAD / "dump").name.replace(".hlo.pb", ".txt")).read_text())
    concat = next(i for _, i in _instructions(text) if i.opcode == "concatenate")
    stack = proto.stacks[concat.name]
    assert (stack[0].file.rsplit("/", 1)[-1], stack[0].line) == (node.location.file, node.location.line)
    assert user_frame(stack) == user_frame(tensor.frames)


@pytest.mark.parametrize("dump", JAX_DUMPS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_printed_stack_frames_resolve_like_the_proto(dump):
    """JAX prints the StackFrames table in its text dump; every instruction's chain read from the text equals the
    chain read from the proto of the same module (parent_frame_id printed as the proto's id plus one)."""
    checked = 0
    for pb in sorted(dump.glob("module_*.hlo.pb")):
        proto = read_hlo_proto(str(pb))
        text = parse_module(pb.with_name(pb.name.replace(".hlo.pb", ".txt")).read_text())
        if not text.stack_frames:  # a module of JAX's own with no frame of the user's (eager_init's jit_stage)
            assert not any(proto.stacks.values()), pb.name
            continue
        cm = canonicalize(text)
        for _, inst in _instructions(text):
            meta = cm.metadata(inst)
            if meta.stack_frame_id:
                assert tuple(text.stack_frames.resolve(meta.stack_frame_id)) == proto.stacks[inst.name]
                checked += 1
    assert checked > 0


def test_a_printer_that_prints_proto_parent_ids_is_read_the_same():
    pb = _first_proto(FIXTURES / "jax" / "user_project" / "run" / "dump")
    text = pb.with_name(pb.name.replace(".hlo.pb", ".txt")).read_text()
    # the same table printed with the proto's own parent ids (0 = none)
    import re
    head, sep, rest = text.partition("StackFrames\n")
    rows, tail = rest.split("\n\n", 1)
    direct = re.sub(r"parent_frame_id=(\d+)", lambda m: f"parent_frame_id={int(m.group(1)) - 1}", rows)
    assert "parent_frame_id=0" in direct
    a, b = parse_module(text), parse_module(head + sep + direct + "\n\n" + tail)
    assert all(a.stack_frames.resolve(k) == b.stack_frames.resolve(k) for k in a.stack_frames.frames)


@pytest.mark.parametrize("container", ["HloModuleProto", "HloSnapshot"])
def test_other_containers(tmp_path, container):
    pb = _first_proto(GRAD / "dump")
    hlo_proto = hm.HloProto.FromString(pb.read_bytes())
    data = (hlo_proto.hlo_module.SerializeToString() if container == "HloModuleProto"
            else hm.HloSnapshot(hlo=hlo_proto, execution_platform="Host").SerializeToString())
    path = tmp_path / "module.pb"
    path.write_bytes(data)
    proto = read_hlo_proto(str(path))
    assert proto.container == container and proto.stacks == read_hlo_proto(str(pb)).stacks


def test_donation_shows_in_the_proto_header():
    dump = FIXTURES / "jax" / "donate_toggle" / "dump"
    first, second = (read_hlo_proto(str(p)) for p in sorted(dump.glob("module_*.before_optimizations.hlo.pb")))
    assert first.aliases == ()
    [alias] = second.aliases
    assert (alias.output_index, alias.parameter, alias.kind) == ((), 0, "may-alias")


def test_protos_that_are_not_hlo_are_one_line_errors(tmp_path):
    other = tmp_path / "compile_options.pb"
    other.write_bytes(descriptor_pb2.FileDescriptorProto(name="x.proto", package="p").SerializeToString())
    cut = tmp_path / "cut.hlo.pb"
    cut.write_bytes(_first_proto(GRAD / "dump").read_bytes()[:700])
    noise = tmp_path / "noise.pb"
    noise.write_bytes(bytes(range(256)) * 4)
    for path in (other, cut, noise):
        with pytest.raises(HlodiffError) as info:
            read_hlo_proto(str(path))
        assert info.value.path == str(path) and "\n" not in info.value.message


def test_a_broken_proto_beside_the_text_is_a_warning_and_the_text_still_explains(tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(GRAD / "dump", dump)
    victim = _first_proto(dump)
    victim.write_bytes(victim.read_bytes()[:500])
    result = cli("explain-recompile", str(dump))
    assert result.exit_code == 1, result.output
    assert "not an HLO proto" in result.output and "Traceback" not in result.output


def test_explain_recompile_names_the_user_line_from_the_proto_alone(tmp_path):
    """No report, no save file: the dump folder's protos carry the stack to the clip_grad_norm_ line."""
    dump = tmp_path / "dump"
    shutil.copytree(GRAD / "dump", dump)
    [g0, g1] = list(iter_graphs(str(dump)))
    assert g0.proto_path and g1.proto_path
    result = cli("explain-recompile", str(dump))
    assert result.exit_code == 1
    assert "grad_norm_order.py:36" in result.output
    doc = cli_json("explain-recompile", str(dump))
    assert doc["inputs"]["hlo_protos"] == [g0.proto_path, g1.proto_path]
    assert doc["headline"]["location"]["line"] == 36


def _instructions(module):
    for comp in module.computations:
        for inst in comp.instructions:
            yield comp, inst


def test_a_folder_of_protos_only_says_what_to_add(tmp_path):
    for pb in (FIXTURES / "jax" / "weak_type" / "dump").glob("*.hlo.pb"):
        shutil.copy(pb, tmp_path / pb.name)
    result = cli("inspect", str(tmp_path))
    assert result.exit_code == 2
    assert "only HLO protos" in result.output and "--xla_dump_hlo_as_text" in result.output
    assert "Traceback" not in result.output
