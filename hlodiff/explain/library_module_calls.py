"""Between two runs, the user's line of a library call made with another setting, found through the module that
wraps the function (compare-runs round 12's WRONG_NOW row, runs12_torch_label_smoothing).

torch_xla's HLO text keeps each instruction's innermost frame: a loss's label-smoothing ops name only
``torch/nn/functional.py:3458`` (``cross_entropy``). explain-recompile finds the user's one call of that function
on disk (:func:`hlodiff.explain.library_call_lines.place_library_calls`), but users as often call it through its
module (``crit = nn.CrossEntropyLoss(label_smoothing=s)``, then ``crit(logits, y)``), which a search for the
function's name does not see. :data:`FUNCTION_MODULES` says which module classes call each function in their
``forward``; the user's file (of the graph's sync) then shows the one line calling such an instance or the
function itself. That line leads the cause; nothing changes when a file is missing, the function is not in the
table, or the file calls it from several lines (which one changed is then not known).
"""

from __future__ import annotations

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.run_verdicts import Verdict
from hlodiff.hlo.model import SourceFrame

FUNCTION_MODULES: dict[str, tuple[str, ...]] = {
    "cross_entropy": ("CrossEntropyLoss",),
    "nll_loss": ("NLLLoss",),
    "mse_loss": ("MSELoss",),
    "l1_loss": ("L1Loss",),
    "smooth_l1_loss": ("SmoothL1Loss",),
    "huber_loss": ("HuberLoss",),
    "kl_div": ("KLDivLoss",),
    "binary_cross_entropy_with_logits": ("BCEWithLogitsLoss",),
    "gelu": ("GELU",),
    "leaky_relu": ("LeakyReLU",),
    "dropout": ("Dropout",),
    "layer_norm": ("LayerNorm",),
    "group_norm": ("GroupNorm",),
    "softmax": ("Softmax",),
    "log_softmax": ("LogSoftmax",),
}
"""``torch.nn.functional`` function -> the ``torch.nn`` module classes whose ``forward`` calls it (a test per row
reads each class's ``forward`` in the installed torch: tests/test_compare_runs_round13.py)."""

ROWS = frozenset({"ops_library_setting"})
"""Fix rows of the graph diff whose story is a library call given another setting, told without a line of the
user's (compare-runs words them as ``library_setting_across_runs``)."""


def place_library_module_calls(verdicts: list[Verdict], sources: SourceLines) -> None:
    """For each program of B with other ops traced in a library function of :data:`FUNCTION_MODULES` and no user
    line: the one line of the sync's file that calls the function or an instance of its module leads the cause."""
    for v in verdicts:
        cause = v.cause
        if v.verdict != "miss_hlo_differs" or cause is None or cause.fix_rule not in ROWS:
            continue
        if any(not f.is_library and f.line is not None for f in cause.locations):
            continue
        line = _user_line(cause, v.called_at, sources)
        if line is not None:
            cause.locations = [line, *cause.locations]
            cause.hint = None


def _user_line(cause, sync: SourceFrame | None, sources: SourceLines) -> SourceFrame | None:
    lib = cause.library_locations[0] if cause.library_locations else None
    if lib is None or lib.line is None or sync is None or sync.line is None or sync.is_library or not sync.file:
        return None
    function = sources.library_function(lib.file, lib.line)
    if function not in FUNCTION_MODULES:
        return None
    lines = sources.library_entry_calls(sync.file, FUNCTION_MODULES[function], ("",), (), (function,))
    return SourceFrame(sync.file, lines[0], None) if lines and len(lines) == 1 else None
