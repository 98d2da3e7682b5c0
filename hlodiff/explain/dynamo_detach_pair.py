"""An input that requires grad on some calls of a compiled module by design (Dynamo round 32,
d32_gan_d_calls_control): a GAN's compiled discriminator gets ``fake.detach()`` for its own update and ``fake`` for
the generator's. Dynamo's guard on the input's requires_grad fails once and both graphs are kept; the general row
(one setting on every call) would have the user cut the generator's gradient. When the user's file calls the same
callable with ``X`` and with ``X.detach()``, the recompilation gets the fact ``detached_pair`` and its own row: one
graph per setting, expected."""

from __future__ import annotations

import re

from hlodiff.dumps.evidence import SourceLines
from hlodiff.explain.dynamo_recompile_fixes import choose_fix

_POSITION = re.compile(r"args'?\]?\[(\d+)\]")
"""The argument position a guard names: ``args[0]``, ``L['args'][0]``."""
_NAMED = re.compile(r"^`([A-Za-z_][\w.]*)`$")


def mark_detached_pairs(found, sources: SourceLines) -> None:
    """Give each requires_grad recompilation of an input (not a parameter) whose line (its own, or its guard's)
    calls the compiled callable (the one Dynamo names, when it names one) that is called elsewhere with the same tensor
    detached, at the argument position the guard names, the fact ``detached_pair`` (stop 51: not any callable on
    the line, not a tensor the file makes require grad)."""
    for r in getattr(found, "recompiles", []):
        if "requires_grad" not in r.facts or "parameter_requires_grad" in r.facts or "limit_hit" in r.facts:
            continue
        frames = [f for f in (r.location, r.guard_at) if f is not None and f.file and not f.is_library]
        named = _NAMED.match(r.function or "")
        at = _POSITION.search(r.guard.guard)
        callee, position = named.group(1) if named else None, int(at.group(1)) if at else None
        if any(sources.called_detached_and_not(f.file, f.line, callee, position) for f in frames):
            r.facts = r.facts | {"detached_pair"}
            choose_fix(r)
