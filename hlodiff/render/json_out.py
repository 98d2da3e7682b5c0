"""Stable JSON documents: every command's ``--json`` output goes through here.

Keys are written in a fixed order by the ``to_json`` methods and lists are sorted where order carries no meaning,
so the same inputs give the same bytes. ``schema`` names the document type and its version; the README documents
each one. Additions are allowed within a version; renames and removals bump it.
"""

from __future__ import annotations

import json

from hlodiff import __version__

SCHEMA_VERSION = 1


def document(kind: str, body: dict, warnings=()) -> dict:
    return {"schema": f"hlodiff.{kind}/{SCHEMA_VERSION}", "hlodiff_version": __version__, **body,
            "warnings": [str(w) for w in warnings]}


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def unexplained(command: list[str], exit_status: int | None, error: str, signals: list[str] = ()) -> dict:
    """``record --json`` when there was nothing to explain (no graph, a signal, an unreadable capture): still a
    document, with the command's status (``None`` when it could not start) and why, so a script reading stdout
    never gets an empty file."""
    return document("explain", {"command": command, "exit_status": exit_status, "signals": list(signals),
                                "error": error, "summary": error, "graphs": [], "families": [],
                                "recompilations": []})
