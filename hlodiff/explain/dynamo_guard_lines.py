"""What the line Dynamo quoted for a failed guard does with the guarded name: bounds a loop with it, tests
membership in it, assigns or grows it, passes it as a size, keys on its ``id()``. Each answer is one fact a fix row
of :mod:`hlodiff.diff.fix_rules` chooses by (an int that sets a shape cannot become a tensor; a counter kept inside
the compiled function breaks its own guard).

Apart from :mod:`hlodiff.explain.dynamo_guard_kinds`, which reads the guard's own text: these read the user's line.
"""

from __future__ import annotations

import re


_LOOP = re.compile(r"^\s*(?:async\s+)?for\b.+?\bin\b(?P<over>.+?):?\s*$|^\s*while\b(?P<cond>.+?):?\s*$")
_NAME_PART = re.compile(r"[A-Za-z_]\w*")


def bounds_loop(name: str | None, code: str | None) -> bool:
    """Whether the guarded value ``name`` (``depth``, ``L['self'].n_layers``) bounds a loop on the line Dynamo
    quoted for its guard: ``for blk in self.blocks[:depth]``, ``for i in range(n)``, ``while i < n``. Such an int
    sets how many times the loop body is traced (Dynamo unrolls it), so it cannot become a tensor; an int used in
    arithmetic (``/ accum``) or as one index (``xs[:, t]``) is not a loop bound."""
    if not name or not code or (m := _LOOP.match(code)) is None:
        return False
    parts = _NAME_PART.findall(name.replace("L['", ".").replace("G['", "."))
    if not parts:
        return False
    word = re.compile(rf"(?<![\w.]){re.escape(parts[-1])}\b" if len(parts) == 1
                      else rf"\b{re.escape(parts[-1])}\b")
    if m.group("cond") is not None:  # while i < n: the int is the loop's bound
        return word.search(m.group("cond")) is not None
    over = m.group("over")
    if word.search(over) is None:
        return False
    # range(n), blocks[:n], blocks[n:], islice(blocks, n): the int counts the items, not a container of them
    return any(re.search(rf"{pattern}", over) for pattern in (r"\brange\s*\(", r"\[[^\]]*:[^\]]*\]",
                                                               r"\bislice\s*\("))


def _as_written(name: str) -> str:
    """A guarded name as the user's code writes it (``L['self'].counter`` -> ``self.counter``, ``G['CALLS']`` ->
    ``CALLS``)."""
    target = re.sub(r"^[LG]\[['\"](\w+)['\"]\]", r"\1", name.strip())
    return re.sub(r"\[['\"](\w+)['\"]\]", r".\1", target)


_LIST_OF_MODULE = re.compile(r"^(?:self|L\[['\"]self['\"]\])(?:\._modules\[['\"][^'\"]+['\"]\])*\.(?P<list>\w+)\[\d+\]$")


def tests_membership(name: str | None, code: str | None) -> bool:
    """Whether the line Dynamo quoted for its guard on one item of a list kept on the module (``L['self'].skip[0]``)
    tests membership in that list (``if i in self.skip:``, ``not in``): the items choose which parts of the forward
    run (layers to drop), and every new choice is a new trace; a per-item mask the code multiplies by serves every
    choice with one graph (round 25, r25_d_layerdrop_outside). Only a test counts: ``x (not) in self.skip`` as the
    condition of an if/elif/while (a comprehension's ``if`` clause included); iterating the list (``for i in
    self.skip``, ``[c for c in self.class_weights]`` inside ``torch.tensor(...)``: the eleventh stop's read) is not."""
    if not name or not code or (m := _LIST_OF_MODULE.match(name.strip())) is None:
        return False
    return re.search(_MEMBERSHIP_TEST.format(list=re.escape(m.group("list"))), code) is not None


_MEMBERSHIP_TEST = (r"\b(?:if|elif|while|and|or)\s+(?:not\s+)?[\w.\[\]'\"]+(?:\([^()]*\))?"
                    r"\s+(?:not\s+)?in\s+self\.{list}\b")
"""An operand (a name, an attribute, an item, a call) tested for membership right after if/elif/while (or a
boolean and/or inside such a test): ``if i in self.skip``, ``elif h not in self.drop_heads``."""


def assigned_on_line(name: str | None, code: str | None) -> bool:
    """Whether the line Dynamo quoted for the guard on ``name`` assigns that very value (``CALLS += 1`` for
    ``G['CALLS']``, ``self.counter += 1`` for ``L['self'].counter``): the compiled function changes what it guarded,
    so its own call breaks the guard for the next one (a counter kept inside). A line that only reads it is not."""
    if not name or not code:
        return False
    return re.match(rf"^\s*{re.escape(_as_written(name))}\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)", code) is not None


_GROWS = r"(?:\.(?:append|extend|insert|add|update|setdefault)\s*\(|\s*\+=|\[[^\]]*\]\s*=(?!=))"
"""What adds to a container in place: a list's ``append``/``extend``/``insert`` (or ``+=``), a set's ``add``, a
dict's ``update``/``setdefault`` or an item assigned by key."""


def grown_on_line(name: str | None, code: str | None) -> bool:
    """Whether the line Dynamo quoted for the guard on the container ``name`` (``len(self.norm_history) == 3``,
    ``not self.norm_history``) adds to that very container (``self.norm_history.append(out.norm())``): the compiled
    function grows what it guarded, so every call breaks the guard the call before it installed, whatever the loop
    passes (Dynamo round 23, d23_norm_history). A line that reads it (``torch.stack(bank)``: a bank the loop grows,
    dyn_closure_bank) or a hook that appends to it from another line (review3_hook_guard's lambda) is not."""
    if not name or not code:
        return False
    return re.match(rf"^\s*{re.escape(_as_written(name))}{_GROWS}", code) is not None


_SIZE_CALL = re.compile(r"\b(?:split|split_with_sizes|view|reshape|unflatten|expand)\s*\((?P<args>[^()]*(?:\([^()]*\)[^()]*)*)\)")
"""Calls whose integer arguments are sizes (``torch.split(h, lengths)``, ``x.view(b, n, -1)``): a Python int there
sets the shape of what is traced. Creation calls (``torch.full((n, 1), t)``) are left out: an int may be their fill
value, not a size."""


def sizes_on_line(name: str | None, code: str | None) -> bool:
    """Whether the guarded int ``name`` (``lengths[0]``, ``L['self'].n``) is a size on the line Dynamo quoted for its
    guard: an argument of a call that takes sizes (``torch.split(h, lengths)``), or the only bound of a slice
    (``x[:n]``, ``x[n:]``). Such an int sets a shape, which no tensor can (Dynamo round 11, d11_split_lengths: told
    before XLA's graph for it is read, live). An int in arithmetic (``/ accum``), one index (``xs[:, t]``) or a
    window at one length (``x[t:t + 16]``) is not."""
    if not name or not code or _LOOP.match(code):  # a loop's header slices a container: bounds_loop tells it
        return False
    parts = _NAME_PART.findall(name.replace("L['", ".").replace("G['", "."))
    if not parts:
        return False
    word = rf"(?<![\w.]){re.escape(parts[-1])}\b" if len(parts) == 1 else rf"\b{re.escape(parts[-1])}\b"
    if any(re.search(word, m.group("args")) for m in _SIZE_CALL.finditer(code)):
        return True
    return re.search(rf"\[[^\]]*?(?::\s*{word}\s*[\],]|[\[,]\s*{word}\s*:\s*[\],])", code) is not None


def identity_on_line(name: str | None, code: str | None) -> bool:
    """Whether the line Dynamo quoted for an object-identity guard on ``name`` reads that object's ``id()``
    (``key = id(x)`` for ``___check_obj_id(x, ...)``): the code itself keys on which object came (an id()-keyed
    cache), so every new object (a fresh batch tensor each call) fails the guard -- unlike an enum member or a
    sentinel compared with ``is``, which picks one of a few objects (Dynamo round 24, d24_id_cache)."""
    if not name or not code:
        return False
    statement = code.split("#", 1)[0]
    return re.search(rf"(?<![\w.])id\(\s*{re.escape(name)}\s*\)", statement) is not None
