"""A recompile the stance refused: under ``torch.compiler.set_stance("fail_on_recompile")`` Dynamo raises at the
first call whose guards fail, before it logs which guard failed, and the program stops there (Dynamo round 20,
d20_fail_on_recompile: a last batch of 6 rows after batches of 8). Told as an unexpected recompilation at the
user's call, with what was seen (the stance, the call) and what to check, never a guessed guard: the capture holds
none (the stance raises before ``[__recompiles]`` is written)."""

from __future__ import annotations

from hlodiff.dumps.dynamo_log import DynamoLog, GuardFailure
from hlodiff.explain.dynamo_types import DynamoRecompile
from hlodiff.explain.dynamo_recompile_fixes import choose_fix


def stance_recompiles(log: DynamoLog) -> list[DynamoRecompile]:
    """One finding per refused recompile, at the traceback's call of the compiled code (kind ``guard``, fact
    ``stance_raised``); its compile id is ``raised``: Dynamo numbered no compile for it."""
    found = []
    for s in log.stance_raises:
        wrapper = (s.definition or "").replace("\\", "/")
        function = ("the module or method you passed to torch.compile" if "/torch/_dynamo/" in wrapper
                    else s.function)
        guard = GuardFailure(None, f"not logged: set_stance(\"{s.stance}\") raised before Dynamo printed the "
                                   "guard that failed")
        r = DynamoRecompile("raised", function, "guard", guard, s.call, None,
                            facts=frozenset({"dynamo", "stance_raised"}), seen=s.stance,
                            located="call" if s.call is not None else None)
        r.xla = "stopped"
        choose_fix(r)
        found.append(r)
    return found
