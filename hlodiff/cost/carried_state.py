"""The model's state, carried from one step's graph to the next: what every training loop hands on, no finding.

A loop with one sync per step hands its next step the updated weights and the optimizer's state (momentum, Adam's
moments): they cross every graph boundary of the run, and ``cost`` lists them in its boundaries. Listed bare, step
after step, they read like the tensors a mid-step sync holds (new-user review 15, F9: a healthy loop's report "reads
like a problem"). A boundary whose every tensor is a parameter or optimizer state is the model's state carried on;
a run whose boundaries are all such, and that has no finding (:mod:`hlodiff.cost.headline`), has nothing to act on.
Typed facts; the words are the cost renderer's.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.cost.crossings import Boundary
from hlodiff.cost.model import RunCost
from hlodiff.cost.roles import OPTIMIZER_STATE, PARAMETER

STATE_ROLES = frozenset({PARAMETER, OPTIMIZER_STATE})
"""Roles (:mod:`hlodiff.cost.roles`) of the model's state: what a step hands the next whatever its graphs are."""


def state_only(boundary: Boundary) -> bool:
    """Every tensor crossing ``boundary`` is the model's state (a boundary with no tensor named is not)."""
    return bool(boundary.tensors) and all(t.role in STATE_ROLES for t in boundary.tensors)


def roles_state_only(roles) -> bool:
    """A step's held roles (role -> tally) are the model's state only."""
    return bool(roles) and set(roles) <= STATE_ROLES


@dataclass(frozen=True, slots=True)
class CarriedState:
    """What a run's graphs hand each other when all of it is the model's state: how many boundaries, and per role
    the tensors and bytes crossing one of them (the largest)."""

    boundaries: int
    roles: dict[str, tuple[int, int]]
    """role -> (tensors, bytes) at the boundary carrying the most."""


def carried_state(run: RunCost) -> CarriedState | None:
    """The model's state carried between the run's graphs, when that is all that crosses; None when no boundary is
    known or some boundary carries anything else (activations, gradients, tensors of no known role)."""
    if not run.boundaries or not all(state_only(b) for b in run.boundaries):
        return None
    largest = max(run.boundaries, key=lambda b: b.bytes)
    return CarriedState(len(run.boundaries), {role: (t.count, t.bytes) for role, t in largest.by_role().items()})
