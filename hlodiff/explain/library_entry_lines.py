"""A cause whose only frames are one library's file, placed at the user's one call into that library.

torch_xla's HLO text keeps each instruction's innermost frame: an optimizer's state made on its first step names
``torch/optim/radam.py``, a GRU's zero state ``torch_xla/experimental/gru.py``, an adaptive softmax's per-cluster
slices ``torch/nn/modules/adaptive.py``. Without a live-tensor report or an HLO proto no capture reaches the user's
line ("line unknown"). The user's file, on disk, shows where it entered that library: the one ``opt.step()`` of the
optimizer built from that file's class, the one call of the GRU module. Two or more such calls (a training and an
eval call, ``opt.step()`` and ``xm.optimizer_step(opt)``): which one traced the ops is not read, the line stays
unknown. A file used by many entries (``torch/nn/functional.py``, ``module.py``) has no row: its line, without the
function's name, could be any of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.hlo.model import SourceFrame

_STEP = ("step",)
_OPTIMIZER_HELPERS = ("optimizer_step",)  # xm.optimizer_step(opt)


@dataclass(frozen=True)
class LibraryEntry:
    """How a user's file enters the library code of ``file``: an instance of one of ``classes`` called (``""`` in
    ``methods``) or one of its ``methods`` called, the instance passed to one of ``helpers``, or one of
    ``functions`` called by name."""

    file: str
    classes: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    helpers: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()


LIBRARY_ENTRIES: tuple[LibraryEntry, ...] = (
    LibraryEntry("torch/optim/sgd.py", ("SGD",), _STEP, _OPTIMIZER_HELPERS),
    # AdamW runs Adam's functions in torch 2.9 (adam.py frames for an AdamW)
    LibraryEntry("torch/optim/adam.py", ("Adam", "AdamW"), _STEP, _OPTIMIZER_HELPERS),
    LibraryEntry("torch/optim/adamw.py", ("AdamW",), _STEP, _OPTIMIZER_HELPERS),
    LibraryEntry("torch/optim/radam.py", ("RAdam",), _STEP, _OPTIMIZER_HELPERS),
    LibraryEntry("torch/optim/rmsprop.py", ("RMSprop",), _STEP, _OPTIMIZER_HELPERS),
    LibraryEntry("torch/optim/adagrad.py", ("Adagrad",), _STEP, _OPTIMIZER_HELPERS),
    LibraryEntry("torch/optim/swa_utils.py", ("AveragedModel",), ("update_parameters",)),
    LibraryEntry("torch/nn/modules/adaptive.py", ("AdaptiveLogSoftmaxWithLoss",), ("", "log_prob", "predict")),
    LibraryEntry("torch_xla/experimental/gru.py", ("GRU",), ("",)),
    LibraryEntry("torch/nn/modules/rnn.py", ("GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"), ("",)),
    LibraryEntry("torch_xla/_patched_functions.py", functions=("clip_grad_norm_",)),
)
"""Library files with the one way a user's code enters each (a test per row: tests/test_library_entry_lines.py)."""


GENERIC_FILES = ("torch/nn/modules/module.py", "torch/nn/modules/linear.py", "torch/nn/functional.py",
                 "torch/_tensor.py", "torch/functional.py")
"""Files every library calls into (a module's ``__call__``, ``F.linear``, a tensor operator): their frames beside a
row's file are that library's own calls; alone, they name no entry."""

MAX_LINES = 3
"""More calls than this into one library: no line is told (the call that traced the ops is not read)."""


def entry_of(frame: SourceFrame) -> LibraryEntry | None:
    path = frame.file.replace("\\", "/")
    return next((e for e in LIBRARY_ENTRIES if path.endswith("/" + e.file)), None)


def _generic(frame: SourceFrame) -> bool:
    path = frame.file.replace("\\", "/")
    return any(path.endswith("/" + g) for g in GENERIC_FILES)


def place_library_entries(recompilations, sources: SourceLines) -> None:
    """For each cause with no user line whose library frames are one row's file (beside generic ones), the lines of
    the user's files (those the graph's execution names: its sync's) that enter that library become its location:
    one call, or a few, each listed. A cause with no frame at all takes its recompilation's row when no cause there
    has a user line and every library frame is that row's (an adaptive softmax's new label count: a parameter)."""
    for r in recompilations:
        files = _user_files(r.graph)
        if not files:
            continue
        whole = None if any(c.locations for c in r.causes) else _one_entry(r.causes)
        for cause in r.causes:
            if cause.locations:
                continue
            entry = _one_entry([cause]) if cause.library_locations else whole
            if entry is None:
                continue
            lines = [SourceFrame(file, line, None) for file in files
                     for line in (sources.library_entry_calls(file, entry.classes, entry.methods, entry.helpers,
                                                              entry.functions) or [])]
            if lines and len(lines) <= MAX_LINES:
                cause.locations = lines
                cause.hint = None


def _one_entry(causes) -> LibraryEntry | None:
    """The one row whose file the causes' library frames name (generic files aside); None when a frame is of no
    row or of another."""
    frames = [f for c in causes for f in c.library_locations if not _generic(f)]
    entries = {entry_of(f) for f in frames}
    return entries.pop() if len(entries) == 1 and None not in entries else None


def _user_files(graph) -> list[str]:
    """The user's files the graph's execution names (its sync's stack), else those its instructions name (an XLA
    dump without torch_xla's debug log)."""
    files: dict[str, None] = {}
    for f in [graph.trigger, *(graph.record.frames or ())]:
        if f is not None and not f.is_library and f.file:
            files.setdefault(f.file)
    return list(files) or instruction_files([graph])


def instruction_files(graphs) -> list[str]:
    """The user's files the instructions of ``graphs`` (those parsed and kept) name, in order."""
    files: dict[str, None] = {}
    for g in graphs:
        cm = g._canonical
        if cm is None:
            continue
        for _, inst in cm.module.instructions():
            for f in cm.frames(inst):
                if not f.is_library and f.file:
                    files.setdefault(f.file)
    return list(files)
