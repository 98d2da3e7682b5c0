"""Stable JSON documents: every command's ``--json`` output goes through here.

Keys are written in a fixed order by the ``to_json`` methods and lists are sorted where order carries no meaning,
so the same inputs give the same bytes. ``schema`` names the document type and its version; the README documents
each one. Additions are allowed within a version; renames and removals bump it.
"""

from __future__ import annotations

import json

from hlodiff import __version__
from hlodiff.errors import UNSAFE_RE, printable, unique

SCHEMA_VERSION = 1


def document(kind: str, body: dict, warnings=()) -> dict:
    return {"schema": f"hlodiff.{kind}/{SCHEMA_VERSION}", "hlodiff_version": __version__, **body,
            "warnings": [str(w) for w in unique(warnings)]}


def dumps(doc: dict) -> str:
    """The document as UTF-8-safe JSON: a lone surrogate or a bidirectional control in a string (from a dump's
    ``source_file``) becomes the escape text the terminal and HTML show (``\\udc80``, ``\\u202e``), never a raw
    character (a surrogate would be written as an invalid byte)."""
    text = _encode(doc) + "\n"
    if UNSAFE_RE.search(text) is None:
        return text
    return UNSAFE_RE.sub(lambda m: "\\\\" + printable(m.group(0))[1:], text)  # inside a JSON string: \\ is \


def _encode(doc: dict) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``, joined in batches: the indenting encoder yields one small
    string per token, and ``dumps`` lists them all before joining (a 30 MB document of 40,000 cache hits held
    millions of them, ~150 MB)."""
    pieces: list[str] = []
    batch: list[str] = []
    for chunk in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(doc):
        batch.append(chunk)
        if len(batch) >= 8192:
            pieces.append("".join(batch))
            batch.clear()
    pieces.append("".join(batch))
    return "".join(pieces)


def unexplained(command: list[str], exit_status: int | None, error: str, signals: list[str] = ()) -> dict:
    """``record --json`` when there was nothing to explain (no graph, a signal, an unreadable capture): still a
    document, with the command's status (``None`` when it could not start) and why, so a script reading stdout
    never gets an empty file."""
    return document("explain", {"command": command, "exit_status": exit_status, "signals": list(signals),
                                "error": error, "summary": error, "graphs": [], "families": [],
                                "recompilations": []})
