"""Group a run's graphs into families, so a forward graph is only ever compared with its own kind.

torch_xla: a family is the user line that ended the step (the innermost frame outside torch_xla in
``TensorsGraphInfo``) plus the graph name. A graph executed early, by ``.item()``, ``print(tensor)`` or any read of
a value before the sync, has no torch_xla sync frame; it is *partial* and joins the family of the step it cut
short (the next full graph). XLA dump folders and HLO files: the module name without torch_xla's numeric suffix
(the jitted function, or ``SyncTensorsGraph``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from hlodiff.dumps.anomaly_checks import CHECK_KEY
from hlodiff.dumps.graph_record import TRACED_KINDS
from hlodiff.explain.dynamo_bridge import RESUME_PREFIX, bridge_ops, bridge_run, resume_frame
from hlodiff.explain.inventory import GraphSummary
from hlodiff.hlo.model import SourceFrame

if TYPE_CHECKING:
    from hlodiff.explain.jax_functions import FunctionSplit

_SYNC_FUNCTIONS = frozenset({"sync", "mark_step", "_mark_step", "step", "__next__", "next", "wait_device_ops",
                             "_run_step_closures", "_xla_sync_multi", "sync_multi"})
EARLY_CAUSE = "access tensor value"
# torch_xla numbers its modules (SyncTensorsGraph.76, IrToHlo.52): the number changes with the graph, the
# function does not.
_SUFFIX = re.compile(r"\.\d+$")


@dataclass(slots=True)
class Family:
    """Graphs that come from the same place in the user's program."""

    key: str
    label: str
    members: list[GraphSummary] = field(default_factory=list)
    split: "FunctionSplit | None" = None
    """For a JAX module of another function than the first of its name (review F5): why it is another."""

    @property
    def module_name(self) -> str:
        """The label without the words that tell a split family apart (``jit_step``)."""
        return self.label if self.split is None else self.label.split(" (", 1)[0]

    @property
    def compiled(self) -> list[GraphSummary]:
        return [g for g in self.members if g.compiled]


def is_sync_frame(frame: SourceFrame) -> bool:
    """A frame inside torch_xla's step-ending calls (``torch_xla.sync``, ``xm.mark_step``, the parallel loader)."""
    path = frame.file.replace("\\", "/")
    return "torch_xla/" in path and (frame.function in _SYNC_FUNCTIONS or path.endswith(
        ("torch_xla/torch_xla.py", "core/xla_model.py", "distributed/parallel_loader.py")))


def is_partial(summary: GraphSummary, debug_cause: str | None = None) -> bool:
    """True when the graph ran before the step's sync: its trigger is user code reading a value."""
    if debug_cause is not None and EARLY_CAUSE in debug_cause:
        return True
    record = summary.record
    if (record.graph_hash or "").startswith(CHECK_KEY):  # an anomaly-mode check: no frames, run inside backward()
        return True
    if record.kind not in TRACED_KINDS or not record.frames:
        return False
    return not any(is_sync_frame(f) for f in record.frames)


def family_key(summary: GraphSummary, splits: Mapping[str, FunctionSplit] | None = None) -> tuple[str, str]:
    """The family a graph belongs to, and its label. ``splits``: JAX modules that compile another function than
    the first of their name (:func:`hlodiff.explain.jax_functions.function_splits`) get a family of their own."""
    record = summary.record
    if record.kind in TRACED_KINDS:
        name = record.graph_name or ""
        block = compile_block_line(record.frames or ())
        if block is not None:  # torch_xla.compile/step syncs from its context manager: named by the user's line
            where = f"{block.file}:{block.line}"
            return f"{record.source}|{name}|{where}", f"{name + ' ' if name else ''}torch_xla.compile at {_short(block)}"
        trigger = summary.trigger
        where = f"{trigger.file}:{trigger.line}" if trigger else "?"
        label = f"{name + ' ' if name else ''}sync at {_short(trigger) if trigger else 'unknown line'}"
        if trigger is not None and trigger.is_library and bridge_run(record.frames):  # issue 31: no library line
            label = f"{name + ' ' if name else ''}torch.compile (XLA bridge)"
            resume = resume_frame(summary)
            if resume:  # review 10 F5: the code after a graph break is a Dynamo frame of its own
                return (f"{record.source}|{name}|{where}|{resume}",
                        f"{label} after the graph break at {_break_line(resume)}")
        return f"{record.source}|{name}|{where}", label
    name = _SUFFIX.sub("", summary.name or record.module_name or "?")
    if bridge_ops(summary):
        resume = resume_frame(summary)
        if resume:  # review 10 F5: the code after a graph break is a Dynamo frame of its own
            return (f"{record.source}|{name}|bridge|{resume}",
                    f"{name} torch.compile (XLA bridge) after the graph break at {_break_line(resume)}")
        # review 9 F2 (c5, a dump with TORCH_LOGS and no debug log): the bridge's graph (ops from Dynamo's FX graph)
        # and an eager read after the sync (`.argmax(-1).cpu()`) share the name SyncTensorsGraph but come from two
        # places in the program; one family made each compiled-once graph a "recompilation" of the other
        return f"{record.source}|{name}|bridge", f"{name} torch.compile (XLA bridge)"
    split = splits.get(summary.ref) if splits else None
    if split is not None:
        return f"{record.source}|{name}|function {split.index}", split.label(name)
    return f"{record.source}|{name}", name


_COMPILE_BLOCK = frozenset({"_compile", "_clear_pending_ops_before_compile"})
_PLUMBING_FILES = ("contextlib.py", "functools.py")


def compile_block_line(frames) -> SourceFrame | None:
    """For a graph run by ``torch_xla.compile``/``torch_xla.step`` (its sync comes from the context manager's
    ``_compile``): the user's line that entered the block or called the compiled function, the first frame past
    torch_xla and the context-manager plumbing (``contextlib.py``), whether or not those read as library code
    where the dump is read. None for a graph that is not run that way."""
    for k, frame in enumerate(frames):
        path = frame.file.replace("\\", "/")
        if frame.function in _COMPILE_BLOCK and path.endswith("torch_xla/torch_xla.py"):
            for outer in frames[k + 1:]:
                p = outer.file.replace("\\", "/")
                if "torch_xla/" in p or p.rsplit("/", 1)[-1] in _PLUMBING_FILES:
                    continue
                return outer
            return None
    return None


def place_inputs_at_compiled_call(causes, graph) -> None:
    """A graph run by ``torch_xla.compile`` whose input changed shape or dtype: the input came from the call of the
    compiled step (the loader's batch passed in), so that call leads the cause's locations, as a jitted function's
    call site does for JAX; the line inside the step that first used it stays after it."""
    call = compile_block_line(graph.record.frames or ())
    if call is None or call.is_library:
        return
    for cause in causes:
        first = cause.origins[0] if cause.origins else None
        left = getattr(first, "left", None)
        if cause.kind in ("shape", "dtype") and getattr(left, "opcode", None) == "parameter" \
                and call not in cause.locations:
            cause.locations.insert(0, call)


def group(summaries: list[GraphSummary], partial: set[int],
          splits: Mapping[str, FunctionSplit] | None = None) -> list[Family]:
    """Families in order of first appearance; partial graphs (by position in ``summaries``) join the next full
    graph's family, or their own when no full graph follows. ``splits``: see :func:`family_key`."""
    families: dict[str, Family] = {}
    pending: list[GraphSummary] = []
    for position, summary in enumerate(summaries):
        if position in partial:
            pending.append(summary)
            continue
        if pending and bridge_graph(summary):
            # review 8 F2: a read before a torch.compile call (`print(predict(x).argmax(-1).cpu())` of the last
            # call) did not cut that call's graph: the bridge runs Dynamo's graph whole, so the read keeps its own
            # family instead of alternating with the bridge's graph as a "recompilation"
            for early in pending:
                key, label = family_key(early)
                label = re.sub(r"(^| )sync at ", r"\1read at ", label, count=1)  # no sync ended it: a value was read
                families.setdefault(key, Family(key, label)).members.append(early)
            pending = []
        key, label = family_key(summary, splits)
        family = families.setdefault(key, Family(key, label, split=splits.get(summary.ref) if splits else None))
        family.members.extend(pending)
        family.members.append(summary)
        pending = []
    for summary in pending:
        key, label = family_key(summary)
        families.setdefault(key, Family(key, label)).members.append(summary)
    return list(families.values())


def first_rest(family: Family, ref: str) -> bool:
    """Graph ``ref`` is the family's first whole graph, right after the graphs its first step's early reads ran (the
    step's second graph, #1 of a run cut at .item()): compiled because the read cut the step, not because the step
    changed."""
    members = family.members
    i = next((i for i, g in enumerate(members) if g.ref == ref), 0)
    return i > 0 and not is_partial(members[i]) and all(is_partial(g) for g in members[:i])


def first_step_piece(family: Family, ref: str) -> bool:
    """Graph ``ref`` is a later piece of the family's first step, cut short like every graph before it (a step cut
    by several early reads runs one piece per read): compiled because the step is cut there, not because the step
    changed; compared with the piece before it, it differs in everything a different cut holds."""
    members = family.members
    i = next((i for i, g in enumerate(members) if g.ref == ref), 0)
    return i > 0 and all(is_partial(g) for g in members[:i + 1])


def bridge_graph(summary: GraphSummary) -> bool:
    """A graph torch_xla's Dynamo bridge ran (its trigger is library code on a bridge stack): never the rest of a
    step a user's read cut short."""
    record = summary.record
    trigger = summary.trigger
    return (record.kind in TRACED_KINDS and trigger is not None and trigger.is_library
            and bridge_run(record.frames))


def _break_line(resume: str) -> str:
    """``forward:11`` for ``torch_dynamo_resume_in_forward_at_11`` (the last one of several)."""
    last = resume.rsplit(",", 1)[-1][len(RESUME_PREFIX):]
    function, _, line = last.rpartition("_at_")
    return f"{function}:{line}" if function and line.isdigit() else last


def _short(frame: SourceFrame) -> str:
    return f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}"
