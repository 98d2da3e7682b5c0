"""Which computed tensors the coming graph reads, by torch_xla's own identity (for graph boundaries).

A live-tensor report lists the tensors a sync will compute, but not which device data its graph reads: a
``xla::device_data()`` IR node prints no tensor id, so a gradient accumulated by the next backward and a bias of the
same shape that it does not read look alike (``hlodiff.cost.boundaries`` then names only what it can tell apart).
torch_xla keeps the identity anyway: each device data handle carries the id of the tensor it was computed for, and
``_XLAC._get_tensors_xla_device_data_node(tensors)`` returns those ids for the device data the pending graph of
``tensors`` reads. Tensor ids are never reused, and an in-place update gives the tensor a new id, so an id read here
names exactly one computed value.

Python has no list of live XLA tensors, so the garbage collector's list of objects is searched for those with
pending IR (``XLAData: None`` in torch_xla's debug info). That costs about 0.2 s with torch imported, which is why
it runs only when the hook takes a report (the first sync and the sync after a compilation). Tensors that only
autograd holds (saved for backward) have no Python object and are not searched; the device data they alone read
is missed (the reads are then a subset, never wrong).

Standard library only at import time, like the hook that loads it.
"""

from __future__ import annotations


def device_data_reads() -> list[int]:
    """Ids of the tensors whose device data the pending graph of every Python-visible XLA tensor reads, sorted."""
    import gc

    import torch
    import torch_xla

    xlac = torch_xla._XLAC
    pending = [obj for obj in gc.get_objects() if _is_pending_xla_tensor(torch, xlac, obj)]
    if not pending:
        return []
    ids, handles = xlac._get_tensors_xla_device_data_node(pending)
    del handles, pending  # tensors wrapping the same buffers: drop them before the sync
    return sorted({int(i) for i in ids if int(i) >= 0})  # -1: data no tensor was computed for (scalars, seeds)


def _is_pending_xla_tensor(torch, xlac, obj) -> bool:
    if not issubclass(type(obj), torch.Tensor):  # type(), not isinstance: that would ask deprecated objects
        return False                               # for __class__, and they warn
    try:
        if obj.device.type != "xla":
            return False
        info = xlac._get_xla_tensor_debug_info(obj)
    except Exception:  # a tensor subclass or a proxy that refuses: not one the sync computes
        return False
    return "\nXLAData: None" in info and "\nIR: None" not in info


def header_words(reads: list[int]) -> str:
    """The ``reads=`` word of a ``## SYNC`` header (``hlodiff.dumps.tensors_report`` reads it back)."""
    return " reads=" + ",".join(str(i) for i in reads)
