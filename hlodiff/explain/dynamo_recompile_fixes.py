"""The facts that only a run's whole set of Dynamo recompilations shows (a dim 0 of three sizes or more: no short last
batch; a Python int whose guard failed once: an int on some calls, a float on others) and the fix row each
recompilation gets from its facts (:func:`choose_fix`), or an XLA recompilation from one fact of Dynamo's story
(:func:`tell_with_fact`).

Apart from :mod:`hlodiff.explain.dynamo_types` because these choose from the fix table (``diff/fix_rules.py``), while
the types only hold and read their own fields.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.diff.fixes import FixChoice, choose
from hlodiff.explain.dynamo_types import _SIZE, DynamoRecompile


def varying_sizes(recompiles: list[DynamoRecompile]) -> None:
    """A tensor's dim 0 that took three sizes or more over Dynamo's size recompilations (8, 3, 5: requests of any
    size) is no epoch's short last batch, which gives two sizes only (the full one and the remainder, the same every
    epoch): those recompilations get the fact ``sizes_vary`` (and lose ``last_call``, which only says that no later
    recompilation came), and their ``seen`` lists the sizes in the order they came (review 6, p08: the batch of 5
    that an 8 followed was told "the last batch is short ... drop_last")."""
    groups: dict[tuple[str, str], list[tuple[DynamoRecompile, int, int]]] = {}
    for r in recompiles:
        m = _SIZE.search(r.guard.guard) if r.kind == "shape" else None
        if m is not None and m.group("dim") == "0":
            groups.setdefault((m.group("name"), m.group("dim")), []).append(
                (r, int(m.group("expected")), int(m.group("actual"))))
    for (name, dim), members in groups.items():
        sizes = list(dict.fromkeys(v for _, a, b in members for v in (a, b)))
        if len(sizes) < 3 or not any(b < a for _, a, b in members):
            continue
        for r, _, _ in members:
            r.facts = (r.facts - {"last_call"}) | {"sizes_vary"}
            r.seen = f"dim {dim} of {name}: {', '.join(map(str, sizes))}"


_OWN_INT_ROWS = frozenset({"sets_loop", "sets_shape", "assigned_in_call", "module_attribute"})


def int_recompiled_once(recompiles: list[DynamoRecompile]) -> None:
    """A Python int (``temperature == 1``) whose guard failed once in the whole run: it was that int at the first
    compile and not at one later call, and both entries served every call after. A number changing from call to
    call fails its guard again; one that is the same number as an int on some calls and a float on others (a YAML
    ``1``, a command line's ``1.0``) fails it once, Dynamo's guard checking the type as well as the value: the
    fact ``int_once`` lets the words name both readings (d14_int_float_temp). Ints with rows of their own (a loop
    bound, a size, a counter, a module's attribute) keep them."""
    counts = Counter(r.subject for r in recompiles if r.kind == "python_value")
    for r in recompiles:
        if "python_int" in r.facts and counts[r.subject] == 1 and not r.facts & _OWN_INT_ROWS:
            r.facts = r.facts | {"int_once"}


_OWN_FLOAT_ROWS = frozenset({"sets_shape", "assigned_in_call", "module_attribute", "number_only_param", "optimizer_lr",
                             "resume_stack_value", "branch_only", "branch_test"})


def float_recompiled_once(recompiles: list[DynamoRecompile]) -> None:
    """A Python float (``G['cfg']['temperature'] == 0.0``) whose guard failed once in the whole run changed once (a
    config a callback set, a warm-up that ended), not from call to call: one recompile for its new value, both graphs
    reused after (review 22, F4: a config dict's value changed once at step 3 was told "changes from call to call").
    The fact ``float_once`` picks that row; floats with rows of their own keep them."""
    counts = Counter(r.subject for r in recompiles if r.kind == "python_value")
    for r in recompiles:
        if "python_float" in r.facts and counts[r.subject] == 1 and not r.facts & _OWN_FLOAT_ROWS:
            r.facts = r.facts | {"float_once"}


def tell_with_fact(recompilation, fact: str, args: dict) -> None:
    """Each cause of an XLA recompilation told by the row for Dynamo's ``fact`` about it (``past_limit``,
    ``eager_break``, ``bridge_graph``, ``step_follows_dynamo``, ...): what Dynamo's story says of that graph."""
    for cause in recompilation.causes:
        rule = choose(cause.kind, frozenset({"dynamo", fact, f"is:{cause.kind}"}))
        cause.fix, cause.fix_rule = FixChoice(rule, args).text, rule.name


def choose_fix(r: DynamoRecompile) -> None:
    r.fix, r.fix_rule = fix_of(r, r.facts)


def fix_of(r: DynamoRecompile, facts: frozenset[str]) -> tuple[str, str]:
    """(fix text, row name) for the recompilation on these facts (its own, or fewer: the live lines, which cannot
    know that no later recompilation comes, leave ``last_call`` out)."""
    rule = choose(r.kind, facts)
    args = {"function": r.function or "the compiled function", "seen": r.seen or r.guard.guard,
            "tensor": r.subject or "an argument", "limit": str(r.limit) if r.limit is not None else "8"}
    return FixChoice(rule, args).text, rule.name
