"""Sixteen public microarray data sets for a benchmark across many expression data sets.

The files come from the R package *datamicroarray* (J. A. Ramey, MIT licence), pinned to one commit. Each
holds one R list named after the file with ``x`` (cases x features) and ``y`` (a factor of class labels).
:func:`load_microarray` finds a file in the ``microarray`` sub-folder of the data directory
(``$HDBAYES_DATA/microarray/NAME.RData``, then the per-user cache), checks its sha256, downloads it when it
is missing, and applies the transform a practitioner would apply before a Gaussian or linear model.

Data sets
---------
=============  ===========  ==========================================================  ===========
name           n x p        classes (cases)                                             transform
=============  ===========  ==========================================================  ===========
alon           62 x 2000    n (22), t (40)                                              log2floor1
borovecki      31 x 22283   control (14), symptomatic (17)                              log2floor1
chowdary       104 x 22283  breast (62), colon (42)                                     log2floor1
christensen    217 x 1413   other (113), blood (85), placenta (19)                      none
golub          72 x 7129    ALL (47), AML (25)                                          log2floor20
gordon         181 x 12533  adenocarcinoma (150), mesothelioma (31)                     log2floor20
gravier        168 x 2905   good (111), poor (57)                                       none
khan           63 x 2308    BL (8), EWS (23), NB (12), RMS (20)                         none
nakayama       105 x 22283  dedifferentiated liposarcoma (15), fibrosarcoma (4),
                            leiomyosarcoma (6), lipoma (3),
                            malignant fibrous histiocytoma (21),
                            malignant peripheral nerve sheath tumor (3),
                            myxofibrosarcoma (15), myxoid liposarcoma (19),
                            synovial sarcoma (16),
                            well-differentiated liposarcoma (3)                         log2floor1
pomeroy        60 x 7128    died (21), survived (39)                                    none
shipp          77 x 7129    DLBCL (58), FL (19)                                         log2floor20
singh          102 x 12600  Normal (50), Tumor (52)                                     log2floor20
sorlie         85 x 456     1 (14), 2 (11), 3 (13), 4 (15), 5 (32)                      none
su             102 x 5565   1 (25), 2 (26), 3 (28), 4 (23)                              none
subramanian    50 x 10100   MUT (33), WT (17)                                           none
west           49 x 7129    negative (25), positive (24)                                none
=============  ===========  ==========================================================  ===========

Transforms: ``log2floor1`` is log2(max(x, 1)) (raw non-negative intensities), ``log2floor20`` is
log2(max(x, 20)) (Affymetrix MAS4 average differences, which can be negative), ``none`` leaves the values
as they are (already on a log, ratio or beta scale; pomeroy and west come standardised per array). Flooring
makes some genes constant within a training fold (hundreds to thousands on golub, gordon, shipp and singh).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hdbayes.exceptions import InputTypeError, InputValueError

from ._common import data_bunch
from ._fetch import data_bytes
from .real import _as_matrix, _get, _parsed, _read_r_file

if TYPE_CHECKING:
    from sklearn.utils import Bunch

__all__ = ["MICROARRAY_DATASETS", "load_microarray"]


@dataclass(frozen=True)
class _Info:
    """What the data manifest says about one file."""

    shape: tuple[int, int]
    classes: tuple[tuple[str, int], ...]  # (label, cases) in the factor's level order
    transform: str
    content: str


_INFO: dict[str, _Info] = {
    "alon": _Info((62, 2000), (("n", 22), ("t", 40)), "log2floor1",
                  "Alon et al. 1999, colon tumour (t) vs normal (n), Affymetrix Hum6000 raw intensities, the 2000 "
                  "genes of highest minimal intensity"),
    "christensen": _Info((217, 1413), (("other", 113), ("blood", 85), ("placenta", 19)), "none",
                         "Christensen et al. 2009, DNA methylation (beta values, 1413 CpG sites) of normal tissues"),
    "golub": _Info((72, 7129), (("ALL", 47), ("AML", 25)), "log2floor20",
                   "Golub et al. 1999, ALL vs AML leukaemia, Affymetrix Hu6800 raw MAS4 average differences"),
    "gordon": _Info((181, 12533), (("adenocarcinoma", 150), ("mesothelioma", 31)), "log2floor20",
                    "Gordon et al. 2002, mesothelioma vs lung adenocarcinoma, Affymetrix U95A raw values"),
    "gravier": _Info((168, 2905), (("good", 111), ("poor", 57)), "none",
                     "Gravier et al. 2010, breast cancer, metastasis within 5 years (poor) or not (good), "
                     "log ratios of 2905 genes"),
    "khan": _Info((63, 2308), (("BL", 8), ("EWS", 23), ("NB", 12), ("RMS", 20)), "none",
                  "Khan et al. 2001, small round blue cell tumours, cDNA log ratios (the 63 training cases)"),
    "shipp": _Info((77, 7129), (("DLBCL", 58), ("FL", 19)), "log2floor20",
                   "Shipp et al. 2002, diffuse large B-cell vs follicular lymphoma, Affymetrix Hu6800 raw MAS4"),
    "singh": _Info((102, 12600), (("Normal", 50), ("Tumor", 52)), "log2floor20",
                   "Singh et al. 2002, prostate tumour vs normal, Affymetrix U95Av2 raw MAS4"),
    "sorlie": _Info((85, 456), (("1", 14), ("2", 11), ("3", 13), ("4", 15), ("5", 32)), "none",
                    "Sorlie et al. 2001, breast tumour subtypes, log ratios of 456 genes"),
    "su": _Info((102, 5565), (("1", 25), ("2", 26), ("3", 28), ("4", 23)), "none",
                "Su et al. 2002, four tumour types, log scale, 5565 genes"),
    "borovecki": _Info((31, 22283), (("control", 14), ("symptomatic", 17)), "log2floor1",
                       "Borovecki et al. 2005, Huntington's disease (symptomatic) vs control, blood, Affymetrix U133A "
                       "raw intensities"),
    "chowdary": _Info((104, 22283), (("breast", 62), ("colon", 42)), "log2floor1",
                      "Chowdary et al. 2006, breast vs colon tumours, Affymetrix U133A raw intensities"),
    "nakayama": _Info((105, 22283), (("dedifferentiated liposarcoma", 15), ("fibrosarcoma", 4),
                                     ("leiomyosarcoma", 6), ("lipoma", 3), ("malignant fibrous histiocytoma", 21),
                                     ("malignant peripheral nerve sheath tumor", 3), ("myxofibrosarcoma", 15),
                                     ("myxoid liposarcoma", 19), ("synovial sarcoma", 16),
                                     ("well-differentiated liposarcoma", 3)), "log2floor1",
                      "Nakayama et al. 2007, ten soft-tissue tumour types, Affymetrix U133A raw intensities; five "
                      "classes have 3-6 cases"),
    "pomeroy": _Info((60, 7128), (("died", 21), ("survived", 39)), "none",
                     "Pomeroy et al. 2002, medulloblastoma outcome (data set C), Affymetrix Hu6800, each array "
                     "standardised (mean 0, sd 1)"),
    "subramanian": _Info((50, 10100), (("MUT", 33), ("WT", 17)), "none",
                         "Subramanian et al. 2005, p53 status (mutant or wild type) of NCI-60 cell lines, log scale"),
    "west": _Info((49, 7129), (("negative", 25), ("positive", 24)), "none",
                  "West et al. 2001, breast tumours, negative vs positive status, Affymetrix Hu6800, each array "
                  "standardised (mean 0, sd 1)"),
}  # fmt: skip

#: The names of the sixteen data sets :func:`load_microarray` knows, in alphabetical order.
MICROARRAY_DATASETS: tuple[str, ...] = tuple(sorted(_INFO))

#: Transform name -> floor of log2(max(x, floor)); None for no transform.
TRANSFORMS: dict[str, float | None] = {"log2floor1": 1.0, "log2floor20": 20.0, "none": None}

_TRANSFORM_TEXT = {
    "log2floor1": "log2(max(x, 1))",
    "log2floor20": "log2(max(x, 20))",
    "none": "none (values as in the file)",
}


def check_transform(transform, *, allow_default: bool = True) -> str:
    """Validate a transform name; returns it (``"default"`` only when ``allow_default``)."""
    allowed = (["default"] if allow_default else []) + list(TRANSFORMS)
    if not isinstance(transform, str):
        raise InputTypeError(f"transform must be one of {allowed}, got {transform!r}")
    if transform not in allowed:
        raise InputValueError(f"transform must be one of {allowed}, got {transform!r}")
    return transform


def apply_transform(X: np.ndarray, transform: str) -> np.ndarray:
    """``X`` transformed by ``transform`` (a key of :data:`TRANSFORMS`), as a new float64 array."""
    floor = TRANSFORMS[check_transform(transform, allow_default=False)]
    X = np.array(X, dtype=np.float64)
    if floor is not None:
        np.log2(np.maximum(X, floor), out=X)
    return X


def _feature_names(x) -> np.ndarray | None:
    """Column names of an R matrix (xarray DataArray) or data frame, or None when the file gives none."""
    columns = getattr(x, "columns", None)  # pandas DataFrame
    if columns is not None:
        return np.asarray([str(c) for c in columns], dtype=object)
    dims, coords = getattr(x, "dims", None), getattr(x, "coords", None)
    if dims is not None and coords is not None and len(dims) == 2 and dims[1] in coords:
        return np.asarray([str(v) for v in np.asarray(coords[dims[1]])], dtype=object)
    return None


def _labels(y, n: int, file: str) -> tuple[np.ndarray, np.ndarray]:
    """The class labels (object array of str) and the class names (the factor's levels that occur, in level
    order; sorted labels when ``y`` is not a factor)."""
    categories = getattr(y, "categories", None)
    if categories is not None:  # an R factor, read as a pandas Categorical
        codes = np.asarray(y.codes)
        if codes.ndim != 1 or codes.shape[0] != n:
            raise ValueError(
                f"malformed data file {file}: y should be a factor of length {n} (one label per row of x), "
                f"got shape {codes.shape}"
            )
        if (codes < 0).any():
            raise ValueError(f"malformed data file {file}: y has {int((codes < 0).sum())} missing labels")
        levels = np.asarray([str(c) for c in categories], dtype=object)
        labels = levels[codes]
        used = np.zeros(levels.shape[0], dtype=bool)
        used[np.unique(codes)] = True
        return labels, levels[used]
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"malformed data file {file}: y should be a vector of length {n} (one label per row of x), "
            f"got shape {arr.shape}"
        )
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError(f"malformed data file {file}: y has {int(np.isnan(arr).sum())} missing labels")
        if np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
    labels = np.asarray([str(v) for v in arr], dtype=object)
    return labels, np.asarray(sorted(set(labels)), dtype=object)


def _parse_microarray(objects, file):
    """``x``, ``y`` of the list named after the file (``alon.RData`` holds the list ``alon``)."""
    stem = Path(file).stem
    data = _get(objects, stem, file)
    x = _get(data, "x", file)
    X = _as_matrix(x, f"{stem}$x", file)
    if not np.isfinite(X).all():
        raise ValueError(f"malformed data file {file}: {stem}$x has {int((~np.isfinite(X)).sum())} missing or "
                         f"infinite values")  # fmt: skip
    y, target_names = _labels(_get(data, "y", file), X.shape[0], file)
    return {"X": X, "y": y, "feature_names": _feature_names(x), "target_names": target_names}


def _bunch(arrays, *, name, transform, DESCR, filename):
    arrays = {key: value.copy() if isinstance(value, np.ndarray) else value for key, value in arrays.items()}
    X = apply_transform(arrays.pop("X"), transform)
    return data_bunch(X, arrays.pop("y"), feature_names=arrays.pop("feature_names"), DESCR=DESCR,
                      target_names=arrays.pop("target_names"), transform=transform, name=name,
                      filename=os.fspath(filename))  # fmt: skip


def _read_microarray_file(path, *, transform: str = "none") -> Bunch:
    """Load an ``.RData`` file laid out like datamicroarray's (a list named after the file with ``x`` and
    ``y``) from any path, without a checksum (for a user's own data, e.g. the benchmark's ``--data-dir``).

    Same Bunch as :func:`load_microarray`; ``transform`` is one of :data:`TRANSFORMS` (no ``"default"``).
    """
    transform = check_transform(transform, allow_default=False)
    path = Path(path)
    data = path.read_bytes()
    arrays = _parse_microarray(_read_r_file(data, path), path.name)
    DESCR = f"{path.stem}: user file {path} ({arrays['X'].shape[0]} x {arrays['X'].shape[1]}); transform: " \
            f"{_TRANSFORM_TEXT[transform]}\n"  # fmt: skip
    return _bunch(arrays, name=path.stem, transform=transform, DESCR=DESCR, filename=path)


def _describe(name: str, info: _Info, transform: str) -> str:
    n, p = info.shape
    title = f"{name} (datamicroarray)"
    classes = ", ".join(f"{label} ({count})" for label, count in info.classes)
    return (
        f"{title}\n{'-' * len(title)}\n\n{info.content}.\n\n{n} cases x {p} features; classes: {classes}.\n"
        f"Transform applied: {_TRANSFORM_TEXT[transform]} (the manifest's: {_TRANSFORM_TEXT[info.transform]}).\n\n"
        f"File ``microarray/{name}.RData`` of the R package datamicroarray (J. A. Ramey, MIT licence), commit "
        f"a95f6f68ed3debf48ee54f198435fa12aa655b16: one R list ``{name}`` with ``x`` and ``y``.\n"
    )


def load_microarray(
    name: str,
    *,
    transform: str = "default",
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
) -> Bunch:
    """Load one of the sixteen microarray data sets of the benchmark (datamicroarray, MIT).

    =============  ===========  ==========================================================  ===========
    name           n x p        classes (cases)                                             transform
    =============  ===========  ==========================================================  ===========
    alon           62 x 2000    n (22), t (40)                                              log2floor1
    borovecki      31 x 22283   control (14), symptomatic (17)                              log2floor1
    chowdary       104 x 22283  breast (62), colon (42)                                     log2floor1
    christensen    217 x 1413   other (113), blood (85), placenta (19)                      none
    golub          72 x 7129    ALL (47), AML (25)                                          log2floor20
    gordon         181 x 12533  adenocarcinoma (150), mesothelioma (31)                     log2floor20
    gravier        168 x 2905   good (111), poor (57)                                       none
    khan           63 x 2308    BL (8), EWS (23), NB (12), RMS (20)                         none
    nakayama       105 x 22283  dedifferentiated liposarcoma (15), fibrosarcoma (4),
                                leiomyosarcoma (6), lipoma (3),
                                malignant fibrous histiocytoma (21),
                                malignant peripheral nerve sheath tumor (3),
                                myxofibrosarcoma (15), myxoid liposarcoma (19),
                                synovial sarcoma (16),
                                well-differentiated liposarcoma (3)                         log2floor1
    pomeroy        60 x 7128    died (21), survived (39)                                    none
    shipp          77 x 7129    DLBCL (58), FL (19)                                         log2floor20
    singh          102 x 12600  Normal (50), Tumor (52)                                     log2floor20
    sorlie         85 x 456     1 (14), 2 (11), 3 (13), 4 (15), 5 (32)                      none
    su             102 x 5565   1 (25), 2 (26), 3 (28), 4 (23)                              none
    subramanian    50 x 10100   MUT (33), WT (17)                                           none
    west           49 x 7129    negative (25), positive (24)                                none
    =============  ===========  ==========================================================  ===========

    Parameters
    ----------
    name : str
        One of :data:`MICROARRAY_DATASETS` (the table above).
    transform : {"default", "none", "log2floor1", "log2floor20"}, default="default"
        ``"default"`` applies the data set's transform of the table; ``"none"`` returns the values of the
        file; ``"log2floor1"`` is log2(max(x, 1)) and ``"log2floor20"`` log2(max(x, 20)).
    data_home : str or path-like, optional
        Data directory holding ``microarray/<name>.RData``; by default ``HDBAYES_DATA``, then the per-user
        cache. See :func:`hdbayes.datasets.data_path`.
    download : bool, default=True
        Whether to download the file from its public URL when it is not found locally.

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (n, p), float64
            The (transformed) values, rows = cases.
        y : ndarray of shape (n,), object
            The class labels as strings, as in the file's factor (``"n"``, ``"t"`` for alon).
        feature_names : ndarray of str or None
            The column names stored in the file (None when it has none, as for sorlie).
        DESCR : str
            Description of the data set and of the transform applied.
        target_names : ndarray of str
            The class labels in the order of the factor's levels.
        transform : str
            The transform applied: ``"none"``, ``"log2floor1"`` or ``"log2floor20"``.
        name : str
            The data set's name.
        filename : str
            Path of the file read.

    Raises
    ------
    InputValueError, InputTypeError
        If ``name`` or ``transform`` is not one of the allowed values.
    FileNotFoundError, DataDownloadError
        If the file is missing and cannot be obtained.
    ValueError
        If the file's checksum differs from the registry, or its content does not have the expected
        structure.

    Examples
    --------
    >>> from hdbayes.datasets import load_microarray
    >>> golub = load_microarray("golub")  # doctest: +SKIP
    >>> golub.X.shape, golub.transform, list(golub.target_names)  # doctest: +SKIP
    ((72, 7129), 'log2floor20', ['ALL', 'AML'])
    """
    if not isinstance(name, str):
        raise InputTypeError(f"name must be one of {list(MICROARRAY_DATASETS)}, got {name!r}")
    if name not in _INFO:
        raise InputValueError(f"unknown microarray data set {name!r}; known: {', '.join(MICROARRAY_DATASETS)}")
    transform = check_transform(transform)
    info = _INFO[name]
    if transform == "default":
        transform = info.transform
    file = f"microarray/{name}.RData"
    path, data = data_bytes(file, data_home=data_home, download=download)
    arrays = _parsed(_parse_microarray, file, path, data)
    return _bunch(arrays, name=name, transform=transform, DESCR=_describe(name, info, transform), filename=path)
