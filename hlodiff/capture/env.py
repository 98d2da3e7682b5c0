"""The environment that makes a run write everything hlodiff reads, and the manifest saying where it went.

:func:`capture_env` adds to an environment (never replacing what the user set):

=============================  ================================  =================================================
variable                       hlodiff's value                   read by
=============================  ================================  =================================================
``XLA_SAVE_TENSORS_FILE``      ``<out>/graphs.hlo``              torch_xla: one entry per sync, in ``graphs.hlo.0``
``XLA_SAVE_TENSORS_FMT``       ``hlo``                           torch_xla
``XLA_HLO_DEBUG``              ``1``                             torch_xla: source lines in HLO metadata
``XLA_IR_DEBUG``               ``1``                             torch_xla: ``Frames:``/``location=`` in reports
``PT_XLA_DEBUG_LEVEL``         ``1``                             torch_xla: compilation causes
``PT_XLA_DEBUG_FILE``          ``<out>/pt_xla_debug.log``        torch_xla (the log goes to stderr without it)
``HLODIFF_TENSORS_REPORT``     ``<out>/tensors_report.txt``      hlodiff's sync hook (:mod:`hlodiff.capture.hook`)
``XLA_FLAGS`` (appended)       ``--xla_dump_to=<out>/xla_dump    XLA (JAX, and every XLA compile of torch_xla too)
                               --xla_dump_hlo_as_text``
``TORCH_TRACE``                ``<out>/torch_trace``             torch.compile (Dynamo): compile ids, failed guards,
                                                                 graph breaks (issue 31); written only when Dynamo
                                                                 compiles, so a lazy or JAX program pays nothing
=============================  ================================  =================================================

A value the user already set (non-empty) is kept, and the manifest records where the files really go. For
``XLA_FLAGS``, a user ``--xla_dump_to`` is kept (``--xla_dump_hlo_as_text`` is still added when missing: without it
XLA dumps only binary protos).

The XLA dump is for JAX (and other non-torch_xla XLA programs). A torch_xla process would dump every graph a
second time, with LLVM IR and object files besides (dozens of files per compilation), so when the hook sees
``import torch_xla`` in a process that has not imported JAX, it takes back the dump flags hlodiff added (named in
``HLODIFF_XLA_DUMP_ADDED``; XLA reads ``XLA_FLAGS`` only when torch_xla first creates its runtime, later). A
``--xla_dump_to`` the user set is never removed.

The manifest, :class:`CapturePaths`, is written to ``<out>/hlodiff-record.json`` so later commands find everything
from the folder alone; paths inside the folder are stored relative to it (the folder can be moved or copied).
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from hlodiff.dumps.manifest import CAPTURE_EXECUTIONS, CAPTURE_SAVE_TENSORS, CapturePaths
from hlodiff.dumps.manifest import MANIFEST_NAME, read_manifest  # noqa: F401  (re-exported: hlodiff.capture API)

SAVE_BASENAME = "graphs.hlo"
DEBUG_LOG_NAME = "pt_xla_debug.log"
REPORT_NAME = "tensors_report.txt"
XLA_DUMP_NAME = "xla_dump"
COMPILE_TIMES_NAME = "compile_times.tsv"
JAX_LOG_NAME = "jax.log"

# Same names as in hook.py and sync_reports.py (which must stay importable without hlodiff).
REPORT_ENV = "HLODIFF_TENSORS_REPORT"
COMPILE_TIMES_ENV = "HLODIFF_COMPILE_TIMES"
JAX_LOG_ENV = "HLODIFF_JAX_LOG"
XLA_DUMP_ADDED_ENV = "HLODIFF_XLA_DUMP_ADDED"
READS_ENV = "HLODIFF_DEVICE_DATA_READS"

_DUMP_TO_RE = re.compile(r"""(?:^|\s)--xla_dump_to(?:=|\s+)("[^"]*"|'[^']*'|\S+)""")
_AS_TEXT_RE = re.compile(r"(?:^|\s)--xla_dump_hlo_as_text(?:=(\S+))?(?=\s|$)")
_AS_PROTO_RE = re.compile(r"(?:^|\s)--xla_dump_hlo_as_proto(?:=(\S+))?(?=\s|$)")


class CaptureEnv(dict):
    """The full environment (a ``dict[str, str]`` for ``subprocess``), with the manifest as ``.paths``."""

    paths: CapturePaths


TORCH_TRACE_NAME = "torch_trace"
"""The TORCH_TRACE folder inside a recording: found there by :mod:`hlodiff.dumps.run_folder` (issue 31)."""


def capture_env(out_dir: str | os.PathLike[str], *, base_env: Mapping[str, str] | None = None,
                xla_dump: bool = True, write_manifest: bool = True, cwd: str | os.PathLike[str] | None = None,
                source_lines: bool = True) -> CaptureEnv:
    """The environment making torch_xla (and XLA, for JAX) write everything hlodiff needs into ``out_dir``.

    Returns ``base_env`` (default: ``os.environ``) plus hlodiff's variables, as a dict whose ``.paths`` is the
    :class:`CapturePaths` manifest; the manifest is also written to ``<out_dir>/hlodiff-record.json`` (creating
    the output folders) unless ``write_manifest`` is False. Relative paths the user set are resolved against
    ``cwd`` (the directory the run will start in; default: the current one). ``xla_dump=False`` leaves
    ``XLA_FLAGS`` alone (the XLA dump is what JAX runs are read from). ``source_lines=False`` leaves
    ``XLA_HLO_DEBUG``/``XLA_IR_DEBUG`` alone (the pytest plugin's default: under pytest's deep stack, torch_xla's
    per-IR-node frame capture costs about 1.5x per traced step).
    """
    out = os.path.abspath(os.fspath(out_dir))
    start_dir = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()

    def resolve(path: str) -> str:
        return os.path.normpath(os.path.join(start_dir, os.path.expanduser(path)))
    base = dict(os.environ if base_env is None else base_env)
    env = CaptureEnv(base)
    paths = CapturePaths(out_dir=out)
    env.paths = paths
    from hlodiff.capture.run_facts import cache_settings, versions

    paths.versions, paths.cache_settings = versions(), cache_settings(base)  # a recording stands alone

    def choose(name: str, value: str) -> tuple[str, bool]:
        """The user's non-empty value, or ours; True when ours."""
        current = base.get(name, "")
        if current.strip():
            paths.user_set[name] = current
            return current, False
        env[name] = value
        paths.env_added[name] = value
        return value, True

    owned: list[str] = []

    if base.get("XLA_SAVE_TENSORS_FILE", "").strip():
        # The user asked for torch_xla's save file (HLO of every execution): read it, as before.
        paths.capture = CAPTURE_SAVE_TENSORS
        save_base, _ = choose("XLA_SAVE_TENSORS_FILE", "")
        paths.save_tensors_base = resolve(save_base)
        paths.save_tensors_file = paths.save_tensors_base + ".0"
        fmt, _ = choose("XLA_SAVE_TENSORS_FMT", "hlo")
        paths.save_tensors_fmt = fmt
        if fmt != "hlo":
            paths.warnings.append(f"XLA_SAVE_TENSORS_FMT={fmt} (set by you): hlodiff reads only 'hlo' save files")
    else:
        paths.capture = CAPTURE_EXECUTIONS

    for name in ("XLA_HLO_DEBUG", "XLA_IR_DEBUG") if source_lines else ():
        value, _ = choose(name, "1")
        if value.strip() in ("0", "false", "False"):
            paths.warnings.append(f"{name}={value} (set by you): graphs and reports will lack source lines")

    level, _ = choose("PT_XLA_DEBUG_LEVEL", "2")
    debug_file, ours = choose("PT_XLA_DEBUG_FILE", os.path.join(out, DEBUG_LOG_NAME))
    paths.debug_log = resolve(debug_file)
    if ours:
        owned.append(paths.debug_log)
    if level.strip() in ("0", "-1"):
        paths.warnings.append(f"PT_XLA_DEBUG_LEVEL={level} (set by you): no compilation log will be written")
    elif paths.capture == CAPTURE_EXECUTIONS and level.strip() == "1":
        paths.warnings.append("PT_XLA_DEBUG_LEVEL=1 (set by you): cache hits are not logged, so the run is read "
                              "as its compilations only")

    report, ours = choose(REPORT_ENV, os.path.join(out, REPORT_NAME))
    paths.tensors_report = resolve(report)
    if ours:
        owned.append(paths.tensors_report)
    times, ours = choose(COMPILE_TIMES_ENV, os.path.join(out, COMPILE_TIMES_NAME))
    paths.compile_times = resolve(times)
    if ours:
        owned.append(paths.compile_times)

    for name in ("JAX_EXPLAIN_CACHE_MISSES", "JAX_LOG_COMPILES"):
        choose(name, "1")
    jax_log, ours = choose(JAX_LOG_ENV, os.path.join(out, JAX_LOG_NAME))
    paths.jax_log = resolve(jax_log)
    if ours:
        owned.append(paths.jax_log)

    trace, ours = choose("TORCH_TRACE", os.path.join(out, TORCH_TRACE_NAME))  # issue 31: Dynamo's own log
    if ours:
        owned.append(resolve(trace))

    if xla_dump:
        owned += _add_dump_flags(base, env, paths, resolve)

    if paths.save_tensors_file and os.path.exists(paths.save_tensors_file):
        from hlodiff.capture.runlog import count_save_entries

        paths.save_tensors_start_entry = count_save_entries(paths.save_tensors_file)
        if paths.save_tensors_start_entry:
            paths.warnings.append(f"{paths.save_tensors_file} already holds {paths.save_tensors_start_entry} "
                                  "entries; torch_xla appends after them")
    paths.owned = [p for p in owned if not os.path.exists(p)]
    if write_manifest:
        paths.make_dirs()
        paths.write()
    return env


def _add_dump_flags(base: Mapping[str, str], env: CaptureEnv, paths: CapturePaths, resolve) -> list[str]:
    """Append ``--xla_dump_to=<out>/xla_dump --xla_dump_hlo_as_text --xla_dump_hlo_as_proto`` to ``XLA_FLAGS``
    (keeping a ``--xla_dump_to`` the user set). XLA writes a module only when it compiles it, so this is the HLO
    of compiled graphs only (the proto adds the full Python stack of every instruction). Returns what it owns."""
    owned = []
    flags = base.get("XLA_FLAGS", "")
    m = _DUMP_TO_RE.search(flags)
    new_flags = flags
    if m is not None:
        dump_to = m.group(1).strip("\"'")
        paths.user_set["XLA_FLAGS"] = flags
        paths.xla_dump = resolve(dump_to) if dump_to not in ("-", "sponge") else None
        if paths.xla_dump is None:
            paths.warnings.append(f"--xla_dump_to={dump_to} (set by you) is not a folder: no XLA dump to read")
    else:
        paths.xla_dump = os.path.join(paths.out_dir, XLA_DUMP_NAME)
        new_flags = _join_flags(new_flags, "--xla_dump_to=" + _flag_value(paths.xla_dump))
        owned.append(paths.xla_dump)
    as_text = _AS_TEXT_RE.search(flags)
    if as_text is None:
        new_flags = _join_flags(new_flags, "--xla_dump_hlo_as_text")
    elif (as_text.group(1) or "true").lower() in ("false", "0"):
        paths.warnings.append("--xla_dump_hlo_as_text=false (set by you): the XLA dump will hold no HLO text")
    if _AS_PROTO_RE.search(flags) is None:
        new_flags = _join_flags(new_flags, "--xla_dump_hlo_as_proto")
    if new_flags != flags:
        env["XLA_FLAGS"] = new_flags
        paths.env_added["XLA_FLAGS"] = new_flags
        if m is None and paths.capture == CAPTURE_SAVE_TENSORS:
            # The save file already holds torch_xla's graphs: the hook takes these flags back in a torch_xla
            # process (the dump would write every graph a second time, with LLVM IR and objects).
            added = new_flags[len(flags):].strip()
            env[XLA_DUMP_ADDED_ENV] = added
            paths.env_added[XLA_DUMP_ADDED_ENV] = added
    return owned


def _flag_value(value: str) -> str:
    """XLA splits ``XLA_FLAGS`` on whitespace; a value with spaces must be double-quoted."""
    return f'"{value}"' if re.search(r'[\s"]', value) else value


def _join_flags(flags: str, flag: str) -> str:
    return f"{flags.rstrip()} {flag}" if flags.strip() else flag
