"""Many graphs: the inspect table summarises, explain-recompile diffs each recompilation once, hits share memory."""

from __future__ import annotations

import hashlib
import re


from helpers import FIXTURES, cli
from hlodiff.dumps import iter_graphs

TINY = FIXTURES / "torch_xla" / "print_partial" / "graphs.hlo.0"


def entries(graphs: int, keys: int) -> str:
    """``graphs`` save-tensors entries of a real 3 KB graph, ``keys`` variants (one constant changed each): the
    first ``keys * 3`` steps cycle through them, the rest repeat the last (cache hits)."""
    record = list(iter_graphs(str(TINY)))[3]
    frames = "".join(f"  {f.function} ({f.file}:{f.line})\n" for f in record.frames)
    text = record.text()
    m = re.search(r"= f32\[\] constant\((\d+)\)", text)
    out = []
    for k in range(keys):
        variant = text[:m.start(1)] + str(int(m.group(1)) + k) + text[m.end(1):]
        digest = hashlib.md5(variant.encode()).hexdigest()
        out.append(f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n{frames}\nRoot Hashes: ({digest[:31]})\n\n"
                   f"## BEGIN_GRAPH\n{variant.rstrip()}\n\n\nGraph Hash: {digest}\n\n## END_GRAPH\n\n")
    return "".join(out[i % keys] if i < keys * 3 else out[-1] for i in range(graphs))


def test_inspect_table_summarises_runs_of_cache_hits(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    path.write_text(entries(2500, 5))
    result = cli("inspect", str(path))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2,500 graphs in") and lines[0].endswith("5 compilations")
    assert "summarised" in lines[1]
    assert len(lines) < 30
    assert sum("yes" in line for line in lines) == 5
    assert any(re.match(r"#14-2499 .* 2,486 hits of #4 ", line) for line in lines), result.stdout


def test_small_tables_still_list_every_graph(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    path.write_text(entries(40, 5))
    result = cli("inspect", str(path))
    assert "summarised" not in result.stdout and result.stdout.count("hit of #4") == 27


def test_each_recompilation_is_diffed_in_depth_once(tmp_path, monkeypatch):
    from hlodiff.explain import recompile

    path = tmp_path / "graphs.hlo.0"
    path.write_text(entries(60, 20))
    calls = []
    real = recompile.diff_canonical
    monkeypatch.setattr(recompile, "diff_canonical", lambda a, b: calls.append(1) or real(a, b))
    result = cli("explain-recompile", "--json", str(path))
    assert result.exit_code == 1
    import json

    doc = json.loads(result.stdout)
    assert len(doc["recompilations"]) == 19
    assert len(calls) == 19
    # each variant differs from the one before it by the one constant: the closest is the previous compilation
    first = doc["recompilations"][0]
    assert "constant" in [c["kind"] for c in first["causes"]]


def test_cache_hits_share_their_stack_and_hashes(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    path.write_text(entries(30, 2))
    records = list(iter_graphs(str(path)))
    assert len(records) == 30
    assert all(r.frames is records[-1].frames for r in records[6:])
    assert all(r.graph_hash is records[-1].graph_hash for r in records[6:])
