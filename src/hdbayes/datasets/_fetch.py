"""Locate, verify and (if needed) download the real data files.

The real data sets used by the papers are public files (mostly R serialisations
shipped by CRAN packages).  They are never part of the repository; instead the
loaders in :mod:`hdbayes.datasets.real` find them through a *data directory*,
the way scikit-learn's ``fetch_*`` functions do:

1. an explicit ``data_home`` argument, if given (then only that folder is used,
   and downloads go there);
2. otherwise the folder named by the environment variable ``HDBAYES_DATA``, if
   it is set and non-empty (it may be read-only: it is never written to);
3. otherwise (and also when the file is not found under ``HDBAYES_DATA``) the
   per-user cache ``$XDG_CACHE_HOME/hdbayes``, by default ``~/.cache/hdbayes``;
   this is where missing files are downloaded to.

Every file is checked against the sha256 digest recorded in :data:`REGISTRY`
(taken from the project's data manifest).  A file whose digest differs is never
used silently: :func:`data_path` raises :class:`ValueError` naming the file and
both digests.  Nothing is cached by file metadata: every call hashes the file
again (a file changed in place keeps its size and may keep its modification
time).  The loaders go one step further and call :func:`data_bytes`, which
reads the file once, hashes those bytes and hands the same bytes to the parser,
so what is parsed is exactly what was verified.

Downloads are atomic: the payload is streamed to a temporary file in the
destination folder, its digest is checked, and only then is it moved into place
with :func:`os.replace`.  A failed or corrupted download leaves nothing behind,
and anything that is not a regular file standing at the destination's name (a
folder, say) is reported as a :class:`DataDownloadError`, never overwritten.

Registry names may contain ``/`` (``microarray/alon.RData``): the file is then
looked for, and downloaded to, that sub-folder of each data directory.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hdbayes._io import current_umask

__all__ = [
    "REGISTRY",
    "DataDownloadError",
    "RemoteFile",
    "data_bytes",
    "data_path",
    "get_data_home",
]

#: Name of the environment variable naming a folder that holds the data files.
ENV_VAR = "HDBAYES_DATA"

_CHUNK = 1 << 20  # bytes read at a time when hashing or downloading
_DOWNLOAD_TIMEOUT = 60.0  # seconds, per blocking socket operation


@dataclass(frozen=True)
class RemoteFile:
    """A data file known to hdbayes.

    Parameters
    ----------
    sha256 : str
        Hexadecimal sha256 digest of the exact bytes expected.
    url : str
        Public URL the file is downloaded from when it is not found locally.
    description : str, default=""
        One-line description (content, origin, licence of the container).
    """

    sha256: str
    url: str
    description: str = ""


#: Commit of the datamicroarray repository (J. A. Ramey, MIT) the microarray files are pinned to.
_DATAMICROARRAY = "a95f6f68ed3debf48ee54f198435fa12aa655b16"

#: The data files, their sha256 digests and public URLs (from the data manifest).
#: URLs pin a commit of the (read-only) CRAN mirror on GitHub, so the bytes do
#: not change; the Gutenberg text is the exception (see its description).  The sixteen
#: ``microarray/*.RData`` files (``../shared/data/microarray/MANIFEST.md``) live in the
#: ``microarray`` sub-folder of a data directory.
REGISTRY: dict[str, RemoteFile] = {
    "colon.rda": RemoteFile(
        sha256="e8eaae5150bcb3c86b6a6ce96f5aa221d48bef2b875cfe724dba95aa4296bb4d",
        url="https://raw.githubusercontent.com/cran/HTLR/4aef542fd6c2f02639aa0d0f46854b83b776638e/data/colon.rda",
        description="Alon et al. (1999) colon tissue, 62 x 2000, preprocessed (R package HTLR, GPL-3)",
    ),
    "alon.RData": RemoteFile(
        sha256="76ea2ffa6226e29237bbe3f41a68ec42ca9ec3bbdbf3f19613cd254fd5fcc1c7",
        url="https://raw.githubusercontent.com/ramhiser/datamicroarray/"
        "a95f6f68ed3debf48ee54f198435fa12aa655b16/data/alon.RData",
        description="Alon et al. (1999) colon tissue, 62 x 2000 raw intensities (datamicroarray, MIT)",
    ),
    "SRBCT.rda": RemoteFile(
        sha256="6d67227b09da8bf0654078fd5b14c4add06e7006c15f5d82932eb256d85fbd44",
        url="https://raw.githubusercontent.com/cran/plsgenomics/"
        "8c770daf139b94f6dd073529a53863d6db902a98/data/SRBCT.rda",
        description="Khan et al. (2001) small round blue cell tumours, 83 x 2308 (R package plsgenomics, GPL >= 2)",
    ),
    "lymphoma.RData": RemoteFile(
        sha256="b3d1b4182864683adc9b88898bb6e101f681d3d991d061f3ac7710691618d868",
        url="https://raw.githubusercontent.com/cran/BCBCSF/"
        "050f57d809e36b679df4ab422280bb6b0973b083/data/lymphoma.RData",
        description="Alizadeh et al. (2000) lymphoma, 62 x 4026, preprocessed as in "
        "Dettling (2004) (R package BCBCSF, GPL >= 2)",
    ),
    "prostate.RData": RemoteFile(
        sha256="834b9a449dd122adce672e95185510bd2810b3d878b82dcf2a2b3a5d8cd38a2d",
        url="https://raw.githubusercontent.com/cran/spls/e3a2ab62ead4c84f78baf81bd3ecda4e70316961/data/prostate.RData",
        description="Singh et al. (2002) prostate, 102 x 6033, preprocessed as in "
        "Dettling (2004) (R package spls, GPL >= 2)",
    ),
    "golub.RData": RemoteFile(
        sha256="594f5507597fb2352d210c803a88a218fbf6d1f2705372029e5738815216747b",
        url="https://raw.githubusercontent.com/ramhiser/datamicroarray/"
        "a95f6f68ed3debf48ee54f198435fa12aa655b16/data/golub.RData",
        description="Golub et al. (1999) leukaemia, 72 x 7129 raw Affymetrix values (datamicroarray, MIT)",
    ),
    **{
        f"microarray/{stem}.RData": RemoteFile(
            sha256=digest,
            url=f"https://raw.githubusercontent.com/ramhiser/datamicroarray/{_DATAMICROARRAY}/data/{stem}.RData",
            description=f"{what} (datamicroarray, MIT)",
        )
        for stem, digest, what in [
            (
                "alon",
                "76ea2ffa6226e29237bbe3f41a68ec42ca9ec3bbdbf3f19613cd254fd5fcc1c7",
                "Alon et al. (1999) colon tissue, 62 x 2000 raw intensities",
            ),
            (
                "christensen",
                "9cdb95961f9529014db156af5cba41c8da0d25e93318ceca69ae696caaacb532",
                "Christensen et al. (2009) methylation of normal tissues, 217 x 1413 beta values",
            ),
            (
                "golub",
                "594f5507597fb2352d210c803a88a218fbf6d1f2705372029e5738815216747b",
                "Golub et al. (1999) leukaemia, 72 x 7129 raw Affymetrix values",
            ),
            (
                "gordon",
                "09173f9c7b7d30bbbeca08b945755a03ad7601f4560bb185d47e3e441fc096f3",
                "Gordon et al. (2002) mesothelioma vs adenocarcinoma, 181 x 12533 raw Affymetrix values",
            ),
            (
                "gravier",
                "6e84756200a8cc3032d18c7d60a60cf79b4236d5e19ac51413d15faf434d68ee",
                "Gravier et al. (2010) breast cancer metastasis, 168 x 2905 log ratios",
            ),
            (
                "khan",
                "06ecda9812126eb72e1a254b07b90aa8eea4cef9639d8511082c1e15bfdee802",
                "Khan et al. (2001) small round blue cell tumours, 63 x 2308 log ratios",
            ),
            (
                "shipp",
                "2f7b5fcb6dd874a67f7b463a5fc17d7e6b2ba69bd30277f8ec953b6b0b681e65",
                "Shipp et al. (2002) DLBCL vs FL, 77 x 7129 raw Affymetrix values",
            ),
            (
                "singh",
                "5197cdae41c6e25b9a59cfda23fd9434c25b7406ed1942c5ca074e140e5c2cff",
                "Singh et al. (2002) prostate, 102 x 12600 raw Affymetrix values",
            ),
            (
                "sorlie",
                "bdba4227e67866862c6055528e9520fd7d082e07abf1f97215f3227d80c93ef4",
                "Sorlie et al. (2001) breast tumour subtypes, 85 x 456 log ratios",
            ),
            (
                "su",
                "b265bcdc8019e6216d3f9e700650b8fccc4a71c50b8e0bbf9aae55d9bc7cdcb7",
                "Su et al. (2002) four tumour types, 102 x 5565 log-scale values",
            ),
            (
                "borovecki",
                "717835c9be3fb16b4b2bb0f6e82816fde6c3ad15111bda591651d8e6163c9fff",
                "Borovecki et al. (2005) Huntington's disease vs control, blood, 31 x 22283 raw intensities",
            ),
            (
                "chowdary",
                "2613b06506074469d1aec9e8fbe313fa65aa75ba6720ad925c5edbc2f690d983",
                "Chowdary et al. (2006) breast vs colon tumours, 104 x 22283 raw intensities",
            ),
            (
                "nakayama",
                "f2fc92aeb9c1d31d73096299f95f5ceba4a99598eb04cc5b46d0fad2d4a7477b",
                "Nakayama et al. (2007) ten soft-tissue tumour types, 105 x 22283 raw intensities",
            ),
            (
                "pomeroy",
                "858568f28dcf4453db9036c35eb186ac1ab1f7a1afa4452996ccdda551d3939f",
                "Pomeroy et al. (2002) medulloblastoma outcome, 60 x 7128 per-array standardised values",
            ),
            (
                "subramanian",
                "82f551738e3e3dbf6d92d1b757dc2fdfd00fcbd29362f35354d12c42ee5dc2bd",
                "Subramanian et al. (2005) p53 status of NCI-60 cell lines, 50 x 10100 log-scale values",
            ),
            (
                "west",
                "2fad08fcf9f481f03235f33146046193f3e7eaf08887badc4b28542890d3e3bd",
                "West et al. (2001) breast tumour status, 49 x 7129 per-array standardised values",
            ),
        ]
    },
    "alice-gutenberg-11.txt": RemoteFile(
        sha256="d4bd6f030cd990785f6427ff7b6a6e4bdef2594fe19ee09dc78266ac6bf0e2df",
        url="https://www.gutenberg.org/cache/epub/11/pg11.txt",
        description="Lewis Carroll, Alice's Adventures in Wonderland, Project "
        "Gutenberg eBook #11 (public domain). The live Gutenberg file may have a "
        "different header, hence a different sha256: if the download fails its "
        "checksum, place the original copy in a folder named by HDBAYES_DATA",
    ),
}


class DataDownloadError(OSError, RuntimeError):
    """A data file could not be downloaded, or the download was corrupt.

    Subclasses both :class:`OSError` (network and file-system failures) and
    :class:`RuntimeError`, so either can be caught.
    """


# ---------------------------------------------------------------------------
# data directories


def _user_cache_dir() -> Path:
    """Per-user cache folder, ``$XDG_CACHE_HOME/hdbayes`` or ``~/.cache/hdbayes``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says relative paths are invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "hdbayes"


def _env_data_dir() -> Path | None:
    value = os.environ.get(ENV_VAR, "")
    return Path(value).expanduser() if value else None


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Return the folder data files are read from first.

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit folder.  Returned as is (with ``~`` expanded) when given.

    Returns
    -------
    pathlib.Path
        ``data_home`` if given; else the folder named by the environment
        variable ``HDBAYES_DATA`` if it is set and non-empty; else the per-user
        cache ``$XDG_CACHE_HOME/hdbayes`` (``~/.cache/hdbayes`` by default).
        The folder is not created.

    See Also
    --------
    data_path : Locate (and download) one file.
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    env = _env_data_dir()
    return env if env is not None else _user_cache_dir()


def _search_dirs(data_home) -> list[Path]:
    if data_home is not None:
        return [Path(data_home).expanduser()]
    dirs = []
    env = _env_data_dir()
    if env is not None:
        dirs.append(env)
    cache = _user_cache_dir()
    if cache not in dirs:
        dirs.append(cache)
    return dirs


# ---------------------------------------------------------------------------
# checksums


def _check_digest(data: bytes, path: Path, name: str, expected: str) -> None:
    """Raise ValueError unless ``data`` (the bytes read from ``path``) has the sha256 ``expected``."""
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected.lower():
        raise ValueError(
            f"checksum mismatch for data file {name!r} at {path}: "
            f"expected sha256 {expected}, got {actual}. The file is corrupt or a "
            f"different version; delete or replace it (a fresh copy can be downloaded "
            f"from {REGISTRY[name].url if name in REGISTRY else 'its source'})."
        )


# ---------------------------------------------------------------------------
# download


def _not_a_file(name: str, entry: RemoteFile, target: Path, hint: str) -> DataDownloadError:
    return DataDownloadError(
        f"could not download {name} from {entry.url}: {target} exists and is not a regular file "
        f"(a folder?); remove or rename it{hint}"
    )


def _download(name: str, entry: RemoteFile, dest_dir: Path) -> tuple[Path, bytes]:
    """Download ``entry.url`` to ``dest_dir / name`` atomically, verify it, return its path and bytes."""
    hint = f"; set {ENV_VAR} to a folder holding it"
    target = dest_dir / name
    folder = target.parent
    if os.path.lexists(target) and not target.is_file():
        raise _not_a_file(name, entry, target, hint)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise DataDownloadError(
            f"could not download {name} from {entry.url}: cannot write to {folder} ({exc}){hint}"
        ) from exc
    tmp = Path(tmp_name)
    try:
        chunks = []
        try:
            with os.fdopen(fd, "wb") as out:
                with urllib.request.urlopen(entry.url, timeout=_DOWNLOAD_TIMEOUT) as resp:
                    while chunk := resp.read(_CHUNK):
                        chunks.append(chunk)
                        out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
        except Exception as exc:  # network, HTTP, disk: all reported the same way
            raise DataDownloadError(
                f"could not download {name} from {entry.url} ({type(exc).__name__}: {exc}){hint}"
            ) from exc
        data = b"".join(chunks)
        actual = hashlib.sha256(data).hexdigest()
        if actual != entry.sha256.lower():
            raise DataDownloadError(
                f"could not download {name} from {entry.url}: the downloaded file has "
                f"sha256 {actual}, expected {entry.sha256}{hint}"
            )
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp's 0o600 would hide the data from other users
        try:
            os.replace(tmp, target)
        except OSError as exc:  # e.g. a folder appeared at the target while downloading
            if os.path.lexists(target) and not target.is_file():
                raise _not_a_file(name, entry, target, hint) from exc
            raise DataDownloadError(
                f"could not download {name} from {entry.url}: cannot move it to {target} ({exc}){hint}"
            ) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target, data


# ---------------------------------------------------------------------------
# public entry points


def data_bytes(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    download: bool = True,
) -> tuple[Path, bytes]:
    """Return the path and the verified bytes of a data file.

    The file is read once; the sha256 of exactly those bytes is checked, and
    the same bytes are returned, so a caller that parses them parses what was
    verified (even if the file changes on disk meanwhile).  The search order,
    the download and the errors are those of :func:`data_path`.

    Parameters
    ----------
    name : str
        File name, a key of :data:`REGISTRY`.
    data_home : str or path-like, optional
        See :func:`data_path`.
    download : bool, default=True
        See :func:`data_path`.

    Returns
    -------
    path : pathlib.Path
        Where the bytes were read from (or downloaded to).
    data : bytes
        The file's content; its sha256 matches the registry.

    Raises
    ------
    ValueError, FileNotFoundError, DataDownloadError
        As :func:`data_path`.
    """
    try:
        entry = REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(f"unknown data file {name!r}; known files: {known}") from None

    dirs = _search_dirs(data_home)
    for folder in dirs:
        candidate = folder / name
        if candidate.is_file():
            data = candidate.read_bytes()
            _check_digest(data, candidate, name, entry.sha256)
            return candidate, data

    searched = ", ".join(str(d) for d in dirs)
    if not download:
        raise FileNotFoundError(
            f"data file {name!r} not found (searched: {searched}) and download=False. "
            f"Set {ENV_VAR} to a folder holding it, or download it from {entry.url}"
        )
    dest = dirs[0] if data_home is not None else _user_cache_dir()
    return _download(name, entry, dest)


def data_path(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    download: bool = True,
) -> Path:
    """Return the path of a verified local copy of a data file.

    Parameters
    ----------
    name : str
        File name, a key of :data:`REGISTRY` (for example ``"colon.rda"`` or
        ``"microarray/alon.RData"``).
    data_home : str or path-like, optional
        Folder to use instead of the default search path.  When given, only
        this folder is searched, and a missing file is downloaded into it.
        When omitted, the folder named by ``HDBAYES_DATA`` (if set) is searched
        first, then the per-user cache ``$XDG_CACHE_HOME/hdbayes``
        (``~/.cache/hdbayes``), into which missing files are downloaded.
    download : bool, default=True
        Whether to download the file from its public URL when it is not found.

    Returns
    -------
    pathlib.Path
        Path of the file; its sha256 matched the registry when this function
        read it (every call hashes it again).  To parse the verified content
        without reading the file a second time, use :func:`data_bytes`.

    Raises
    ------
    ValueError
        If ``name`` is unknown, or a local copy exists whose sha256 differs
        from the registry (the message names the file and both digests).
    FileNotFoundError
        If the file is not found and ``download`` is False.
    DataDownloadError
        If the download fails, the downloaded bytes have the wrong sha256, or
        something other than a regular file (a folder) stands at the
        destination (subclass of both :class:`OSError` and
        :class:`RuntimeError`).  No partial file is left behind.

    Examples
    --------
    >>> from hdbayes.datasets import data_path
    >>> data_path("colon.rda", download=False)  # doctest: +SKIP
    PosixPath('/home/me/.cache/hdbayes/colon.rda')
    """
    return data_bytes(name, data_home=data_home, download=download)[0]
