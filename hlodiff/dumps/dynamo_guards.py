"""Dynamo's verbose forms, read for :mod:`hlodiff.dumps.dynamo_log`: ``TORCH_LOGS=+dynamo`` (or ``guards``) prints
no recompiles channel, only each compile's start with the user's stack and each compile's guard tree; and the
warning Dynamo prints when it hits its recompile limit. The failed guard is recovered by comparing the guard trees
of two successive compiles of a frame, in the words the recompiles channel uses."""

from __future__ import annotations

import re

from hlodiff.hlo.model import SourceFrame

_FILE_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')
_CID = re.compile(r"\[(?P<cid>\d+/\d+)(?:_\d+)?\] (?P<body>.*)$")
_START = re.compile(r"^torchdynamo start compiling (?P<fn>\S+) (?P<file>.+):(?P<line>\d+), stack")
_GUARD_LEAF = re.compile(r"^\[__guards\] [| ]*\+- (?P<kind>[A-Z_]+): (?P<guard>.*)$")
_TREE_LINE = re.compile(rb"\[(?P<cid>\d+/\d+)\] \[__guards\] (?P<latency>Guard eval latency)?")
_LIMIT = re.compile(r"^torch\._dynamo hit config\.(?P<name>recompile_limit|cache_size_limit) \((?P<limit>\d+)\)")


def guard_tree_lines(data: bytes):
    """``(compile id, whether the line ends its tree)`` for each guard-tree line of ``data`` (whole lines of a
    verbose log): Dynamo ends each compile's tree with ``Guard eval latency``, so a live reader knows which trees it
    holds in full."""
    for m in _TREE_LINE.finditer(data):
        yield m.group("cid").decode(), m.group("latency") is not None


class VerboseReader:
    """What ``TORCH_LOGS=+dynamo`` (or ``guards``) prints instead of the recompiles channel: each compile's start
    with the user's stack (``[0/1] torchdynamo start compiling f FILE:LINE, stack ...`` then ``File ...`` lines) and
    each compile's guard tree (``[__guards] | +- EQUALS_MATCH: G['scale'] == 1.0  # ...``); and the warning
    Dynamo prints when it hits its recompile limit. Without a recompiles record, the guard that failed before
    compile F/K is the one of F/K-1 that F/K no longer holds (Dynamo tried the newest entry first)."""

    def __init__(self, failure, restart):
        self.failure = failure  # dynamo_log's GuardFailure maker (a guard's text and its source comment)
        self.restart = restart  # dynamo_log's CacheRestart (handed in: this module is read for dynamo_log only)
        self.stacks: dict[str, list[SourceFrame]] = {}
        self.starts: dict[str, tuple[str, SourceFrame]] = {}
        self.guards: dict[str, list[tuple[str, str]]] = {}
        self.open: str | None = None
        self.into: list[SourceFrame] | None = None  # the stack the next `File ...` lines belong to
        self.restarts: list[tuple[str, str, SourceFrame, list[SourceFrame]]] = []
        """A compile id started again for the same function after its guard tree was printed (it had finished):
        Dynamo's cache was emptied in between (torch._dynamo.reset()); its stack holds the user's call."""

    def line(self, text: str, prefix, lineno: int, log) -> None:
        m = _CID.search(text, prefix.end() if prefix else 0)
        if m is None:
            return
        cid, body = m.group("cid"), m.group("body")
        if (start := _START.match(body)) is not None:
            begun = (start.group("fn"), SourceFrame(start.group("file"), int(start.group("line")), start.group("fn")))
            if self.starts.get(cid) == begun and self.guards.get(cid):
                self.restarts.append((cid, begun[0], begun[1], []))  # the first compile's stack and tree are kept
                self.guards[cid], self.into, self.open = [], self.restarts[-1][3], cid
                return
            self.starts[cid] = begun
            self.stacks[cid], self.open = [], cid
            self.into = self.stacks[cid]
        elif self.open == cid and (f := _FILE_LINE.match(body)) is not None:
            self.into.append(SourceFrame(f.group("file"), int(f.group("line")), f.group("fn")))
        elif (g := _GUARD_LEAF.match(body)) is not None:
            self.guards.setdefault(cid, []).append((g.group("kind"), g.group("guard").strip()))
        elif (limit := _LIMIT.match(body)) is not None:
            log.limit_hits.append((cid, int(limit.group("limit"))))

    def finish(self, log) -> None:
        for c in log.compiles:  # so far the recompiles channel's own records: placed from the trees when it is silent
            c.failures[:] = [self._placed(f) for f in c.failures]
        for cid, fn, definition, stack in self.restarts:
            users = [f for f in stack if not f.is_library]
            log.restarts.append(self.restart(cid, fn, definition, users[-1] if users else None))
        for cid, (fn, definition) in self.starts.items():
            have = next((c for c in log.compiles if c.compile_id == cid), None)
            c = have or log.compile(cid)
            c.function, c.definition = c.function or fn, c.definition or definition
            users = [f for f in self.stacks.get(cid, []) if not f.is_library]
            c.call = c.call or (users[-1] if users else None)
            c.resume = fn.startswith("torch_dynamo_resume_in_")
            self._failure_of(c)
        # `TORCH_LOGS=guards` (with or without recompiles) prints no compile starts: each guard tree is a compile
        # all the same (d14_late_hook_control: one tree, Dynamo compiled once; without it the log was "not a
        # Dynamo log" and the bridge's own graphs were told as the user's)
        for cid in self.guards:
            if cid not in self.starts:
                self._failure_of(next((c for c in log.compiles if c.compile_id == cid), None) or log.compile(cid))
        log.compiles.sort(key=lambda c: (c.frame, c.attempt))

    def _placed(self, f):
        """A failed guard the recompiles channel printed without a source line (a tensor's size, dtype,
        requires_grad) given the line Dynamo's guard tree of the compile it failed against names for it: the
        first line of the compiled function that uses the tensor (d14_empty_boxes: `[: boxes.shape[0]]`)."""
        if f.against is None:
            return f
        if f.source is not None and f.source.file.startswith("<frozen"):
            comment = _user_line_above(self.guards.get(f.against, []), f.guard)
            return self.failure(f.against, f"{f.guard}  # {comment}") if comment else f
        if f.source is not None:
            return f
        comment = _tree_comment(self.guards.get(f.against, []), f.guard)
        return self.failure(f.against, f"{f.guard}  # {comment}") if comment else f

    def _failure_of(self, c) -> None:
        """A recompile without a recompiles record: the guard of the compile before that the tree no longer holds."""
        if c.recompiled and not c.failures:
            frame, attempt = c.compile_id.split("/")
            before = f"{frame}/{int(attempt) - 1}"
            failed = _failed_guard(self.guards.get(before, []), self.guards.get(c.compile_id, []))
            if failed is not None:
                c.failures.append(self.failure(before, failed))


_GUARD_ORDER = ("TENSOR_MATCH", "EQUALS_MATCH", "TRUE_MATCH", "FALSE_MATCH", "LENGTH_CHECK", "DICT_CONTAINS",
                "DICT_KEYS_MATCH", "TYPE_MATCH", "ID_MATCH", "GLOBAL_STATE")
_RENUMBERED = re.compile(r"(__builtins_dict___|__optimizer_\d+_\d+_c)\d+")
"""Names Dynamo numbers anew in every compile (``G['__builtins_dict___0']['iter']`` then ``___2``): the same guard
on the same object, no failure (dyn_eval_mode: it hid the module's ``training == True``)."""
_CHECK_TENSOR = re.compile(r"^check_tensor\((?P<source>[^,]+), \w+, DispatchKeySet\([^)]*\), torch\.(?P<dtype>\w+), "
                           r"device=[^,]+, requires_grad=(?P<grad>True|False), size=\[(?P<size>[^\]]*)\]")
_TYPE_ID = re.compile(r"^___check_type_id\((?P<source>[^,]+), (?P<id>\d+)\)$")
_TORCH_DTYPES = {"float32": "Float", "bfloat16": "BFloat16", "float16": "Half", "float64": "Double", "int64": "Long",
                 "int32": "Int", "bool": "Bool"}


_ABSENT_ATTR = re.compile(r"^not hasattr\(")
"""``not hasattr(L['self'], 'log_prior')``: an attribute the code tested for and did not find. When it is gone the
attribute was set since; the type checks of the dicts it was looked up in (``self._buffers``) go with it, so it
ranks before them (d21_logit_adjust_late). Dynamo's own ``hasattr(x, '_dynamo_dynamic_indices') == False`` keeps
the tail."""


def _rank(kind_guard: tuple[str, str]) -> float:
    kind, guard = kind_guard
    if kind == "NO_HASATTR" and _ABSENT_ATTR.match(guard.strip()):
        return _GUARD_ORDER.index("TYPE_MATCH") - 0.5
    return _GUARD_ORDER.index(kind) if kind in _GUARD_ORDER else len(_GUARD_ORDER)


def _failed_guard(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> str | None:
    """The guard of the earlier compile the later one no longer holds, in the recompiles channel's words where it
    has them (a tensor's size, dtype or requires_grad; a local ``L['n']`` named ``n``)."""
    now = {_code(g) for _, g in after}
    gone = [(k, g) for k, g in before if _code(g) not in now]
    if not gone:
        return _state_filled(before, after)
    flipped = [(k, g) for k, g in gone if _flipped(g, after)]
    if flipped:  # the value a branch read changed; what that branch alone read is gone with it (review 17, C2)
        gone = flipped
    gone.sort(key=_rank)
    ids = {m.group("source"): m.group("id") for k, g in after if k == "TYPE_MATCH"
           and (m := _TYPE_ID.match(g.partition("  # ")[0].strip())) is not None}
    for k, g in gone:
        # an object of another class (a task's head): Dynamo checks its type before any guard under it, so the
        # type is what failed, not the first of its old attributes' guards (dyn_head_per_task)
        if k == "TYPE_MATCH" and (m := _TYPE_ID.match(g.partition("  # ")[0].strip())) is not None \
                and ids.get(m.group("source"), m.group("id")) != m.group("id"):
            gone = [(k, g)]
            break
    kind, guard = gone[0]
    code, _, comment = guard.partition("  # ")
    code = code.strip()
    if kind == "TENSOR_MATCH" and (old := _CHECK_TENSOR.match(code)) is not None:
        new = next((m for _, g in after if (m := _CHECK_TENSOR.match(g.partition("  # ")[0].strip())) is not None
                    and m.group("source") == old.group("source")), None)
        name = _local(old.group("source"))
        if new is not None:
            if old.group("dtype") != new.group("dtype"):
                return (f"tensor '{name}' dtype mismatch. expected {_TORCH_DTYPES.get(old.group('dtype'), old.group('dtype'))}"
                        f", actual {_TORCH_DTYPES.get(new.group('dtype'), new.group('dtype'))}")
            if old.group("grad") != new.group("grad"):
                return f"tensor '{name}' requires_grad mismatch. expected requires_grad={int(old.group('grad') == 'True')}"
            a, b = old.group("size").split(", "), new.group("size").split(", ")
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    return f"tensor '{name}' size mismatch at index {i}. expected {x}, actual {y}"
    text = re.sub(r"\bL\['(\w+)'\]", r"\1", code)
    return f"{text}  # {comment}" if comment else text


_VALUE_GUARD = re.compile(r"^(?P<subject>.+?) == (?P<value>.+)$")


def _flipped(guard: str, after: list[tuple[str, str]]) -> bool:
    """A value guard (``training == True``, ``L['mode'] == 'train'``) whose subject the later compile guards with
    another value: the guard that failed. The guards of what only the old branch read are gone too (eval mode's
    batch norm reads no ``num_batches_tracked``: its tensor check, ranked first, was told as the failure, with a
    "keep that value the same" fix on a mode switch: review 17, C2 under TORCH_LOGS=+dynamo)."""
    m = _VALUE_GUARD.match(_code(guard))
    if m is None:
        return False
    subject = m.group("subject").strip()
    return any((n := _VALUE_GUARD.match(_code(g))) is not None and n.group("subject").strip() == subject
               and n.group("value") != m.group("value") for _, g in after)


def _code(guard: str) -> str:
    """A guard's check without its source comment: the same check traced from another line (SGD's
    ``grad is not None`` at sgd.py:358, then :361) is the same guard, not a failed one (d17_sgd_momentum_control)."""
    return _RENUMBERED.sub(r"\1", guard.partition("  # ")[0].strip())


_STATE_ENTRY = re.compile(r"L\['self'\]\.state\[list\(dict\.keys\(L\['self'\]\.state\)\)\[\d+\]\]")


def _state_filled(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> str | None:
    """No guard of the earlier compile is gone, but the later one guards what a compiled optimizer step's state
    entries hold (``...state[...]['momentum_buffer']``): they were empty at the earlier compile, as the recompiles
    channel prints it (``len(self.state[...]) != 0``)."""
    had = {_code(g) for _, g in before}
    entry = next((m.group(0) for _, g in after if _code(g) not in had and (m := _STATE_ENTRY.search(g))), None)
    return None if entry is None else re.sub(r"\bL\['(\w+)'\]", r"\1", f"len({entry}) != 0")


_TENSOR_FAILURE = re.compile(r"^tensor '(?P<name>.+?)' (?:size|dtype|requires_grad|stride|rank|dispatch key)")


def _tree_comment(tree: list[tuple[str, str]], failure: str) -> str | None:
    """The source comment (``code  # file:line in fn``) of the tree's guard a recompiles record's failure is."""
    tensor = _TENSOR_FAILURE.match(failure)
    for kind, guard in tree:
        code, _, comment = guard.partition("  # ")
        code = code.strip()
        if tensor is not None:
            m = _CHECK_TENSOR.match(code) if kind == "TENSOR_MATCH" else None
            hit = m is not None and _local(m.group("source")) == tensor.group("name")
        else:
            hit = re.sub(r"\bL\['(\w+)'\]", r"\1", code) == failure.strip()
        if hit and comment.strip():
            return comment.strip()
    return None


_ROOT = re.compile(r"^(?:G|L)\[['\"][^'\"]+['\"]\]")


def _user_line_above(tree: list[tuple[str, str]], failure: str) -> str | None:
    """For a failed guard whose source line is inside a frozen module (``G['os'].environ._data[b'NET_DEBUG'] ==
    b'0'`` at ``<frozen os>:680``, the stdlib's ``__getitem__`` that ``os.environ.get`` ran), the source comment
    of the user's line that reached it: the nearest guard above it in the compile's tree on the same root object
    (``___check_type_id(G['os'].environ, ...)  # if os.environ.get("NET_DEBUG") == "1":  # net.py:33 in
    forward``). Dynamo prints a guard's accessors before the guards under them, so that line is the read in the
    compiled function (d23_env_debug)."""
    root = _ROOT.match(failure.strip())
    if root is None:
        return None
    at = next((i for i, (_, g) in enumerate(tree) if _code(g) == _code(failure)), None)
    if at is None:
        return None
    for _, guard in reversed(tree[:at]):
        code, _, comment = guard.partition("  # ")
        file = re.search(r"# (?P<file><[^>]+>|\S+?):\d+ in \S+\s*$", comment)
        if root.group(0) in code and file is not None and not file.group("file").startswith("<"):
            return comment.strip()
    return None


def _local(source: str) -> str:
    m = re.fullmatch(r"L\['(\w+)'\]", source.strip())
    return m.group(1) if m else source.strip()
