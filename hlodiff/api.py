"""Library entry points that return a result: the CLI and the pytest plugin only choose how to show it.

``compare_refs("run/graphs.hlo.0#0", "run/graphs.hlo.0#5")`` reads, parses, normalizes and diffs two graphs and
returns a :class:`Comparison`; ``explain_paths(["run/graphs.hlo.0"])`` explains a run and returns an
:class:`Explained`. One entry point per command: :func:`inspect_paths`, :func:`compare_refs` (two graphs) and
:func:`compare_dump` (each graph of one dump), :func:`fingerprint_refs`, :func:`explain_paths` (one run) and
:func:`job_specs` / :func:`job_exit_code` (several ranks), :func:`cost_paths`, :func:`compare_runs_paths` (two runs
across a persistent cache), :func:`watch_path` (a capture followed while it is written, ``watch``) and
:func:`live_monitor` (the same inside ``record --live``); what an HTML report shows beyond the documents is read by
:mod:`hlodiff.api_pages` (``page_sources``, ``run_page_costs`` and ``rank_page``); the typed results, with their
JSON and exit statuses, are :mod:`hlodiff.api_results`'s. Nothing here prints (the live entries hand each event to
a callback). The cost delta (both graphs' bytes, copies and peak-memory estimate) is computed only when asked for
(``cost=True``): on a 33k-instruction pair it is a fifth of the work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hlodiff.api_results import Comparison, Explained, Fingerprint, Inventory, RunsCompared, Sequence
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.graph.canonical import Normalization

if TYPE_CHECKING:  # explain/ and cost/ are imported only when a command needs them
    from hlodiff.cost.model import RunCost
    from hlodiff.dumps.ranks import RankSpec
    from hlodiff.dumps.run_folder import RunInputs
    from hlodiff.explain.ranks import JobExplanation


def compare_refs(left_ref: str, right_ref: str, *, options: Normalization = Normalization(), stage: str | None = None,
                 cost: bool = False, warnings: list[InputWarning] | None = None) -> Comparison:
    """Compare the graphs named ``left_ref`` and ``right_ref`` (files or ``PATH#N``). Problems that do not stop
    the comparison (unknown opcodes, graphs from two frameworks) are appended to ``warnings``, and kept on the
    result."""
    from hlodiff._runtime import collector_off_for_command, freed_memory_kept_for_command
    from hlodiff.diff import diff_canonical
    from hlodiff.diff.compare import unrelated
    from hlodiff.dumps import resolve_ref
    from hlodiff.graph import canonicalize
    from hlodiff.hlo.escapes import note_bad_escapes
    from hlodiff.hlo.opcodes import note_unknown_opcodes
    from hlodiff.hlo.sharing import shared_values

    warnings = [] if warnings is None else warnings
    collector_off_for_command()
    freed_memory_kept_for_command()
    left, right = resolve_ref(left_ref, warnings, stage=stage), resolve_ref(right_ref, warnings, stage=stage)
    with shared_values():  # line numbers, and attributes written alike (either side): one object each
        left_module, right_module = left.module(), right.module()
    unknown: set[str] = set()
    for module in (left_module, right_module):
        note_unknown_opcodes(module, warnings, unknown)
        note_bad_escapes(module, warnings)
    if (why := unrelated(left_module, right_module)) is not None:
        warnings.append(InputWarning(why, right.source))
    lcm, rcm = canonicalize(left_module, options), canonicalize(right_module, options)
    diff = diff_canonical(lcm, rcm)
    if not all(c.locations for c in diff.causes):  # the user's lines explain-recompile finds
        from hlodiff.dumps.pair_run import shared_run
        from hlodiff.explain.pair_lines import locate_pair

        locate_pair(diff, shared_run(left_ref, right_ref, []), (left, right), lcm, rcm)
    if not _two_runs(left_ref, right_ref) and _one_run_path(left_ref, right_ref) is not None:
        from hlodiff.explain.compare_fixes import adopt_pair_fixes

        adopt_pair_fixes(diff, left, right, _explained(_one_run_path(left_ref, right_ref), stage))
    if _two_runs(left_ref, right_ref):
        from hlodiff.diff.fixes import FixContext, apply_fixes
        from hlodiff.hlo.producer import producer_of

        for cause in diff.causes:  # decided again knowing the graphs are two runs', not two steps of one
            if cause.fix_rule is not None and not cause.fix_is_final:
                cause.fix = cause.fix_rule = None
        apply_fixes(diff.causes, FixContext(producer=producer_of(rcm.module), two_runs=True))
    delta = None
    if cost:
        from hlodiff.cost.run import compare_cost
        from hlodiff.dumps.cost_evidence import graph_cost_evidence

        delta = compare_cost(graph_cost_evidence(left, compile_time=True),
                             graph_cost_evidence(right, compile_time=True), left_module, right_module)
    return Comparison(left, right, lcm, rcm, diff, delta, warnings)


def _two_runs(left_ref: str, right_ref: str) -> bool:
    """Graphs named in two folders (``a/dump#0`` and ``b/dump#0``) are two runs'; two graphs of one dump, or two files
    of one folder, are steps of one run."""
    import os

    from hlodiff.dumps import split_ref

    def folder(ref: str) -> str:
        path = os.path.abspath(split_ref(ref)[0])
        return path if os.path.isdir(path) else os.path.dirname(path)

    return folder(left_ref) != folder(right_ref)


def explain_inputs(inputs: "RunInputs", *, stage: str | None = None, warmup: int | None = None,
                   warnings: list[InputWarning] | None = None) -> Explained:
    """Explain the run whose inputs were already found (:func:`hlodiff.dumps.run_folder.discover`)."""
    from hlodiff.dumps.evidence import read_run
    from hlodiff.dumps.source_paths import forget_missing, missing_source_hint
    from hlodiff.explain.recompile import explain_run
    from hlodiff.hlo.sharing import shared_values

    warnings = [] if warnings is None else warnings
    forget_missing()
    with shared_values():
        explanation = explain_run(read_run(inputs, warnings, stage=stage), warnings)
    if (hint := missing_source_hint()) is not None:
        explanation.hints.append(hint)
    return Explained(inputs, explanation, warnings, warmup)


def explain_paths(paths: list[str], *, tensors_report: str | None = None, debug_log: str | None = None,
                  jax_log: str | None = None, dynamo_log: str | None = None, stage: str | None = None,
                  warmup: int | None = None, warnings: list[InputWarning] | None = None) -> Explained:
    """Why the run at ``paths`` compiled again: its dumps and, found beside them unless given, its live-tensor
    reports and logs (one rank; several ranks go through :func:`hlodiff.jobs.explain_job`)."""
    from hlodiff.dumps.run_folder import discover

    return explain_inputs(discover(list(paths), tensors_report, debug_log, jax_log, dynamo_log), stage=stage,
                          warmup=warmup, warnings=warnings)


def job_specs(paths: list[str]) -> "list[RankSpec] | None":
    """The ranks ``paths`` stand for when they are several ranks' dumps (the multi-rank report), else None (one
    run: :func:`explain_paths`)."""
    from hlodiff.dumps.ranks import find_ranks, is_job

    specs = find_ranks(list(paths))
    return specs if is_job(specs) else None


def job_exit_code(job: "JobExplanation", warmup: int | None = None) -> int:
    """1 when ranks diverged or a rank recompiled unexpectedly (as :attr:`Explained.exit_code` for each), else 0. A
    divergence no rank can wait on (:attr:`Divergence.no_collective`) is told, not failed."""
    diverged = any(not d.no_collective for d in job.divergence)
    return 1 if diverged or any(Explained(r.inputs, r.explanation, [], warmup).exit_code
                                      for r in job.results) else 0


def inspect_paths(paths: list[str], *, stage: str | None = None, jobs: int | None = None,
                  scheduler: str | None = None, warnings: list[InputWarning] | None = None) -> Inventory:
    """The graphs under ``paths`` (whatever :func:`explain_paths` accepts: dumps, ``PATH#N``, a ``hlodiff record``
    folder, a run folder holding a dump and its logs); several ranks of one job are inventoried rank by rank (in parallel, ``jobs``
    processes or a Dask ``scheduler``), unrelated dumps one after the other as for one run."""
    warnings = [] if warnings is None else warnings
    specs = job_specs(paths)
    if specs is not None:
        from hlodiff.explain.rank_reference import NotOneJobError
        from hlodiff.jobs import inspect_job

        try:
            return Inventory([], warnings, inspect_job(specs, stage=stage, jobs=jobs, scheduler=scheduler))
        except NotOneJobError:
            pass  # unrelated dumps: listed one after the other, as for one run
    from hlodiff.dumps.evidence import read_graphs
    from hlodiff.dumps.run_folder import discover
    from hlodiff.explain.inventory import inventory

    # the inputs explain-recompile finds (a record folder, a run folder with its dump inside), their graphs only
    run = read_graphs(discover(list(paths), None, None), warnings, stage=stage)
    return Inventory(inventory(run.records, warnings, protos=run.protos()), warnings)


def compare_dump(ref: str, *, options: Normalization = Normalization(), stage: str | None = None,
                 cost: bool = False, warnings: list[InputWarning] | None = None) -> Sequence:
    """Each graph of the dump ``ref`` against the previous distinct one of its family
    (:mod:`hlodiff.explain.sequence`)."""
    from hlodiff.dumps.evidence import GraphProtos, collect_records
    from hlodiff.explain.inventory import inventory
    from hlodiff.explain.sequence import consecutive
    from hlodiff.hlo.sharing import shared_values

    warnings = [] if warnings is None else warnings
    with shared_values():  # every graph is kept: their line numbers and attributes written alike, one object each
        summaries = inventory(collect_records(_dumps_of(ref), warnings, stage=stage), warnings, options, keep=True,
                              protos=GraphProtos())
    steps = consecutive(summaries)
    if steps:
        _adopt_explain_fixes(ref, steps, stage)
    costs: list[dict | None] = [None] * len(steps)
    if cost:
        from hlodiff.cost.run import compare_cost
        from hlodiff.dumps.cost_evidence import graph_cost_evidence

        costs = [compare_cost(graph_cost_evidence(s.left.record, compile_time=True),
                              graph_cost_evidence(s.right.record, compile_time=True)) for s in steps]
    return Sequence(len(summaries), steps, costs, warnings)


def _dumps_of(ref: str) -> list[str]:
    """The dumps a path stands for: a run folder (a save file or a dump folder with its logs, a ``record`` folder)
    is read as ``explain-recompile`` and ``inspect`` read it (review 2, F12: ``compare`` and ``fingerprint``
    refused what the other commands read); a file, a dump folder or a ``PATH#N`` is itself."""
    import os

    from hlodiff.dumps import split_ref
    from hlodiff.dumps.run_folder import discover

    path, n = split_ref(ref)
    if n is not None or not os.path.isdir(path):
        return [ref]
    return discover([path], None, None).paths


def _adopt_explain_fixes(ref: str, steps, stage: str | None) -> None:
    """The fixes ``explain-recompile`` gives the same recompilations (:mod:`hlodiff.explain.compare_fixes`)."""
    from hlodiff.dumps import split_ref
    from hlodiff.explain.compare_fixes import adopt_run_fixes

    path, n = split_ref(ref)
    adopt_run_fixes(steps, _explained(path, stage) if n is None else [])


def _one_run_path(left_ref: str, right_ref: str) -> str | None:
    """The run folder or file both refs name a graph of (``run#0`` and ``run#3``), else None."""
    from hlodiff.dumps import split_ref

    (left, i), (right, j) = split_ref(left_ref), split_ref(right_ref)
    return left if left == right and i is not None and j is not None else None


def _explained(path: str, stage: str | None) -> list:
    """``explain-recompile``'s recompilations of the run at ``path`` (none when it cannot be read as a run)."""
    from hlodiff.dumps.evidence import read_run
    from hlodiff.dumps.run_folder import discover
    from hlodiff.explain.recompile import explain_run

    try:
        quiet: list = []  # compare reports its own warnings; explain's reading of the same files says them again
        return explain_run(read_run(discover([path], None, None), quiet, stage=stage), quiet).recompilations
    except HlodiffError:
        return []


def fingerprint_refs(refs: list[str], *, options: Normalization = Normalization(), stage: str | None = None,
                     warnings: list[InputWarning] | None = None) -> list[Fingerprint]:
    """Every graph of each dump in ``refs`` (or the one graph a ``PATH#N`` names), normalized."""
    from hlodiff.dumps import iter_graphs, resolve_ref, split_ref
    from hlodiff.graph import canonicalize
    from hlodiff.hlo.escapes import note_bad_escapes
    from hlodiff.hlo.opcodes import note_unknown_opcodes

    warnings = [] if warnings is None else warnings
    out = []
    unknown: set[str] = set()
    for ref in refs:
        _, n = split_ref(ref)
        records = [resolve_ref(ref, warnings, stage=stage)] if n is not None else \
            [r for path in _dumps_of(ref) for r in iter_graphs(path, warnings, stage=stage)]
        for record in records:
            module = record.module()
            note_unknown_opcodes(module, warnings, unknown)
            note_bad_escapes(module, warnings)
            out.append(Fingerprint(record, canonicalize(module, options)))
    _warn_hidden(out, warnings)
    return out


def _warn_hidden(prints: list[Fingerprint], warnings: list[InputWarning]) -> None:
    """A fingerprint hashes a constant's text: for a ``{...}`` one, two graphs of one fingerprint may still differ
    in its values. Said once per dump, with the capture that keeps the values."""
    from hlodiff.diff.hidden import CAPTURE, hidden_count

    by_source: dict[str, int] = {}
    for p in prints:
        n = hidden_count(p.canonical.module)
        if n:
            by_source[p.record.source] = by_source.get(p.record.source, 0) + 1
    for source, graphs in by_source.items():
        warnings.append(InputWarning(
            f"{graphs} graph{'s' if graphs != 1 else ''} hold constants printed as {{...}}: their fingerprints "
            f"cannot cover those values, so graphs with one fingerprint may still differ (equality unknown); to "
            f"see the values capture with {CAPTURE}", source))


def cost_paths(paths: list[str], *, debug_logs: list[str] = (), tensors_report: str | None = None,
               stage: str | None = None, warnings: list[InputWarning] | None = None) -> "RunCost":
    """What each graph of the run at ``paths`` costs; logs and live-tensor reports are found beside the dumps
    unless given (:func:`hlodiff.dumps.cost_evidence.side_inputs`), and read with the graphs before the costing
    (:func:`hlodiff.dumps.cost_evidence.read_cost_run`)."""
    from hlodiff.cost.run import run_cost
    from hlodiff.dumps.cost_evidence import read_cost_run, side_inputs

    warnings = [] if warnings is None else warnings
    dumps, logs, reports, pt_logs = side_inputs(list(paths), list(debug_logs), tensors_report)
    evidence = read_cost_run(dumps, warnings, stage=stage, compile_logs=logs, tensors_reports=reports,
                             debug_logs=pt_logs)
    return run_cost(evidence, warnings)


def compare_runs_paths(run_a: str, run_b: str, *, cache: str | None = None,
                       warnings: list[InputWarning] | None = None) -> RunsCompared:
    """Why run B (``run_b``: a run folder, JAX dump folder or torch_xla save file, with its logs beside it)
    compiled what run A had compiled; ``cache``: the cache folder or a listing of it (default: found beside the
    runs)."""
    from hlodiff.dumps.cached_run import read_run
    from hlodiff.explain.across_runs import compare_runs

    warnings = [] if warnings is None else warnings
    first, second = read_run(run_a, cache, warnings), read_run(run_b, cache, warnings)
    from hlodiff.dumps.source_lines import SourceLines

    return RunsCompared(compare_runs(first, second, warnings, SourceLines()), warnings)


def watch_path(path: str, emit, *, until_idle: float | None = None, stage: str | None = None, stop=None,
               interval: float | None = None, ended=None) -> list[InputWarning]:
    """Follow the capture at ``path`` while a run writes it (``hlodiff watch``), calling ``emit(event)`` for each
    live event; returns the warnings of what was read. The polling loop is the live run's glue and lives beside it:
    :func:`hlodiff.live_run.watch_path` says when it stops."""
    from hlodiff.live_run import watch_path as follow

    return follow(path, emit, until_idle=until_idle, stage=stage, stop=stop, ended=ended,
                  **({} if interval is None else {"interval": interval}))


def live_monitor(emit, *, interval: float | None = None):
    """For ``hlodiff record --live``: what follows the recording's folder in a thread while the command runs
    (:func:`hlodiff.live_run.live_monitor`)."""
    from hlodiff.live_run import live_monitor as monitor

    return monitor(emit, **({} if interval is None else {"interval": interval}))


def __getattr__(name: str):
    """``POLL_SECONDS`` stays importable from here; it is read from :mod:`hlodiff.live_run` only when asked for, so
    importing the library does not import the live path."""
    if name == "POLL_SECONDS":
        from hlodiff.live_run import POLL_SECONDS

        return POLL_SECONDS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
