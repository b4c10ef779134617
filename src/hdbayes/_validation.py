"""Input checks shared by the estimators, with messages that name the problem.

Every check raises :class:`~hdbayes.exceptions.InputValueError` or
:class:`~hdbayes.exceptions.InputTypeError` (subclasses of ValueError and TypeError),
so that the command line can tell a user's mistake from a bug.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import sys
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data

from hdbayes.exceptions import InputTypeError, InputValueError

if TYPE_CHECKING:
    import dask.array
    from numpy.typing import ArrayLike

#: What the estimators' ``X`` may be (used in annotations only): an array-like, a scipy sparse matrix or array,
#: or, for the estimators that fit from chunks, a dask array.
MatrixLike: TypeAlias = "ArrayLike | sp.spmatrix | sp.sparray | dask.array.Array"
#: A seed or generator, as :func:`check_generator` accepts it (used in annotations only).
RandomStateLike: TypeAlias = "int | np.random.Generator | np.random.RandomState | np.random.SeedSequence | None"

__all__ = [
    "binarize_features",
    "check_binary_features",
    "check_binarize",
    "check_binary_target",
    "check_class_labels",
    "check_count",
    "check_later_classes",
    "check_finite_output",
    "check_generator",
    "check_level_codes",
    "check_level_memory",
    "check_memory",
    "check_n_jobs",
    "check_positive",
    "column_label",
    "feature_label",
    "feature_thresholds",
    "first_entry",
    "fit_binarize_thresholds",
    "format_bytes",
    "is_dask_array",
    "overflow_error",
    "plain_value",
    "prediction_row_batches",
    "single_class_error",
    "unchanged_on_error",
    "usable_memory",
    "validate_input",
]


def validate_input(estimator, X, y="no_validation", *, targets=False, **kwargs):
    """scikit-learn's ``validate_data`` (and, with ``targets=True``, ``check_classification_targets``)
    with their errors (NaN, infinity, shapes, feature counts, dtypes, label types) re-raised as
    :class:`~hdbayes.exceptions.InputValueError` / :class:`~hdbayes.exceptions.InputTypeError`,
    with the same messages, so that they count as the user's mistakes.

    With ``y_numeric=True`` (the regressors) y comes back as float64, and a target of strings, bytes or
    other non-numbers is an :class:`~hdbayes.exceptions.InputTypeError` naming y (scikit-learn converts only
    object arrays; a string array would reach the arithmetic)."""
    if kwargs.get("y_numeric") and y is not None and not isinstance(y, str):
        _check_numeric_target(y)
    try:
        result = validate_data(estimator, X, y, **kwargs)
        if targets:
            check_classification_targets(result[1])
        return result
    except (InputValueError, InputTypeError):
        raise
    except ValueError as error:
        raise InputValueError(str(error)) from error
    except TypeError as error:
        raise InputTypeError(str(error)) from error


def _check_numeric_target(y):
    """Refuse a regression target of strings or bytes (or an object array holding one), naming y."""
    values = np.asarray(y)
    kind = values.dtype.kind
    if kind == "O":
        flat = values.ravel()
        text = [v for v in flat if isinstance(v, (str, bytes))][:1]
        if not text:
            return
        first, what = text[0], "values"
    elif kind in "USV":
        first, what = (values.ravel()[0] if values.size else None), {"U": "strings", "S": "bytes", "V": "records"}[kind]
    else:
        return
    shown = "" if first is None else f" such as {plain_value(first)}"
    raise InputTypeError(
        f"y must hold numbers (a regression target), got {what}{shown}; convert it with y.astype(float), or use "
        "a classifier for class labels"
    )


def check_positive(name, value, *, allow_zero=False):
    """A finite real number > 0 (or ≥ 0); raises TypeError/ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    ok = value >= 0 if allow_zero else value > 0
    if not np.isfinite(value) or not ok:
        raise InputValueError(f"{name} must be a finite number {'>=' if allow_zero else '>'} 0, got {value:g}")
    return value


def check_count(name, value, *, minimum=1, odd=False):
    """An integer ≥ ``minimum`` (odd if asked); raises TypeError/ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputTypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < minimum:
        raise InputValueError(f"{name} must be at least {minimum}, got {value}")
    if odd and value % 2 == 0:
        raise InputValueError(f"{name} must be odd, got {value}")
    return value


def feature_label(j, feature_names=None):
    """How a message names feature ``j``: its column name when known, else ``feature j``.

    ``feature_names`` is an estimator's ``feature_names_in_`` (set by scikit-learn when
    ``fit`` gets a DataFrame) or any sequence of names; indices are 0-based as in numpy.
    """
    if feature_names is not None and 0 <= j < len(feature_names):
        return f"feature {str(feature_names[j])!r}"
    return f"feature {j}"


def check_binarize(binarize, *, name="binarize", allow_none=True):
    """Validate a ``binarize`` option: None (data already 0/1), a finite number, or ``"median"``."""
    if binarize is None and allow_none:
        return None
    if isinstance(binarize, str):
        if binarize == "median":
            return binarize
        raise InputValueError(f"{name} must be a number or 'median', got {binarize!r}")
    if isinstance(binarize, bool) or not isinstance(binarize, numbers.Real):
        raise InputTypeError(f"{name} must be a number or 'median', got {type(binarize).__name__}")
    if not np.isfinite(binarize):
        raise InputValueError(f"{name} must be a finite number, got {float(binarize):g}")
    return float(binarize)


def fit_binarize_thresholds(X, binarize):
    """The thresholds a ``binarize`` option stands for on training data ``X``.

    Returns None (no binarisation), a float (one threshold for every feature) or, for
    ``binarize="median"``, the per-feature training medians as an array of shape
    (n_features,), which an estimator stores at fit and applies to test data.
    Sparse medians count the implicit zeros.
    """
    binarize = check_binarize(binarize)
    if binarize != "median":
        return binarize
    if sp.issparse(X):
        return _sparse_column_medians(X)
    return np.median(np.asarray(X, dtype=np.float64), axis=0)


def feature_thresholds(X, binarize):
    """The thresholds ``binarize`` stands for on the training X, one per column (None for
    ``binarize=None``): :func:`fit_binarize_thresholds` broadcast to (p,)."""
    thresholds = fit_binarize_thresholds(X, binarize)
    if thresholds is None:
        return None
    return np.broadcast_to(np.asarray(thresholds, dtype=np.float64), (X.shape[1],)).copy()


def _sparse_column_medians(X):
    """Column medians of a sparse matrix, implicit zeros included, without densifying a column.

    The median of column j is the mean of its order statistics (n − 1)//2 and n//2. With the
    stored values sorted within each column (negatives, stored zeros, positives), order
    statistic r of the whole column is the r-th stored value while r is below the number of
    negatives, 0 while it falls among all the zeros, and otherwise the stored value r − (number
    of implicit zeros).
    """
    X = X.tocsc()
    X.sum_duplicates()
    n, p = X.shape
    column = np.repeat(np.arange(p), np.diff(X.indptr))
    data = X.data.astype(np.float64)[np.lexsort((X.data, column))]  # values sorted within each column
    start = X.indptr[:-1]
    negative = np.diff(np.concatenate([[0], np.cumsum(data < 0)])[X.indptr])
    implicit = n - np.diff(X.indptr)
    zeros = implicit + np.diff(np.concatenate([[0], np.cumsum(data == 0)])[X.indptr])

    def order_statistic(r):
        value = np.zeros(p)
        low, high = r < negative, r >= negative + zeros
        take = low | high
        value[take] = data[(start + np.where(low, r, r - implicit))[take]]
        return value

    return 0.5 * (order_statistic((n - 1) // 2) + order_statistic(n // 2))


def _is_binary(X):
    values = X.data if sp.issparse(X) else np.asarray(X)
    return bool(np.all((values == 0) | (values == 1)))


def binarize_features(X, thresholds):
    """Values > threshold become 1.0, the others 0.0; the same answer for dense and sparse X.

    ``thresholds`` is a float or an array with one threshold per feature (see
    :func:`fit_binarize_thresholds`). A sparse X stays sparse (CSC) when every threshold
    is ≥ 0, so that implicit zeros stay 0; with a negative threshold the implicit zeros
    become 1 and X is made dense, as scikit-learn's ``BernoulliNB`` would have to.
    """
    thresholds = np.asarray(thresholds, dtype=np.float64)
    if thresholds.ndim == 0 and 0.0 <= thresholds < 1.0 and _is_binary(X):
        # already 0/1: binarising at t in [0, 1) changes nothing, so keep the data (no float64 copy of
        # what may be 10^8 stored int8 values); sparse input still comes back as CSC
        return X.tocsc() if sp.issparse(X) else X
    if sp.issparse(X):
        if np.all(thresholds >= 0):
            X = X.tocsc(copy=True).astype(np.float64)
            if thresholds.ndim == 0:
                X.data = (X.data > thresholds).astype(np.float64)
            else:
                column = np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))
                X.data = (X.data > thresholds[column]).astype(np.float64)
            X.eliminate_zeros()
            return X
        X = X.toarray()
    return (np.asarray(X) > thresholds).astype(np.float64)


def first_cell(X, bad):
    """(row, column, value) of the first entry of X where ``bad`` is True: ``bad`` is a mask over a
    dense X (row order), or over ``X.data`` of a CSR (row order) or CSC (column order) X."""
    if sp.issparse(X):
        k = int(np.flatnonzero(bad)[0])
        outer = int(np.searchsorted(X.indptr, k, side="right") - 1)
        row, column = (int(X.indices[k]), outer) if X.format == "csc" else (outer, int(X.indices[k]))
        return row, column, float(X.data[k])
    i, j = (int(v) for v in np.argwhere(bad)[0])
    return i, j, float(np.asarray(X)[i, j])


def first_entry(X, bad):
    """(column, value) of the first entry of X where ``bad`` is True (see :func:`first_cell`)."""
    _, column, value = first_cell(X, bad)
    return column, value


def cell_location(row, column, columns=0, feature_names=None):
    """The ``location`` of an :class:`~hdbayes.exceptions.InputValueError` for entry (``row``, ``column``) of a
    block of X: the row, and the feature's name in ``feature_names`` when known, else its index in the whole X
    (``columns`` as for :func:`column_label`)."""
    j = int(columns[column]) if isinstance(columns, np.ndarray) else int(columns) + column
    if feature_names is not None and 0 <= j < len(feature_names):
        return row, str(feature_names[j])
    return row, j


def check_binary_features(X, binarize=None, feature_names=None, columns=0):
    """Return X with values in {0, 1}: dense arrays keep their dtype, sparse ones become CSC.

    ``binarize`` is None (X must already be 0/1: any other value is refused, naming its
    column with ``feature_names`` when given), a float threshold, or an array of
    per-feature thresholds (values > threshold become 1, the rest 0, as in scikit-learn's
    ``BernoulliNB``). Estimators resolve ``binarize="median"`` to thresholds with
    :func:`fit_binarize_thresholds` first. When X is a block of the data, ``columns`` is the
    global index of its first column or of each of its columns (see :func:`column_label`).
    """
    if binarize is not None:
        return binarize_features(X, binarize)
    X = X.tocsc() if sp.issparse(X) else np.asarray(X)
    values = X.data if sp.issparse(X) else X
    bad = (values != 0) & (values != 1)
    if bad.any():
        row, column, value = first_cell(X, bad)
        raise InputValueError(
            f"X must hold binary features (0/1): {column_label(column, columns, feature_names)} has the value "
            f"{value:g}; pass binarize=<threshold> (or 'median') to binarize continuous data",
            location=cell_location(row, column, columns, feature_names),
        )
    return X


#: Largest categorical level code accepted (codes index tables of counts).
MAX_LEVEL_CODE = 1 << 16


def column_label(column, columns=0, feature_names=None):
    """How a message names column ``column`` of a block of X: ``columns`` is the global index of the block's
    first column (an int) or of each of its columns (an array); see :func:`feature_label`."""
    j = int(columns[column]) if isinstance(columns, np.ndarray) else int(columns) + column
    return feature_label(j, feature_names)


def check_level_codes(X, limit=None, *, limit_source="n_levels", feature_names=None, columns=0):
    """Refuse what are not categorical level codes 0, 1, 2, … (below ``limit`` when given).

    X is a dense array or a CSR/CSC matrix of numbers (already checked finite); a non-integer, a negative code,
    a code ≥ :data:`MAX_LEVEL_CODE` or one ≥ ``limit`` is an input error naming its feature (``feature_names``
    over the columns of the whole data; ``columns`` is the global index of X's first column, an int, or of
    each of its columns, an array); ``limit_source`` says where ``limit`` comes from. X itself is returned
    unchanged (any numeric dtype: the codes compare exactly).
    """
    values = X.data if sp.issparse(X) else np.asarray(X)

    def refuse(bad, message):
        row, column, value = first_cell(X, bad)
        raise InputValueError(
            message(column_label(column, columns, feature_names), value),
            location=cell_location(row, column, columns, feature_names),
        )

    bad = values != np.round(values)
    if bad.any():
        refuse(bad, lambda feature, value: (
            f"X must hold integer level codes 0, 1, 2, ...: {feature} has the value {value:g}; "
            "encode categories with sklearn.preprocessing.OrdinalEncoder, or bin continuous data first"
        ))  # fmt: skip
    bad = values < 0
    if bad.any():
        refuse(bad, lambda feature, value: (
            f"Negative values in data: {feature} has the level code {value:g}; level codes are 0, 1, 2, ..."
        ))  # fmt: skip
    bad = values >= MAX_LEVEL_CODE
    if bad.any():
        refuse(bad, lambda feature, value: (
            f"{feature} has the level code {value:g}; codes must be below {MAX_LEVEL_CODE} (number the levels "
            "0, 1, 2, ...)"
        ))  # fmt: skip
    if limit is not None:
        bad = values >= limit
        if bad.any():
            refuse(bad, lambda feature, value: (
                f"{feature} has level {int(value)}, outside 0..{limit - 1} ({limit_source})"
            ))  # fmt: skip
    return X


def check_later_classes(classes, fitted_classes):
    """``fitted_classes`` (the first ``partial_fit`` call's), checked against the ``classes`` given to a later call
    (None: not given, nothing to check).

    Parameters
    ----------
    classes : array-like or None
        The later call's ``classes``.
    fitted_classes : ndarray
        ``classes_``.

    Returns
    -------
    ndarray
        ``fitted_classes``.

    Raises
    ------
    InputValueError
        When the given classes are not those of the first call.
    """
    if classes is not None:
        given = np.unique(np.asarray(classes))
        if not np.array_equal(given, fitted_classes):
            shown = ["[" + ", ".join(plain_value(v) for v in values) + "]" for values in (given, fitted_classes)]
            raise InputValueError(f"classes={shown[0]} differs from the classes of the first call {shown[1]}")
    return fitted_classes


def check_class_labels(y, *, single_class_allowed=False):
    """Refuse a continuous or multi-output target and (unless allowed) a single class.

    Called on the raw ``y`` before anything is fitted; the messages follow scikit-learn's
    ("Unknown label type: continuous") and name the one class: "y has a single class
    ('a'), but a classifier needs more than one class". Returns the sorted classes (or None for
    ``y=None``).
    """
    if y is None:
        return None
    try:
        kind = type_of_target(y, input_name="y")
    except ValueError as exc:
        raise InputValueError(str(exc)) from exc
    if kind == "continuous" or kind == "continuous-multioutput":
        raise InputValueError(
            f"Unknown label type: {kind}. Maybe you are trying to fit a classifier, which expects discrete "
            "classes on a regression target with continuous values."
        )
    if kind not in ("binary", "multiclass"):
        raise InputValueError(f"Unknown label type: {kind}. y must be a 1-D array of class labels")
    classes = np.unique(np.asarray(y))
    if not single_class_allowed and classes.shape[0] == 1:
        raise single_class_error(classes[0])
    return classes


def single_class_error(label, *, what="but a classifier needs more than one class"):
    """The one input error for a training set with a single class (returned, to be raised)."""
    return InputValueError(f"y has a single class ({plain_value(label)}), {what}")


def check_binary_target(y):
    """Encode a binary target: returns (classes, y01) with y01 in {0, 1} as float64.

    Raises a ValueError for a single class, for more than two classes and for a
    continuous target (with scikit-learn's wording, so its conventions hold).
    """
    y = np.asarray(y)
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass", "multiclass-multioutput", "multilabel-indicator"):
        raise InputValueError(
            f"Unknown label type: {kind}. Maybe you are trying to fit a classifier, which expects "
            "discrete classes on a regression target with continuous values."
        )
    classes, y01 = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise single_class_error(classes[0], what="but a classifier needs more than one class (this one needs two)")
    if classes.shape[0] > 2 or kind != "binary":
        raise InputValueError(
            f"Only binary classification is supported. y must be binary, found {classes.shape[0]} classes"
        )
    return classes, y01.astype(np.float64)


def plain_value(value):
    """A numpy scalar as the user wrote it (``2.0``, ``'a'``), not its repr (``np.float64(2.0)``)."""
    return repr(value.item()) if isinstance(value, np.generic) else repr(value)


def check_finite_output(name, values, *, cause=None):
    """Raise if ``values`` has a NaN or infinity; returns ``values``.

    Estimators call it on what they return or store (probabilities, means, the
    evidence) so that overflow never passes silently. ``cause`` names the input that
    most likely caused it (for example "a feature value of 1e308 overflowed").
    """
    array = np.asarray(values)
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        where = f"; {cause}" if cause else "; an input value is too large for double precision"
        raise InputValueError(f"{name} is not finite{where}")
    return values


def overflow_error(label, statistic, column):
    """The input error for a column whose ``statistic`` overflows double precision.

    Names the column (``label``), the statistic, and the value of largest magnitude in
    ``column`` with its row, e.g. "feature 'g1' is too large for double precision: its sum of
    squares overflows (value 1e+308 in row 3); rescale it". Returned, to be raised.
    """
    column = np.asarray(column)
    i = int(np.argmax(np.abs(column)))
    return InputValueError(
        f"{label} is too large for double precision: {statistic} overflows (value {column[i]:g} in row {i}); "
        "rescale it"
    )


def check_generator(random_state) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Accepts None, an int (or anything :func:`numpy.random.default_rng`
    accepts: SeedSequence, BitGenerator, Generator — a Generator is used as is,
    not copied) and, for scikit-learn compatibility, a legacy
    :class:`numpy.random.RandomState`, from which a seed is drawn.
    """
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1, size=4))
    if isinstance(random_state, (bool, np.bool_)):
        raise InputTypeError("random_state must be None, an int or a numpy Generator, not a bool")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(
            "random_state must be None, a non-negative int, a numpy.random.Generator "
            f"(or SeedSequence/BitGenerator/RandomState), got {random_state!r}"
        ) from exc


def is_dask_array(X: object) -> bool:
    """Tell whether ``X`` is a ``dask.array.Array``, without importing dask.

    An array of it can only exist once ``dask.array`` has been imported, so dask is never loaded here.

    Parameters
    ----------
    X : object
        Anything.

    Returns
    -------
    bool
        True for a dask array.
    """
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(X, module.Array)


@contextlib.contextmanager
def unchanged_on_error(estimator):
    """Restore ``estimator``'s attributes if the block raises: a ``partial_fit`` that refuses its batch
    leaves the estimator as it was."""
    state = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(state)
        raise


def _read_number(path):
    """The first word of a one-line kernel file as an int; None when missing, unreadable or ``max``."""
    try:
        with open(path) as file:
            word = file.read().split()[0]
        return int(word)
    except (OSError, IndexError, ValueError):
        return None


def _cgroup_memory_left():
    """Bytes left under this process's cgroup memory limit (v2 ``memory.max`` − ``memory.current``, or v1
    ``memory.limit_in_bytes`` − ``memory.usage_in_bytes``); None without a limit."""
    paths = {"": "/"}
    try:
        with open("/proc/self/cgroup") as file:
            for line in file:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "" or "memory" in controllers.split(","):
                    paths[controllers and "memory"] = path
    except (OSError, ValueError):
        pass
    left = []
    for version, (limit_name, usage_name) in (
        ("", ("memory.max", "memory.current")),
        ("memory", ("memory.limit_in_bytes", "memory.usage_in_bytes")),
    ):
        root = os.path.join("/sys/fs/cgroup", version)
        for folder in dict.fromkeys((os.path.join(root, paths.get(version, "/").lstrip("/")), root)):
            limit = _read_number(os.path.join(folder, limit_name))
            if limit is not None and limit < 1 << 60:  # v1 writes "no limit" as a huge number
                left.append(max(limit - (_read_number(os.path.join(folder, usage_name)) or 0), 0))
                break
    return min(left) if left else None


def _meminfo_available():
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (None where there is no such file)."""
    try:
        with open("/proc/meminfo") as file:
            for line in file:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _address_space_left():
    """Bytes left under the soft ``RLIMIT_AS`` (``ulimit -v``) given this process's current size; None without
    a limit."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    if limit == resource.RLIM_INFINITY:
        return None
    size = 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/status") as file:
            for line in file:
                if line.startswith("VmSize:"):
                    size = int(line.split()[1]) * 1024
    return max(limit - size, 0)


def usable_memory():
    """Bytes of memory this process can still allocate: the least of what is left under its cgroup's limit,
    ``MemAvailable`` of ``/proc/meminfo`` and what is left under ``ulimit -v``; where none of them can be read,
    the physical memory (``os.sysconf``).

    Returns
    -------
    int or None
        The bytes; None only where even the physical memory is unknown.
    """
    known = [value for value in (_cgroup_memory_left(), _meminfo_available(), _address_space_left()) if value]
    if known:
        return min(known)
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def format_bytes(n_bytes):
    """A number of bytes for a message: ``"512 bytes"``, ``"3.2 MB"``, ``"80 GB"``, ``"4.3e+05 PB"``."""
    n_bytes = float(n_bytes)
    if n_bytes < 1000:
        return f"{n_bytes:.0f} bytes"
    for unit in ("kB", "MB", "GB", "TB"):
        n_bytes /= 1000
        if n_bytes < 1000:
            return f"{n_bytes:.2g} {unit}" if n_bytes < 10 else f"{n_bytes:.0f} {unit}"
    n_bytes /= 1000
    return f"{n_bytes:.0f} PB" if n_bytes < 1e6 else f"{n_bytes:.2g} PB"


def check_memory(n_bytes, what, *, purpose=None):
    """Refuse, before allocating it, memory beyond what this process can use.

    Estimators call it with an estimate of the memory a size option will need (saved draws, tables of counts,
    grids) before the arrays are created, so that an absurd value is refused at once, naming the option,
    instead of failing in numpy ("Unable to allocate 426 PiB") or growing until the machine swaps.

    Parameters
    ----------
    n_bytes : int or float
        The estimate, in bytes (a float when it may exceed int64).
    what : str
        The option(s) responsible, as the user wrote them: ``"n_chains = 1000000000"``.
    purpose : str, optional
        What the memory is for: ``"the saved draws"``.

    Returns
    -------
    float
        ``n_bytes``.

    Raises
    ------
    InputValueError
        ``"n_chains = 1000000000 would need about 80 GB for the saved draws; this process can use about
        24 GB"`` when the estimate exceeds :func:`usable_memory`.
    """
    n_bytes = float(n_bytes)
    available = usable_memory()
    if available is not None and n_bytes > available:
        raise InputValueError(
            f"{what} would need about {format_bytes(n_bytes)}{f' for {purpose}' if purpose else ''}; this process "
            f"can use about {format_bytes(available)}"
        )
    return n_bytes


def check_level_memory(n_levels, n_features, n_classes, *, name="n_levels"):
    """Refuse a number of categorical levels whose class × level tables cannot fit in memory.

    The estimate is 24 · p · G · L bytes (24 · G · Σ_j L_j with one L per feature): three numbers of 8 bytes for
    every feature, class and level (the counts, the prior's pseudo-counts or the table of tables, and the
    log-probabilities fitted from them); see :func:`check_memory`.

    Parameters
    ----------
    n_levels : int or array-like of int
        L (the largest, when one per feature).
    n_features, n_classes : int
        p and G (a lower bound when not known yet).
    name : str, default="n_levels"
        The option, for the message.

    Returns
    -------
    float
        The estimate in bytes.
    """
    levels = np.asarray(n_levels, dtype=np.float64)
    total = float(levels.sum()) if levels.ndim else float(levels) * int(n_features)
    varies = levels.ndim and levels.size and levels.min() != levels.max()
    shown = f"max({name}) = {int(levels.max())}" if varies else f"{name} = {int(levels.max(initial=0))}"
    return check_memory(
        24.0 * total * int(n_classes),
        f"{shown} (with {int(n_features)} features and {int(n_classes)} classes)",
        purpose="the class × level tables",
    )


def check_n_jobs(n_jobs, n_tasks=None):
    """joblib's ``n_jobs`` capped at the usable cores (and at the number of tasks, when given).

    None and 1 stay as they are (nothing runs in parallel); a negative value counts back from the usable cores
    as in joblib (−1: all of them), at least 1; 0 is refused. A value above the usable cores (affinity mask
    and cgroup quota respected, :func:`hdbayes._threads.usable_cores`) is capped there: more threads than cores
    only cost memory.

    Parameters
    ----------
    n_jobs : int or None
        The option.
    n_tasks : int, optional
        How many independent tasks there are (chains, grid values).

    Returns
    -------
    int or None
        The number of workers to ask joblib for.
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise InputTypeError(f"n_jobs must be an integer or None, got {type(n_jobs).__name__}")
    from hdbayes._threads import usable_cores

    n_jobs, cores = int(n_jobs), usable_cores()
    if n_jobs == 0:
        raise InputValueError("n_jobs must be at least 1, -1 (all usable cores) or None, got 0")
    n_jobs = max(cores + 1 + n_jobs, 1) if n_jobs < 0 else min(n_jobs, cores)
    return n_jobs if n_tasks is None else max(min(n_jobs, int(n_tasks)), 1)


#: Memory of one row batch of a prediction from selected columns (:func:`prediction_row_batches`), in bytes.
PREDICTION_BATCH_BYTES = 32 * 2**20


def _selected_block(X, rows, columns):
    """``X[rows][:, columns]`` of an ndarray, a DataFrame or a CSR matrix, copying only that block (``columns``
    None: all columns)."""
    if hasattr(X, "iloc"):
        return X.iloc[rows] if columns is None else X.iloc[rows, columns]
    block = X[rows]
    return block if columns is None else block[:, columns]


def prediction_row_batches(estimator, X, columns, *, row_bytes, **check_kwargs):
    """The test data a model of selected columns reads: ``X[rows][:, columns]`` in row batches, each validated.

    X's shape and feature names are checked against the fit (``n_features_in_``, ``feature_names_in_``, with
    scikit-learn's messages) without converting X; then X is cut into batches of about
    :data:`PREDICTION_BATCH_BYTES` (``row_bytes``: the prediction's memory per row), and only the block of each
    batch's rows and the ``columns`` is validated by scikit-learn's ``check_array`` with ``check_kwargs``
    (``dtype``, ``accept_sparse``, ``ensure_all_finite``: the estimator's checks of test data, with their
    messages). The memory of a prediction is then that of the k selected columns of one batch, however many
    columns X has.

    Parameters
    ----------
    estimator : fitted estimator
        The model; its fitted number of features and names are checked.
    X : ndarray, DataFrame or sparse matrix of shape (n_samples, n_features_in_)
        The test data.
    columns : ndarray of int
        The columns the model reads (the selected features), in its order.
    row_bytes : int
        Bytes a prediction needs per row.
    **check_kwargs
        Passed to :func:`sklearn.utils.check_array` for each block.

    Returns
    -------
    list of (slice, block) or None
        The batches in row order (at least one); None when X is another kind of input (a list, a 1-D or
        empty array), which the caller validates whole, as before.
    """
    from sklearn.utils.validation import _check_feature_names, _check_n_features, check_array

    is_frame = hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2
    if not (is_frame or (isinstance(X, np.ndarray) and X.ndim == 2) or (sp.issparse(X) and X.ndim == 2)):
        return None
    n = X.shape[0]
    if n == 0:
        return None
    try:
        _check_feature_names(estimator, X, reset=False)
        _check_n_features(estimator, X, reset=False)
    except ValueError as error:
        raise InputValueError(str(error)) from error
    columns = np.asarray(columns, dtype=np.intp)
    if columns.shape[0] == X.shape[1] and np.array_equal(columns, np.arange(X.shape[1])):
        columns = None  # every column: batches of rows are views
    if sp.issparse(X) and X.format != "csr":  # rows are cut from CSR
        if columns is not None and X.format == "csc":
            X, columns = X[:, columns].tocsr(), None  # the k selected columns alone
        else:
            X = X.tocsr()
    rows = max(int(PREDICTION_BATCH_BYTES // max(int(row_bytes), 1)), 1)
    check_kwargs.setdefault("estimator", estimator)
    check_kwargs.setdefault("input_name", "X")
    batches = []
    for start in range(0, n, rows):
        batch = slice(start, min(start + rows, n))
        batches.append((batch, _LazyBlock(X, batch, columns, check_kwargs, check_array)))
    return batches


class _LazyBlock:
    """One batch of :func:`prediction_row_batches`, cut and validated only when asked for (``get()``), so that
    one batch at a time is in memory."""

    __slots__ = ("X", "rows", "columns", "kwargs", "check")

    def __init__(self, X, rows, columns, kwargs, check):
        self.X, self.rows, self.columns, self.kwargs, self.check = X, rows, columns, kwargs, check

    def get(self):
        block = _selected_block(self.X, self.rows, self.columns)
        try:
            return self.check(block, **self.kwargs)
        except (InputValueError, InputTypeError):
            raise
        except ValueError as error:
            raise InputValueError(str(error)) from error
        except TypeError as error:
            raise InputTypeError(str(error)) from error
