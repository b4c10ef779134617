"""Relevance statistics and top-k feature selection.

Selection happens on the training data inside an estimator's ``fit``; the
:class:`Selection` it returns records what the correction for selection bias
needs to know about the *discarded* features: the threshold γ, the total number of
candidate features p, and whether the discarded features are known to lie strictly
below γ or only at or below it.

Statistics:

* :func:`abs_correlation` — the absolute sample correlation of each feature with a
  binary response (thesis eq. 2.1), defined as 0 when a denominator is 0;
* :func:`f_statistic` — the one-way ANOVA F-statistic for G classes (Li 2009, eq. 25);
* :func:`pearson_chi_square` — Pearson's X² of class × level tables of counts (docs/categorical_correction.md
  eq. C7), canonical in the order of the levels.

Both accept dense arrays, pandas DataFrames and scipy sparse matrices; with sparse
input nothing of size n × p is ever densified, so p can be 10^6 or more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_random_state

from hdbayes._numba import jit
from hdbayes.exceptions import InputTypeError, InputValueError

__all__ = [
    "Selection",
    "abs_correlation",
    "constant_features",
    "correlation_from_sums",
    "f_from_sums_of_squares",
    "f_statistic",
    "pearson_chi_square",
    "select_features",
]

#: Relative tolerance used when comparing a statistic with the threshold γ.
THRESHOLD_RTOL = 1e-9


def _check_features(X):
    """Validate a feature matrix: 2-D, numeric, finite; sparse stays sparse (CSC)."""
    try:
        X = check_array(
            X,
            accept_sparse=("csc", "csr"),
            dtype=(np.float64, np.float32, np.int64, np.int32, np.int16, np.int8, np.uint8),
            ensure_all_finite=True,
            ensure_min_samples=2,
            input_name="X",
        )
    except ValueError as error:
        raise InputValueError(str(error)) from None
    except TypeError as error:
        raise InputTypeError(str(error)) from None
    if sp.issparse(X):
        X = X.tocsc()
    return X


@jit
def _sparse_column_sums(indptr, indices, data, weights):
    """Per column of a CSC matrix: Σ x, Σ x² and Σ x·w, in one pass, without copies."""
    p = indptr.shape[0] - 1
    sums = np.zeros(p)
    squares = np.zeros(p)
    weighted = np.zeros(p)
    for j in range(p):
        for position in range(indptr[j], indptr[j + 1]):
            value = np.float64(data[position])
            sums[j] += value
            squares[j] += value * value
            weighted[j] += value * weights[indices[position]]
    return sums, squares, weighted


def _column_sums(X, weights=None):
    """Column sums Σ x, Σ x² and (with weights w) Σ x·w, as float64.

    Exact for integer data. Sparse (CSC) input is never converted or copied, so the
    cost for p = 10^6 columns is one pass over the stored values.
    """
    n = X.shape[0]
    w = np.zeros(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if sp.issparse(X):
        X = X.tocsc()
        return _sparse_column_sums(X.indptr, X.indices, X.data, w)
    Xf = np.asarray(X, dtype=np.float64)
    return Xf.sum(axis=0), np.einsum("ij,ij->j", Xf, Xf), w @ Xf


def correlation_from_sums(sum_xy, sum_x, sum_xx, n, n1):
    """Sample correlation of a feature with a binary response, from sufficient sums.

    With ``ȳ = n1 / n``, thesis eq. 2.1 becomes

        COR = (Σ x y − ȳ Σ x) / ( sqrt(n ȳ (1 − ȳ)) · sqrt(Σ x² − (Σ x)² / n) ),

    defined as 0 where a denominator is 0 (a constant feature, or a constant
    response). For a binary feature Σ x y = I1 and Σ x = Σ x² = m, which is the
    lattice form Cor(I0, I1, ȳ) of eq. 2.45–2.46; the selection and the adjustment
    factor both call this one function, so a lattice point and a real feature with
    the same counts get bit-identical values.

    Parameters
    ----------
    sum_xy, sum_x, sum_xx : array_like
        Σ x_i y_i, Σ x_i and Σ x_i² per feature (broadcastable).
    n : int
        Number of cases.
    n1 : int
        Number of cases with y = 1.

    Returns
    -------
    ndarray
        The signed correlations.
    """
    sum_xy = np.asarray(sum_xy, dtype=np.float64)
    sum_x = np.asarray(sum_x, dtype=np.float64)
    sum_xx = np.asarray(sum_xx, dtype=np.float64)
    ybar = n1 / n
    numerator = sum_xy - ybar * sum_x
    ss_x = sum_xx - sum_x * sum_x / n
    # cancellation can leave tiny negative or positive noise for constant columns;
    # the cut-off is relative to Σ x² so the correlation stays scale invariant
    ss_x = np.where(ss_x > 1e-12 * sum_xx, ss_x, 0.0)
    denominator = np.sqrt(n * ybar * (1.0 - ybar)) * np.sqrt(ss_x)
    with np.errstate(divide="ignore", invalid="ignore"):
        cor = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), 0.0)
    return np.clip(cor, -1.0, 1.0)


def constant_features(X):
    """Boolean mask of the columns of X (dense or sparse) that take one value on every row."""
    if sp.issparse(X):
        X = X.tocsc()
        counts = np.diff(X.indptr)
        low = np.zeros(X.shape[1])
        high = np.zeros(X.shape[1])
        stored = counts > 0
        if X.data.size:
            starts = X.indptr[:-1][stored]
            low[stored] = np.minimum.reduceat(X.data, starts)
            high[stored] = np.maximum.reduceat(X.data, starts)
        full = counts == X.shape[0]  # no implicit zero in the column
        return np.where(full, low == high, (low == 0) & (high == 0))
    X = np.asarray(X)
    if X.shape[0] == 0:
        return np.ones(X.shape[1], dtype=bool)
    return np.all(X == X[:1], axis=0)


def _binary_response(y, n):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise InputValueError(f"y must be 1-D with {n} entries (one per row of X), got shape {tuple(y.shape)}")
    if not np.all(np.isin(y, (0, 1))):
        raise InputValueError("abs_correlation needs a binary response coded 0/1")
    return y.astype(np.float64)


def abs_correlation(X, y):
    """Absolute sample correlation of every feature with a binary response.

    Thesis eq. 2.1; 0 when a feature (or the response) is constant.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Binary response coded 0/1.

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    >>> abs_correlation(X, [1, 1, 0, 0])
    array([1., 0.])
    """
    X = _check_features(X)
    n = X.shape[0]
    yf = _binary_response(y, n)
    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
        if not np.array_equal(X, np.round(X)):
            # centring leaves the correlation unchanged and avoids cancellation for
            # continuous data; integer data keep exact sums (ties stay exact ties)
            X = X - X.mean(axis=0)
    sum_x, sum_xx, sum_xy = _column_sums(X, yf)
    return np.abs(correlation_from_sums(sum_xy, sum_x, sum_xx, n, yf.sum()))


def f_statistic(X, y):
    """One-way ANOVA F-statistic of every feature for G classes (Li 2009, eq. 25).

        F = [Σ_g n_g (x̄^(g) − x̄)² / (G − 1)] / [Σ_g Σ_{i∈g} (x_i − x̄^(g))² / (n − G)].

    A feature with zero within-class variation gets ``inf`` if its class means differ
    and 0 if it is constant. F is invariant to scaling a column, so dense columns whose
    largest absolute value exceeds 2^500 are divided by a power of two near it first (exact
    in floating point): their squares would otherwise overflow (a value of 1e308 gave NaN).
    Other columns are used as given.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (any hashable values); at least two classes and n > G.

    Returns
    -------
    ndarray of shape (n_features,)
    """
    X = _check_features(X)
    n = X.shape[0]
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise InputValueError(f"y must be 1-D with {n} entries (one per row of X), got shape {tuple(y.shape)}")
    classes, codes = np.unique(y, return_inverse=True)
    n_classes = classes.shape[0]
    if n_classes < 2:
        raise InputValueError("f_statistic needs at least two classes in y")
    if n <= n_classes:
        raise InputValueError(f"f_statistic needs more cases ({n}) than classes ({n_classes})")
    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
        largest = np.max(np.abs(X), axis=0) if n else np.zeros(X.shape[1])
        huge = np.flatnonzero(largest > 2.0**500)
        if huge.size:
            X = X.copy()
            X[:, huge] = np.ldexp(X[:, huge], -np.frexp(largest[huge])[1])
        X = X - X.mean(axis=0)
    indicator = sp.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(n_classes, n))
    class_sums = indicator @ X
    class_sums = class_sums.toarray() if sp.issparse(class_sums) else np.asarray(class_sums)
    counts = np.bincount(codes).astype(np.float64)
    sum_x, sum_xx, _ = _column_sums(X)
    between = (class_sums**2 / counts[:, None]).sum(axis=0) - sum_x**2 / n
    within = sum_xx - (class_sums**2 / counts[:, None]).sum(axis=0)
    return f_from_sums_of_squares(np.maximum(between, 0.0), within, np.maximum(sum_xx, 1e-300), n, n_classes)


def f_from_sums_of_squares(between, within, scale, n, n_classes):
    """Eq. 25 from the between- and within-class sums of squares of every feature.

    ``scale`` is each feature's total sum of squares (a floor for what counts as zero): a within-class
    sum below 1e-12 of it is no variation, and then F is ``inf`` if the class means differ and 0 for a
    constant feature. Shared by :func:`f_statistic` (data) and
    :meth:`hdbayes.statistics.GaussianClassMoments.f_statistic` (merged moments).
    """
    within = np.where(within > 1e-12 * scale, within, 0.0)
    mean_between = between / (n_classes - 1)
    mean_within = within / (n - n_classes)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            mean_within > 0,
            mean_between / np.where(mean_within > 0, mean_within, 1.0),
            np.where(mean_between > 1e-12 * scale, np.inf, 0.0),
        )


_STATISTICS = {"correlation": abs_correlation, "f": f_statistic}


@dataclass(frozen=True)
class Selection:
    """The outcome of selecting features by a relevance statistic.

    Attributes
    ----------
    indices : ndarray of int
        Column indices of the retained features, strongest first.
    threshold : float
        γ: with ``n_features_to_select=k`` the statistic of the k-th strongest feature; with a
        fixed threshold, that threshold.
    n_total : int
        p, the number of candidate features the selection looked at.
    strict : bool
        True when every discarded feature is known to have a statistic strictly
        below γ (the event used by the correction is then ``R < γ``); False when the
        discarded features satisfy only ``R ≤ γ`` (a fixed threshold, or ties at the
        boundary of a top-k selection).
    statistic : str
        Name of the statistic ("correlation" or "f").
    scores : ndarray or None
        The statistic of all p candidates (kept for inspection and plots).
    """

    indices: np.ndarray
    threshold: float
    n_total: int
    strict: bool
    statistic: str
    scores: np.ndarray | None = None

    @property
    def n_selected(self) -> int:
        """k, the number of retained features."""
        return int(self.indices.shape[0])

    @property
    def n_discarded(self) -> int:
        """p − k, the number of discarded features."""
        return self.n_total - self.n_selected

    def discarded(self, values):
        """Boolean mask of statistic values that fall in the discarded region.

        ``values < γ`` (strict) or ``values ≤ γ``, with a relative tolerance of
        :data:`THRESHOLD_RTOL` so that a value computed to equal γ lands on the
        right side of the boundary.
        """
        values = np.asarray(values)
        tol = THRESHOLD_RTOL * abs(self.threshold)
        if self.strict:
            return values < self.threshold - tol
        return values <= self.threshold + tol


@jit(error_model="numpy")  # no zero-division checks (the divisors are > 0 for class sizes ≥ 1): ~1.25x faster
def _chi_square_table(table, sizes, n, parts):
    """X² of one G × L table (docs/categorical_correction.md eq. C7) with row sums ``sizes`` and total n; levels
    that do not occur are left out (a constant feature has X² = 0). ``parts`` is scratch space of length ≥ L (the
    caller's, allocated once for many tables).

    Canonical in the order of the levels: each level's contribution Σ_g (T_gl − E_gl)²/E_gl (E_gl = N_g c_l/n,
    c_l the level's column sum) depends only on that level's column, the class sizes and n, and the L
    contributions are added in increasing order. A table and every permutation of its columns therefore get
    the same X² to the last bit, so the discarded region {X² < γ} is exactly invariant under permutations of
    the levels, as the symmetric θ rule of the categorical adjustment factor requires (``symmetric_simplex_rule``,
    eq. C11a); added in column order, the two could differ in the last bit and fall on either side of the bound
    γ(1 ± THRESHOLD_RTOL). The features' X² (the selection) and the tables of the factor's discarded region are
    computed by this same function, so a table with a feature's counts is classified as the selection
    classified the feature.
    """
    n_classes, n_levels = table.shape
    n_parts = 0  # parts[:n_parts]: the contributions of the levels seen so far, in increasing order
    for level in range(n_levels):
        column = 0
        for g in range(n_classes):
            column += table[g, level]
        if column == 0:
            continue
        share = column / n
        part = 0.0
        for g in range(n_classes):
            expected = sizes[g] * share
            deviation = table[g, level] - expected
            part += deviation * deviation / expected
        for i in range(n_parts):  # insert into the sorted parts (min/max: no data-dependent branches)
            smaller = min(parts[i], part)
            part = max(parts[i], part)
            parts[i] = smaller
        parts[n_parts] = part
        n_parts += 1
    total = 0.0
    for i in range(n_parts):
        total += parts[i]
    return total


@jit
def _chi_square_many(counts, sizes, n):
    out = np.empty(counts.shape[0])
    parts = np.empty(counts.shape[2])
    for r in range(counts.shape[0]):
        out[r] = _chi_square_table(counts[r], sizes, n, parts)
    return out


def pearson_chi_square(counts, class_sizes):
    """Pearson's X² (docs/categorical_correction.md eq. C7) of tables of counts.

    The same to the last bit for every order of the levels (their contributions are added in increasing
    order).

    Parameters
    ----------
    counts : array_like of int, shape (R, G, L)
        R tables of class by level; row g sums to ``class_sizes[g]``.
    class_sizes : array_like of int, shape (G,)
        Each ≥ 1.

    Returns
    -------
    ndarray of shape (R,)

    Examples
    --------
    >>> float(pearson_chi_square([[[3, 0], [0, 3]]], [3, 3])[0])  # n · COR² with COR = 1
    6.0
    """
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    sizes = np.ascontiguousarray(class_sizes, dtype=np.int64)
    if sizes.ndim != 1 or np.any(sizes < 1):
        raise InputValueError(f"class_sizes must be a 1-D array of integers >= 1, got {sizes.tolist()}")
    return _chi_square_many(counts, sizes, float(sizes.sum()))


def select_features(X, y, *, n_features_to_select=None, threshold=None, statistic="correlation", random_state=None):
    """Select features by a relevance statistic computed on (X, y).

    Exactly one of ``n_features_to_select`` and ``threshold`` is given.

    * ``n_features_to_select=k``: keep the k largest statistics, breaking ties at the boundary
      at random; γ is the statistic of the k-th kept feature. The discarded features
      are known to lie strictly below γ unless a discarded feature ties with it
      (``Selection.strict``).
    * ``threshold=t``: keep the features whose statistic exceeds t; the discarded
      ones satisfy ``R ≤ t``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    n_features_to_select : int, optional
        k, 1 ≤ k ≤ p.
    threshold : float, optional
        t ≥ 0.
    statistic : {"correlation", "f"}
        Absolute correlation with a 0/1 response, or the F-statistic.
    random_state : int, numpy.random.Generator, RandomState or None
        Tie-breaking at the boundary.

    Returns
    -------
    Selection
    """
    if statistic not in _STATISTICS:
        raise InputValueError(f"statistic must be one of {sorted(_STATISTICS)}, got {statistic!r}")
    scores = _STATISTICS[statistic](X, y)
    return select_from_scores(
        scores, n_features_to_select=n_features_to_select, threshold=threshold, statistic=statistic,
        random_state=random_state,
    )  # fmt: skip


def select_from_scores(scores, *, n_features_to_select=None, threshold=None, statistic="correlation",
                       random_state=None):  # fmt: skip
    """Top-k or threshold selection on precomputed statistics (see :func:`select_features`)."""
    scores = np.asarray(scores, dtype=np.float64)
    p = scores.shape[0]
    if (n_features_to_select is None) == (threshold is None):
        raise InputValueError("give exactly one of n_features_to_select and threshold")
    if threshold is not None:
        threshold = float(threshold)
        if not np.isfinite(threshold) or threshold < 0:
            raise InputValueError(f"threshold must be a finite number >= 0, got {threshold:g}")
        # a value within the tolerance of t counts as equal to t (discarded), as in
        # Selection.discarded and the adjustment lattice
        keep = np.flatnonzero(scores > threshold + THRESHOLD_RTOL * threshold)
        order = keep[np.argsort(-scores[keep], kind="stable")]
        return Selection(order, threshold, p, strict=False, statistic=statistic, scores=scores)
    if isinstance(n_features_to_select, bool) or not isinstance(n_features_to_select, (int, np.integer)):
        raise InputTypeError(f"n_features_to_select must be an integer, got {type(n_features_to_select).__name__}")
    k = int(n_features_to_select)
    if k < 1:
        raise InputValueError(f"n_features_to_select must be at least 1, got {k}")
    if k > p:
        raise InputValueError(f"n_features_to_select={k} is larger than the number of features p={p}")
    if k == p:
        order = np.argsort(-scores, kind="stable")
        return Selection(order, float(scores[order[-1]]), p, strict=True, statistic=statistic, scores=scores)
    gamma = float(np.partition(scores, p - k)[p - k])  # the k-th largest
    # ties are judged with the tolerance of Selection.discarded: mathematically equal
    # statistics (e.g. |COR| of a binary feature and of its 0/1 flip) can differ by an ulp
    tol = THRESHOLD_RTOL * abs(gamma)
    above = np.flatnonzero(scores > gamma + tol)
    tied = np.flatnonzero(np.abs(scores - gamma) <= tol)
    rng = check_random_state(random_state) if not isinstance(random_state, np.random.Generator) else random_state
    n_from_ties = k - above.shape[0]
    chosen_ties = tied if n_from_ties == tied.shape[0] else rng.permutation(tied)[:n_from_ties]
    kept = np.concatenate([above[np.argsort(-scores[above], kind="stable")], np.sort(chosen_ties)])
    strict = tied.shape[0] == n_from_ties  # no discarded feature ties with γ
    return Selection(kept, gamma, p, strict=strict, statistic=statistic, scores=scores)
