"""Which computed tensors the coming graph reads, by torch_xla's own identity (for graph boundaries).

A live-tensor report lists the tensors a sync will compute, but not which device data its graph reads: a
``xla::device_data()`` IR node prints no tensor id, so a gradient accumulated by the next backward and a bias of the
same shape that it does not read look alike (``hlodiff.cost.boundaries`` then names only what it can tell apart).
torch_xla keeps the identity anyway: each device data handle carries the id of the tensor it was computed for, and
``_XLAC._get_tensors_xla_device_data_node(tensors)`` returns those ids for the device data the pending graph of
``tensors`` reads. Tensor ids are never reused, and an in-place update gives the tensor a new id, so an id read here
names exactly one computed value.

Python has no list of live XLA tensors, so the garbage collector's list of objects is searched for XLA tensors,
and each one's ``.grad`` is added (a gradient the backward computed has no Python object until asked for: without
it a backward graph's reads, the activations it takes from its forward, were never found). Those
``_check_tensor_need_materialization`` says need computing are the roots. That costs 0.1-0.4 s with torch
imported, which is why it runs only when the hook takes a report (:mod:`hlodiff.capture.sync_reports` says when).
Tensors that only autograd holds (saved for backward) have no Python object and are not searched; the device data
they alone read is missed (the reads are then a subset, never wrong): on the fixtures of issue 32 the roots reach
every entry parameter.

A clone of device data (SGD's first momentum buffer is ``clone(grad)``) is an output of the coming graph whose IR
is a lone ``device_data()``, so the report lists it like data; ``clones=`` names those (its IR reads another
tensor's data, and it has none of its own).

Standard library only at import time, like the hook that loads it.
"""

from __future__ import annotations


def safe_here() -> bool:
    """Whether asking for the reads leaves the run as it would be without hlodiff. Under SPMD it does not (round
    32, r32_tx_spmd_metric_after_sync_control under `hlodiff record`): ``_get_tensors_xla_device_data_node`` on the
    pending tensors keeps torch_xla from donating the parameters' buffers at that sync (the sharded data stays
    referenced, ``gc.collect()`` does not release it), so every graph read while the run warms up compiled without
    donation, and the first steady sync, read no more, compiled the step once again with it: the recorder's own
    recompilation. A run on one device is not affected (the same loop without SPMD compiles once either way).
    Skipping the reads loses graph boundaries by identity, never a graph."""
    try:
        import torch_xla.runtime as xr

        return not xr.is_spmd()
    except Exception:  # no way to tell: the reads have been safe everywhere else
        return True


def device_data_reads() -> tuple[list[int], list[int], list[int]]:
    """``(reads, clones, params)``: ids of the tensors whose device data the pending graph of every Python-visible
    XLA tensor reads, ids of the Python-visible tensors that are clones of device data (outputs the report lists as
    data), and the ids the model's ``nn.Parameter`` objects hold now (an optimizer's update gives a parameter its new
    id before the sync: the graph computes that id, the next graph reads it); all sorted."""
    import gc

    import torch
    import torch_xla

    xlac = torch_xla._XLAC
    xla = [obj for obj in gc.get_objects() if _is_xla_tensor(torch, obj)]
    params = sorted({i for t in xla if issubclass(type(t), torch.nn.Parameter) for i in _tensor_id(xlac, t)})
    roots, seen = [], set()
    for tensor in xla:
        # a view's IR is made when it is first asked for (torch_xla rebuilds it from its base lazily): asking here
        # would trace it into the coming graph at this line, and the graphs of reported syncs would differ from the
        # others (the recorder's own recompilation). Its base is asked instead, when Python sees it.
        for candidate in ((None if _is_view(tensor) else tensor), _grad(tensor)):
            if candidate is not None and id(candidate) not in seen:
                seen.add(id(candidate))
                roots.append(candidate)
    try:
        need = xlac._check_tensor_need_materialization(roots)
    except Exception:  # a tensor that refuses: ask one by one
        need = [_needs(xlac, t) for t in roots]
    pending = [t for t, n in zip(roots, need) if n]
    clones = sorted({i for t, n in zip(roots, need) if not n for i in _clone_id(xlac, t)})
    if not pending:
        return [], clones, params
    ids, handles = xlac._get_tensors_xla_device_data_node(pending)
    del handles, pending, roots, xla  # tensors wrapping the same buffers: drop them before the sync
    return sorted({int(i) for i in ids if int(i) >= 0}), clones, params  # -1: data no tensor was computed for


def _tensor_id(xlac, tensor) -> list[int]:
    try:
        return [int(xlac._xla_get_tensor_id(tensor))]
    except Exception:
        return []


def _is_view(tensor) -> bool:
    try:
        return bool(tensor._is_view())
    except Exception:
        return False


def _grad(tensor):
    """The tensor's ``.grad``: a gradient the backward just computed is held by autograd, and only reachable here
    (its Python object exists once someone asks for it)."""
    try:
        grad = tensor.grad if tensor.is_leaf else None
    except Exception:
        return None
    return grad if grad is not None and grad.device.type == "xla" else None


def _needs(xlac, tensor) -> bool:
    try:
        return bool(xlac._check_tensor_need_materialization([tensor])[0])
    except Exception:
        return False


def _clone_id(xlac, tensor) -> list[int]:
    """``[id]`` when the tensor is a clone of device data (torch_xla computes it as an output of the coming graph,
    yet its IR is one ``device_data()``, so the report lists it like data): its IR reads the data of another
    tensor and it holds no data of its own."""
    try:
        info = xlac._get_xla_tensor_debug_info(tensor)
        if "\nXLAData: None" not in info or "xla::device_data" not in info:
            return []
        own = int(xlac._xla_get_tensor_id(tensor))
        ids, _ = xlac._get_tensors_xla_device_data_node([tensor])
    except Exception:
        return []
    return [own] if len(ids) == 1 and 0 <= int(ids[0]) != own else []


def _is_xla_tensor(torch, obj) -> bool:
    if not issubclass(type(obj), torch.Tensor):  # type(), not isinstance: that would ask deprecated objects
        return False                               # for __class__, and they warn
    try:
        return obj.device.type == "xla"
    except Exception:  # a tensor subclass or a proxy that refuses
        return False


def header_words(found: tuple[list[int], list[int], list[int]]) -> str:
    """The ``reads=``, ``clones=`` and ``params=`` words of a ``## SYNC`` header (``hlodiff.dumps.tensors_report``
    reads them back)."""
    reads, clones, params = found
    return (" reads=" + ",".join(str(i) for i in reads) + (" clones=" + ",".join(map(str, clones)) if clones else "")
            + (" params=" + ",".join(map(str, params)) if params else ""))
