"""What the ``explain-recompile`` tests share: the document of a capture, the fix rules its causes chose, the cause
that heads it, and Dynamo's recompilations built in memory from the guards' text.

Each round's test file had its own copy of these (Dynamo rounds 6 to 14, rounds 3 to 14); said once here, a change
in how a test reads the document is made once. The round files import them under their old local names."""

from __future__ import annotations

import json

from helpers import FIXTURES, capture_argv, cli, cli_json
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak, guard_failure
from hlodiff.explain.dynamo_log_findings import recompiles_of

DYNAMO_SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def explain_doc(path, *extra: str, codes: tuple[int, ...] = (0, 1)) -> dict:
    """The ``--json`` document of ``hlodiff explain-recompile <path> <extra>``."""
    return cli_json("explain-recompile", str(path), *extra, codes=codes)


def explain_capture(path: str, codes: tuple[int, ...] = (0, 1)) -> dict:
    """The document for a capture under ``fixtures/``, given as a user gives it (:func:`helpers.capture_argv`)."""
    return cli_json("explain-recompile", *capture_argv(path), codes=codes)


def explain_status(*args) -> tuple[dict, int]:
    """The ``--json`` document of ``hlodiff explain-recompile <args>`` and its exit status (0 or 1: whether the
    story holds a recompilation to fix is part of what the tests assert)."""
    result = cli("explain-recompile", *map(str, args), "--json", codes=(0, 1))
    return json.loads(result.stdout), result.exit_code


def explain_scenario(name: str, *extra: str) -> tuple[dict, int]:
    """:func:`explain_status` of a Dynamo scenario by its folder's name under ``fixtures/scenarios/dynamo``."""
    return explain_status(DYNAMO_SCENARIOS / name, *extra)


def fix_rules(doc: dict) -> list[str]:
    """The fix rule of every cause of every recompilation, in the document's order."""
    return [c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]]


def fix_rule_set(doc: dict) -> set[str]:
    """The fix rules the document's causes chose."""
    return set(fix_rules(doc))


def head_cause(doc: dict) -> dict:
    """The first cause of the recompilation the headline names."""
    head = doc["headline"]
    return next(r["causes"][0] for r in doc["recompilations"] if r["graph"] == head["graph"])


def guard_recompiles(*guards: str, function: str = "f", breaks: list[GraphBreak] | None = None,
                     limit_hits: list[tuple[str, int]] | None = None) -> list:
    """Dynamo's findings for one frame compiled once, then again once per guard: the n-th recompilation failed the
    n-th guard against the compile before it. Each guard's text is read as Dynamo's log reader reads it (a trailing
    ``# code  # file:line in fn`` comment is the guard's source line)."""
    compiles = [DynamoCompile("0/0")] + [DynamoCompile(f"0/{n + 1}", function, failures=[guard_failure(f"0/{n}", g)])
                                         for n, g in enumerate(guards)]
    return recompiles_of(DynamoLog("x", "text", compiles, graph_breaks=breaks or [], limit_hits=limit_hits or []))
