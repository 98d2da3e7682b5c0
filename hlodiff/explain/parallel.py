"""Summarise ranks in parallel: worker processes on this machine (``--jobs N``) or a Dask cluster
(``--scheduler ADDRESS``, ``--scheduler local``).

Each rank is independent until the ranks are compared, so one task reads one rank's dumps, explains (or
inventories) that rank (the task functions are the entry layer's, :mod:`hlodiff.jobs`: they read the rank's
evidence, then analyse it), and returns a :class:`RankResult` from which the parsed modules have been dropped: only
small summaries travel back (graph facts, causes, diffs' instruction lists), never HLO modules. The serial path
runs the very same task function in this process and drops the same things, and results are put back in rank
order, so ``--jobs 1``, ``--jobs N`` and Dask give the same bytes.

Dask is an optional extra (``pip install 'hlodiff[dist]'``) imported only when ``--scheduler`` is given. Workers
must see the dumps at the same paths (shared storage) and have hlodiff installed.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from hlodiff.dumps.ranks import RankSpec
from hlodiff.dumps.run_folder import RunInputs
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.graph import Normalization

LOCAL = "local"


@dataclass(frozen=True, slots=True)
class RankTask:
    """What a worker needs to summarise one rank: all plain data, so it pickles to any process or host."""

    spec: RankSpec
    stage: str | None = None
    options: Normalization = Normalization()
    tensors_report: str | None = None
    debug_log: str | None = None
    jax_log: str | None = None
    dynamo_log: str | None = None
    """``--dynamo-log``: a TORCH_LOGS file, or a TORCH_TRACE folder whose per-rank files are dealt out by rank."""


@dataclass(slots=True)
class RankResult:
    """One rank, summarised: its inputs, its explanation or inventory, its warnings, or the error that stopped it."""

    spec: RankSpec
    inputs: RunInputs
    explanation: object | None = None  # RunExplanation, for explain-recompile
    graphs: list = field(default_factory=list)  # GraphSummary list, for inspect
    warnings: list[InputWarning] = field(default_factory=list)
    error: tuple[str, str | None, int | None, int | None] | None = None

    def raise_error(self) -> None:
        if self.error is not None:
            message, path, line, col = self.error
            raise HlodiffError(message, path=path, line=line, col=col)


def lighten(graphs) -> None:
    """Drop what must not travel: parsed and canonical modules, and the packed text of graphs that only repeat a
    compiled one (a cache hit's text is its compiled graph's)."""
    for graph in graphs:
        graph._canonical = None
        graph._module = None
        if not graph.compiled:
            graph.record.packed_text = None


def run_tasks(fn: Callable[[RankTask], RankResult], tasks: list[RankTask], *, jobs: int | None = None,
              scheduler: str | None = None) -> list[RankResult]:
    """``fn`` over every task, serially, in worker processes or on Dask; results in task order. The first rank
    that failed raises its one-line error here."""
    if scheduler:
        results = _on_dask(fn, tasks, scheduler, jobs)
    elif (jobs or default_jobs()) <= 1 or len(tasks) <= 1:
        results = [fn(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=min(jobs or default_jobs(), len(tasks)),
                                 mp_context=_context()) as pool:
            results = list(pool.map(fn, tasks))
    for result in results:
        result.raise_error()
    return results


def _context():
    """fork when this process runs one thread (the CLI: workers start in milliseconds), else spawn: forking a
    process whose other threads hold locks (an embedding program, torch_xla's runtime) can deadlock the child."""
    import multiprocessing
    import threading

    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def default_jobs() -> int:
    """The CPUs this process may run on (a container's limit, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _on_dask(fn, tasks: list[RankTask], scheduler: str, jobs: int | None) -> list[RankResult]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise HlodiffError("--scheduler needs Dask: pip install 'hlodiff[dist]'", path=scheduler) from None
    if scheduler == LOCAL:
        with LocalCluster(n_workers=min(jobs or default_jobs(), max(1, len(tasks))), threads_per_worker=1,
                          processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
            return _gather(client, fn, tasks)
    tasks = [_absolute(t) for t in tasks]  # remote workers do not share our working directory
    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise HlodiffError(f"cannot reach the Dask scheduler: {exc}", path=scheduler) from None
    with client:
        return _gather(client, fn, tasks)


def _absolute(task: RankTask) -> RankTask:
    """The task with absolute paths (shared storage is mounted at the same place on every host)."""
    from dataclasses import replace

    def fix(path: str | None) -> str | None:
        return os.path.abspath(path) if path else path

    spec = replace(task.spec, paths=tuple(os.path.abspath(p) for p in task.spec.paths))
    return replace(task, spec=spec, tensors_report=fix(task.tensors_report), debug_log=fix(task.debug_log),
                   jax_log=fix(task.jax_log), dynamo_log=fix(task.dynamo_log))


def _gather(client, fn, tasks: list[RankTask]) -> list[RankResult]:
    futures = client.map(fn, tasks, pure=False)
    return client.gather(futures)
