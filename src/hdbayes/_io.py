"""Writing output files and folders without losing or damaging the user's files.

Two helpers, used by the command line and by :meth:`hdbayes.experiments._report.Report.write`:

* :func:`write_file` writes one file. A regular file (new or existing) is written to a
  temporary file beside it and renamed over it, so that a failure mid-write leaves the
  old file intact; a symbolic link is followed and its target replaced the same way (the
  link stays a link); a special file (``/dev/null``, ``/dev/stdout``, a FIFO, a terminal)
  is written through, since it cannot be replaced; ``"-"`` means standard output.
* :func:`write_folder` writes a set of named files into a folder. hdbayes marks the
  folders it creates with a manifest file (:data:`MANIFEST`, listing the files it wrote).
  A missing folder is built beside its final place and renamed into it; an empty folder
  or one holding the manifest gets its files replaced one by one (each atomically) and
  keeps every other file; a non-empty folder without the manifest (``.``, a home
  directory, someone's project) is refused with
  :class:`~hdbayes.exceptions.InputValueError` and left untouched. Nothing is ever
  deleted except hdbayes's own temporary files.

New files and folders get the permissions the process umask allows (``0o666`` and
``0o777`` masked, like every other tool; :func:`tempfile.mkstemp` alone would make them
private); a replaced file keeps its mode.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from hdbayes.exceptions import InputValueError

__all__ = ["MANIFEST", "STDOUT", "check_distinct_files", "current_umask", "write_file", "write_folder"]

MANIFEST = ".hdbayes-output"
"""Name of the file that marks a folder as written by hdbayes (one written file name a line)."""

STDOUT = "-"
"""The output path that stands for standard output."""

_MANIFEST_HEADER = "# written by hdbayes; files listed here are replaced by the next run into this folder\n"


def current_umask() -> int:
    """The process umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # no other portable way to read it: set and restore at once
    os.umask(mask)
    return mask


def _replace_regular(path: Path, write, mode: int | None) -> None:
    """Write through ``write(temporary_path)`` and rename over ``path``; ``mode`` None: from the umask."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        write(temporary)
        os.chmod(temporary, mode if mode is not None else 0o666 & ~current_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _is_system_path(path: Path) -> bool:
    """Whether ``path`` lies under /dev or /proc (file descriptors, devices): never replaced by a rename."""
    absolute = Path(os.path.abspath(path))
    return absolute.parts[:2] in (("/", "dev"), ("/", "proc"))


def write_file(path, write, *, binary=False) -> None:
    """Write one output file without leaving a partial file or damaging what is there.

    Parameters
    ----------
    path : str or path-like
        Destination. ``"-"`` writes to standard output. A symbolic link is followed (its
        target is replaced atomically; a dangling link's target is created); a special
        file (character device, FIFO, socket) and anything under ``/dev`` or ``/proc`` (such
        as ``/dev/stdout`` redirected to a file) is opened and written through; a regular
        file is replaced atomically and keeps its permission bits; a new file gets
        ``0o666`` masked by the umask. Missing parent folders are created.
    write : callable
        ``write(target)`` writes the content to ``target``: a path (a temporary file beside
        the destination, or the special file itself) or, for ``"-"``, the standard output
        stream (text, or bytes when ``binary``).
    binary : bool, default=False
        Whether ``write`` writes bytes to standard output.

    Raises
    ------
    InputValueError
        ``path`` is an existing folder.
    OSError
        The file cannot be written (permissions, a full disk); the old file is intact.
    """
    if str(path) == STDOUT:
        stream = sys.stdout.buffer if binary else sys.stdout
        write(stream)
        stream.flush()
        return
    path = Path(path).expanduser()
    try:
        info = os.stat(path)  # follows symbolic links
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise InputValueError(f"{path} is a folder, not a file")
    if info is not None and (not stat.S_ISREG(info.st_mode) or _is_system_path(path)):
        # a device, FIFO or socket, or a link to one (/dev/stdout), or /dev/stdout or /proc/self/fd/N
        # redirected to a file by the shell: write through, the file cannot or must not be replaced
        write(os.fspath(path))
        return
    # a regular file (through its link: the link stays, its target is replaced) or a new one
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    _replace_regular(target, write, stat.S_IMODE(info.st_mode) if info is not None else None)


def check_output_file(path) -> None:
    """Refuse, before any work, an output path that cannot become a file (a folder)."""
    if str(path) == STDOUT:
        return
    path = Path(path).expanduser()
    if path.is_dir():
        raise InputValueError(f"{path} is a folder, not a file")


def _file_identity(path) -> tuple[tuple, int | None]:
    """The identity of the file ``path`` names, and its type bits (None when it does not exist).

    An existing file (links followed) is known by ``(st_dev, st_ino)``, so hard links,
    symbolic links and ``./a/../a.csv`` all meet; a missing one by its normalised path
    (:func:`os.path.realpath`, which also resolves a dangling link to its target).
    """
    path = os.path.expanduser(os.fspath(path))
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path)), None
    return ("inode", info.st_dev, info.st_ino), stat.S_IFMT(info.st_mode)


def check_distinct_files(inputs, outputs) -> None:
    """Refuse, before any work, an output that is the same file as an input or as another output.

    Parameters
    ----------
    inputs, outputs : mapping of str to path-like or None
        The option name as the user typed it (``"--train"``, ``"--out"``) to its path.
        ``None`` and ``"-"`` (standard input or output) are ignored.

    Raises
    ------
    InputValueError
        An output names the same file as an input (hard links, symbolic links and
        different spellings of one path included; a missing output is compared by its
        normalised path), or as an earlier output. Writing and reading a character device
        (``/dev/null``, a terminal) is allowed; two outputs that are the same existing
        special file (``/dev/null``, a FIFO) are allowed too, since they are written
        through rather than replaced.
    """
    seen_inputs = []
    for option, path in inputs.items():
        if path is None or str(path) == STDOUT:
            continue
        seen_inputs.append((_file_identity(path)[0], option, path))
    seen_outputs = []
    for option, path in outputs.items():
        if path is None or str(path) == STDOUT:
            continue
        identity, kind = _file_identity(path)
        for other_identity, other_option, other_path in seen_inputs:
            if identity == other_identity and kind != stat.S_IFCHR:
                raise InputValueError(
                    f"{option} is the same file as {other_option} ({other_path}); choose another output file"
                )
        if kind is None or kind == stat.S_IFREG:
            for other_identity, other_option, other_path in seen_outputs:
                if identity == other_identity:
                    raise InputValueError(
                        f"{option} is the same file as {other_option} ({other_path}); choose another output file"
                    )
            seen_outputs.append((identity, option, path))


def _read_manifest(folder: Path) -> list[str] | None:
    try:
        text = (folder / MANIFEST).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def check_output_folder(folder) -> None:
    """Refuse, before any work, a folder that :func:`write_folder` would refuse."""
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise InputValueError(f"{folder} exists and is not a folder")
    if folder.is_dir() and _read_manifest(folder) is None and any(folder.iterdir()):
        raise InputValueError(
            f"{folder} is not empty and was not written by hdbayes (it has no {MANIFEST} file); "
            "choose a new or empty folder for --out"
        )


def write_folder(folder, files) -> Path:
    """Write named files into an output folder, touching no file hdbayes did not write.

    Parameters
    ----------
    folder : str or path-like
        The output folder. Missing: built in a temporary sibling and renamed into place
        (a failed run leaves nothing). Empty or marked by :data:`MANIFEST`: each file is
        replaced atomically, other files are kept. Non-empty without the manifest: refused.
    files : dict of str to callable
        File name (no folders) to ``write(path)``, which writes the file at ``path``.

    Returns
    -------
    pathlib.Path
        The folder.

    Raises
    ------
    InputValueError
        ``folder`` is not empty and has no manifest, or is not a folder.
    """
    folder = Path(folder).expanduser()
    for name in files:
        if name == MANIFEST or Path(name).name != name or name in ("", ".", ".."):
            raise ValueError(f"output file names must be plain names, got {name!r}")
    check_output_folder(folder)
    manifest = _MANIFEST_HEADER + "".join(f"{name}\n" for name in sorted(files))
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
        try:
            os.chmod(staging, 0o777 & ~current_umask())
            file_mode = 0o666 & ~current_umask()
            for name, write in files.items():
                write(staging / name)
                os.chmod(staging / name, file_mode)
            (staging / MANIFEST).write_text(manifest, encoding="utf-8")
            os.chmod(staging / MANIFEST, file_mode)
            os.rename(staging, folder)  # fails, leaving the folder alone, if one appeared meanwhile
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return folder
    # an existing empty folder or an hdbayes output folder: mark it first, then replace file by file
    previous = _read_manifest(folder) or []
    listed = sorted(set(previous) | set(files))
    write_file(folder / MANIFEST, lambda p: Path(p).write_text(
        _MANIFEST_HEADER + "".join(f"{name}\n" for name in listed), encoding="utf-8"))  # fmt: skip
    for name, write in files.items():
        write_file(folder / name, write)
    write_file(folder / MANIFEST, lambda p: Path(p).write_text(manifest, encoding="utf-8"))
    return folder
