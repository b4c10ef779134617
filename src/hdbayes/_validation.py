"""Input checks shared by the estimators, with messages that name the problem.

Every check raises :class:`~hdbayes.exceptions.InputValueError` or
:class:`~hdbayes.exceptions.InputTypeError` (subclasses of ValueError and TypeError),
so that the command line can tell a user's mistake from a bug.
"""

from __future__ import annotations

import contextlib
import numbers
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
    "check_finite_output",
    "check_generator",
    "check_level_codes",
    "check_positive",
    "column_label",
    "feature_label",
    "feature_thresholds",
    "first_entry",
    "fit_binarize_thresholds",
    "is_dask_array",
    "overflow_error",
    "plain_value",
    "single_class_error",
    "unchanged_on_error",
    "validate_input",
]


def validate_input(estimator, X, y="no_validation", *, targets=False, **kwargs):
    """scikit-learn's ``validate_data`` (and, with ``targets=True``, ``check_classification_targets``)
    with their errors (NaN, infinity, shapes, feature counts, dtypes, label types) re-raised as
    :class:`~hdbayes.exceptions.InputValueError` / :class:`~hdbayes.exceptions.InputTypeError`,
    with the same messages, so that they count as the user's mistakes."""
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


def first_entry(X, bad):
    """(column, value) of the first entry of X where ``bad`` is True: ``bad`` is a mask over a
    dense X (row order), or over ``X.data`` of a CSR (row order) or CSC (column order) X."""
    if sp.issparse(X):
        k = int(np.flatnonzero(bad)[0])
        column = int(np.searchsorted(X.indptr, k, side="right") - 1) if X.format == "csc" else int(X.indices[k])
        return column, float(X.data[k])
    i, j = (int(v) for v in np.argwhere(bad)[0])
    return j, float(np.asarray(X)[i, j])


def check_binary_features(X, binarize=None, feature_names=None):
    """Return X with values in {0, 1}: dense arrays keep their dtype, sparse ones become CSC.

    ``binarize`` is None (X must already be 0/1: any other value is refused, naming its
    column with ``feature_names`` when given), a float threshold, or an array of
    per-feature thresholds (values > threshold become 1, the rest 0, as in scikit-learn's
    ``BernoulliNB``). Estimators resolve ``binarize="median"`` to thresholds with
    :func:`fit_binarize_thresholds` first.
    """
    if binarize is not None:
        return binarize_features(X, binarize)
    X = X.tocsc() if sp.issparse(X) else np.asarray(X)
    values = X.data if sp.issparse(X) else X
    bad = (values != 0) & (values != 1)
    if bad.any():
        column, value = first_entry(X, bad)
        raise InputValueError(
            f"X must hold binary features (0/1): {feature_label(column, feature_names)} has the value {value:g}; "
            "pass binarize=<threshold> (or 'median') to binarize continuous data"
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

    def feature(column):
        return column_label(column, columns, feature_names)

    bad = values != np.round(values)
    if bad.any():
        column, value = first_entry(X, bad)
        raise InputValueError(
            f"X must hold integer level codes 0, 1, 2, ...: {feature(column)} has the value {value:g}; "
            "encode categories with sklearn.preprocessing.OrdinalEncoder, or bin continuous data first"
        )
    bad = values < 0
    if bad.any():
        column, value = first_entry(X, bad)
        raise InputValueError(
            f"Negative values in data: {feature(column)} has the level code {value:g}; level codes are 0, 1, 2, ..."
        )
    bad = values >= MAX_LEVEL_CODE
    if bad.any():
        column, value = first_entry(X, bad)
        raise InputValueError(
            f"{feature(column)} has the level code {value:g}; codes must be below {MAX_LEVEL_CODE} "
            "(number the levels 0, 1, 2, ...)"
        )
    if limit is not None:
        bad = values >= limit
        if bad.any():
            column, value = first_entry(X, bad)
            raise InputValueError(f"{feature(column)} has level {int(value)}, outside 0..{limit - 1} ({limit_source})")
    return X


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


def is_dask_array(X) -> bool:
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
