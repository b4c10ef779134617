"""Writing output files and folders without losing or damaging the user's files.

Three helpers, used by the command line and by :meth:`hdbayes.experiments._report.Report.write`:

* :func:`check_distinct_files` refuses, before any work, an output that is the same file as
  an input or as another output (so that ``--out`` can never replace ``--train``).
* :func:`write_file` writes one file. A regular file (new or existing) is written to a
  temporary file beside it and renamed over it, so that a failure mid-write leaves the
  old file intact; a symbolic link the user named is followed and its target replaced the
  same way (the link stays a link); a special file (``/dev/null``, ``/dev/stdout``, a
  FIFO, a terminal) is written through, since it cannot be replaced; ``"-"`` means
  standard output.
* :func:`write_folder` writes a complete set of named files as one output folder. hdbayes
  marks the folders it writes with a manifest file (:data:`MANIFEST`, listing the files it
  wrote). The whole new set (files and manifest) is built in a private staging folder
  beside the target and swapped in at once (``renameat2(RENAME_EXCHANGE)`` on Linux, else
  two renames), so a reader always finds one run's complete set, the old one or the new
  one, never a mix, even if the run is killed or the disk fills; the old set is then
  deleted. A folder is accepted only when it is missing, empty, or holds nothing but
  regular files listed in its manifest: a folder without the manifest (``.``, a home
  directory, someone's project), or with any entry hdbayes did not write (a user's file,
  a subfolder, a symbolic link, the manifest itself a link), is refused with
  :class:`~hdbayes.exceptions.InputValueError` and left untouched. Links inside an output
  folder are never followed; the folder path the user named may itself be a link (its
  target is written, but a missing parent of the target is never created).

Temporary files and staging folders are named ``.NAME.hdbayes-PID-RANDOM.tmp`` after the
output ``NAME`` and the process that made them (a set being swapped out by the two-rename
fallback: ``.NAME.hdbayes-PID-RANDOM.old``). Each run removes the leftovers of its own
output name whose process has died (a killed run's), and restores a ``.old`` set whose
target went missing; nothing else is ever removed.

New files and folders get the permissions the process umask allows (``0o666`` and
``0o777`` masked, like every other tool; :func:`tempfile.mkstemp` alone would make them
private); a replaced file or folder keeps its permission bits.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from hdbayes.exceptions import InputValueError

__all__ = [
    "MANIFEST",
    "STDOUT",
    "check_distinct_files",
    "check_output_file",
    "check_output_folder",
    "current_umask",
    "write_file",
    "write_folder",
]

MANIFEST = ".hdbayes-output"
"""Name of the file that marks a folder as written by hdbayes (one written file name a line)."""

STDOUT = "-"
"""The output path that stands for standard output."""

_MANIFEST_HEADER = "# written by hdbayes; the next run into this folder replaces the whole folder\n"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


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


# ---------------------------------------------------------------------------------------------------------------
# temporary names and the leftovers of killed runs


def _temporary_prefix(name: str) -> str:
    """The start of a temporary name for the output ``name``, carrying this process's id."""
    return f".{name}.hdbayes-{os.getpid()}-"


def _leftover_match(entry_name: str, name: str):
    """Match ``entry_name`` against the temporary names of output ``name``: groups (pid, kind)."""
    return re.fullmatch(rf"\.{re.escape(name)}\.hdbayes-([0-9]+)-[a-z0-9_]+\.(tmp|old)", entry_name)


def _process_is_gone(pid: int) -> bool:
    """Whether no process ``pid`` exists (a process of another user counts as alive; on Windows, all do)."""
    if pid <= 0 or os.name != "posix":  # Windows' os.kill(pid, 0) would terminate the process
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # PermissionError: it exists, it is someone else's; no such process id
        return False
    return False


def _dead_leftovers(parent: Path, name: str) -> list[tuple[Path, str, os.stat_result]]:
    """The temporary files and folders of output ``name`` in ``parent`` whose owning process is gone."""
    found = []
    try:
        entries = sorted(os.listdir(parent))
    except OSError:
        return found
    for entry in entries:
        match = _leftover_match(entry, name)
        if match is None or not _process_is_gone(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            found.append((parent / entry, match.group(2), os.lstat(parent / entry)))
    return found


def _remove_file_leftovers(parent: Path, name: str) -> None:
    """Remove killed runs' ``.NAME.hdbayes-PID-RANDOM.tmp`` files beside the output file ``name``."""
    for path, kind, info in _dead_leftovers(parent, name):
        if kind == "tmp" and stat.S_ISREG(info.st_mode):
            with contextlib.suppress(OSError):
                os.unlink(path)


def _recover_folder(target: Path) -> None:
    """Restore a killed swap's old set if ``target`` is missing, then remove killed runs' staging folders.

    Only folders (never links or files) named like this module's staging folders for
    ``target``, whose owning process is gone, are touched; :func:`shutil.rmtree` does not
    follow links.
    """
    folders = [
        (path, kind) for path, kind, info in _dead_leftovers(target.parent, target.name) if stat.S_ISDIR(info.st_mode)
    ]
    if not os.path.lexists(target):
        for path, kind in folders:
            if kind == "old":  # killed between the two renames of the fallback swap: the old complete set
                with contextlib.suppress(OSError):
                    os.rename(path, target)
                    folders.remove((path, kind))
                break
    for path, _ in folders:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------------
# one output file


def _replace_regular(path: Path, write, mode: int | None) -> None:
    """Write through ``write(temporary_path)`` and rename over ``path``; ``mode`` None: from the umask."""
    _remove_file_leftovers(path.parent, path.name)
    handle, temporary = tempfile.mkstemp(prefix=_temporary_prefix(path.name), suffix=".tmp", dir=path.parent)
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
        target is replaced atomically; a dangling link's target is created, but not a
        missing folder of it); a special file (character device, FIFO, socket) and
        anything under ``/dev`` or ``/proc`` (such as ``/dev/stdout`` redirected to a
        file) is opened and written through; a regular file is replaced atomically and
        keeps its permission bits; a new file gets ``0o666`` masked by the umask. Missing
        parent folders of a path that is not a link are created.
    write : callable
        ``write(target)`` writes the content to ``target``: a path (a temporary file beside
        the destination, or the special file itself) or, for ``"-"``, the standard output
        stream (text, or bytes when ``binary``).
    binary : bool, default=False
        Whether ``write`` writes bytes to standard output.

    Raises
    ------
    InputValueError
        ``path`` is an existing folder, or a link whose target's folder does not exist.
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
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if not target.parent.is_dir():
            raise InputValueError(
                f"{path} is a symbolic link to {target}, whose folder does not exist; hdbayes does not create it"
            )
    else:
        target = path
        target.parent.mkdir(parents=True, exist_ok=True)
    _replace_regular(target, write, stat.S_IMODE(info.st_mode) if info is not None else None)


def check_output_file(path) -> None:
    """Refuse, before any work, an output path that cannot become a file (a folder).

    Parameters
    ----------
    path : str or path-like
        The output file as the user named it (``"-"``: standard output).

    Raises
    ------
    InputValueError
        ``path`` is a folder.
    """
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
        # missing as written (``nowhere/../train.csv`` with ``nowhere`` absent, a dangling link): the file it
        # would become once the missing folders are made is its normalised path, which may exist
        resolved = os.path.realpath(path)
        try:
            info = os.stat(resolved)
        except (OSError, ValueError):
            return ("path", resolved), None
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


# ---------------------------------------------------------------------------------------------------------------
# output folders

_LINK = "is a symbolic link; hdbayes does not write through links inside an output folder"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _resolve_folder(folder) -> tuple[Path, Path]:
    """The folder as the user named it, and the folder to write (a link the user named is followed).

    Raises
    ------
    InputValueError
        ``folder`` is a symbolic link whose target's parent folder does not exist (hdbayes
        never creates it).
    """
    named = Path(folder).expanduser()
    target = Path(os.path.realpath(named))
    if named.is_symlink() and not target.parent.is_dir():
        raise InputValueError(
            f"{named} is a symbolic link to {target}, whose folder does not exist; hdbayes does not create it"
        )
    return named, target


def _read_manifest(path: Path, shown: Path) -> set[str]:
    """The file names listed in the manifest ``path`` (opened without following a link)."""
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    with open(descriptor, "rb") as handle:
        content = handle.read()
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise InputValueError(
            f"{shown} is not a manifest written by hdbayes; choose a new or empty folder for --out"
        ) from None
    return {line for line in text.splitlines() if line and not line.startswith("#")}


def _inspect_folder(named: Path, target: Path) -> tuple[os.stat_result | None, dict[str, os.stat_result]]:
    """Check an existing output folder entry by entry, following no link inside it.

    Returns
    -------
    info : os.stat_result or None
        The folder's status (None: it does not exist).
    entries : dict of str to os.stat_result
        The ``lstat`` of every entry (all regular files written by hdbayes, or none).
    """
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None, {}
    if not stat.S_ISDIR(info.st_mode):
        raise InputValueError(f"{named} exists and is not a folder")
    names = sorted(os.listdir(target))
    if not names:
        _refuse_current_folder(named, target)
        return info, {}
    try:
        manifest = os.lstat(target / MANIFEST)
    except FileNotFoundError:
        manifest = None
    if manifest is not None and stat.S_ISLNK(manifest.st_mode):
        raise InputValueError(f"{named / MANIFEST} {_LINK}; move it or choose another --out folder")
    if manifest is None or not stat.S_ISREG(manifest.st_mode):
        raise InputValueError(
            f"{named} is not empty and was not written by hdbayes (it has no {MANIFEST} file); "
            "choose a new or empty folder for --out"
        )
    listed = _read_manifest(target / MANIFEST, named / MANIFEST)
    entries = {}
    for name in names:
        entry = os.lstat(target / name)
        if stat.S_ISLNK(entry.st_mode):
            raise InputValueError(f"{named / name} {_LINK}; move it or choose another --out folder")
        if name != MANIFEST and not (stat.S_ISREG(entry.st_mode) and name in listed):
            raise InputValueError(
                f"{named / name} was not written by hdbayes (it is not a file listed in {MANIFEST}), and hdbayes "
                "replaces the whole folder; move it or choose another --out folder"
            )
        entries[name] = entry
    _refuse_current_folder(named, target)
    return info, entries


def _refuse_current_folder(named: Path, target: Path) -> None:
    """Refuse the current folder or one containing it: the swap would leave the user's shell in a deleted folder."""
    try:
        working = Path.cwd().resolve()
    except OSError:
        return
    if working == target.resolve() or target.resolve() in working.parents:
        raise InputValueError(
            f"{named} is the current folder or contains it, and hdbayes replaces the whole output folder; "
            "choose another --out folder"
        )


def check_output_folder(folder) -> None:
    """Refuse, before any work, a folder that :func:`write_folder` would refuse.

    Also restores the old set of a run killed in the middle of a swap and removes the
    staging folders that killed runs left beside ``folder`` (see :func:`write_folder`).

    Parameters
    ----------
    folder : str or path-like
        The output folder as the user named it.

    Raises
    ------
    InputValueError
        ``folder`` is not a folder, is not empty and was not written by hdbayes, holds an
        entry hdbayes did not write or a symbolic link, is the current folder or one of its
        parents (it would be swapped away under the user's shell), is a link whose target's parent
        is missing, or sits in a folder hdbayes cannot write in (the new set is built
        beside it).
    """
    named, target = _resolve_folder(folder)
    _recover_folder(target)
    _inspect_folder(named, target)
    parent = target.parent
    if parent.is_dir() and not os.access(
        parent, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids
    ):
        raise InputValueError(
            f"hdbayes builds the output folder {named} beside it and cannot write in {parent}; "
            "choose another --out folder"
        )


def _renameat2():
    """Linux's ``renameat2`` through ctypes (glibc >= 2.28), or None where it is missing."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically; False where the system or file system cannot."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(first), None, os.fspath(second))


def _swap_in(staging: Path, target: Path, exists: bool) -> Path | None:
    """Put the complete set ``staging`` at ``target`` in one step; return where the old set went (or None)."""
    if not exists:
        os.rename(staging, target)  # fails, leaving both alone, if a non-empty folder appeared meanwhile
        return None
    if _exchange(staging, target):
        return staging  # the staging name now holds the old set
    old = staging.with_name(staging.name[: -len(".tmp")] + ".old")
    os.rename(target, old)  # killed from here to the next rename: the next run restores ``old``
    try:
        os.rename(staging, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.rename(old, target)
        raise
    return old


def write_folder(folder, files) -> Path:
    """Write a complete set of named files as one output folder, touching no file hdbayes did not write.

    Parameters
    ----------
    folder : str or path-like
        The output folder: missing, empty, or written by hdbayes before (marked by
        :data:`MANIFEST` and holding only the regular files it lists). The new set (the
        files and the manifest) is built in a private staging folder beside it,
        ``.NAME.hdbayes-PID-RANDOM.tmp``, and swapped in at once (atomically with
        ``renameat2(RENAME_EXCHANGE)`` on Linux; elsewhere the old folder is renamed to
        ``.NAME.hdbayes-PID-RANDOM.old`` and the new one into place, and a run killed in
        between leaves the old set there for the next run to restore); the old set is then
        deleted. A reader therefore finds one run's complete set, never a mix, and a failed
        or killed run leaves the old set as it was. The folder keeps its permission bits and
        each replaced file its mode; a new folder or file gets the umask's. ``folder`` may
        be a symbolic link (its target is written, a missing parent of the target is not
        created); links inside the folder are never followed.
    files : dict of str to callable
        File name (no folders) to ``write(path)``, which writes the file at ``path``.

    Returns
    -------
    pathlib.Path
        The folder, as named.

    Raises
    ------
    InputValueError
        See :func:`check_output_folder`; the folder is left untouched.
    OSError
        The set cannot be written (a full disk, permissions); the old set is intact and no
        temporary file remains.
    """
    for name in files:
        if name == MANIFEST or Path(name).name != name or name in ("", ".", "..") or "/" in name or "\0" in name:
            raise ValueError(f"output file names must be plain names, got {name!r}")
    named, target = _resolve_folder(folder)
    if not named.is_symlink() and not os.path.lexists(target):
        named.parent.mkdir(parents=True, exist_ok=True)  # through the named path: never a link target's parents
        named, target = _resolve_folder(folder)
    _recover_folder(target)
    _inspect_folder(named, target)
    umask = current_umask()
    staging = Path(tempfile.mkdtemp(prefix=_temporary_prefix(target.name), suffix=".tmp", dir=target.parent))
    old = None
    try:
        for name, write in files.items():
            write(staging / name)
        manifest = _MANIFEST_HEADER + "".join(f"{name}\n" for name in sorted(files))
        descriptor = os.open(staging / MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
        with open(descriptor, "w", encoding="utf-8") as handle:
            handle.write(manifest)
        written = sorted(os.listdir(staging))
        if written != sorted([*files, MANIFEST]):
            raise RuntimeError(f"the writers of {named} wrote {written}, not {sorted(files)}")
        info, entries = _inspect_folder(named, target)  # again: the user may have changed it meanwhile
        for name in written:
            if not stat.S_ISREG(os.lstat(staging / name).st_mode):
                raise RuntimeError(f"the writer of {named / name} did not write a regular file")
            previous = entries.get(name)
            os.chmod(staging / name, stat.S_IMODE(previous.st_mode) if previous is not None else 0o666 & ~umask)
        if info is not None:
            if os.lstat(staging).st_gid != info.st_gid:
                with contextlib.suppress(OSError):
                    os.chown(staging, -1, info.st_gid)
            os.chmod(staging, stat.S_IMODE(info.st_mode))
        else:
            os.chmod(staging, 0o777 & ~umask)
        old = _swap_in(staging, target, info is not None)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return named
