"""Assertions that a run compiles a stable set of graphs, for dumps on disk and for the pytest plugin.

    from hlodiff.testing import assert_stable, assert_max_compilations
    assert_stable("run/graphs.hlo.0", warmup=1)      # torch_xla save-tensors file
    assert_max_compilations("/tmp/jax_dump", 2)       # XLA --xla_dump_to folder

A failure's message is the explain-recompile report for the offending graphs: causes, user lines, live tensors.
"""

from hlodiff.testing.stability import (
    HloStabilityError,
    Stability,
    assert_max_compilations,
    assert_stable,
    check_path,
)

__all__ = ["HloStabilityError", "Stability", "assert_max_compilations", "assert_stable", "check_path"]
