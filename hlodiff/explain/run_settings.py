"""Settings of a run that its programs show without naming them: a compile option a JAX setting writes, torch_xla's
32-bit longs, bf16 storage and parameter aliasing, a cache folder given as a relative path. :mod:`hlodiff.explain.across_runs` reads them to say which
setting differs between two runs, or why run B could not find what run A wrote, instead of the bare evidence.

Each table row is observed with JAX 0.10.2 / torch_xla 2.9 on the CPU and tested with a look-alike in
``tests/test_compare_runs_round6.py`` or ``tests/test_compare_runs_round7.py``.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.program_differences import widened_types
from hlodiff.explain.run_differences import CACHE_FOLDER_OPTIONS, KeyDifference, cache_folder

COMPILE_OPTION_SETTINGS: dict[str, str] = {
    "use_shardy_partitioner": "jax_use_shardy_partitioner (JAX_USE_SHARDY_PARTITIONER; JAX sets it for the Shardy "
                              "partitioner, its default since JAX 0.7.0, and leaves it unset for GSPMD)",
    "exec_time_optimization_effort": "jax_exec_time_optimization_effort (JAX_EXEC_TIME_OPTIMIZATION_EFFORT)",
    "memory_fitting_effort": "jax_memory_fitting_effort (JAX_MEMORY_FITTING_EFFORT)",
    "optimization_level": "jax_optimization_level (JAX_OPTIMIZATION_LEVEL)",
}
"""Fields of XLA's ``executable_build_options`` (``compile_options.textproto``) -> the JAX setting that writes them
(``jax/_src/compiler.py`` ``get_compile_options``): one of them differing between two runs of one script came from
that setting, not from XLA_FLAGS (observed: ``JAX_USE_SHARDY_PARTITIONER=false`` drops ``use_shardy_partitioner:
true``; ``JAX_EXEC_TIME_OPTIMIZATION_EFFORT=-0.5``, ``JAX_MEMORY_FITTING_EFFORT=0.5`` and
``JAX_OPTIMIZATION_LEVEL=O1`` add their field; the HLO is the same, the key is not)."""


DEVICE_ASSIGNMENT_OPTIONS = frozenset({"replica_device_ids"})
"""Fields of the compile options' ``device_assignment``: which device each replica runs on. JAX keeps the device
assignment in the options it hashes (``cache_key.py`` strips it for GPU only), so one program compiled for device 1
is another key than for device 0 (observed: round 8's runs8_device_index, ``jax_default_device`` from LOCAL_RANK,
``replica_device_ids: 0`` then ``1``, the same HLO)."""


def compile_setting_of(d: KeyDifference) -> str | None:
    """The JAX setting behind a differing compile option (:data:`COMPILE_OPTION_SETTINGS`), else None."""
    if d.source != "compile_options.textproto":
        return None
    return COMPILE_OPTION_SETTINGS.get(d.name)


LONG_TYPES = {"s64": "s32", "u64": "u32"}
"""64-bit integer types and what torch_xla lowers them to under ``XLA_USE_32BIT_LONG=1`` (observed with torch_xla
2.9: int64 labels enter the graph as ``s32[8]`` instead of ``s64[8]``, the one-hot compare after them too)."""


def long_width_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """torch_xla: ``[KeyDifference("element_types", "64-bit integers", A's, B's)]`` when one program has 64-bit
    integer types the other has none of, and every element type the two do not share is one of them or its 32-bit
    counterpart (:data:`LONG_TYPES`): every int64 of one run is an int32 of the other, as ``XLA_USE_32BIT_LONG``
    makes it; else empty (a float64, or 64-bit integers on both sides, is the program's own)."""
    return widened_types(a, b, LONG_TYPES, "64-bit integers", narrow_side_pure=True)


BF16_STORAGE_TYPES = {"f32": "bf16"}
"""float32 and what torch_xla stores it as under ``XLA_USE_BF16=1`` (``XLA_DOWNCAST_BF16=1`` too): every float32
tensor of the program, parameters and inputs included, is bf16 (observed with torch_xla 2.9: ``f32[8,16]`` inputs
enter as ``bf16[8,16]`` and no f32 is left). Autocast, by contrast, keeps f32 weights and adds bf16 beside them."""


def bf16_storage_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """torch_xla: ``[KeyDifference("element_types", "32-bit floats", A's, B's)]`` when one program has f32 and the
    other none at all, every element type the two do not share being f32 or bf16 (:data:`BF16_STORAGE_TYPES`):
    every float32 of one run is a bf16 of the other, as ``XLA_USE_BF16`` makes it; else empty (bf16 beside f32 is
    mixed precision, :func:`~hlodiff.explain.program_differences.low_precision_differences`)."""
    return widened_types(a, b, BF16_STORAGE_TYPES, "32-bit floats", narrow_side_pure=True)


FLOAT64_TYPES = {"f64": "f32"}
"""float64 and the float32 it replaces when a torch program's default dtype is torch.float64
(``torch.set_default_dtype``, a config's ``dtype``) or its model and inputs are cast with ``.double()``: every
parameter, batch and op is f64 and no f32 is left (observed with torch_xla 2.9 on the CPU: round 9,
``runs9_torch_default_f64``)."""


def float64_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """torch_xla: ``[KeyDifference("element_types", "64-bit floats", A's, B's)]`` when one program has f64 and the
    other none at all, every element type the two do not share being f64 or f32 (:data:`FLOAT64_TYPES`): the whole
    program computes in float64 in one run; else empty (one f64 value beside f32 is the program's own)."""
    return widened_types(a, b, FLOAT64_TYPES, "64-bit floats", narrow_side_pure=True)


DONORS_SWITCH = "buffer donors"
"""``KeyDifference.name`` of :func:`donors_dropped`."""


def donors_dropped(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """torch_xla: ``[KeyDifference("module", "buffer donors", A's count, B's count)]`` when one of two programs
    donates input buffers (``buffer_donor`` / ``input_output_alias`` in its header) and the other none at all:
    torch_xla marks the tensors a step updates in place as donors unless ``XLA_ENABLE_PARAM_ALIASING=false``
    (observed with torch_xla 2.9: the same computation, the header without ``buffer_donor``, another graph hash).
    Else empty: donors on both sides differ by what the code updates in place."""
    if a is None or b is None:
        return []
    counts = [_donor_count(r) for r in (a, b)]
    if None in counts or (counts[0] == 0) == (counts[1] == 0):
        return []
    return [KeyDifference("module", DONORS_SWITCH, *(str(n) if n else None for n in counts))]


def _donor_count(rec: GraphRecord) -> int | None:
    from hlodiff.diff.header import donated_parameters

    donated = donated_parameters(rec.module())
    return None if donated is None else len(donated)


def relative_cache_folder(*options: dict[str, tuple[str, ...]] | None) -> str | None:
    """The persistent cache folder as JAX was given it, when it is a relative path: JAX writes it into XLA's cache
    options (:data:`~hlodiff.explain.run_differences.CACHE_FOLDER_OPTIONS`, ``jax_cache/xla_gpu_per_fusion_
    autotune_cache_dir``), so the dumped options show the string the run used. A relative folder is resolved
    against the process's working directory, which a launcher (Hydra's ``job.chdir``, a job folder) changes run
    to run, while the key, hashed from the same string, stays the same."""
    for opts in options:
        for key, values in (opts or {}).items():
            if key.rpartition(":")[2].rsplit(".", 1)[-1] not in CACHE_FOLDER_OPTIONS or not values:
                continue
            folder = cache_folder(values[0])
            if folder and not folder.startswith("/") and not folder[1:3] == ":\\":  # POSIX or a Windows drive
                return folder
    return None
