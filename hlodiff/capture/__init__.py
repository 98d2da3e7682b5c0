"""Capture what hlodiff reads from a real run, at near-zero cost on cache hits: XLA's dump of compiled graphs (text
and proto), the ``PT_XLA_DEBUG_LEVEL=2`` log of every execution, live-tensor reports around compilations (every
sync when the user asked for a save-tensors file), compile times, JAX's compile log.

Nothing here is imported by the rest of hlodiff, and importing this package imports neither torch nor torch_xla:
the names below are loaded on first use. Reading what was captured is :mod:`hlodiff.dumps` (``manifest``,
``executions``).

* :func:`capture_env` / :class:`CapturePaths` / :func:`read_manifest` (``env``): the environment for a run and the
  ``hlodiff-record.json`` manifest that says where each output went.
* :func:`record_command` (``record``): run a command under that environment (``hlodiff record -- python train.py``),
  with the sync hook injected through a ``sitecustomize`` (no edit of the user's script), signals forwarded to its
  process group (``supervise``).
* :func:`install_sync_hook` / :func:`uninstall_sync_hook` (``hook``): append ``_xla_tensors_report`` to a file
  under a ``## SYNC <n>`` line just before a sync whose graph is likely new; compile times (``runlog``).
* :class:`Recorder`, :func:`configure_process_env`, :func:`cleanup` (``session``): in-process capture for the
  pytest plugin.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "CaptureEnv": "env",
    "CapturePaths": "env",
    "MANIFEST_NAME": "env",
    "capture_env": "env",
    "read_manifest": "env",
    "install_sync_hook": "hook",
    "uninstall_sync_hook": "hook",
    "install_on_import": "hook",
    "sync_hook_installed": "hook",
    "count_save_entries": "runlog",
    "RecordResult": "record",
    "record_command": "record",
    "Recorder": "session",
    "Recording": "session",
    "configure_process_env": "session",
    "cleanup": "session",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
