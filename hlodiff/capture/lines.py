"""When torch_xla records source lines: on while a run warms up or compiles, off once it is steady.

torch_xla walks the whole Python stack of every IR node it traces while its IR debug flag is on
(``XLA_IR_DEBUG=1``, or ``XLA_HLO_DEBUG=1`` at import); that is where the user's lines in the HLO metadata and in
live-tensor reports come from, and it costs 1.1-1.2x a small model's step. ``torch_xla._XLAC._set_ir_debug``
switches it for the steps still to be traced, and the graph hash does not depend on it, so a graph traced
without lines and the same graph traced later with lines are one cache entry: hlodiff takes the lines of a graph
that compiled without them from a later occurrence (:func:`hlodiff.explain.inventory.summarize`).

:class:`LinesPolicy` decides, after each sync, whether the next step is traced with lines:

* ``always``: on; ``never``: off (the HLO keeps ``op_type``/``op_name`` metadata either way);
* ``auto`` (``hlodiff record``'s default): on from the start; off after :data:`STEADY_SYNCS` syncs in a row
  compiled nothing; on again right after a sync compiled (the sync after a new graph often brings another);
  after a graph compiled *without* lines, on for up to :data:`WAIT_SYNCS` syncs so its next occurrence is traced
  with them (alternating graphs, eval every few steps); and when such a graph recurs without lines anyway (its
  period is longer), on for the sync its period predicts next.

Pure logic, standard library only: the injected ``sitecustomize`` loads it beside the hook.
"""

from __future__ import annotations

LINES_ENV = "HLODIFF_LINES"
"""``auto`` | ``always`` | ``never``; unset means the IR debug flag is left as torch_xla set it."""
MODES = ("auto", "always", "never")

STEADY_SYNCS = 3
"""Syncs in a row without a compilation after which ``auto`` switches lines off. A training loop compiles its
step, then often the step after it (optimizer state appears), then repeats: three quiet syncs is steady."""

WAIT_SYNCS = 16
"""How long ``auto`` keeps lines on after a graph compiled without them, waiting for it to recur."""


class LinesPolicy:
    """Whether the next traced step records source lines, fed once per sync with what that sync did."""

    def __init__(self, mode: str):
        self.mode = mode if mode in MODES else "auto"
        self.on = self.mode != "never"
        self.syncs = 0
        self.quiet = 0  # syncs in a row that compiled nothing
        self.lineless: dict[str, int] = {}  # graph hash -> sync index it last ran at without lines
        self.expected: dict[int, str] = {}  # sync index -> lineless graph predicted to run there
        self.wait_until = -1  # lines stay on up to this sync index (a lineless graph may recur)

    def after_sync(self, compiled: bool, graph_hash: str | None) -> bool:
        """Note what the sync just finished did (traced with :attr:`on`); returns whether the next one is."""
        index, traced_with_lines = self.syncs, self.on
        self.syncs += 1
        if self.mode != "auto":
            return self.on
        self.quiet = 0 if compiled else self.quiet + 1
        if graph_hash:
            self._note(index, graph_hash, compiled, traced_with_lines)
        waiting = bool(self.lineless) and self.syncs <= self.wait_until
        self.on = self.quiet < STEADY_SYNCS or waiting or self.syncs in self.expected
        return self.on

    def _note(self, index: int, graph_hash: str, compiled: bool, traced_with_lines: bool) -> None:
        self.expected.pop(index, None)
        if traced_with_lines:
            self.lineless.pop(graph_hash, None)  # its lines are in this entry
        elif compiled:
            self.lineless[graph_hash] = index
            self.wait_until = index + WAIT_SYNCS
        elif graph_hash in self.lineless:  # recurred without lines: its period says when it comes next
            previous, self.lineless[graph_hash] = self.lineless[graph_hash], index
            self.expected[index + (index - previous)] = graph_hash

    @property
    def settled(self) -> bool:
        """Nothing to watch for: a quiet sync changes no decision, only the counts (:meth:`steady_sync`)."""
        return not self.lineless and not self.expected and (self.mode != "auto" or not self.on)

    def steady_sync(self) -> None:
        """What :meth:`after_sync` does for a sync that compiled nothing while :attr:`settled` (lines stay off
        in ``auto``: ``quiet`` only grows), without looking at the graph."""
        self.syncs += 1
        if self.mode == "auto":
            self.quiet += 1

    @property
    def watching(self) -> bool:
        """The next sync may run a graph that compiled without lines: worth a live-tensor report (with lines)."""
        return bool(self.on and self.lineless and (self.syncs <= self.wait_until or self.syncs in self.expected))

    @property
    def missing(self) -> list[str]:
        """Graphs that ran only without lines so far."""
        return sorted(self.lineless)


def mode_from_env(environ) -> str | None:
    value = (environ.get(LINES_ENV) or "").strip().lower()
    return value if value in MODES else None
