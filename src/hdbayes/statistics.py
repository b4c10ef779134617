"""Mergeable sufficient statistics.

A fit that depends on the data only through sums over the cases can be computed shard by
shard: the statistics of two shards add up to the statistics of their union, so data held
in pieces (chunks of a large matrix, a stream, the sites of a consortium) never has to be
gathered in one place. The objects here can be added, compared, pickled and stored.

* :class:`BinaryClassCounts` — binary features and a binary class: the class sizes
  (N_0, N_1) and the number of ones of every feature in each class, (I_{0,j}, I_{1,j}).
  They determine the absolute correlation ``|COR_j|`` (thesis eq. 2.1, the statistic of the correlation selection), the
  Bayesian naive Bayes model of the selected features and its adjustment factor (which
  needs only N_0, N_1 and γ).

:meth:`BinaryClassCounts.from_dask` computes them from a chunked ``dask.array`` on the
workers (one chunk at a time, tree-reduced), so X is never gathered; dask is an optional
dependency, imported only there (importing hdbayes never imports dask).

* :class:`GaussianClassMoments` — real features and a class with G values: per class the
  size n_g, the means and the centred sums of squares of every feature, merged by the
  pairwise update of Chan, Golub & LeVeque (stable at a large offset); they give the
  one-way ANOVA F statistic (Li 2009 eq. 25) and the Gaussian classifier's class moments.

* :class:`CategoricalClassCounts` — categorical features (level codes 0..L−1) and a class with G
  values: the class sizes and, per feature, the G × L table of class by level. They determine
  Pearson's X² of every feature (docs/categorical_correction.md eq. C7), the categorical naive Bayes
  model of the selected features and its adjustment factor (which needs only the class sizes, L and γ).

The one way over the chunks of a dask array, used by every chunked fit of the package:
:func:`reduce_chunks` (a mergeable statistic of every block, merged by a tree over the row
chunks and joined over the column chunks, input errors re-raised naming the chunk, see
:func:`chunk_label`), :func:`map_row_chunks` (a prediction of every row chunk, as a dask
array), :func:`align_rows` and :func:`dask_class_codes` (labels re-chunked and coded).
"""

from __future__ import annotations

import math
import operator

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array
from sklearn.utils.validation import _get_feature_names, check_is_fitted

from hdbayes._validation import (
    binarize_features,
    check_binary_features,
    check_class_labels,
    check_count,
    check_level_codes,
    column_label,
    feature_label,
    first_entry,
    is_dask_array,
    plain_value,
)
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection import correlation_from_sums, f_from_sums_of_squares, pearson_chi_square

__all__ = ["BinaryClassCounts", "CategoricalClassCounts", "GaussianClassMoments", "is_dask_array"]


def chunk_label(index, row_chunks):
    """How a message names row chunk ``index`` of a dask array: ``chunk 3 of X (rows 300..399)``."""
    sizes = row_chunks[:index + 1]
    if any(math.isnan(size) for size in sizes):
        return f"chunk {index} of X (rows unknown)"
    start = int(sum(sizes[:-1]))
    return f"chunk {index} of X (rows {start}..{start + int(sizes[-1]) - 1})"


def check_binary_chunk(x, threshold, where, columns, feature_names=None):
    """A chunk of X with values 0/1 (dense, or sparse as CSC), as the in-memory checks make it.

    ``threshold`` is None (X must already be 0/1), a float or an array of per-column
    thresholds (values above become 1). A value that is not finite, or not 0/1 without a
    threshold, is an input error naming the chunk (``where``, see :func:`chunk_label`) and the
    column: ``columns`` is the global index of the chunk's first column (an int) or the global
    index of each of its columns (an array).
    """
    if sp.issparse(x):
        x = x.tocsc()
        values = x.data
    else:
        x = np.asarray(x)
        values = x
    if values.dtype.kind not in "biuf":
        raise InputTypeError(f"X must hold numbers; {where} has dtype {values.dtype}")

    def feature(column):
        return column_label(column, columns, feature_names)

    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
        if bad.any():
            column, value = first_entry(x, bad)
            raise InputValueError(f"{where} holds {value:g} in {feature(column)}; X must be finite")
    if threshold is not None:
        return binarize_features(x, threshold)
    bad = (values != 0) & (values != 1)
    if bad.any():
        column, value = first_entry(x, bad)
        raise InputValueError(
            f"X must hold binary features (0/1): {feature(column)} has the value {value:g} in {where}; "
            "pass binarize=<threshold> to binarize continuous data"
        )
    return x


def _chunk_ones(x, y01, *, where, columns, threshold, feature_names):
    """The :class:`BinaryClassCounts` of one block of X (its columns ``columns``), after checking it and its labels."""
    x = check_binary_chunk(x, threshold, where, columns.start, feature_names)
    if y01.dtype.kind not in "biuf" or not np.all((y01 == 0) | (y01 == 1)):
        raise InputValueError(f"y must be the class coded 0/1; its part for {where} is not")
    return BinaryClassCounts(*_count_ones(x, y01))


def _join_counts(parts):
    """The statistics of column blocks side by side (the class sizes are the same in every block)."""
    return BinaryClassCounts(parts[0].class_counts, np.hstack([part.ones for part in parts]))


# -- chunked data: one way to reduce statistics over the chunks of a dask array and to map over its rows --------


def check_dask_matrix(X, *, numeric=True):
    """Refuse what is not a 2-D ``dask.array`` of numbers with a known number of columns."""
    if not is_dask_array(X):
        raise InputTypeError(f"X must be a dask array, got {type(X).__name__}")
    if X.ndim != 2:
        raise InputValueError(f"X must be 2-D (cases × features), got {X.ndim} dimension(s)")
    if numeric and X.dtype.kind not in "biuf":
        raise InputTypeError(f"X must hold numbers, got dtype {X.dtype}")
    if math.isnan(X.shape[1]):
        raise InputValueError("X has an unknown number of columns")
    return X


def check_finite_chunk(x):
    """One chunk of a dask X as float64 (dense, or CSR when sparse), refused if it does not hold numbers or
    holds a value that is not finite (the caller names the chunk in the message)."""
    x = sp.csr_matrix(x) if sp.issparse(x) else np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise InputTypeError(f"X must hold numbers, got dtype {x.dtype}")
    x = x.astype(np.float64, copy=False)
    bad = ~np.isfinite(x.data if sp.issparse(x) else x)
    if bad.any():
        j, value = first_entry(x, bad)
        raise InputValueError(f"X holds {value:g} in {feature_label(j, None)}; X must be finite")
    return x


def _checked_array(X, *, finite):
    """X through scikit-learn's check_array (dense or sparse, numbers, any size), its errors as input errors."""
    try:
        return check_array(
            X, accept_sparse=("csr", "csc", "coo"), dtype="numeric", ensure_all_finite=finite,
            ensure_min_samples=0, ensure_min_features=0, input_name="X",
        )  # fmt: skip
    except ValueError as error:
        raise InputValueError(str(error)) from None
    except TypeError as error:
        raise InputTypeError(str(error)) from None


def check_prediction_chunks(estimator, X, method):
    """(X, n_outputs, dtype) for mapping ``method`` of a fitted classifier over the row chunks of a
    dask X (:func:`map_row_chunks`): X a numeric 2-D dask array with the estimator's number of features;
    ``predict`` gives one label per row, the other methods one float per class."""
    check_is_fitted(estimator)
    X = check_dask_matrix(X)
    if X.shape[1] != estimator.n_features_in_:
        raise InputValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting {estimator.n_features_in_} "
            "features as input."
        )
    classes = estimator.classes_
    return (X, None, classes.dtype) if method == "predict" else (X, classes.shape[0], np.float64)


def _method_on_rows(x, *, where, model, method, kwargs):
    """``method`` of the fitted ``model`` on one row chunk of a dask X."""
    return getattr(model, method)(x, **kwargs)


def predict_row_chunks(model, X, method, **kwargs):
    """``method`` of a fitted classifier that uses every column, on every row chunk of a dask X, as a dask array
    (:func:`check_prediction_chunks`, then :func:`map_row_chunks`)."""
    X, n_outputs, dtype = check_prediction_chunks(model, X, method)
    return map_row_chunks(X, _method_on_rows, n_outputs=n_outputs, dtype=dtype, model=model, method=method,
                          kwargs=kwargs)  # fmt: skip


def align_rows(y, X):
    """y (numpy or dask, 1-D) as a dask array with X's row chunks.

    With row chunks of X of unknown size y must be a dask array with as many chunks (each
    chunk's length is then checked where it is used, see :func:`reduce_chunks`).
    """
    import dask.array as da

    n = X.shape[0]
    if is_dask_array(y):
        if y.ndim != 1:
            raise InputValueError(f"y must be 1-D, got shape {tuple(y.shape)}")
        if math.isnan(n) or math.isnan(y.shape[0]):
            if y.numblocks[0] != X.numblocks[0]:
                raise InputValueError(
                    f"X and y have chunks of unknown size and different numbers of row chunks ({X.numblocks[0]} "
                    f"and {y.numblocks[0]}); call compute_chunk_sizes() on them first"
                )
            return y
    else:
        y = np.asarray(y)
        if y.ndim != 1:
            raise InputValueError(f"y must be 1-D, got shape {tuple(y.shape)}")
        if math.isnan(n):
            raise InputValueError(
                "X has row chunks of unknown size: call X.compute_chunk_sizes() first, or pass y as a dask array "
                "with the same row chunks"
            )
    if y.shape[0] != n:
        raise InputValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if not is_dask_array(y):
        return da.from_array(y, chunks=(X.chunks[0],))
    return y if y.chunks[0] == X.chunks[0] else y.rechunk((X.chunks[0],))


def _unique_labels(block):
    return np.unique(np.asarray(block))


def _label_codes(block, classes):
    block = np.asarray(block)
    codes = np.clip(np.searchsorted(classes, block), 0, classes.shape[0] - 1)
    unknown = classes[codes] != block
    if unknown.any():
        raise InputValueError(
            f"y contains the label {plain_value(block[unknown][0])}, which is not in classes {classes.tolist()}"
        )
    return codes.astype(np.int64)


def dask_class_codes(y, classes=None, *, single_class_allowed=False, classifier=True):
    """(classes, codes) of labels y (numpy or dask, 1-D): the sorted classes (computed from the
    distinct labels of each chunk, with the in-memory checks of
    :func:`hdbayes._validation.check_class_labels` for a ``classifier``, unless given) and the
    index of each case's class, a dask array for a dask y (a label outside ``classes`` is an
    input error)."""

    def check(labels):
        if labels.dtype.kind == "f" and not np.isfinite(labels).all():
            raise InputValueError("Input y contains NaN or infinity.")
        if not classifier:
            return np.unique(labels)
        return check_class_labels(labels, single_class_allowed=single_class_allowed)

    if not is_dask_array(y):
        y = np.asarray(y)
        if y.ndim != 1:
            raise InputValueError(f"y must be 1-D, got shape {tuple(y.shape)}")
        found = check(y)
        classes = found if classes is None else classes
        return classes, _label_codes(y, classes)
    if y.ndim != 1:
        raise InputValueError(f"y must be 1-D, got shape {tuple(y.shape)}")
    if classes is None:
        classes = check(np.unique(np.asarray(y.map_blocks(_unique_labels, chunks=(np.nan,), dtype=y.dtype).compute())))
    return classes, y.map_blocks(_label_codes, classes, dtype=np.int64, meta=np.empty(0, dtype=np.int64))


def _name_the_chunk(error, where):
    """An input error raised inside a chunk, with the chunk named in its message (once)."""
    message = str(error)
    if where in message:
        return error
    return type(error)(f"{where}: {message}")


def _block_statistic(x, y, i, j, function, options, row_chunks, col_bounds):
    """``function`` on block (i, j) of X with the labels of row chunk i: the chunk named in its errors."""
    where = chunk_label(i, row_chunks)
    if y is not None:
        y = np.asarray(y)
        if y.shape != (x.shape[0],):
            raise InputValueError(
                f"{where} has {x.shape[0]} rows but the matching chunk of y has shape {y.shape}: X and y must have "
                "the same row chunks"
            )
    try:
        return function(x, y, where=where, columns=slice(*col_bounds[j]), **options)
    except (InputValueError, InputTypeError) as error:
        raise _name_the_chunk(error, where) from None


def _merge_all(merge, *parts):
    result = parts[0]
    for part in parts[1:]:
        result = merge(result, part)
    return result


def reduce_chunks(X, y, function, *, merge=operator.add, join=None, split_every=None, **options):
    """A mergeable statistic of a chunked ``dask.array``, computed where the chunks live.

    ``function(x, y, where=..., columns=..., **options)`` computes the statistic of one block
    ``x`` of X (a numpy array or ``scipy.sparse`` matrix) with ``y`` the matching labels (or
    None), ``where`` the block's name for messages (:func:`chunk_label`) and ``columns`` the
    slice of X's columns it holds; an input error it raises is re-raised with the chunk named.
    The statistics of the row chunks are merged by a tree of ``merge`` (fan-in
    ``split_every``, default 8) in row order, so only statistics move and X is never
    gathered. With ``join=None`` X is first re-chunked to a single column chunk; otherwise
    the statistics of the column blocks are computed apart and ``join(list)`` puts them
    side by side (in column order). Runs on the current dask scheduler (a
    ``distributed.Client`` if one is active). ``options`` are shipped once, not per task.

    Returns
    -------
    The statistic of the whole of X (and y).
    """
    import dask

    if join is None and X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    fan_in = 8 if split_every is None else int(split_every)
    if fan_in < 2:
        raise InputValueError(f"split_every must be at least 2, got {split_every}")
    if y is not None:
        y = align_rows(y, X)
        y_blocks = y.to_delayed().ravel()
    blocks = X.to_delayed()
    col_bounds = tuple(zip(np.cumsum((0,) + X.chunks[1][:-1]).tolist(), np.cumsum(X.chunks[1]).tolist()))
    shared = dask.delayed(options, traverse=False)
    statistic = dask.delayed(_block_statistic, pure=True)
    merged = dask.delayed(_merge_all, pure=True)
    results = []
    for j in range(X.numblocks[1]):
        parts = [statistic(blocks[i, j], None if y is None else y_blocks[i], i, j, function, shared, X.chunks[0],
                           col_bounds) for i in range(X.numblocks[0])]  # fmt: skip
        while len(parts) > 1:
            parts = [merged(merge, *parts[k:k + fan_in]) for k in range(0, len(parts), fan_in)]
        results.append(parts[0])
    results = dask.compute(*results)
    return results[0] if join is None else join(list(results))


def _map_block(x, function, options, row_chunks, block_info=None):
    where = chunk_label(block_info[0]["chunk-location"][0], row_chunks) if block_info else "a chunk of X"
    try:
        return function(x, where=where, **options)
    except (InputValueError, InputTypeError) as error:
        raise _name_the_chunk(error, where) from None


def map_row_chunks(X, function, *, n_outputs=None, dtype=np.float64, **options):
    """``function(x, where=..., **options)`` on every row chunk of a dask X, as a dask array.

    X is re-chunked to a single column chunk (select the columns a model uses first); the
    result has X's row chunks and shape (n,) (``n_outputs=None``) or (n, n_outputs). An
    input error raised on a chunk names it (:func:`chunk_label`).
    """
    X = X.rechunk({1: -1}) if X.numblocks[1] > 1 else X
    dtype = np.dtype(dtype)
    arguments = {"function": function, "options": options, "row_chunks": X.chunks[0]}
    if n_outputs is None:
        return X.map_blocks(_map_block, drop_axis=1, dtype=dtype, meta=np.empty(0, dtype=dtype), **arguments)
    return X.map_blocks(
        _map_block, chunks=(X.chunks[0], (int(n_outputs),)), dtype=dtype, meta=np.empty((0, 0), dtype=dtype),
        **arguments,
    )  # fmt: skip


def _names_array(feature_names, p):
    if feature_names is None:
        return None
    names = np.asarray(feature_names, dtype=object)
    if names.shape != (p,):
        raise InputValueError(f"feature_names must hold one name per feature ({p}), got shape {names.shape}")
    return names


def _count_ones(X, y01):
    """(class sizes, ones per class and feature) of checked 0/1 X (dense or sparse) and y coded 0/1.

    Exact integers (int64): float data are summed in float64, exact for n < 2^53.
    """
    in_class1 = np.asarray(y01) == 1
    n1 = int(np.count_nonzero(in_class1))
    class_counts = np.array([in_class1.shape[0] - n1, n1], dtype=np.int64)
    if sp.issparse(X):
        total = np.asarray(X.sum(axis=0, dtype=np.float64)).ravel()
        ones1 = np.asarray(X.T @ in_class1.astype(np.float64)).ravel()
    elif X.dtype.kind in "biu":
        total = X.sum(axis=0, dtype=np.int64)
        ones1 = X[in_class1].sum(axis=0, dtype=np.int64)
    else:
        Xf = np.asarray(X, dtype=np.float64)
        total = Xf.sum(axis=0)
        ones1 = in_class1.astype(np.float64) @ Xf
    ones1 = np.rint(ones1).astype(np.int64)
    ones = np.vstack([np.rint(total).astype(np.int64) - ones1, ones1])
    return class_counts, ones


class _Statistics:
    """What the mergeable statistics share: equality by value over their arrays (``_fields``, the constructor's
    arguments before ``feature_names``, and the feature names), pickling by those arguments, ``sum(shards)``
    starting from 0, and the checks before adding two of them."""

    __hash__ = None  # compared by value (arrays), so not hashable
    _fields: tuple[str, ...] = ()

    @staticmethod
    def _integers(name, values):
        """``values`` as a new int64 array (integers, or floats with integer values), else a type error."""
        values = np.array(values, copy=True)
        if values.dtype.kind in "biu":
            return values.astype(np.int64)
        if values.dtype.kind == "f" and np.all(np.isfinite(values)) and np.array_equal(values, np.rint(values)):
            return values.astype(np.int64)
        raise InputTypeError(f"{name} must hold integer counts, got dtype {values.dtype}")

    @staticmethod
    def _classes(classes):
        """(a new array of the class labels, G), refusing labels that are not 1-D, sorted and distinct."""
        classes = np.array(classes, copy=True)
        G = classes.shape[0] if classes.ndim == 1 else -1
        if G < 0 or (G > 1 and not (classes[1:] > classes[:-1]).all()):
            raise InputValueError("classes must be a 1-D array of sorted distinct labels")
        return classes, G

    def _addable(self, other):
        """The feature names of ``self + other``, after refusing statistics of other features."""
        if other.n_features != self.n_features:
            raise InputValueError(f"cannot add the statistics of {self.n_features} and of {other.n_features} features")
        return _merged_names(self.feature_names, other.feature_names)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # sum(shards) starts from 0
            return self
        return NotImplemented

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return _same_names(self.feature_names, other.feature_names) and all(
            np.array_equal(getattr(self, name), getattr(other, name)) for name in self._fields
        )

    def __reduce__(self):
        return (type(self), tuple(getattr(self, name) for name in self._fields) + (self.feature_names,))


class BinaryClassCounts(_Statistics):
    """The sufficient statistics of binary features and a binary class.

    ``class_counts[c]`` = N_c, the number of cases of class c (c = 0, 1), and ``ones[c, j]``
    = I_{c,j}, the number of cases of class c with x_j = 1. Two shards' statistics added
    (``a + b``, or ``sum(shards)``) are the statistics of their union; the object is
    immutable, compares by value, pickles, and gives the |correlation| of every feature
    with the class (:meth:`correlation`) exactly as :func:`hdbayes.selection.abs_correlation`
    computes it on the data.

    Parameters
    ----------
    class_counts : array-like of shape (2,)
        (N_0, N_1), integers ≥ 0.
    ones : array-like of shape (2, p)
        I_{c,j}, integers with 0 ≤ I_{c,j} ≤ N_c.
    feature_names : array-like of shape (p,), optional
        The features' names; statistics with names add only to statistics with the same
        names (or without names).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    >>> y = np.array([1, 1, 0, 0])
    >>> counts = BinaryClassCounts.from_data(X[:3], y[:3]) + BinaryClassCounts.from_data(X[3:], y[3:])
    >>> counts
    BinaryClassCounts(class_counts=[2, 2], n_features=2)
    >>> counts == BinaryClassCounts.from_data(X, y)
    True
    >>> counts.correlation()
    array([1., 0.])
    """

    _fields = ("class_counts", "ones")

    def __init__(self, class_counts, ones, feature_names=None):
        class_counts = self._integers("class_counts", class_counts)
        ones = self._integers("ones", ones)
        if class_counts.shape != (2,):
            raise InputValueError(f"class_counts must hold two counts (N_0, N_1), got shape {class_counts.shape}")
        if ones.ndim != 2 or ones.shape[0] != 2:
            raise InputValueError(f"ones must have shape (2, n_features), got {ones.shape}")
        if (class_counts < 0).any() or (ones < 0).any() or (ones > class_counts[:, None]).any():
            raise InputValueError("counts must satisfy 0 <= ones[c, j] <= class_counts[c]")
        class_counts.setflags(write=False)
        ones.setflags(write=False)
        self.class_counts = class_counts
        self.ones = ones
        self.feature_names = _names_array(feature_names, ones.shape[1])
        if self.feature_names is not None:
            self.feature_names.setflags(write=False)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_data(cls, X, y, *, feature_names=None):
        """The statistics of binary data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p)
            Values 0/1 (any other value, NaN included, is refused naming its column); any
            number of rows, none included.
        y : array-like of shape (n_samples,)
            The class coded 0/1 (or bool).
        feature_names : array-like of shape (p,), optional
            Default: the columns of a pandas DataFrame whose column names are all strings.

        Returns
        -------
        BinaryClassCounts
        """
        if feature_names is None:
            feature_names = _get_feature_names(X)
        X = _checked_array(X, finite=False)
        n, p = X.shape
        names = _names_array(feature_names, p)
        X = check_binary_features(X, None, names)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise InputValueError(f"y must be 1-D with {n} entries (one per row of X), got shape {tuple(y.shape)}")
        if y.dtype.kind not in "biuf" or not np.all((y == 0) | (y == 1)):
            raise InputValueError("y must be the class coded 0/1")
        return cls(*_count_ones(X, y), feature_names=names)

    @classmethod
    def _from_checked(cls, X, y01, feature_names=None):
        """:meth:`from_data` on data an estimator has already checked: X with values 0/1 (dense or
        CSC) and y01 coded 0/1 of the same length; not checked again."""
        return cls(*_count_ones(X, y01), feature_names=feature_names)

    @classmethod
    def from_dask(cls, X, y, *, binarize=None, feature_names=None, split_every=None):
        """The statistics of binary data held in a chunked ``dask.array``, computed on the workers.

        Every chunk of X (any row and column chunking; dense or ``scipy.sparse`` chunks) is
        checked and counted where it lives, together with the matching part of y (re-chunked
        to X's row chunks); the (2, chunk columns) counts are summed over the row chunks by a
        tree reduction and joined over the column chunks, so only p-length statistics move
        and X is never gathered. Exact integers: equal to :meth:`from_data` on the whole data.
        Runs on the current dask scheduler (a ``distributed.Client`` if one is active).

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, p)
            Values 0/1, or numbers binarized by ``binarize``. A chunk with NaN, infinity or
            (without ``binarize``) a value other than 0/1 is an input error naming the chunk
            (its rows) and the column.
        y : dask.array.Array or array-like of shape (n_samples,)
            The class coded 0/1. With row chunks of X of unknown size, y must be a dask
            array with the same number of row chunks (a chunk of another length is an
            input error naming it).
        binarize : float, optional
            A fixed threshold (values above it become 1), applied chunk by chunk.
        feature_names : array-like of shape (p,), optional
            The features' names.
        split_every : int, optional
            Fan-in of the tree reduction (dask's default if None).

        Returns
        -------
        BinaryClassCounts
        """
        X = check_dask_matrix(X)
        if isinstance(binarize, str) or not (binarize is None or np.isfinite(float(binarize))):
            raise InputValueError(
                f"binarize must be a fixed finite threshold or None for chunked data, got {binarize!r}"
            )
        threshold = None if binarize is None else float(binarize)
        names = _names_array(feature_names, X.shape[1])
        counts = reduce_chunks(
            X, y, _chunk_ones, join=_join_counts, split_every=split_every, threshold=threshold, feature_names=names
        )
        return cls(counts.class_counts, counts.ones, feature_names=names)

    @classmethod
    def zero(cls, n_features, *, feature_names=None):
        """The statistics of no data on ``n_features`` features (the neutral element of ``+``).

        Parameters
        ----------
        n_features : int
            p.
        feature_names : array-like of shape (p,), optional
            The features' names.

        Returns
        -------
        BinaryClassCounts
            Class sizes and counts all 0.
        """
        return cls(np.zeros(2, dtype=np.int64), np.zeros((2, int(n_features)), dtype=np.int64), feature_names)

    # -- the counts --------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """n = N_0 + N_1."""
        return int(self.class_counts.sum())

    @property
    def n_features(self) -> int:
        """p."""
        return int(self.ones.shape[1])

    def constant_features(self):
        """Mark the features that take one value on every case (no ones, or only ones).

        Returns
        -------
        ndarray of bool, shape (p,)
            True for a constant feature.
        """
        total = self.ones.sum(axis=0)
        return (total == 0) | (total == self.n_samples)

    def correlation(self):
        """|COR_j|, the absolute sample correlation of every feature with the class (thesis eq. 2.1).

        Bit-identical to :func:`hdbayes.selection.abs_correlation` on the data: it is
        :func:`hdbayes.selection.correlation_from_sums` with Σ x y = I_1 and
        Σ x = Σ x² = I_0 + I_1; 0 for a constant feature or a constant class, and for no data.

        Returns
        -------
        ndarray of shape (p,)
            |COR_j| of every feature.
        """
        n = self.n_samples
        if n == 0:
            return np.zeros(self.n_features)
        sum_x = self.ones.sum(axis=0).astype(np.float64)
        return np.abs(correlation_from_sums(self.ones[1], sum_x, sum_x, n, self.class_counts[1]))

    # -- algebra -----------------------------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, BinaryClassCounts):
            return NotImplemented
        names = self._addable(other)
        return BinaryClassCounts(self.class_counts + other.class_counts, self.ones + other.ones, names)

    def __repr__(self):
        counts = ", ".join(str(int(c)) for c in self.class_counts)
        text = f"BinaryClassCounts(class_counts=[{counts}], n_features={self.n_features}"
        if self.feature_names is not None:
            shown = ", ".join(repr(str(name)) for name in self.feature_names[:3])
            text += f", feature_names=[{shown}{', ...' if self.n_features > 3 else ''}]"
        return text + ")"


def _class_moments(X, codes, n_classes):
    """(class sizes, means, scatter) of checked numeric X (dense or sparse) by a two-pass
    computation within each class: the mean first, then Σ (x − mean)² (never raw sums of squares)."""
    p = X.shape[1]
    counts = np.bincount(codes, minlength=n_classes).astype(np.int64)
    means = np.zeros((n_classes, p))
    scatter = np.zeros((n_classes, p))
    for g in np.flatnonzero(counts):
        rows = codes == g
        if sp.issparse(X):
            block = sp.csc_matrix(X[rows], dtype=np.float64)
            block.sum_duplicates()
            mean = np.asarray(block.sum(axis=0)).ravel() / counts[g]
            column = np.repeat(np.arange(p), np.diff(block.indptr))
            deviation = block.data - mean[column]
            scatter[g] = np.bincount(column, weights=deviation**2, minlength=p) + (
                counts[g] - np.diff(block.indptr)) * mean**2  # fmt: skip
        else:
            block = np.asarray(X[rows], dtype=np.float64)
            mean = block.mean(axis=0)
            scatter[g] = ((block - mean) ** 2).sum(axis=0)
        means[g] = mean
    return counts, means, scatter


def _chunk_moments(x, codes, *, where, columns, classes):
    """The :class:`GaussianClassMoments` of one block of a dask X (finite numbers, checked)."""
    x = sp.csr_matrix(x) if sp.issparse(x) else np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise InputTypeError(f"X must hold numbers; {where} has dtype {x.dtype}")
    values = x.data if sp.issparse(x) else x
    bad = ~np.isfinite(values)
    if bad.any():
        column, value = first_entry(x, bad)
        raise InputValueError(f"{where} holds {value:g} in {feature_label(columns.start + column)}; X must be finite")
    return GaussianClassMoments(classes, *_class_moments(x, np.asarray(codes), classes.shape[0]))


def _join_moments(parts):
    first = parts[0]
    return GaussianClassMoments(
        first.classes, first.class_counts, np.hstack([part.means for part in parts]),
        np.hstack([part.scatter for part in parts]),
    )  # fmt: skip


class GaussianClassMoments(_Statistics):
    """The sufficient statistics of real features and a class with G values: per-class moments.

    ``class_counts[g]`` = n_g, ``means[g, j]`` = x̄_gj, the class mean of feature j, and
    ``scatter[g, j]`` = Σ_{i in class g} (x_ij − x̄_gj)², the centred sum of squares. They
    determine the one-way ANOVA F statistic of every feature (:meth:`f_statistic`, Li 2009
    eq. 25, as :func:`hdbayes.selection.f_statistic` computes it on the data) and the
    Gaussian classifier's class means and within-class spreads. Two shards' statistics
    added (``a + b``, ``sum(shards)``) are those of their union, merged by the pairwise
    update of Chan, Golub & LeVeque (1979),

        n = n_a + n_b,  δ = x̄_b − x̄_a,  x̄ = x̄_a + δ n_b/n,  M = M_a + M_b + δ² n_a n_b/n,

    which stays accurate when the features have a large offset (raw sums of squares would
    cancel). Classes are labels; shards with different classes merge over the union (a
    class absent from a shard counts 0 there). Immutable, compared by value (equal up to
    rounding is ``np.allclose`` on the arrays, sums of floats depend on their order),
    picklable.

    Parameters
    ----------
    classes : array-like of shape (G,)
        Sorted distinct class labels.
    class_counts : array-like of shape (G,)
        n_g, integers ≥ 0.
    means, scatter : array-like of shape (G, p)
        x̄_gj and the centred sums of squares (≥ 0; 0 for an empty class).
    feature_names : array-like of shape (p,), optional
        The features' names.

    Examples
    --------
    >>> X = np.array([[1.0, 5.0], [3.0, 4.0], [0.0, 6.0], [2.0, 9.0], [7.0, 1.0]])
    >>> y = np.array(["a", "a", "b", "b", "b"])
    >>> m = GaussianClassMoments.from_data(X[:2], y[:2]) + GaussianClassMoments.from_data(X[2:], y[2:])
    >>> m.class_counts.tolist(), m.means.tolist(), m.scatter.tolist()
    ([2, 3], [[2.0, 4.5], [3.0, 5.333333333333333]], [[2.0, 0.5], [26.0, 32.666666666666664]])
    >>> from hdbayes.selection import f_statistic
    >>> bool(np.allclose(m.f_statistic(), f_statistic(X, y), rtol=1e-12))
    True
    """

    _fields = ("classes", "class_counts", "means", "scatter")

    def __init__(self, classes, class_counts, means, scatter, feature_names=None):
        counts = self._integers("class_counts", class_counts)
        means = np.array(means, dtype=np.float64, copy=True)
        scatter = np.array(scatter, dtype=np.float64, copy=True)
        classes, G = self._classes(classes)  # after the conversions, as they were checked before
        if counts.shape != (G,) or means.ndim != 2 or means.shape[0] != G or scatter.shape != means.shape:
            raise InputValueError(
                f"class_counts must have shape ({G},) and means and scatter ({G}, n_features); got {counts.shape}, "
                f"{means.shape} and {scatter.shape}"
            )
        if (counts < 0).any() or not np.isfinite(means).all() or not np.isfinite(scatter).all() or (scatter < 0).any():
            raise InputValueError("class_counts and scatter must be >= 0 and the moments finite")
        for array in (classes, counts, means, scatter):
            array.setflags(write=False)
        self.classes, self.class_counts, self.means, self.scatter = classes, counts, means, scatter
        self.feature_names = _names_array(feature_names, means.shape[1])
        if self.feature_names is not None:
            self.feature_names.setflags(write=False)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_data(cls, X, y, *, classes=None, feature_names=None):
        """The moments of real data X (dense or sparse, finite) with class labels y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p)
            Finite numbers (any number of rows, none included).
        y : array-like of shape (n_samples,)
            Class labels.
        classes : array-like, optional
            The class labels (sorted), e.g. to include one absent from this shard; a label of y
            outside them is an input error. Default: the labels of y.
        feature_names : array-like of shape (p,), optional
            Default: the columns of a pandas DataFrame whose column names are all strings.

        Returns
        -------
        GaussianClassMoments
        """
        if feature_names is None:
            feature_names = _get_feature_names(X)
        X = _checked_array(X, finite=True)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise InputValueError(f"y must be 1-D with {X.shape[0]} entries (one per row of X), got shape {y.shape}")
        classes = np.unique(y) if classes is None else np.unique(np.asarray(classes))
        codes = _label_codes(y, classes) if y.size else np.zeros(0, dtype=np.int64)
        names = _names_array(feature_names, X.shape[1])
        return cls(classes, *_class_moments(X, codes, classes.shape[0]), feature_names=names)

    @classmethod
    def _from_checked(cls, X, codes, classes):
        """The moments of X already checked by an estimator (finite numbers) with class codes 0..G−1."""
        return cls(classes, *_class_moments(X, codes, classes.shape[0]))

    @classmethod
    def from_dask(cls, X, y, *, classes=None, feature_names=None, split_every=None):
        """The moments of data held in a chunked ``dask.array``, computed on the workers.

        Every block (any row and column chunking, dense or ``scipy.sparse``) is checked (a
        NaN or infinity is an input error naming the chunk and the column) and summarised
        where it lives; the blocks of a column are merged by a tree of pairwise updates and
        the column blocks joined, so only (G, p) statistics move. Equal to :meth:`from_data`
        up to rounding (relative 1e-12 on ordinary data).

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, p)
            Finite numbers.
        y : dask.array.Array or array-like of shape (n_samples,)
            Class labels; their distinct values are computed first unless ``classes`` is given.
        classes : array-like, optional
            The class labels (sorted); default those of y.
        feature_names : array-like of shape (p,), optional
            The features' names.
        split_every : int, optional
            Fan-in of the merge tree (default 8).

        Returns
        -------
        GaussianClassMoments
        """
        X = check_dask_matrix(X)
        names = _names_array(feature_names, X.shape[1])
        given = None if classes is None else np.unique(np.asarray(classes))
        classes, codes = dask_class_codes(y, given, classifier=False)
        moments = reduce_chunks(X, codes, _chunk_moments, join=_join_moments, split_every=split_every, classes=classes)
        return cls(classes, moments.class_counts, moments.means, moments.scatter, feature_names=names)

    @classmethod
    def zero(cls, n_features, classes, *, feature_names=None):
        """The statistics of no data (the neutral element of ``+``).

        Parameters
        ----------
        n_features : int
            p.
        classes : array-like
            The class labels.
        feature_names : array-like of shape (p,), optional
            The features' names.

        Returns
        -------
        GaussianClassMoments
            Class sizes, means and sums of squares all 0.
        """
        classes = np.unique(np.asarray(classes))
        shape = (classes.shape[0], int(n_features))
        return cls(classes, np.zeros(shape[0], dtype=np.int64), np.zeros(shape), np.zeros(shape), feature_names)

    # -- the moments -------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """n = Σ_g n_g."""
        return int(self.class_counts.sum())

    @property
    def n_features(self) -> int:
        """p."""
        return int(self.means.shape[1])

    def f_statistic(self):
        """The one-way ANOVA F statistic of every feature (Li 2009 eq. 25) from the moments.

        F = [Σ_g n_g (x̄_g − x̄)²/(G − 1)] / [Σ_g M_g/(n − G)] over the G classes with cases,
        with the rules of :func:`hdbayes.selection.f_statistic` (no within-class variation:
        ``inf`` if the class means differ, 0 for a constant feature), to which it is equal
        up to rounding (relative 1e-12 on ordinary data; its rescaling of values above
        2^500 is not repeated here).

        Returns
        -------
        ndarray of shape (p,)
            F of every feature.
        """
        present = self.class_counts > 0
        G = int(present.sum())
        n = self.n_samples
        if G < 2:
            raise InputValueError("the F statistic needs cases of at least two classes")
        if n <= G:
            raise InputValueError(f"the F statistic needs more cases ({n}) than classes ({G})")
        counts = self.class_counts[present].astype(np.float64)[:, None]
        means = self.means[present]
        grand = (counts * means).sum(axis=0) / n
        between = (counts * (means - grand) ** 2).sum(axis=0)
        within = self.scatter[present].sum(axis=0)
        return f_from_sums_of_squares(between, within, np.maximum(within + between, 1e-300), n, G)

    # -- algebra -----------------------------------------------------------------------------
    def _on_classes(self, classes):
        """The same moments over a superset of the classes (absent ones empty)."""
        if np.array_equal(classes, self.classes):
            return self.class_counts, self.means, self.scatter
        index = np.searchsorted(classes, self.classes)
        counts = np.zeros(classes.shape[0], dtype=np.int64)
        means, scatter = np.zeros((classes.shape[0], self.n_features)), np.zeros((classes.shape[0], self.n_features))
        counts[index], means[index], scatter[index] = self.class_counts, self.means, self.scatter
        return counts, means, scatter

    def __add__(self, other):
        if not isinstance(other, GaussianClassMoments):
            return NotImplemented
        names = self._addable(other)
        classes = _merged_classes(self.classes, other.classes)
        n_a, mean_a, m_a = self._on_classes(classes)
        n_b, mean_b, m_b = other._on_classes(classes)
        n = n_a + n_b
        safe = np.maximum(n, 1).astype(np.float64)[:, None]
        delta = mean_b - mean_a
        means = mean_a + delta * (n_b[:, None] / safe)
        scatter = m_a + m_b + delta**2 * (n_a[:, None].astype(np.float64) * n_b[:, None] / safe)
        return GaussianClassMoments(classes, n, means, scatter, names)

    def __repr__(self):
        return (
            f"GaussianClassMoments(classes={self.classes.tolist()!r}, class_counts={self.class_counts.tolist()}, "
            f"n_features={self.n_features})"
        )


def _count_levels(X, codes, n_classes, n_levels):
    """(class sizes, level counts (p, G, L)) of checked level codes X (dense, or sparse with the implicit
    entries at level 0, kept sparse) and class codes 0..G−1: levels 1..L − 1 counted per class (dense: the
    class's rows compared with l, in X's own dtype; sparse: one product of the class indicator with X == l),
    level 0 as the rest of each class. Exact integers."""
    codes = np.asarray(codes, dtype=np.int64)
    n_samples, n_features = X.shape
    class_counts = np.bincount(codes, minlength=n_classes).astype(np.int64)
    counts = np.zeros((n_features, n_classes, n_levels), dtype=np.int64)
    if sp.issparse(X):
        indicator = sp.csr_matrix((np.ones(n_samples), (codes, np.arange(n_samples))), shape=(n_classes, n_samples))
        for level in range(1, n_levels):
            product = (indicator @ (X == level)).toarray()
            counts[:, :, level] = np.rint(product).astype(np.int64).T
    else:
        X = np.asarray(X)
        for g in range(n_classes):
            rows = X[codes == g]
            for level in range(1, n_levels):
                counts[:, g, level] = np.count_nonzero(rows == level, axis=0)
    counts[:, :, 0] = class_counts[None, :] - counts[:, :, 1:].sum(axis=2)
    return class_counts, counts


def _levels_seen(X, n_levels):
    """L: ``n_levels`` when given, else the largest code of checked X plus one (at least 2)."""
    if n_levels is not None:
        return int(n_levels)
    values = X.data if sp.issparse(X) else X
    return max(int(values.max(initial=0)) + 1, 2)


def check_level_chunk(x, where, columns, n_levels=None, feature_names=None, limit_source="n_levels"):
    """A block of a dask X of level codes (dense, or CSR when sparse), checked as in memory: numbers, finite,
    integer codes below ``n_levels`` (see :func:`hdbayes._validation.check_level_codes`); errors name the
    block (``where``) and the feature (``columns``: the global index of its first column, or of each)."""
    x = sp.csr_matrix(x) if sp.issparse(x) else np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise InputTypeError(f"X must hold numbers; {where} has dtype {x.dtype}")
    values = x.data if sp.issparse(x) else x
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
        if bad.any():
            column, value = first_entry(x, bad)
            label = column_label(column, columns, feature_names)
            raise InputValueError(f"{where} holds {value:g} in {label}; X must be finite")
    return check_level_codes(x, n_levels, limit_source=limit_source, feature_names=feature_names, columns=columns)


def _chunk_levels(x, codes, *, where, columns, classes, n_levels, feature_names):
    """The :class:`CategoricalClassCounts` of one block of a dask X (its columns ``columns``), checked."""
    x = check_level_chunk(x, where, columns.start, n_levels, feature_names)
    return CategoricalClassCounts(classes, *_count_levels(x, codes, classes.shape[0], _levels_seen(x, n_levels)))


def _join_levels(parts):
    """The statistics of column blocks side by side (the same classes and class sizes; levels widened)."""
    n_levels = max(part.n_levels for part in parts)
    first = parts[0]
    return CategoricalClassCounts(
        first.classes, first.class_counts, np.concatenate([part._level_counts_on(n_levels) for part in parts])
    )


class CategoricalClassCounts(_Statistics):
    """The sufficient statistics of categorical features and a class with G values.

    ``class_counts[g]`` = N_g, the number of cases of class g, and ``level_counts[j, g, l]`` = I_jgl, the
    number of cases of class g with level l of feature j (level codes 0..L−1; each feature's G × L table has
    row sums N_g). They determine Pearson's X² of every feature (:meth:`chi_square`, docs/categorical_correction.md
    eq. C7, exactly as :class:`~hdbayes.selection_bias.BiasCorrectedCategoricalNB` computes it on the data) and
    that model. Two shards' statistics added (``a + b``, ``sum(shards)``) are the statistics of their union,
    exactly (integers): classes are labels and merge over the union (a class absent from a shard counts 0
    there), and the levels widen to the larger L (a level a shard never met counts 0 there). Immutable,
    compared by value, picklable.

    Parameters
    ----------
    classes : array-like of shape (G,)
        Sorted distinct class labels.
    class_counts : array-like of shape (G,)
        N_g, integers ≥ 0.
    level_counts : array-like of shape (p, G, L)
        I_jgl, integers ≥ 0 with Σ_l I_jgl = N_g; L ≥ 2.
    feature_names : array-like of shape (p,), optional
        The features' names.

    Examples
    --------
    >>> X = np.array([[0, 2], [1, 2], [1, 0], [2, 0]])
    >>> y = np.array(["a", "a", "b", "b"])
    >>> counts = CategoricalClassCounts.from_data(X[:2], y[:2]) + CategoricalClassCounts.from_data(X[2:], y[2:])
    >>> counts
    CategoricalClassCounts(classes=['a', 'b'], class_counts=[2, 2], n_features=2, n_levels=3)
    >>> counts == CategoricalClassCounts.from_data(X, y)
    True
    >>> counts.level_counts[1].tolist()  # feature 1: class a has level 2 twice, class b level 0 twice
    [[0, 0, 2], [2, 0, 0]]
    >>> counts.chi_square()
    array([2., 4.])
    """

    _fields = ("classes", "class_counts", "level_counts")

    def __init__(self, classes, class_counts, level_counts, feature_names=None):
        counts = self._integers("class_counts", class_counts)
        levels = self._integers("level_counts", level_counts)
        classes, G = self._classes(classes)
        if counts.shape != (G,) or levels.ndim != 3 or levels.shape[1] != G:
            raise InputValueError(
                f"class_counts must have shape ({G},) and level_counts (n_features, {G}, n_levels); got "
                f"{counts.shape} and {levels.shape}"
            )
        if levels.shape[2] < 2:
            raise InputValueError(f"level_counts must have at least 2 levels, got {levels.shape[2]}")
        if (counts < 0).any() or (levels < 0).any():
            raise InputValueError("class_counts and level_counts must be >= 0")
        if not (levels.sum(axis=2) == counts[None, :]).all():
            raise InputValueError("every feature's level counts must add up to the class sizes class_counts")
        for array in (classes, counts, levels):
            array.setflags(write=False)
        self.classes, self.class_counts, self.level_counts = classes, counts, levels
        self.feature_names = _names_array(feature_names, levels.shape[0])
        if self.feature_names is not None:
            self.feature_names.setflags(write=False)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_data(cls, X, y, *, classes=None, n_levels=None, feature_names=None):
        """The statistics of level codes X (dense or sparse, the implicit entries level 0) with labels y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p)
            Integer level codes 0, 1, 2, … (a non-integer, negative or non-finite value, or a code ≥
            ``n_levels``, is refused naming its feature); any number of rows, none included.
        y : array-like of shape (n_samples,)
            Class labels.
        classes : array-like, optional
            The class labels (sorted), e.g. to include one absent from this shard; a label of y outside
            them is an input error. Default: the labels of y.
        n_levels : int, optional
            L; default the largest code plus one (at least 2).
        feature_names : array-like of shape (p,), optional
            Default: the columns of a pandas DataFrame whose column names are all strings.

        Returns
        -------
        CategoricalClassCounts
        """
        if feature_names is None:
            feature_names = _get_feature_names(X)
        X = _checked_array(X, finite=True)
        X = X.tocsr() if sp.issparse(X) else X
        names = _names_array(feature_names, X.shape[1])
        n_levels = None if n_levels is None else check_count("n_levels", n_levels, minimum=2)
        check_level_codes(X, n_levels, feature_names=names)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise InputValueError(f"y must be 1-D with {X.shape[0]} entries (one per row of X), got shape {y.shape}")
        classes = np.unique(y) if classes is None else np.unique(np.asarray(classes))
        codes = _label_codes(y, classes) if y.size else np.zeros(0, dtype=np.int64)
        return cls._from_checked(X, codes, classes, _levels_seen(X, n_levels), feature_names=names)

    @classmethod
    def _from_checked(cls, X, codes, classes, n_levels, feature_names=None):
        """The statistics of level codes X already checked by an estimator, with class codes 0..G−1."""
        return cls(classes, *_count_levels(X, codes, classes.shape[0], n_levels), feature_names=feature_names)

    @classmethod
    def from_dask(cls, X, y, *, classes=None, n_levels=None, feature_names=None, split_every=None):
        """The statistics of level codes held in a chunked ``dask.array``, computed on the workers.

        Every block (any row and column chunking, dense or ``scipy.sparse``) is checked (a NaN, a
        non-integer, a negative code or one ≥ ``n_levels`` is an input error naming the chunk and the
        feature) and counted where it lives; the counts of a column are added over the row chunks by a tree
        and the column blocks joined, so only (p, G, L) counts move and X is never gathered. Exact integers:
        equal to :meth:`from_data` on the whole data.

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, p)
            Integer level codes 0, 1, 2, ….
        y : dask.array.Array or array-like of shape (n_samples,)
            Class labels; their distinct values are computed first unless ``classes`` is given.
        classes : array-like, optional
            The class labels (sorted); default those of y.
        n_levels : int, optional
            L; default the largest code plus one (at least 2).
        feature_names : array-like of shape (p,), optional
            The features' names.
        split_every : int, optional
            Fan-in of the merge tree (default 8).

        Returns
        -------
        CategoricalClassCounts
        """
        X = check_dask_matrix(X)
        names = _names_array(feature_names, X.shape[1])
        n_levels = None if n_levels is None else check_count("n_levels", n_levels, minimum=2)
        given = None if classes is None else np.unique(np.asarray(classes))
        classes, codes = dask_class_codes(y, given, classifier=False)
        counts = reduce_chunks(
            X, codes, _chunk_levels, join=_join_levels, split_every=split_every, classes=classes,
            n_levels=n_levels, feature_names=names,
        )  # fmt: skip
        return cls(classes, counts.class_counts, counts.level_counts, feature_names=names)

    @classmethod
    def zero(cls, n_features, classes, n_levels=2, *, feature_names=None):
        """The statistics of no data (the neutral element of ``+``).

        Parameters
        ----------
        n_features : int
            p.
        classes : array-like
            The class labels.
        n_levels : int, default=2
            L.
        feature_names : array-like of shape (p,), optional
            The features' names.

        Returns
        -------
        CategoricalClassCounts
            Class sizes and tables all 0.
        """
        classes = np.unique(np.asarray(classes))
        shape = (int(n_features), classes.shape[0], int(n_levels))
        return cls(classes, np.zeros(shape[1], dtype=np.int64), np.zeros(shape, dtype=np.int64), feature_names)

    # -- the counts --------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """n = Σ_g N_g."""
        return int(self.class_counts.sum())

    @property
    def n_features(self) -> int:
        """p."""
        return int(self.level_counts.shape[0])

    @property
    def n_levels(self) -> int:
        """L."""
        return int(self.level_counts.shape[2])

    def chi_square(self):
        """Compute Pearson's X² of every feature's class × level table (docs/categorical_correction.md eq. C7).

        The classes without cases and the levels that do not occur are left out (a constant feature has
        X² = 0); computed by the one compiled function the selection of
        :class:`~hdbayes.selection_bias.BiasCorrectedCategoricalNB` uses, so equal to it bit for bit.

        Returns
        -------
        ndarray of shape (p,)
            X² of every feature.
        """
        present = self.class_counts > 0
        return pearson_chi_square(self.level_counts[:, present], self.class_counts[present])

    def _level_counts_on(self, n_levels):
        """level_counts with the levels widened to ``n_levels`` (the new ones count 0)."""
        if n_levels == self.n_levels:
            return self.level_counts
        out = np.zeros(self.level_counts.shape[:2] + (n_levels,), dtype=np.int64)
        out[:, :, : self.n_levels] = self.level_counts
        return out

    def _on(self, classes, n_levels):
        """(class sizes, level counts) over a superset of the classes and ``n_levels`` ≥ L (new entries 0)."""
        levels = self._level_counts_on(n_levels)
        if np.array_equal(classes, self.classes):
            return self.class_counts, levels
        index = np.searchsorted(classes, self.classes)
        counts = np.zeros(classes.shape[0], dtype=np.int64)
        wide = np.zeros((self.n_features, classes.shape[0], n_levels), dtype=np.int64)
        counts[index], wide[:, index] = self.class_counts, levels
        return counts, wide

    def with_levels(self, n_levels):
        """The same statistics with L set to ``n_levels`` (refused if a level ≥ ``n_levels`` occurs).

        Parameters
        ----------
        n_levels : int
            The new L; levels the statistics do not have count 0.

        Returns
        -------
        CategoricalClassCounts
            The same classes, class sizes and counts.
        """
        n_levels = int(n_levels)
        if n_levels < self.n_levels:
            used = np.flatnonzero(self.level_counts[:, :, n_levels:].sum(axis=(0, 1)))
            if used.size:
                raise InputValueError(
                    f"the statistics hold level {n_levels + int(used[-1])}, outside 0..{n_levels - 1} (n_levels)"
                )
            return CategoricalClassCounts(
                self.classes, self.class_counts, self.level_counts[:, :, :n_levels], self.feature_names
            )
        return CategoricalClassCounts(self.classes, self.class_counts, self._level_counts_on(n_levels),
                                      self.feature_names)  # fmt: skip

    # -- algebra -----------------------------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, CategoricalClassCounts):
            return NotImplemented
        names = self._addable(other)
        classes = _merged_classes(self.classes, other.classes)
        n_levels = max(self.n_levels, other.n_levels)
        n_a, levels_a = self._on(classes, n_levels)
        n_b, levels_b = other._on(classes, n_levels)
        return CategoricalClassCounts(classes, n_a + n_b, levels_a + levels_b, names)

    def __repr__(self):
        return (
            f"CategoricalClassCounts(classes={self.classes.tolist()!r}, class_counts={self.class_counts.tolist()}, "
            f"n_features={self.n_features}, n_levels={self.n_levels})"
        )


def _merged_classes(a, b):
    """The sorted union of two statistics' class labels; labels of different kinds (numbers and strings),
    which numpy would silently turn into strings, are refused."""
    if (a.dtype.kind in "biuf") != (b.dtype.kind in "biuf"):
        raise InputTypeError(f"cannot merge classes {a.tolist()} and {b.tolist()}: numbers and other labels")
    try:
        return np.union1d(a, b)
    except TypeError as error:
        raise InputTypeError(f"cannot merge classes {a.tolist()} and {b.tolist()}") from error


def _same_names(a, b):
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _merged_names(a, b):
    """The feature names of a sum of statistics (refusing different ones)."""
    if a is not None and b is not None:
        differ = np.flatnonzero(a != b)
        if differ.size:
            j = int(differ[0])
            raise InputValueError(
                f"cannot add statistics of different features: feature {j} is {a[j]!r} in one and {b[j]!r} in the other"
            )
    return a if a is not None else b
