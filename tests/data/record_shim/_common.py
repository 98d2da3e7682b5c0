"""Stand-in for ``fixtures/_common.py`` when a fixture script runs under ``hlodiff record`` (tests/test_record_fixtures.py).

The fixture script runs unchanged (same code, same line numbers); only its harness is replaced: it sets no capture
variable of its own (what is tested is hlodiff's capture) and takes no report. The one thing it keeps is the ground
truth some scripts gather from torch_xla itself (``extra["probes"]``): written to ``shim_truth.json`` in the working
directory, for the test to check hlodiff's answers against.
"""

import contextlib
import inspect
import json
import sys
from pathlib import Path

import torch
import torch_xla
import torch_xla.debug.metrics as met


class TorchXlaRun:
    def __init__(self, script_file, steps, *args, **kwargs):
        self.script = Path(script_file).resolve()
        self.script_dir = self.script.parent
        self.out = self.script_dir / "unused"
        self.steps = steps
        self.torch, self.torch_xla, self.met = torch, torch_xla, met
        self.device = torch_xla.device()

    @contextlib.contextmanager
    def graph(self, step, trigger="sync"):
        yield

    def finish(self, **kwargs):
        extra = kwargs.get("extra") or {}
        if "probes" in extra:
            Path("shim_truth.json").write_text(json.dumps(extra, indent=1))


def scrub_file(path, *args, **kwargs):
    return False


def tagged_line(tag, module=None):
    module = module or sys.modules["__main__"]
    lines, start = inspect.getsourcelines(module)
    first = start if start > 0 else 1
    hits = [first + i for i, line in enumerate(lines) if line.rstrip().endswith("# " + tag)]
    return hits[0]
