"""The ``hlodiff`` command. Click commands only: parsing options, calling the library, choosing a renderer.

Input problems become one ``file:line:col: error: message`` line on stderr and exit status 2; ``compare`` exits
like ``diff`` (0 equal after normalization, 1 different). A bug in hlodiff prints one line too (set
``HLODIFF_DEBUG=1`` for the traceback) and exits 3. That shell around every command is :mod:`hlodiff.cli_shell`;
``explain-recompile``'s way from paths to a report (``record`` takes it too) is :mod:`hlodiff.cli_explain`,
``compare``'s :mod:`hlodiff.cli_compare`, ``inspect``'s, ``fingerprint``'s, ``cost``'s and ``compare-runs``'s
:mod:`hlodiff.cli_reports`, ``watch``'s :mod:`hlodiff.cli_watch`.
"""

from __future__ import annotations

import click

from hlodiff import __version__
from hlodiff.cli_compare import compare_refs
from hlodiff.cli_explain import explain_paths
from hlodiff.cli_record import record_and_explain
from hlodiff.cli_reports import compare_runs_report, cost_report, fingerprint_report, inspect_report
from hlodiff.cli_shell import OneLineGroup, guarded, note_stale_accelerator, source_map_given
from hlodiff.cli_watch import watch_capture

PASS_CHOICES = ("names", "parameter-order", "dead-code", "tuple-plumbing", "metadata")


@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hlodiff")
def main() -> None:
    """Tell why an XLA program compiled again: structural diffs of HLO dumps from PyTorch/XLA and JAX.

    \b
    Start with:
      hlodiff record -- python train.py       run it with everything captured, told live, then explain
      hlodiff watch run/dump                  tell recompilations while a job writes its capture
      hlodiff explain-recompile graphs.hlo.0  why the run compiled again, at which line of yours
      hlodiff inspect graphs.hlo.0            what graphs a run produced, which compiled
      hlodiff compare graphs.hlo.0            each graph against the previous distinct one
      hlodiff compare graphs.hlo.0#0 graphs.hlo.0#5
      hlodiff cost graphs.hlo.0               memory, copies, boundaries, compile time
      hlodiff compare-runs run_a/ run_b/      why run B compiled what run A had cached
    """
    note_stale_accelerator()


stage_option = click.option("--stage", metavar="STAGE", default=None,
                            help="For XLA dump folders: which stage to read (default before_optimizations).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON document (schemas: docs/json.md).")
quiet_option = click.option("-q", "--quiet", is_flag=True,
                            help="No progress bar (it is drawn on stderr only when that is a terminal).")


def model_explorer_options(fn):
    """--model-explorer and --model-explorer-out DIR: the two graphs and their diff in Model Explorer."""
    fn = click.option("--model-explorer-out", "explorer_out", type=click.Path(file_okay=False), default=None,
                      metavar="DIR",
                      help="Write Model Explorer graph and node-data JSON files (graphs A and B, status, cause) to "
                           "this folder.")(fn)
    return click.option("--model-explorer", "explorer", is_flag=True,
                        help="Show the two graphs and their diff in Model Explorer on 127.0.0.1 (needs the "
                             "explorer extra); prints the URL, stops on Ctrl-C.")(fn)


def rank_options(fn):
    """--jobs N and --scheduler ADDRESS: how several ranks' dumps are read (results identical either way)."""
    fn = click.option("--scheduler", metavar="ADDRESS", default=None,
                      help="Summarise ranks on a Dask cluster (tcp://host:8786), or 'local' for a local one "
                           "(needs the dist extra).")(fn)
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                        help="Worker processes reading ranks in parallel (default: the CPU count).")(fn)


source_map_option = click.option(
    "--source-map", "source_map", multiple=True, metavar="OLD=NEW", expose_value=False, callback=source_map_given,
    help="Read the user's sources recorded under OLD from NEW (repeatable; a capture copied off the machine that "
         "made it).")


def normalization_options(fn):
    """--no-normalize PASS (repeatable) and --ignore-layouts, shared by the commands that compare graphs."""
    fn = click.option("--ignore-layouts", is_flag=True, help="Also ignore layouts such as {1,0}.")(fn)
    return click.option("--no-normalize", "no_normalize", multiple=True, type=click.Choice(PASS_CHOICES),
                        help="Turn a normalization pass off (repeatable).")(fn)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@json_option
@source_map_option
@stage_option
@rank_options
@quiet_option
@guarded
def inspect(paths: tuple[str, ...], as_json: bool, stage: str | None, jobs: int | None,
            scheduler: str | None) -> None:
    """List the graphs in dumps: size, inputs, outputs, trigger line, and which ones compiled.

    PATH is a torch_xla save-tensors file (graphs.hlo.0, also .gz), an XLA --xla_dump_to folder, an HLO
    text file, a `hlodiff record` folder or a run folder holding one of those (as explain-recompile takes it).
    Each graph gets a reference PATH#N that other commands accept.

    \b
    Example:
      hlodiff inspect fixtures/torch_xla/batch_shape/graphs.hlo.0
      hlodiff inspect run/graphs.hlo          (every rank: graphs.hlo.0, graphs.hlo.1, ...)
    """
    inspect_report(paths, as_json=as_json, stage=stage, jobs=jobs, scheduler=scheduler)


@main.command()
@click.argument("refs", nargs=-1, required=True)
@json_option
@source_map_option
@click.option("-v", "--verbose", is_flag=True, help="Also list every changed instruction and the mappings.")
@click.option("--cost", "with_cost", is_flag=True,
              help="Also say what the difference costs (bytes, copies, peak memory; always in --html).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Also write a self-contained HTML report (the two graphs side by side) to this file.")
@model_explorer_options
@normalization_options
@stage_option
@quiet_option
@guarded
def compare(refs: tuple[str, ...], as_json: bool, verbose: bool, with_cost: bool, html_path: str | None,
            no_normalize: tuple[str, ...], ignore_layouts: bool, stage: str | None, explorer: bool = False,
            explorer_out: str | None = None) -> None:
    """Compare two graphs, or each graph of one dump with the previous distinct one.

    A and B are files or PATH#N references (as `hlodiff inspect` numbers them). Exit status: 0 equal after
    normalization, 1 different, 2 error.

    \b
    Examples:
      hlodiff compare run/graphs.hlo.0#0 run/graphs.hlo.0#5
      hlodiff compare run/graphs.hlo.0 --json
      hlodiff compare a.hlo b.hlo --no-normalize parameter-order
    """
    compare_refs(refs, no_normalize=no_normalize, ignore_layouts=ignore_layouts, as_json=as_json, verbose=verbose,
                 with_cost=with_cost, html_path=html_path, stage=stage, explorer=explorer, explorer_out=explorer_out)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@json_option
@source_map_option
@click.option("--text", "show_text", is_flag=True, help="Print the normalized module text instead of fingerprints.")
@normalization_options
@stage_option
@quiet_option
@guarded
def fingerprint(paths: tuple[str, ...], as_json: bool, show_text: bool, no_normalize: tuple[str, ...],
                ignore_layouts: bool, stage: str | None) -> None:
    """Print the canonical fingerprint of each graph: equal exactly when the normalized graphs are equal.

    \b
    Example:
      hlodiff fingerprint run/graphs.hlo.0 other_run/graphs.hlo.0#3
    """
    fingerprint_report(paths, as_json=as_json, show_text=show_text, no_normalize=no_normalize,
                       ignore_layouts=ignore_layouts, stage=stage)


@main.command("explain-recompile")
@click.argument("paths", nargs=-1, required=True)
@click.option("--tensors-report", "tensors_report", type=click.Path(), default=None,
              help="Live-tensor reports captured before each sync (default: found beside the dump: "
                   "tensors_report.txt, or a stdout log holding the reports the program printed).")
@click.option("--debug-log", "debug_log", type=click.Path(), default=None,
              help="PT_XLA_DEBUG_LEVEL=1 or 2 output (default: found beside the dump by name or content).")
@click.option("--jax-log", "jax_log", type=click.Path(), default=None,
              help="JAX_EXPLAIN_CACHE_MISSES=1 / JAX_LOG_COMPILES=1 output (default: found beside the dump by "
                   "content).")
@click.option("--dynamo-log", "dynamo_log", type=click.Path(), default=None,
              help="TORCH_LOGS=recompiles,graph_breaks output (stderr or a file) or a TORCH_TRACE folder/log of a "
                   "torch.compile run (default: found beside the dump by content).")
@json_option
@source_map_option
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Also write a self-contained HTML report to this file.")
@click.option("-v", "--verbose", is_flag=True, help="Also list every changed instruction.")
@model_explorer_options
@click.option("--recompilation", "explorer_graph", type=int, metavar="N", default=None,
              help="With --model-explorer(-out): show recompiled graph #N (default: the first recompilation).")
@click.option("--warmup", type=click.IntRange(min=0), default=None, metavar="N",
              help="The first N steps are warm-up: recompilations in them are expected, later ones are not (as the "
                   "pytest plugin's hlo_stable(warmup=N)). Default: a family that warms up then stays steady is "
                   "expected.")
@stage_option
@rank_options
@quiet_option
@guarded
def explain_recompile(paths: tuple[str, ...], tensors_report: str | None, debug_log: str | None,
                      jax_log: str | None, dynamo_log: str | None, as_json: bool,
                      html_path: str | None, verbose: bool, warmup: int | None, stage: str | None, jobs: int | None,
                      scheduler: str | None, explorer: bool = False, explorer_out: str | None = None,
                      explorer_graph: int | None = None) -> None:
    """Explain why a run compiled again: which graphs compiled, and for each recompilation what changed against
    the closest earlier graph of its family and which line of your code caused it.

    PATH is a torch_xla save-tensors file, an XLA dump folder (with a PT_XLA_DEBUG_LEVEL=2 log beside it, every
    execution is read, cache hits too), a folder written by `hlodiff record`, or a run folder holding one of them.
    Several ranks' dumps (FILE.0 FILE.1 ..., the base name FILE, several dump folders, or a folder of rank*/
    folders) are explained rank by rank, with the steps where some ranks ran a graph the majority did not.
    Exit status: 0 when nothing unexpected compiled (warm-up, setup and JAX eager ops are expected; see
    --warmup), 1 on an unexpected recompilation or a rank that diverged, 2 on bad input.

    \b
    Examples:
      hlodiff explain-recompile fixtures/torch_xla/metric_even_steps/graphs.hlo.0
      hlodiff explain-recompile run/graphs.hlo.0 --tensors-report run/tensors_report.txt --html report.html
      hlodiff explain-recompile /tmp/jax_dump --json
      hlodiff explain-recompile run/graphs.hlo --jobs 4       (every ordinal of a torch_xla run)
      hlodiff explain-recompile job/ --scheduler tcp://10.0.0.1:8786   (job/rank0/, job/rank1/, ... on Dask)
    """
    explain_paths(list(paths), tensors_report=tensors_report, debug_log=debug_log, jax_log=jax_log,
                  dynamo_log=dynamo_log, jobs=jobs, scheduler=scheduler, as_json=as_json, html_path=html_path,
                  verbose=verbose, stage=stage, warmup=warmup,
                  explorer=(explorer, explorer_out, explorer_graph) if explorer or explorer_out else None)



@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--debug-log", "--jax-log", "debug_logs", multiple=True, type=click.Path(),
              help="Log with compile times (--jax-log for a JAX log, as explain-recompile names it; either name "
                   "takes any of them): JAX's jax_log_compiles output, torch_xla's metrics report or the "
                   "compile_times.tsv of hlodiff record (repeatable; default: jax_log.txt, jax.log, metrics.txt, "
                   "compile_times.tsv beside the dump); a PT_XLA_DEBUG log gives torch_xla's memory figures (default: "
                   "the one beside the dump).")
@click.option("--tensors-report", "tensors_report", type=click.Path(), default=None,
              help="Live-tensor reports, for the tensors crossing graph boundaries (default: tensors_report.txt "
                   "beside the dump).")
@json_option
@source_map_option
@click.option("--stage", metavar="STAGE", default=None,
              help="For XLA dump folders: which stage to read (default: the optimized modules when dumped).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Also write an HTML report: each run's step as its graphs with the bytes crossing between them "
                   "(by role), the single-graph alternative beside, every graph's figures.")
@quiet_option
@guarded
def cost(paths: tuple[str, ...], debug_logs: tuple[str, ...], tensors_report: str | None, as_json: bool,
         stage: str | None, html_path: str | None = None) -> None:
    """What each graph costs: parameter, output and aliased bytes, peak memory, copies (per loop iteration and
    per step), loop-buffer copies, compile seconds; and the tensors crossing from one graph to the next.

    For XLA dump folders the optimized modules are read (that is where XLA's copies and memory report are).

    \b
    Examples:
      hlodiff cost run/graphs.hlo.0 --tensors-report run/tensors_report.txt
      hlodiff cost /tmp/jax_dump --jax-log jax.log --json
    """
    cost_report(paths, debug_logs=debug_logs, tensors_report=tensors_report, as_json=as_json, stage=stage,
                html_path=html_path)


@main.command("compare-runs")
@click.argument("run_a", type=click.Path())
@click.argument("run_b", type=click.Path())
@click.option("--cache", "cache", type=click.Path(), default=None,
              help="The persistent cache folder, or a listing of it (ls -l DIR > listing.txt) (default: "
                   "cache_listing.txt or a cache/ folder found in or beside the runs).")
@source_map_option
@json_option
@quiet_option
@guarded
def compare_runs(run_a: str, run_b: str, cache: str | None, as_json: bool) -> None:
    """Why run B compiled what run A had compiled, across a persistent compilation cache (JAX's
    jax_compilation_cache_dir, torch_xla's initialize_cache).

    RUN_A and RUN_B are the two runs' captures: a JAX dump folder (--xla_dump_to) with the run's stderr
    (JAX_LOG_COMPILES=1 JAX_EXPLAIN_CACHE_MISSES=1) beside it, a torch_xla save-tensors file with its
    PT_XLA_DEBUG log and metrics report, or a folder holding one; a JAX run folder with its stderr alone
    (JAX_EXPLAIN_CACHE_MISSES=1, no dump) is read from its cache lines. Each compilation of B is a cache hit, a miss
    with the same HLO and key (never written: under the compile-time or size threshold, no cache configured yet;
    or not loadable), a miss because the key differs (the XLA flag or option), or a miss because the HLO differs
    (what changed, your line, the fix). Exit status: 0 when every program run A had compiled was loaded, 1 when
    run B compiled one again, 2 on bad input.

    \b
    Examples:
      hlodiff compare-runs fixtures/jax/cache_threshold/run_a fixtures/jax/cache_threshold/run_b
      hlodiff compare-runs yesterday/ today/ --cache ~/.cache/jax --json
    """
    compare_runs_report(run_a, run_b, cache=cache, as_json=as_json)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for the capture: xla_dump/, pt_xla_debug.log, compile_times.tsv, tensors_report.txt, "
                   "jax.log and the manifest hlodiff-record.json. Default: hlodiff-run, or hlodiff-run-2, -3... "
                   "past earlier recordings (a recording is never replaced; a named --out that holds one is "
                   "refused).")
@json_option
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Also write a self-contained HTML report to this file.")
@click.option("--lines", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="When torch_xla records your source lines: auto = while the run warms up and whenever a graph "
                   "compiles, off on steady steps (a graph that compiled without them gets them from its next "
                   "occurrence); always; never.")
@click.option("--live/--no-live", default=True, show_default=True,
              help="While the command runs, tell each recompilation on stderr as soon as its graph is captured: "
                   "one line (step, root cause, your line, the fix), a few more under the first of a story, a count "
                   "for the next ones; expected ones (warm-up) in one short line.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@quiet_option
@guarded
def record(out_dir: str | None, as_json: bool, html_path: str | None, lines: str, live: bool,
           command: tuple[str, ...]) -> None:
    """Run a training command with everything captured, then explain its recompilations.

    For torch_xla, at near-zero cost on cache hits: the HLO of each graph that compiles (XLA's dump, text and
    proto, with source metadata), every execution from the PT_XLA_DEBUG_LEVEL=2 log, compile times, and a
    live-tensor report at the first sync and at the sync after each compilation, injected without editing your
    script. For JAX: the XLA dump and JAX's compile / cache-miss log. Settings you already exported are kept
    (an XLA_SAVE_TENSORS_FILE you set is read instead of the dump).

    With --json, stdout holds only the JSON document: the command's own stdout goes to stderr (with its stderr),
    so `hlodiff record --json -- cmd > out.json` works. The explanation (without --json) goes to stderr, after
    the live lines (--live, the default), whether stderr is a terminal, a file or a pipe.

    Exit status: the command's own (128+N when it was killed by signal N); hlodiff's verdict is on stderr and in
    the JSON (for a 0/1 verdict in a script, run hlodiff explain-recompile on the folder afterwards).
    SIGINT/SIGTERM/SIGHUP are passed to the command's process group (then SIGTERM, SIGKILL after
    HLODIFF_RECORD_GRACE seconds, default 10); after such a signal nothing is explained (the folder is kept).

    \b
    Examples:
      hlodiff record -- python train.py --epochs 1
      hlodiff record --out runs/a -- python -m mypkg.train
      hlodiff explain-recompile runs/a          (explain a recorded folder again later)
    """
    record_and_explain(command, out_dir, as_json=as_json, html_path=html_path, lines=lines, live=live)


@main.command()
@click.argument("path", type=click.Path())
@click.option("--until-idle", "until_idle", type=float, default=None, metavar="SECONDS",
              help="Stop once nothing was written for this many seconds, counted from the first thing written "
                   "(default: follow until Ctrl-C).")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per event on stdout (JSON Lines, see docs/json.md), for dashboards.")
@stage_option
@guarded
def watch(path: str, until_idle: float | None, as_json: bool, stage: str | None) -> None:
    """Follow a capture while a run writes it, and tell each recompilation as it becomes true: the lines
    `hlodiff record` prints live, for a capture made by hand (a cluster job writing to shared storage).

    PATH is a folder `hlodiff record` writes, an XLA dump folder (with its PT_XLA_DEBUG_LEVEL=2 log beside it,
    cache hits are seen too), a save-tensors file or a PT_XLA_DEBUG log. A module or log line half written when
    read is read again when complete. A PATH the job has not created yet is waited for. Stops on Ctrl-C or
    --until-idle; exit status 0 (2 on bad input). It prints no report of its own: `hlodiff explain-recompile
    PATH` on the finished capture has the full one.

    \b
    Examples:
      hlodiff watch /shared/job42/dump --until-idle 600
      hlodiff watch hlodiff-run --json | tee events.jsonl
    """
    watch_capture(path, until_idle=until_idle, as_json=as_json, stage=stage)


if __name__ == "__main__":  # pragma: no cover
    main()
