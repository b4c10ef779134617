"""Loaders for the real gene-expression data sets used in the papers.

Each loader locates its file with :func:`hdbayes.datasets.data_path` (data
directory, sha256 check, optional download), reads the R serialisation with
the pure-Python package :mod:`rdata`, checks its structure and returns a
:class:`sklearn.utils.Bunch` with the layout of every data set (``X``, ``y``,
``feature_names``, ``DESCR``, then ``target_names`` and the extras).  The
loaders share one path (:func:`_load_r_data`): the file is read once
(:func:`hdbayes.datasets.data_bytes`), the sha256 of those bytes is checked and
the same bytes are parsed; parsed arrays are cached within the process, keyed
by that digest (never by the file's path, size or modification time), and every
call returns fresh copies, so callers may modify what they get.

Data sets
---------
colon
    Alon et al. (1999), 62 tissues x 2000 genes, the data of Li (2007) thesis
    §2.3.6.
SRBCT
    Khan et al. (2001), 83 tumours x 2308 genes, the data of Li (2009) §4.2.
lymphoma
    Alizadeh et al. (2000), 62 x 4026, as shipped by the author's R package
    BCBCSF for the Gaussian bias-corrected classifier.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ._common import data_bunch, shared_doc
from ._fetch import data_bytes

if TYPE_CHECKING:
    from sklearn.utils import Bunch

__all__ = ["load_colon", "load_lymphoma", "load_srbct"]


# ---------------------------------------------------------------------------
# reading and validating R files


def _read_r_file(data: bytes, path) -> dict:
    """Parse and convert the bytes ``data`` of the ``.rda`` / ``.RData`` file ``path`` into a dict of objects."""
    import rdata  # imported lazily: it pulls in xarray and pandas

    name = Path(path).name
    try:
        with warnings.catch_warnings():
            # Old (format 2) files carry no string encoding; strings are ASCII
            # here, and latin-1 never fails to decode, so no warning is useful.
            # (Files are checksummed before parsing, so rdata's guesses about
            # unknown file types only ever concern malformed files.)
            warnings.simplefilter("ignore", UserWarning)
            parsed = rdata.parser.parse_data(data, extension=Path(path).suffix)
            converted = rdata.conversion.convert(parsed, default_encoding="latin_1")
    except Exception as exc:
        raise ValueError(
            f"malformed data file {name} ({path}): could not read it as an R data file ({type(exc).__name__}: {exc})"
        ) from exc
    if not isinstance(converted, dict):
        raise ValueError(
            f"malformed data file {name} ({path}): expected named R objects, got {type(converted).__name__}"
        )
    return {str(k): v for k, v in converted.items()}


def _get(container, key: str, file: str):
    if not isinstance(container, dict) or key not in {str(k) for k in container}:
        have = sorted(str(k) for k in container) if isinstance(container, dict) else []
        raise ValueError(f"malformed data file {file}: object {key!r} not found (found: {have})")
    for k, v in container.items():
        if str(k) == key:
            return v
    raise AssertionError("unreachable")


def _as_matrix(x, what: str, file: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"malformed data file {file}: {what} is not numeric") from exc
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"malformed data file {file}: {what} should be a non-empty matrix, got shape {arr.shape}")
    return arr


def _as_labels(y, n: int, allowed, what: str, file: str) -> np.ndarray:
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"malformed data file {file}: {what} is not numeric") from exc
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"malformed data file {file}: {what} should be a vector of length {n} "
            f"(one label per row of the data), got shape {arr.shape}"
        )
    allowed = np.asarray(sorted(allowed), dtype=np.float64)
    bad = ~np.isin(arr, allowed)
    if bad.any():
        raise ValueError(
            f"malformed data file {file}: {what} has values outside "
            f"{allowed.astype(int).tolist()}: {np.unique(arr[bad]).tolist()[:5]}"
        )
    return arr.astype(np.int64)


_PARSED_MAX = 8  # parsed files kept per process
_parsed_cache: OrderedDict[tuple, dict] = OrderedDict()
_parsed_lock = threading.Lock()


def _parsed(parse, name: str, path: Path, data: bytes) -> dict:
    """``parse(objects, file)`` of the verified bytes ``data`` of registry file ``name``, read-only arrays.

    Cached per ``(parse, name, sha256 of data)``: a digest, never the file's metadata, says whether two reads
    hold the same content (a file changed in place may keep its size and modification time).
    """
    key = (parse, name, hashlib.sha256(data).hexdigest())
    with _parsed_lock:
        if key in _parsed_cache:
            _parsed_cache.move_to_end(key)
            return _parsed_cache[key]
    arrays = parse(_read_r_file(data, path), Path(name).name)
    for value in arrays.values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    with _parsed_lock:
        _parsed_cache[key] = arrays
        while len(_parsed_cache) > _PARSED_MAX:
            _parsed_cache.popitem(last=False)
    return arrays


def _load_r_data(name, parse, *, data_home, download, DESCR, target_names):
    """The one loading path of the R files: read and verify file ``name`` once (:func:`data_bytes`), parse
    those bytes with ``parse(objects, file) -> dict`` (keys ``X``, ``y``, optionally ``feature_names``, then
    extras; cached per digest) and return the data-set Bunch holding fresh copies."""
    path, data = data_bytes(name, data_home=data_home, download=download)
    arrays = {key: value.copy() if isinstance(value, np.ndarray) else value
              for key, value in _parsed(parse, name, path, data).items()}  # fmt: skip
    X, y, feature_names = arrays.pop("X"), arrays.pop("y"), arrays.pop("feature_names", None)
    return data_bunch(X, y, feature_names=feature_names, DESCR=DESCR, target_names=np.array(target_names), **arrays,
                      filename=os.fspath(path))  # fmt: skip


def _unique_names(names) -> np.ndarray:
    """Make names unique the way pandas does for duplicated columns: ``a, a.1, a.2``."""
    seen: dict[str, int] = {}
    taken = set(names)
    out = []
    for name in names:
        if name not in seen:
            seen[name] = 0
            out.append(name)
            continue
        k = seen[name]
        while True:
            k += 1
            candidate = f"{name}.{k}"
            if candidate not in taken:
                break
        seen[name] = k
        taken.add(candidate)
        out.append(candidate)
    return np.asarray(out, dtype=object)


#: Documentation every loader shares (see :func:`hdbayes.datasets._common.shared_doc`).
_LOADER_DOCS = {
    "download": "download : bool, default=True\n    Whether to download the file when it is not found locally.",
    "raises": "Raises\n------\nFileNotFoundError, DataDownloadError\n    If the file is missing and cannot be obtained."
    "\nValueError\n    If the file's checksum differs from the registry, or its content does\n    not have the "
    "expected structure.",
}


# ---------------------------------------------------------------------------
# colon


def _parse_colon(objects, file):
    colon = _get(objects, "colon", file)
    X_obj = _get(colon, "X", file)
    X = _as_matrix(X_obj, "colon$X", file)
    y = _as_labels(_get(colon, "y", file), X.shape[0], {0, 1}, "colon$y", file)
    names = None
    dims = getattr(X_obj, "dims", None)
    coords = getattr(X_obj, "coords", None)
    if dims is not None and coords is not None and len(dims) == 2 and dims[1] in coords:
        names = np.asarray([str(v) for v in np.asarray(coords[dims[1]])], dtype=object)
    medians = np.median(X, axis=0)
    return {"X": X, "y": y, "feature_names": names, "X_binary": (X > medians).astype(np.int8), "medians": medians}


_COLON_DESCR = """\
Colon tissue gene expression (Alon et al. 1999)
-----------------------------------------------

62 tissue samples (22 normal = class 0, 40 tumour = class 1) x 2000 genes:
the 2000 Affymetrix Hu6800 genes of highest minimal intensity, as used in
Li (2007) thesis §2.3.6.  File ``colon.rda`` of the R package HTLR (GPL-3):
intensities log10-transformed and standardised per array (each row has mean 0
and standard deviation 1).  The file has no gene identifiers; ``feature_names``
are R's positional column names ``V1`` ... ``V2000``.

Binarisation (thesis §2.3.6, and the author's R package): gene j of case i is
1 when its value is strictly greater than the median of gene j over all 62
cases, else 0.  With 62 cases and no ties each gene has exactly 31 ones.  The
medians use all cases, as in the thesis (done once, before cross-validation;
the labels are not used).

References
----------
Alon, U. et al. (1999). Broad patterns of gene expression revealed by
clustering analysis of tumor and normal colon tissues probed by
oligonucleotide arrays. PNAS 96, 6745-6750.
Li, L. (2007). Bayesian Classification and Regression with High Dimensional
Features. PhD thesis, University of Toronto, §2.3.6.
"""


@shared_doc(_LOADER_DOCS)
def load_colon(
        *, binarize: bool = False, data_home: str | os.PathLike[str] | None = None, download: bool = True) -> Bunch:
    """Load the colon cancer gene-expression data (Alon et al. 1999).

    The data set of Li (2007) thesis §2.3.6: 62 cases, 2000 genes; class 1 =
    tumour (40 cases), class 0 = normal (22 cases).

    Parameters
    ----------
    binarize : bool, default=False
        If True, ``X`` holds the binarised matrix of the thesis (§2.3.6):
        ``(X > median of each gene over all 62 cases).astype(np.int8)``, i.e.
        strictly greater than the median is 1.  The medians are taken over all
        cases (not within cross-validation folds), as in the thesis.
    data_home : str or path-like, optional
        Folder holding ``colon.rda``; see :func:`hdbayes.datasets.data_path`.
    {download}

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (62, 2000)
            float64 expression values, or int8 0/1 when ``binarize=True``.
        y : ndarray of shape (62,), int64
            0 = normal, 1 = tumour.
        feature_names : ndarray of str
            Column names stored in the file (``V1`` ... ``V2000``: positional
            placeholders, not gene identifiers).
        DESCR : str
            Description of the data set.
        target_names : ndarray of str
            ``["normal", "tumour"]``.
        X_binary : ndarray of shape (62, 2000), int8
            The binarised matrix (always present).
        medians : ndarray of shape (2000,)
            The per-gene medians used as binarisation thresholds.
        filename : str
            Path of the file read.

    {raises}

    Examples
    --------
    >>> from hdbayes.datasets import load_colon
    >>> colon = load_colon(binarize=True)  # doctest: +SKIP
    >>> colon.X.shape, colon.X.dtype  # doctest: +SKIP
    ((62, 2000), dtype('int8'))
    """
    colon = _load_r_data("colon.rda", _parse_colon, data_home=data_home, download=download, DESCR=_COLON_DESCR,
                         target_names=["normal", "tumour"])  # fmt: skip
    if binarize:
        colon.X = colon.X_binary.copy()
    return colon


# ---------------------------------------------------------------------------
# SRBCT


def _parse_srbct(objects, file):
    srbct = _get(objects, "SRBCT", file)
    X = _as_matrix(_get(srbct, "X", file), "SRBCT$X", file)
    y = _as_labels(_get(srbct, "Y", file), X.shape[0], {1, 2, 3, 4}, "SRBCT$Y", file) - 1
    names = image_ids = descriptions = None
    if "gene.names" in srbct:
        genes = srbct["gene.names"]
        if not hasattr(genes, "iloc") or genes.shape[0] != X.shape[1] or genes.shape[1] < 2:
            raise ValueError(
                f"malformed data file {file}: SRBCT$gene.names should be a data frame "
                f"with {X.shape[1]} rows (image id, description), got "
                f"{type(genes).__name__} of shape {getattr(genes, 'shape', None)}"
            )
        ids = genes.iloc[:, 0]
        image_ids = np.asarray(ids.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan))
        raw = ["IMAGE:NA" if np.isnan(v) else f"IMAGE:{int(v)}" for v in image_ids]
        names = _unique_names(raw)
        desc = genes.iloc[:, 1].astype(object)
        descriptions = np.asarray(
            ["" if d is None or (isinstance(d, float) and np.isnan(d)) else str(d).strip() for d in desc],
            dtype=object,
        )
    khan_test_mask = np.zeros(X.shape[0], dtype=bool)
    khan_test_mask[63:] = True
    return {"X": X, "y": y, "feature_names": names, "image_ids": image_ids, "gene_descriptions": descriptions,
            "khan_test_mask": khan_test_mask}  # fmt: skip


_SRBCT_DESCR = """\
Small round blue cell tumours of childhood (Khan et al. 2001)
-------------------------------------------------------------

83 tumour samples x 2308 genes (cDNA microarray ratios, filtered by Khan et al.),
four classes: 0 = EWS (Ewing family, 29), 1 = BL/NHL (Burkitt lymphoma, 11),
2 = NB (neuroblastoma, 18), 3 = RMS (rhabdomyosarcoma, 25).  File ``SRBCT.rda``
of the R package plsgenomics (GPL >= 2); the labels 1..4 of the file are mapped
to 0..3.  Rows 0-62 are Khan's training set and rows 63-82 the 20 SRBCT test
samples (``khan_test_mask``).  Li (2009) §4.2 uses all 83 cases and 2308 genes.

Genes are identified by their I.M.A.G.E. clone ids.  The file has 28 clone ids
that occur more than once (distinct spots with different values) and 5 missing
ids, so ``feature_names`` are ``IMAGE:<id>`` made unique the way pandas does
(``IMAGE:40017``, ``IMAGE:40017.1``; missing ids are ``IMAGE:NA``, ``IMAGE:NA.1``,
...).  ``image_ids`` (float, NaN if missing) and ``gene_descriptions`` (78 are
empty) give the raw annotation.

References
----------
Khan, J. et al. (2001). Classification and diagnostic prediction of cancers
using gene expression profiling and artificial neural networks. Nature
Medicine 7, 673-679.
Li, L. (2009). Calibrating predictions based on a selected subset of features
from Bayesian Gaussian classification models. Manuscript, §4.2.
"""


@shared_doc(_LOADER_DOCS)
def load_srbct(*, data_home: str | os.PathLike[str] | None = None, download: bool = True) -> Bunch:
    """Load the small round blue cell tumour data (Khan et al. 2001).

    The data set of Li (2009), "Calibrating predictions ... Bayesian Gaussian
    classification models", §4.2: 83 cases, 2308 genes, four classes.

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder holding ``SRBCT.rda``; see :func:`hdbayes.datasets.data_path`.
    {download}

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (83, 2308), float64
        y : ndarray of shape (83,), int64
            0 = EWS (29), 1 = BL/NHL (11), 2 = NB (18), 3 = RMS (25).
        feature_names : ndarray of str
            ``IMAGE:<clone id>``, made unique (see ``DESCR``).
        DESCR : str
        target_names : ndarray of str
            ``["EWS", "BL/NHL", "NB", "RMS"]``.
        image_ids : ndarray of shape (2308,), float64
            Raw I.M.A.G.E. clone ids (NaN where missing; not unique).
        gene_descriptions : ndarray of shape (2308,), object
            Gene descriptions ("" where missing).
        khan_test_mask : ndarray of shape (83,), bool
            True for the 20 test samples of Khan et al. (the last 20 rows).
        filename : str
            Path of the file read.

    {raises}
    """
    return _load_r_data("SRBCT.rda", _parse_srbct, data_home=data_home, download=download, DESCR=_SRBCT_DESCR,
                        target_names=["EWS", "BL/NHL", "NB", "RMS"])  # fmt: skip


# ---------------------------------------------------------------------------
# lymphoma


def _parse_lymphoma(objects, file):
    X = _as_matrix(_get(objects, "lymph.X", file), "lymph.X", file)
    y = _as_labels(_get(objects, "lymph.y", file), X.shape[0], {1, 2, 3}, "lymph.y", file)
    return {"X": X, "y": y - 1}


_LYMPHOMA_DESCR = """\
Lymphoma gene expression (Alizadeh et al. 2000)
-----------------------------------------------

62 samples x 4026 genes (Lymphochip cDNA arrays), preprocessed as in Dettling
(2004) (missing values imputed, arrays standardised), three classes:
0 = DLBCL (diffuse large B-cell lymphoma, 42), 1 = FL (follicular lymphoma, 9),
2 = CLL (chronic lymphocytic leukaemia, 11).  File ``lymphoma.RData`` of the
author's R package BCBCSF (GPL >= 2), objects ``lymph.X`` and ``lymph.y``
(labels 1..3 mapped to 0..2).  The file carries no gene names
(``feature_names`` is None).

References
----------
Alizadeh, A. A. et al. (2000). Distinct types of diffuse large B-cell lymphoma
identified by gene expression profiling. Nature 403, 503-511.
Dettling, M. (2004). BagBoosting for tumor classification with gene expression
data. Bioinformatics 20, 3583-3593.
"""


@shared_doc(_LOADER_DOCS)
def load_lymphoma(*, data_home: str | os.PathLike[str] | None = None, download: bool = True) -> Bunch:
    """Load the lymphoma gene-expression data (Alizadeh et al. 2000).

    As shipped by BCBCSF, the R package of the bias-corrected Gaussian
    classifier of Li (2009): 62 cases, 4026 genes, three classes.

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder holding ``lymphoma.RData``; see
        :func:`hdbayes.datasets.data_path`.
    {download}

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (62, 4026), float64
        y : ndarray of shape (62,), int64
            0 = DLBCL (42), 1 = FL (9), 2 = CLL (11).
        feature_names : None
            The file has no gene names.
        DESCR : str
        target_names : ndarray of str
            ``["DLBCL", "FL", "CLL"]``.
        filename : str
            Path of the file read.

    {raises}
    """
    return _load_r_data("lymphoma.RData", _parse_lymphoma, data_home=data_home, download=download,
                        DESCR=_LYMPHOMA_DESCR, target_names=["DLBCL", "FL", "CLL"])  # fmt: skip
