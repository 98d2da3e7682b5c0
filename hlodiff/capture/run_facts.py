"""What a recording notes about the run beyond its files, so that a recording stands alone when two runs are
compared (``hlodiff compare-runs``): the installed versions of the frameworks (a JAX persistent-cache key hashes
the jaxlib/XLA version; a new version is a cold cache) and the persistent-cache settings seen in the environment.

Only what the recording process can see is noted: settings made in the program itself
(``jax.config.update("jax_compilation_cache_dir", ...)``, ``torch_xla.runtime.initialize_cache(...)``) are not in
the environment hlodiff starts the command with. Versions are read from the installed distributions' metadata,
without importing the frameworks (importing torch_xla would start its runtime in the recorder).
"""

from __future__ import annotations

from typing import Mapping

PACKAGES = ("jax", "jaxlib", "jax-cuda12-plugin", "libtpu", "torch", "torch_xla")
CACHE_VARIABLES = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                   "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "JAX_ENABLE_COMPILATION_CACHE",
                   "XLA_PERSISTENT_CACHE_PATH", "XLA_PERSISTENT_CACHE_READ_ONLY", "XLA_FLAGS")
"""The variables that decide whether a run can reuse another's compilations (``XLA_FLAGS`` is in JAX's key)."""


def versions() -> dict[str, str]:
    """Installed version of each framework package present (name -> version), in :data:`PACKAGES` order."""
    from importlib import metadata

    found: dict[str, str] = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def cache_settings(env: Mapping[str, str]) -> dict[str, str]:
    """The persistent-cache variables set in ``env`` (the environment as the user gave it, before hlodiff's
    additions)."""
    return {name: env[name] for name in CACHE_VARIABLES if env.get(name, "").strip()}
