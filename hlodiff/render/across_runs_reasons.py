"""Why a compilation of ``compare-runs``' run B did not come from the cache, in words: the graph diff's cause for
another HLO, else a row of the verdict's table keyed by reason (:data:`KEY_DIFFERS_WORDS` for the same HLO under
another key, :data:`SAME_KEY_WORDS` for the same HLO and key), each quoting the evidence behind it. A reason of
:data:`hlodiff.explain.across_runs.REASONS` without a row fails ``tests/test_compare_runs_words.py``.
:mod:`hlodiff.render.across_runs` puts these words in the headline, the lines and the ``--json`` body.
"""

from __future__ import annotations

from collections.abc import Callable

from hlodiff.dumps.compile_cache import CacheCompilation
from hlodiff.explain.across_runs_torch import LOOKED_ELSEWHERE
from hlodiff.explain.across_runs import CANNOT_DESERIALIZE, NO_DUMP, RELATIVE_FOLDER, Verdict
from hlodiff.explain.program_differences import PRECISION_ATTRIBUTE, SAME_KEY_PROGRAM
from hlodiff.explain.run_verdicts import RECORDED_FLAGS


def why_text(v: Verdict) -> str:
    """Why a compilation of B did not come from the cache (the part after "compiled again"): the graph diff's
    cause, else the row of its verdict's table for its reason (a row that finds its evidence missing gives None,
    and the verdict's words for a reason nothing explains stand instead)."""
    if v.in_pieces:
        return PIECES_WORDS[v.reason or ""]
    if v.verdict == "miss_hlo_differs":
        return _hlo_differs_words(v)
    if v.verdict == "miss_key_differs":
        row = KEY_DIFFERS_WORDS.get(v.reason or "unknown", _key_not_captured)
        return row(v) or _key_not_captured(v)
    same = "the same key" if _other(v) else "the same HLO and key"
    row = SAME_KEY_WORDS.get(v.reason or "unknown", _same_key_unexplained)
    return row(v, same) or _same_key_unexplained(v, same)


def _hlo_differs_words(v: Verdict) -> str:
    """Another HLO: the graph diff's cause and its line (and the device counts when they differ)."""
    built = ""
    if v.reason == "device_count" and v.differences:
        d = v.differences[0]
        built = f": built for {d.b} devices, run A's for {d.a} ({d.name})"
    if v.cause is None:
        return f"its HLO differs from run A's{built}"
    where = v.cause.locations[0] if v.cause.locations else None
    at = f" at {short_line(where)}" if where is not None else ""
    both = ("; every line they name is traced in both runs: the call decided how often"
            if v.at_call and v.called_at is not None else "")
    return f"its HLO differs from run A's{built} ({v.cause.kind}{at}: {v.cause.summary}{both})"


# -- miss_key_differs: the same HLO under another key -----------------------------------------------------------------

def _key_option(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    what = {"XLA_FLAGS": "XLA flag --", "debug_options": "XLA option "}.get(d.source, "compile option ")
    more = f" (and {len(v.differences) - 1} more)" if len(v.differences) > 1 else ""
    inputs = f"; the key's inputs that differ: {', '.join(v.key_components)}" if v.key_components else ""
    recorded = ("; XLA leaves it out of the options it dumps, and each run's own XLA_FLAGS (its "
                "hlodiff-record.json) holds it: JAX hashes XLA_FLAGS into the key" if v.detail == RECORDED_FLAGS
                else "")
    return (f"the same HLO under another cache key: {what}{d.name} is {value_words(d.b)} in run B, "
            f"{value_words(d.a)} in run A{more}{inputs}{recorded}")


def _key_cache_folder(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return (f"another cache key: run B's cache folder is {value_words(d.b)}, run A's {value_words(d.a)} (JAX "
            "writes the folder into the compile options it hashes: xla_gpu_per_fusion_autotune_cache_dir)")


def _key_devices(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    if d.source == "module":  # the module header's count: the same computation built for other devices
        return (f"the same computation under another cache key, built for {value_words(d.b)} devices in run B and "
                f"{value_words(d.a)} in run A (the module's {d.name}): the device count is part of the key")
    return (f"the same HLO under another cache key: run B ran on another device configuration ({d.name} is "
            f"{value_words(d.b)} in run B, {value_words(d.a)} in run A; JAX hashes the devices' topology, not the "
            "flag)")


def _key_source_lines(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return f"another cache key; the two programs differ only in their source lines ({d.a} in run A, {d.b} in run B)"


def _key_renamed(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return (f"the same HLO under another name: run A compiled it as {d.a}, run B as {d.b} (the module's "
            "name is in the key)")


def _key_version(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return f"the same HLO under another cache key: {d.name} is {value_words(d.b)} in run B, {value_words(d.a)} in run A"


def _key_elided_constants(v: Verdict) -> str:
    at = f", used at {short_line(v.program_line)}" if v.program_line is not None else ""
    return ("another cache key; the HLO texts are the same but XLA's text dump elides large constants "
            f"(constant({{...}}){at}), which may differ")


def _key_debug_metadata(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return (f"the same computation under another graph hash: op metadata in {d.a} instructions in run A, {d.b} "
            "in run B (torch_xla's debug settings)")


def _key_not_captured(v: Verdict) -> str:
    """The same HLO, another key, and no difference found between what the two runs dumped."""
    if v.detail == NO_DUMP:
        return ("another cache key; neither run was dumped (their logs alone were read), so the two programs and "
                "their options cannot be compared")
    if v.a_record is None or v.b_record is None:
        return ("another cache key; one of the two programs was loaded, not compiled, so its HLO was not dumped "
                "before optimizations and only the keys can be compared")
    if not isinstance(v.b, CacheCompilation):  # torch_xla: B's compilation is its graph, the key its hash
        return ("the same HLO under another graph hash; the dumped options are the same, so an input of the hash "
                "not captured differs (torch_xla version, environment variables, devices)")
    if len(v.compared) > 1:  # the runs were recorded: say what was ruled out, not ask for it again
        return (f"the same HLO under another cache key; compared and the same in both runs: {compared_words(v)}; "
                "so an input of the key not captured differs (the devices, the platform, a jax.config setting "
                "made in the program)")
    return ("the same HLO under another cache key; the dumped options are the same, so an input of the key "
            "not captured differs (JAX/jaxlib version, platform, devices)")


def compared_words(v: Verdict) -> str:
    """``the dumped compile options, XLA_FLAGS (not set), versions (jax 0.10.2, jaxlib 0.10.2)``."""
    return ", ".join(d.name if d.name.startswith("the ") else f"{d.name} ({value_words(d.a)})" for d in v.compared)


KEY_DIFFERS_WORDS: dict[str, Callable[[Verdict], str | None]] = {
    "xla_flag": _key_option,
    "compile_option": _key_option,
    "other_cache_folder": _key_cache_folder,
    "device_count": _key_devices,
    "metadata_in_key": _key_source_lines,
    "renamed": _key_renamed,
    "version": _key_version,
    "elided_constants": _key_elided_constants,
    "debug_metadata": _key_debug_metadata,
    "unknown": _key_not_captured,
}
"""``miss_key_differs`` reason -> its words (None when the verdict lacks the difference the words quote)."""


# -- miss_same_key: the same HLO and key, compiled again --------------------------------------------------------------

def _below_compile_time(v: Verdict, same: str) -> str:
    return (f"{same}, never written: run A compiled it in {v.measured:.2f} s, under "
            f"jax_persistent_cache_min_compile_time_secs ({v.threshold:.2f} s)")


def _below_entry_size(v: Verdict, same: str) -> str:
    return (f"{same}, never written: its entry ({v.measured:.0f} bytes) is under "
            f"jax_persistent_cache_min_entry_size_bytes ({v.threshold:.0f} bytes)")


def _exceeds_cache_size(v: Verdict, same: str) -> str:
    return (f"{same}, never written: its entry ({v.measured:.0f} bytes) is larger than the whole cache "
            f"(jax_compilation_cache_max_size, {v.threshold:.0f} bytes); JAX warned and dropped it")


def _host_callbacks(v: Verdict, same: str) -> str:
    at = f" (at {short_line(v.program_line)})" if v.program_line is not None else ""
    return f"{same}, never written: it uses host callbacks{at}"


def _configured_late(v: Verdict, same: str) -> str:
    at = f" (called at {short_line(v.called_at)})" if v.called_at is not None else ""
    return (f"no cache was configured yet when it compiled{at}, so none was looked at (later compilations of "
            "the run did use one)")


def _same_key_cache_folder(v: Verdict, same: str) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return f"{same}: run A wrote it to {d.a}, but run B's cache folder is {d.b}"


def _entry_missing(v: Verdict, same: str) -> str:
    if v.differences and v.differences[0].name == RELATIVE_FOLDER:  # compare-runs round 6: Hydra's chdir
        return (f"{same}: run A wrote it, but run B did not find it; the cache folder is the relative path "
                f"{v.differences[0].a}, resolved against each run's working directory")
    if v.detail == LOOKED_ELSEWHERE:
        return (f"{same}: run A wrote it (the cache listing holds it), but run B counted a persistent-cache miss "
                "and no failed load: it looked the hash up and found no entry in the folder it read")
    return f"{same}: run A wrote it, but the cache run B read has no such entry"


def _not_loadable(v: Verdict, same: str) -> str:
    if v.detail in CANNOT_DESERIALIZE.values():  # known of the backend, not logged
        return f"{same}: its entry is in the cache folder, and this backend cannot load it: {v.detail}{_other(v)}"
    why = f" ({v.detail})" if v.detail else ""
    return f"{same}: the entry run A wrote was found but could not be loaded{why}{_other(v)}"


def _same_key_unexplained(v: Verdict, same: str) -> str:
    """The same HLO and key, compiled again, and nothing captured names the reason."""
    if isinstance(v.b, CacheCompilation) and v.b.lookup == "unknown":
        same_program = "the same HLO and options" if v.a_record is not None and v.b_record is not None else \
            "compiled in run B"
        return (f"{same_program}; without the JAX logs nothing says whether run A wrote it (capture stderr "
                "with JAX_EXPLAIN_CACHE_MISSES=1)")
    if v.entry_in_cache:
        return (f"{same}: its entry is in the cache folder, yet run B compiled it (it could not load it, or did not "
                "look: its stderr and metrics say which)")
    return f"{same}: nothing captured says why run A's entry was not there"


SAME_KEY_WORDS: dict[str, Callable[[Verdict, str], str | None]] = {
    "below_compile_time": _below_compile_time,
    "below_entry_size": _below_entry_size,
    "exceeds_cache_size": _exceeds_cache_size,
    "write_failed": lambda v, same: f"{same}, never written: writing it failed ({v.detail})",
    "read_failed": lambda v, same: f"{same}: run B found its entry but could not read it ({v.detail})",
    "host_callbacks": _host_callbacks,
    "cache_disabled": lambda v, same: f"{same}, never written: the cache was disabled or not initialized",
    "cache_configured_late": _configured_late,
    "no_cache": lambda v, same: "run B never looked at a persistent cache",
    "other_cache_folder": _same_key_cache_folder,
    "entry_missing": _entry_missing,
    "not_loadable": _not_loadable,
    "check_contents": lambda v, same: (f"{same}: its entry was there, and run B recompiled it to check the cache "
                                       "(jax_compilation_cache_check_contents): JAX raised CacheVerificationError"),
    "unknown": _same_key_unexplained,
}
"""``miss_same_key`` reason -> its words; ``same`` is "the same HLO and key", or "the same key" when run B's
program is not the one filed under it (None when the verdict lacks the difference the words quote)."""


PIECES_WORDS = {
    "jit_disabled": "one operation of run A's programs, run op by op (jit disabled)",
    "eager_mode": "one operation of run A's step, run op by op (torch_xla's eager mode)",
}
"""Reason of a program run B compiled as a piece of run A's, run op by op (:mod:`hlodiff.explain.op_by_op`) -> its
words."""


def _other(v: Verdict) -> str:
    """The clause saying that run B's program is not the one filed under the key both runs share."""
    d = next((d for d in v.differences if d.source == SAME_KEY_PROGRAM), None)
    if d is None:
        return ""
    what = f"{d.name} {d.b} in run B, {d.a} in run A" if d.name == PRECISION_ATTRIBUTE else "its HLO differs"
    return f"; and run B's program is not the one under this key ({what})"


# -- values and lines in words ---------------------------------------------------------------------------------------

def value_words(value: str | None) -> str:
    return "not set" if value is None else value


def short_line(frame) -> str:
    return f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}"
