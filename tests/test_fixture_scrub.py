"""The fixture scripts' dump scrubbing (``fixtures/_common.py``'s ``scrub_dump``): what a committed dump keeps, and
that no machine path reaches the repository. Checked on a dump folder laid out as XLA writes one."""

from __future__ import annotations

import sys

from conftest import FIXTURES

sys.path.insert(0, str(FIXTURES))
from _common import NEUTRAL_PROJECT, leftover_machine_paths, scrub_dump  # noqa: E402


def test_a_dump_keeps_what_the_rule_keeps_with_machine_paths_neutralized(tmp_path):
    script_dir, out = tmp_path / "scripts", tmp_path / "scripts" / "run"
    dump = out / "dump"
    (dump / "jit_f").mkdir(parents=True)
    hlo = dump / "module_0000.jit_f.before_optimizations.txt"
    hlo.write_text(f'HloModule jit_f\n  x = f32[4] parameter(0), metadata={{source_file="{script_dir}/f.py"}}\n'
                   f'  y = f32[4] tanh(x), metadata={{source_file="/tmp/pytest-of-me/scratch9/g.py"}}\n')
    (dump / "module_0000.jit_f.ir-no-opt.ll").write_text("; LLVM IR\n" * 100)
    (dump / "jit_f" / "module.mlir").write_text("module {}\n")
    obj = dump / "module_0000.jit_f.obj-file.o"
    obj.write_bytes(b"\x7fELF\0" + str(tmp_path).encode())

    kept = scrub_dump(dump, script_dir, out, keep=lambda p: p.suffix in (".txt", ".o"))

    assert kept == [hlo, obj]  # the kernel IR and the emptied folder are gone
    assert not (dump / "jit_f").exists()
    text = hlo.read_text()
    assert f'source_file="{NEUTRAL_PROJECT}/f.py"' in text and leftover_machine_paths(text) == []
    assert obj.read_bytes() == b"\x7fELF\0" + str(tmp_path).encode()  # object code stays as XLA wrote it
