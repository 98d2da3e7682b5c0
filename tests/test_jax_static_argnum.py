"""A positional static argument that changes the traced program (review item 4).

Input: the real JAX run of fixtures/jax/static_argnum.py (`static_argnums=(1,)`, n_layers 2, 2, 3), its XLA dump
and its JAX_EXPLAIN_CACHE_MISSES log.
"""

from __future__ import annotations

import re
import shutil

from helpers import FIXTURES, truth_of
from hlodiff.dumps.run_folder import discover
from helpers import explained

RUN = FIXTURES / "jax" / "static_argnum"


def _recompilation(folder):
    return explained(discover([str(folder / "dump")], None, None), []).recompilations[0]


def test_the_static_argument_heads_and_the_ops_change_follows_from_it():
    truth = truth_of(RUN)["recompiles"][0]
    r = _recompilation(RUN)
    head = r.causes[0]
    assert head.kind == "static_argument" and "2 -> 3" in head.summary
    assert head.locations[0].line == truth["user_line"]
    ops = next(c for c in r.causes if c.kind == "ops")
    assert ops.fix.startswith("follows from the static argument")
    assert "[0][1]" not in head.fix and "argnum 1" in head.summary  # no source on disk: named by its position


def test_the_argument_is_named_from_the_source_jax_points_at(tmp_path):
    """With the script where JAX's log says the function is defined, the name is the parameter's."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    script = FIXTURES / "jax" / "static_argnum.py"
    log = run / "stderr.log"
    log.write_text(log.read_text().replace("/home/user/project/static_argnum.py", str(script)))
    head = _recompilation(run).causes[0]
    assert "static argument `n_layers` (argnum 1) changed: 2 -> 3" in head.summary
    assert "`n_layers`" in head.fix


def test_jax_quote_is_cut_between_words():
    head = _recompilation(RUN).causes[0]
    quote = re.search(r'JAX: "(.*)"', head.summary).group(1)
    assert quote.endswith("...")
    words = quote[:-3].split()
    log_words = set((RUN / "stderr.log").read_text().split())
    assert words[-1] in log_words  # the last word is whole, not a prefix of a dotted name
