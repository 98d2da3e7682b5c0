"""gen_library_modules: write hlodiff/hlo/library_modules.txt.gz, the module paths of the ML libraries whose frames
fill torch_xla and JAX dumps, so a frame is known as library code by its package layout even where that library
is not installed (the dump came from another machine, or from a source checkout of torch).

Sources, per distribution (the header of the output names which one each came from):
  * installed distributions of the interpreter running this script, read from their file lists
    (importlib.metadata; nothing is imported): torch, torch_xla, jax, jaxlib here;
  * wheels given with --wheel (their RECORD), e.g. from ``pip download --no-deps flax optax transformers``;
  * tools/library_modules_public.txt: listings of torch_neuronx and neuronx_distributed, whose PyPI wheels
    are placeholders.

Output format (gzip, mtime 0, deterministic): ``# dist version source`` header lines, then one line per package
folder, ``folder<TAB>module module ...`` (module names without ``.py``), folders sorted. Only ``.py`` files
under a top-level package folder are kept (a top-level ``six.py`` could be any user's file name).

Run: /work/main/.venv/bin/python tools/gen_library_modules.py [--wheel W.whl ...] [--out PATH]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
import importlib.metadata as md
import zipfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from hlodiff.hlo.library_modules import DISTRIBUTIONS, is_package_module as keep  # noqa: E402


def from_installed(name: str) -> tuple[str, set[str]] | None:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return None
    return dist.version, {str(f).replace("\\", "/") for f in dist.files or () if keep(str(f))}


def from_wheel(path: Path) -> tuple[str, str, set[str]]:
    with zipfile.ZipFile(path) as zf:
        record = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        meta = zf.read(record.replace("RECORD", "METADATA")).decode()
        rows = csv.reader(io.StringIO(zf.read(record).decode()))
        files = {row[0] for row in rows if row and keep(row[0])}
    fields = dict(line.split(": ", 1) for line in meta.splitlines() if ": " in line and not line.startswith(" "))
    return fields["Name"].replace("-", "_").lower(), fields["Version"], files


def from_public(path: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            dist, module = line.split("\t")
            if keep(module):
                found[dist].add(module)
    return found


def render(sources: dict[str, tuple[str, str, set[str]]]) -> bytes:
    folders: dict[str, set[str]] = defaultdict(set)
    lines = []
    for dist in sorted(sources):
        version, source, files = sources[dist]
        lines.append(f"# {dist} {version} {source} {len(files)}")
        for f in files:
            folder, _, name = f.rpartition("/")
            folders[folder].add(name[:-3])
    lines += [f"{folder}\t{' '.join(sorted(names))}" for folder, names in sorted(folders.items())]
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(("\n".join(lines) + "\n").encode())
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", action="append", default=[], type=Path)
    ap.add_argument("--public", type=Path, default=HERE / "library_modules_public.txt")
    ap.add_argument("--out", type=Path, default=HERE.parent / "hlodiff" / "hlo" / "library_modules.txt.gz")
    args = ap.parse_args()
    sources: dict[str, tuple[str, str, set[str]]] = {}
    for name in DISTRIBUTIONS:
        got = from_installed(name)
        if got is not None:
            sources[name] = (got[0], "installed", got[1])
    for wheel in args.wheel:
        name, version, files = from_wheel(wheel)
        if name in DISTRIBUTIONS and name not in sources:
            sources[name] = (version, "wheel", files)
    for name, files in from_public(args.public).items():
        if name not in sources:
            sources[name] = ("-", "public-listing", files)
    data = render(sources)
    args.out.write_bytes(data)
    for name in DISTRIBUTIONS:
        print(f"{name:20s} {sources[name][0] + ' ' + sources[name][1] if name in sources else 'MISSING'}")
    print(f"{args.out}: {len(data)} bytes")


if __name__ == "__main__":
    main()
