"""The live story (``hlodiff watch`` / ``record --live``) on the scenarios whose truth was written before hlodiff ran.

Each committed capture is replayed as a growing run (fixtures/scenarios/score_live.py: copied piece by piece in the
run's order, a LiveRun polled after each piece) and its live events scored against <name>.truth.json (the checks:
docs/accuracy.md, "The live story"). What the live lines get wrong today is listed in LIVE_WRONG_NOW as strict
xfails (`python fixtures/scenarios/score_live.py --xfail-table` prints today's rows).

The JAX scenarios run in every test run (the file takes about 25 s on a shared 2-core machine); torch_xla and Dynamo
(25-100 s more, with the machine's load) with HLODIFF_LIVE_SCORE_ALL=1, which the integrator sets before a merge."""

from __future__ import annotations

import importlib.util
import os

import pytest

from conftest import FIXTURES

_spec = importlib.util.spec_from_file_location("scenario_score_live", FIXTURES / "scenarios" / "score_live.py")
live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live)

# Of today's new scenarios (2026-11-27, live5), these stay wrong live:
# - torch_xla/warmup_from_zero, torch_xla/spmd_replay_unsharded: no line, as the report at exit (its WRONG_NOW:
#   the HLO names only library frames); the live line agrees with the report.
# - jax/jax_layerdrop_static: live repeats carry each graph's own fix, which the report's rows choose per graph
#   (static_structure on dump#9, #11, #12: "pad to a few bucket sizes"); the report at exit shows the story's first.
# - dynamo/dyn_autocast_steps: the step around the call at :19 changed with Dynamo's autocast retrace, which the
#   replayed Dynamo log names only later (it grows in proportion to the pieces): told before it, as `outputs`.
# - dynamo/dyn_task_limit: the string guard is expected until Dynamo hits its recompile limit (0/4), then told with
#   the report's limit fix (an update); but the first step run eagerly past the limit (step 16, `inputs`) is shouted
#   before the limit's line is in the replayed log.
LIVE_WRONG_NOW = {
    # the momentum fix rests on the baked 1/n values of 3 steps; step 0's cut is told first, with the fix of the
    # report's own row #1 (partial_read_sets_size: "2 different graphs followed the read ... pad ... buckets"),
    # which the report's cause graph later folds under the constant root
    'torch_xla/bn_cumulative': 'fix_any: the value read early at bn_cumulative.py:15 ... decides what is traced next (no momentum); fix_none: says bucket, pad',
