"""Output folders under faults: a rerun killed at any moment, or a full disk, leaves one run's complete set.

A child process reruns :func:`hdbayes._io.write_folder` into an existing output folder with
writers that write real content slowly, and is killed with SIGKILL at a random moment of
its write phase (seeded delays). After each kill the folder must hold exactly one run's
complete set (its manifest and every file of the same run, nothing else), and after the
next successful run nothing temporary may remain beside or inside the folder.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hdbayes import _io
from hdbayes._io import MANIFEST, check_output_folder, write_folder

CHUNKS = 8  # chunks per file, each followed by a pause of DELAY seconds
DELAY = 0.006
LINES = 400  # lines per chunk

CHILD = """
import os, sys, time
from hdbayes import _io
from hdbayes._io import write_folder
folder, run, delay, chunks, lines, fallback = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), \\
    int(sys.argv[5]), sys.argv[6] == "1"
if fallback:
    _io._renameat2 = lambda: None
kill_at = os.environ.get("KILL_AT")  # die at a given step of the swap: "rename:N" or "exchange"
if kill_at == "exchange":
    exchange = _io._exchange
    def _exchange(*args):
        assert exchange(*args)
        os.kill(os.getpid(), 9)
    _io._exchange = _exchange
elif kill_at:
    rename, count = os.rename, [int(kill_at.split(":")[1])]
    def _rename(*args):
        rename(*args)
        count[0] -= 1
        if count[0] == 0:
            os.kill(os.getpid(), 9)
    _io.os.rename = _rename

def writer(name):
    def write(path):
        with open(path, "w", encoding="utf-8") as handle:
            for chunk in range(chunks):
                handle.write(f"run {run} {name} chunk {chunk}\\n" * lines)
                handle.flush()
                time.sleep(delay)
    return write

names = ["summary.md", "results.csv", "figure.png"] + (["odd.csv"] if run % 2 else ["even.csv"])
print("writing", flush=True)
write_folder(folder, {name: writer(name) for name in names})
print("done", flush=True)
"""


def _names(run):
    return sorted(["summary.md", "results.csv", "figure.png", "odd.csv" if run % 2 else "even.csv"])


def _expected(run, name):
    return "".join(f"run {run} {name} chunk {chunk}\n" * LINES for chunk in range(CHUNKS))


def _complete_run(folder):
    """The run whose complete set ``folder`` holds; fails on a mix, a partial file or an extra entry."""
    listed = [line for line in (folder / MANIFEST).read_text().splitlines() if not line.startswith("#")]
    assert sorted(os.listdir(folder)) == sorted([MANIFEST, *listed])
    run = int((folder / listed[0]).read_text().split(" ", 2)[1])
    assert listed == _names(run)
    for name in listed:
        assert (folder / name).read_text() == _expected(run, name), f"{name} is not run {run}'s complete file"
    return run


def _write(folder, run, fallback):
    """One complete run in this process, at full speed (the runs before and after the killed ones)."""

    def writer(name):
        return lambda path: Path(path).write_text(_expected(run, name), encoding="utf-8")

    renameat2 = _io._renameat2
    if fallback:
        _io._renameat2 = lambda: None
    try:
        write_folder(folder, {name: writer(name) for name in _names(run)})
    finally:
        _io._renameat2 = renameat2


def _run_child(folder, run, fallback, kill_after=None, kill_at=None):
    """Run one child write; kill it ``kill_after`` seconds into its write phase (None: let it finish)."""
    args = [folder, run, DELAY, CHUNKS, LINES, int(fallback)]
    environment = {**os.environ, "KILL_AT": kill_at or ""}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    assert child.stdout.readline() == "writing\n", child.stderr.read()
    if kill_at is not None:
        child.communicate(timeout=120)
        assert child.returncode == -signal.SIGKILL
        return False
    if kill_after is None:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0 and out == "done\n", err
        return True
    time.sleep(kill_after)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    return child.returncode == 0  # finished before the kill


def _trials(tmp_path, n_trials, seed, fallback):
    rng = random.Random(seed)
    folder = tmp_path / "out"
    _write(folder, 0, fallback)
    assert _complete_run(folder) == 0
    write_phase = len(_names(0)) * CHUNKS * DELAY
    killed = last = 0
    for run in range(1, n_trials + 1):
        done = _run_child(folder, run, fallback, kill_after=rng.uniform(0, 1.3 * write_phase))
        killed += not done
        if fallback:
            check_output_folder(folder)  # the next run restores an old set left between the two renames
        found = _complete_run(folder)
        assert found in (last, run) and (found == run or not done)
        last = found
    assert killed >= 1  # the seeded delays kill most runs inside their write phase
    _write(folder, n_trials + 1, fallback)
    assert _complete_run(folder) == n_trials + 1
    assert os.listdir(tmp_path) == ["out"], "a temporary file or staging folder was left beside the folder"


def test_killed_reruns_leave_one_complete_set(tmp_path):
    _trials(tmp_path, 3, seed=2026, fallback=False)


@pytest.mark.slow
@pytest.mark.parametrize("fallback", [False, True], ids=["exchange", "two-renames"])
def test_killed_reruns_leave_one_complete_set_many(tmp_path, fallback):
    _trials(tmp_path, 20, seed=26, fallback=fallback)


@pytest.mark.parametrize(
    "fallback, kill_at, visible",
    [
        (False, "exchange", 1),  # swapped, the old set not yet deleted: the new set is in place
        (True, "rename:1", None),  # the old set moved aside, the new one not yet in: the next run restores the old
        (True, "rename:2", 1),  # the new set in place, the old one not yet deleted
    ],
)
def test_killed_inside_the_swap(tmp_path, fallback, kill_at, visible):
    folder = tmp_path / "out"
    _write(folder, 0, fallback)
    _run_child(folder, 1, fallback, kill_at=kill_at)
    assert len(os.listdir(tmp_path)) == 2  # the folder or the old set moved aside, and the killed run's leftover
    if visible is None:
        assert not os.path.lexists(folder)
        check_output_folder(folder)
        assert _complete_run(folder) == 0 and os.listdir(tmp_path) == ["out"]
    else:
        assert _complete_run(folder) == visible
    _write(folder, 2, fallback)
    assert _complete_run(folder) == 2 and os.listdir(tmp_path) == ["out"]


def test_a_killed_first_run_leaves_no_folder_and_its_leftover_goes(tmp_path):
    folder = tmp_path / "out"
    _run_child(folder, 1, False, kill_after=0.02)
    assert not os.path.lexists(folder) and len(os.listdir(tmp_path)) == 1  # only the killed run's staging folder
    _write(folder, 2, False)
    assert _complete_run(folder) == 2 and os.listdir(tmp_path) == ["out"]


def _text(content):
    def write(path):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)

    return write


def _no_space(path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("half a table")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(path))


@pytest.mark.parametrize("stage", ["writer", "manifest", "swap"])
def test_full_disk_keeps_the_old_set_and_leaves_nothing(tmp_path, monkeypatch, stage):
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("run 1\n"), "t.csv": _text("1\n")})
    files = {"summary.md": _text("run 2\n"), "t.csv": _no_space if stage == "writer" else _text("2\n")}
    if stage == "manifest":
        real_open = os.open

        def full_open(path, flags, *args, **kwargs):
            if os.path.basename(path) == MANIFEST and flags & os.O_CREAT:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(_io.os, "open", full_open)
    elif stage == "swap":

        def full_swap(*args):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(_io, "_swap_in", full_swap)
    with pytest.raises(OSError) as raised:
        write_folder(folder, files)
    monkeypatch.undo()
    assert raised.value.errno == errno.ENOSPC
    assert sorted(os.listdir(folder)) == [MANIFEST, "summary.md", "t.csv"]
    assert (folder / "summary.md").read_text() == "run 1\n" and (folder / "t.csv").read_text() == "1\n"
    assert os.listdir(tmp_path) == ["out"]
