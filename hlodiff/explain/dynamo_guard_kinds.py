"""What a failed guard (or a graph break) in Dynamo's log is about, read from its form: the recompile's kind
(``shape``, ``dtype``, ``python_value``, ``mode``, ``guard``), its subject (the tensor or Python name), what was
seen, and the typed facts the rows of :mod:`hlodiff.diff.fix_rules` choose a fix by (a list's length, a dict's
keys or their order, requires_grad, an object's class or identity, a size after a data-dependent break, ...).
Kept apart from :mod:`hlodiff.explain.dynamo`, which joins these findings to the XLA graphs."""

from __future__ import annotations

import re

from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak
from hlodiff.explain.dynamo_types import _SIZE

_DTYPE = re.compile(r"tensor '(?P<name>.+?)' dtype mismatch\. expected (?P<expected>\w+), actual (?P<actual>\w+)")
_VALUE = re.compile(r"^(?P<name>[\w.\[\]'\"]+) == (?P<value>-?[\d.]+(?:e[-+]?\d+)?|True|False)$")
_LR_NAME = re.compile(r"(?:^|[^A-Za-z0-9])(?:lr|learning_rate)(?:$|[^A-Za-z0-9])", re.IGNORECASE)
"""A guarded name that is a learning rate (``lr``, ``self.param_groups[0]['lr']``, ``cfg.learning_rate``): its fix
says why a tensor is right under torch.compile when eager torch_xla's says the opposite; a temperature's does not
(review 13, F6: a distillation temperature's fix went on about optimizer lrs)."""
_MODULE_ATTRIBUTE = re.compile(r"^(?:(?:self|L\['self'\])(?:\._modules\[['\"][^'\"]+['\"]\])*"
                               r"|(?:fn|L\['fn'\])(?:\._modules\[['\"][^'\"]+['\"]\])+)\.\w+$")
"""A guard on a plain attribute of the compiled module or a submodule (``self.step == 0``; torch 2.9 guards an
nn.Module's int and float attributes by value: pytorch/pytorch#115711). An item of a container on ``self``
(``self.param_groups[0]['lr']`` of a compiled ``opt.step``: dyn_sched_lr) is no module attribute. A compiled
``nn.Module`` is ``fn`` in torch 2.9's wrapper (``inner(fn, ...)``): a submodule's attribute there
(``fn._modules['1'].p``, a Dropout's rate: dyn_dropout_anneal) is one too; a bare ``fn.x`` may be any argument."""
_MODULE_LIST_ITEM = re.compile(r"^(?:self|L\['self'\])(?:\._modules\[['\"][^'\"]+['\"]\])*\.\w+\[\d+\]$")
"""A guard on one item of a Python list kept on the compiled module (``self.class_weights[0] == 1.0``: class weights
re-estimated per epoch and built into a tensor inside the forward, d18_class_weights_list): Dynamo bakes each item,
so the list as a whole belongs in a tensor. An item of an optimizer's groups (``self.param_groups[0]['lr']``) ends
in a key, not an index: no list item."""
_STRING = re.compile(r"^(?P<name>[\w.\[\]'\"]+) == (?P<value>'[^']*'|\"[^\"]*\")$")
"""A Python string argument or attribute guarded by value (``mode == 'train'``, ``task == 'cls'``): one traced
graph per name; a string can never be a tensor."""
_MODE = re.compile(r"GLOBAL_STATE changed: (?P<what>grad_mode|autocast\w*)|\.training\b")
_GLOBAL_STATE = re.compile(r"GLOBAL_STATE changed: (?P<what>\w+)")
GLOBAL_SETTINGS = {
    "num_threads": "torch.set_num_threads",
    "deterministic_algorithms": "torch.use_deterministic_algorithms",
    "default_dtype": "torch.set_default_dtype",
    "allow_tf32": "torch.set_float32_matmul_precision or torch.backends.cuda.matmul.allow_tf32",
    "allow_fp16_reduce": "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "allow_bf16_reduce": "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    "torch_function": "a torch function mode (torch._C.DisableTorchFunction, a TorchFunctionMode)",
}
"""The torch-wide settings Dynamo's GLOBAL_STATE guard checks besides grad mode and autocast (torch 2.9's
GlobalStateGuard, as ``GLOBAL_STATE changed: num_threads``), each with the call that changes it: a helper that sets
one for a while (one CPU thread while validating) and restores it makes Dynamo trace once per setting (Dynamo
round 12). A setting more than one call changes names each, the usual first (``set_float32_matmul_precision("high")``
sets allow_tf32: Dynamo round 15, where the guard's name alone sent the user to a flag they never touched)."""
_LENGTH = re.compile(r"^len\((?P<name>[^()]+)\) (?:==|!=) (?P<value>\d+)$")
"""A container's length: the guard as compiled (``len(crops) == 2``) or, for an nn.Module's container, as torch
2.9 prints the failure (``len(self._modules['blocks']._modules) != 2``); either way the value is the length the
failed entry was compiled for."""
_MODULES = re.compile(r"\._modules\[(?P<q>['\"])(?P<key>[^'\"]+)(?P=q)\]")
_DICT_KEY = re.compile(r"^(?P<negated>not )?___dict_contains\((?P<key>'[^']*'|\"[^\"]*\"|-?\d+), (?P<name>[^()]+)\)$")
"""A dict's key (a string, or an int: a table cached per sequence length, review 23 d1)."""
_NONE = re.compile(r"^(?P<name>[\w.\[\]'\"]+) is (?P<negated>not )?None$")
_GRAD = re.compile(r"\.grad$")
"""A ``.grad is None`` guard (``self.param_groups[0]['params'][4].grad is None`` of a compiled ``opt.step``: the
optimizer skips a parameter without a gradient, Dynamo round 11): the gradient is missing on the steps whose loss
did not reach that parameter after ``zero_grad()`` set it to None."""
_HOOKS = re.compile(r"(?P<name>[\w.\[\]'\"]+?)\._(?P<which>(?:forward|forward_pre|backward|backward_pre)_hooks)\b")
"""A guard on an nn.Module's hook dict (``not fn._forward_hooks``, ``len(L['self']._forward_pre_hooks) == 1``):
Dynamo guards a compiled module's hooks when ``skip_nnmodule_hook_guards`` is off (review 3, F4)."""
_GLOBAL = re.compile(r"^G\[")
"""A name Dynamo reads from the module's globals (``G['__import___main__'].acts``): no argument of the call."""
_GLOBAL_TRUTH = re.compile(r"^(?P<negated>not )?(?P<name>G\[[^\]]+\](?:\.\w+)*)$")
"""A guard on a global's truth (``not G['__import___main__'].acts``): it was empty (or false), now it is not."""
_ENVIRON = re.compile(r"^(?P<negated>not )?(?:___dict_contains\(b?(?P<q1>['\"])(?P<var1>[^'\"]+)(?P=q1), "
                      r"G\[[^\]]+\]\.environ\._data\)"
                      r"|G\[[^\]]+\]\.environ\._data\[b?(?P<q2>['\"])(?P<var2>[^'\"]+)(?P=q2)\]"
                      r" == b?(?P<value>'[^']*'|\"[^\"]*\"))$")
"""An environment variable read in the compiled code (``os.environ.get("NET_DEBUG")``): Dynamo traces through the
stdlib's ``os.environ`` (a frozen module) and guards the bytes it read (``G['os'].environ._data[b'NET_DEBUG'] ==
b'0'``) or whether the variable was set (``___dict_contains(b'NET_DEBUG', G['os'].environ._data)``): one trace per
value (d23_env_debug)."""
_ATTRIBUTE_TRUTH = re.compile(r"^(?P<negated>not )?(?P<name>[\w.\[\]'\"]+)$")
"""A guard on the truth of an attribute of the compiled module (``not self.norm_history``): a container kept on the
module was empty (or a value false) at the compile, and is not now; only a module attribute (``_MODULE_ATTRIBUTE``)
is read so (a global's truth is ``_GLOBAL_TRUTH``)."""
_LOCAL_TRUTH = re.compile(r"^(?:not )?(?:L\['(?P<quoted>[A-Za-z_]\w*)'\]|(?P<bare>[A-Za-z_]\w*))$")
"""A guard on the truth of a plain local name (``not history``, ``not L['history']``): an argument (a default one
too) that was empty (or false) at the compile; what it is about is read from the line (:func:`local_truth_name`)."""
_IMPORTED = re.compile(r"^G\['__import_[^']*'\]\.")
_REQUIRES_GRAD = re.compile(r"tensor '(?P<name>.+?)' requires_grad mismatch")
"""A tensor's requires_grad; the name may hold quotes of its own (a module's parameter reached through an argument:
``tensor 'm._modules['fc1']._parameters['bias']' requires_grad mismatch``, Dynamo round 12)."""
# Dynamo round 5: a tensor argument's exact type (an nn.Parameter, then a plain tensor: torch 2.9 prints the guard
# with a stray quote), its dispatch keys (an inference tensor has no Autograd key), an object's class
_TENSOR_TYPE = re.compile(r"expected type of '(?P<name>[^']+)' to be a tensor type, '? ?but found (?P<found><class '[^']+'>)")
_DISPATCH = re.compile(r"tensor '(?P<name>[^']+)' dispatch key set mismatch\. expected DispatchKeySet\((?P<expected>[^)]*)\), "
                       r"actual DispatchKeySet\((?P<actual>[^)]*)\)")
_TYPE_ID = re.compile(r"^___check_type_id\((?P<name>[^,()]+), \d+\)$")
# Dynamo round 7: the order of a dict's keys, which object an argument is, two arguments that are one tensor
_DICT_ORDER = re.compile(r"^list\(dict\.keys\((?P<name>[^()]+)\)\)\[(?P<index>\d+)\] == (?P<key>'[^']*'|\"[^\"]*\")$")
"""A dict's key at a position (``list(dict.keys(batch))[0] == 'x'``): Dynamo guards the key order when the traced
code iterates the dict (items(), keys(), a for loop): the same keys in another order fail it (pytorch#124779)."""
_OBJ_ID = re.compile(r"^___check_obj_id\((?P<name>[A-Za-z_][\w.]*), \d+\)$")
"""Which object a local name is (``___check_obj_id(phase, 1396...)``: an enum member, a sentinel, a function
compared with ``is``): one graph per object. A global's or a builtin's id (``G['__builtins_dict___0']['iter']``)
is no argument of the user's and stays the generic guard."""
_ALIAS = re.compile(r"Duplicate tensors? found(?::| where not expected)")
"""Two tensor arguments that are one tensor on this call (``Duplicate tensors found: ["a", "b"]``; older torch:
``Duplicate tensor found where not expected! L['y'] should not alias to anything, but is aliased``)."""
_ALIAS_NAMES = re.compile(r"[\"'](?P<name>[^\"',\[\]]+)[\"']")
# Dynamo round 9: a size of 0 or 1 under a dynamic dim, an input's rank, an input on another device
_ZERO_ONE = re.compile(r"^(?P<low>2) <= (?P<name>[\w.\[\]'\"]+)\.size\(\)\[(?P<dim>\d+)\]")
"""The lower bound of a dynamic size (``2 <= L['x'].size()[0]``): Dynamo keeps a dim marked dynamic (mark_dynamic,
automatic dynamic) symbolic for sizes >= 2 only and specialises 0 and 1 (0/1 specialization), so a size of 1 (a
last batch of one sample) fails it and compiles its own graph (pytorch#136605)."""
_RANK = re.compile(r"tensor '(?P<name>.+?)' rank mismatch\. expected (?P<expected>\d+), actual (?P<actual>\d+)")
"""An input's number of dimensions (``rank mismatch. expected 2, actual 1``): Dynamo has no dynamic rank, one graph
per rank (an unbatched input among batches: compressed-tensors#741)."""
# Dynamo round 17: a torch.dtype passed by value, the torch function mode stack, an optimizer's state filled
_DTYPE_VALUE = re.compile(r"^(?P<name>[\w.\[\]'\"]+) == torch\.(?P<value>float(?:16|32|64)|bfloat16|half|double|"
                          r"int(?:8|16|32|64)|uint8|bool|complex(?:64|128)|float8_\w+)$")
"""A ``torch.dtype`` argument or attribute guarded by value (``out_dtype == torch.float32``): one traced graph per
dtype asked for; a dtype is no number and can never be a tensor (d17_dtype_arg)."""
_FUNCTION_MODES = "___check_torch_function_mode_stack()"
# Dynamo round 27: an input marked dynamic on some calls only, the compiled module freed and made anew
_MARKED_DYNAMIC = re.compile(r"^hasattr\((?P<name>[^,()]+), (?P<q>['\"])_dynamo_dynamic_indices(?P=q)\) == False$")
"""Dynamo's own guard that an input carries no ``torch._dynamo.mark_dynamic`` mark (``hasattr(args[0],
'_dynamo_dynamic_indices') == False``): the graph was traced for an unmarked tensor, and a tensor marked on this call
fails it (pytorch#95584: a frame is not reused for a tensor newly marked dynamic), whatever its size
(d27_mark_dynamic_some)."""
_MODULE_FREED = re.compile(r"^Cache line invalidated because L\[(?P<q>['\"])(?P<name>fn|self)(?P=q)\] got deallocated$")
"""The compiled module the cache line was made for was freed (``Cache line invalidated because L['fn'] got
deallocated``; ``fn`` is the module torch's wrapper of a compiled nn.Module calls, ``self`` a compiled method's
module): Dynamo guarded that object itself (``inline_inbuilt_nn_modules`` off: set so, or the default before
torch 2.5; the log does not say which), and a new model of the same
structure (one per fold) is traced again (pytorch#130776, d27_kfold_inline_off). A value on a resume function's stack
(``L['___stack0']``, d17_perf_counter) is not this form."""
_HASATTR = re.compile(r"^(?P<negated>not )?hasattr\((?P<name>[^,()]+), (?P<q>['\"])(?P<attr>[^'\"]+)(?P=q)\)$")
"""``not hasattr(self, 'log_prior')``: the code tests an attribute's presence (hasattr, getattr with a default) and
it was set after the first compile (d21_logit_adjust_late); without ``not``, deleted. Dynamo's own
``hasattr(x, '_dynamo_dynamic_indices') == False`` is not this form."""
"""The stack of active TorchFunctionModes (pytorch#133130): ``with torch.device(...)`` and
``torch.set_default_device`` push one (DeviceContext), as do a user's TorchFunctionMode and debugging modes; a
call under another stack of modes than the first fails it (d17_device_ctx)."""
_OPTIMIZER_STATE = re.compile(r"^len\((?P<name>(?:self|L\['self'\])\.state\[.+\])\) (?:==|!=) 0$")
"""The length of one entry of a compiled optimizer step's ``self.state`` (``len(self.state[list(dict.keys(
self.state))[0]]) != 0``): empty before the first step, filled by it (SGD's momentum buffers, Adam's moments): the
step is traced once more at its second call (d17_sgd_momentum_control)."""
# Dynamo round 20: a parameter missing from a compiled module (pruning, a parametrization)
_PARAMETER_GONE = re.compile(r"^KeyError on (?P<module>.+?)\._parameters\[(?P<q>['\"])(?P<name>[^'\"]+)(?P=q)\]$")
"""A module's parameter the first compile read that is gone now (``KeyError on fn._modules['0']._parameters['weight']``):
torch.nn.utils.prune replaces ``weight`` by ``weight_orig`` and a mask (d20_prune_rounds), a parametrization moves it,
a ``del`` removes it."""
_BACKEND_KEYS = ("XLA", "CPU", "CUDA", "HIP", "MPS", "XPU", "HPU", "Meta", "PrivateUse1", "Lazy")
"""Backend dispatch keys: a tensor's device, as the dispatch key set of a TENSOR_MATCH guard shows it."""
_DATA_DEPENDENT = ("Dynamic shape operator", "depends on input Tensor data", "data-dependent", "data dependent")
"""A graph break at an op whose output size follows the data (boolean-mask indexing, nonzero, masked_select)."""


def _after_data_dependent(c: DynamoCompile, log: DynamoLog) -> bool:
    """A resume function (``torch_dynamo_resume_in_token_loss_at_17``) whose frame starts at a graph break Dynamo
    took at a data-dependent op: the tensors it receives on its stack (``___stack0``) were sized by the data."""
    m = re.fullmatch(r"torch_dynamo_resume_in_\w+_at_(\d+)", c.function or "")
    if m is None:
        return False
    line = int(m.group(1))
    return any(b.at is not None and b.at.line == line and _is_data_dependent(b) for b in log.graph_breaks)


def break_before_resume(c: DynamoCompile, log: DynamoLog) -> GraphBreak | None:
    """The graph break a resume function (``torch_dynamo_resume_in_forward_at_23``) starts after: the values on its
    stack (``___stack0``) were made by the code before it, run outside the graph (d17_perf_counter: the clock)."""
    m = re.fullmatch(r"torch_dynamo_resume_in_\w+_at_(\d+)", c.function or "")
    if m is None:
        return None
    return next((b for b in log.graph_breaks if b.at is not None and b.at.line == int(m.group(1))), None)


_BACKTICKED = re.compile(r"`(?P<name>[\w.]+?)\.?`")


def what_breaks(b: GraphBreak) -> str:
    """The call a graph break is at, in Dynamo's words (``time.perf_counter`` from "Dynamo does not know how to trace
    the builtin `time.perf_counter.`"), else its reason."""
    m = _BACKTICKED.search(b.explanation or "")
    return f"`{m.group('name')}`" if m is not None else b.reason


_PYTHON_RANDOM = re.compile(r"`(?:<unknown module>\.)?(?:Random|random)\.(?P<m1>\w+)\.?`|\bRandom\.(?P<m2>\w+)"
                            r"|/random\.py\b")
"""A break at Python's random module (``the builtin `<unknown module>.Random.random.``` in torch 2.9,
``Random.randrange`` or ``skip function Random in file .../random.py`` in older ones): a draw Dynamo does not trace
(pytorch#145446), often a LayerDrop's ``random.random() < p`` (pytorch#95425)."""


def python_random_call(b: GraphBreak) -> str | None:
    """The call of Python's random module the break is at, as the user wrote it (```random.random()```), ``Python's
    random module`` when the log names no method; None for any other break (d20_layerdrop_random)."""
    m = _PYTHON_RANDOM.search(f"{b.reason} {b.explanation or ''}")
    if m is None:
        return None
    method = m.group("m1") or m.group("m2")
    return f"`random.{method}()`" if method else "Python's random module"


_SCALAR_READ = ("_local_scalar_dense",)
"""A graph break at the read of a tensor's value as a Python number (``float(t)``, ``int(t)``, ``t.item()``; NumPy
calls Dynamo traces as tensors, then read the same way): Dynamo's "Data dependent operator"
(``aten._local_scalar_dense.default``). The number it hands on is the tensor's value, not a host computation."""


def is_scalar_read(b: GraphBreak) -> bool:
    """The break reads a tensor's value into Python (d18_numpy_jitter: ``float(np.random.uniform(...))``): what
    it hands the resume function changes with the data, and the tensor could have stayed a tensor."""
    return any(t in f"{b.reason} {b.explanation or ''}" for t in _SCALAR_READ)


_BRANCH = ("Data-dependent branching", "data-dependent branching", "dynamic control flow")
"""Dynamo's words for a Python ``if`` on a tensor's value (``Detected data-dependent branching (e.g. `if
my_tensor.sum() > 0:`)``): a branch, not an output size (new-user review 17, F2)."""


def is_data_dependent_branch(b: GraphBreak) -> bool:
    text = f"{b.reason} {b.explanation or ''}"
    return any(t in text for t in _BRANCH)


def _is_data_dependent(b: GraphBreak) -> bool:
    text = f"{b.reason} {b.explanation or ''}"
    return any(t in text for t in _DATA_DEPENDENT)


def _classify(guard: str) -> tuple[str, str | None, str, set[str]]:
    facts: set[str] = {"dynamo"}
    if not guard.strip():
        # round 30 (d30_backend_check_eval): `- 0/0: ` and nothing after it: every guard of 0/0 held when Dynamo
        # checked them again for its message; what sent it to compile lies outside the guards (the backend)
        return "guard", None, "no failed guard named (each guard of the earlier entry held)", facts | {"no_failed_guard"}
    if (m := _SIZE.search(guard)) is not None:
        expected, actual = int(m.group("expected")), int(m.group("actual"))
        if m.group("dim") == "0" and actual < expected:
            facts.add("leading_dim_shrank")
        if "._parameters[" in m.group("name"):  # a module's parameter (self._modules['head']._parameters['bias'])
            facts.add("parameter_shape")  # the module was replaced or resized between calls, not an input's size
        return "shape", m.group("name"), f"dim {m.group('dim')} of {m.group('name')}: {expected} -> {actual}", facts
    if (m := _ZERO_ONE.match(guard.strip())) is not None:
        facts.add("zero_one_size")
        return "shape", m.group("name"), f"dim {m.group('dim')} of {m.group('name')} was 1 (or 0)", facts
    if (m := _RANK.search(guard)) is not None:
        facts.add("rank_changed")
        return "shape", m.group("name"), (f"{m.group('name')} had {m.group('expected')} dimensions, then "
                                          f"{m.group('actual')}"), facts
    if (m := _DTYPE.search(guard)) is not None:
        seen = f"{_dtype(m.group('expected'))} then {_dtype(m.group('actual'))}"
        if "._parameters[" in m.group("name"):
            facts.add("parameter_dtype")  # a module's parameter: a copy of the model in another dtype, or a cast
        return "dtype", m.group("name"), seen, facts
    if (m := _MODE.search(guard)) is not None:
        if (m.group("what") or "").startswith("autocast"):
            facts.add("autocast")  # torch.autocast on for some calls only (GLOBAL_STATE changed: autocast)
        return "mode", None, guard, facts
    if (m := _GLOBAL_STATE.search(guard)) is not None and m.group("what") in GLOBAL_SETTINGS:
        what = m.group("what")
        return "mode", what, f"{what} changed: {GLOBAL_SETTINGS[what]}", facts | {"global_setting"}
    if guard.strip() == _FUNCTION_MODES:
        return "mode", None, "another stack of torch function modes than at the first compile", \
            facts | {"function_mode_stack"}
    if (m := _REQUIRES_GRAD.search(guard)) is not None:
        if "._parameters[" in m.group("name"):
            facts.add("parameter_requires_grad")  # a module's parameter: a frozen copy or layers frozen between calls
        return "guard", m.group("name"), guard, facts | {"requires_grad"}
    if (m := _TENSOR_TYPE.search(guard)) is not None:
        if m.group("found") == "<class 'NoneType'>":
            facts.add("optional_none")  # review 24, F3: None where a tensor came first: an optional argument (the
            # dynamo_optional_none row, as for the `is None` guard form), not a tensor subclass
        return "guard", m.group("name"), f"a {m.group('found')} where a tensor of another type came first", \
            facts | {"tensor_type"}
    if (m := _MARKED_DYNAMIC.match(guard.strip())) is not None:
        return "guard", m.group("name"), (f"{m.group('name')} was marked dynamic (torch._dynamo.mark_dynamic) on "
                                          f"this call, not on the call it was traced for"), facts | {"marked_dynamic"}
    if (m := _MODULE_FREED.match(guard.strip())) is not None:
        return "guard", "the compiled module", (f"the module L['{m.group('name')}'] the graph was traced for was "
                                                f"freed, and a new one passed"), facts | {"module_freed"}
    if (m := _HASATTR.match(guard.strip())) is not None:
        came = "appeared" if m.group("negated") else "went away"
        return "guard", f"{m.group('name')}.{m.group('attr')}", \
            f"{guard.strip()}: the attribute `{m.group('attr')}` {came} after the first compile", facts | {"hasattr"}
    if (m := _DISPATCH.search(guard)) is not None:
        if ("Autograd" in m.group("expected")) != ("Autograd" in m.group("actual")):
            facts.add("inference_tensor")  # made under torch.inference_mode() on one side only
        devices = (_backend(m.group("expected")), _backend(m.group("actual")))
        if None not in devices and devices[0] != devices[1]:
            facts.add("device_changed")  # a tensor on another device (XLA, then a CPU copy): not its autograd keys
            return "guard", m.group("name"), f"{m.group('name')} on {devices[0]}, then on {devices[1]}", facts
        return "guard", m.group("name"), guard.strip(), facts
    if (m := _PARAMETER_GONE.match(guard.strip())) is not None:
        module = m.group("module")
        return "guard", module, f"`{m.group('name')}` of `{module}`", facts | {"parameter_removed"}
    if (m := _TYPE_ID.match(guard.strip())) is not None:
        return "guard", _global(m.group("name")), guard.strip(), facts | {"object_type"}
    if (m := _HOOKS.search(guard)) is not None:
        return "guard", f"the compiled module (`{m.group('name')}`)", guard.strip(), facts | {"module_hooks"}
    if (m := _GLOBAL_TRUTH.match(guard.strip())) is not None:
        return "guard", _global(m.group("name")), guard.strip(), facts | {"global_name", "global_truth"}
    if (m := _ENVIRON.match(guard.strip())) is not None:
        var = m.group("var1") or m.group("var2")
        seen = (f"{var} was {m.group('value').lstrip('b')} at the compile before" if m.group("value")
                else f"{var} was {'not ' if m.group('negated') else ''}set at the compile before")
        return "guard", f"os.environ['{var}']", seen, facts | {"environ"}
    if (m := _ATTRIBUTE_TRUTH.match(guard.strip())) is not None and _MODULE_ATTRIBUTE.match(m.group("name")):
        return "guard", m.group("name"), guard.strip(), facts | {"attribute_truth"}
    if (m := _OPTIMIZER_STATE.match(guard.strip())) is not None:
        return "guard", "self.state", "the optimizer's state was empty at the first compiled step", \
            facts | {"optimizer_state"}
    if (m := _LENGTH.match(guard.strip())) is not None:
        name = m.group("name")
        if _GLOBAL.match(name):
            facts.add("global_name")
            name = _global(name)
        if "._modules" in name:  # an nn.Module's ModuleList / Sequential / ModuleDict: its submodules, not data
            facts.add("module_container")
            name = _MODULES.sub(lambda k: "." + k.group("key"), name).removesuffix("._modules")
        if name.endswith(".param_groups"):  # a compiled optimizer step's groups (opt.add_param_group)
            facts.add("optimizer_groups")
        return "guard", name, f"len({name}) was {m.group('value')}", facts | {"container_length"}
    if (m := _NONE.match(guard.strip())) is not None:
        if _GRAD.search(m.group("name")):  # a tensor's gradient, not an argument the caller may leave out
            return "guard", m.group("name"), guard.strip(), facts | {"grad_none"}
        if _MODULE_ATTRIBUTE.match(m.group("name")):  # kept on the module, not an argument a caller leaves out
            facts.add("attribute_none" if not m.group("negated") else "attribute_cleared")
        return "guard", m.group("name"), guard.strip(), facts | {"optional_none"}
    if (m := _DICT_KEY.match(guard.strip())) is not None:
        if m.group("negated") and _MODULE_ATTRIBUTE.match(m.group("name")):
            # review 23 F4 (d1): `not ___dict_contains(12, self._rope_cache)`: a dict on the compiled module that
            # lacked the key at the first compile and has it now: a cache the forward fills on first use, not a
            # dict a caller passes with other keys
            facts.add("dict_filled")
        return "guard", m.group("name"), m.group("key"), facts | {"dict_keys"}
    if (m := _DICT_ORDER.match(guard.strip())) is not None:
        return "guard", m.group("name"), f"key {m.group('index')} of {m.group('name')} was {m.group('key')}", \
            facts | {"dict_key_order"}
    if (m := _OBJ_ID.match(guard.strip())) is not None:
        return "guard", m.group("name"), guard.strip(), facts | {"object_identity"}
    if _ALIAS.search(guard) is not None:
        names = [n for n in _ALIAS_NAMES.findall(guard.split("found", 1)[1]) if n.strip()]
        subject = " and ".join(f"`{n}`" for n in names[:2]) if len(names) >= 2 else "two tensor arguments"
        return "guard", subject, guard.strip(), facts | {"tensor_alias"}
    if (m := _STRING.match(guard.strip())) is not None:
        return "python_value", m.group("name"), f"{m.group('name')} was {m.group('value')}", facts | {"python_string"}
    if (m := _DTYPE_VALUE.match(guard.strip())) is not None:
        return "python_value", m.group("name"), f"{m.group('name')} was torch.{m.group('value')}", \
            facts | {"python_dtype"}
    if (m := _VALUE.match(guard.strip())) is not None:
        value = m.group("value")
        facts.add("python_flag" if value in ("True", "False") else "python_int" if re.fullmatch(r"-?\d+", value)
                  else "python_float")
        if _MODULE_ATTRIBUTE.match(m.group("name")):
            facts.add("module_attribute")  # a number kept on the compiled module (a step counter): a buffer fits
        elif _MODULE_LIST_ITEM.match(m.group("name")):
            facts |= {"module_attribute", "list_item"}  # one number of a list on the module: the list fits a buffer
        if _LR_NAME.search(m.group("name")):
            facts.add("optimizer_lr")  # an lr: eager torch_xla's opposite advice for it is worth a word
        return "python_value", m.group("name"), f"{m.group('name')} was {value}", facts
    return "guard", None, guard, facts


def _backend(keys: str) -> str | None:
    """The device of a dispatch key set (``XLA, BackendSelect, ..., AutogradXLA`` -> ``XLA``): its first backend key."""
    for key in (k.strip() for k in keys.split(",")):
        if key in _BACKEND_KEYS:
            return key
    return None


def _global(name: str) -> str:
    """``G['__import___main__'].acts`` -> ``acts``: the user's global, as their script names it."""
    return _IMPORTED.sub("", name)


def _dtype(name: str) -> str:
    return {"Float": "float32", "BFloat16": "bfloat16", "Half": "float16", "Double": "float64",
            "Long": "int64", "Int": "int32", "Bool": "bool"}.get(name, name)


def local_truth_name(guard: str | None) -> str | None:
    """The local name whose truth ``guard`` tests (``not history`` -> ``history``), or None. Left unclassified by
    :func:`_classify` (a flag and an empty list read alike); the line Dynamo quoted tells whether the compiled
    function grows it (Dynamo round 33, d33_smooth_default_list: a mutable default ``history=[]`` appended to)."""
    m = _LOCAL_TRUTH.match((guard or "").strip())
    return None if m is None else m.group("quoted") or m.group("bare")
