"""The sync hook: hlodiff's code run just before and just after torch_xla's step marker, put into
``torch_xla.sync()`` (and so ``xm.mark_step()``, ``torch_xla.compile``, the parallel loader's step-end sync)
without a frame of its own; installed now or when torch_xla gets imported, and removed. What it does at each sync
(the live-tensor reports, compile times, source lines) is :mod:`hlodiff.capture.sync_reports`.

**What torch_xla 2.9 offers.** ``xm.mark_step()`` is ``torch_xla.sync()`` (it calls ``torch_xla.sync`` through the
package attribute); ``torch_xla.compile`` and ``step`` call the module global ``torch_xla.torch_xla.sync``;
``sync`` itself calls the C function ``torch_xla._XLAC._xla_step_marker``. Covering ``sync`` therefore covers
``mark_step`` once, without double reports. Wrapping anything in a Python function would however add a frame to
the stack torch_xla records at the sync, and torch_xla *reads* that stack: the save-tensors ``TensorsGraphInfo``
and the debug log print it, and the debug log's ``Compilation Cause`` looks at the two innermost frames (frame 0
must be ``sync`` in ``torch_xla.py``; frame 1 tells "parallel loader at step end" and "torch_xla.compile" from
"user torch_xla.sync"). Wrapping ``_xla_step_marker`` would turn every cause into "most likely user code trying to
access tensor value"; wrapping ``sync`` would hide the loader/compile causes and put hlodiff into every frame list.

So the hook is frame-neutral: ``torch_xla.sync`` is replaced by a *copy* of the original function (same code
object, so the same ``sync (…/torch_xla.py:87)`` frame) whose globals see proxies of ``torch_xla`` and ``xm``.
Looking up ``torch_xla._XLAC._xla_step_marker`` — which Python does before evaluating the call's arguments and
before the call — takes the report; looking up ``xm.is_master_ordinal`` right after the step marker returned
closes the sync. Both proxy calls return before the step marker runs / after it returned, so no hlodiff frame is
on the stack while torch_xla records it. If a future ``sync`` no longer has that shape, the hook falls back to a
plain wrapper (and says so on stderr once).

This module uses only the standard library at import time: the injected ``sitecustomize`` may load it by path into
an interpreter where hlodiff is not installed. It loads its siblings (:func:`_sibling`) only when it installs.
"""

from __future__ import annotations

import importlib
import os
import sys

REPORT_ENV = "HLODIFF_TENSORS_REPORT"
THRESHOLD_ENV = "HLODIFF_REPORT_THRESHOLD"
JAX_LOG_ENV = "HLODIFF_JAX_LOG"
XLA_DUMP_ADDED_ENV = "HLODIFF_XLA_DUMP_ADDED"

_STATE_ATTR = "_hlodiff_sync_hook"  # set on the torch_xla package: shared by every copy of this module
_MARK = "__hlodiff_sync_hook__"  # set on functions this module made

_FROM_SIBLINGS = {**dict.fromkeys(("SAVE_FILE_ENV", "DEBUG_FILE_ENV", "COMPILE_TIMES_ENV", "LIVE_TENSORS_ENV",
                                    "MAX_OUTPUTS_ENV", "DEFAULT_MAX_OUTPUTS", "READS_ENV", "save_tensors_path"),
                                   "sync_reports"),
                  **dict.fromkeys(("PERIOD_MAX", "STEADY_MIN_SYNCS"), "sync_period")}


def __getattr__(name: str):
    """The report policy's names (``hook.READS_ENV``), from :mod:`hlodiff.capture.sync_reports` (the steady run's,
    :mod:`hlodiff.capture.sync_period`) when first asked for: arming the hook loads nothing but this module and the
    import watcher."""
    if name in _FROM_SIBLINGS:
        return getattr(_sibling(_FROM_SIBLINGS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _new_state(report_path: str, threshold: int):
    """A fresh :class:`hlodiff.capture.sync_reports.SyncReports`, loading its siblings and warning through this
    module."""
    return _sibling("sync_reports").SyncReports(report_path, threshold, load=_sibling, warn=_warn_once)


_HookState = _new_state  # the name tests build a state by


# -- proxies (frame-neutral mode) ---------------------------------------------------------------------------------

class _Proxy:
    """Delegates every attribute to a module except a few, whose lookup runs a callback first.

    ``fixed`` attributes are set on the proxy itself, so their lookup never reaches ``__getattr__`` (a Python call):
    ``sync`` looks up nine attributes through the proxies at every sync. ``cache=True`` keeps every other attribute
    after its first lookup: only for ``torch_xla._XLAC``, whose functions are C builtins nobody replaces."""

    def __init__(self, target, hooks, fixed=None, cache=False):
        object.__setattr__(self, "_hlodiff_target", target)
        object.__setattr__(self, "_hlodiff_hooks", hooks)
        object.__setattr__(self, "_hlodiff_cache", cache)
        for name, value in (fixed or {}).items():
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        hook = self._hlodiff_hooks.get(name)
        if hook is not None:
            return hook(name)
        value = getattr(self._hlodiff_target, name)
        if self._hlodiff_cache and not name.startswith("__"):
            object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        self.__dict__.pop(name, None)
        setattr(self._hlodiff_target, name, value)

    def __delattr__(self, name):
        self.__dict__.pop(name, None)
        delattr(self._hlodiff_target, name)

    def __repr__(self):
        return repr(self._hlodiff_target)


def _frame_neutral_sync(original, state):
    """A copy of ``sync`` whose ``torch_xla`` and ``xm`` globals are proxies; None if ``sync`` has another shape."""
    import types

    code = getattr(original, "__code__", None)
    names = set(code.co_names) if code is not None else set()
    if not {"torch_xla", "_XLAC", "_xla_step_marker", "xm", "is_master_ordinal"} <= names:
        return None
    real_globals = original.__globals__
    torch_xla_mod, xm_mod = real_globals.get("torch_xla"), real_globals.get("xm")
    if torch_xla_mod is None or xm_mod is None or not _marker_before_master(code):
        return None

    def on_step_marker(name):
        state.before()
        return getattr(torch_xla_mod._XLAC, name)

    def on_master(name):
        state.after()
        return getattr(xm_mod, name)

    xlac_proxy = _Proxy(torch_xla_mod._XLAC, {"_xla_step_marker": on_step_marker}, cache=True)
    torch_xla_proxy = _Proxy(torch_xla_mod, {}, fixed={"_XLAC": xlac_proxy})
    xm_proxy = _Proxy(xm_mod, {"is_master_ordinal": on_master})
    new_globals = dict(real_globals)  # sync only reads module globals (sys, xu, torch_xla, xm)
    new_globals["torch_xla"] = torch_xla_proxy
    new_globals["xm"] = xm_proxy
    fn = types.FunctionType(code, new_globals, original.__name__, original.__defaults__, original.__closure__)
    fn.__kwdefaults__ = original.__kwdefaults__
    fn.__dict__.update(original.__dict__)
    fn.__doc__ = original.__doc__
    fn.__qualname__ = original.__qualname__
    fn.__module__ = original.__module__
    fn.__wrapped__ = original
    return fn


def _marker_before_master(code) -> bool:
    """The step marker is looked up before ``is_master_ordinal`` (and each exactly once)."""
    import dis

    order = [ins.argval for ins in dis.get_instructions(code)
             if ins.argval in ("_xla_step_marker", "is_master_ordinal")
             and ins.opname in ("LOAD_ATTR", "LOAD_METHOD")]
    return order == ["_xla_step_marker", "is_master_ordinal"]


def _plain_wrapper(original, state):
    """Fallback: a wrapper function (adds one hlodiff frame to the stack torch_xla records)."""
    import functools

    @functools.wraps(original)
    def sync(*args, **kwargs):
        depth = getattr(state.tls, "depth", 0)
        if depth:
            return original(*args, **kwargs)
        state.tls.depth = depth + 1
        try:
            state.before()
            try:
                return original(*args, **kwargs)
            finally:
                state.after()
        finally:
            state.tls.depth = depth

    return sync


# -- public API ---------------------------------------------------------------------------------------------------

def install_sync_hook(report_path: str | os.PathLike[str], *, nodes_threshold: int = 0) -> bool:
    """Patch ``torch_xla.sync`` (and with it ``xm.mark_step``) to append the live-tensor report to ``report_path``.

    Imports torch_xla. Idempotent: a second call does not wrap again; it only re-targets the report file and
    threshold, and returns False. Returns True when it patched.
    """
    import torch_xla

    state = getattr(torch_xla, _STATE_ATTR, None)
    if state is not None:
        state.report_path = os.path.abspath(os.fspath(report_path))
        state.threshold = nodes_threshold
        state.active = True
        return False
    module = sys.modules.get("torch_xla.torch_xla")
    original = getattr(module, "sync", None) if module is not None else getattr(torch_xla, "sync", None)
    if original is None:
        raise RuntimeError("torch_xla has no sync(): this torch_xla is too old for the hlodiff sync hook")
    if getattr(original, _MARK, False):
        return False  # patched by an earlier hook whose state was lost; never wrap twice
    state = _new_state(os.fspath(report_path), nodes_threshold)
    state.sync_code = original.__code__
    try:
        import atexit

        import torch_xla.debug.metrics as metrics

        state.metrics = metrics
        state.counter_value = getattr(torch_xla._XLAC, "_xla_counter_value", None) or metrics.counter_value
        atexit.register(_flush_at_exit, state)  # compilations after the last sync (an .item() at the end)
    except Exception as exc:
        _warn_once(f"torch_xla metrics unavailable: no compile times ({type(exc).__name__}: {exc})")
    try:
        import inspect

        import torch_xla.core.xla_model as xm

        state.mark_step_code = inspect.unwrap(xm.mark_step).__code__
    except Exception:
        pass
    if module is not None:
        compile_fn = getattr(module, "compile", None)
        consts = getattr(getattr(compile_fn, "__code__", None), "co_consts", ())
        state.compile_codes = tuple(c for c in consts if hasattr(c, "co_name"))  # _compile, _clear_pending...

    replacement = _frame_neutral_sync(original, state)
    state.mode = "frame-neutral"
    if replacement is None:
        replacement = _plain_wrapper(original, state)
        state.mode = "wrapper"
        state.sync_code = replacement.__code__
        _warn_once("torch_xla.sync has an unexpected shape; using a plain wrapper (one extra frame in the "
                   "torch_xla stacks, and the debug log may name every cause 'user torch_xla.sync')")
    try:
        state.apply_lines()
    except Exception as exc:
        _warn_once(f"cannot switch torch_xla's source lines: {type(exc).__name__}: {exc}")
        state.lines = None
    setattr(replacement, _MARK, True)
    replacement._hlodiff_original = original
    for owner in (module, torch_xla):
        if owner is not None and getattr(owner, "sync", None) is original:
            setattr(owner, "sync", replacement)
            state.patched.append((owner, "sync", original, replacement))
    setattr(torch_xla, _STATE_ATTR, state)
    return True


def _flush_at_exit(state) -> None:
    try:
        if state.active and state.metrics is not None:
            state._compiled_since_last_look()
    except Exception:
        pass


def request_report() -> bool:
    """Make the next sync write a live-tensor report (a recording block starts); False when no hook is installed."""
    torch_xla = sys.modules.get("torch_xla")
    state = getattr(torch_xla, _STATE_ATTR, None) if torch_xla is not None else None
    if state is None:
        return False
    state.request_report()
    return True


def uninstall_sync_hook() -> bool:
    """Restore ``torch_xla.sync``; False when no hook was installed. Never imports torch_xla."""
    _sibling("import_watch").remove_watcher()
    torch_xla = sys.modules.get("torch_xla")
    state = getattr(torch_xla, _STATE_ATTR, None) if torch_xla is not None else None
    if state is None:
        return False
    state.active = False
    for owner, attr, original, replacement in state.patched:
        if getattr(owner, attr, None) is replacement:
            setattr(owner, attr, original)
    state.patched.clear()
    delattr(torch_xla, _STATE_ATTR)
    return True


def sync_hook_installed() -> bool:
    torch_xla = sys.modules.get("torch_xla")
    return torch_xla is not None and getattr(torch_xla, _STATE_ATTR, None) is not None


def hook_mode() -> str | None:
    """``"frame-neutral"``, ``"wrapper"`` or None (not installed)."""
    torch_xla = sys.modules.get("torch_xla")
    state = getattr(torch_xla, _STATE_ATTR, None) if torch_xla is not None else None
    return state.mode if state is not None else None


# -- installing when torch_xla gets imported ----------------------------------------------------------------------

def install_on_import(report_path: str | os.PathLike[str], *, nodes_threshold: int = 0) -> bool:
    """Install the hook now if torch_xla is imported, else as soon as it is (nothing is imported here).

    Returns True when the hook was installed right away."""
    path = os.path.abspath(os.fspath(report_path))  # now: the script may chdir before importing torch_xla
    torch_xla = sys.modules.get("torch_xla")
    if torch_xla is not None and getattr(getattr(torch_xla, "__spec__", None), "_initializing", False) is False:
        install_sync_hook(path, nodes_threshold=nodes_threshold)
        return True
    watch = _sibling("import_watch")
    watch.remove_watcher()

    def on_import(module):
        try:
            drop_added_xla_dump()
            install_sync_hook(path, nodes_threshold=nodes_threshold)
        except Exception as exc:
            _warn_once(f"could not install the sync hook: {type(exc).__name__}: {exc}")

    sys.meta_path.insert(0, watch.ImportWatcher(on_import))
    return False


def drop_added_xla_dump() -> bool:
    """At ``import torch_xla``: take back the ``XLA_FLAGS`` dump flags hlodiff added (``HLODIFF_XLA_DUMP_ADDED``),
    unless JAX is imported too. The save-tensors file already holds torch_xla's graphs; an XLA dump would write
    them again with LLVM IR and objects. XLA reads ``XLA_FLAGS`` when torch_xla creates its runtime, after the
    import. Returns True when flags were removed."""
    added = os.environ.get(XLA_DUMP_ADDED_ENV, "").strip()
    flags = os.environ.get("XLA_FLAGS", "")
    if not added or "jax" in sys.modules or "jaxlib" in sys.modules or added not in flags:
        return False
    rest = (flags.replace(" " + added, "", 1) if " " + added in flags else flags.replace(added, "", 1)).strip()
    if rest:
        os.environ["XLA_FLAGS"] = rest
    else:
        os.environ.pop("XLA_FLAGS", None)
    os.environ.pop(XLA_DUMP_ADDED_ENV, None)
    return True


def _sibling(name: str):
    """``hlodiff.capture.<name>``, or the file beside this one when hlodiff is not importable (see the
    ``sitecustomize``)."""
    try:
        return importlib.import_module(f"hlodiff.capture.{name}")
    except ImportError:
        pass
    alias = f"hlodiff_capture_{name}"
    if alias in sys.modules:
        return sys.modules[alias]
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location(alias, os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py"))
    module = module_from_spec(spec)
    sys.modules[alias] = module
    spec.loader.exec_module(module)
    return module


def attach_jax_log(path: str | None = None) -> bool:
    """Copy what the ``jax`` logger prints (``JAX_LOG_COMPILES``, ``JAX_EXPLAIN_CACHE_MISSES``) to ``path``
    (default ``HLODIFF_JAX_LOG``); the user's stderr keeps getting it. Imports neither JAX nor anything heavy: the
    file is created only when JAX logs something."""
    path = path or os.environ.get(JAX_LOG_ENV, "")
    if not path:
        return False
    import logging

    logger = logging.getLogger("jax")
    target = os.path.abspath(path)
    if any(getattr(h, "baseFilename", None) == target for h in logger.handlers):
        return False
    handler = logging.FileHandler(target, delay=True, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    logger.addHandler(handler)
    return True


def threshold_from_env(default: int = 0) -> int:
    value = os.environ.get(THRESHOLD_ENV, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        return default


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        print(f"hlodiff: warning: {message}", file=sys.stderr, flush=True)
