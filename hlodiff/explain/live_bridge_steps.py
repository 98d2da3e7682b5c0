"""Live, a torch.compile run without Dynamo's log: whether a bridge graph mostly alike an earlier one is the
compiled function's fixed set (both run in every steady step: the report at exit tells no recompilation,
:mod:`hlodiff.explain.dynamo_every_step`) or that program changed (told as XLA's story).

The family's own window cannot say: it holds the bridge's graphs alone, and the steps are cut by the user's
syncs, which are other families. So this reads the steps of the run as held (its compilations and the families'
recent executions), as the report at exit reads the whole run; until two steady steps are known the graph is held
silently (round 19's control was told at step 1 as a recompilation, the report at exit told none).

The steps need only each held graph's cache key, in run order, and which compilations are the bridge's: the live
story keeps those as it reads, and does not analyse the held run again for every graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.explain.dynamo_bridge import bridge_module, bridge_run
from hlodiff.explain.dynamo_every_step import in_every, steady_key_steps


@dataclass(slots=True)
class BridgeSteps:
    """What the steps so far say of the bridge's graphs."""

    known: bool
    """Two steady steps are known: whether a graph runs in every step can be told."""
    every: set[str]
    """Cache keys of the bridge's graphs that ran in every steady step (empty until ``known``)."""

    def fixed(self, recompilation) -> bool:
        """The report at exit tells this recompilation of the bridge's graphs as the compiled function's fixed set:
        its graph and its closest earlier graph both run in every steady step
        (:func:`~hlodiff.explain.dynamo_every_step.fixed_set_pairs`)."""
        return recompilation.closest is not None and \
            {recompilation.graph.cache_key, recompilation.closest.cache_key} <= self.every


def bridge_steps(graphs) -> BridgeSteps | None:
    """The steps of ``graphs`` ((cache key, whether it is a compilation of the bridge's) of the run's compilations and
    held executions, in run order) read as the report at exit reads them; None when they hold no bridge graph."""
    bridge_keys = {key for key, bridge in graphs if bridge}
    if not bridge_keys:
        return None
    steady = steady_key_steps([key for key, _ in graphs], bridge_keys)
    return BridgeSteps(len(steady) >= 2, in_every(steady))


class BridgeStepReader:
    """What the live story keeps to read the steps as it goes: each compilation's cache key where its graph has none
    of its own (its fingerprint's), the compilations whose ops name the bridge's file, and the steps last read
    (read again only once another graph was placed)."""

    def __init__(self) -> None:
        self.fingerprint_keys: dict[str, str] = {}
        self.bridge_ops: set[str] = set()
        """Refs of compilations without a stack whose ops name the bridge's file
        (:func:`~hlodiff.explain.dynamo_bridge.bridge_ops`)."""
        self._read: tuple | None = None

    def compiled(self, record, summary, key: str | None) -> None:
        """A compilation was read (``key``: its own cache key, None for a graph that has none)."""
        if key is None:
            self.fingerprint_keys[record.ref] = summary.cache_key
        if not record.frames and bridge_module(record, record.parse(record.text())):
            self.bridge_ops.add(record.ref)

    def steps(self, placed, held, cause_of) -> BridgeSteps | None:
        """The steps of the records ``held()`` returns, read once per ``placed`` (what was placed when read);
        ``cause_of(record)``: its PT_XLA_DEBUG compilation cause, as read so far."""
        if self._read is None or self._read[0] != placed:
            self._read = (placed, bridge_steps(self._graphs(held(), cause_of)))
        return self._read[1]

    def _graphs(self, held, cause_of) -> list[tuple[str, bool]]:
        """(cache key, whether it is a compilation of the bridge's) of each ``held`` record, as the report at exit
        would summarize them: the first of a key compiled it."""
        seen: set[str] = set()
        out = []
        for r in held:
            key = r.cache_key()
            if key is None:
                key = self.fingerprint_keys[r.ref]
            elif r.kind == "xla_dump":
                key = f"{r.source}#{key}"
            compiled = key not in seen
            seen.add(key)
            out.append((key, compiled and (r.ref in self.bridge_ops or bridge_run(r.frames, cause_of(r)))))
        return out


AWAIT_STEPS = 32
"""Cache hits of the bridge's family a held recompilation waits for two steady steps (its recent window's size)."""
