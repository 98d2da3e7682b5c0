"""The evidence of a run still being written (``watch``, ``record --live``): a :class:`~hlodiff.dumps.evidence.Run`
that grows as the follower reads, and whose windows keep the JAX log's compilations joined over the whole run.

Its own module in ``dumps/`` because joining is reading (the JAX log is read again when it grew); the entry layer
(:mod:`hlodiff.live_run`) builds it and the live analysis only asks it for windows.
"""

from __future__ import annotations

import os

from hlodiff.dumps.evidence import Run
from hlodiff.dumps.graph_record import GraphRecord


class LiveEvidence(Run):
    """The growing run's evidence, whose windows (:meth:`window`) join their JAX modules to the JAX log as the
    whole run does: the *n*-th dumped module of a name is the *n*-th compilation of that name in the log, counted
    from the run's first module, which a window of a family's last graphs no longer holds (joined over the window
    alone, its first module would take the name's first compilation). The log is read again when a module came
    since the last join (a JAX log holds compilations only: it grows with them, not with the steps)."""

    def __init__(self, *args, **kwargs):
        Run.__init__(self, *args, **kwargs)
        self.joined: dict[str, object] = {}  # a module's path -> its compilation in the log (None: not in it)
        self.joined_at: tuple = ()
        """(modules, the logs' sizes) at the last join: read again when either changed."""

    def window(self, records: list[GraphRecord]) -> Run:
        window = Run.window(self, records)
        if not self.jax_logs:
            return window
        self._join()
        return _JoinedWindow(window, self.joined)

    def _join(self) -> None:
        from hlodiff.dumps.jax_log import join_modules, read_jax_log

        from hlodiff.errors import HlodiffError

        dumped = [r for r in self.records if r.kind == "xla_dump"]
        sizes = tuple(os.path.getsize(p) if os.path.isfile(p) else -1 for p in self.jax_logs)
        if (len(dumped), sizes) == self.joined_at:
            return
        self.joined_at = (len(dumped), sizes)
        names = [r.module_name or "" for r in dumped]
        for path in self.jax_logs:
            try:
                log = read_jax_log(path, [])
            except HlodiffError:  # a line still being written that reads as damage: joined at the next read
                continue
            for record, compilation in zip(dumped, join_modules(log, names)):
                if compilation is not None:
                    self.joined[record.path] = compilation


class _JoinedWindow(Run):
    """A window whose JAX modules keep the compilations the whole run joined them to."""

    def __init__(self, window: Run, joined: dict):
        Run.__init__(self, window.records, window.inputs, window.events, window.reports, window.time_logs,
                     window.sources, window.on_disk)
        self.joined = joined

    def jax_whole_run(self) -> list:
        return [c for c in self.joined.values() if c is not None]

    def jax_joined(self, names, wanted, warnings):
        dumped = [r for r in self.records if r.kind == "xla_dump"]
        by_name = {}
        for r in dumped:  # the window's records in order; the analysis asks in its summaries' order (the same)
            by_name.setdefault(r.module_name or "", []).append(self.joined.get(r.path))
        seen: dict[str, int] = {}
        out = []
        for name in names:
            k = seen.get(name, 0)
            seen[name] = k + 1
            found = by_name.get(name, [])
            out.append(found[k] if k < len(found) else None)
        return [out]
