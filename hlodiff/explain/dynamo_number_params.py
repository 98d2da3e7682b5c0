"""Parameters of torch calls that take a Python number only: a value Dynamo guarded that is passed there cannot be
made a tensor, so "pass it as a tensor" would send the user the wrong way (Dynamo round 26,
d26_smoothing_eval_arg: ``F.cross_entropy(..., label_smoothing=smoothing)`` with 0.1 in training and 0.0 for the
validation loss, told "pass it as a tensor").

Each row is a keyword and the torch functions whose parameter of that name is typed ``float`` (or ``Number``) in
their signature; ``tests/test_dynamo_round26.py`` has a test per row. A keyword is matched only as a keyword
argument whose value is the guarded name itself, on the line Dynamo quoted for the guard."""

from __future__ import annotations

import re

from hlodiff.explain.dynamo_guard_kinds import _as_written

NUMBER_ONLY_PARAMS: dict[str, str] = {
    "label_smoothing": "F.cross_entropy, nn.CrossEntropyLoss",
    "negative_slope": "F.leaky_relu, nn.LeakyReLU",
    "eps": "F.layer_norm, F.group_norm, F.batch_norm, F.normalize",
    "momentum": "F.batch_norm",
    "beta": "F.smooth_l1_loss, F.softplus",
    "delta": "F.huber_loss",
    "margin": "F.margin_ranking_loss, F.triplet_margin_loss, F.cosine_embedding_loss",
    "threshold": "F.threshold, F.softplus",
    "alpha": "F.elu, F.celu, torch.add (a Number)",
    "p": "F.dropout, F.normalize",
}
"""keyword -> the torch functions whose parameter of that name takes a Python number, never a tensor."""


def number_only_param(name: str | None, code: str | None) -> str | None:
    """The keyword (``label_smoothing``) to which the line Dynamo quoted for the guard on ``name`` passes that very
    value (``label_smoothing=smoothing``), when that parameter takes a Python number only; else None. A value used
    in arithmetic (``ce * smoothing``) or passed to another keyword is not."""
    if not name or not code:
        return None
    statement = code.split("#", 1)[0]
    written = re.escape(_as_written(name))
    keys = "|".join(map(re.escape, NUMBER_ONLY_PARAMS))
    found = re.search(rf"[(,]\s*({keys})\s*=\s*{written}\s*[,)]", statement)
    return found.group(1) if found else None
