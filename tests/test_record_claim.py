"""``hlodiff record`` never removes or replaces a recording: a lock while one runs, numbered default folders, a
named folder with a recording refused, and a full disk that leaves the manifest whole or absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest

from helpers import run_hlodiff as hlodiff

HLODIFF = [sys.executable, "-m", "hlodiff.cli"]  # the recording that runs while another one starts


def wait_for(path, proc, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the first recording never started its command"
        time.sleep(0.05)


def test_a_second_record_into_a_running_one_refuses_naming_it_and_removes_nothing(tmp_path):
    out, started, go = tmp_path / "run", tmp_path / "started", tmp_path / "go"
    # The first run's command writes into the capture folder (as torch_xla does), then waits to be let go.
    script = (f"echo partial > {out}/pt_xla_debug.log; touch {started}; "
              f"while [ ! -e {go} ]; do sleep 0.05; done; exit 5")
    first = subprocess.Popen([*HLODIFF, "record", "--out", str(out), "--", "sh", "-c", script], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(started, first)
        second = hlodiff("record", "--out", str(out), "--", "true", cwd=tmp_path)
        assert second.returncode == 2
        assert f"pid {first.pid}" in second.stderr and "another hlodiff record" in second.stderr
        assert (out / "pt_xla_debug.log").read_text() == "partial\n"  # nothing the running capture wrote removed
    finally:
        go.touch()
        _, err = first.communicate(timeout=60)
    assert first.returncode == 5, err  # the first run goes on to its own end and status
    manifest = json.loads((out / "hlodiff-record.json").read_text())
    assert manifest["returncode"] == 5 and (out / "pt_xla_debug.log").exists()


def test_a_killed_recording_leaves_no_stale_lock(tmp_path):
    out, started = tmp_path / "run", tmp_path / "started"
    first = subprocess.Popen([*HLODIFF, "record", "--out", str(out), "--", "sh", "-c",
                              f"touch {started}; sleep 15"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for(started, first)
    os.killpg(first.pid, 9)  # hlodiff and its command die without cleaning anything
    first.wait()
    again = hlodiff("record", "--out", str(out), "--", "true", cwd=tmp_path)
    assert "another hlodiff record" not in again.stderr  # the lock went with its process
    assert "holds an earlier recording" in again.stderr and again.returncode == 2  # and the capture is kept


def test_the_default_folder_is_numbered_past_earlier_recordings(tmp_path):
    for n in range(3):
        proc = hlodiff("record", "--", "sh", "-c", f"echo {n} > marker; exit {n}", cwd=tmp_path)
        assert proc.returncode == n, proc.stderr
    folders = ["hlodiff-run", "hlodiff-run-2", "hlodiff-run-3"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == folders
    for n, name in enumerate(folders):  # each recording kept as it ended
        assert json.loads((tmp_path / name / "hlodiff-record.json").read_text())["returncode"] == n
    assert "recorded into hlodiff-run-3" in proc.stderr


def test_a_named_folder_holding_a_recording_is_refused_with_a_hint(tmp_path):
    assert hlodiff("record", "--out", "a", "--", "true", cwd=tmp_path).returncode == 0
    assert not (tmp_path / "a" / ".hlodiff-record.lock").exists()  # a finished recording leaves no lock file
    before = (tmp_path / "a" / "hlodiff-record.json").read_bytes()
    again = hlodiff("record", "--out", "a", "--", "sh", "-c", "touch ran", cwd=tmp_path)
    assert again.returncode == 2
    line, = [s for s in again.stderr.splitlines() if s.strip()]
    assert "holds an earlier recording" in line and "explain-recompile" in line and "--out" in line
    assert (tmp_path / "a" / "hlodiff-record.json").read_bytes() == before
    assert not (tmp_path / "ran").exists()  # the command never ran


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs (root only; skipped where mounting is not permitted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", f"hlodiff-test-{uuid.uuid4().hex[:8]}",
                           str(mount)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode(errors='replace').strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_record_on_a_full_disk_keeps_the_commands_status_and_names_the_manifest(small_disk):
    out = small_disk / "run"
    fill = f"head -c 1M /dev/zero > {out}/filler 2>/dev/null; exit 3"  # the command fills the disk, then fails
    proc = hlodiff("record", "--out", str(out), "--", "sh", "-c", fill, cwd=small_disk)
    assert proc.returncode == 3, proc.stderr
    assert f"{out}/hlodiff-record.json: error: cannot write the capture manifest" in proc.stderr
    assert "No space left" in proc.stderr and "Traceback" not in proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert "hlodiff-record.json.tmp" not in names
    if "hlodiff-record.json" in names:  # complete, or absent: never half-written
        assert json.loads((out / "hlodiff-record.json").read_text())["returncode"] == 3


def test_record_on_a_disk_already_full_is_an_error_naming_the_manifest(small_disk):
    out = small_disk / "run"
    out.mkdir()
    subprocess.run(f"head -c 1M /dev/zero > {small_disk}/filler", shell=True, stderr=subprocess.DEVNULL)
    proc = hlodiff("record", "--out", str(out), "--", "sh", "-c", "touch ../ran", cwd=out)
    assert proc.returncode == 2
    assert "hlodiff-record.json: error: cannot write the capture manifest: No space left" in proc.stderr
    assert not (small_disk / "ran").exists() and not (out / "hlodiff-record.json.tmp").exists()


def test_record_refuses_an_html_report_onto_a_fifo_before_running_the_command(tmp_path):
    os.mkfifo(tmp_path / "report.html")
    proc = hlodiff("record", "--out", "run", "--html", "report.html", "--", "sh", "-c", "touch ran", cwd=tmp_path)
    assert proc.returncode == 2 and "FIFO" in proc.stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "run").exists()


def test_a_folder_of_the_users_is_refused_and_left_as_it_was(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    proc = hlodiff("record", "--out", "mine", "--", "true", cwd=tmp_path)
    assert proc.returncode == 2 and "files hlodiff did not record" in proc.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]  # not even a lock file added
