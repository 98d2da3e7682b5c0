"""A Python int Dynamo guarded that is topk's ``k`` on the guard's line (``torch.topk(logits, top_k)``): it sets
how many values are kept, so XLA compiles a graph per k. Unlike a length (a slice's bound, torch.split's sizes),
padding is no answer for a k: the fix is one fixed k (the largest) with the entries past k masked (Dynamo round 26,
d26_generate_topk: a per-request top_k told "or pad to a few fixed sizes")."""

from __future__ import annotations

import re

from hlodiff.explain.dynamo_guard_lines import _as_written

_TOPK = re.compile(r"\btopk\s*\(")


def topk_k_on_line(name: str | None, code: str | None) -> bool:
    """Whether the line Dynamo quoted for the guard on the int ``name`` passes it as topk's k: the second
    positional argument (``torch.topk(x, k)``), the first of the method (``x.topk(k)``) or ``k=``."""
    if not name or not code:
        return False
    statement = code.split("#", 1)[0]
    word = re.escape(_as_written(name))
    for m in _TOPK.finditer(statement):
        args = statement[m.end():]
        method = m.start() > 0 and statement[m.start() - 1] == "." and not re.search(r"torch\.$", statement[:m.start()])
        positional = rf"^\s*{word}\s*[,)]" if method else rf"^\s*[^,()]+(?:\([^()]*\))?\s*,\s*{word}\s*[,)]"
        if re.search(positional, args) or re.search(rf"\bk\s*=\s*{word}\s*[,)]", args):
            return True
    return False
