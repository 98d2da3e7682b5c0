"""Which dumps belong to which rank of a multi-device job, and how we know.

Multi-device jobs write one dump per rank: torch_xla one save-tensors file per device ordinal (``FILE.0``,
``FILE.1``, ...), JAX and XLA one ``--xla_dump_to`` folder per process or host. Users hand us those in four ways,
and each is recognised here from the paths alone (nothing is parsed):

* the files themselves, ``graphs.hlo.0 graphs.hlo.1`` -> rank = the ordinal suffix;
* the save-tensors base name, ``graphs.hlo`` (the value of ``XLA_SAVE_TENSORS_FILE``) -> every ``graphs.hlo.N``;
* several dump folders -> rank = the number in each folder's name (``rank3``, ``host-1``, ``proc_2``) when those
  numbers are distinct, else the order on the command line;
* one folder holding a dump per rank (``rank0/ rank1/ ...`` or one folder per host) -> the same rule over its
  subfolders, sorted.

Every :class:`RankSpec` says in words how its rank was identified, because a wrong guess here would blame the
wrong rank; the renderers print it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps._io import names_in
from hlodiff.dumps.run_folder import is_xla_dump_folder

_ORDINAL = re.compile(r"^(.*)\.(\d+)(\.gz)?$")
_NUMBER = re.compile(r"(\d+)(?!.*\d)")  # the last number in a name
_SAVE_FILE = re.compile(r"\.hlo\.\d+(\.gz)?$")


@dataclass(frozen=True, slots=True)
class RankSpec:
    """One rank of a job: its number, the dumps it wrote, and how the number was found."""

    rank: int
    paths: tuple[str, ...]
    identified_by: str
    own_folder: bool = field(default=False)
    """True when the rank's dumps sit in a folder of their own, so side files found there (live-tensor report,
    debug log) are this rank's and nobody else's."""

    def to_json(self) -> dict:
        return {"rank": self.rank, "paths": list(self.paths), "identified_by": self.identified_by}


def find_ranks(paths: list[str]) -> list[RankSpec]:
    """The ranks the given paths stand for; one rank when they are one run (or ``PATH#N`` graph references).

    Raises nothing itself: missing files are left for the dump readers to report with their usual one-line error.
    """
    if any(_is_graph_ref(p) for p in paths):
        return [RankSpec(0, tuple(paths), "graph references: one run")]
    if len(paths) == 1:
        return _one_path(paths[0])
    if any(_is_hlo_file(p) for p in paths):
        return [RankSpec(0, tuple(paths), "HLO files: graphs of one run")]
    ordinals = [_ordinal_of(p) for p in paths]
    # ordinals of one save file (run/graphs.hlo.0, run/graphs.hlo.1): one base, one folder; files of different
    # runs that happen to end in .0 and .1 are numbered as given (and the report says the numbers are a guess)
    bases = {os.path.join(os.path.dirname(os.path.abspath(p)), _ORDINAL.match(os.path.basename(p)).group(1))
             for p, o in zip(paths, ordinals) if o is not None}
    if all(o is not None for o in ordinals) and len({o for o in ordinals}) == len(paths) and len(bases) == 1:
        return sorted((RankSpec(o, (p,), f"ordinal suffix .{o} of {os.path.basename(_ORDINAL.match(p).group(1))}")
                       for p, o in zip(paths, ordinals)), key=lambda r: r.rank)
    return _numbered(paths, "given")


def _one_path(path: str) -> list[RankSpec]:
    if os.path.isfile(path):
        return [RankSpec(0, (path,), "one dump: one rank")]
    if not os.path.exists(path):
        ordinals = _ordinal_files(path)
        if ordinals:
            return [RankSpec(o, (p,), f"ordinal suffix .{o} of {os.path.basename(path)}") for o, p in ordinals]
        return [RankSpec(0, (path,), "one dump: one rank")]
    if not os.path.isdir(path) or is_xla_dump_folder(path):
        return [RankSpec(0, (path,), "one dump: one rank")]
    processes = _recorded_processes(path)
    if len(processes) > 1:
        return processes
    if len(processes) == 1 and not any(_SAVE_FILE.search(n) for n in names_in(path)):
        return _one_path(processes[0].paths[0])  # one process's capture: its ordinals, or one run
    saves = sorted((int(_ORDINAL.match(n).group(2)), os.path.join(path, n)) for n in names_in(path)
                   if _SAVE_FILE.search(n))
    if len(saves) > 1:
        return [RankSpec(o, (p,), f"ordinal suffix .{o} of {os.path.basename(_ORDINAL.match(p).group(1))}")
                for o, p in saves]
    subfolders = [os.path.join(path, n) for n in names_in(path)
                  if os.path.isdir(os.path.join(path, n)) and _holds_dump(os.path.join(path, n))]
    if len(subfolders) > 1 and not saves:
        subfolders.sort(key=_natural)
        return _numbered(subfolders, "subfolder")
    return [RankSpec(0, (path,), "one dump: one rank")]


def _recorded_processes(path: str) -> list[RankSpec]:
    """The processes ``hlodiff record`` captured one folder each (a launcher's workers, issue 36), numbered by the
    rank the launcher gave them; processes without one follow, in folder order. Their folders are spelled from
    ``path`` as the user typed it."""
    from hlodiff.dumps.manifest import recorded_processes

    found = recorded_processes(path)
    ranked = [e for e in found if isinstance(e.get("rank"), int)]
    taken = {e["rank"] for e in ranked}
    if len(taken) != len(ranked):  # two attempts of one rank (a restarted worker): the latest attempt counts
        latest = {}
        for e in sorted(ranked, key=lambda e: e.get("restart") or 0):
            latest[e["rank"]] = e
        ranked = list(latest.values())
    specs = [RankSpec(e["rank"], (os.path.join(path, e["folder"]),),
                      f"{e.get('identified_by') or 'rank'}, recorded in {e['folder']}/", True) for e in ranked]
    following = max(taken, default=-1) + 1
    for e in sorted((e for e in found if not isinstance(e.get("rank"), int)), key=lambda e: _natural(e["folder"])):
        specs.append(RankSpec(following, (os.path.join(path, e["folder"]),),
                              f"{e.get('identified_by') or 'a process'}: numbered after the ranks "
                              f", recorded in {e['folder']}/", True))
        following += 1
    return sorted(specs, key=lambda r: r.rank)


def _numbered(paths: list[str], what: str) -> list[RankSpec]:
    """Rank from the last number in each name when the numbers are distinct, else from the order. A folder given
    for a rank is that rank's own (its side files are its own); a file may share its folder with other ranks."""
    names = [os.path.basename(os.path.normpath(p)) for p in paths]
    numbers = [int(m.group(1)) if (m := _NUMBER.search(n)) else None for n in names]
    if all(n is not None for n in numbers) and len(set(numbers)) == len(numbers):
        specs = [RankSpec(n, (p,), f"number in the {_folder_word(p)} name {name}", os.path.isdir(p))
                 for p, n, name in zip(paths, numbers, names)]
        return sorted(specs, key=lambda r: r.rank)
    where = "position on the command line" if what == "given" else "position among the sorted subfolders"
    return [RankSpec(i, (p,), f"{where} ({name})", os.path.isdir(p)) for i, (p, name) in enumerate(zip(paths, names))]


def _folder_word(path: str) -> str:
    return "folder" if os.path.isdir(path) else "file"


def _is_graph_ref(path: str) -> bool:
    from hlodiff.dumps import split_ref

    return split_ref(path)[1] is not None


def _is_hlo_file(path: str) -> bool:
    """A plain HLO module file is one graph, not a process's dump: several of them are one run's graphs."""
    from hlodiff.dumps import detect_kind
    from hlodiff.errors import HlodiffError

    if not os.path.isfile(path):
        return False
    try:
        return detect_kind(path) == "hlo_file"
    except HlodiffError:
        return False


def _ordinal_of(path: str) -> int | None:
    m = _ORDINAL.match(os.path.basename(path))
    return int(m.group(2)) if m and os.path.isfile(path) else None


def _ordinal_files(base: str) -> list[tuple[int, str]]:
    """``graphs.hlo`` -> [(0, "graphs.hlo.0"), (1, "graphs.hlo.1"), ...] as torch_xla wrote them."""
    folder, prefix = os.path.dirname(base) or ".", os.path.basename(base) + "."
    found = []
    for name in names_in(folder):
        rest = name[len(prefix):] if name.startswith(prefix) else ""
        m = re.fullmatch(r"(\d+)(\.gz)?", rest)
        if m:
            found.append((int(m.group(1)), os.path.join(os.path.dirname(base), name)))
    return sorted(found)


def _holds_dump(folder: str) -> bool:
    """An XLA dump folder, a folder with a save-tensors file or a recording, or one with such a folder inside."""
    names = names_in(folder)
    if any(n.startswith("module_") or _SAVE_FILE.search(n) or n == "hlodiff-record.json" for n in names):
        return True
    return any(os.path.isdir(os.path.join(folder, n)) and is_xla_dump_folder(os.path.join(folder, n)) for n in names)


def rank_dumps(spec: RankSpec) -> list[str]:
    """The dump paths to read for a rank: a rank folder stands for the dump inside it, as any run folder does."""
    from hlodiff.dumps.run_folder import dump_inside

    return [(dump_inside(path) or path) if os.path.isdir(path) else path for path in spec.paths]


def _natural(path: str) -> tuple:
    """Sort ``rank2`` before ``rank10``."""
    name = os.path.basename(os.path.normpath(path))
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def is_job(specs: list[RankSpec]) -> bool:
    """Several ranks, or one found the way ranks are found (a base name with one ordinal, one rank folder): the
    multi-rank report. A plain dump keeps the single-run report."""
    return len(specs) > 1 or not specs[0].identified_by.startswith(("one dump", "graph references", "HLO files"))
