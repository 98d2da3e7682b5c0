"""Thirteenth stop's last read: rules a reviewer proved over-fire, each with its look-alike's evidence. The
look-alike gets a narrower answer; the scenario the rule was made for keeps its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from explain_helpers import explain_status

from hlodiff.diff.fix_rules import RULES_BY_NAME
from hlodiff.diff.fixes import FixContext, decide
from hlodiff.diff.model import Cause
from hlodiff.diff.value_facts import axes_specs
from hlodiff.dumps.axes_source import passed_as_axes
from hlodiff.dumps.compile_cache import CacheCompilation
from hlodiff.dumps.dynamo_log import read_text_log
from hlodiff.explain.dynamo_log_findings import breaks_of
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.explain.run_repeats import REPEATED_WEIGHTS, REPEATED_WORK, repeated_work
from hlodiff.explain.run_verdicts import Verdict
from hlodiff.hlo.parser import parse_module
from hlodiff.render.across_runs import fix_text


# -- compare-runs repeated_work: a depth from the environment repeats weights, not data ----------------------------

class _Step:
    """A step graph as compare-runs reads it (its module)."""

    def __init__(self, text: str):
        self._module = parse_module(text)

    def module(self):
        return self._module


def _step_hlo(depth: int, batches: int = 1, donors_marked: bool = True) -> str:
    """A torch_xla training step: ``batches`` inputs f32[4,16] through ``depth`` Linear(16,16) layers whose weights
    the step writes back (buffer_donor), as torch_xla marks them."""
    params, body, outs, donors = [], [], [], []
    for k in range(batches):
        params.append(f"  %x{k} = f32[4,16]{{1,0}} parameter({len(params)})")
    for layer in range(depth):
        for name, shape in ((f"w{layer}", "f32[16,16]{1,0}"), (f"b{layer}", "f32[16]{0}")):
            donors.append(len(params))
            params.append(f"  %{name} = {shape} parameter({len(params)})")
    for k in range(batches):
        h = f"%x{k}"
        for layer in range(depth):
            body += [f"  %d{k}_{layer} = f32[4,16]{{1,0}} dot({h}, %w{layer}), lhs_contracting_dims={{1}}, "
                     f"rhs_contracting_dims={{0}}",
                     f"  %bb{k}_{layer} = f32[4,16]{{1,0}} broadcast(%b{layer}), dimensions={{1}}",
                     f"  %h{k}_{layer} = f32[4,16]{{1,0}} add(%d{k}_{layer}, %bb{k}_{layer})"]
            h = f"%h{k}_{layer}"
        outs.append(h)
    for layer in range(depth):
        body += [f"  %nw{layer} = f32[16,16]{{1,0}} negate(%w{layer})", f"  %nb{layer} = f32[16]{{0}} negate(%b{layer})"]
        outs += [f"%nw{layer}", f"%nb{layer}"]
    shapes = ["f32[4,16]{1,0}"] * batches + ["f32[16,16]{1,0}", "f32[16]{0}"] * depth
    header = f", buffer_donor={{ {', '.join(f'({n}, {{}})' for n in donors)} }}" if donors_marked else ""
    return (f"HloModule SyncTensorsGraph.1{header}\n\n"
            f"ENTRY %main {{\n" + "\n".join(params + body)
            + f"\n  ROOT %t = ({', '.join(shapes)}) tuple({', '.join(outs)})\n}}\n")


def test_more_layers_of_one_shape_are_not_told_as_more_micro_batches():
    # look-alike: DEPTH=2 then 4 of Linear(16,16): only written-back weights repeat, the batch f32[4,16] does not
    [d] = repeated_work(_Step(_step_hlo(2)), _Step(_step_hlo(4)))
    assert d.name == REPEATED_WEIGHTS and "f32[16,16] x4" in d.b
    said = fix_text(Verdict("SyncTensorsGraph", "miss_hlo_differs", "inputs", differences=[d]))
    assert "micro-batches" not in said and "more layers of the same shapes" in said and "run B's step" in said
    # without donors in the header nothing tells data from weights: not the loop story either
    bare = [_Step(_step_hlo(2, batches, donors_marked=False)) for batches in (2, 4)]
    assert [d.name for d in repeated_work(*bare)] == [REPEATED_WEIGHTS]


def test_more_batches_through_the_same_weights_keep_the_loop_story():
    [d] = repeated_work(_Step(_step_hlo(2, batches=2)), _Step(_step_hlo(2, batches=4)))
    assert d.name == REPEATED_WORK and "f32[4,16] x4" in d.b


# -- dynamo_graph_break_autograd_inside: requires_grad_() alone takes no gradient ----------------------------------

_D30 = Path(__file__).resolve().parent.parent / "fixtures/scenarios/dynamo/d30_saliency_autograd_grad/stderr.log"


def _break_rules(lines: list[str]) -> list[str]:
    log = read_text_log("stderr.log", lines, [])
    return [f.fix_rule for f in breaks_of(log)]


def test_requires_grad_alone_is_the_call_that_breaks_not_a_gradient_taken():
    lines = _D30.read_text().splitlines(keepends=True)
    requires_grad = [ln for ln in lines if "[0/0] [__graph_breaks]" in ln]  # the requires_grad_ break only
    # look-alike: an input-gradient hook marks the embedding output (`output.requires_grad_(True)`) inside the
    # compiled model; the gradient is taken by loss.backward() outside, no autograd.grad in the compiled code
    assert _break_rules(requires_grad) == ["dynamo_graph_break_requires_grad"]
    assert "before the call" in RULES_BY_NAME["dynamo_graph_break_requires_grad"].text
    # a grad break in another function does not make this one a gradient taken
    grad_elsewhere = [ln.replace("in saliency", "in penalty") for ln in lines if "[1/0] [__graph_breaks]" in ln]
    assert _break_rules(requires_grad + grad_elsewhere)[0] == "dynamo_graph_break_requires_grad"
    # the saliency map itself: requires_grad_ then autograd.grad in one function keeps its row
    assert set(_break_rules(lines)) == {"dynamo_graph_break_autograd_inside"}


# -- static_axes_spec: a static pad target (256, None) is a size, not vmap's in_axes --------------------------------

_PAD_TARGET = '''from functools import partial
import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("target",))
def pad_to(x, target):
    rows = target[0] - x.shape[0]   # None: keep this dimension
    return jnp.pad(x, ((0, rows), (0, 0)))
'''

_IN_AXES = _PAD_TARGET.replace("def pad_to(x, target):\n", "def pad_to(x, target):\n    return jax.vmap(jnp.sin, "
                                                             "in_axes=target)(x)\n")


def test_a_static_pad_target_is_no_axis_spec(tmp_path):
    # look-alike: (256, None) / (128, None), None = keep this dimension: sizes, never "an axis specification"
    assert not axes_specs(("(256, None)", "(128, None)"))
    assert axes_specs(("(0, None, None)", "(0, 0, 0)"))  # r30_jx_vmap_bagging_axes keeps its fact
    # small numbers and None alone do not tell a pad target from in_axes: the source on disk does
    pad, vmapped = tmp_path / "pad.py", tmp_path / "vmapped.py"
    pad.write_text(_PAD_TARGET)
    vmapped.write_text(_IN_AXES)
    assert passed_as_axes(str(pad), 6, "target") is False
    assert passed_as_axes(str(vmapped), 6, "target") is True
    assert passed_as_axes(str(tmp_path / "gone.py"), 6, "target") is None
    cause = Cause("static_argument", "static argument target changed")
    told = {axes: decide(cause, FixContext(producer="jax", argument="target", values=("(2, None)", "(4, None)"),
                                           structure="shapes", axes_passed=axes)).rule.name
            for axes in (False, True, None)}
    assert told[False] != "static_axes_spec" and told[True] == told[None] == "static_axes_spec"


# -- dynamo_converted_after_compile: a converted copy leaves the compiled model running ----------------------------

_D28 = Path(__file__).resolve().parent.parent / "fixtures/scenarios/dynamo/d28_to_bf16_midrun"


def test_a_converted_copy_is_not_the_compiled_model_converted(tmp_path):
    doc, _ = explain_status(_D28)
    assert "the compiled model's parameters were converted" in doc["headline"]["fix"]  # the run stopped: kept
    # look-alike: copy.deepcopy(net).to(torch.bfloat16) for an export: the same conversion graph, but the compiled
    # model keeps its weights and the run goes on, the bridge's program executing on each later step
    run = tmp_path / "copy_run"
    shutil.copytree(_D28, run)
    log = (run / "pt_xla_debug.log").read_text()
    last = log[log.rindex("Execution Analysis: ================================================================================\n"
                          "Execution Analysis: Execution Cause"):]
    (run / "pt_xla_debug.log").write_text(log + "\n" + ("\n" + last) * 4)
    doc, _ = explain_status(run)
    said = json.dumps(doc)
    assert "the compiled model's parameters were converted" not in said


# -- dynamo_other_backend: two compiles only one of which a run can call ----------------------------------------------

_D30_BACKENDS = Path(__file__).resolve().parent.parent / "fixtures/scenarios/dynamo/d30_backend_check_eval"


def _backend_story(tmp_path, source: str) -> dict:
    run = tmp_path / "run"
    if not run.exists():
        shutil.copytree(_D30_BACKENDS, run)
    (tmp_path / "d30_backend_check_eval.py").write_text(source)
    doc, _ = explain_status(run, "--source-map", f"/home/user/project={tmp_path}")
    return doc["headline"]


def test_two_backends_need_two_compiles_a_run_calls(tmp_path):
    source = (_D30_BACKENDS.parent / "d30_backend_check_eval.py").read_text()
    assert "backend='aot_eager' at line 22" in _backend_story(tmp_path, source)["fix"]  # both called: kept
    # look-alike: the check compile is bound but never called (the check call was removed)
    uncalled = source.replace("check_loss(x, y).detach()", "train_loss(x, y).detach()")
    assert "backend='aot_eager'" not in _backend_story(tmp_path, uncalled)["fix"]
    # look-alike: one name bound in exclusive branches, one backend per run
    branches = source.replace('train_loss = torch.compile(loss_fn, backend="openxla")\n',
                              'if CHECK:\n    train_loss = torch.compile(loss_fn, backend="openxla")\n') \
        .replace('check_loss = torch.compile(loss_fn, backend="aot_eager")', 'else:\n    train_loss = '
                 'torch.compile(loss_fn, backend="aot_eager")').replace("check_loss(x, y)", "train_loss(x, y)")
    assert "backend='aot_eager'" not in _backend_story(tmp_path, branches)["fix"]


def test_layers_joined_claims_only_what_its_evidence_shows():
    # its facts (an added dot or convolution: `trains`) hold for a forward in eval that reads new layers and writes
    # nothing back: the row says the weights are read and computed with, not that they are updated
    text = RULES_BY_NAME["inputs_layers_joined"].text
    assert "updates" not in text and "reads weights of torch.nn layers" in text


# -- precision_jax: "with the same argument types" only when checked -------------------------------------------------

def test_jax_precision_says_the_same_argument_types_only_when_they_are():
    jax_b = CacheCompilation("train_step", "jit_train_step", 0, 1)
    diff = [KeyDifference("element_types", "16-bit floats", None, "bf16")]

    def said(a: str, b: str) -> str:
        return fix_text(Verdict("jit_train_step", "miss_hlo_differs", "dtype", b=jax_b, differences=diff,
                                a_record=_Step(a), b_record=_Step(b)))

    assert "with the same argument types" in said(_step_hlo(2), _step_hlo(2))
    # look-alike: the programs take other arguments (more of them here): not checked equal, not said
    assert "with the same argument types" not in said(_step_hlo(2), _step_hlo(4))
    assert "with the same argument types" not in fix_text(Verdict("jit_train_step", "miss_hlo_differs", "dtype",
                                                                  b=jax_b, differences=diff))


# -- inputs_params_added: a queue begun late is read and rewritten, never trained ------------------------------------

_TORCH_XLA = Path(__file__).resolve().parent.parent / "fixtures/scenarios/torch_xla"


def test_a_queue_begun_late_is_no_parameter_added_to_the_model():
    # look-alike (lr50_tx_queue_begun_late): a fixed-size contrastive queue begun at step 3, read for negatives by a
    # new dot and rewritten with cat: new tensors of a new shape written back, but no new gradient computes them
    doc, _ = explain_status(_TORCH_XLA / "lr50_tx_queue_begun_late/record")
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert "inputs_state_added" in rules and "inputs_params_added" not in rules
    assert "LoRA" not in doc["headline"]["fix"] and "optimizer" not in doc["headline"]["fix"]
    # the LoRA adapters it was made for: their update is computed from their new gradient
    doc, _ = explain_status(_TORCH_XLA / "rev21_tx_lora_added/record")
    assert "inputs_params_added" in {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
