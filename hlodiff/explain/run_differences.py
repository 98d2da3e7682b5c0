"""What differs between run A's program and run B's in the inputs of a cache key beyond the program itself: the
XLA flags JAX hashed, the compile options XLA dumped beside each module, framework versions, the cache folder JAX
writes into the options, and the JAX settings that write those options. What the two programs themselves show (device
counts, parameter shapes, element types, lowerings, lines, precision) is :mod:`hlodiff.explain.program_differences`;
:mod:`hlodiff.explain.across_runs` turns both into verdicts.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from hlodiff.dumps.graph_record import GraphRecord


@dataclass(slots=True)
class KeyDifference:
    """One compile option that differs: ``source`` the dump file it was read from (``debug_options``,
    ``compile_options.textproto``), ``name`` the field, ``a`` / ``b`` the values (None: not set, XLA's default)."""

    source: str
    name: str
    a: str | None
    b: str | None

    def to_json(self) -> dict:
        return {"source": self.source, "name": self.name, "a": self.a, "b": self.b}


def option_differences(a: GraphRecord | None, b: GraphRecord | None, module_options) -> list[KeyDifference]:
    """The compile options that differ between two dumped modules (XLA flags first, from ``debug_options``);
    ``module_options``: the runs' evidence of them (:meth:`hlodiff.dumps.cached_run.Run.module_options`)."""
    if a is None or b is None:
        return []
    left, right = module_options(a) or {}, module_options(b) or {}
    out: list[KeyDifference] = []
    names: set[str] = set()
    for key in sorted(set(left) | set(right), key=lambda k: (not k.startswith("debug_options:"), k)):
        if left.get(key) == right.get(key):
            continue
        source, _, name = key.partition(":")
        short = name.rsplit(".", 1)[-1]
        if short in names:  # debug_options repeated inside compile_options.textproto: said once
            continue
        names.add(short)
        out.append(KeyDifference(source, short, _one(left.get(key)), _one(right.get(key))))
    return out


def flag_differences(a: list[str], b: list[str]) -> list[KeyDifference]:
    """The XLA flags JAX hashed into one key and not the other (its cache-key debug log), by flag name."""
    def split(flags):
        return dict((f.lstrip("-").partition("=")[0], f.partition("=")[2] or "true") for f in flags)

    left, right = split(a), split(b)
    return [KeyDifference("XLA_FLAGS", name, left.get(name), right.get(name))
            for name in sorted(set(left) | set(right)) if left.get(name) != right.get(name)]


CACHE_FOLDER_OPTIONS = ("xla_gpu_per_fusion_autotune_cache_dir", "xla_gpu_kernel_cache_file")
"""Debug options JAX sets under the persistent cache folder (``jax_persistent_cache_enable_xla_caches``, on the
CPU too), which the key hashes with the other compile options: observed with JAX 0.10.2, two folders give two keys
for one program."""


TOPOLOGY_OPTIONS = ("xla_force_host_platform_device_count",)
"""Debug options JAX clears before hashing the compile options (``jax/_src/cache_key.py``) that still change the
key: they change the devices, and the key hashes the devices' topology. When they are all that differs, the cause is
another device configuration, not a flag in the key (observed with JAX 0.10.2: a one-device program, 4 host devices
in run B only, another key for the same HLO)."""


def cache_folder(value: str | None) -> str | None:
    """``"/x/cache/xla_gpu_per_fusion_autotune_cache_dir"`` -> ``/x/cache`` (the persistent cache folder)."""
    if value is None:
        return None
    path = value.strip().strip('"')
    head, _, tail = path.rstrip("/").rpartition("/")
    return head if tail in CACHE_FOLDER_OPTIONS and head else path


def version_differences(a: dict[str, str], b: dict[str, str]) -> list[KeyDifference]:
    """Framework versions both recordings noted and that differ."""
    return [KeyDifference("versions", name, a[name], b[name]) for name in a if name in b and a[name] != b[name]]


def _one(values: tuple[str, ...] | None) -> str | None:
    return None if not values else ", ".join(values)


def same_folder_spelled_apart(a: str | None, b: str | None) -> bool:
    """Two spellings of one cache folder (``/x/cache`` and ``/x/cache/../cache/``, ``/x//cache``): equal once
    ``.``, ``..``, repeated and trailing separators are resolved as text. JAX writes the folder's string into the
    compile options it hashes (:data:`CACHE_FOLDER_OPTIONS`), so one folder spelled two ways is two keys (observed
    with JAX 0.10.2). Symbolic links are not followed: the analysis reads no file system."""
    if not a or not b or a == b or not (a.startswith("/") and b.startswith("/")):
        return False
    return posixpath.normpath(a) == posixpath.normpath(b)


_DISABLE_MOST_OPTIMIZATIONS = ("jax_disable_most_optimizations=True (JAX_DISABLE_MOST_OPTIMIZATIONS=1, or a script's "
                               "debug or fast-compile switch that sets it)")

JAX_SETTING_OPTIONS: dict[tuple[str, str], str] = {
    ("xla_disable_hlo_passes", "rematerialization"): "jax_compiler_enable_remat_pass=False "
                                                     "(JAX_COMPILER_ENABLE_REMAT_PASS=false)",
    ("xla_backend_optimization_level", "0"): _DISABLE_MOST_OPTIMIZATIONS,
    ("xla_llvm_disable_expensive_passes", "true"): _DISABLE_MOST_OPTIMIZATIONS,
}
"""(debug option, value) -> the JAX setting that writes it into the compile options (``jax/_src/compiler.py``
``get_compile_options``): a debug option that differs between two JAX runs although neither set it in XLA_FLAGS
came from that setting (observed with JAX 0.10.2: ``JAX_COMPILER_ENABLE_REMAT_PASS=false`` dumps
``xla_disable_hlo_passes: "rematerialization"``; ``jax_disable_most_optimizations`` dumps
``xla_backend_optimization_level: 0`` and ``xla_llvm_disable_expensive_passes: true``)."""

JAX_SETTING_TOGETHER: dict[str, frozenset[tuple[str, str]]] = {
    _DISABLE_MOST_OPTIMIZATIONS: frozenset({("xla_backend_optimization_level", "0"),
                                            ("xla_llvm_disable_expensive_passes", "true")}),
}
"""A setting that writes several debug options at once is told only when all of them differ on the same side: one
of them alone (``--xla_backend_optimization_level=0`` in XLA_FLAGS) is a flag, not the setting."""


def jax_setting_of(d: KeyDifference, others: list[KeyDifference] | None = None) -> tuple[str, str] | None:
    """``(setting, side)`` when a differing debug option has a value only one run has and that value is what a JAX
    setting (:data:`JAX_SETTING_OPTIONS`) writes: side ``"A"`` or ``"B"``, the run that had the setting. ``others``:
    every difference of the program, for a setting that writes several options (:data:`JAX_SETTING_TOGETHER`)."""
    for side, value in (("B", d.b), ("A", d.a)):
        if value is not None and (d.name, value.strip().strip('"')) in JAX_SETTING_OPTIONS and \
                (d.b if side == "A" else d.a) is None:
            setting = JAX_SETTING_OPTIONS[(d.name, value.strip().strip('"'))]
            if setting in JAX_SETTING_TOGETHER and not JAX_SETTING_TOGETHER[setting] <= _one_sided(others or [d],
                                                                                                  side):
                return None
            return setting, side
    return None


def _one_sided(differences: list[KeyDifference], side: str) -> set[tuple[str, str]]:
    """The (option, value) pairs only run ``side`` has."""
    return {(d.name, (d.b if side == "B" else d.a).strip().strip('"')) for d in differences
            if (d.b if side == "B" else d.a) is not None and (d.a if side == "B" else d.b) is None}
