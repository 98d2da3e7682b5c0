"""One line per cause saying what to change, chosen from what was found, not from the kind alone.

A kind says *what* differs; users want to know what to type. The same ``constant`` kind is a learning rate of
exactly 0 that torch_xla baked into the graph (keep it a tensor) or a JAX static argument that changed (make it
traced); the same ``inputs`` kind is AdamW creating its state on the first step (expected warm-up) or a tensor
that is materialized on some steps only. The facts that tell them apart are in the cause's origins (opcodes,
shapes, values) and, for what only the run knows (is this the last step? does the family settle?), in a
:class:`FixContext` the caller fills in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

from hlodiff.diff.model import Cause, Change

_SPECIAL_SCALARS = {"0", "-0", "1", "-1", "0.0", "-0.0", "1.0", "-1.0"}


@dataclass(frozen=True, slots=True)
class FixContext:
    """What the run knows about a recompilation that the two graphs alone do not.

    ``producer`` is ``"torch_xla"``, ``"jax"`` or ``None`` (unknown, e.g. two HLO files); ``last_in_family``: the
    recompiled graph is the last its family ran (a short final batch); ``settles``: the family compiles nothing
    after its first few graphs (warm-up); ``first_recompilation``: the first recompilation of its family.
    """

    producer: str | None = None
    last_in_family: bool = False
    settles: bool = False
    first_recompilation: bool = False
    setup: bool = False
    """The family's graphs each ran once while the program set up (initialisation, FSDP wrapping)."""
    period: int = 0
    """The family cycles through a handful of variants with this period (2: alternating); 0 when it does not."""
    others: tuple[str, ...] = ()
    """Kinds of the other causes of the same recompilation: a consequence says which one it follows from."""
    added_inputs: frozenset[str] = frozenset()
    """Right-side names of the parameters the ``inputs`` causes added: torch_xla donating exactly those follows
    from them."""
    second_step: bool = False
    """The recompiled graph is the second its family ran (the first graph differed, then steady: warm-up)."""
    materialized: bool = False
    """On the second step, every output the first graph had and this one lacks came back as an input of its
    shape: a tensor made before the loop was computed by the first step's sync, and is device data since."""


def producer_from_name(module_name: str) -> str | None:
    """``torch_xla`` or ``jax`` from the module name their tracers give (``SyncTensorsGraph.76``, ``IrToHlo.52``,
    ``jit_step``); None when the name says neither."""
    if module_name.startswith(("SyncTensorsGraph", "IrToHlo")):
        return "torch_xla"
    if module_name.startswith(("jit_", "pjit_", "pmap_", "xla_computation_")):
        return "jax"
    return None


_JAX_OP_NAME = re.compile(r'op_name="(jit|pjit|pmap|xla_computation)\(')
_TORCH_OP_TYPE = re.compile(r'op_type="(aten__|xla__)')


def producer_of(module) -> str | None:
    """``torch_xla`` or ``jax`` for a parsed module: its name, else its instructions' metadata (JAX writes
    ``op_name="jit(step)/..."``, torch_xla ``op_type="aten__..."``), so a renamed module still gets fixes in its
    framework's words. None when neither shows (then fixes use words of both)."""
    found = producer_from_name(module.name or "")
    if found is not None:
        return found
    for n, (_, inst) in enumerate(module.instructions()):
        if n >= 512:
            break
        meta = inst.attrs.get("metadata") or ""
        if _JAX_OP_NAME.search(meta):
            return "jax"
        if _TORCH_OP_TYPE.search(meta):
            return "torch_xla"
    return None


def apply_fixes(causes: list[Cause], context: FixContext = FixContext()) -> None:
    """Set ``fix`` on every cause that has none yet (a cause built with a fix, e.g. from JAX's log, keeps it)."""
    if not context.added_inputs:
        context = replace(context, added_inputs=added_inputs(causes))
    for cause in causes:
        if cause.fix is None:
            cause.fix = fix_for(cause, context)


def fix_for(cause: Cause, context: FixContext = FixContext()) -> str:
    if context.setup:
        return "expected: each setup graph (initialisation, wrapping) ran once; nothing to fix"
    rule = _RULES.get(cause.kind)
    return rule(cause, context) if rule else "keep what differs here the same on every step"


# -- per kind ----------------------------------------------------------------------------------------------------


def _shape(cause: Cause, ctx: FixContext) -> str:
    first = _first_changed(cause)
    on_input = first is not None and first.left.opcode == "parameter"
    if on_input and ctx.last_in_family and _leading_dim_shrank(first):
        if ctx.producer == "jax":
            return "the last batch is short: drop it, or pad it to the full batch size (and mask the padding)"
        return "the last batch is short: use DataLoader(drop_last=True), or pad it to the full batch size"
    if on_input:
        if ctx.producer == "jax":
            return "each new argument shape compiles again: pad arguments to a few fixed sizes (bucket lengths)"
        return "pad inputs to a few fixed sizes (bucket sequence lengths, pad the batch)"
    return "a size follows a Python value that changes each step: keep sizes fixed (allocate the largest once, mask)"


def _dtype(cause: Cause, ctx: FixContext) -> str:
    """Chosen by what created the changed value, never by the direction alone: a constant made at a user line is a
    tensor built with its own dtype (``zeros_like(..., dtype=)``), one made inside library code is autocast
    recasting an op; an input that changed precision on the first recompilation of a warm-up is setup (a pending
    ``.to(bfloat16)``) that ran inside the first step."""
    first = _first_changed(cause)
    jax = ctx.producer == "jax"
    if jax and first is not None and _changed_precision(first) and first.right.shape.startswith(_LOW):
        return ("values switch between f32 and a lower precision between calls (a dtype policy or `.astype` "
                "applied on some calls only): pick one compute dtype for every call")
    if first is not None and first.left.opcode == "parameter":
        if not jax and ctx.first_recompilation and ctx.settles and _library_made(first):
            return (f"setup ran inside the first step: a pending cast of the model (`.to({_dtype_name(first)})`) was "
                    "folded into its graph: call torch_xla.sync() after building the model, before the loop")
        if jax:
            return "an argument arrives with another dtype on some calls: cast it to one dtype (x.astype(jnp.float32))"
        return "an input arrives with another dtype on some steps: cast it to one dtype (x.float()) before .to(device)"
    made = _creation_sides(cause)
    if made is None and first is not None and _changed_precision(first):
        if jax:
            return ("values switch between f32 and a lower precision between calls (a dtype policy or `.astype` "
                    "applied on some calls only): pick one compute dtype for every call")
        return ("mixed precision (autocast) was switched on or off between steps: enable autocast from the first "
                "step, or never")
    where = f"; {made}" if made else ""
    if jax:
        return (f"an array is created with its own dtype (`dtype=` in `jnp.zeros_like`/`jnp.full_like`, a "
                f"literal{where}): let it follow its input's dtype")
    return (f"a tensor is created with its own dtype (`dtype=` in `zeros_like`/`full_like`{where}): drop `dtype=` so "
            "it follows its input")


def _constant(cause: Cause, ctx: FixContext) -> str:
    first = _first_changed(cause)
    values = _values(first) if first is not None else set()
    moved = first is not None and "opcode" in first.kinds  # between constant and parameter
    special = (moved and values & _SPECIAL_SCALARS) or (values and values <= _SPECIAL_SCALARS)
    if ctx.producer == "jax":
        return ("a Python value baked into the function changed (static argument, closure): pass it as a traced "
                "argument (a jnp array) instead of a Python constant")
    if special and ctx.producer == "torch_xla":
        return ("a scalar of exactly 0 or 1 (e.g. lr at the start of a schedule) is baked in: keep it a tensor "
                "(torch.tensor(lr, device=device))")
    if ctx.producer == "torch_xla":
        return ("a Python number baked into the graph changes: pass it as a device tensor "
                "(torch.tensor(v, device=device))")
    if special:
        return ("a scalar of exactly 0 or 1 (e.g. lr at the start of a schedule) is baked in as a constant: pass it "
                "as an input (a device tensor or a traced array) instead")
    return "a Python number baked into the graph changes: pass it as an input (a device tensor or a traced array)"


def _attribute(cause: Cause, ctx: FixContext) -> str:
    keys = {k.split(":", 1)[1] for c in cause.origins for k in c.kinds if k.startswith("attribute:")}
    resized = any("shape" in c.kinds for c in cause.origins if c.left is not None and c.right is not None
                  and c.left.opcode in ("slice", "dynamic-slice"))
    if keys & {"slice", "dynamic_slice_sizes"} and resized:  # a device index would recompile per length too
        return ("a slice's length follows a Python int (`x[:n]`): every new length compiles again: pad to a fixed "
                "length and mask, or bucket lengths to a few sizes")
    if keys & {"slice", "dynamic_slice_sizes"} and ctx.producer == "jax":
        return ("a Python int is baked in as a slice bound (`x[:, i]`): index with a traced int "
                "(lax.dynamic_slice, jnp.take)")
    if keys & {"slice", "dynamic_slice_sizes"}:
        return "a Python int is baked in as a slice bound (`x[:, i]`): index with a device tensor (torch.index_select)"
    if keys & {"dimensions", "sizes", "padding", "window"}:
        return "an op's dimensions follow a Python value that changes: keep them fixed across steps"
    return "an op attribute follows a Python value that changes: keep it fixed, or pass it as a tensor"


def _inputs(cause: Cause, ctx: FixContext) -> str:
    if ctx.producer == "jax":
        return ("the function takes other arguments on some calls (optional pytree leaves, state created on the "
                "first call): pass the same arguments, with the same structure, every call")
    if _transposed_input(cause):
        return ("a tensor arrives transposed on some steps (a `.t()`/permute view materialized by an earlier sync): "
                "sync at the same points every step, or keep the view lazy")
    added = any(c.right is not None and c.left is None for c in cause.origins) or "added" in cause.summary
    if ctx.materialized and added:
        return _MATERIALIZED
    new = [c.right for c in cause.origins if c.left is None and c.right is not None]
    if "ops" in ctx.others and new and all(r.shape.split("{", 1)[0].endswith("[]") for r in new) \
            and "removed" not in cause.summary and not ctx.second_step:
        return ("follows from the ops change: the new operations read this number (torch_xla passes a Python "
                "scalar in as an input)")
    removed_work = "instructions removed" in cause.summary
    if added and (removed_work or ctx.second_step) and ctx.first_recompilation and ctx.settles:
        made = _user_made_inputs(cause)
        if made:  # state the user's own code creates on the first step (an accumulator), not an optimizer's
            return (f"expected warm-up: a tensor created on the first step ({made}) is device data from then on; "
                    "nothing to fix (or create it before the loop and sync)")
        return "expected warm-up: the optimizer creates its state on the first step; nothing to fix (warmup=1)"
    if ctx.period > 2 and added:
        return (f"the graphs cycle every {ctx.period} steps (gradient accumulation: grads created, accumulated, then "
                "the optimizer step): expected, each variant compiles once")
    return "a value computed in the graph is device data on other steps: materialize the same tensors every step"


_MATERIALIZED = ("expected once: a tensor made before the loop was computed by the first step's graph and is "
                 "device data from then on (call torch_xla.sync() right after creating it to keep it out of the step)")


def _outputs(cause: Cause, ctx: FixContext) -> str:
    if ctx.materialized and "removed" in cause.summary and "added" not in cause.summary:
        return "follows from the inputs change: " + _MATERIALIZED
    leading = [k for k in ("dtype", "shape", "constant", "attribute", "ops") if k in ctx.others]
    if leading and "added" in cause.summary and "removed" in cause.summary:
        return f"follows from the {leading[0]} change: outputs changed type or shape with it"
    if ctx.producer == "jax":
        return "the function returns other values on some calls (a metric, a log): return the same outputs every call"
    return "a value is kept on some steps only (a metric, a log): compute it every step, or read it after the sync"


def _ops(cause: Cause, ctx: FixContext) -> str:
    opcodes = {(c.right or c.left).opcode for c in cause.origins}
    if opcodes and opcodes <= {"convert"} and "dtype" in ctx.others:
        return "follows from the dtype change: the converts come with it"
    if opcodes and opcodes <= {"transpose", "copy"} and "inputs" in ctx.others:
        return "follows from the inputs change: the transposes come with the transposed input"
    leading = [k for k in ("constant", "dtype", "shape", "attribute", "outputs", "layout") if k in ctx.others]
    if opcodes and opcodes <= {"transpose", "copy", "bitcast", "reshape"} and leading:
        return (f"follows from the {leading[0]} change: the tracer lays out the same values with other "
                "transposes or copies along with it")
    if "inputs" in ctx.others and ctx.second_step and ctx.settles and "removed" not in cause.summary:
        return ("follows from the inputs change (warm-up): from the second step on the optimizer also updates the "
                "state it created on the first (momentum, moments): nothing to fix")
    if _rewired(cause) or any("operands" in c.details for c in cause.origins):  # same ops, combined otherwise
        return ("the same tensors are combined in another order (parameters, grads or a dict iterated in varying "
                "order): iterate in one fixed order")
    if ctx.producer == "jax":
        return "the traced Python takes another path: keep branches and loop counts fixed (jnp.where / lax.cond)"
    return "the traced code takes another path on some steps (a Python `if`): run the same ops every step (torch.where)"


_MOVED = frozenset(("transpose", "copy", "bitcast", "reshape", "broadcast"))


def _rewired(cause: Cause) -> bool:
    """The same operations with their inputs combined in another order (`sum(d.values())` over a dict whose order
    varies): every changed instruction differs in its operands only, and what appears or goes besides is layout
    plumbing (a transpose placed elsewhere), no more of it than there are rewired instructions."""
    changed = [c for c in cause.origins if c.side == "changed"]
    moved = [c for c in cause.origins if c.side != "changed"]
    return (bool(changed) and all(set(c.kinds) == {"operands"} for c in changed) and len(moved) <= len(changed)
            and all((c.right or c.left).opcode in _MOVED for c in moved))


def _partial(cause: Cause, ctx: FixContext) -> str:
    return ("a value read before the sync (.item(), print) cut the step: read it after the sync, or use "
            "xm.add_step_closure")


def _reordered(cause: Cause, ctx: FixContext) -> str:
    leading = [k for k in ctx.others if k != "reordered"]
    if leading:
        return f"follows from the {leading[0]} change: its values reach the outputs in another order"
    return "the same work is traced in another order (callbacks, hooks, set iteration): run them in a fixed order"


def _layout(cause: Cause, ctx: FixContext) -> str:
    if ctx.producer == "jax":
        return "an argument arrives with another memory layout on some calls: make it the same every call"
    return "a tensor arrives with another memory layout on some steps (.t(), permute): make it the same every step"


def _sharding(cause: Cause, ctx: FixContext) -> str:
    if ctx.producer == "torch_xla":
        return "an input or op is sharded differently between steps: mark_sharding with the same mesh and spec every step"
    return "an input or op is sharded differently between steps: mark the same sharding (mesh, spec) every time"


def _aliasing(cause: Cause, ctx: FixContext) -> str:
    if ctx.producer != "torch_xla":
        return "donation was toggled between calls (donate_argnums, buffer donation): keep the donated arguments fixed"
    # torch_xla chooses donation itself: the input buffer of every tensor the graph overwrites is donated
    # (XLA_ENABLE_PARAM_ALIASING, on by default). No user argument to fix, unless the in-place updates vary.
    if _donates_added_inputs(cause, ctx):
        if ctx.first_recompilation and ctx.settles:
            return ("follows from the inputs change (warm-up): torch_xla donates the buffers of tensors the step "
                    "overwrites (XLA_ENABLE_PARAM_ALIASING), and the new inputs (optimizer state, once it exists) "
                    "are overwritten in place: nothing to fix")
        return ("follows from the inputs change: torch_xla donates the buffers of tensors the step overwrites "
                "(XLA_ENABLE_PARAM_ALIASING), the new inputs among them: fix the inputs change and this goes too")
    return ("torch_xla decides donation itself (it donates the buffers of tensors the step overwrites in place; "
            "XLA_ENABLE_PARAM_ALIASING): a tensor updated in place (add_, copy_, optimizer state) on some steps only "
            "changes it: update the same tensors in place every step")


def _compile_options(cause: Cause, ctx: FixContext) -> str:
    return "the same graph was compiled with other options (XLA_FLAGS, compiler options): set them once, up front"


def _weak_type(cause: Cause, ctx: FixContext) -> str:
    if ctx.producer == "torch_xla":
        return "a Python scalar and a tensor were passed in turn: pass the same kind of value every step"
    return "a Python scalar (weak type) and a typed array were passed in turn: pass a typed array (jnp.float32(x))"


def _static_argument(cause: Cause, ctx: FixContext) -> str:
    if ctx.producer == "torch_xla":
        return "a Python value the graph depends on took a new value: pass it as a device tensor, or fix its value"
    return "a static argument took a new value: pass it as a traced argument, or keep it to a few values"


def _cache_key(cause: Cause, ctx: FixContext) -> str:
    if ctx.producer == "jax":
        return ("the HLO is identical: rerun with JAX_EXPLAIN_CACHE_MISSES=1 (hlodiff record) to see which argument "
                "changed")
    return "the HLO is identical: keep the function object, argument types and compile options the same between calls"


_RULES: dict[str, Callable[[Cause, FixContext], str]] = {
    "reordered": _reordered, "shape": _shape, "dtype": _dtype, "layout": _layout, "constant": _constant,
    "attribute": _attribute, "inputs": _inputs, "outputs": _outputs, "ops": _ops, "partial": _partial,
    "sharding": _sharding, "aliasing": _aliasing, "compile_options": _compile_options, "weak_type": _weak_type,
    "static_argument": _static_argument, "cache_key": _cache_key,
}


# -- facts from the origins ----------------------------------------------------------------------------------------


def added_inputs(causes: list[Cause]) -> frozenset[str]:
    """Right-side names of the parameters that ``inputs`` causes list as added."""
    return frozenset(b for c in causes if c.kind == "inputs" for a, b in c.instructions if a is None and b)


def _donates_added_inputs(cause: Cause, ctx: FixContext) -> bool:
    """Donation was only gained, and only by parameters the recompiled graph added."""
    gained = [b for _, b in cause.instructions]
    return (bool(gained) and "on the left only" not in cause.summary and "other outputs" not in cause.summary
            and all(b in ctx.added_inputs for b in gained))


def _first_changed(cause: Cause) -> Change | None:
    return next((c for c in cause.origins if c.left is not None and c.right is not None), None)


def _values(change: Change) -> set[str]:
    found = set()
    for key in ("literal", "value"):
        found |= {v.strip() for v in change.details.get(key, ()) if v}
    return found


def _transposed_input(cause: Cause) -> bool:
    """One input added and one removed, same element type, same dimensions in another order: the same tensor
    handed over transposed."""
    added = [c.right.shape for c in cause.origins if c.left is None and c.right is not None]
    removed = [c.left.shape for c in cause.origins if c.right is None and c.left is not None]
    if not added or len(added) != len(removed):
        return False
    return sorted(_array_key(s) for s in added) == sorted(_array_key(s) for s in removed) and added != removed


def _array_key(shape: str) -> tuple:
    m = _DIMS.search(shape)
    dims = sorted(m.group(1).split(",")) if m else []
    return (shape.split("[", 1)[0], tuple(dims))


_LOW = ("bf16[", "f16[", "f8")
_FLOAT = ("f64[", "f32[") + _LOW


def _changed_precision(change: Change) -> bool:
    """Between two floating types: what autocast does to the values it touches (either way round)."""
    return change.left.shape.startswith(_FLOAT) and change.right.shape.startswith(_FLOAT)


def _library_made(change: Change) -> bool:
    """Both sides' innermost frames are library code (torch's Module.to, nn.functional): no user line made it."""
    frames = [s.frames[0] for s in (change.left, change.right) if s is not None and s.frames]
    return bool(frames) and all(f.is_library for f in frames)


def _dtype_name(change: Change) -> str:
    name = change.right.shape.split("[", 1)[0]
    return {"bf16": "torch.bfloat16", "f16": "torch.float16", "f32": "torch.float32", "f64": "torch.float64"}.get(
        name, name)


def _creation_sides(cause: Cause) -> str | None:
    """Where each side created the changed value, when a user line did (``f32 at t.py:10, bf16 at t.py:12``).

    The first changed non-input with frames decides: a user frame there means the user's code built the value with
    that dtype; a library frame (nn.functional under autocast) means an op was recast. None when no user line."""
    for change in cause.origins:
        if change.left is None or change.right is None or change.left.opcode == "parameter":
            continue
        sides = [(s.shape.split("[", 1)[0], s.frames[0]) for s in (change.left, change.right) if s.frames]
        if not sides:
            continue
        if any(f.is_library for _, f in sides):
            return None
        if len(sides) == 2 and sides[0][1] != sides[1][1]:
            return ", ".join(f"{t} at {_short(f)}" for t, f in sides)
        return f"at {_short(sides[0][1])}"
    return None


def _user_made_inputs(cause: Cause) -> str:
    """User lines that made the added inputs (``t.py:11``), empty when library code (an optimizer) made them."""
    lines = []
    for change in cause.origins:
        if change.left is None and change.right is not None and change.right.frames:
            mine = [f for f in change.right.frames if not f.is_library]
            if len(mine) != len(change.right.frames) or not mine:
                return ""
            lines.append(_short(mine[0]))
    return ", ".join(dict.fromkeys(lines))


def _short(frame) -> str:
    name = frame.file.replace("\\", "/").rsplit("/", 1)[-1]
    return name if frame.line is None else f"{name}:{frame.line}"


_DIMS = re.compile(r"\[([^\]]*)\]")


def _leading_dim_shrank(change: Change) -> bool:
    a, b = _DIMS.search(change.left.shape), _DIMS.search(change.right.shape)
    if not a or not b:
        return False
    try:
        ld = [int(x) for x in a.group(1).split(",") if x]
        rd = [int(x) for x in b.group(1).split(",") if x]
    except ValueError:
        return False
    return bool(ld) and len(ld) == len(rd) and rd[0] < ld[0] and ld[1:] == rd[1:]
