"""One compilation of run B against run A (:class:`Verdict`), and the two misses both frameworks classify alike.

JAX's and torch_xla's pairings differ (:mod:`hlodiff.explain.across_runs`, :mod:`hlodiff.explain.across_runs_torch`),
but once a compilation is paired the same program under another key (:func:`miss_key_differs`) and another program
(:func:`miss_hlo_differs`) are told from the same evidence; both sides import them from here, so neither imports
the other's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.diff.model import Cause
from hlodiff.dumps.compile_cache import CacheCompilation
from hlodiff.dumps.cached_run import Run
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import InputWarning
from hlodiff.explain.program_lines import calling_line, named_by_both
from hlodiff.explain.program_pairs import graph_cause
from hlodiff.explain.run_arguments import argument_dtype_differences, argument_path_differences
from hlodiff.explain.exponent_type import exponent_type_differences
from hlodiff.explain.mesh_axis_names import mesh_axis_name_differences
from hlodiff.explain.run_repeats import repeated_work
from hlodiff.explain.seed_offset import seed_offset_differences
from hlodiff.explain.program_differences import (LOWERING_SETTINGS, device_count_differences, length_dimension,
                                                 leading_dim_shared, low_precision_differences,
                                                 lowering_setting_differences, parameter_shape_differences,
                                                 prng_impl_differences, source_line_differences, wide_type_differences)
from hlodiff.explain.run_differences import (CACHE_FOLDER_OPTIONS, TOPOLOGY_OPTIONS, KeyDifference, cache_folder,
                                             flag_differences, option_differences, version_differences)
from hlodiff.explain.run_settings import bf16_storage_differences, float64_differences, long_width_differences
from hlodiff.hlo.model import SourceFrame

CANNOT_DESERIALIZE = {
    ("torch_xla", "cpu"): "torch_xla's CPU client cannot deserialize a cached executable ('Deserializing "
                          "serialized executable not supported', observed with torch_xla 2.9)",
}
"""(framework, backend) whose persistent cache entries cannot be loaded: a program of the same hash compiled again
while its entry was in the cache is not loadable, even when run B's stderr and metrics were not kept (or its C++
warnings were silenced by TF_CPP_MIN_LOG_LEVEL)."""


@dataclass(slots=True)
class Verdict:
    """One compilation of B: what happened and the evidence for it."""

    program: str
    """JAX: the module name (``jit_step``); torch_xla: the graph hash."""
    verdict: str
    reason: str | None = None
    b: CacheCompilation | GraphRecord | None = None
    a: CacheCompilation | GraphRecord | None = None
    b_record: GraphRecord | None = None
    a_record: GraphRecord | None = None
    seconds: float | None = None
    """B's compile seconds (JAX's ``Finished XLA compilation``) when it compiled."""
    threshold: float | None = None
    measured: float | None = None
    """The threshold and A's (or B's) measured value behind ``below_compile_time`` / ``below_entry_size``."""
    key_a: str | None = None
    key_b: str | None = None
    differences: list[KeyDifference] = field(default_factory=list)
    cause: Cause | None = None
    """``miss_hlo_differs``: the leading cause of the graph diff (kind, line, fix)."""
    key_components: list[str] = field(default_factory=list)
    """The inputs of the key whose hashes differ between A and B (JAX's cache-key debug log, when captured)."""
    entry_in_cache: bool | None = None
    """Whether the cache folder (as B found it) holds the entry; None when no folder or listing was read."""
    detail: str | None = None
    """A fact quoted from a log (torch_xla's reason it could not load the entry)."""
    called_at: SourceFrame | None = None
    """The user's line that made B compile it (JAX's cache-miss call site; torch_xla's sync line)."""
    program_line: SourceFrame | None = None
    """The user's line of the instruction behind a reason outside the graph (:data:`LOCATED_IN_PROGRAM`)."""
    cache_empty: bool = False
    """``entry_missing``: the cache as run A left it (its listing) holds no entry at all, though run A compiled:
    nothing was written, rather than one entry lost."""
    state_shapes: bool = False
    """``miss_hlo_differs`` / ``shape``: every parameter whose shape differs (``differences``) is state the step
    returns updated (weights, optimizer state): another model, not another input."""
    length_dim: int | None = None
    """``miss_hlo_differs`` / ``shape``: the one non-leading dimension every differing input changes in, between
    the same two sizes (:func:`~hlodiff.explain.program_differences.length_dimension`): a length, such as a sequence
    padded to the longest one of a random sample, or the batch of a time-major [T, B] input."""
    batch_kept: bool = False
    """With ``length_dim``: another input that kept its shape starts with the same dimension 0
    (:func:`~hlodiff.explain.program_differences.leading_dim_shared`): that is the batch, the changed one a length."""
    at_call: bool = False
    """``miss_hlo_differs`` / ``ops`` (JAX): every line the cause names is a line of both programs, so the runs
    differ in how often that code ran, as the call decided (:func:`~hlodiff.explain.program_lines.named_by_both`):
    the headline is located at the call (``called_at``), not at a line both runs traced alike."""
    setting: object = None
    """``miss_hlo_differs`` with ops one run traced only: the run setting (:class:`hlodiff.dumps.run_setting_source
    .RunSetting`: an environment variable, a command-line option) the ``if`` around them tests, where the source on
    disk shows it (:mod:`hlodiff.explain.across_runs_settings`); None otherwise."""

    compared: list[KeyDifference] = field(default_factory=list)
    """``miss_key_differs`` / ``unknown``: the evidence compared and found the same in both runs
    (:func:`compared_evidence`), named so the words do not ask for it again."""
    in_pieces: bool = False
    """``new``, yet a piece of run A's programs: run B ran them op by op (:mod:`hlodiff.explain.op_by_op`)."""

    @property
    def recompiled(self) -> bool:
        """B compiled something A had compiled (whole, or op by op in pieces)."""
        return self.verdict not in ("hit", "new") or self.in_pieces


def miss_key_differs(v: Verdict, run_a: Run, run_b: Run, flags_a: list[str], flags_b: list[str]) -> None:
    """The same program under another key (JAX's cache key, torch_xla's graph hash): which input of the key
    differs, from the flags JAX hashed (its cache-key debug log), the dumped compile options, the versions."""
    v.verdict = "miss_key_differs"
    found = flag_differences(flags_a, flags_b) + option_differences(v.a_record, v.b_record, run_b.module_options)
    if not found and (recorded := recorded_flag_differences(run_a, run_b)):
        found, v.detail = recorded, RECORDED_FLAGS  # a flag XLA does not dump: the runs' own XLA_FLAGS hold it
    v.differences = [d for i, d in enumerate(found) if d.name not in {e.name for e in found[:i]}]  # flag first
    versions = version_differences(run_a.versions, run_b.versions)
    folders = [d for d in v.differences if d.name in CACHE_FOLDER_OPTIONS]
    if versions:  # a new jaxlib is a cold cache whatever the options say: it leads
        v.differences[:0] = versions
        v.reason = "version"
    elif folders:  # JAX writes the cache folder into the compile options: another folder, another key
        d = folders[0]
        v.differences.remove(d)
        v.differences.insert(0, KeyDifference(d.source, "cache folder", cache_folder(d.a), cache_folder(d.b)))
        v.reason = "other_cache_folder"
    elif v.differences and all(d.name in TOPOLOGY_OPTIONS for d in v.differences):
        v.reason = "device_count"  # left out of the key by JAX, yet another device topology: another key
    elif v.differences:
        v.reason = "xla_flag" if v.differences[0].source in ("XLA_FLAGS", "debug_options") else "compile_option"
    elif counts := device_count_differences(v.a_record, v.b_record):
        v.reason, v.differences = "device_count", counts  # one computation built for another number of devices
    elif v.b_record is not None and "constant({...})" in v.b_record.text():
        v.reason = "elided_constants"
    elif run_a.framework == "jax" and (lines := source_line_differences(v.a_record, v.b_record)):
        v.reason, v.differences = "metadata_in_key", lines  # only the lines differ: hashed with the program
    elif run_a.framework == "torch_xla" and (carried := debug_metadata_difference(v.a_record, v.b_record)):
        v.reason, v.differences = "debug_metadata", [carried]  # the debug settings differ: hashed with the graph
    else:
        v.reason = "unknown"
        v.compared = compared_evidence(v, run_a, run_b)


RECORDED_FLAGS = "recorded XLA_FLAGS"
"""``Verdict.detail`` of an ``xla_flag`` verdict read from the runs' own XLA_FLAGS (their ``hlodiff record``
manifests), not from the options XLA dumped: XLA leaves some flags out of its dumped debug options, and JAX hashes
XLA_FLAGS into every key (observed with JAX 0.10.2: ``--xla_cpu_use_thunk_runtime=false``, review 21 F1)."""


def recorded_flag_differences(run_a: Run, run_b: Run) -> list[KeyDifference]:
    """The flags of the two runs' own XLA_FLAGS that differ (JAX only: its key hashes XLA_FLAGS; empty when a run
    was not recorded, so nothing says what it set)."""
    if run_a.framework != "jax" or run_a.xla_flags is None or run_b.xla_flags is None:
        return []
    return flag_differences(run_a.xla_flags, run_b.xla_flags)


def compared_evidence(v: Verdict, run_a: Run, run_b: Run) -> list[KeyDifference]:
    """What was compared and found the same, for a key that differs with nothing captured to say why: the dumped
    options, the runs' own XLA_FLAGS, the versions both recordings noted (each a :class:`KeyDifference` whose
    ``a`` and ``b`` are the shared value), so the words name what is ruled out rather than ask for it again."""
    out: list[KeyDifference] = []
    if v.a_record is not None and v.b_record is not None:
        out.append(KeyDifference("compared", "the dumped compile options", None, None))
    if run_a.xla_flags is not None and run_b.xla_flags is not None:
        flags = " ".join(run_a.xla_flags) or None
        out.append(KeyDifference("compared", "XLA_FLAGS", flags, flags))
    shared = [f"{n} {run_a.versions[n]}" for n in run_a.versions if run_b.versions.get(n) == run_a.versions[n]]
    if shared:
        out.append(KeyDifference("compared", "versions", ", ".join(shared), ", ".join(shared)))
    return out


DEBUG_METADATA = "debug metadata"
"""The name of a ``debug_metadata`` verdict's difference: how many instructions carry op metadata in each run."""


def debug_metadata_difference(a: GraphRecord | None, b: GraphRecord | None) -> KeyDifference | None:
    """torch_xla writes op metadata (op names, Python frames) into its HLO only with XLA_HLO_DEBUG=1 /
    XLA_IR_DEBUG=1, and hashes the graph with it (observed with torch_xla 2.9: one program, another graph hash): two
    graphs that are the same computation, one with metadata and the other with none, were built under other debug
    settings. None unless exactly one side carries metadata."""
    if a is None or b is None:
        return None
    counts = [r.text().count("metadata={") for r in (a, b)]
    if (counts[0] == 0) == (counts[1] == 0):
        return None
    return KeyDifference("hlo", DEBUG_METADATA, str(counts[0]), str(counts[1]))


def miss_hlo_differs(v: Verdict, warnings: list[InputWarning], jax: bool) -> None:
    """Another program in B: the graph diff's leading cause, unless the two were built for another number of
    devices (then the cause, a sharding or shape difference, is that count's consequence and keeps the line)."""
    v.verdict = "miss_hlo_differs"
    v.cause = graph_cause(v.a_record, v.b_record, warnings)
    v.reason = v.cause.kind if v.cause is not None else "unknown"
    counts = device_count_differences(v.a_record, v.b_record)
    settings = lowering_setting_differences(v.a_record, v.b_record) if jax else []
    impls = prng_impl_differences(v.a_record, v.b_record) if jax else []
    offsets = seed_offset_differences(v.a_record, v.b_record) if jax and v.reason in ("ops", "constant") else []
    if counts:
        v.reason, v.differences = "device_count", counts
    elif settings:  # a JAX setting lowers a library function another way: the diff's kind stays the reason
        v.differences = settings
        computation = next(c for c, _, name in LOWERING_SETTINGS if name == settings[0].name)
        v.program_line = calling_line(v.b_record, computation) or calling_line(v.a_record, computation)
    elif impls:  # another PRNG implementation: the keys' shapes follow the setting (the cause keeps its line)
        v.differences = impls
    elif offsets:  # another offset added to every seed: jax_random_seed_offset (the cause keeps its line)
        v.differences = offsets
    elif jax and v.reason == "sharding" and (names := mesh_axis_name_differences(v.a_record, v.b_record)):
        v.differences = names  # the same partitioning under renamed mesh axes (Shardy keeps the names)
    elif v.reason == "shape":
        v.differences, v.state_shapes = parameter_shape_differences(v.a_record, v.b_record)
        v.length_dim = None if v.state_shapes else length_dimension(v.differences)
        v.batch_kept = v.length_dim is not None and leading_dim_shared(v.differences, v.a_record)
    elif not jax and v.reason in ("ops", "inputs") and (repeats := repeated_work(v.a_record, v.b_record)):
        v.differences = repeats  # a loop traced into the step ran more times in one run
    elif jax and v.reason in ("ops", "constant") and (powers := exponent_type_differences(v.a_record, v.b_record)):
        v.differences = powers  # one power, an int exponent in one run and a float in the other (the cause's line)
    elif jax and v.reason in ("ops", "inputs"):  # a leaf one run passed and the other did not: its ops come with it
        v.differences = argument_path_differences(v.a_record, v.b_record)
        v.at_call = v.reason == "ops" and v.cause is not None and named_by_both(v.cause.locations, v.a_record,
                                                                                 v.b_record)
    elif v.reason == "dtype":  # jax_enable_x64, torch_xla's 32-bit longs or bf16 storage, else 16-bit floats
        v.differences = (wide_type_differences(v.a_record, v.b_record) or
                         argument_dtype_differences(v.a_record, v.b_record) if jax else
                         long_width_differences(v.a_record, v.b_record) or
                         bf16_storage_differences(v.a_record, v.b_record) or
                         float64_differences(v.a_record, v.b_record)) or \
            low_precision_differences(v.a_record, v.b_record)
