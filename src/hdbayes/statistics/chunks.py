"""The one way over the chunks of a dask array, used by every chunked fit and prediction of the package.

:func:`reduce_chunks` computes a mergeable statistic of every block where it lives, merges the row chunks'
statistics by a tree and joins the column blocks' (input errors re-raised naming the chunk, see
:func:`chunk_label`); :func:`map_row_chunks` maps a prediction over the row chunks, as a dask array
(:func:`predict_row_chunks` for a classifier that uses every column); :func:`align_rows` and
:func:`dask_class_codes` re-chunk and code the labels. dask is an optional dependency, imported only
inside these functions (importing hdbayes never imports dask).
"""

from __future__ import annotations

import math
import operator

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import (
    check_class_labels,
    feature_label,
    first_entry,
    is_dask_array,
    plain_value,
)
from hdbayes.exceptions import InputTypeError, InputValueError


def chunk_label(index, row_chunks):
    """How a message names row chunk ``index`` of a dask array: ``chunk 3 of X (rows 300..399)``."""
    sizes = row_chunks[: index + 1]
    if any(math.isnan(size) for size in sizes):
        return f"chunk {index} of X (rows unknown)"
    start = int(sum(sizes[:-1]))
    return f"chunk {index} of X (rows {start}..{start + int(sizes[-1]) - 1})"


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


def check_prediction_chunks(estimator, X, method):
    """(X, n_outputs, dtype) for mapping ``method`` of a fitted classifier over the row chunks of a
    dask X (:func:`map_row_chunks`): X a numeric 2-D dask array with the estimator's number of features;
    ``predict`` gives one label per row, ``atypicality`` one float per row, the other methods one float per class."""
    check_is_fitted(estimator)
    X = check_dask_matrix(X)
    if X.shape[1] != estimator.n_features_in_:
        raise InputValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting {estimator.n_features_in_} "
            "features as input."
        )
    classes = estimator.classes_
    if method == "predict":
        return X, None, classes.dtype
    if method == "atypicality":
        return X, None, np.float64
    return X, classes.shape[0], np.float64


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
            parts = [merged(merge, *parts[k : k + fan_in]) for k in range(0, len(parts), fan_in)]
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
