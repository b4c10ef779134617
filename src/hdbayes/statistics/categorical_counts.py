"""Categorical features (level codes 0..L−1) and a class with G values: :class:`CategoricalClassCounts`.

The class sizes and, per feature, the G × L table of class by level. They determine Pearson's X² of
every feature (docs/categorical_correction.md eq. C7), the categorical naive Bayes model of the selected
features and its adjustment factor (which needs only the class sizes, L and γ).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _get_feature_names

from hdbayes._validation import (
    check_count,
    check_level_codes,
    column_label,
    first_entry,
)
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection import pearson_chi_square
from hdbayes.statistics._base import _checked_array, _merged_classes, _names_array, _Statistics
from hdbayes.statistics.chunks import _label_codes, check_dask_matrix, dask_class_codes, reduce_chunks

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Self

    from numpy.typing import ArrayLike


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

    def __init__(
        self,
        classes: ArrayLike,
        class_counts: ArrayLike,
        level_counts: ArrayLike,
        feature_names: Sequence[str] | None = None,
    ) -> None:
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
    def from_data(
        cls,
        X: Any,
        y: ArrayLike,
        *,
        classes: ArrayLike | None = None,
        n_levels: int | None = None,
        feature_names: Sequence[str] | None = None,
    ) -> Self:
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
    def from_dask(
        cls,
        X: Any,
        y: Any,
        *,
        classes: ArrayLike | None = None,
        n_levels: int | None = None,
        feature_names: Sequence[str] | None = None,
        split_every: int | None = None,
    ) -> Self:
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
    def zero(
        cls, n_features: int, classes: ArrayLike, n_levels: int = 2, *, feature_names: Sequence[str] | None = None
    ) -> Self:
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

    def chi_square(self) -> np.ndarray:
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

    def with_levels(self, n_levels: int) -> Self:
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
