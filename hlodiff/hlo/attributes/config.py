"""Free-form configuration: ``backend_config`` and ``frontend_attributes``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from hlodiff.hlo.scan import group_end
from hlodiff.hlo.attributes.scalars import STRING_RE, fail, parse_string, short, unescape


@dataclass(frozen=True, slots=True)
class BackendConfig:
    """A ``backend_config``: a quoted string (older dumps) or a bare ``{...}`` (JSON or an MLIR-style dict).

    ``text`` is the unescaped content; ``value`` is the decoded JSON, or ``None`` when the text is not JSON (MLIR
    dicts like ``{diag = 78 : ui8}``, opaque strings). Equality uses ``canonical``: re-serialized JSON with sorted
    keys when it decoded, else the text, so key order and spacing never make two configs differ.
    """

    canonical: str
    text: str = field(compare=False)
    value: Any = field(default=None, compare=False)
    is_json: bool = field(default=False, compare=False)


def parse_backend_config(raw: str) -> BackendConfig:
    """Parse a ``backend_config=`` value (see :class:`BackendConfig`)."""
    text = raw.strip()
    quoted = text.startswith('"')
    if quoted:
        text = parse_string(text)
    elif not text.startswith("{"):
        raise fail("backend_config", f"expected a quoted string or {{...}}, got {short(text)}")
    if text.lstrip().startswith(("{", "[")):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            return BackendConfig(json.dumps(value, sort_keys=True, separators=(",", ":")), text, value, True)
    if not quoted and group_end(text, 0) != len(text):
        raise fail("backend_config", "unbalanced brackets in {...}")
    return BackendConfig(text, text)


_FRONTEND_KEY_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*=\s*")
_SEP_RE = re.compile(r"\s*(,|\})")


def parse_frontend_attributes(raw: str) -> dict[str, str]:
    """``frontend_attributes={_xla_compute_type="host", key={json}}`` in text order; strings unescaped."""
    text = raw.strip()
    if not text.startswith("{"):
        raise fail("frontend_attributes", f"expected {{key=value, ...}}, got {short(text)}")
    out: dict[str, str] = {}
    pos = 1
    if re.match(r"\s*\}\s*$", text[pos:]):
        return out
    while True:
        m = _FRONTEND_KEY_RE.match(text, pos)
        if m is None:
            raise fail("frontend_attributes", f"expected key=value at {short(text[pos:])}")
        key, pos = m.group(1), m.end()
        value, pos = _frontend_value(text, pos)
        out[key] = value
        sep = _SEP_RE.match(text, pos)
        if sep is None:
            raise fail("frontend_attributes", f"expected ',' or '}}' at {short(text[pos:])}")
        pos = sep.end()
        if sep.group(1) == "}":
            if text[pos:].strip():
                raise fail("frontend_attributes", f"unexpected {short(text[pos:].strip())} after '}}'")
            return out


def _frontend_value(text: str, pos: int) -> tuple[str, int]:
    if text.startswith('"', pos):
        m = STRING_RE.match(text, pos)
        if m is None:
            raise fail("frontend_attributes", "unterminated string")
        return unescape(m.group(0)[1:-1]), m.end()
    if text.startswith("{", pos):
        end = group_end(text, pos)
        if end < 0:
            raise fail("frontend_attributes", "unbalanced '{'")
        return text[pos:end], end
    raise fail("frontend_attributes", f"expected a string or {{...}} at {short(text[pos:])}")
