"""Snapshots of the graphs a test compiles, kept beside the test in ``__hlo_snapshots__/``.

One file per test (and name), holding for each compiled graph its canonical fingerprint and its normalized text
(canonical names, no metadata: readable in a code review, stable across runs). A later run that compiles a
different graph fails with the compare report against the stored text; ``pytest --hlodiff-update`` rewrites
snapshots and deletes unused ones; unused snapshots are listed at the end of the session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from hlodiff.diff import diff_canonical
from hlodiff.graph import canonicalize, normalized_text
from hlodiff.hlo import parse_module

SNAPSHOT_DIR = "__hlo_snapshots__"
_HEADER = re.compile(r"^// graph (\d+): fingerprint ([0-9a-f]+)$", re.M)


class SnapshotMismatch(AssertionError):
    """The compiled graphs differ from the stored snapshot; the message says how."""


@dataclass(slots=True)
class StoredGraph:
    fingerprint: str
    text: str


@dataclass(slots=True)
class SnapshotSession:
    """Tracks which snapshot files this session used or wrote, for the end-of-session report."""

    update: bool = False
    used: set[Path] = field(default_factory=set)
    written: list[Path] = field(default_factory=list)
    roots: set[Path] = field(default_factory=set)

    def path_for(self, test_path: Path, test_name: str, name: str | None) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.\-]+", "_", test_name + (f".{name}" if name else ""))
        folder = test_path.parent / SNAPSHOT_DIR / test_path.stem
        self.roots.add(test_path.parent / SNAPSHOT_DIR)
        return folder / f"{safe}.hlo"

    def assert_match(self, node, explanation, name: str | None = None) -> None:
        __tracebackhide__ = True
        path = self.path_for(Path(str(node.path)), node.name, name)
        self.used.add(path)
        compiled = [g for g in explanation.graphs if g.compiled]
        current = [(g._canonical.fingerprint, normalized_text(g._canonical)) for g in compiled]
        if self.update or not path.exists():
            write(path, node.nodeid, current)
            self.written.append(path)
            return
        stored = read(path)
        if [s.fingerprint for s in stored] == [fp for fp, _ in current]:
            return
        raise SnapshotMismatch(mismatch_message(path, stored, compiled))

    def unused(self) -> list[Path]:
        found = []
        for root in sorted(self.roots):
            found.extend(p for p in sorted(root.rglob("*.hlo")) if p not in self.used)
        return found


def write(path: Path, nodeid: str, graphs: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [f"// hlodiff snapshot of {nodeid}: {len(graphs)} compiled graph{'s' if len(graphs) != 1 else ''}.\n"
             f"// Regenerate with: pytest --hlodiff-update\n"]
    for i, (fp, text) in enumerate(graphs):
        parts.append(f"// graph {i}: fingerprint {fp}\n{text}")
    path.write_text("\n".join(parts))


def read(path: Path) -> list[StoredGraph]:
    text = path.read_text()
    heads = list(_HEADER.finditer(text))
    graphs = []
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        graphs.append(StoredGraph(m.group(2), text[m.end() + 1:end]))
    return graphs


def mismatch_message(path: Path, stored: list[StoredGraph], compiled) -> str:
    lines = [f"compiled graphs differ from the snapshot {path} "
             f"({len(stored)} stored, {len(compiled)} compiled now); run pytest --hlodiff-update if intended"]
    for i in range(max(len(stored), len(compiled))):
        if i >= len(stored):
            lines.append(f"graph {i}: new, not in the snapshot ({compiled[i].ref})")
            continue
        if i >= len(compiled):
            lines.append(f"graph {i}: in the snapshot, not compiled now")
            continue
        if stored[i].fingerprint == compiled[i]._canonical.fingerprint:
            continue
        old = canonicalize(parse_module(stored[i].text, path=str(path)))
        diff = diff_canonical(old, compiled[i]._canonical)
        lines.append(f"graph {i} ({compiled[i].ref}) differs from the snapshot:")
        for cause in diff.causes:
            where = ", ".join(f.where for f in cause.locations) or "location unknown"
            lines.append(f"  {cause.kind:<10}{cause.summary} [{where}]")
    return "\n".join(lines)
