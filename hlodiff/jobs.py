"""Several ranks of one job: the entry layer's rank tasks, which read one rank's evidence (``dumps/``) and analyse
it (``explain/``), and the two job entry points built on them.

A task runs in this process, in a worker process or on a Dask worker (:func:`hlodiff.explain.parallel.run_tasks`),
so it is a plain module-level function of a pickled :class:`~hlodiff.explain.parallel.RankTask`. Reading happens
here, not in ``explain/``: each rank's :class:`~hlodiff.dumps.evidence.Run` is built by
:func:`~hlodiff.dumps.evidence.read_run` and handed to :func:`~hlodiff.explain.recompile.explain_run`, and the ranks'
results are compared by :func:`hlodiff.explain.ranks.compare_ranks`.
"""

from __future__ import annotations

import os

from hlodiff.dumps.ranks import rank_dumps
from hlodiff.dumps.run_folder import RunInputs, discover
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.explain.parallel import RankResult, RankTask, lighten, run_tasks
from hlodiff.explain.ranks import JobExplanation, compare_ranks
from hlodiff.graph import Normalization


def rank_inputs(task: RankTask) -> RunInputs:
    """The rank's dumps and side files. A live-tensor report is one device's: it is used only when the rank has a
    folder of its own (ordinals sharing a folder cannot tell whose report lies beside them)."""
    inputs = discover(rank_dumps(task.spec), task.tensors_report, task.debug_log, task.jax_log,
                      rank_dynamo_log(task.dynamo_log, task.spec.rank))
    if not task.spec.own_folder and task.tensors_report is None:
        inputs.tensors_reports = []
    return inputs


def rank_dynamo_log(path: str | None, rank: int) -> str | None:
    """A TORCH_TRACE folder of a multi-rank run holds one file per rank (``..._rank_N_...``): the rank's own; any
    other log is every rank's as given."""
    import re

    from hlodiff.dumps.dynamo_trace import trace_files

    if not path or not os.path.isdir(path):
        return path
    mine = [f for f in trace_files(path) if re.search(rf"_rank_{rank}(?:_|\.)", os.path.basename(f))]
    return mine[0] if len(mine) == 1 else path


def explain_rank(task: RankTask) -> RankResult:
    """explain-recompile for one rank, as if its dumps had been given alone."""
    from hlodiff.dumps.evidence import read_run
    from hlodiff.explain.recompile import explain_run

    warnings: list[InputWarning] = []
    inputs = RunInputs(list(task.spec.paths))
    try:
        inputs = rank_inputs(task)
        explanation = explain_run(read_run(inputs, warnings, stage=task.stage), warnings, task.options)
    except HlodiffError as err:
        return RankResult(task.spec, inputs, warnings=warnings, error=(err.message, err.path, err.line, err.col))
    lighten(explanation.graphs)
    return RankResult(task.spec, inputs, explanation=explanation, warnings=warnings)


def inspect_rank(task: RankTask) -> RankResult:
    """inspect for one rank: its graphs, compilations counted within the rank."""
    from hlodiff.dumps.evidence import GraphProtos, collect_records
    from hlodiff.explain.inventory import inventory

    warnings: list[InputWarning] = []
    inputs = RunInputs(list(task.spec.paths))
    try:
        inputs = RunInputs(rank_dumps(task.spec))
        graphs = inventory(collect_records(inputs.paths, warnings, stage=task.stage), warnings, task.options,
                           protos=GraphProtos())
    except HlodiffError as err:
        return RankResult(task.spec, inputs, warnings=warnings, error=(err.message, err.path, err.line, err.col))
    lighten(graphs)
    return RankResult(task.spec, inputs, graphs=graphs, warnings=warnings)


def explain_job(specs, *, stage: str | None = None, options: Normalization = Normalization(),
                tensors_report: str | None = None, debug_log: str | None = None, jax_log: str | None = None,
                jobs: int | None = None, scheduler: str | None = None,
                dynamo_log: str | None = None) -> JobExplanation:
    """explain-recompile over several ranks: each rank explained on its own (in parallel), then compared."""
    tasks = [RankTask(s, stage, options, tensors_report, debug_log, jax_log, dynamo_log) for s in specs]
    return compare_ranks(run_tasks(explain_rank, tasks, jobs=jobs, scheduler=scheduler), options,
                         command_status=recorded_status(specs))


def recorded_status(specs) -> int | None:
    """The exit status ``hlodiff record`` wrote for the command that made these ranks' captures (the manifest
    in a rank's folder or up to two folders above it), or None when no recording says (a capture made by hand)."""
    import json

    from hlodiff.dumps.manifest import MANIFEST_NAME

    seen: set[str] = set()
    for spec in specs:
        for path in spec.paths[:1]:
            folder = os.path.dirname(os.path.abspath(path)) if os.path.isfile(path) else os.path.abspath(path)
            for _ in range(3):
                manifest = os.path.join(folder, MANIFEST_NAME)
                if manifest not in seen and os.path.isfile(manifest):
                    seen.add(manifest)
                    try:
                        with open(manifest, encoding="utf-8") as f:
                            status = json.load(f).get("returncode")
                    except (OSError, ValueError, AttributeError):
                        status = None
                    if isinstance(status, int):
                        return status
                folder = os.path.dirname(folder)
    return None


def inspect_job(specs, *, stage: str | None = None, options: Normalization = Normalization(),
                jobs: int | None = None, scheduler: str | None = None) -> JobExplanation:
    """inspect over several ranks: each rank's graphs, compilations counted within the rank, and where the
    ranks' graph sequences diverge."""
    tasks = [RankTask(s, stage, options) for s in specs]
    return compare_ranks(run_tasks(inspect_rank, tasks, jobs=jobs, scheduler=scheduler), options)
