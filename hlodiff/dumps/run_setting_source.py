"""Where the flag an ``if`` tests comes from: the run's environment or its command line, read from the user's source.

Between two runs against one persistent cache, a line traced by one run only is most often a deliberate change: an
environment variable (``CLIP = os.environ.get("CLIP") == "1"``, then ``if CLIP:``) or a command-line option
(``args.clip``) switched a piece of the program on (new-user review 15, F5). Per step, the same ``if`` would be a
branch to make traced (``jnp.where``); per run it is a setting, and what the user needs is its name. The source on
disk says it: the ``if`` around the line, the names its test reads, and the assignment that made each (in the
module or the function holding the ``if``). Only reading: a file not on disk, or a name made any other way, gives
None.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from hlodiff.dumps.python_source import parse_file, enclosing_if

ENVIRONMENT, COMMAND_LINE = "environment", "command line"
"""Where a setting comes from (:attr:`RunSetting.origin`)."""

ENV_READERS = frozenset({"getenv", "get", "environ"})
"""``os.getenv(...)``, ``os.environ.get(...)``, ``os.environ[...]``: the calls and subscripts that read a variable."""


@dataclass(frozen=True, slots=True)
class RunSetting:
    """The setting an ``if`` tests: ``name`` as the test reads it, where it comes from (:data:`ENVIRONMENT` /
    :data:`COMMAND_LINE`), the variable or option (``CLIP``, ``--clip``; empty when only ``sys.argv`` is read), the
    line that reads it, and the ``if``'s own line."""

    name: str
    origin: str
    variable: str
    line: int
    if_line: int


def setting_behind(file: str, line: int | None) -> RunSetting | None:
    """The run setting whose value decides whether ``file:line`` is traced: the innermost ``if`` around the line
    tests a name made from ``os.environ`` / ``os.getenv`` or from the command line (``sys.argv``, argparse's
    ``parse_args()``), directly or through one assignment. None when the file is not on disk, no ``if`` holds the
    line, or its test reads nothing from outside the program."""
    if_line = enclosing_if(file, line)
    tree = parse_file(file) if if_line is not None else None
    if tree is None:
        return None
    test = next((n.test for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno == if_line), None)
    if test is None:
        return None
    direct = _read_from_outside(test)
    if direct is not None:
        return RunSetting(_text(test), direct[0], direct[1], if_line, if_line)
    for node in ast.walk(test):
        found = _made_from_outside(tree, node, if_line)
        if found is not None:
            return found
    return None


def _made_from_outside(tree: ast.Module, node: ast.AST, if_line: int) -> RunSetting | None:
    """``node`` of the test (a name, or ``args.clip``) made from the environment or the command line."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        value = _assigned_value(tree, node.id, if_line)
        origin = _read_from_outside(value[1]) if value is not None else None
        if origin is not None:
            return RunSetting(node.id, origin[0], origin[1], value[0], if_line)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        value = _assigned_value(tree, node.value.id, if_line)
        if value is not None and _parses_arguments(value[1]):
            return RunSetting(f"{node.value.id}.{node.attr}", COMMAND_LINE, "--" + node.attr.replace("_", "-"),
                              value[0], if_line)
    return None


def _assigned_value(tree: ast.Module, name: str, before: int) -> tuple[int, ast.AST] | None:
    """The line and value of the last plain assignment ``name = ...`` before line ``before`` (anywhere in the
    file: a flag is most often made at the module's top and read inside the jitted function)."""
    best: tuple[int, ast.AST] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and node.lineno < before:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                if best is None or node.lineno > best[0]:
                    best = (node.lineno, node.value)
    return best


def _read_from_outside(expr: ast.AST) -> tuple[str, str] | None:
    """(origin, variable) when ``expr`` reads the environment or the command line, else None."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and _is_env_read(node.func) and node.args:
            return ENVIRONMENT, _constant(node.args[0])
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            return ENVIRONMENT, _constant(node.slice)
        if isinstance(node, ast.Attribute) and node.attr == "argv" and _named(node.value) == "sys":
            return COMMAND_LINE, ""
    return None


def _is_env_read(func: ast.AST) -> bool:
    """``os.getenv`` / ``getenv`` / ``os.environ.get`` / ``environ.get``."""
    if isinstance(func, ast.Attribute) and func.attr == "getenv":
        return _named(func.value) == "os"
    if isinstance(func, ast.Name):
        return func.id == "getenv"
    return isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value)


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or _named(node) == "environ"


def _parses_arguments(value: ast.AST) -> bool:
    """``parser.parse_args()`` / ``parse_known_args()[0]``: the object whose attributes are command-line options."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in ("parse_args", "parse_known_args") for n in ast.walk(value))


def _named(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _constant(node: ast.AST) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _text(node: ast.AST) -> str:
    return ast.unparse(node)
