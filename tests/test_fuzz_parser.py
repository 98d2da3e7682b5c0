"""Mutated real dumps never make the parser fail with anything but a located HlodiffError.

The dumps are the committed fixtures' XLA dump modules (real JAX and torch_xla runs, before and after XLA's
optimizations), plus the public corpus of ../shared when it is checked out beside the repo, so the test runs on a
fresh clone too (it once drew an index into an empty list there: Hypothesis' `max_value=-1 < min_value=0`)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, corpus_files
from hlodiff.errors import HlodiffError
from hlodiff.hlo import parse_module

SOURCES = [p.read_text() for p in sorted(FIXTURES.glob("*/*/dump/module_*_optimizations.txt")) + corpus_files()
           if p.stat().st_size < 60_000]
SYNTAX = list('(){}[],=%:"/*<>?.\n ') + ["ROOT ", "ENTRY ", "HloModule ", "->", "/*index=5*/", "...", "\\"]

mutation = st.tuples(st.sampled_from(["delete", "insert", "duplicate", "truncate", "swap"]),
                     st.floats(0, 1), st.floats(0, 1), st.sampled_from(SYNTAX))


def mutate(text: str, steps) -> str:
    for kind, a, b, token in steps:
        i = int(a * len(text))
        j = min(len(text), i + int(b * 40))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + token + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "truncate":
            text = text[:i]
        else:
            text = text[:i] + text[j:j + (j - i)] + text[i:j] + text[j + (j - i):]
    return text


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SOURCES), st.lists(mutation, min_size=1, max_size=4))
def test_mutated_dump_parses_or_fails_with_location(source, steps):
    text = mutate(source, steps)
    try:
        parse_module(text, path="fuzz.hlo")
    except HlodiffError as err:
        assert re.match(r"fuzz\.hlo:\d+:\d+: \S", str(err)), str(err)
        assert "\n" not in str(err).rstrip("\n")
