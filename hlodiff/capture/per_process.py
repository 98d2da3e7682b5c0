"""One capture per process under ``hlodiff record`` (issue 36): a launcher's workers each write their own files.

torch_xla and XLA append to the files their environment names, and every process a launcher (``torchrun``,
``xmp.spawn`` with its own interpreters, a SLURM or ``mpirun`` wrapper, a Python script starting workers) starts
inherits one environment: without this, two ranks wrote into one ``pt_xla_debug.log`` and one XLA dump folder
(XLA numbers modules per process, so rank 1's ``module_0000`` overwrote rank 0's), and a rank's recompilation was
lost among the other's lines.

So every Python interpreter started under ``hlodiff record`` (``HLODIFF_RECORD_ROOT`` names the run folder)
decides at interpreter start, in the injected ``sitecustomize`` and before torch_xla or XLA reads anything, which
folder it captures into:

* the first Python process of the run, without a rank: the run folder itself (the layout of a one-process run);
* a process with a rank (``RANK``, else ``LOCAL_RANK``, ``SLURM_PROCID``, ``OMPI_COMM_WORLD_RANK``, ``PMI_RANK``
  as launchers set them: :data:`RANK_VARIABLES`; with the job's size above 1): ``rank<R>/``
  (``restart<N>/rank<R>/`` when torchrun restarted its workers: ``TORCHELASTIC_RESTART_COUNT``, the earlier
  attempt's capture kept beside);
* any other process started below a process already capturing: ``pid<P>/`` inside its parent's folder.

It rewrites, in its own environment (so its children start from it), the paths hlodiff chose for the debug log,
the live-tensor report, compile times, the JAX log, the Dynamo trace and the ``--xla_dump_to`` of ``XLA_FLAGS``;
a path the user set outside the run folder is never touched. Nothing is created at start: the folder and its
manifest (a copy of the run's, whose paths are relative to the folder holding it, plus ``process``: pid, rank, how
the rank was known) appear when the process imports torch_xla or JAX, so a launcher or a data-loader worker that
never touches XLA leaves nothing behind. After the command, :func:`collect` completes each process's manifest
and lists the processes in the run's (``processes``), which :mod:`hlodiff.dumps.ranks` reads.

The part run in the child uses only the standard library (the ``sitecustomize`` may load it by path).
"""

from __future__ import annotations

import json
import os
import sys

ROOT_ENV = "HLODIFF_RECORD_ROOT"
"""The run folder (set by ``hlodiff record``)."""
DIR_ENV = "HLODIFF_PROCESS_DIR"
"""The folder, relative to the run folder, the nearest capturing ancestor chose ("" for the run folder)."""
OWNER_ENV = "HLODIFF_PROCESS_OWNER"
"""The pid of that ancestor: a process seeing another pid here is a child of a capturing process."""
REDIRECTED = ("PT_XLA_DEBUG_FILE", "HLODIFF_TENSORS_REPORT", "HLODIFF_COMPILE_TIMES", "HLODIFF_JAX_LOG",
              "TORCH_TRACE", "XLA_FLAGS", "HLODIFF_XLA_DUMP_ADDED", "XLA_SAVE_TENSORS_FILE")
"""The variables whose paths under the run folder move to the process's folder."""
MANIFEST_NAME = "hlodiff-record.json"  # as hlodiff.dumps.manifest (this module must import without hlodiff)
SAVE_BASENAME = "graphs.hlo"  # as hlodiff.capture.env
TRIGGERS = ("torch_xla", "jax", "jaxlib")
"""Importing one of these makes the process's folder and manifest."""


def _int(value):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


RANK_VARIABLES = (
    # (rank variable, job-size variable, who sets them)
    ("RANK", "WORLD_SIZE", "torchrun, accelerate, torch.distributed launchers"),
    ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "torchrun (one host)"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM srun"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI mpirun"),
    ("PMI_RANK", "PMI_SIZE", "MPICH / Intel MPI mpirun"),
)
"""Where launchers put a process's rank, in the order they are trusted (the first one set wins)."""


def rank_of(environ) -> tuple[int | None, str]:
    """The rank a launcher gave this process, and the words saying how it is known; (None, "") without one.

    A rank counts only in a job of several processes (its job-size variable above 1, or unset): a one-process job
    keeps the one-process layout."""
    for name, size_name, _who in RANK_VARIABLES:
        value = _int(environ.get(name))
        if value is None or value < 0:
            continue
        size = _int(environ.get(size_name))
        if size is not None and size <= 1:
            return None, ""
        return value, f"{name}={value} as the launcher set it"
    return None, ""


def device_threads(environ) -> int:
    """The number of CPU devices torch_xla runs as threads of one process (``torch_xla.launch``/``xmp.spawn``
    with ``PJRT_DEVICE=CPU CPU_NUM_DEVICES=N``), 0 when not so: their graphs share one process, so no folder of
    their own can part them; only torch_xla's save file is written per device (``graphs.hlo.<ordinal>``)."""
    n = _int(environ.get("CPU_NUM_DEVICES"))
    return n if n is not None and n > 1 and environ.get("PJRT_DEVICE", "").upper() == "CPU" else 0


def choose_folder(environ, pid: int) -> tuple[str | None, dict]:
    """The folder (relative to the run folder; "" = the run folder itself) this process captures into, and the
    facts its manifest keeps; (None, {}) when not under ``hlodiff record``."""
    if not environ.get(ROOT_ENV):
        return None, {}
    owner = _int(environ.get(OWNER_ENV))
    parent_dir = environ.get(DIR_ENV, "") if owner is not None else ""
    rank, how = rank_of(environ)
    facts = {"pid": pid, "rank": rank, "identified_by": how or f"process id {pid} (no rank set)"}
    restart = _int(environ.get("TORCHELASTIC_RESTART_COUNT")) or 0
    if rank is not None:
        name = f"rank{rank}" if restart <= 0 else os.path.join(f"restart{restart}", f"rank{rank}")
        if owner is None or os.path.basename(parent_dir) != f"rank{rank}":
            if restart > 0:
                facts["restart"] = restart
                facts["identified_by"] = f"{how}, attempt {restart + 1} (TORCHELASTIC_RESTART_COUNT={restart})"
            return name, facts
        # a child of rank R's own process (a spawned data-loader worker inherits RANK): inside rank R's folder
    if owner is None:
        facts["identified_by"] = f"the first Python process of the run (process id {pid})"
        return "", facts
    facts["rank"] = None
    return (os.path.join(parent_dir, f"pid{pid}") if parent_dir else f"pid{pid}"), facts


def redirect(environ=None, pid: int | None = None, *, arm: bool = True) -> str | None:
    """At interpreter start: point this process's capture variables at its own folder (see the module
    docstring) and (``arm``) the folder's creation; returns the folder chosen (None: not under ``hlodiff record``)."""
    environ = os.environ if environ is None else environ
    pid = os.getpid() if pid is None else pid
    sub, facts = choose_folder(environ, pid)
    if sub is None:
        return None
    root = environ[ROOT_ENV]
    old_dir = os.path.join(root, environ.get(DIR_ENV, "")) if _int(environ.get(OWNER_ENV)) is not None else root
    new_dir = os.path.join(root, sub) if sub else root
    old_prefix, new_prefix = os.path.join(old_dir, ""), os.path.join(new_dir, "")
    if old_prefix != new_prefix:
        for name in REDIRECTED:
            value = environ.get(name)
            if value and old_prefix in value:
                environ[name] = value.replace(old_prefix, new_prefix)
    environ[DIR_ENV] = sub
    environ[OWNER_ENV] = str(pid)
    threads = device_threads(environ)
    if sub and threads and not environ.get("XLA_SAVE_TENSORS_FILE", "").strip():
        # torch_xla.launch's worker, its devices threads of this one process, in a program that set
        # CPU_NUM_DEVICES itself (after `record` chose the capture): only the save file parts the devices
        environ["XLA_SAVE_TENSORS_FILE"] = os.path.join(new_dir, SAVE_BASENAME)
        environ.setdefault("XLA_SAVE_TENSORS_FMT", "hlo")
        facts["device_threads"] = threads
    if sub and arm:
        _arm(root, new_dir, facts)
    return sub


class _FirstImport:
    """A ``sys.meta_path`` finder that never finds anything: the first time a trigger package is looked up it
    makes the process's folder, then steps aside. (Not an ``import_watch.ImportWatcher``: the sync hook removes
    those when it re-arms.)"""

    def __init__(self, action):
        self.action = action

    def find_spec(self, fullname, path=None, target=None):
        if fullname in TRIGGERS:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            try:
                self.action()
            except Exception as exc:  # never break the user's import
                sys.stderr.write(f"hlodiff: warning: this process's capture folder: {type(exc).__name__}: {exc}\n")
        return None


def _arm(root: str, folder: str, facts: dict) -> None:
    if any(name in sys.modules for name in TRIGGERS):
        make_folder(root, folder, facts)
        return
    sys.meta_path.insert(0, _FirstImport(lambda: make_folder(root, folder, facts)))


def make_folder(root: str, folder: str, facts: dict) -> None:
    """Create the process's folder and its manifest: the run's manifest (its paths are relative to the folder
    holding it, so they now name this folder's files) with ``process`` added."""
    os.makedirs(folder, exist_ok=True)
    try:
        with open(os.path.join(root, MANIFEST_NAME), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = {}
    facts = dict(facts)
    threads = facts.pop("device_threads", 0)
    if threads:  # what record.py writes when CPU_NUM_DEVICES is set before the run: the devices' save files
        data.update(capture="save_tensors", save_tensors_base=SAVE_BASENAME, save_tensors_file=None,
                    save_tensors_fmt="hlo", xla_dump=None)
        data["warnings"] = list(data.get("warnings") or []) + [
            f"CPU_NUM_DEVICES={threads} (set by the program): torch_xla runs its devices as threads of one "
            "process, so each device's graphs are read from its own save file (graphs.hlo.<ordinal>)"]
    facts["argv"] = list(getattr(sys, "argv", []) or [])
    data["process"] = facts
    data["processes"] = []
    data["returncode"] = None
    _write_json(folder, data)
    if facts.get("rank") is None:
        import atexit

        atexit.register(_note_rank_at_exit, folder)


def _write_json(folder: str, data: dict) -> None:
    tmp = os.path.join(folder, MANIFEST_NAME + f".{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
    os.replace(tmp, os.path.join(folder, MANIFEST_NAME))


def framework_rank() -> tuple[int | None, str]:
    """The rank the program gave itself after it started: JAX's process id once ``jax.distributed.initialize``
    ran (a launcher that passes it on the command line sets no variable hlodiff could read at start)."""
    distributed = sys.modules.get("jax._src.distributed")
    state = getattr(distributed, "global_state", None)
    if state is not None and getattr(state, "coordinator_address", None) is not None:
        process_id = _int(getattr(state, "process_id", None))
        if process_id is not None:
            return process_id, f"jax.distributed process_id={process_id}"
    return None, ""


def _note_rank_at_exit(folder: str) -> None:
    """At interpreter exit: a process started without a rank writes the one its framework gave it into its
    manifest (its folder keeps its process-id name)."""
    try:
        rank, how = framework_rank()
        if rank is None:
            return
        with open(os.path.join(folder, MANIFEST_NAME), encoding="utf-8") as f:
            data = json.load(f)
        process = data.get("process") or {}
        if process.get("rank") is not None:
            return
        process["rank"] = rank
        process["identified_by"] = f"{how}, process id {process.get('pid')}"
        data["process"] = process
        _write_json(folder, data)
    except Exception:
        pass  # never fail the user's exit; the process is numbered by its folder


# -- after the command (hlodiff record, with hlodiff importable) ----------------------------------------------------

def process_folders(root: str) -> list[str]:
    """The process folders under the run folder (absolute, natural order): every folder holding a manifest with
    ``process``, at any depth (``rank1/``, ``restart1/rank1/``, ``rank0/pid812/``)."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("xla_dump", "torch_trace")))
        if here != root and MANIFEST_NAME in files:
            found.append(here)
    return found


def collect(paths) -> list[dict]:
    """After the command: complete each process's manifest (outputs really written, LLVM IR pruned, the command's
    status) and return the entries listed in the run's manifest (``{"folder", "rank", "pid", "identified_by"}``)."""
    from hlodiff.capture.prune import prune_xla_dump
    from hlodiff.dumps.manifest import read_manifest
    from hlodiff.errors import HlodiffError

    entries = []
    for folder in process_folders(paths.out_dir):
        try:
            sub = read_manifest(folder)
        except HlodiffError:
            continue
        process = dict(getattr(sub, "process", None) or {})
        if not process:
            continue
        sub.refresh()
        prune_xla_dump(sub)
        sub.returncode, sub.command = paths.returncode, paths.command
        try:
            sub.write()
        except HlodiffError:
            pass
        entry = {"folder": os.path.relpath(folder, paths.out_dir), "rank": process.get("rank"),
                 "pid": process.get("pid"), "identified_by": process.get("identified_by", "")}
        if process.get("restart"):
            entry["restart"] = process["restart"]
        entry["captured"] = bool(sub.xla_dump or sub.save_tensors_files() or sub.debug_log or sub.jax_log)
        entries.append(entry)
    return entries
