"""New-user review 15, F5: between two runs, a piece of the program switched on by the run's environment or command
line (run B of jax_cache.py sets CLIP=1, which traces a `jnp.clip`) is a deliberate change, not a per-step branch:
compare-runs names the setting the `if` tests and says the changed program compiles once, expected if deliberate.
One test per way a setting is read (RunSetting origins), each beside a look-alike `if` that reads no setting."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runs_helpers import RUNS, compare_runs
from hlodiff.dumps.run_setting_source import COMMAND_LINE, ENVIRONMENT, setting_behind

SCENARIO = RUNS / "rev15_jx_cache_clip"


def _head(tmp_path: Path | None = None, sources: bool = True) -> dict:
    env = {"HLODIFF_SOURCE_MAP": f"/home/user/project={RUNS}"} if sources else {"HLODIFF_SOURCE_MAP": ""}
    from helpers import cli_json

    return cli_json("compare-runs", str(SCENARIO / "run_a"), str(SCENARIO / "run_b"), codes=(1,), env=env)["headline"]


def test_a_clip_switched_on_by_an_environment_variable_is_a_deliberate_change():
    head = _head()
    assert (head["verdict"], head["reason"], head["location"]["line"]) == ("miss_hlo_differs", "ops", 23)
    fix = head["fix"]
    assert "environment variable CLIP" in fix and "line 22" in fix and "expected" in fix
    assert "nothing to fix" in fix and "compiles once" in fix
    for wrong in ("jnp.where", "lax.cond", "keep branches"):
        assert wrong not in fix


def test_without_the_source_the_path_is_still_told_as_a_change_between_runs():
    """The capture alone cannot name the setting: the words say a change of code or setting, expected if
    deliberate, and no per-step branch advice."""
    fix = _head(sources=False)["fix"]
    assert "expected if the change was deliberate" in fix and "CLIP" not in fix
    assert "jnp.where" not in fix and "lax.cond" not in fix


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "train.py"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("source, origin, variable, name", [
    ("import os\nCLIP = os.environ.get('CLIP') == '1'\ndef f(x):\n    if CLIP:\n        x = x + 1\n    return x\n",
     ENVIRONMENT, "CLIP", "CLIP"),
    ("import os\nN = int(os.getenv('N_EXTRA', '0'))\ndef f(x):\n    if N > 0:\n        x = x + 1\n    return x\n",
     ENVIRONMENT, "N_EXTRA", "N"),
    ("import os\ndef f(x):\n    if os.environ['AUX'] == '1':\n        x = x + 1\n    return x\n",
     ENVIRONMENT, "AUX", "os.environ['AUX'] == '1'"),
    ("import sys\nAUX = '--aux' in sys.argv\ndef f(x):\n    if AUX:\n        x = x + 1\n    return x\n",
     COMMAND_LINE, "", "AUX"),
    ("import argparse\nap = argparse.ArgumentParser()\nap.add_argument('--use-aux', action='store_true')\n"
     "args = ap.parse_args()\ndef f(x):\n    if args.use_aux:\n        x = x + 1\n    return x\n",
     COMMAND_LINE, "--use-aux", "args.use_aux"),
])
def test_each_way_a_run_setting_is_read(tmp_path, source, origin, variable, name):
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "x = x + 1" in text)
    found = setting_behind(_write(tmp_path, source), line)
    assert (found.origin, found.variable, found.name) == (origin, variable, name)


@pytest.mark.parametrize("source", [
    # a per-step branch on a traced argument's Python value: no setting of the run
    "def f(x, step):\n    if step % 2 == 0:\n        x = x + 1\n    return x\n",
    # a module constant written in the code: a code edit, not a setting
    "CLIP = True\ndef f(x):\n    if CLIP:\n        x = x + 1\n    return x\n",
    # a setting read elsewhere in the file, not by this `if`
    "import os\nDEBUG = os.environ.get('DEBUG')\nCLIP = True\ndef f(x):\n    if CLIP:\n        x = x + 1\n    return x\n",
    # the line is not under any `if`
    "import os\nCLIP = os.environ.get('CLIP')\ndef f(x):\n    x = x + 1\n    return x\n",
])
def test_lookalike_an_if_that_reads_no_run_setting(tmp_path, source):
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "x = x + 1" in text)
    assert setting_behind(_write(tmp_path, source), line) is None


def test_lookalike_a_static_loop_count_keeps_its_words():
    """runs7_static_argv: the unrolled loop is no `if`; its fix stays the static argument's."""
    head = compare_runs(RUNS / "runs7_static_argv")["headline"]
    assert "static argument" in head["fix"] and "environment variable" not in head["fix"]


def test_a_source_file_gone_from_disk_names_no_setting(tmp_path):
    copy = Path(shutil.copytree(SCENARIO, tmp_path / "pair"))
    from helpers import cli_json

    doc = cli_json("compare-runs", str(copy / "run_a"), str(copy / "run_b"), codes=(1,),
                   env={"HLODIFF_SOURCE_MAP": f"/home/user/project={tmp_path / 'nowhere'}"})
    assert "environment variable" not in doc["headline"]["fix"]


# -- review 15 F6: a restarted run's own report names what compiled, never a program it loaded ------------------------

def test_run_b_names_the_one_program_it_compiled_not_an_eager_op_it_loaded():
    """rev15_jx_cache_clip's run B: jit__normal's two shapes were both persistent-cache hits; jit_train_step (CLIP=1)
    was the one miss. Its summary names the train step as compiled and no jit__normal pattern."""
    from helpers import cli

    out = cli("explain-recompile", str(SCENARIO / "run_b"), codes=(0,)).stdout
    summary = out.splitlines()[0]
    assert "1 compilation, 10 loaded from the persistent cache, 0 recompilations" in summary
    assert "jit_train_step compiled" in summary and "jit__normal" not in summary
    assert "jit__normal); closest" in out and "loaded from the persistent cache for another shape" in out
    assert "compiled for another shape" not in out


def test_lookalike_run_a_compiling_everything_keeps_its_eager_op_words():
    """Run A compiled all 11 programs (a cold cache): jit__normal's second shape was compiled there, and is told so."""
    from helpers import cli

    out = cli("explain-recompile", str(SCENARIO / "run_a"), codes=(0,)).stdout
    assert "persistent cache" not in out.splitlines()[0] and "compiled for another shape (jit__normal)" in out
