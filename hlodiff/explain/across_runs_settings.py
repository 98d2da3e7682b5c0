"""A program one run traced more of, decided by a setting of the run (new-user review 15, F5).

Run B turned on ``jnp.clip`` with ``CLIP=1``: its train step holds ops run A's does not, and the graph diff's fix
(written for two steps of one run) tells a per-step branch to make traced. Between two runs the decision is the
run's setting, a deliberate change as often as not: what the user needs is which setting decided, read from the
source on disk (:meth:`hlodiff.dumps.source_lines.SourceLines.setting_behind`), and that the changed program compiles
once. Facts only; :mod:`hlodiff.render.across_runs` words them.
"""

from __future__ import annotations

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.run_verdicts import Verdict
from hlodiff.hlo.model import user_frame

PATH_RULES = frozenset({"ops_branch_jax", "ops_branch", "traced_some_steps"})
"""Fix rows of the graph diff whose story is a Python ``if`` choosing what is traced: across runs, the ``if`` may
test a setting of the run."""


def place_settings(verdicts: list[Verdict], sources: SourceLines) -> None:
    """Note on each program B compiled with other ops the run setting its cause's ``if`` tests, when the source on
    disk shows one (``Verdict.setting``)."""
    for v in verdicts:
        if v.verdict != "miss_hlo_differs" or v.at_call or v.cause is None or v.cause.fix_rule not in PATH_RULES:
            continue
        frame = user_frame(tuple(v.cause.locations)) if v.cause.locations else None
        if frame is not None:
            v.setting = sources.setting_behind(frame.file, frame.line)
