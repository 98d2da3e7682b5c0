"""A compiled model's submodule that changed class because a parametrization was registered on it (Dynamo round
20, d20_weight_norm_late): ``weight_norm(net[2])`` after a first compiled call swaps the head's class for a generated
``ParametrizedLinear``, and Dynamo's guard ``___check_type_id(fn._modules['2'], ...)`` fails once. The guard alone
reads as "an object of another class on some calls" (a head per task); the user's file on disk says which call
changed it. When one of the run's user files calls a parametrization, the recompilation gets the fact
``parametrized``, its own row (``dynamo_parametrized``) and that call's line (``located`` ``decision``)."""

from __future__ import annotations

import re

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.dynamo_recompile_fixes import choose_fix
from hlodiff.hlo.model import SourceFrame

PARAMETRIZATIONS = ("weight_norm", "spectral_norm", "orthogonal", "register_parametrization")
"""The calls that register a parametrization (torch.nn.utils.parametrizations and parametrize)."""
_SUBMODULE = re.compile(r"\._modules\[['\"]([^'\"]+)['\"]\]$")
"""A submodule of the compiled module (``fn._modules['2']``, ``L['self']._modules['head']``): not an argument."""


def mark_parametrized(found, sources: SourceLines, user_files: list[str]) -> None:
    """Give each class-change recompilation of a submodule the fact ``parametrized`` and the line of the call
    when exactly one line of the run's user files (the recompilation's own file first) registers one."""
    for r in getattr(found, "recompiles", []):
        submodule = _SUBMODULE.search(r.subject or "") if "object_type" in r.facts else None
        if submodule is None:
            continue
        mine = r.location if r.location is not None and not r.location.is_library and r.location.file else None
        files = [mine.file] if mine is not None else user_files
        # the call on the guarded submodule itself (``weight_norm(net[2])`` for ``_modules['2']``): one registered
        # on another layer before the compile is no reason for this guard (the tenth stop's last read)
        lines = [(file, line) for file in files
                 for line in sources.calls_on_submodule(file, PARAMETRIZATIONS, submodule.group(1))]
        if len(lines) != 1:
            continue
        file, line = lines[0]
        r.facts = r.facts | {"parametrized"}
        r.seen = f"{r.seen}; a parametrization is registered at {SourceFrame(file, line, None).short()}"
        choose_fix(r)
        r.location, r.located = SourceFrame(file, line, None), "decision"
