"""A Dynamo log read whichever of the two a user captured: ``TORCH_LOGS`` text (:mod:`hlodiff.dumps.dynamo_log`) or a
``TORCH_TRACE`` structured log (:mod:`hlodiff.dumps.dynamo_trace`), told apart by their first lines, or a
``TORCH_TRACE`` folder of them (one per process). Its own module because it needs both readers, and the trace
reader is built on the text reader's helpers.
"""

from __future__ import annotations

import itertools
import os

from hlodiff.dumps._io import text_lines
from hlodiff.dumps.dynamo_log import LOG_PREFIX, DynamoLog, read_text_log
from hlodiff.dumps.dynamo_trace import read_trace, trace_files
from hlodiff.errors import InputWarning


def read_dynamo_log(path: str, warnings: list[InputWarning] | None = None) -> DynamoLog:
    """Read a TORCH_LOGS text log or a TORCH_TRACE structured log (decided by content), or a TORCH_TRACE folder."""
    if os.path.isdir(path):
        files = trace_files(path)
        log = DynamoLog(path, "trace")
        for f in files:
            part = read_dynamo_log(f, warnings)
            log.compiles += part.compiles
            log.graph_breaks += part.graph_breaks
            log.limit_hits += part.limit_hits
            log.restarts += part.restarts
            log.stance_raises += part.stance_raises
        return log
    if os.path.isfile(path) and os.path.getsize(path) == 0:  # TORCH_LOGS set, Dynamo had nothing to say
        return DynamoLog(path, "text")
    stream = text_lines(path, warnings)  # streamed: a TORCH_TRACE log of a real model is mostly FX graphs
    head = list(itertools.islice(stream, 50))
    structured = any(LOG_PREFIX.match(t) and t[LOG_PREFIX.match(t).end():].startswith("{") for t in head)
    lines = itertools.chain(head, stream)
    log = read_trace(path, lines, warnings) if structured else read_text_log(path, lines, warnings)
    if not log.compiles and not log.graph_breaks and not log.limit_hits and not log.stance_raises \
            and warnings is not None:
        warnings.append(InputWarning("no Dynamo recompilation or graph break here (not a TORCH_LOGS=recompiles,"
                                     "graph_breaks or TORCH_TRACE log?); ignored", path, 1))
    return log
