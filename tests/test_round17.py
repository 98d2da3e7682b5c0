"""Round 17 (blind, torch_xla and JAX): what the first try got wrong, on its real captures (fixtures/scenarios/*),
beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of

from hlodiff.dumps.anomaly_checks import is_anomaly_check
from hlodiff.dumps.xla_dump import scan_xla_dump

SC = FIXTURES / "scenarios"
TX = SC / "torch_xla"


def _doc(path, *extra, codes=(0, 1)) -> dict:
    return cli_json("explain-recompile", str(path), *extra, codes=codes)


def _partial_reasons(doc) -> set[str]:
    return {c["reason"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "partial"}


def test_anomaly_mode_s_checks_are_told_as_the_cuts_of_every_step():
    """r17_tx_detect_anomaly: set_detect_anomaly(True) cuts each step into 11 graphs (10 NaN checks compiled inside
    backward(), never announced nor logged when they run). The first try left them out: one graph a step, no
    headline, exit 0."""
    doc = _doc(TX / "r17_tx_detect_anomaly", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and "set_detect_anomaly(False)" in head["fix"]
    assert ".item()" not in head["fix"] and "add_step_closure" not in head["fix"]
    assert _partial_reasons(doc) == {"anomaly_check"}
    assert any(p.startswith("split: ") and "split in 11 by 10 anomaly-mode NaN checks" in p for p in doc["patterns"])


def test_a_check_is_an_any_isnan_module_and_the_step_is_not():
    modules = list(scan_xla_dump(str(TX / "r17_tx_detect_anomaly" / "dump"), []))
    seen = {m.module_number: is_anomaly_check(m) for m in modules}
    assert seen[0] and seen[9] and not seen[10]  # ten checks, then the step's own graph (loss, weights)


@pytest.mark.parametrize("fixture", [
    # compilations torch_xla does not announce that are no NaN check: CTC's and EmbeddingBag's internals
    TX / "r10_ctc_fallback", TX / "rev8_pad_multiple_byhand", TX / "rev8_pad_multiple" / "record",
    # isnan/isinf read inside clip_grad_norm_(error_if_nonfinite=True): announced, a library's read
    TX / "review2_clip_nonfinite" / "graphs.hlo.0",
])
def test_look_alikes_keep_their_cuts(fixture):
    assert "anomaly_check" not in _partial_reasons(_doc(fixture))


def test_a_pytree_s_aux_data_compared_by_identity_is_named():
    """r17_jx_pytree_aux_identity: a Batch pytree whose aux_data is a new Info (no __eq__) per batch. The first try
    said 'pass arguments with the same structure every call (same keys, same container types)': the user does."""
    folder = SC / "jax" / "r17_jx_pytree_aux_identity"
    doc = _doc(folder / "dump", "--jax-log", str(folder / "stderr.log"), codes=(1,))
    fix = doc["headline"]["fix"]
    assert "`Info`" in fix and "__eq__" in fix and "same keys" not in fix
    assert fix_rules_of(doc) == {"cache_key_pytree_identity"}


@pytest.mark.parametrize("name, rule", [
    # metadata that differ by value (a register_dataclass meta field), a NamedTuple restored as a tuple, static
    # arguments compared by identity: each keeps its row
    ("jax_namedtuple_restore", "cache_key_pytree"),
    ("jax_method_hash", "static_value"),
    ("rev11_jx_static_obj", "static_identity"),
])
def test_pytree_look_alikes_keep_their_rows(name, rule):
    folder = SC / "jax" / name
    doc = _doc(folder / "dump", "--jax-log", str(folder / "stderr.log"))
    assert rule in fix_rules_of(doc) and "cache_key_pytree_identity" not in fix_rules_of(doc)


def test_metadata_by_value_is_no_identity():
    doc = _doc(SC / "jax" / "jax_dataclass_meta_lr" / "dump", "--jax-log",
               str(SC / "jax" / "jax_dataclass_meta_lr" / "stderr.log"))
    assert "cache_key_pytree_identity" not in fix_rules_of(doc)


GRL = '''import functools
import jax


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def grl(x, lam):
    return x


scale = jax.custom_vjp(lambda x, s: x * s, nondiff_argnums=(1,))


@functools.partial(jax.jit, static_argnums=(2, 3, 4))
def step(w, x, lam, s, n):
    def loss(w):
        return (grl(x @ w, lam) * scale(x, s)).sum() * grl(x, 1.0).sum() * n
    return jax.grad(loss)(w)
'''


@pytest.mark.parametrize("parameter, callee", [("lam", "grl"), ("s", "scale"), ("n", None), ("w", None)])
def test_a_static_argument_fed_to_nondiff_argnums_is_found_in_the_source(tmp_path, parameter, callee):
    from hlodiff.dumps.nondiff_source import nondiff_callee

    path = tmp_path / "grl.py"
    path.write_text(GRL)
    assert nondiff_callee(str(path), 13, parameter) == callee  # the decorator's line, as JAX's log names it
    assert nondiff_callee(str(path), 14, parameter) == callee  # the def's line
    assert nondiff_callee(str(tmp_path / "gone.py"), 13, parameter) is None


def test_with_its_source_the_grl_static_is_told_to_leave_nondiff_argnums():
    """r17_jx_grl_nondiff_static: lam static because custom_vjp's nondiff_argnums refuses tracers. The first try
    said 'pass it as a traced argument', which raises UnexpectedTracerError here. The capture's paths are
    neutral: the source is found with --source-map (a user's run has it on disk)."""
    folder = SC / "jax" / "r17_jx_grl_nondiff_static" / "record"
    mapped = ("--source-map", f"/home/user/project={SC / 'jax'}")
    fix = _doc(folder, *mapped, codes=(1,))["headline"]["fix"]
    assert "nondiff_argnums" in fix and "`grl`" in fix and "cotangent" in fix
    assert "nondiff_argnums" not in _doc(folder, codes=(1,))["headline"]["fix"]  # no source: nothing claimed


@pytest.mark.parametrize("name", ["rev10_jx_static_lr", "rev4_static_temp", "jax_static_topk"])
def test_other_static_arguments_with_their_source_keep_their_rows(name):
    folder = SC / "jax" / name
    mapped = ("--source-map", f"/home/user/project={SC / 'jax'}", "--source-map", f"/src/scenarios/jax={SC / 'jax'}")
    doc = _doc(folder / "dump", "--jax-log", str(folder / "stderr.log"), *mapped)
    assert "static_nondiff_argnums" not in fix_rules_of(doc)
    assert "argnum" not in doc["headline"]["fix"]  # the source was read: the argument has its name


def test_each_step_graph_gets_the_checks_compiled_before_its_first_run():
    """Checks compiled again for a step graph compiled anew (another shape) belong to that graph only; checks no
    execution follows are left out."""
    from types import SimpleNamespace as NS

    from hlodiff.dumps.anomaly_checks import checked_steps

    c1, c2, c3, c4 = (NS(name=f"check{i}") for i in range(4))
    checks = [(NS(line=10), c1), (NS(line=20), c2), (NS(line=60), c3), (NS(line=90), c4)]
    executions = [NS(line=30, graph_hash="A"), NS(line=40, graph_hash="A"), NS(line=70, graph_hash="B"),
                  NS(line=80, graph_hash="A")]
    assert checked_steps(checks, executions) == {"A": [c1, c2], "B": [c3]}
