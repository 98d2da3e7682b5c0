"""Drop instructions no output depends on, e.g. the unused ``constant(9)`` that FSDP callbacks leave behind.

Parameters stay (they are the calling convention: removing one changes the inputs), and so do instructions with
side effects, which XLA keeps as well.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.graph.canonical import CanonicalModule, PassReport, live_nodes

SIDE_EFFECTS = frozenset({"outfeed", "infeed", "send", "send-done", "recv", "recv-done",
                          "rng-get-and-update-state", "after-all"})


def run(cm: CanonicalModule) -> PassReport | None:
    dropped: Counter[str] = Counter()
    for cc in cm.computations.values():
        live = live_nodes(cc)
        for name, inst in list(cc.insts.items()):
            if name in live or inst.opcode == "parameter" or _has_side_effect(inst):
                continue
            cc.removed[name] = cc.insts.pop(name)
            del cc.operands[name]
            dropped[inst.opcode] += 1
    total = sum(dropped.values())
    if not total:
        return None
    kinds = ", ".join(f"{n} {op}" for op, n in sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0])))
    return PassReport("dead_code", f"{total} unused instruction{'s' if total != 1 else ''} ({kinds})", total)


def _has_side_effect(inst) -> bool:
    return inst.opcode in SIDE_EFFECTS or inst.attrs.get("custom_call_has_side_effect") == "true"
