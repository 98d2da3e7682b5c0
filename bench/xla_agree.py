"""Developer check: does hlodiff read and reject what XLA's own parser does? (needs the optional jax extra)

    python bench/xla_agree.py [-v]

For every module of ../shared/corpus/xla_parser (valid/ and invalid/) and every module of every file that
../shared/corpus/wild/SOURCES.md judges valid, parse with hlodiff and with XLA's C++ parser as shipped in jaxlib
(``jaxlib._hlo.hlo_module_from_text``: the parser without the verifier), and compare the verdicts and the
instruction counts per computation (as multisets: hlodiff names XLA's wrapped async computations its own way).
Prints the disagreements and a summary; nothing is asserted. CI uses MANIFEST.tsv and SOURCES.md instead
(tests/test_corpus.py), so it does not need jaxlib.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
sys.path.insert(0, str(REPO / "tests"))

from hlodiff.dumps import iter_graphs  # noqa: E402
from hlodiff.errors import HlodiffError  # noqa: E402
from hlodiff.hlo import parse_module  # noqa: E402


def xla_counts(parse, text: str) -> list[int] | str:
    try:
        module = parse(text)
    except Exception as e:  # noqa: BLE001 - XLA's verdict, whatever its type
        return str(e).replace("\n", " ")[:160]
    return sorted(len(c.instructions()) for c in module.computations())


def our_counts(text: str, path: str, first_line: int = 1) -> list[int] | str:
    try:
        module = parse_module(text, path=path, first_line=first_line)
    except HlodiffError as e:
        return str(e)[:160]
    return sorted(len(c.instructions) for c in module.computations)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("-v", action="store_true", help="also print every rejection beside XLA's message")
    args = ap.parse_args(argv)
    try:
        from jaxlib._hlo import hlo_module_from_text as parse
    except ImportError:
        print("jaxlib is not installed (pip install -e '.[jax]'): nothing to compare against")
        return 0
    tally: collections.Counter = collections.Counter()
    for kind in ("valid", "invalid"):
        for path in sorted((CORPUS / "xla_parser" / kind).glob("*.hlo")):
            text = path.read_text()
            ours, xla = our_counts(text, path.name), xla_counts(parse, text)
            agree = ours == xla if isinstance(xla, list) else isinstance(ours, str)
            tally[(kind, agree)] += 1
            if not agree or (args.v and isinstance(ours, str)):
                print(f"{'ok ' if agree else 'DIFF'} {kind:7} {path.name}: hlodiff {ours} | XLA {xla}")
    from test_corpus import _wild_valid

    for name in _wild_valid():
        path = CORPUS / "wild" / name
        for record in iter_graphs(path, stage="all" if path.is_dir() else None):
            text = record.text()
            ours, xla = our_counts(text, record.path, record.start_line), xla_counts(parse, text)
            agree = ours == xla if isinstance(xla, list) else isinstance(ours, str)
            tally[("wild", agree)] += 1
            if not agree:
                print(f"DIFF wild    {record.ref}: hlodiff {ours} | XLA {xla}")
    for kind in ("valid", "invalid", "wild"):
        print(f"{kind:8}: {tally[(kind, True)]} agree with XLA, {tally[(kind, False)]} do not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
