"""Output writing (hdbayes._io): never lose or damage a user's files."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys
import threading

import pytest

from hdbayes import _io
from hdbayes._io import MANIFEST, check_distinct_files, check_output_folder, write_file, write_folder
from hdbayes.exceptions import InputValueError


def _text(content):
    return lambda path: open(path, "w", encoding="utf-8").write(content)


@pytest.fixture()
def umask():
    """Set the process umask for one test and restore it."""
    previous = os.umask(0o022)
    os.umask(previous)

    def set_mask(mask):
        os.umask(mask)

    yield set_mask
    os.umask(previous)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_file_follows_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    write_file(tmp_path / "out.csv", _text("a\n"))
    assert stat.S_IMODE(os.stat(tmp_path / "out.csv").st_mode) == expected
    assert (tmp_path / "out.csv").read_text() == "a\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_replaced_file_keeps_its_mode(tmp_path, umask):
    umask(0o077)
    path = tmp_path / "out.csv"
    path.write_text("old\n")
    os.chmod(path, 0o640)
    write_file(path, _text("new\n"))
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_symlink_target_is_replaced_and_the_link_kept(tmp_path):
    target = tmp_path / "data" / "real.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    write_file(link, _text("new\n"))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    assert sorted(os.listdir(target.parent)) == ["real.csv"]


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "new.csv")
    write_file(link, _text("x\n"))
    assert link.is_symlink() and (tmp_path / "new.csv").read_text() == "x\n"


def test_special_files_are_written_through(tmp_path):
    write_file(os.devnull, _text("discarded\n"))
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    write_file(link, _text("discarded\n"))
    assert link.is_symlink()


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo).read()))
    reader.start()
    write_file(fifo, _text("through the pipe\n"))
    reader.join(timeout=10)
    assert received == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_full_device_reports_an_error(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with pytest.raises(OSError):
        write_file("/dev/full", _text("x" * 100000))
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_standard_output(capsys):
    write_file("-", lambda stream: stream.write("a,b\n"))
    assert capsys.readouterr().out == "a,b\n"


def test_failure_mid_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("precious\n")

    def broken(target):
        open(target, "w").write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_file(path, broken)
    assert path.read_text() == "precious\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_a_folder_is_not_a_file(tmp_path):
    with pytest.raises(InputValueError, match="is a folder"):
        write_file(tmp_path, _text("x"))


def test_new_folder_and_umask(tmp_path, umask):
    umask(0o022)
    folder = write_folder(tmp_path / "a" / "out", {"summary.md": _text("# s\n"), "t.csv": _text("x\n1\n")})
    assert sorted(os.listdir(folder)) == [MANIFEST, "summary.md", "t.csv"]
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(folder / "t.csv").st_mode) == 0o644
    assert sorted(os.listdir(tmp_path / "a")) == ["out"]


def test_failed_new_folder_leaves_nothing(tmp_path):
    def broken(path):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_folder(tmp_path / "out", {"a.csv": _text("a"), "b.png": broken})
    assert os.listdir(tmp_path) == []


def test_foreign_folder_is_refused_untouched(tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work")
    (tmp_path / "summary.md").write_text("my own notes")
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    with pytest.raises(InputValueError, match="not empty and was not written by hdbayes"):
        write_folder(tmp_path, {"summary.md": _text("# s\n")})
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == before


def test_empty_existing_folder_is_used(tmp_path):
    write_folder(tmp_path, {"summary.md": _text("# s\n")})
    assert sorted(os.listdir(tmp_path)) == [MANIFEST, "summary.md"]


def test_second_run_replaces_the_whole_set(tmp_path, umask):
    umask(0o022)
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("run 1\n"), "old.csv": _text("1\n")})
    os.chmod(folder, 0o750)
    os.chmod(folder / "summary.md", 0o600)
    write_folder(folder, {"summary.md": _text("run 2\n"), "new.csv": _text("2\n")})
    assert sorted(os.listdir(folder)) == [MANIFEST, "new.csv", "summary.md"]  # old.csv was hdbayes's: gone
    assert (folder / "summary.md").read_text() == "run 2\n"
    assert [line for line in (folder / MANIFEST).read_text().splitlines() if not line.startswith("#")] == [
        "new.csv",
        "summary.md",
    ]
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o750
    assert stat.S_IMODE(os.stat(folder / "summary.md").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder / "new.csv").st_mode) == 0o644
    assert os.listdir(tmp_path) == ["out"]


def test_fallback_swap_without_renameat2(tmp_path, monkeypatch):
    monkeypatch.setattr(_io, "_renameat2", lambda: None)
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("run 1\n")})
    write_folder(folder, {"summary.md": _text("run 2\n")})
    assert (folder / "summary.md").read_text() == "run 2\n"
    assert os.listdir(tmp_path) == ["out"]


def test_exchange_swaps_two_folders(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    if not _io._exchange(tmp_path / "a", tmp_path / "b"):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    assert os.listdir(tmp_path / "a") == [] and (tmp_path / "b" / "x").read_text() == "a"


def test_failed_rerun_keeps_the_old_set(tmp_path):
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("run 1\n"), "t.csv": _text("1\n")})

    def full(path):
        open(path, "w").write("half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_folder(folder, {"summary.md": _text("run 2\n"), "t.csv": full})
    assert (folder / "summary.md").read_text() == "run 1\n" and (folder / "t.csv").read_text() == "1\n"
    assert os.listdir(tmp_path) == ["out"]


@pytest.mark.parametrize("kind", ["file", "folder", "fifo", "unlisted-dotfile"])
def test_entries_hdbayes_did_not_write_are_refused_untouched(tmp_path, kind):
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("run 1\n")})
    name = {"file": "notes.txt", "folder": "data", "fifo": "pipe", "unlisted-dotfile": ".summary.md.swp"}[kind]
    if kind == "folder":
        (folder / name).mkdir()
    elif kind == "fifo":
        os.mkfifo(folder / name)
    else:
        (folder / name).write_text("the user's own file")
    before = sorted(os.listdir(folder))
    for call in (check_output_folder, lambda f: write_folder(f, {"summary.md": _text("run 2\n")})):
        with pytest.raises(InputValueError, match=rf"out/{re.escape(name)} was not written by hdbayes.*move it"):
            call(folder)
    assert sorted(os.listdir(folder)) == before and (folder / "summary.md").read_text() == "run 1\n"
    assert os.listdir(tmp_path) == ["out"]


# links inside an output folder are never followed


def _victim(tmp_path):
    victim = tmp_path / "elsewhere" / "thesis.tex"
    victim.parent.mkdir()
    victim.write_text("years of work")
    return victim


@pytest.mark.parametrize("name", ["summary.md", "results.csv", "figure.png", "unlisted.csv"])
def test_a_link_inside_the_folder_is_refused(tmp_path, name):
    victim = _victim(tmp_path)
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("1"), "results.csv": _text("1"), "figure.png": _text("1")})
    if name != "unlisted.csv":
        os.unlink(folder / name)
    (folder / name).symlink_to(victim)
    files = {"summary.md": _text("2"), "results.csv": _text("2"), "figure.png": _text("2")}
    for call in (check_output_folder, lambda f: write_folder(f, files)):
        with pytest.raises(InputValueError, match=rf"out/{re.escape(name)} is a symbolic link; hdbayes does not"):
            call(folder)
    assert victim.read_text() == "years of work" and os.listdir(victim.parent) == ["thesis.tex"]
    assert (folder / name).is_symlink() and sorted(os.listdir(tmp_path)) == ["elsewhere", "out"]


def test_a_dangling_link_inside_the_folder_is_refused_and_creates_nothing(tmp_path):
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("1")})
    os.unlink(folder / "summary.md")
    (folder / "summary.md").symlink_to(tmp_path / "missing" / "deeper" / "summary.md")
    with pytest.raises(InputValueError, match=r"out/summary.md is a symbolic link"):
        write_folder(folder, {"summary.md": _text("2")})
    assert sorted(os.listdir(tmp_path)) == ["out"]


@pytest.mark.parametrize("alone", [True, False])
def test_a_manifest_link_is_refused(tmp_path, alone):
    victim = _victim(tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    if not alone:
        (folder / "summary.md").write_text("1")
    (folder / MANIFEST).symlink_to(victim)
    with pytest.raises(InputValueError, match=rf"out/{MANIFEST} is a symbolic link"):
        write_folder(folder, {"summary.md": _text("2")})
    assert victim.read_text() == "years of work"
    assert sorted(os.listdir(folder)) == sorted([MANIFEST] + ([] if alone else ["summary.md"]))


def test_the_folder_named_may_be_a_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "out"
    link.symlink_to(real)
    assert write_folder(link, {"summary.md": _text("1")}) == link
    write_folder(link, {"summary.md": _text("2")})
    assert link.is_symlink() and (real / "summary.md").read_text() == "2"
    assert sorted(os.listdir(tmp_path)) == ["out", "real"]


def test_a_dangling_folder_link_is_followed_but_its_parents_are_not_created(tmp_path):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "made")
    write_folder(link, {"summary.md": _text("1")})
    assert (tmp_path / "made" / "summary.md").read_text() == "1" and link.is_symlink()
    far = tmp_path / "far"
    far.symlink_to(tmp_path / "missing" / "deeper" / "out")
    for call in (check_output_folder, lambda f: write_folder(f, {"summary.md": _text("1")})):
        with pytest.raises(InputValueError, match="whose folder does not exist"):
            call(far)
    assert not (tmp_path / "missing").exists()


def test_a_dangling_file_link_does_not_create_folders(tmp_path):
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "missing" / "out.csv")
    with pytest.raises(InputValueError, match="whose folder does not exist"):
        write_file(link, _text("x"))
    assert os.listdir(tmp_path) == ["out.csv"]


# leftovers of killed runs


def _dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)
    return child.pid


def test_leftovers_of_dead_runs_are_removed_and_nothing_else(tmp_path):
    folder = tmp_path / "out"
    write_folder(folder, {"summary.md": _text("1")})
    dead, alive = _dead_pid(), os.getpid()
    remove = [f".out.hdbayes-{dead}-abc_1234.tmp", f".out.hdbayes-{dead}-zz99.old"]
    keep = [f".out.hdbayes-{alive}-abc12345.tmp", f".other.hdbayes-{dead}-abc12345.tmp", ".out.notes.tmp", "out.bak"]
    for name in remove + keep:
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.csv").write_text("x")
    (tmp_path / f".out.hdbayes-{dead}-link0001.tmp").symlink_to(tmp_path / "out.bak")  # not ours: kept
    keep.append(f".out.hdbayes-{dead}-link0001.tmp")
    write_folder(folder, {"summary.md": _text("2")})
    assert sorted(os.listdir(tmp_path)) == sorted(["out", *keep])
    assert (tmp_path / "out.bak" / "x.csv").read_text() == "x"


def test_an_old_set_left_by_a_killed_swap_is_restored(tmp_path):
    old = tmp_path / f".out.hdbayes-{_dead_pid()}-abcd1234.old"
    write_folder(old, {"summary.md": _text("run 1\n")})
    check_output_folder(tmp_path / "out")
    assert sorted(os.listdir(tmp_path)) == ["out"] and (tmp_path / "out" / "summary.md").read_text() == "run 1\n"


def test_leftover_temporary_files_beside_a_file_are_removed(tmp_path):
    dead = _dead_pid()
    names = [f".out.csv.hdbayes-{dead}-abcd1234.tmp", f".out.csv.hdbayes-{os.getpid()}-abcd1234.tmp", ".out.csv.x.tmp"]
    for name in names:
        (tmp_path / name).write_text("x")
    write_file(tmp_path / "out.csv", _text("y"))
    assert sorted(os.listdir(tmp_path)) == sorted(["out.csv", *names[1:]])


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write anywhere")
def test_a_folder_whose_parent_is_read_only_is_refused_before_work(tmp_path):
    (tmp_path / "locked" / "out").mkdir(parents=True)
    os.chmod(tmp_path / "locked", 0o555)
    try:
        with pytest.raises(InputValueError, match="cannot write in"):
            check_output_folder(tmp_path / "locked" / "out")
    finally:
        os.chmod(tmp_path / "locked", 0o755)


def test_file_names_must_be_plain(tmp_path):
    with pytest.raises(ValueError):
        write_folder(tmp_path / "out", {"../escape.csv": _text("x")})
    assert not (tmp_path / "escape.csv").exists()


def test_dev_stdout_redirected_to_a_file_is_written_through(tmp_path):
    """``> file`` makes /dev/stdout a link to a regular file: write into that file, do not replace it."""
    target = tmp_path / "redirected.txt"
    code = "from hdbayes._io import write_file; write_file('/dev/stdout', lambda p: open(p, 'w').write('csv\\n'))"
    with open(target, "w") as handle:
        inode = os.fstat(handle.fileno()).st_ino
        subprocess.run([sys.executable, "-c", code], stdout=handle, check=True, timeout=60)
    assert target.read_text() == "csv\n"
    assert os.stat(target).st_ino == inode
    assert os.listdir(tmp_path) == ["redirected.txt"]


# check_distinct_files: an output must not be an input or another output


def test_distinct_files_pass(tmp_path):
    train = tmp_path / "train.csv"
    train.write_text("x\n")
    check_distinct_files({"--train": train, "--test": None, "--data": "-"}, {"--out": tmp_path / "p.csv", "-o": "-"})


@pytest.mark.parametrize("spelling", ["same", "relative", "dotdot", "symlink", "hardlink"])
def test_output_that_is_an_input_is_refused(tmp_path, monkeypatch, spelling):
    data = tmp_path / "data"
    data.mkdir()
    train = data / "train.csv"
    train.write_text("precious\n")
    monkeypatch.chdir(tmp_path)
    if spelling == "same":
        out = str(train)
    elif spelling == "relative":
        out = "data/train.csv"
    elif spelling == "dotdot":
        out = "./data/../data/train.csv"
    elif spelling == "symlink":
        out = tmp_path / "link.csv"
        out.symlink_to(train)
    else:
        out = tmp_path / "hard.csv"
        os.link(train, out)
    with pytest.raises(InputValueError, match=r"^--out is the same file as --train \(.*train\.csv\); choose another"):
        check_distinct_files({"--train": str(train)}, {"--out": out})
    assert train.read_text() == "precious\n"


def test_dangling_symlink_output_to_a_missing_path_named_elsewhere(tmp_path):
    link = tmp_path / "link.png"
    link.symlink_to(tmp_path / "figure.png")
    with pytest.raises(InputValueError, match="--plot is the same file as --out"):
        check_distinct_files({}, {"--out": tmp_path / "figure.png", "--plot": link})
    with pytest.raises(InputValueError, match="--out is the same file as --test"):
        check_distinct_files({"--test": tmp_path / "figure.png"}, {"--out": link})


def test_two_outputs_the_same_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputValueError, match=r"--plot is the same file as --out \(a\.csv\)"):
        check_distinct_files({}, {"--out": "a.csv", "--plot": str(tmp_path / "a.csv")})
    (tmp_path / "a.csv").write_text("x")
    os.link(tmp_path / "a.csv", tmp_path / "b.csv")
    with pytest.raises(InputValueError, match="--plot is the same file as --out"):
        check_distinct_files({}, {"--out": "a.csv", "--plot": "b.csv"})


def test_special_outputs_may_repeat_but_not_be_inputs(tmp_path):
    check_distinct_files({}, {"--out": os.devnull, "--plot": os.devnull})
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    check_distinct_files({}, {"--out": fifo, "--plot": fifo})
    with pytest.raises(InputValueError, match="--out is the same file as --train"):
        check_distinct_files({"--train": fifo}, {"--out": fifo})


def test_a_character_device_may_be_read_and_written():
    """``--test /dev/stdin --out /dev/stdout`` on a terminal: both are the same device, nothing is replaced."""
    check_distinct_files({"--test": os.devnull}, {"--out": os.devnull})


def test_a_folder_hdbayes_cannot_build_beside_is_refused_before_work(tmp_path, monkeypatch):
    monkeypatch.setattr(_io.os, "access", lambda *args, **kwargs: False)
    with pytest.raises(InputValueError, match=r"beside it and cannot write in .*; choose another --out folder"):
        check_output_folder(tmp_path / "out")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_an_unreadable_manifest_is_refused(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / MANIFEST).write_bytes(b"\xff\xfe summary.md\n")
    (folder / "summary.md").write_text("x")
    with pytest.raises(InputValueError, match="is not a manifest written by hdbayes"):
        write_folder(folder, {"summary.md": _text("2")})
    assert (folder / "summary.md").read_text() == "x"


def test_report_write_refuses_a_planted_link(tmp_path):
    from hdbayes.experiments._report import Report

    victim = _victim(tmp_path)
    report = Report(name="x", summary="# run 1\n", tables={"results": [{"a": 1}]})
    folder = report.write(tmp_path / "out")
    os.unlink(folder / "results.csv")
    (folder / "results.csv").symlink_to(victim)
    with pytest.raises(InputValueError, match=r"out/results.csv is a symbolic link"):
        report.write(folder)
    assert victim.read_text() == "years of work" and (folder / "summary.md").read_text() == "# run 1\n"


def test_a_dangling_link_among_the_parents_creates_nothing(tmp_path):
    (tmp_path / "results").symlink_to(tmp_path / "missing" / "results")
    with pytest.raises(OSError):
        write_folder(tmp_path / "results" / "exp1", {"summary.md": _text("1")})
    with pytest.raises(OSError):
        write_file(tmp_path / "results" / "exp1.csv", _text("1"))
    assert os.listdir(tmp_path) == ["results"] and not (tmp_path / "missing").exists()


def test_output_through_a_missing_folder_that_is_an_input_is_refused(tmp_path, monkeypatch):
    """``nowhere/../train.csv`` with ``nowhere`` absent becomes train.csv once the folder is made."""
    (tmp_path / "train.csv").write_text("precious\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputValueError, match="--out is the same file as --train"):
        check_distinct_files({"--train": "train.csv"}, {"--out": "nowhere/../train.csv"})
    assert (tmp_path / "train.csv").read_text() == "precious\n" and not (tmp_path / "nowhere").exists()


def test_the_current_folder_is_refused(tmp_path, monkeypatch):
    """Swapping the current folder would leave the user's shell in a deleted folder."""
    write_folder(tmp_path / "out", {"summary.md": _text("run 1\n")})
    monkeypatch.chdir(tmp_path / "out")
    for named in (".", str(tmp_path / "out")):
        with pytest.raises(InputValueError, match="current folder"):
            write_folder(named, {"summary.md": _text("run 2\n")})
    assert (tmp_path / "out" / "summary.md").read_text() == "run 1\n"
