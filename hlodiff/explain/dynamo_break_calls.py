"""What a graph break's traceback tells beyond the line Dynamo names: the user's own line that entered the library
code where Dynamo broke, and what that line ran there, from three tables: library functions whose frame in the
traceback says what was called (torch_xla's sync run inside the compiled function), the user's line as Dynamo
quotes it (the same sync, before its frames show), value kinds Dynamo's developer context names as
untraceable (a ``torch.Generator`` handed to a random op), and torch functions Dynamo marks as skipped
(``torch.manual_seed``), and library lines that break only for a setting the user chose (BatchNorm's
``momentum=None``). A break in library code the user only reached (torch's
optimizer breaking on purpose) stays the library's; these facts are what make it the user's line to change. Typed
facts for the fix table; the words live in diff/fix_rules.py."""

from __future__ import annotations

import re

from hlodiff.dumps.dynamo_log import GraphBreak
from hlodiff.hlo.model import SourceFrame

LIBRARY_CALLS: tuple[tuple[str, str, str], ...] = (
    # (path tail of the library file, function, fact) -- a frame of this function in the break's traceback
    # round 21 (d21_mark_step_inside): xm.mark_step() is a deprecated wrapper (warnings.warn, then torch_xla.sync)
    ("torch_xla/core/xla_model.py", "mark_step", "op:xla_sync"),
    ("torch_xla/torch_xla.py", "sync", "op:xla_sync"),
)

USER_CALLS: tuple[tuple[re.Pattern, str], ...] = (
    # (the user's line that entered the library, as Dynamo quotes it; fact) -- for the first break of a call whose
    # library frames do not yet show it: mark_step's deprecation warning breaks before its sync (read live, the
    # warning's break comes alone)
    (re.compile(r"(?:^|[^\w.])(?:xm\.)?mark_step\s*\("), "op:xla_sync"),
    (re.compile(r"\btorch_xla\.sync\s*\("), "op:xla_sync"),
)

LOG_CALLS: tuple[tuple[re.Pattern, str], ...] = (
    # (the user's innermost line as Dynamo quotes it; fact) -- whether or not it handed over to library code
    # review 18 F3 (c3_log_break.py): `log.info("...", h.norm().item())` left in forward: the `.item()` breaks at
    # that line, then Python's logging breaks inside logging/__init__.py, entered from it
    (re.compile(r"\b(?:logging|log|logger|_logger|LOGGER|LOG)\.(?:debug|info|warning|warn|error|critical|exception"
                r"|log)\s*\("), "op:log_call"),
)

CONTEXT_VALUES: tuple[tuple[str, str], ...] = (
    # (a value Dynamo's developer debug context names, fact)
    # round 21 (d21_generator_noise): torch.randn(..., generator=g): "Failed to convert args/kwargs to proxy"
    ("UserDefinedObjectVariable(Generator)", "arg:generator"),
)

SKIPPED_CALLS: tuple[tuple[frozenset[str], str], ...] = (
    # (torch functions Dynamo marks as skipped, as its explanation names them: "marked that the function
    # `manual_seed` in file .../torch/_compile.py should not be traced"; fact)
    # round 24 (d24_seed_in_forward): the RNG seeded inside the compiled forward, a break every call
    (frozenset({"manual_seed", "seed", "set_rng_state"}), "op:rng_seed"),
)
_SKIPPED_IN = re.compile(r"marked that the function `(?P<name>\w+)` in file `(?P<file>[^`]+)`")

SKIPPED_LIBRARY_CALLS: tuple[tuple[str, frozenset[str], str], ...] = (
    # (path tail of the file Dynamo names, skipped functions there, fact) -- a name too common to go by alone
    # round 30 (d30_saliency_autograd_grad): torch.autograd.grad inside the compiled function ("marked that the
    # function `grad` in file .../torch/autograd/__init__.py"), a saliency map or a gradient penalty
    ("torch/autograd/__init__.py", frozenset({"grad"}), "op:autograd_inside"),
)

REASONS: tuple[tuple[str, str], ...] = (
    # (Dynamo's break reason, fact)
    # round 30 (d30_saliency_autograd_grad): `x.requires_grad_(True)` on a tensor inside the compiled function, the
    # first step of taking an input gradient there -- alone it is only the call that breaks (transformers'
    # enable_input_require_grads hook: `output.requires_grad_(True)` on the embedding output, the backward outside):
    # a gradient taken is told only when the same function also breaks at torch.autograd.grad (grad_taken_in)
    ("Unsupported Tensor.requires_grad_() call", "op:requires_grad_inside"),
)
_SKIPPED = re.compile(r"marked that the function `(?P<name>\w+)`")

LIBRARY_LINES: tuple[tuple[str, re.Pattern, str], ...] = (
    # (path tail of the library file, the statement Dynamo quotes at that frame, fact) -- a library line that
    # breaks only because of how the user built the module: the user's setting is what to change
    # Dynamo round 28 (d28_bn_momentum_none): BatchNorm(momentum=None) keeps a cumulative average, its training
    # forward reads `float(self.num_batches_tracked)` (pytorch#194504): a `.item()` break in torch's batchnorm.py
    ("torch/nn/modules/batchnorm.py", re.compile(r"\bfloat\(\s*self\.num_batches_tracked\s*\)"), "op:bn_cumulative"),
)


def user_entry(brk: GraphBreak) -> SourceFrame | None:
    """The innermost user frame of the break's traceback: the user's line that called into the code where Dynamo
    broke (None without a traceback: a duplicate Dynamo reported without its stack)."""
    users = [f for f in brk.frames if not f.is_library]
    return users[-1] if users else None


def break_call_facts(brk: GraphBreak) -> frozenset[str]:
    """The facts the tables find in one break's traceback, its quoted user line and developer context."""
    found = set()
    for frame in brk.frames:
        path = frame.file.replace("\\", "/")
        found.update(fact for tail, fn, fact in LIBRARY_CALLS
                     if frame.is_library and path.endswith(tail) and frame.function == fn)
    for frame, code in zip(brk.frames, brk.codes):
        path = frame.file.replace("\\", "/")
        found.update(fact for tail, pattern, fact in LIBRARY_LINES
                     if frame.is_library and code and path.endswith(tail) and pattern.search(code))
    users = [i for i, f in enumerate(brk.frames) if not f.is_library]
    entry_code = brk.codes[users[-1]] if users and users[-1] < len(brk.codes) else None
    if entry_code and users[-1] < len(brk.frames) - 1:  # the user's line handed over to library code
        code = entry_code.split("#", 1)[0]  # the statement, not its comment
        found.update(fact for pattern, fact in USER_CALLS if pattern.search(code))
    if entry_code:
        code = entry_code.split("#", 1)[0]
        found.update(fact for pattern, fact in LOG_CALLS if pattern.search(code))
    context = brk.context or ""
    found.update(fact for mark, fact in CONTEXT_VALUES if mark in context)
    if (m := _SKIPPED.search(brk.explanation or "")) is not None:
        found.update(fact for names, fact in SKIPPED_CALLS if m.group("name") in names)
    if (m := _SKIPPED_IN.search(brk.explanation or "")) is not None:
        path = m.group("file").replace("\\", "/")
        found.update(fact for tail, names, fact in SKIPPED_LIBRARY_CALLS
                     if path.endswith(tail) and m.group("name") in names)
    found.update(fact for reason, fact in REASONS if reason in (brk.reason or ""))
    return frozenset(found)


def grad_taken_in(breaks: list[GraphBreak]) -> frozenset[tuple[str, str | None]]:
    """(file, function) of each function Dynamo broke in at torch.autograd.grad: where a ``requires_grad_()``
    break in the same function is the first step of a gradient taken inside the compiled code."""
    return frozenset((b.at.file, b.at.function) for b in breaks
                     if b.at is not None and "op:autograd_inside" in break_call_facts(b))


def entered_lines(breaks: list[GraphBreak]) -> dict[tuple, SourceFrame]:
    """The user line each library break was entered from, for breaks whose user line a table recognises (a sync
    inside the compiled function): every break entered from that line -- the deprecation warning the wrapper
    raises first, the sync after it, and Dynamo's repeats of either without a stack -- is one finding there.
    Keyed by the break's own ``(file, line)``."""
    marked = {(e.file, e.line): e for b in breaks
              if {"op:xla_sync", "op:log_call"} & break_call_facts(b) and (e := user_entry(b)) is not None}
    found = {}
    for b in breaks:
        e = user_entry(b)
        if b.at is not None and b.at.is_library and e is not None and (e.file, e.line) in marked:
            found[(b.at.file, b.at.line)] = e
    return found
