"""Drop instructions no output depends on, e.g. the unused ``constant(9)`` that FSDP callbacks leave behind.

Parameters stay (they are the calling convention: removing one changes the inputs), and so do instructions with
side effects (XLA keeps them too), together with everything they depend on.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.accel import native
from hlodiff.graph.canonical import (CanonicalModule, PassReport, graph_index, live_nodes, remove_instruction,
                                     side_effect_roots)

def run(cm: CanonicalModule) -> PassReport | None:
    dropped: Counter[str] = Counter()
    for cc in cm.computations.values():
        index = graph_index(cc)
        if index is not None and native.index_live_count(index, [cc.root, *side_effect_roots(cc)]) == len(cc.insts):
            continue  # counted over the index: no set of names made
        live = live_nodes(cc, side_effect_roots(cc))
        if len(live) == len(cc.insts):  # the common case: nothing to drop, no second walk
            continue
        if native is not None:
            dead = native.dead_names(cc.insts, live)
        else:
            dead = [name for name, inst in cc.insts.items() if name not in live and inst.opcode != "parameter"]
        for name in dead:
            dropped[remove_instruction(cc, name).opcode] += 1
    total = sum(dropped.values())
    if not total:
        return None
    kinds = ", ".join(f"{n} {op}" for op, n in sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0])))
    return PassReport("dead_code", f"{total} unused instruction{'s' if total != 1 else ''} ({kinds})", total)

