"""Dynamo's recompilations caught in the process, for the pytest plugin (issue 31).

``TORCH_TRACE`` is read when torch is imported, which under pytest is usually before the plugin arranges anything
(test modules import torch at the top). Dynamo writes its structured events (``trace_structured``) to the
``torch.__trace`` logger whenever that logger has a handler, so a handler added for the duration of a test sees the
same records a TORCH_TRACE file would hold: the recompile reasons, the call stacks, the graph breaks. Only those
records are kept (the FX graphs and timing events are dropped as they arrive). The file names in call stacks are
interned once per process, so the table is read from torch at the end, whenever the strings were first seen.
"""

from __future__ import annotations

import logging
import sys

KEPT = ("dynamo_start", "compilation_metrics", "artifact")
ARTIFACTS = ("recompile_reasons", "dynamo_graph_break_reason")
TRACE_LOGGER = "torch.__trace"


class _Catch(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[tuple[int, dict, list[str]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict) or not metadata:
            return
        kind = next(iter(metadata))
        if kind not in KEPT or (kind == "artifact" and metadata[kind].get("name") not in ARTIFACTS):
            return
        payload = getattr(record, "payload", None)
        lines = payload.splitlines() if isinstance(payload, str) else []
        self.records.append((len(self.records) + 1, dict(metadata), lines))


class _Route(logging.Filter):
    """Hands each trace record to the catch and to torch's own handlers (a ``TORCH_TRACE`` file), and to no other.
    pytest (9) attaches its log-capture handlers to every logger that does not propagate, torch's trace logger among
    them; the trace records carry their payload in attributes and no message, so a failing test's "Captured log
    call" listed about a hundred empty ``DEBUG torch.__trace`` lines after the plugin's explanation (review 12,
    F8a)."""

    def __init__(self, catch: _Catch):
        super().__init__()
        self.catch = catch

    def filter(self, record: logging.LogRecord) -> bool:
        for handler in list(logging.getLogger(TRACE_LOGGER).handlers):  # torch's lazy handler may remove itself
            if handler is self.catch or type(handler).__module__.split(".", 1)[0] == "torch":
                handler.handle(record)
        return False


class DynamoWatch:
    """``DynamoWatch().start()`` ... ``.stop()`` returns a :class:`hlodiff.dumps.dynamo_log.DynamoLog` (None when
    torch was never imported: nothing to watch)."""

    def __init__(self):
        self._catch: _Catch | None = None
        self._route: _Route | None = None
        self._level: int | None = None
        self._propagate = True

    def start(self) -> "DynamoWatch":
        if "torch" not in sys.modules:
            return self
        logger = logging.getLogger(TRACE_LOGGER)
        self._catch = _Catch()
        self._level, self._propagate = logger.level, logger.propagate
        logger.setLevel(logging.DEBUG)
        logger.propagate = False  # torch's trace records are not for the test's log capture
        logger.addHandler(self._catch)  # torch writes its records only while the logger has a handler
        self._route = _Route(self._catch)
        logger.addFilter(self._route)  # nor for pytest's handlers on the logger itself
        return self

    def stop(self):
        if self._catch is None:
            return None
        logger = logging.getLogger(TRACE_LOGGER)
        logger.removeHandler(self._catch)
        if self._route is not None:
            logger.removeFilter(self._route)
            self._route = None
        if self._level is not None:
            logger.setLevel(self._level)
            logger.propagate = self._propagate
        from hlodiff.dumps.dynamo_trace import log_of_records

        table = getattr(sys.modules.get("torch._logging.structured"), "INTERN_TABLE", {}) or {}
        names = [(0, {"str": [name, index]}, []) for name, index in table.items()]
        catch, self._catch = self._catch, None
        return log_of_records("<this test>", names + catch.records)
