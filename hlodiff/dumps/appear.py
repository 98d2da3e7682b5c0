"""Waiting for a capture that does not exist yet: ``hlodiff watch /shared/job42/dump`` started before the job.

The README's example starts ``watch`` on a cluster job's dump folder, and ``--until-idle`` is counted from the first
thing written because "a job may take a while to start"; a folder the job has not created yet is that same wait
(review 6: ``watch runs/p04c/dump`` started first failed at once with "no such file or folder"). The path is only
looked at, never created; the caller decides how long to wait (Ctrl-C, or its own ``stop``).
"""

from __future__ import annotations

import os
import time
from typing import Callable


def wait_until_exists(path: str, *, interval: float, stop: Callable[[], bool] | None = None,
                      sleep: Callable[[float], None] = time.sleep) -> bool:
    """Poll every ``interval`` seconds until ``path`` exists: True then, False when ``stop()`` said to stop first."""
    while not os.path.exists(path):
        if stop is not None and stop():
            return False
        sleep(interval)
    return True
