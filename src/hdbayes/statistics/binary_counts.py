"""Binary features and a binary class: :class:`BinaryClassCounts`.

The class sizes (N_0, N_1) and the number of ones of every feature in each class, (I_{0,j}, I_{1,j}).
They determine the absolute correlation ``|COR_j|`` (thesis eq. 2.1, the statistic of the correlation
selection), the Bayesian naive Bayes model of the selected features and its adjustment factor (which
needs only N_0, N_1 and γ). :meth:`BinaryClassCounts.from_dask` computes them on the workers from a
chunked ``dask.array`` (one chunk at a time, tree-reduced), so X is never gathered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _get_feature_names

from hdbayes._validation import (
    binarize_features,
    check_binary_features,
    column_label,
    first_entry,
)
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection import correlation_from_sums
from hdbayes.statistics._base import _checked_array, _names_array, _Statistics
from hdbayes.statistics.chunks import check_dask_matrix, reduce_chunks

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Self

    from numpy.typing import ArrayLike


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

    def __init__(self, class_counts: ArrayLike, ones: ArrayLike, feature_names: Sequence[str] | None = None) -> None:
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
    def from_data(cls, X: Any, y: ArrayLike, *, feature_names: Sequence[str] | None = None) -> Self:
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
    def from_dask(
        cls,
        X: Any,
        y: Any,
        *,
        binarize: float | str | ArrayLike | None = None,
        feature_names: Sequence[str] | None = None,
        split_every: int | None = None,
    ) -> Self:
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
    def zero(cls, n_features: int, *, feature_names: Sequence[str] | None = None) -> Self:
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

    def constant_features(self) -> np.ndarray:
        """Mark the features that take one value on every case (no ones, or only ones).

        Returns
        -------
        ndarray of bool, shape (p,)
            True for a constant feature.
        """
        total = self.ones.sum(axis=0)
        return (total == 0) | (total == self.n_samples)

    def correlation(self) -> np.ndarray:
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
