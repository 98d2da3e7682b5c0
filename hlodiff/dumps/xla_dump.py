"""XLA dump folders (``XLA_FLAGS=--xla_dump_to=DIR``), as written by JAX and by torch_xla.

HLO files are named ``module_NNNN.NAME.STAGE.txt`` where STAGE is ``before_optimizations``,
``<platform>_after_optimizations`` (``cpu_after_optimizations``, ``sm_90_gpu_after_optimizations``) or, with
``--xla_dump_hlo_pass_re``, ``NNNN.<pipeline>.after_<pass>.before_<pass>``. NAME may itself contain dots
(torch_xla names modules ``SyncTensorsGraph.76``), so it is taken from the file's own ``HloModule NAME`` line and
the filename is only used to find where the stage begins. Everything else XLA writes there (buffer assignments,
memory reports, ``.ll``, ``.o``, ``.mlir``, ``debug_options``, per-module subfolders) is ignored, and a ``.txt``
whose content does not start like HLO is ignored too.

XLA dumps a module only when it compiles it, so every module number is one compilation.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterator

from hlodiff.dumps._io import BOM, decode
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.hlo_proto import proto_beside
from hlodiff.errors import HlodiffError, InputWarning

BEFORE = "before_optimizations"
AFTER = "after_optimizations"
ALL = "all"

MODULE_NAME_RE = re.compile(r"^module_(\d+)\.(.+)\.txt$")
_MODULE_RE = re.compile(rb"^HloModule\s+([^\s,]+)")
_PASS_STAGE_RE = re.compile(r"\.(\d{4}\.[^.]+\.after_.+)$")
_KNOWN_STAGE_RE = re.compile(r"\.(before_optimizations|(?:sm_\d+(?:\.\d+)?_)?\w*after_optimizations)$")
NOT_HLO_SUFFIXES = ("-buffer-assignment", "-buffer-assignment-values", "-memory-usage-report", "-live-range",
                     "-memory-usage", "-schedule", "-autotune")


@dataclass(frozen=True, slots=True)
class DumpFile:
    """One HLO file of a dump folder."""

    path: str
    module_number: int
    module_name: str
    stage: str

    def order(self) -> tuple[int, int, int, str]:
        """Module number, then the order XLA ran the stages in: input, passes by their number, final output."""
        return (self.module_number, *_stage_rank(self.stage))


def _stage_rank(stage: str) -> tuple[int, int, str]:
    if stage == BEFORE:
        return (0, 0, "")
    m = re.match(r"(\d{4})\.", stage)
    if m:
        return (1, int(m.group(1)), stage)
    if stage.endswith(AFTER):
        return (2, 0, stage)
    return (3, 0, stage)


def list_dump_files(directory: str, warnings: list[InputWarning] | None = None) -> list[DumpFile]:
    """Every HLO file in the folder (not its subfolders), ordered by module number then stage.

    A module file that cannot be opened (permissions, a dangling link) is reported in ``warnings``: skipping it
    silently would give fewer compilations than the run had."""
    found = []
    try:
        entries = list(os.scandir(directory))
    except OSError as exc:
        raise HlodiffError(exc.strerror or str(exc), path=directory) from None
    for entry in entries:
        m = MODULE_NAME_RE.match(entry.name)
        if m is None or "thunk" in entry.name or m.group(2).endswith(NOT_HLO_SUFFIXES):
            continue
        if not entry.is_file():
            if warnings is not None and not entry.is_dir():
                warnings.append(InputWarning("module file skipped: not a readable regular file (a dangling link?)",
                                             path=entry.path))
            continue
        dump_file = read_dump_file(entry.path, int(m.group(1)), m.group(2), warnings)
        if dump_file is not None:
            found.append(dump_file)
    found.sort(key=DumpFile.order)
    return found


def read_dump_file(path: str, number: int, rest: str,
                    warnings: list[InputWarning] | None = None) -> DumpFile | None:
    """The file's module name (from its first line) and stage (from its name), or None when it is not HLO."""
    try:
        with open(path, "rb") as f:
            first = f.readline(64 * 1024)
    except OSError as exc:
        if warnings is not None:
            warnings.append(InputWarning(f"module file skipped: {exc.strerror or exc}", path=path))
        return None
    m = _MODULE_RE.match(first.removeprefix(BOM))
    if m is None:
        if warnings is not None and _cut_before_module_line(first, rest):
            warnings.append(InputWarning("skipped: the file ends before its 'HloModule' line "
                                         "(cut off, or still being written)", path=path, line=1))
        return None
    name = decode(m.group(1))
    stage = _stage(rest, name)
    return DumpFile(path, number, name, stage) if stage else None


def _cut_before_module_line(first: bytes, rest: str) -> bool:
    """A module file XLA had only begun to write: named for a stage XLA dumps, holding at most a prefix of its first
    line. Other ``module_*.txt`` files that are not HLO (XLA writes several) stay silently ignored."""
    if _KNOWN_STAGE_RE.search(rest) is None:
        return False
    return b"HloModule ".startswith(first.removeprefix(BOM))


def _stage(rest: str, name: str) -> str | None:
    """``rest`` is ``NAME.STAGE``. XLA sanitizes odd characters in file names, so when NAME does not match the
    HloModule line, the stage is recognized from the end of the name instead."""
    if rest.startswith(name + "."):
        return rest[len(name) + 1:]
    for pattern in (_PASS_STAGE_RE, _KNOWN_STAGE_RE):
        m = pattern.search(rest)
        if m:
            return m.group(1)
    return None


def stages_of(files: list[DumpFile]) -> list[str]:
    """The distinct stages present, in pipeline order."""
    return sorted({f.stage for f in files}, key=_stage_rank)


def select(files: list[DumpFile], stage: str | None) -> list[DumpFile]:
    """The files to yield for a ``stage`` choice.

    ``None`` (the default) picks, per module, ``before_optimizations``: that is the HLO the user's program
    produced, before XLA rewrote it, so differences there are differences in what the program asked for and are
    what explains a recompilation; optimized HLO differs in many more places as a consequence. A module dumped
    without it falls back to its final ``*_after_optimizations`` text, then to its earliest stage.
    ``"all"`` yields every stage; ``"after_optimizations"`` the final HLO whatever the platform prefix;
    anything else an exact stage, or the per-pass dumps ``after_<stage>``.
    """
    if stage is None:
        return _default_per_module(files)
    if stage == ALL:
        return list(files)
    return [f for f in files if _stage_matches(f.stage, stage)]


def _default_per_module(files: list[DumpFile]) -> list[DumpFile]:
    chosen: dict[int, DumpFile] = {}
    for f in files:  # files are in stage order within each module
        best = chosen.get(f.module_number)
        if best is None or _preference(f.stage) < _preference(best.stage):
            chosen[f.module_number] = f
    return [chosen[n] for n in sorted(chosen)]


def _preference(stage: str) -> int:
    if stage == BEFORE:
        return 0
    if stage.endswith(AFTER):
        return 1
    return 2


def _stage_matches(stage: str, wanted: str) -> bool:
    if stage == wanted:
        return True
    if wanted == AFTER:
        return stage.endswith("_" + AFTER)
    return f".after_{wanted}." in f".{stage}." or stage.endswith(f".{wanted}")


def scan_xla_dump(directory: str, warnings: list[InputWarning] | None = None, *,
                  stage: str | None = None) -> Iterator[GraphRecord]:
    """Yield the selected HLO files of a dump folder, ordered by module number then stage. The folder is listed
    when this is called, so an empty folder or an unknown stage fails here rather than on the first record."""
    files = list_dump_files(directory, warnings)
    if not files:
        raise HlodiffError(f"no HLO modules found in {directory}{_other_graph_files(directory)}", path=directory)
    chosen = select(files, stage)
    if not chosen:
        raise HlodiffError(f"no module was dumped at stage {stage!r} ({_present(files)})", path=directory)
    if stage is None and warnings is not None and any(f.stage == BEFORE for f in chosen):
        for f in chosen:
            if f.stage != BEFORE:  # comparing it with unoptimized modules would mostly show XLA's rewrites
                warnings.append(InputWarning(f"module {f.module_number} has no readable before_optimizations text; "
                                             f"using {f.stage}, which XLA has already rewritten", path=f.path))
    return _records(directory, chosen)


def _records(directory: str, chosen: list[DumpFile]) -> Iterator[GraphRecord]:
    for index, f in enumerate(chosen):
        yield GraphRecord(path=f.path, index=index, kind="xla_dump", start_line=1, source=directory,
                          module_number=f.module_number, module_name=f.module_name, stage=f.stage,
                          proto_path=proto_beside(f.path))


def _present(files: list[DumpFile]) -> str:
    stages = stages_of(files)
    shown = ", ".join(stages[:4])
    more = f", ... ({len(stages)} stages in all)" if len(stages) > 4 else ""
    return f"stages present: {shown}{more}"


def _other_graph_files(directory: str) -> str:
    """Users often pass the folder a save-tensors file or a lone HLO file sits in: name that file."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)[:200]
    except OSError:
        return ""
    if any(e.name.startswith("module_") and e.name.endswith(".hlo.pb") for e in entries):
        return (" (only HLO protos: hlodiff compares the text XLA dumps beside them; add --xla_dump_hlo_as_text "
                "to XLA_FLAGS)")
    for entry in entries:
        if entry.name.startswith("module_") or not entry.is_file():
            continue
        try:
            with open(entry.path, "rb") as f:
                head = f.read(64)
        except OSError:
            continue
        if head.startswith((b"[ScheduleSyncTensorsGraph]", b"HloModule ")):
            return f" (it holds {entry.name}: pass that file instead)"
    return ""
