"""A module's number guarded by Dynamo that is fixed per instance, not changed over the run (round 19).

``self.layer_idx`` read in the forward of six blocks of one class: Dynamo compiles that forward once per layer, one
value each, all in the first step; the fix row for a number that "changes from call to call" (a buffer updated in
place) reads as if something in the loop changed it. When the user's file on disk assigns the attribute only in
``__init__`` (:func:`hlodiff.dumps.init_attributes.set_only_in_init`), the recompilation gets the fact
``per_instance`` and its own row (:mod:`hlodiff.diff.fix_rules`, ``dynamo_module_instance_number``): don't branch on
it inside the compiled forward, compile the model once, or keep the per-layer choice in a tensor.
"""

from __future__ import annotations

import re

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.dynamo_recompile_fixes import choose_fix

_ATTRIBUTE = re.compile(r"\.(?P<name>[A-Za-z_]\w*)$")


def mark_per_instance(found, sources: SourceLines, user_files: list[str] = ()) -> None:
    """Give each Dynamo recompilation of a module's number set only in ``__init__`` the fact ``per_instance`` and
    choose its fix again. The files read are the user's own: the one the recompilation's line is in (the guard's or
    the call's: the class is the user's), the other user files the capture names (``user_files``: the XLA graphs'
    frames outside libraries, a trainer's loop) and the modules these import from their own folder
    (:mod:`hlodiff.dumps.user_modules`): a trainer module that sets ``model.temperature`` each epoch is read too
    (tenth stop, t10_d_trainer_sets_attr)."""
    for r in getattr(found, "recompiles", []):
        if "module_attribute" not in r.facts or "list_item" in r.facts or not r.subject:
            continue
        where = r.guard_at or r.location
        name = _ATTRIBUTE.search(r.subject)
        if where is None or where.is_library or not where.file or name is None:
            continue
        files = sources.user_modules([where.file, *(f for f in user_files if f != where.file)])
        if sources.set_only_in_init_across(files, name.group("name")):
            r.facts = r.facts | {"per_instance"}
            choose_fix(r)
