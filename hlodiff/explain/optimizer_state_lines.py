"""The line of optimizer state begun late, read from the graph that reads it back.

SGD's momentum raised from 0.0 after the first steps (round 11, r11_tx_momentum_warmup): the step that makes the
momentum buffers returns them as outputs that are values the step already computed (a gradient's clone), so the
cause has no instruction, and no frame, of its own ("line unknown"); the next graph reads them back inside
torch.optim, whose frames are placed at the user's ``opt.step()`` (:mod:`hlodiff.explain.library_call_lines`).
The state begun is the same optimizer's: the begun cause takes the line of the reading one.
"""

from __future__ import annotations

BEGUN_READ = {"outputs_optimizer_state_late": "inputs_optimizer_state_late"}
"""Row of the state begun -> row of the state read back one graph later (a test per row:
tests/test_leftovers13.py)."""


def place_state_begun(recompilations) -> None:
    """A cause of a ``BEGUN_READ`` row with no line takes the lines of the family's next recompilation's cause of
    the matching row, when that one has a user line."""
    for i, r in enumerate(recompilations):
        for cause in r.causes:
            want = BEGUN_READ.get(cause.fix_rule or "")
            if want is None or cause.locations:
                continue
            later = next((x for x in recompilations[i + 1:] if x.family is r.family), None)
            reader = next((c for c in (later.causes if later else ()) if c.fix_rule == want and c.locations
                           and not any(f.is_library for f in c.locations)), None)
            if reader is not None:
                cause.locations = list(reader.locations)
                cause.hint = None
