"""Mergeable sufficient statistics.

A fit that depends on the data only through sums over the cases can be computed shard by
shard: the statistics of two shards add up to the statistics of their union, so data held
in pieces (chunks of a large matrix, a stream, the sites of a consortium) never has to be
gathered in one place. The objects here can be added, compared, pickled and stored.

* :class:`BinaryClassCounts` — binary features and a binary class: the class sizes
  (N_0, N_1) and the number of ones of every feature in each class, (I_{0,j}, I_{1,j}).
  They determine |COR_j| (thesis eq. 2.1, the statistic of the correlation selection), the
  Bayesian naive Bayes model of the selected features and its adjustment factor (which
  needs only N_0, N_1 and γ).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array
from sklearn.utils.validation import _get_feature_names

from hdbayes._validation import check_binary_features
from hdbayes.exceptions import InputTypeError, InputValueError

__all__ = ["BinaryClassCounts"]


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


class BinaryClassCounts:
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

    __hash__ = None  # compared by value (arrays), so not hashable

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

    @staticmethod
    def _integers(name, values):
        values = np.array(values, copy=True)
        if values.dtype.kind in "biu":
            return values.astype(np.int64)
        if values.dtype.kind == "f" and np.all(np.isfinite(values)) and np.array_equal(values, np.rint(values)):
            return values.astype(np.int64)
        raise InputTypeError(f"{name} must hold integer counts, got dtype {values.dtype}")

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
        try:
            X = check_array(
                X, accept_sparse=("csr", "csc", "coo"), dtype="numeric", ensure_all_finite=False,
                ensure_min_samples=0, ensure_min_features=0, input_name="X",
            )  # fmt: skip
        except ValueError as error:
            raise InputValueError(str(error)) from None
        except TypeError as error:
            raise InputTypeError(str(error)) from None
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
    def zero(cls, n_features, *, feature_names=None):
        """The statistics of no data on ``n_features`` features (the neutral element of ``+``)."""
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
        """Boolean mask of the features that take one value on every case (no ones, or only ones)."""
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
        """
        n = self.n_samples
        if n == 0:
            return np.zeros(self.n_features)
        from hdbayes.selection import correlation_from_sums

        sum_x = self.ones.sum(axis=0).astype(np.float64)
        return np.abs(correlation_from_sums(self.ones[1], sum_x, sum_x, n, self.class_counts[1]))

    # -- algebra -----------------------------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, BinaryClassCounts):
            return NotImplemented
        if other.n_features != self.n_features:
            raise InputValueError(
                f"cannot add the statistics of {self.n_features} and of {other.n_features} features"
            )
        names = self.feature_names if self.feature_names is not None else other.feature_names
        if self.feature_names is not None and other.feature_names is not None:
            differ = np.flatnonzero(self.feature_names != other.feature_names)
            if differ.size:
                j = int(differ[0])
                raise InputValueError(
                    f"cannot add statistics of different features: feature {j} is {self.feature_names[j]!r} "
                    f"in one and {other.feature_names[j]!r} in the other"
                )
        return BinaryClassCounts(self.class_counts + other.class_counts, self.ones + other.ones, names)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # sum(shards) starts from 0
            return self
        return NotImplemented

    def __eq__(self, other):
        if not isinstance(other, BinaryClassCounts):
            return NotImplemented
        same_names = (self.feature_names is None and other.feature_names is None) or (
            self.feature_names is not None
            and other.feature_names is not None
            and np.array_equal(self.feature_names, other.feature_names)
        )
        return (
            same_names
            and np.array_equal(self.class_counts, other.class_counts)
            and np.array_equal(self.ones, other.ones)
        )

    def __reduce__(self):
        return (type(self), (self.class_counts, self.ones, self.feature_names))

    def __repr__(self):
        counts = ", ".join(str(int(c)) for c in self.class_counts)
        text = f"BinaryClassCounts(class_counts=[{counts}], n_features={self.n_features}"
        if self.feature_names is not None:
            shown = ", ".join(repr(str(name)) for name in self.feature_names[:3])
            text += f", feature_names=[{shown}{', ...' if self.n_features > 3 else ''}]"
        return text + ")"
