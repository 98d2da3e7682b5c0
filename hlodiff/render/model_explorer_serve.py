"""Serve a diff in Model Explorer (the ``explorer`` extra): write the JSON files, start its local server on
127.0.0.1, print the URL (on stderr, with Model Explorer's other messages), and wait until Ctrl-C.

Only this module imports ``model_explorer``; reading and diffing never need it. Two choices differ from Model
Explorer's defaults, both so that looking at a private dump sends nothing anywhere: no browser is opened (the URL
is printed), and its check for a newer version on pypi.org (at start and from the page) is answered locally.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
from urllib.parse import quote

from hlodiff.errors import HlodiffError
from hlodiff.render.model_explorer import ExplorerInput, ui_state, write_explorer_files

HOST = "127.0.0.1"
PORT = 8080  # Model Explorer's default: it takes the first free port from 8080 to 8099


def model_explorer_module():
    """``model_explorer``, or a one-line error saying how to install it."""
    try:
        import model_explorer
        from model_explorer import server
    except ImportError:
        raise HlodiffError("--model-explorer needs Model Explorer: pip install 'hlodiff[explorer]' "
                           "(or write the files with --model-explorer-out DIR for your own)", path="hlodiff") from None
    return model_explorer, server


def url_data(data: ExplorerInput, paths: dict[str, str]) -> dict:
    """What Model Explorer reads from its ``data=`` URL parameter: the graph file, both overlays (applied to the
    models), both panes (graph A left, graph B right), and navigation synced by node id (a matched instruction has
    one id on both sides)."""
    return {"models": [{"url": paths["graph_a"]}, {"url": paths["graph_b"]}],
            "nodeData": [paths["status"], paths["cause"]], "nodeDataTargets": ["", ""], "uiState": ui_state(data),
            "sync": {"mode": "match_node_id"}}


def serve(data: ExplorerInput, host: str = HOST, port: int = PORT) -> None:
    """Blocks until Ctrl-C; the files live in a temporary folder removed afterwards."""
    model_explorer, server = model_explorer_module()
    folder = tempfile.mkdtemp(prefix="hlodiff-model-explorer-")
    try:
        paths = write_explorer_files(data, folder)
        config = model_explorer.config()
        for side in ("graph_a", "graph_b"):
            config.add_model_from_path(paths[side])
        for what in ("status", "cause"):
            config.add_node_data_from_path(paths[what])
        encoded = quote(json.dumps(url_data(data, paths)))
        config.to_url_param_value = lambda: encoded  # the same models and overlays, plus the two-pane layout
        server._check_new_version = _no_version_check
        with contextlib.redirect_stdout(sys.stderr):  # stdout keeps the report alone (compare --json stays JSON)
            server.start(host=host, port=port, config=config, no_open_in_browser=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _no_version_check(print_msg: bool = True) -> dict:
    return {"version": "", "runningVersion": "", "releaseUrl": "", "desktopAppUrl": ""}


def show_diff(diff, left_ref: str, right_ref: str, *, serve_it: bool, out_dir: str | None, read=None,
              echo=print) -> None:
    """What ``--model-explorer-out DIR`` and ``--model-explorer`` do with one diff: write the files (saying where),
    then serve them."""
    from hlodiff.render.model_explorer import explorer_input

    if serve_it:
        model_explorer_module()  # fail before the work when the extra is missing
    data = explorer_input(diff, left_ref, right_ref)
    if out_dir:
        paths = write_explorer_files(data, out_dir, read)
        echo(f"Model Explorer files written; view them with: model-explorer {paths['graph_a']},{paths['graph_b']} "
             f"--node_data_paths={paths['status']},{paths['cause']}")
    if serve_it:
        serve(data)


def show_recompilation(explanation, graph: int | None, *, serve_it: bool, out_dir: str | None, read=None,
                       echo=print) -> None:
    """``explain-recompile --model-explorer``: recompiled graph #``graph`` (default: the first recompilation)
    beside the closest earlier graph of its family, the pair its causes were derived from."""
    recompilations = [r for r in explanation.recompilations if r.diff is not None and r.diff.computations]
    chosen = next((r for r in recompilations if graph is None or r.graph.record.index == graph), None)
    if chosen is None:
        numbers = ", ".join(f"#{r.graph.record.index}" for r in recompilations) or "none"
        wanted = "a recompilation" if graph is None else f"graph #{graph} as a recompilation"
        raise HlodiffError(f"--model-explorer: no {wanted} with a closest earlier graph to show (recompiled graphs "
                           f"compared: {numbers})", path="hlodiff")
    show_diff(chosen.diff, chosen.closest.ref, chosen.graph.ref, serve_it=serve_it, out_dir=out_dir, read=read,
              echo=echo)
