"""The run two ``compare`` refs share, read once so ``compare`` can find the user's lines as explain-recompile does.

``compare RUN#3 RUN#4`` names two graphs of one run folder; when that folder holds live-tensor reports (a ``hlodiff
record`` folder, a by-hand run folder), the reports carry the user's frames the dumps lack (review 19, F7). Reading
the folder belongs here, below the analysis, which opens no file.
"""

from __future__ import annotations

from hlodiff.dumps import split_ref
from hlodiff.dumps.evidence import Run, read_run
from hlodiff.dumps.run_folder import discover
from hlodiff.errors import HlodiffError, InputWarning


def shared_run(left_ref: str, right_ref: str, warnings: list[InputWarning]) -> Run | None:
    """The run both refs pick graphs of (``PATH#N`` and ``PATH#M`` of one path), when its folder holds live-tensor
    reports; else None (two files, two runs, or nothing more to read). A folder that cannot be read is None too: the
    comparison itself stands without it."""
    (path, i), (other, j) = split_ref(left_ref), split_ref(right_ref)
    if path != other or i is None or j is None:
        return None
    try:
        inputs = discover([path], None, None)
        if not inputs.tensors_reports:
            return None
        return read_run(inputs, warnings)
    except HlodiffError:
        return None
