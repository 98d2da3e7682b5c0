"""Reading a save-tensors file whole (plain or gzip) with :class:`hlodiff.dumps.save_tensors_scanner.SaveTensorsScanner`:
the progress bar over its bytes, and damage after whole graphs told as a warning with the graphs before it kept. The
format and the scan are described in :mod:`hlodiff.dumps.save_tensors_scanner`."""

from __future__ import annotations

import os
from typing import Iterator

from hlodiff import progress
from hlodiff.dumps._io import is_gzip, lines, open_binary
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.save_tensors_scanner import SaveTensorsScanner
from hlodiff.errors import HlodiffError, InputWarning


def scan_save_tensors(path: str, source: str | None = None,
                      warnings: list[InputWarning] | None = None) -> Iterator[GraphRecord]:
    """Yield the graphs of a save-tensors file in file order; ``index`` is the entry's position in the file, so
    an entry skipped with a warning leaves a gap rather than renumbering the ones after it."""
    gz = is_gzip(path)
    total = None if gz else os.path.getsize(path)
    with open_binary(path) as f, progress.task(f"reading {os.path.basename(path)}", total, "bytes") as bar:
        it = lines(f, path, warnings, skip_long=True)
        scanner = SaveTensorsScanner(path, source or path, gz, warnings)
        read = 0
        try:
            for record in scanner.run(progress.counted_lines(it, bar) if bar.active else it):
                read += 1
                yield record
        except HlodiffError as err:  # damage (a line past its limit, a header that never ends) after whole graphs
            scanner.flush_pending()  # the last whole graph before it
            if warnings is None or not (read or scanner.ready):
                raise  # nothing read before: the damage is the whole story
            yield from scanner.ready
            warnings.append(InputWarning(f"{err.message}; the rest of this file is skipped (the graphs before "
                                         "this line are read)", err.path or path, err.line))
