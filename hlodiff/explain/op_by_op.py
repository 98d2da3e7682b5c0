"""Run B ran run A's programs op by op: a debugging switch left on (``JAX_DISABLE_JIT=1``, torch_xla's
``XLA_USE_EAGER_DEBUG_MODE=1``) turns every jitted function or traced step into one small program per operation.

Nothing of run A is then asked of the cache: each of run B's programs is "new", and without this rule
``compare-runs`` said run B "loaded all" it needed and stayed silent (compare-runs round 8: runs8_disable_jit,
runs8_torch_eager_debug). The evidence is the runs' shape, not a log line (JAX logs nothing of the switch,
torch_xla's eager mode writes no PT_XLA_DEBUG report): run A compiled whole steps, run B compiled none of them and
many programs of a few operations each, none larger. A run B that also compiled one of run A's programs (a new
evaluation step beside the cached train step), or whose new programs are whole steps, is no such run.
"""

from __future__ import annotations

from hlodiff.dumps.cached_run import Run, compiled_modules
from hlodiff.dumps.graph_record import LOADED_STAGE, GraphRecord
from hlodiff.explain.program_pairs import first_sightings
from hlodiff.explain.run_programs import is_users_program
from hlodiff.explain.run_verdicts import Verdict

OP_BY_OP_REASONS = {"jax": "jit_disabled", "torch_xla": "eager_mode"}
"""The switch that runs each framework's programs op by op -> the reason its pieces carry (the fixes name it)."""

MIN_PIECES = 8
"""Fewer one-op programs are a few eager operations beside the run (a ``jnp.ones``, a ``device_put``)."""

PIECES_PER_PROGRAM = 4
"""Run B's pieces outnumber run A's programs at least this many times: a step of a handful of operations already
breaks into more (a forward, a loss, a backward, an update)."""

MOST_OPS = 4
"""A piece computes at most this many instructions in its entry computation: one framework operation lowered
(torch's ``mse_loss``: subtract, multiply, reduce, multiply; a matmul; a fill); run A's steps more."""

BOOKKEEPING = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "broadcast", "reshape", "convert",
                         "bitcast", "copy", "transpose", "iota"})
"""Instructions that only feed, lay out or return values: not counted as a program's operations."""


def mark_op_by_op(run_a: Run, run_b: Run, verdicts: list[Verdict]) -> None:
    """When run B ran run A's programs op by op, every program run B compiled becomes a piece of them: verdict
    ``new``, reason :data:`OP_BY_OP_REASONS` of the framework, counted as a recompilation (``in_pieces``)."""
    reason = OP_BY_OP_REASONS.get(run_b.framework)
    compiled = [v for v in verdicts if v.verdict != "hit"]
    if reason is None or not _ran_in_pieces(run_a, run_b, verdicts, compiled):
        return
    for v in compiled:
        v.verdict, v.reason, v.in_pieces = "new", reason, True
        v.a, v.a_record, v.key_a, v.cause, v.differences = None, None, None, None, []


def _ran_in_pieces(run_a: Run, run_b: Run, verdicts: list[Verdict], compiled: list[Verdict]) -> bool:
    steps_a = [r for r in compiled_programs(run_a) if _operations(r) > MOST_OPS]
    if not steps_a or len(compiled) < max(MIN_PIECES, PIECES_PER_PROGRAM * len(compiled_programs(run_a))):
        return False
    if _asked_for_a_program_of(run_a, run_b, verdicts):
        return False
    pieces = [v.b_record for v in compiled]
    return all(r is not None and _operations(r) <= MOST_OPS for r in pieces)


def compiled_programs(run: Run) -> list[GraphRecord]:
    """The programs a run compiled or loaded from the cache, each once (a warm run A loaded its steps: they are
    still the programs run B did not ask for)."""
    if run.framework == "jax":
        compiled = compiled_modules(run)
        loaded = [r for r in run.records if r.stage == LOADED_STAGE and r.kind == "xla_dump"
                  and (r.module_name or "").rstrip("_") not in compiled]
        return [r for recs in compiled.values() for r in recs] + loaded
    return first_sightings(run.records)


def _asked_for_a_program_of(run_a: Run, run_b: Run, verdicts: list[Verdict]) -> bool:
    """Run B asked for one of run A's own programs (JAX: a user's jitted function by name; torch_xla: a graph
    hash run A compiled)."""
    if run_b.framework == "jax":
        names_a = {c.module_name for c in run_a.jax_log.compilations if is_users_program(c.module_name)}
        return any(v.program in names_a for v in verdicts)
    hashes_a = {r.graph_hash for r in run_a.records if r.graph_hash}
    return any(r.graph_hash in hashes_a for r in run_b.records if r.graph_hash)


def _operations(record: GraphRecord) -> int:
    """Instructions of the program's entry computation that compute (:data:`BOOKKEEPING` left out; a reduce's
    body is part of the reduce)."""
    return sum(1 for inst in record.module().entry.instructions if inst.opcode not in BOOKKEEPING)
