"""User code or library code, decided by where files are installed (issue 8): a project folder named ``jax`` is the
user's, the scrubbed site-packages and stdlib paths of the fixtures are libraries, and roots recorded by ``hlodiff
record`` extend the installed locations."""

from __future__ import annotations

import json
import shutil

import pytest

from helpers import cli, truth_of
from hlodiff.dumps import iter_graphs
from hlodiff.dumps.run_folder import discover
from hlodiff.hlo import installed
from hlodiff.hlo.model import SourceFrame, user_frame

from conftest import FIXTURES

PROJECT_JAX = "/home/user/project/jax/train.py"


@pytest.mark.parametrize("path,library", [
    (PROJECT_JAX, False),                                   # a user folder named like the library
    ("/home/user/project/torch/utils/data.py", False),
    ("/usr/src/app/torch_xla/train.py", False),             # /usr is too broad to be a root
    ("train.py", False),                                    # an IR location keeps the base name only
    ("/usr/lib/python3.11/site-packages/jax/_src/api.py", True),
    ("/usr/lib/python3.11/site-packages/torch_xla/_patched_functions.py", True),
    ("/opt/venv/lib/python3.10/dist-packages/flax/linen/module.py", True),
    ("/usr/lib/python3.11/functools.py", True),             # the stdlib
    ("/usr/lib/python3.11/json/decoder.py", True),
    ("<frozen runpy>", True),
])
def test_installed_location_decides(path, library):
    assert SourceFrame(path, 1).is_library is library


def test_the_jax_project_fixture_gets_its_user_line():
    """fixtures/jax/user_project/jax/train.py: every frame of the dumped HLO is user code, in text and proto."""
    truth = truth_of(FIXTURES / "jax" / "user_project" / "run")
    result = cli("explain-recompile", str(FIXTURES / "jax" / "user_project" / "run" / "dump"),
                                       "--json")
    doc = json.loads(result.output)
    [recompilation] = doc["recompilations"]
    cause = recompilation["causes"][0]
    assert cause["kind"] == truth["cause"]
    # the call that passed the short batch comes first (issue 19), then the use inside the jitted function, whose
    # stack holds that call
    call, use = cause["locations"][0], cause["locations"][1]
    assert call == {"file": PROJECT_JAX, "line": truth["user_line"], "function": "<module>"}
    assert use["file"] == PROJECT_JAX and use["function"] == "loss_fn"
    assert call in cause["stacks"][1]
    assert not any(loc["file"] == PROJECT_JAX for loc in cause["library_locations"])


def test_user_frame_skips_library_frames_of_a_real_stack():
    from hlodiff.dumps.hlo_proto import read_hlo_proto

    pb = sorted((FIXTURES / "torch_xla" / "grad_norm_order" / "dump").glob("*before_optimizations.hlo.pb"))[0]
    stacks = read_hlo_proto(str(pb)).stacks
    deep = [s for s in stacks.values() if len(s) > 2]
    assert deep
    for stack in deep:
        frame = user_frame(stack)
        assert frame is not None and frame.file == "/home/user/project/grad_norm_order.py"
        assert all(f.is_library for f in stack[:stack.index(frame)])


def test_roots_recorded_in_the_manifest_are_library(tmp_path, monkeypatch, request):
    monkeypatch.setattr(installed, "_roots", set(installed._roots))
    request.addfinalizer(installed.is_library_path.cache_clear)
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "torch_xla" / "steady", run)
    (run / "hlodiff-record.json").write_text(json.dumps({
        "version": 1, "out_dir": ".", "save_tensors_base": "graphs.hlo", "save_tensors_file": "graphs.hlo.0",
        "library_roots": ["/srv/vendored/mylib", "/usr"]}))
    frame = SourceFrame("/srv/vendored/mylib/ops.py", 3)
    assert not frame.is_library
    discover([str(run)], None, None)
    assert frame.is_library
    assert not SourceFrame("/usr/src/app/train.py", 1).is_library  # "/usr" is never taken as a root


def test_record_folder_manifest_without_roots_is_fine(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "torch_xla" / "steady", run)
    (run / "hlodiff-record.json").write_text(json.dumps({"version": 1, "out_dir": ".",
                                                         "save_tensors_base": "graphs.hlo"}))
    inputs = discover([str(run)], None, None)
    assert [p.rsplit("/", 1)[-1] for p in inputs.paths] == ["graphs.hlo.0"]
    assert list(iter_graphs(inputs.paths[0]))


def test_a_script_started_through_dot_dot_is_printed_without_it():
    """`python ../train.py` makes Python record `run/../train.py`: the report prints `train.py`'s real place, the
    JSON keeps what was recorded."""
    from hlodiff.hlo.model import SourceFrame

    frame = SourceFrame("/home/user/run/../train.py", 40, "<module>")
    assert frame.where == "/home/user/train.py:40"
    assert frame.to_json()["file"] == "/home/user/run/../train.py"
    assert SourceFrame("/home/user/train.py", None, None).where == "/home/user/train.py"
