"""hlodiff's ``sitecustomize``: ``hlodiff record`` puts this folder first on ``PYTHONPATH``.

1. It runs the ``sitecustomize`` this one shadows (the next one on ``sys.path``), if any.
2. When ``HLODIFF_JAX_LOG`` is set, it copies the ``jax`` logger's messages to that file (JAX itself is not
   imported). When ``HLODIFF_TENSORS_REPORT`` is set, it arranges for hlodiff's sync hook to be installed the moment
   ``torch_xla`` has been imported: a ``sys.meta_path`` finder that reacts only to the name ``torch_xla``. Nothing
   is imported up front beyond hlodiff's small stdlib-only hook module, so a script that never imports torch_xla
   runs as before.

Kept compatible with old Python 3 syntax: a child process may run another interpreter.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _same_dir(entry):
    try:
        return os.path.realpath(entry or os.curdir) == os.path.realpath(_HERE)
    except (OSError, ValueError):
        return False


def _chain():
    """Run the sitecustomize we shadow, like site.py would have (errors are printed, not raised)."""
    try:
        from importlib.machinery import PathFinder
        from importlib.util import module_from_spec

        spec = PathFinder.find_spec("sitecustomize", [p for p in sys.path if not _same_dir(p)])
        if spec is None or spec.loader is None:
            return None
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except Exception as exc:
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                         % (type(exc).__name__, exc))
        return None


def _load_hook():
    try:
        from hlodiff.capture import hook
        return hook
    except ImportError:
        pass
    # An interpreter without hlodiff installed: load the stdlib-only hook module from beside this folder.
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("hlodiff_capture_hook", os.path.join(os.path.dirname(_HERE), "hook.py"))
    module = module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _per_process():
    """Under ``hlodiff record``: this process's capture goes to a folder of its own (a launcher's workers each
    get theirs; ``hlodiff.capture.per_process``), decided before anything reads the capture variables."""
    if not os.environ.get("HLODIFF_RECORD_ROOT"):
        return
    try:
        try:
            from hlodiff.capture import per_process
        except ImportError:
            from importlib.util import module_from_spec, spec_from_file_location

            spec = spec_from_file_location("hlodiff_capture_per_process",
                                           os.path.join(os.path.dirname(_HERE), "per_process.py"))
            per_process = module_from_spec(spec)
            spec.loader.exec_module(per_process)
        per_process.redirect()
    except Exception as exc:
        sys.stderr.write("hlodiff: warning: no capture folder of its own for this process: %s: %s\n"
                         % (type(exc).__name__, exc))


def _arm():
    report = os.environ.get("HLODIFF_TENSORS_REPORT", "")
    jax_log = os.environ.get("HLODIFF_JAX_LOG", "")
    if not report and not jax_log:
        return
    try:
        hook = _load_hook()
        if jax_log:
            hook.attach_jax_log(jax_log)
        if report:
            hook.install_on_import(report, nodes_threshold=hook.threshold_from_env())
    except Exception as exc:
        sys.stderr.write("hlodiff: warning: sync hook not armed: %s: %s\n" % (type(exc).__name__, exc))


_per_process()
_arm()
_chained = _chain()
