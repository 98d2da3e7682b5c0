"""The user's line into library code: a cause whose ops carry only a library's frames, placed on the line of the
user's that called into that library.

Two ways in, both read from the user's file on disk. By the library file (:func:`place_library_entries`):

torch_xla's HLO text keeps each instruction's innermost frame: an optimizer's state made on its first step names
``torch/optim/radam.py``, a GRU's zero state ``torch_xla/experimental/gru.py``, an adaptive softmax's per-cluster
slices ``torch/nn/modules/adaptive.py``. Without a live-tensor report or an HLO proto no capture reaches the user's
line ("line unknown"). The user's file, on disk, shows where it entered that library: the one ``opt.step()`` of the
optimizer built from that file's class, the one call of the GRU module. Two or more such calls (a training and an
eval call, ``opt.step()`` and ``xm.optimizer_step(opt)``): which one traced the ops is not read, the line stays
unknown. A file used by many entries (``torch/nn/functional.py``, ``module.py``) has no row: its line, without the
function's name, could be any of them.

By the library function (:func:`place_library_calls`): a torch_xla dump names the innermost frame of each traced op:
for ops traced inside a library function (``torch/nn/functional.py:2206``) no line of the user's is on them, and the story could only say "a call of yours
ran with another argument" with generic examples (round 28, r28_tx_gumbel_hard_switch: ``F.gumbel_softmax(...,
hard=step >= 4)`` was told as "approximate= on GELU, a dropout probability, train() vs eval()", with no line).
The library file, when it is installed where hlodiff runs, names the function that line lies in; the user's source
on disk (the file of the step's sync) names the one line that calls it. Then that line leads and the fix names the
function. Nothing changes when either file is missing, the line lies in a private helper, or the user's file calls
the function from several lines (which one changed is then not known).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.diff.fix_rules import RULES_BY_NAME
from hlodiff.diff.fixes import FixChoice
from hlodiff.dumps.source_lines import SourceLines
from hlodiff.hlo.installed import package_path
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
    reads_sizes: bool = False
    """The library only reads the sizes of what it is given (an optimizer updates the weights it holds): a new shape
    or type of an input it reads came from elsewhere (the model built with other sizes), never from this call. A
    layer that makes tensors of its own (an adaptive softmax's per-cluster indices) can set a size there."""


LIBRARY_ENTRIES: tuple[LibraryEntry, ...] = (
    LibraryEntry("torch/optim/sgd.py", ("SGD",), _STEP, _OPTIMIZER_HELPERS, reads_sizes=True),
    # AdamW runs Adam's functions in torch 2.9 (adam.py frames for an AdamW)
    LibraryEntry("torch/optim/adam.py", ("Adam", "AdamW"), _STEP, _OPTIMIZER_HELPERS, reads_sizes=True),
    LibraryEntry("torch/optim/adamw.py", ("AdamW",), _STEP, _OPTIMIZER_HELPERS, reads_sizes=True),
    LibraryEntry("torch/optim/radam.py", ("RAdam",), _STEP, _OPTIMIZER_HELPERS, reads_sizes=True),
    LibraryEntry("torch/optim/rmsprop.py", ("RMSprop",), _STEP, _OPTIMIZER_HELPERS, reads_sizes=True),
    LibraryEntry("torch/optim/adagrad.py", ("Adagrad",), _STEP, _OPTIMIZER_HELPERS, reads_sizes=True),
    LibraryEntry("torch/optim/swa_utils.py", ("AveragedModel",), ("update_parameters",), reads_sizes=True),
    LibraryEntry("torch/nn/modules/adaptive.py", ("AdaptiveLogSoftmaxWithLoss",), ("", "log_prob", "predict")),
    LibraryEntry("torch_xla/experimental/gru.py", ("GRU",), ("",)),
    LibraryEntry("torch/nn/modules/rnn.py", ("GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"), ("",)),
    LibraryEntry("torch_xla/_patched_functions.py", functions=("clip_grad_norm_",), reads_sizes=True),
    # fourteenth stop (r17_tx_spmd_mesh_reorder): a sharding annotation's custom-call carries xla_sharding.py's
    # frame alone; the user's mark_sharding calls (a few: the batch's, the labels') are where a mesh or spec goes in
    LibraryEntry("torch_xla/distributed/spmd/xla_sharding.py", functions=("mark_sharding",), reads_sizes=True),
)
"""Library files with the one way a user's code enters each (a test per row: tests/test_library_call_lines.py)."""


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
            if entry is None or (entry.reads_sizes and _passed_in(cause)):
                continue
            lines = [SourceFrame(file, line, None) for file in files
                     for line in (sources.library_entry_calls(file, entry.classes, entry.methods, entry.helpers,
                                                              entry.functions) or [])]
            if lines and len(lines) <= MAX_LINES:
                cause.locations = lines
                cause.hint = None


def _passed_in(cause) -> bool:
    """A new shape or type of an input parameter: for a library that only reads sizes, it came in from outside
    (runs_torch_width: the weights' new width read by SGD's update is no `opt.step()` matter)."""
    if cause.kind not in ("shape", "dtype"):
        return False
    named = cause.named or (cause.origins[0] if cause.origins else None)
    side = getattr(named, "right", None) or getattr(named, "left", None)
    return getattr(side, "opcode", None) == "parameter"


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


# by the library function: the user's one call of it
ROWS = frozenset({"ops_library_setting"})
"""Rows whose story is a library call of the user's made with another setting, told without a line of theirs: once
the call is found, the fix names it (:data:`CALL_ROW`)."""
PLACE_ONLY_ROWS = frozenset({"ops_switched_on"})
"""Rows whose words already tell the story (a setting switched on from step N, at a line the capture does not name)
and stay; the call found only leads the locations (label_smoothing_on: F.cross_entropy's smoothing ops)."""
CALL_ROW = "ops_library_setting_call"
"""The row that replaces them once the call's line is known."""


def place_library_calls(recompilations, sources) -> None:
    """For each recompilation whose root is one of :data:`ROWS` and carries no user line: the line of the user's
    that calls the library function its ops were traced in, first, with the fix that names it."""
    for r in recompilations:
        if not r.causes:
            continue
        cause = r.causes[0]
        if cause.fix_rule not in ROWS | PLACE_ONLY_ROWS or any(not f.is_library and f.line is not None
                                                               for f in cause.locations):
            continue
        found = _user_call(cause, getattr(r.graph, "trigger", None), sources)
        if found is None:
            continue
        line, function, where = found
        cause.locations = [line, *cause.locations]
        cause.hint = None
        if cause.fix_rule in PLACE_ONLY_ROWS:
            continue
        rule = RULES_BY_NAME[CALL_ROW]
        cause.fix = FixChoice(rule, {"function": function, "library_call": where, "line": str(line.line)}).text
        cause.fix_rule = rule.name


def _user_call(cause, sync, sources) -> tuple[SourceFrame, str, str] | None:
    lib = cause.library_locations[0] if cause.library_locations else None
    if lib is None or lib.line is None or sync is None or sync.line is None or sync.is_library:
        return None
    function = sources.library_function(lib.file, lib.line)
    if function is None or function.startswith("_"):
        return None
    lines = sources.calls_named(sync.file, (function,))
    if len(lines) != 1:
        return None
    return SourceFrame(sync.file, lines[0], None), function, f"{package_path(lib.file)}:{lib.line}"
