"""The line of a process-wide setting that cuts the step where no capture locates the cut.

Autograd's anomaly mode checks every backward node's outputs for NaN on the host (Dynamo round 30,
d30_anomaly_debug_steps; torch_xla round 17, r17_tx_detect_anomaly): each check executes the graph early, inside
``loss.backward()``, with no frame torch_xla logs and HLO metadata naming only torch's own files, so the story
was "line unknown" though the fix was right. The user's line that matters is the setting itself
(``torch.autograd.set_detect_anomaly(...)``, a ``detect_anomaly()`` block), and their source, when on disk, holds
it: the files of the run's own syncs are searched for those calls, and every one found leads (set on, set off:
each is where the setting is decided). Without the source, nothing changes.
"""

from __future__ import annotations

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.hlo.model import SourceFrame

SETTING_CALLS: dict[str, tuple[str, ...]] = {
    # fix row of the cut -> the calls that decide the setting
    "partial_anomaly_check": ("set_detect_anomaly", "detect_anomaly"),
}


def place_setting_lines(recompilations, sources: SourceLines) -> None:
    """Lead each recompilation whose root is a :data:`SETTING_CALLS` row and names no user line with the
    setting's lines in the user's files (the files of the run's syncs)."""
    files = list(dict.fromkeys(r.graph.trigger.file for r in recompilations
                               if getattr(r.graph, "trigger", None) is not None and not r.graph.trigger.is_library
                               and r.graph.trigger.file))
    for r in recompilations:
        if not r.causes:
            continue
        root = r.causes[0]
        names = SETTING_CALLS.get(root.fix_rule or "")
        if names is None or any(not f.is_library and f.line is not None for f in root.locations):
            continue
        found = next(([SourceFrame(file, line, None) for line in lines] for file in files
                      if (lines := sources.calls_named(file, names))), None)
        if found:
            root.locations = [*found, *root.locations]
            root.hint = None
