"""Real features and a class with G values: :class:`GaussianClassMoments`.

Per class the size n_g, the means and the centred sums of squares of every feature, merged by the
pairwise update of Chan, Golub & LeVeque (stable at a large offset); they give the one-way ANOVA F
statistic (Li 2009 eq. 25) and the Gaussian classifier's class moments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _get_feature_names

from hdbayes._validation import (
    feature_label,
    first_entry,
)
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection import f_from_sums_of_squares
from hdbayes.statistics._base import _checked_array, _merged_classes, _names_array, _Statistics
from hdbayes.statistics.chunks import _label_codes, check_dask_matrix, dask_class_codes, reduce_chunks

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Self

    from numpy.typing import ArrayLike


def class_statistics(X: ArrayLike, codes: ArrayLike, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sufficient statistics per class of the Gaussian classifier's chains: counts n_g, sums Σ x and sums of
    squares Σ x² (raw, as the samplers' conditionals take them; under ``np.errstate`` of the caller).

    Parameters
    ----------
    X : array-like of shape (n_samples, k)
        Checked finite numbers (the selected features).
    codes : array-like of shape (n_samples,)
        Class codes 0..G−1.
    n_classes : int
        G.

    Returns
    -------
    counts : ndarray of shape (G,)
        n_g, as floats.
    sums, squares : ndarray of shape (G, k)
        Σ x and Σ x² by class.
    """
    codes = np.asarray(codes)
    counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    indicator = np.zeros((n_classes, X.shape[0]))
    indicator[codes, np.arange(X.shape[0])] = 1.0
    # one memory layout, so that the product's rounding (BLAS picks its kernel by layout) does not depend on how
    # X was made: a column selection of a C array is not C-contiguous, the same columns gathered from dask are
    X = np.ascontiguousarray(X, dtype=np.float64)
    return counts, indicator @ X, indicator @ (X * X)


def class_scatter(X: ArrayLike, codes: ArrayLike, n_classes: int) -> np.ndarray:
    """Σ_{i in class g} (x_ij − x̄_gj)² of every feature, overflow allowed (``inf`` for values near the largest
    double; :class:`GaussianClassMoments` refuses those).

    Parameters
    ----------
    X : array-like of shape (n_samples, p)
        Checked finite numbers.
    codes : array-like of shape (n_samples,)
        Class codes 0..G−1.
    n_classes : int
        G.

    Returns
    -------
    ndarray of shape (G, p)
        The within-class scatter.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _class_moments(X, np.asarray(codes), n_classes)[2]


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

    def __init__(
        self,
        classes: ArrayLike,
        class_counts: ArrayLike,
        means: ArrayLike,
        scatter: ArrayLike,
        feature_names: Sequence[str] | None = None,
    ) -> None:
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
    def from_data(
        cls, X: Any, y: ArrayLike, *, classes: ArrayLike | None = None, feature_names: Sequence[str] | None = None
    ) -> Self:
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
    def _from_checked(cls, X, codes, classes, feature_names=None):
        """The moments of X already checked by an estimator (finite numbers) with class codes 0..G−1."""
        return cls(classes, *_class_moments(X, codes, classes.shape[0]), feature_names=feature_names)

    @classmethod
    def from_dask(
        cls,
        X: Any,
        y: Any,
        *,
        classes: ArrayLike | None = None,
        feature_names: Sequence[str] | None = None,
        split_every: int | None = None,
    ) -> Self:
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
    def zero(cls, n_features: int, classes: ArrayLike, *, feature_names: Sequence[str] | None = None) -> Self:
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

    def f_statistic(self) -> np.ndarray:
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

    def class_sums(self, columns: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The class sizes, sums and sums of squares of some features, from the moments.

        They are the statistics of :func:`class_statistics`: Σ x = n_g x̄, Σ x² = M + n_g x̄² (``inf`` where they
        overflow).

        Parameters
        ----------
        columns : array-like of int
            The features' indices.

        Returns
        -------
        counts : ndarray of shape (G,)
            The class sizes n_g, as floats.
        sums : ndarray of shape (G, len(columns))
            The class sums Σ x.
        squares : ndarray of shape (G, len(columns))
            The class sums of squares Σ x².
        """
        counts = self.class_counts.astype(np.float64)
        n_g = counts[:, None]
        means = self.means[:, columns]
        with np.errstate(over="ignore", invalid="ignore"):
            sums = n_g * means
            squares = self.scatter[:, columns] + n_g * means * means
        return counts, sums, squares

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
