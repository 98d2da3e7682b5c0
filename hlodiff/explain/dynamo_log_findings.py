"""What Dynamo's log alone says, before any XLA graph is looked at: the logs given merged into one (:func:`read_logs`),
each recompilation with its failed guard classified, the user's line and its fix (:func:`recompiles_of`: what the
pytest plugin checks, and what :mod:`hlodiff.explain.dynamo` joins to the bridge's XLA graphs), and one graph-break
finding per line Dynamo broke at (:func:`breaks_of`).

Facts are typed here (:mod:`hlodiff.explain.dynamo_types`); what a guard is about is
:mod:`hlodiff.explain.dynamo_guard_kinds`'; the words of the fixes are rows of :mod:`hlodiff.diff.fix_rules`.
"""

from __future__ import annotations

import re

from hlodiff.diff.fixes import FixChoice, choose
from hlodiff.dumps.dynamo_log import GAVE_UP, DynamoCompile, DynamoLog, GraphBreak, GuardFailure
from hlodiff.explain.dynamo_break_calls import break_call_facts, entered_lines, grad_taken_in
from hlodiff.explain.dynamo_guard_kinds import (_after_data_dependent, _classify, _is_data_dependent,
                                                break_before_resume, is_data_dependent_branch, is_scalar_read,
                                                local_truth_name, python_random_call, what_breaks)
from hlodiff.explain.dynamo_guard_lines import (assigned_on_line, bounds_loop, grown_on_line, identity_on_line,
                                                sizes_on_line, tests_membership)
from hlodiff.explain.dynamo_number_params import number_only_param, positional_number_param
from hlodiff.explain.dynamo_topk_k import topk_k_on_line
from hlodiff.explain.dynamo_types import DynamoRecompile, GraphBreakFinding, compiled_name, wrapped_module
from hlodiff.explain.dynamo_recompile_fixes import choose_fix, float_recompiled_once, int_recompiled_once, varying_sizes
from hlodiff.hlo.library_modules import cut_module_path
from hlodiff.hlo.model import SourceFrame


def read_logs(logs: list[DynamoLog]) -> DynamoLog | None:
    """All Dynamo logs given or found (read by the run's evidence, :meth:`hlodiff.dumps.evidence.Run.read_dynamo`),
    merged by compile id: a TORCH_TRACE log first (it holds the call stacks), a TORCH_LOGS text log fills what it
    lacks."""
    logs = list(logs)
    logs.sort(key=lambda log: log.form != "trace")
    if not logs:
        return None
    merged = DynamoLog(logs[0].path, logs[0].form)
    for log in logs:
        for c in log.compiles:
            have = next((m for m in merged.compiles if m.compile_id == c.compile_id), None)
            if have is None:
                merged.compiles.append(c)
                continue
            have.function = have.function or c.function
            have.definition = have.definition or c.definition
            have.call = have.call or c.call
            have.callee = have.callee or c.callee
            have.failures = have.failures or c.failures
        if not merged.graph_breaks:
            merged.graph_breaks = list(log.graph_breaks)
        merged.limit_hits += [hit for hit in log.limit_hits if hit not in merged.limit_hits]
        merged.restarts += [r for r in log.restarts if r not in merged.restarts]
        merged.stance_raises += [r for r in log.stance_raises if r not in merged.stance_raises]
    merged.compiles.sort(key=lambda c: (c.frame, c.attempt))
    return merged


def recompiled_calls(log: DynamoLog) -> list[DynamoCompile]:
    """The compiles a failed guard set off, without the attempt Dynamo refused at its recompile limit (review 18,
    F1: ``0/8`` compiled nothing, and "8 recompilations" counted it): that attempt is told as the limit, once, in
    the summary. It stays when it is all its frame's log shows (a log of the limit's warning alone): its guard is
    then the only one the user gets."""
    calls = [c for c in log.compiles if c.recompiled]
    refused = {cid for cid, _ in log.limit_hits}
    told = {c.frame for c in calls if c.compile_id not in refused}
    return [c for c in calls if c.compile_id not in refused or c.frame not in told]


def recompiles_of(log: DynamoLog) -> list[DynamoRecompile]:
    """Dynamo's recompilations alone, each with its kind and fix (no XLA side: the pytest plugin's check)."""
    calls = recompiled_calls(log)
    found = [recompile_of(c, log, position == len(calls) - 1) for position, c in enumerate(calls)]
    varying_sizes(found)
    int_recompiled_once(found)
    float_recompiled_once(found)
    for r in found:
        choose_fix(r)
    return found


def _absolute(source: SourceFrame | None, definition: SourceFrame | None) -> SourceFrame | None:
    """A guard's source as Dynamo's trace prints it, relative to a folder above the script
    (``notes/review5/scripts/t.py:10``), made whole from the compiled function's definition in the same file
    (``/work/notes/review5/scripts/t.py``): the printed path is the user's to open (review 5, F4)."""
    if source is None or definition is None or not source.file or source.file.startswith("/") \
            or ":" in source.file[:3] or not definition.file.endswith("/" + source.file):
        return source
    return SourceFrame(definition.file, source.line, source.function)


_SUBMODULE = re.compile(r"\._modules\[['\"][^'\"]+['\"]\]$")
"""A guarded name that is a module's submodule itself (``self._modules['drop']``), not something inside it
(``fn._modules['0']._forward_pre_hooks[...]``: d20_prune_rounds)."""
_DROPOUT_SLOT = re.compile(r"\._modules\[['\"][^'\"]*(?:drop|identity)[^'\"]*['\"]\]$", re.IGNORECASE)
"""A submodule whose slot is named for dropout (``drop``, ``attn_drop``, ``dropout``, ``identity``): the guard names
no class, and only a layer that mode switches (Dropout, swapped for Identity to evaluate) has model.eval() as the
other way; a block or a head swapped for another class has not (the eleventh stop's read)."""


def recompile_of(c: DynamoCompile, log: DynamoLog, last: bool) -> DynamoRecompile:
    failure = c.failures[0] if c.failures else GuardFailure(None, "a guard failed (Dynamo's log names none)")
    kind, subject, seen, facts = _classify(failure.guard)
    if subject is None and (name := local_truth_name(failure.guard)) and grown_on_line(name, failure.code):
        # an argument empty at the compile that the compiled function appends to (a mutable default `history=[]`):
        # its first failure is the truth guard, before any length guard (Dynamo round 33, d33_smooth_default_list)
        kind, subject, seen = "guard", name, f"{name} was empty"
        facts |= {"argument_truth", "grown_in_call"}
    if last and "leading_dim_shrank" in facts:
        facts.add("last_call")
    if "python_int" in facts and bounds_loop(subject, failure.code):
        facts.add("sets_loop")  # the int bounds a loop on its guard's line: it sets how many times the body is traced
    if "python_int" in facts and sizes_on_line(subject, failure.code):
        facts.add("sets_shape")  # the int is a size on its guard's line (torch.split's sizes, x[:n]): a shape
    if "python_int" in facts and topk_k_on_line(subject, failure.code):
        facts.add("sets_topk")  # the int is topk's k on its guard's line: one k and a mask, never padding
    if "object_type" in facts and _SUBMODULE.search(subject or ""):
        facts.add("submodule_type")  # the object of another class is a submodule swapped by the loop (Dropout -> Identity)
        if _DROPOUT_SLOT.search(subject or ""):
            facts.add("dropout_slot")  # a dropout's slot: model.eval() is the other way to turn it off
    if kind == "python_value" and (param := number_only_param(subject, failure.code)) is not None:
        # the number goes to a parameter that takes a Python number only (label_smoothing=): no tensor can go there
        facts.add("number_only_param")
        if param == "label_smoothing":
            facts.add("label_smoothing")  # its limit row spells the smoothed loss out; another parameter's does not
        seen = f"{seen}, passed as {param}="
    elif kind == "python_value" and (param := positional_number_param(subject, failure.code)) is not None:
        # passed by position to such a parameter (nn.Dropout's own F.dropout(input, self.p, ...)): a rate kept on a
        # torch module, which no buffer reaches (review 20, F9)
        facts |= {"number_only_param", "number_only_positional"}
        seen = f"{seen}, passed as {param}="
    if "object_identity" in facts and identity_on_line(subject, failure.code):
        facts.add("identity_read")  # the code reads id() of the object: a new object every call, no mode to pick
    if "list_item" in facts and tests_membership(subject, failure.code):
        facts.add("membership_test")  # `if i in self.skip`: the list chooses which parts run, a mask tensor fits
    if kind == "python_value" and assigned_on_line(subject, failure.code):
        facts.add("assigned_in_call")  # the compiled function changes the value it guarded (a counter kept inside)
    if facts & {"container_length", "attribute_truth"} and grown_on_line(subject, failure.code):
        facts.add("grown_in_call")  # the compiled function adds to the container it guarded (a history kept inside)
    if kind == "python_value" and (subject or "").startswith("___stack") \
            and (made := break_before_resume(c, log)) is not None and made.at is not None:
        # a value the code before a graph break made outside the graph (a clock read), the rest specialised on it
        facts.add("resume_stack_value")
        words = f"the value made at {made.at.short()} before the graph break"
        if is_scalar_read(made):
            # the number is a tensor's value read into Python (float(t)): it follows the data, and need not be read
            facts.add("tensor_read")
            seen = f"{seen}, a tensor's value read as a Python number at {made.at.short()}, where Dynamo breaks the graph"
        else:
            seen = f"{seen}, made by {what_breaks(made)} at {made.at.short()}, where Dynamo breaks the graph"
    if kind == "shape" and (subject or "").startswith("___stack") and _after_data_dependent(c, log):
        facts.add("data_dependent_size")  # the value made before a break at a data-dependent op: its size follows the data
    definition = None if wrapped_module(c) else c.definition
    source = _absolute(failure.source, c.definition)
    if source is not None and (cut_module_path(source.file) or source.file.startswith("<frozen")):
        # the guard names torch's own line, its path cut short (nn/modules/dropout.py:73), or the stdlib's frozen
        # os module (an os.environ read: d23_env_debug): no user line
        source = None
    location = c.call or source or definition
    located = ("call" if c.call else "guard" if source else "definition" if definition
               else "wrapper" if wrapped_module(c) else None)
    called_at = None
    if "grown_in_call" in facts and source is not None and not source.is_library:
        # the line that grows the container is the user's mistake; the call only repeats it (d23_norm_history)
        location, located, called_at = source, "guard", c.call
    if location is not None and location.is_library and not c.call:
        # Dynamo compiled library code (torch.compile(opt.step): torch's step in sgd.py) and its guard names a
        # library line; the user's line that reached it is the one the graph breaks' tracebacks share, if one
        users = {(b.call.file, b.call.line): b.call for b in log.graph_breaks
                 if b.call is not None and not b.call.is_library}
        if len(users) == 1:
            location, located = next(iter(users.values())), "call"
    # review 23 F4: a TORCH_TRACE log (`hlodiff record`) names the call, and the guard's own line beside it is what a
    # text log's reader gets ("the value used at :13"): record tells no less than a capture by hand
    guard_at = source if located == "call" and source is not None and not source.is_library \
        and (source.file, source.line) != (location.file, location.line) else None
    return DynamoRecompile(c.compile_id, compiled_name(c), kind, failure, location, subject,
                           facts=frozenset(facts), seen=seen, located=located, called_at=called_at, guard_at=guard_at,
                           subject_words=words if "resume_stack_value" in facts else None)


_OPTIMIZER_CALL = re.compile(r"`Optimizer\.(?:zero_grad|step)`")
"""A graph break at the optimizer's own method (``the function `Optimizer.zero_grad` should not be traced``): the
training step is inside the compiled function, as at ``loss.backward()``."""


_FILE_OPEN = re.compile(r"builtin (?:operator )?`(?:io\.)?open`")
"""A break at the builtin ``open`` (``Dynamo does not know how to trace builtin operator `open` ...``): file I/O
inside the compiled function, a log or a dump written per call."""


_GENERATOR = "Generators cannot be compiled"
"""Dynamo's explanation when it gives up a generator's own frame (``Attempt to trace generator``): a generator
expression or a generator function reached the compiled code as an argument (gb0003)."""


_MODULE_BACKWARD_HOOK = "Module-level backwards hooks require compiled autograd"
"""Dynamo's reason for a break at a module with a full backward hook (``register_full_backward_hook``,
``register_full_backward_pre_hook``): torch's ``Module._call_impl`` builds a ``BackwardHook`` Dynamo cannot trace
without compiled autograd (pytorch#133303), so the break is located in torch's module.py, at whichever module the
user hooked."""


def breaks_of(log: DynamoLog) -> list[GraphBreakFinding]:
    """One finding per line Dynamo broke at (or per user line that entered library code a table knows), with its fix."""
    by_line: dict[tuple, list[GraphBreak]] = {}
    entered = entered_lines(log.graph_breaks)  # library breaks a user line inside the compiled code ran into
    for b in log.graph_breaks:
        key = (b.at.file, b.at.line) if b.at else (b.reason,)
        if key in entered:
            key = ("entered", entered[key].file, entered[key].line)
        by_line.setdefault(key, []).append(b)
    resumes = sum(1 for c in log.compiles if c.resume)
    found = []
    for group in by_line.values():
        first = group[0]
        graphs = 1 + max(resumes, len(group))
        facts = {"dynamo", "raised"} if first.raised else {"dynamo"}
        if first.raised:
            graphs = 0  # Dynamo raised (fullgraph=True): no graph was made, the program stopped
        if "print" in (first.explanation or "") or "`print`" in first.reason:
            facts.add("op:print")
        elif "Tensor.item()" in first.reason or "Tensor.item()" in (first.explanation or ""):
            facts.add("op:item")
        elif first.reason == GAVE_UP and _GENERATOR in (first.explanation or ""):
            # a generator expression reached the compiled function (d32_genexpr_arg); any other function given up
            # for it is a generator function the user compiled (a def with yield: stop 51's look-alike)
            facts.add("op:generator_frame" if first.given_up == "<genexpr>" else "op:generator_function")
        elif first.reason == GAVE_UP:
            facts.add("gave_up")  # the backend failed: the whole function runs eagerly, every call
        elif first.skipped:
            facts.add("frame_skipped")  # Dynamo gave the frame up at this line (a lock in a `with`): d32_lock_forward
        elif is_data_dependent_branch(first):
            facts.add("op:data_dependent_branch")  # an `if` on a tensor (review 17, F2): a branch, not a size
        elif _is_data_dependent(first):
            facts.add("op:data_dependent")
        elif "Tensor.backward()" in first.reason or _OPTIMIZER_CALL.search(first.explanation or ""):
            facts.add("op:train_step")  # backward() or the optimizer inside the compiled function (d17_train_step_backward)
        elif python_random_call(first) is not None:
            facts.add("op:python_random")  # a draw of Python's random module (a LayerDrop): d20_layerdrop_random
        elif _FILE_OPEN.search(first.explanation or ""):
            facts.add("op:file_io")  # a file opened in the compiled code (a log written per call): d23_file_log_break
        elif _MODULE_BACKWARD_HOOK in first.reason:
            facts.add("op:module_backward_hook")  # a module's full backward hook: d27_module_backward_hook
        location = first.at
        facts.update(*(break_call_facts(b) for b in group))
        if "op:requires_grad_inside" in facts and first.at is not None and \
                (first.at.file, first.at.function) in grad_taken_in(log.graph_breaks):
            facts.add("op:autograd_inside")  # requires_grad_ then autograd.grad in one function: a gradient taken
        at = first.at
        if first.at is not None and (first.at.file, first.at.line) in entered:
            # the user's line in the compiled code ran a library call a table knows (a sync): that line is theirs to change
            location = entered[(first.at.file, first.at.line)]
            at = ", ".join(dict.fromkeys(b.at.short() for b in group if b.at is not None))
        elif first.at is not None and first.at.is_library and first.call is not None and not first.call.is_library:
            # inside torch's own code (torch.compile(opt.step): the optimizer's graph_break(), a wrapper Dynamo
            # skips): no line of the user's breaks it; their call is the line, the library frame is what was seen
            facts.add("in_library")
            location = first.call
        rule = choose("graph_break", frozenset(facts))
        seen = (str(graphs) if "op:print" in facts
                else python_random_call(first) if "op:python_random" in facts
                else what_breaks(first) if "op:file_io" in facts
                else f"{what_breaks(first)}: {first.reason}" if "op:train_step" in facts
                and what_breaks(first) != first.reason
                else first.reason if "op:module_backward_hook" in facts
                else f"{first.reason}, at {first.at.short()}" if "in_library" in facts
                else f"{first.reason}, at {at}" if "op:xla_sync" in facts or facts >= {"op:log_call", "in_library"} or (
                    "op:log_call" in facts and "op:item" not in facts)
                else first.explanation or "the backend failed" if "gave_up" in facts
                else first.explanation if "op:generator_frame" in facts
                else f"`{first.given_up}`" if "op:generator_function" in facts
                else f"{first.reason}: {first.explanation}" if first.explanation and "frame_skipped" in facts
                else first.reason)
        finding = GraphBreakFinding(first.reason, first.explanation, location, first.call, len(group), graphs,
                                    raised=first.raised)
        finding.fix, finding.fix_rule = FixChoice(rule, {"seen": seen}).text, rule.name
        found.append(finding)
    return found
