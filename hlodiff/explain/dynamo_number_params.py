"""Parameters of torch calls that take a Python number only: a value Dynamo guarded that is passed there cannot be
made a tensor, so "pass it as a tensor" would send the user the wrong way (Dynamo round 26,
d26_smoothing_eval_arg: ``F.cross_entropy(..., label_smoothing=smoothing)`` with 0.1 in training and 0.0 for the
validation loss, told "pass it as a tensor").

Each row is a keyword and the torch functions (``F.cross_entropy``) and modules (``nn.CrossEntropyLoss``) whose
parameter of that name is typed ``float`` (or ``Number``) in their signature; ``tests/test_dynamo_round26.py`` has a
test per row. A keyword is matched only as a keyword argument whose value is the guarded name itself, on the line
Dynamo quoted for the guard, in a call of one of that row's functions or modules: the same keyword of the user's own
function (``self.kl_term(..., beta=beta)``, ``ema_update(..., momentum=m)``) or of another library's
(``sigmoid_focal_loss(..., alpha=alpha)``) may well take a tensor (the eleventh stop's read)."""

from __future__ import annotations

import re

from hlodiff.explain.dynamo_guard_lines import _as_written

NUMBER_ONLY_PARAMS: dict[str, tuple[str, ...]] = {
    "label_smoothing": ("cross_entropy", "nn.CrossEntropyLoss"),
    "negative_slope": ("leaky_relu", "nn.LeakyReLU"),
    "eps": ("layer_norm", "group_norm", "batch_norm", "normalize", "nn.LayerNorm", "nn.GroupNorm",
            "nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d"),
    "momentum": ("batch_norm", "nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d"),
    "beta": ("smooth_l1_loss", "softplus", "nn.SmoothL1Loss", "nn.Softplus"),
    "delta": ("huber_loss", "nn.HuberLoss"),
    "margin": ("margin_ranking_loss", "triplet_margin_loss", "cosine_embedding_loss", "nn.MarginRankingLoss",
               "nn.TripletMarginLoss", "nn.CosineEmbeddingLoss"),
    "threshold": ("threshold", "softplus", "nn.Threshold", "nn.Softplus"),
    "alpha": ("elu", "celu", "add", "nn.ELU", "nn.CELU"),
    "p": ("dropout", "normalize", "nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d"),
}
"""keyword -> the torch functions (reached as ``F.``, ``nn.functional.``, ``torch.nn.functional.`` or ``torch.``)
and modules (``nn.`` or ``torch.nn.``) whose parameter of that name takes a Python number, never a tensor."""

_FUNCTION_PREFIXES = ("F.", "nn.functional.", "torch.nn.functional.", "torch.")
_MODULE_PREFIXES = ("", "torch.")
_CALLEE = re.compile(r"([A-Za-z_][\w.]*)\s*$")


def number_only_param(name: str | None, code: str | None) -> str | None:
    """The keyword (``label_smoothing``) to which the line Dynamo quoted for the guard on ``name`` passes that very
    value (``label_smoothing=smoothing``) in a call of a torch function or module whose parameter of that name takes
    a Python number only; else None. A value used in arithmetic (``ce * smoothing``), passed to another keyword, or
    passed to a function the row does not name (``self.kl_term(beta=beta)``) is not."""
    if not name or not code:
        return None
    statement = code.split("#", 1)[0]
    written = written_pattern(name)
    keys = "|".join(map(re.escape, NUMBER_ONLY_PARAMS))
    for found in re.finditer(rf"[(,]\s*({keys})\s*=\s*{written}\s*[,)]", statement):
        if _is_known_callee(_callee_of(statement, found.start()), NUMBER_ONLY_PARAMS[found.group(1)]):
            return found.group(1)
    return None


_ITEM = re.compile(r"\[(['\"])(\w+)\1\]")


def written_pattern(name: str) -> str:
    """A regex for the guarded ``name`` as code may write it: a dict item Dynamo prints as ``G['cfg']['lr']`` is
    ``cfg['lr']`` or ``cfg["lr"]`` in the code (review 22, tc2: ``label_smoothing=cfg["label_smoothing"]`` was not
    matched, so the number-only row never fired), an attribute ``cfg.lr``; either quote, either form."""
    target = re.sub(r"^[LG]\[['\"](\w+)['\"]\]", r"\1", name.strip())
    parts, at = [], 0
    for item in _ITEM.finditer(target):
        parts.append(re.escape(target[at:item.start()]))
        key = re.escape(item.group(2))
        parts.append(rf"(?:\[\s*['\"]{key}['\"]\s*\]|\.{key})")
        at = item.end()
    parts.append(re.escape(target[at:]))
    return "".join(parts)


def _callee_of(statement: str, at: int) -> str:
    """The name called by the innermost call whose argument list holds position ``at`` (``F.cross_entropy``)."""
    depth = 0
    for i in range(at, -1, -1):
        c = statement[i]
        if c in ")]":
            depth += 1
        elif c in "([":
            if depth == 0:
                m = _CALLEE.search(statement[:i]) if c == "(" else None
                return m.group(1) if m else ""
            depth -= 1
    return ""


def _is_known_callee(callee: str, known: tuple[str, ...]) -> bool:
    """Whether ``callee`` as written is one of the row's functions or modules under a prefix torch exports it by."""
    for item in known:
        prefixes = _MODULE_PREFIXES if item.startswith("nn.") else _FUNCTION_PREFIXES
        if any(callee == prefix + item for prefix in prefixes):
            return True
    return False


POSITIONAL_NUMBER_ONLY: dict[tuple[str, int], str] = {
    ("dropout", 1): "p",
    ("alpha_dropout", 1): "p",
    ("feature_alpha_dropout", 1): "p",
    ("dropout1d", 1): "p",
    ("dropout2d", 1): "p",
    ("dropout3d", 1): "p",
    ("leaky_relu", 1): "negative_slope",
    ("elu", 1): "alpha",
    ("celu", 1): "alpha",
    ("softplus", 1): "beta",
    ("softplus", 2): "threshold",
    ("threshold", 1): "threshold",
    ("hardtanh", 1): "min_val",
    ("hardtanh", 2): "max_val",
}
"""(torch function, position) -> its parameter that takes a Python number only, when passed by position: torch's own
modules do so (nn.Dropout's forward is ``F.dropout(input, self.p, self.training, self.inplace)``, the line Dynamo
quotes for its guard on ``self._modules['drop'].p``; new-user review 20, F9: "keep it in a tensor (register_buffer)"
cannot reach that parameter)."""


def positional_number_param(name: str | None, code: str | None) -> str | None:
    """The parameter (``p``) to which the line Dynamo quoted for the guard on ``name`` passes that very value by
    position in a call of a torch function of :data:`POSITIONAL_NUMBER_ONLY` (``F.dropout(input, self.p, ...)``);
    else None. The value is matched as the code writes it, or as ``self.<attr>`` when the guarded name is an
    attribute of a submodule (the module's own forward reads its own ``self``)."""
    if not name or not code:
        return None
    statement = code.split("#", 1)[0]
    written = [written_pattern(name)]
    if (attr := re.search(r"\.(\w+)$", _as_written(name))) is not None:
        written.append(re.escape(f"self.{attr.group(1)}"))
    for call in re.finditer(r"([A-Za-z_][\w.]*)\s*\(", statement):
        function = next((call.group(1)[len(p):] for p in _FUNCTION_PREFIXES if call.group(1).startswith(p)), None)
        if function is None:
            continue
        for i, arg in enumerate(_arguments(statement, call.end())):
            if "=" not in arg and any(re.fullmatch(w, arg.strip()) for w in written) \
                    and (function, i) in POSITIONAL_NUMBER_ONLY:
                return POSITIONAL_NUMBER_ONLY[function, i]
    return None


def _arguments(statement: str, start: int) -> list[str]:
    """The top-level arguments of the call whose ``(`` ends at ``start``, as written."""
    args, depth, current = [], 0, ""
    for c in statement[start:]:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return args + [current]
            depth -= 1
        elif c == "," and depth == 0:
            args.append(current)
            current = ""
            continue
        current += c
    return args + [current]
