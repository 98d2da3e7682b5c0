"""compare-runs' reason words are rows of a table keyed by reason (:data:`KEY_DIFFERS_WORDS`, :data:`SAME_KEY_WORDS`
in :mod:`hlodiff.render.across_runs_reasons`): every reason the analysis can give is said with the evidence behind
it (the option and its two values, the threshold and the measured value, the user's line), and a reason added to
:data:`hlodiff.explain.across_runs.REASONS` without words fails here."""

from __future__ import annotations

import pytest

from hlodiff.explain.across_runs import CANNOT_DESERIALIZE, REASONS, RELATIVE_FOLDER, Verdict
from hlodiff.explain.program_differences import SAME_KEY_PROGRAM
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.hlo.model import SourceFrame
from hlodiff.render.across_runs import reason_text
from hlodiff.render.across_runs_reasons import KEY_DIFFERS_WORDS, PIECES_WORDS, SAME_KEY_WORDS

LINE = SourceFrame("/home/u/train.py", 42)


def _diff(name: str = "xla_cpu_enable_fast_math", a: str | None = "false", b: str | None = "true",
          source: str = "XLA_FLAGS") -> KeyDifference:
    return KeyDifference(source, name, a, b)


KEY_ROWS = {
    "xla_flag": ({"differences": [_diff(), _diff("xla_other")]},
                 ["XLA flag --xla_cpu_enable_fast_math is true in run B, false in run A", "(and 1 more)"]),
    "compile_option": ({"differences": [_diff("num_replicas", "1", None, "compile_options")]},
                       ["compile option num_replicas is not set in run B, 1 in run A"]),
    "other_cache_folder": ({"differences": [_diff("cache_dir", "/c/a", "/c/b", "compile_options")]},
                           ["run B's cache folder is /c/b, run A's /c/a", "xla_gpu_per_fusion_autotune_cache_dir"]),
    "device_count": ({"differences": [_diff("XLA_FLAGS device count", "1", "8", "XLA_FLAGS")]},
                     ["another device configuration", "8 in run B, 1 in run A", "topology"]),
    "metadata_in_key": ({"differences": [_diff("line", "train.py:10", "train.py:11", "metadata")]},
                        ["differ only in their source lines (train.py:10 in run A, train.py:11 in run B)"]),
    "renamed": ({"differences": [_diff("module", "jit_step", "jit_train_step", "name")]},
                ["run A compiled it as jit_step, run B as jit_train_step", "name is in the key"]),
    "version": ({"differences": [_diff("jaxlib", "0.4.30", "0.5.0", "version")]},
                ["jaxlib is 0.5.0 in run B, 0.4.30 in run A"]),
    "elided_constants": ({"program_line": LINE}, ["elides large constants", "used at train.py:42"]),
    "debug_metadata": ({"differences": [_diff("debug metadata", "0", "78", "hlo")]},
                       ["the same computation under another graph hash", "0 instructions in run A, 78 in run B"]),
    "unknown": ({}, ["loaded, not compiled"]),
}

SAME_ROWS = {
    "below_compile_time": ({"measured": 0.25, "threshold": 1.0},
                           ["compiled it in 0.25 s", "jax_persistent_cache_min_compile_time_secs (1.00 s)"]),
    "below_entry_size": ({"measured": 512.0, "threshold": 4096.0},
                         ["entry (512 bytes)", "jax_persistent_cache_min_entry_size_bytes (4096 bytes)"]),
    "exceeds_cache_size": ({"measured": 9000.0, "threshold": 100.0},
                           ["entry (9000 bytes) is larger", "jax_compilation_cache_max_size, 100 bytes"]),
    "write_failed": ({"detail": "PermissionError: /c"}, ["writing it failed (PermissionError: /c)"]),
    "read_failed": ({"detail": "error: truncated"}, ["could not read it (error: truncated)"]),
    "host_callbacks": ({"program_line": LINE}, ["uses host callbacks (at train.py:42)"]),
    "cache_disabled": ({}, ["the cache was disabled or not initialized"]),
    "cache_configured_late": ({"called_at": LINE}, ["no cache was configured yet", "(called at train.py:42)"]),
    "no_cache": ({}, ["run B never looked at a persistent cache"]),
    "other_cache_folder": ({"differences": [_diff("cache_dir", "/c/a", "/c/b", "compile_options")]},
                           ["run A wrote it to /c/a, but run B's cache folder is /c/b"]),
    "entry_missing": ({}, ["the cache run B read has no such entry"]),
    "not_loadable": ({"detail": "Deserializing failed"}, ["found but could not be loaded (Deserializing failed)"]),
    "check_contents": ({}, ["recompiled it to check the cache", "CacheVerificationError"]),
    "unknown": ({"entry_in_cache": True}, ["its entry is in the cache folder, yet run B compiled it"]),
}


def test_every_reason_has_words():
    """A reason the analysis gives with no row would be said by a fallback that names no evidence."""
    worded = set(KEY_DIFFERS_WORDS) | set(SAME_KEY_WORDS) | set(PIECES_WORDS)
    assert set(REASONS) - worded == set()
    assert worded - set(REASONS) == set()  # a row for a reason never given is dead words


def test_every_row_is_tested():
    assert set(KEY_ROWS) == set(KEY_DIFFERS_WORDS)
    assert set(SAME_ROWS) == set(SAME_KEY_WORDS)


@pytest.mark.parametrize("reason", sorted(KEY_ROWS))
def test_key_differs_row(reason):
    fields, words = KEY_ROWS[reason]
    text = reason_text(Verdict("jit_step", "miss_key_differs", reason, **fields))
    assert text.startswith("compiled again: ")
    for w in words:
        assert w in text


@pytest.mark.parametrize("reason", sorted(SAME_ROWS))
def test_same_key_row(reason):
    fields, words = SAME_ROWS[reason]
    text = reason_text(Verdict("jit_step", "miss_same_key", reason, **fields))
    assert text.startswith("compiled again: ")
    for w in words:
        assert w in text


def test_a_row_without_its_difference_says_it_does_not_know():
    """A row whose words quote a difference, given none, falls to the verdict's words for an unknown reason."""
    assert reason_text(Verdict("p", "miss_key_differs", "renamed")) == \
        reason_text(Verdict("p", "miss_key_differs", "unknown"))
    assert reason_text(Verdict("p", "miss_same_key", "other_cache_folder")) == \
        reason_text(Verdict("p", "miss_same_key", "unknown"))


def test_not_loadable_by_the_backend_and_another_program_under_the_key():
    known = next(iter(CANNOT_DESERIALIZE.values()))
    other = _diff("its HLO", "a", "b", SAME_KEY_PROGRAM)
    text = reason_text(Verdict("p", "miss_same_key", "not_loadable", detail=known, differences=[other]))
    assert text.startswith("compiled again: the same key: its entry is in the cache folder, and this backend cannot")
    assert "run B's program is not the one under this key" in text


def test_entry_missing_under_a_relative_cache_folder_says_where_each_run_looked():
    # compare-runs round 6 (Hydra's per-run working folder): the key matched, the folder did not
    relative = KeyDifference("compile_options", RELATIVE_FOLDER, "cache", "cache")
    text = reason_text(Verdict("jit_step", "miss_same_key", "entry_missing", differences=[relative]))
    assert "the relative path cache, resolved against each run's working directory" in text
    assert "has no such entry" not in text
