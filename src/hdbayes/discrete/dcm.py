"""The Dirichlet-compound-multinomial (Pólya) document classifier (Murphy §3.5.5; the fit is an addition).

Murphy §3.5.5 presents the DCM document model

    p(x_i | y_i = c, α_c) = N_i!/∏_j x_ij! · B(x_i + α_c)/B(α_c)

(with one ratio of multivariate Betas) but not how to fit α_c. Following Madsen, Kauchak & Elkan (2005)
we maximise each class's likelihood Σ_{i: y_i = c} log DCM(x_i | α_c) with Minka's
(2000) fixed point

    α_jc ← α_jc · Σ_i [ψ(x_ij + α_jc) − ψ(α_jc)] / Σ_i [ψ(N_i + α_c0) − ψ(α_c0)],

which never decreases the likelihood. The plain fixed point crawls along the overall scale
α_c0 (hundreds of iterations on text); each sweep is therefore followed by one safeguarded
Newton step on log α_c0 with the proportions α_c/α_c0 fixed, accepted only when it
increases the likelihood, so the iteration stays monotone. For integer counts the digamma differences are
finite sums, ψ(x + a) − ψ(a) = Σ_{l<x} 1/(a + l), so with

    G_jc(l) = #{i in class c: x_ij > l},   H_c(l) = #{i in class c: N_i > l}

one iteration costs O(Σ_j max_i x_ij + max_i N_i) per class — independent of the number
of documents, and only the words seen in the class take part.

Real values (tf-idf weights, as scikit-learn's ``MultinomialNB`` accepts) and counts too
large for those tables use the same iteration with the digamma differences themselves,
ψ(x + a) − ψ(a), and the log-likelihood in its Gamma-function form
Σ_j log Γ(x_j + α_j)/Γ(α_j) − log Γ(N + α_0)/Γ(α_0), which equals the integer form at
integer counts (O(nnz) per iteration; tested against the integer path).

Smoothing. Words never seen in class c are driven to 0 by the fixed point, which would
make a test document containing one of them impossible under class c. Madsen et al.
smooth the fitted α by a small constant; a fixed constant does not scale with the
vocabulary (D · constant can swamp the fitted α_c0 when D is large). The classifier's
default ``min_concentration="auto"`` therefore floors every α_jc at α̂_c0/D after the maximum-
likelihood fit, so that all floored words together carry at most the fitted
concentration α̂_c0 — the rule that gave the lowest log-loss across the bursty corpora of
:mod:`hdbayes.datasets.documents` (vocabularies of 10^3 to 2·10^4 words, α_0 from 5 to
100; see ``docs/discrete.md``). A number instead is an absolute floor applied inside the
fixed point.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from hdbayes._numba import jit
from hdbayes._special_kernels import log_rising_factorial_scalar
from hdbayes._validation import check_count, check_finite_output, check_positive, feature_label
from hdbayes.discrete._base import PSEUDO_COUNT, GenerativeClassifier, overflow_cause, plain
from hdbayes.discrete.conjugate import (
    _COEF_HINT,
    _TABLE_SIZE,
    DirichletMultinomialTables,
    check_count_matrix,
    dirichlet_multinomial_log_pmf,
)
from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = [
    "DCMClassifier",
    "DirichletFit",
    "WordCountHistogram",
    "dirichlet_multinomial_log_likelihood",
    "fit_dirichlet_multinomial",
]


#: α_0 beyond which the data are treated as multinomial (the likelihood has no finite maximum)
_MAX_SCALE = 1e10


@jit
def _exceedance_counts(indptr, counts):
    """For every column of a CSC count matrix with at least one non-zero: G(l) = #{x > l},
    l = 0..max − 1, concatenated (pointer array returned alongside)."""
    n_cols = indptr.shape[0] - 1
    sizes = np.zeros(n_cols, dtype=np.int64)
    for j in range(n_cols):
        for k in range(indptr[j], indptr[j + 1]):
            if counts[k] > sizes[j]:
                sizes[j] = counts[k]
    pointer = np.zeros(n_cols + 1, dtype=np.int64)
    for j in range(n_cols):
        pointer[j + 1] = pointer[j] + sizes[j]
    exceed = np.zeros(pointer[-1], dtype=np.float64)
    for j in range(n_cols):
        for k in range(indptr[j], indptr[j + 1]):
            for l in range(counts[k]):  # x > l for l < x
                exceed[pointer[j] + l] += 1.0
    return pointer, exceed


@jit
def _free_total(alpha, free):
    """Σ α_k over the words above the floor (``free``)."""
    total = 0.0
    for k in range(alpha.shape[0]):
        if free[k]:
            total += alpha[k]
    return total


@jit
def _scale_objective(scale, alpha, free, pointer, exceed, length_exceed, fixed_mass):
    """Log-likelihood along α_free = e^u · α_free/Σα_free (u = log of the scale; the other
    words fixed, with total ``fixed_mass``) and its first two u-derivatives, up to a constant.

    L(u) = Σ_{k free} Σ_l G_k(l) log(e^u m_k + l) − Σ_l H(l) log(e^u + fixed + l).
    """
    total = _free_total(alpha, free)
    value = 0.0
    first = 0.0
    second = 0.0
    for k in range(alpha.shape[0]):
        if not free[k]:
            continue
        a = scale * alpha[k] / total
        for l in range(pointer[k + 1] - pointer[k]):
            g = exceed[pointer[k] + l]
            value += g * np.log(a + l)
            first += g * a / (a + l)
            second += g * a * l / ((a + l) * (a + l))
    alpha0 = scale + fixed_mass
    for l in range(length_exceed.shape[0]):
        h = length_exceed[l]
        value -= h * np.log(alpha0 + l)
        first -= h * scale / (alpha0 + l)
        second -= h * scale * (fixed_mass + l) / ((alpha0 + l) * (alpha0 + l))
    return value, first, second


@jit(error_model="numpy")
def _digamma(z):
    """ψ(z) for z > 0: the recurrence up to z ≥ 12, then the asymptotic series (error < 1e-14)."""
    result = 0.0
    while z < 12.0:
        result -= 1.0 / z
        z += 1.0
    inverse = 1.0 / z
    square = inverse * inverse
    series = square * (1.0 / 12 - square * (1.0 / 120 - square * (1.0 / 252 - square * (1.0 / 240 - square / 132))))
    return result + np.log(z) - 0.5 * inverse - series


@jit(error_model="numpy")
def _trigamma(z):
    """ψ'(z) for z > 0: the recurrence up to z ≥ 12, then the asymptotic series."""
    result = 0.0
    while z < 12.0:
        result += 1.0 / (z * z)
        z += 1.0
    inverse = 1.0 / z
    square = inverse * inverse
    series = 1.0 / 6 - square * (1.0 / 30 - square * (1.0 / 42 - square * (1.0 / 30 - square * 5.0 / 66)))
    return result + inverse + 0.5 * square + inverse * square * series


@jit(error_model="numpy")
def _stirling_tail_derivative(z):
    """d/dz of Stirling's series :func:`hdbayes._special_kernels.stirling_tail`."""
    inverse = 1.0 / z
    square = inverse * inverse
    return -square * (1.0 / 12 - square * (1.0 / 120 - square * (1.0 / 252 - square * (1.0 / 240 - square / 132))))


@jit(error_model="numpy")
def _digamma_difference(a, x):
    """ψ(a + x) − ψ(a) for a > 0, x ≥ 0 real (Σ_{l<x} 1/(a + l) at integer x); for a ≥ 15
    log1p(x/a) + x/(2a(a + x)) + S'(a + x) − S'(a), accurate near the multinomial limit."""
    if x == 0.0:
        return 0.0
    if a < 15.0:
        return _digamma(a + x) - _digamma(a)
    return np.log1p(x / a) + x / (2.0 * a * (a + x)) + _stirling_tail_derivative(a + x) - _stirling_tail_derivative(a)


def digamma_difference(a, x):
    """ψ(a + x) − ψ(a) = d/da log Γ(a + x)/Γ(a), elementwise for a > 0, x ≥ 0 (real).

    Equal to Σ_{l<x} 1/(a + l) at integer x; for a ≥ 15 computed from Stirling's series
    without cancellation, so that it stays accurate near the multinomial limit (a ~ 10^10).
    """
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    return _digamma_difference_array(np.ascontiguousarray(a).ravel(), np.ascontiguousarray(x).ravel()).reshape(a.shape)


@jit(error_model="numpy")
def _digamma_difference_array(a, x):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = _digamma_difference(a[i], x[i])
    return out


@jit(error_model="numpy")
def _real_scale_objective(scale, alpha, free, columns, data, lengths, held):
    """:func:`_scale_objective` in the Gamma-function form (real counts; ``columns``/``data`` the
    non-zeros, ``lengths`` the document lengths > 0): value, first and second u-derivatives.

    L(u) = Σ_{free k} Σ_i log Γ(x_ik + a_k)/Γ(a_k) − Σ_i log Γ(N_i + α_0)/Γ(α_0), a_k = e^u m_k.
    """
    total = _free_total(alpha, free)
    value = 0.0
    first = 0.0
    second = 0.0
    for e in range(data.shape[0]):
        k = columns[e]
        if not free[k]:
            continue
        a = scale * alpha[k] / total
        x = data[e]
        d1 = _digamma_difference(a, x)
        value += log_rising_factorial_scalar(a, x)
        first += a * d1
        second += a * d1 + a * a * (_trigamma(a + x) - _trigamma(a))
    alpha0 = scale + held
    for i in range(lengths.shape[0]):
        n = lengths[i]
        d1 = _digamma_difference(alpha0, n)
        value -= log_rising_factorial_scalar(alpha0, n)
        first -= scale * d1
        second -= scale * d1 + scale * scale * (_trigamma(alpha0 + n) - _trigamma(alpha0))
    return value, first, second


@jit(error_model="numpy")
def _fixed_point(tables, alpha, n_fixed, alpha_min, max_iter, tol):
    """Minka's fixed point on the words with data; ``n_fixed`` further words sit at alpha_min.

    ``tables`` is (pointer, exceed, length_exceed) of the exceedance counts for integer
    counts (digamma differences as finite sums), else (columns, data, lengths, None): the words
    (0..m−1) of the non-zeros ``data`` and the lengths of the non-empty documents (digamma
    differences computed directly, O(nnz) per iteration). The kind of tables is their length, which
    numba knows when it compiles: each kind compiles only its own branch (the Gamma-function code of
    real counts is not compiled for integer counts, nor the converse; issue 28). Every sweep is followed by one
    safeguarded Newton step on the overall scale Σα with the proportions fixed (the direction
    in which the plain fixed point crawls), accepted only if it increases the likelihood.
    Returns (alpha, n_iter, converged); alpha is updated in place.
    """
    m = alpha.shape[0]
    fixed_mass = n_fixed * alpha_min
    free = np.zeros(m, dtype=np.bool_)
    numerator = np.zeros(m)
    for iteration in range(1, max_iter + 1):
        alpha0 = fixed_mass
        for k in range(m):
            alpha0 += alpha[k]
        denominator = _digamma_sums(tables, alpha, alpha0, numerator)
        largest_change = 0.0
        for k in range(m):
            a = alpha[k]
            new = max(a * numerator[k] / denominator, alpha_min)
            change = abs(new - a) / a
            if change > largest_change:
                largest_change = change
            alpha[k] = new
        # Newton step on u = log(scale) of the words above the floor, with backtracking
        scale = 0.0
        held = fixed_mass
        for k in range(m):
            free[k] = alpha[k] > alpha_min
            if free[k]:
                scale += alpha[k]
            else:
                held += alpha[k]
        if scale > 0.0:
            value, first, second = _objective(tables, scale, alpha, free, held)
            if second < 0.0:
                step = min(max(-first / second, -2.0), 2.0)
                for _ in range(20):
                    trial = min(scale * np.exp(step), _MAX_SCALE)
                    trial_value, _, _ = _objective(tables, trial, alpha, free, held)
                    if trial_value > value:
                        ratio = trial / scale
                        for k in range(m):
                            if free[k]:
                                alpha[k] = max(alpha[k] * ratio, alpha_min)
                        if abs(ratio - 1.0) > largest_change:
                            largest_change = abs(ratio - 1.0)
                        break
                    step *= 0.5
        if scale >= _MAX_SCALE:  # no over-dispersion: the maximum is at the multinomial limit
            return alpha, iteration, False
        if largest_change < tol:
            return alpha, iteration, True
    return alpha, max_iter, False


@jit(error_model="numpy")
def _digamma_sums(tables, alpha, alpha0, numerator):
    """Fill numerator[k] = Σ_i ψ(x_ik + α_k) − ψ(α_k) and return Σ_i ψ(N_i + α_0) − ψ(α_0)."""
    first, second, third = tables[0], tables[1], tables[2]
    denominator = 0.0
    if len(tables) == 3:  # (pointer, exceed, length_exceed): Σ_l G(l)/(a + l) and Σ_l H(l)/(α_0 + l)
        for l in range(third.shape[0]):
            denominator += third[l] / (alpha0 + l)
        for k in range(alpha.shape[0]):
            total = 0.0
            a = alpha[k]
            for l in range(first[k + 1] - first[k]):
                total += second[first[k] + l] / (a + l)
            numerator[k] = total
        return denominator
    for i in range(third.shape[0]):  # (columns, data, lengths)
        denominator += _digamma_difference(alpha0, third[i])
    numerator[:] = 0.0
    for e in range(second.shape[0]):
        k = int(first[e])
        numerator[k] += _digamma_difference(alpha[k], second[e])
    return denominator


@jit(error_model="numpy")
def _objective(tables, scale, alpha, free, held):
    """The scale objective of the integer or the real tables (see :func:`_fixed_point`)."""
    first, second, third = tables[0], tables[1], tables[2]
    if len(tables) == 3:  # a constant when numba compiles: only one branch is compiled
        return _scale_objective(scale, alpha, free, first, second, third, held)
    return _real_scale_objective(scale, alpha, free, first, second, third, held)


def _minka_fixed_point(pointer, exceed, length_exceed, alpha, n_fixed, alpha_min, max_iter, tol):
    """:func:`_fixed_point` on the exceedance counts of integer counts."""
    tables = (np.ascontiguousarray(pointer, dtype=np.int64), np.ascontiguousarray(exceed, dtype=np.float64),
              np.ascontiguousarray(length_exceed, dtype=np.float64))  # fmt: skip
    return _fixed_point(tables, alpha, n_fixed, alpha_min, max_iter, tol)


def _minka_fixed_point_real(columns, data, lengths, alpha, n_fixed, alpha_min, max_iter, tol):
    """:func:`_fixed_point` on real counts: the words ``columns`` (0..m−1) of the non-zeros ``data``
    and the lengths of the non-empty documents."""
    tables = (np.ascontiguousarray(columns, dtype=np.int64), np.ascontiguousarray(data, dtype=np.float64),
              np.ascontiguousarray(lengths, dtype=np.float64), None)  # fmt: skip
    return _fixed_point(tables, alpha, n_fixed, alpha_min, max_iter, tol)


class DirichletFit:
    """Result of :func:`fit_dirichlet_multinomial`: ``alpha`` (D,), ``n_iter``, ``converged``."""

    __slots__ = ("alpha", "converged", "n_iter")

    def __init__(self, alpha, n_iter, converged):
        self.alpha = alpha
        self.n_iter = n_iter
        self.converged = converged

    def __repr__(self):
        return f"DirichletFit(alpha0={self.alpha.sum():.4g}, n_iter={self.n_iter}, converged={self.converged})"


def fit_dirichlet_multinomial(
        X: ArrayLike, *, alpha_init: ArrayLike | None = None, alpha_min: float = 1e-8, max_iter: int = 1000,
        tol: float = 1e-6) -> DirichletFit:
    """Maximum-likelihood α of a Dirichlet-compound-multinomial by Minka's fixed point (Madsen et al. 2005).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, D)
        Non-negative counts (real values such as tf-idf weights use the Gamma-function
        form of the likelihood); at least one document must be non-empty.
    alpha_init : array-like of shape (D,), optional
        Starting point (> 0); default: the mean count of each word per document (floored),
        so α_0 starts at the mean document length.
    alpha_min : float, default=1e-8
        Floor of every α_j (unseen words sit at the floor).
    max_iter : int, default=1000
        Maximum number of fixed-point iterations.
    tol : float, default=1e-6
        Stop when no α_j changes by more than this relative amount.

    Returns
    -------
    DirichletFit
        The estimate ``alpha``, the number of iterations ``n_iter`` and whether they converged (``converged``).

    Examples
    --------
    >>> from hdbayes.datasets.documents import sample_polya_urn
    >>> X = sample_polya_urn([2.0, 1.0, 0.5], 30, n_samples=400, random_state=0)
    >>> fit = fit_dirichlet_multinomial(X)
    >>> fit.converged, np.round(fit.alpha / fit.alpha.sum(), 1).tolist()
    (True, [0.6, 0.3, 0.1])
    """
    return _fit_dirichlet_multinomial(
        check_count_matrix(X, integer=False), alpha_init, check_positive("alpha_min", alpha_min),
        check_count("max_iter", max_iter),
        check_positive("tol", tol), None,
    )  # fmt: skip


def _fit_dirichlet_multinomial(X, alpha_init, alpha_min, max_iter, tol, feature_names):
    """:func:`fit_dirichlet_multinomial` on validated CSR counts (``feature_names`` for messages)."""
    return WordCountHistogram._of_checked(X).fit(alpha_init, alpha_min, max_iter, tol, feature_names)


def _run_lengths(keys):
    """Start of every run of equal consecutive entries of the sorted key arrays ``keys``."""
    if keys[0].shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.zeros(keys[0].shape[0], dtype=bool)
    new[0] = True
    for key in keys:
        new[1:] |= key[1:] != key[:-1]
    return np.flatnonzero(new)


def _histogram(words, values, counts, n_features):
    """(words, values, counts) of the distinct (word, value) pairs, sorted by word then value, with
    the total count of each; ``counts`` None counts every pair once."""
    words = np.asarray(words, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    counts = np.ones(words.shape[0], dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    top = values.max(initial=0.0)
    if values.size and top < 2**31 and n_features * (top + 1) < 2**62 and np.all(values == np.round(values)):
        size = int(top) + 1  # small integers: one int64 key per pair, word · (top + 1) + value
        keys = words * size + values.astype(np.int64)
        if n_features * size <= max(4_000_000, 8 * values.size):
            table = np.bincount(keys, weights=counts, minlength=n_features * size)
            keys = np.flatnonzero(table)
            totals = np.rint(table[keys]).astype(np.int64)
        else:
            keys, inverse = np.unique(keys, return_inverse=True)
            totals = np.bincount(inverse, weights=counts, minlength=keys.shape[0])
            totals = np.rint(totals).astype(np.int64)
        return keys // size, (keys % size).astype(np.float64), totals
    order = np.lexsort((values, words))
    words, values, counts = words[order], values[order], counts[order]
    starts = _run_lengths((words, values))
    if starts.size == 0:
        return words, values, counts
    return words[starts], values[starts], np.add.reduceat(counts, starts)


class WordCountHistogram:
    """The sufficient statistics of a Dirichlet-compound-multinomial fit: histograms of counts.

    For documents x_1..x_n over D words, ``counts[k]`` documents have the value ``values[k]``
    (> 0) for word ``words[k]`` (distinct (word, value) pairs, sorted), and
    ``length_counts[k]`` documents have the length N_i = Σ_j x_ij = ``lengths[k]`` (> 0); the
    remaining documents are empty. Minka's fixed point needs nothing else: for integer
    counts the exceedance counts G_j(l) = #{i: x_ij > l} and H(l) = #{i: N_i > l} (see the
    module docstring) are sums over these histograms, for real values the digamma sums run
    over the histogram's entries. Two shards' histograms added are the histograms of their
    union, so :class:`DCMClassifier` fits from chunks (``partial_fit``, dask arrays) without
    keeping documents; the size is the number of distinct (word, count) pairs, not the
    number of non-zeros. Immutable, compared by value, picklable.

    Examples
    --------
    >>> X = np.array([[2, 0, 1], [1, 1, 0], [2, 0, 0]])
    >>> h = WordCountHistogram.from_data(X[:2]) + WordCountHistogram.from_data(X[2:])
    >>> h.words.tolist(), h.values.tolist(), h.counts.tolist()
    ([0, 0, 1, 2], [1.0, 2.0, 1.0, 1.0], [1, 2, 1, 1])
    >>> h == WordCountHistogram.from_data(X), h.n_documents
    (True, 3)
    """

    __hash__ = None

    def __init__(self, n_features, n_documents, words, values, counts, lengths, length_counts):
        self.n_features = int(n_features)
        self.n_documents = int(n_documents)
        self.words, self.values, self.counts = _histogram(words, values, counts, self.n_features)
        lengths = np.asarray(lengths, dtype=np.float64)
        length_counts = np.asarray(length_counts, dtype=np.int64)
        order = np.argsort(lengths, kind="stable")
        lengths, length_counts = lengths[order], length_counts[order]
        starts = _run_lengths((lengths,))
        self.lengths = lengths[starts]
        self.length_counts = np.add.reduceat(length_counts, starts) if starts.size else length_counts
        if (self.words.size and (self.words.min() < 0 or self.words.max() >= self.n_features)) or (
            self.values <= 0).any() or (self.lengths <= 0).any() or (self.counts < 0).any() or (
            self.length_counts.sum() > self.n_documents):  # fmt: skip
            raise InputValueError("inconsistent histograms: words in 0..D-1, values and lengths > 0, counts >= 0")
        for array in (self.words, self.values, self.counts, self.lengths, self.length_counts):
            array.setflags(write=False)

    @classmethod
    def from_data(cls, X):
        """The histograms of count data X (n documents × D words; dense or sparse, values ≥ 0)."""
        return cls._of_checked(check_count_matrix(X, integer=False))

    @classmethod
    def _of_checked(cls, X):
        X = sp.csr_matrix(X)
        with np.errstate(over="ignore"):
            lengths = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
        nonzero = X.data != 0
        lengths = lengths[lengths != 0]
        return cls(X.shape[1], X.shape[0], X.indices[nonzero], X.data[nonzero], None, lengths,
                   np.ones(lengths.shape[0], dtype=np.int64))  # fmt: skip

    @classmethod
    def zero(cls, n_features):
        """The histograms of no documents (the neutral element of ``+``)."""
        empty = np.zeros(0)
        return cls(n_features, 0, empty, empty, empty, empty, empty)

    @property
    def n_nonzero(self) -> int:
        """The number of non-zero entries of the documents."""
        return int(self.counts.sum())

    def __add__(self, other):
        if not isinstance(other, WordCountHistogram):
            return NotImplemented
        if other.n_features != self.n_features:
            raise InputValueError(f"cannot add the histograms of {self.n_features} and of {other.n_features} words")
        cat = np.concatenate
        return WordCountHistogram(
            self.n_features, self.n_documents + other.n_documents, cat([self.words, other.words]),
            cat([self.values, other.values]), cat([self.counts, other.counts]), cat([self.lengths, other.lengths]),
            cat([self.length_counts, other.length_counts]),
        )  # fmt: skip

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented

    def __eq__(self, other):
        if not isinstance(other, WordCountHistogram):
            return NotImplemented
        return (self.n_features, self.n_documents) == (other.n_features, other.n_documents) and all(
            np.array_equal(getattr(self, name), getattr(other, name))
            for name in ("words", "values", "counts", "lengths", "length_counts")
        )

    def __reduce__(self):
        return (type(self), (self.n_features, self.n_documents, self.words, self.values, self.counts, self.lengths,
                             self.length_counts))  # fmt: skip

    def __repr__(self):
        return (
            f"WordCountHistogram(n_documents={self.n_documents}, n_features={self.n_features}, "
            f"n_pairs={self.words.shape[0]})"
        )

    def _overflow_cause(self, feature_names):
        if self.values.size == 0:
            return None
        k = int(np.argmax(self.values))
        return (
            f"the value {float(self.values[k]):g} of {feature_label(int(self.words[k]), feature_names)} is too large "
            "for double-precision arithmetic"
        )

    def _integer(self):
        """Whether the exceedance tables apply (as :func:`integer_counts_fit_tables` on the documents)."""
        values = self.values
        if values.size == 0:
            return True
        if not np.all(values == np.round(values)) or values.max() > 2**31:
            return False
        word_ends = np.append(_run_lengths((self.words,))[1:], values.shape[0]) - 1
        top = values[word_ends]  # values are sorted within each word
        limit = max(_TABLE_SIZE, 4 * self.n_nonzero)
        return top[top >= 2].sum() <= limit and self.lengths.max(initial=0) <= limit

    def fit(self, alpha_init=None, alpha_min=1e-8, max_iter=1000, tol=1e-6, feature_names=None):
        """Minka's fixed point (see :func:`fit_dirichlet_multinomial`) on these histograms."""
        D = self.n_features
        if self.lengths.size == 0:
            raise InputValueError("every document is empty: the Dirichlet-compound-multinomial cannot be fitted")
        check_finite_output("the document lengths", self.lengths, cause=self._overflow_cause(feature_names))
        word_starts = _run_lengths((self.words,))
        seen = self.words[word_starts]
        if alpha_init is None:
            with np.errstate(over="ignore"):  # an overflow makes α non-finite, reported after the fit
                start = np.add.reduceat(self.values * self.counts, word_starts) / self.n_documents
        else:
            alpha_init = np.asarray(alpha_init, dtype=np.float64)
            if alpha_init.shape != (D,) or not np.all(np.isfinite(alpha_init)) or np.any(alpha_init <= 0):
                raise InputValueError(f"alpha_init must hold {D} finite numbers > 0")
            start = alpha_init[seen]
        start = np.maximum(start, alpha_min)
        local = np.repeat(np.arange(seen.shape[0]), np.diff(np.append(word_starts, self.words.shape[0])))
        if self._integer():
            ends = np.append(word_starts[1:], self.words.shape[0]) - 1
            pointer = np.concatenate([[0], np.cumsum(self.values[ends].astype(np.int64))])
            ones = np.zeros(pointer[-1] + 1)  # ones[pointer[k] + v - 1] = documents with x_k = v
            np.add.at(ones, pointer[local] + self.values.astype(np.int64) - 1, self.counts)
            tail = np.cumsum(ones[::-1])[::-1]  # Σ over positions ≥ l
            exceed = tail[:-1] - np.repeat(tail[pointer[1:]], np.diff(pointer))  # G_k(l) = #{x_k > l}
            lengths = self.lengths.astype(np.int64)
            length_exceed = np.bincount(lengths, weights=self.length_counts, minlength=lengths.max() + 1)
            length_exceed = length_exceed[::-1].cumsum()[::-1][1:]
            fitted, n_iter, converged = _minka_fixed_point(
                pointer, exceed, length_exceed, start.copy(), D - seen.shape[0], alpha_min, max_iter, tol
            )
        else:
            fitted, n_iter, converged = _minka_fixed_point_real(
                np.repeat(local, self.counts), np.repeat(self.values, self.counts),
                np.repeat(self.lengths, self.length_counts), start.copy(), D - seen.shape[0], alpha_min, max_iter, tol,
            )  # fmt: skip
        check_finite_output(
            "the fitted Dirichlet concentrations", fitted, cause=self._overflow_cause(feature_names)
        )
        alpha = np.full(D, alpha_min)
        alpha[seen] = fitted
        return DirichletFit(alpha, int(n_iter), bool(converged))


def dirichlet_multinomial_log_likelihood(X, alpha):
    """Σ_i log DCM(x_i | α) without the multinomial coefficients (the objective of the fixed point)."""
    return float(dirichlet_multinomial_log_pmf(X, alpha, include_coefficient=False).sum())


class DCMClassifier(GenerativeClassifier):
    """Document classifier with a Dirichlet-compound-multinomial (Pólya urn) model per class.

    Fits the concentrations α_c by maximum likelihood (Minka's fixed point,
    :func:`fit_dirichlet_multinomial`) and predicts with b_c(x) = log π̄_c + log DCM(x | α_c),
    π̄_c = (N_c + a)/(N + C·a), a = ``class_pseudo_count`` (Madsen et al. 2005).
    Unlike the multinomial, the DCM makes a word that has appeared once more likely to
    appear again (burstiness). X holds non-negative counts; real values (tf-idf weights) are
    accepted as by scikit-learn's ``MultinomialNB`` and use the Gamma-function form of the
    DCM likelihood (equal to the integer form at integers).
    An empty document is valid for prediction (likelihood 1 under every class), but a class
    whose training documents are all empty cannot be fitted (InputValueError). Documents that
    are not over-dispersed relative to the multinomial have their likelihood maximum at
    α_c0 → ∞ (the multinomial limit); the fit then stops when α_c0 reaches 10^10 (or at
    ``max_iter``) with a ConvergenceWarning and ``converged_`` False.

    The fit depends on the documents of a class only through the histograms of their
    word counts and lengths (:class:`WordCountHistogram`), which add up over batches: so
    ``partial_fit`` equals ``fit`` on all batches, and ``fit`` on a ``dask.array`` computes
    the histograms of each row chunk where it lives and merges them, bit-identical to the
    in-memory fit.

    Parameters
    ----------
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        Dirichlet pseudo-counts of the class prior (posterior mean plugged in).
    min_concentration : "auto" or float, default="auto"
        Smoothing floor of the fitted α_jc (words never seen in class c): "auto" floors at
        α̂_c0/D after the maximum-likelihood fit; a number > 0 is an absolute floor used
        inside the fixed point.
    max_iter : int, default=1000
        Maximum number of fixed-point iterations per class.
    tol : float, default=1e-6
        Stop a class's iterations when no α_cj changes by more than this relative amount.
    include_multinomial_coef : bool, default=False
        Add log N_i!/∏_j x_ij! (cancels in p(y | x)); defined for integer counts only, so
        with it non-integral values are refused.
    class_prior : None, "uniform" or array-like of shape (n_classes,), default=None
        Overrides the learnt class prior.

    Attributes
    ----------
    classes_, class_count_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Number of features seen in ``fit``.
    concentration_ : ndarray of shape (n_classes, n_features)
        The fitted Dirichlet concentrations α_c (after smoothing).
    total_concentration_ : ndarray of shape (n_classes,)
        α̂_c0 of the maximum-likelihood fit, before smoothing (the burstiness: small is bursty).
    n_iter_ : ndarray of shape (n_classes,)
    converged_ : ndarray of bool, shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        T_jc.
    statistics_ : list of WordCountHistogram
        Per class, the histograms of word counts and document lengths the fit depends on
        (mergeable: ``partial_fit`` and dask arrays add them up; no document is kept).
    class_log_prior_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> from hdbayes.datasets.documents import simulate_bursty_documents
    >>> corpus = simulate_bursty_documents(200, 100, random_state=0)
    >>> model = DCMClassifier().fit(corpus.X[:150], corpus.y[:150])
    >>> model.concentration_.shape, bool(model.converged_.all())
    ((2, 100), True)
    >>> bool(model.score(corpus.X[150:], corpus.y[150:]) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        "class_pseudo_count": PSEUDO_COUNT,
        "min_concentration": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "include_multinomial_coef": ["boolean"],
        "class_prior": [None, StrOptions({"uniform"}), "array-like"],
    }

    def __init__(
            self, *, class_pseudo_count: float | ArrayLike = 1.0, min_concentration: float | Literal["auto"] = "auto",
            max_iter: int = 1000, tol: float = 1e-6, include_multinomial_coef: bool = False,
            class_prior: Literal["uniform"] | ArrayLike | None = None) -> None:  # fmt: skip
        self.class_pseudo_count = class_pseudo_count
        self.min_concentration = min_concentration
        self.max_iter = max_iter
        self.tol = tol
        self.include_multinomial_coef = include_multinomial_coef
        self.class_prior = class_prior

    def _prepare_X(self, X, reset):
        return check_count_matrix(
            X, integer=bool(self.include_multinomial_coef), feature_names=self._feature_names(), option=_COEF_HINT
        )

    def _floor(self):
        """The floor used inside the fixed point (tiny for "auto", which floors afterwards)."""
        return 1e-8 if isinstance(self.min_concentration, str) else float(self.min_concentration)

    def _reset_counts(self, n_features):
        self.feature_count_ = np.zeros((self.classes_.shape[0], n_features))
        self.statistics_ = [WordCountHistogram.zero(n_features) for _ in self.classes_]

    def _counts_of(self, X, Y):
        codes = Y.indices  # one non-zero per row: the class code
        return {
            "feature_count": (Y.T @ X).toarray(),
            "histograms": [WordCountHistogram._of_checked(X[codes == c]) for c in range(self.classes_.shape[0])],
        }

    @staticmethod
    def _merge_counts(a, b):
        return {
            "class_count": a["class_count"] + b["class_count"],
            "feature_count": a["feature_count"] + b["feature_count"],
            "histograms": [g + h for g, h in zip(a["histograms"], b["histograms"], strict=True)],
        }

    def _add_counts(self, counts):
        self.feature_count_ = self.feature_count_ + counts["feature_count"]
        self.statistics_ = [g + h for g, h in zip(self.statistics_, counts["histograms"], strict=True)]

    @available_if(lambda self: self._incremental)
    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add a batch of documents; the model equals ``fit`` on all batches so far.

        The batches' histograms (:class:`WordCountHistogram`, ``statistics_``) are added up and
        the concentrations fitted again from them, so the result equals one ``fit`` on the
        concatenated batches; no document is kept. Until every class has a non-empty document
        the statistics are only accumulated and the model is not fitted yet.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A batch of word-count documents; a dask array is counted chunk by chunk as in ``fit``.
        y : array-like or dask array of shape (n_samples,)
            The batch's class labels, each one of ``classes``.
        classes : array-like, optional
            All class labels (at least two); required on the first call.

        Returns
        -------
        self
            The estimator, updated with the batch.
        """
        self._accumulating = True
        try:
            return super().partial_fit(X, y, classes=classes)
        finally:
            self.__dict__.pop("_accumulating", None)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "concentration_")

    def _update_parameters(self):
        C, D = self.feature_count_.shape
        empty = [c for c, histogram in enumerate(self.statistics_) if histogram.n_nonzero == 0]
        if empty and getattr(self, "_accumulating", False):
            for name in ("concentration_", "n_iter_", "converged_", "total_concentration_", "_dcm_tables",
                         "class_log_prior_"):  # fmt: skip
                self.__dict__.pop(name, None)
            return
        if empty:
            raise InputValueError(
                f"class {plain(self.classes_[empty[0]])} has no words (no documents, or all empty): "
                "its Dirichlet-compound-multinomial cannot be fitted"
            )
        concentration = np.empty((C, D))
        n_iter = np.zeros(C, dtype=np.int64)
        converged = np.zeros(C, dtype=bool)
        total = np.zeros(C)
        for c, histogram in enumerate(self.statistics_):
            fit = histogram.fit(None, self._floor(), self.max_iter, self.tol, self._feature_names())
            auto = isinstance(self.min_concentration, str)
            alpha = np.maximum(fit.alpha, fit.alpha.sum() / D) if auto else fit.alpha
            concentration[c], n_iter[c], converged[c] = alpha, fit.n_iter, fit.converged
            total[c] = fit.alpha.sum()
        self.concentration_, self.n_iter_, self.converged_, self.total_concentration_ = (
            concentration, n_iter, converged, total
        )
        if not self.converged_.all():
            warnings.warn(
                f"Minka's fixed point did not converge in max_iter={self.max_iter} iterations for "
                f"{int((~self.converged_).sum())} class(es); increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        self._dcm_tables = DirichletMultinomialTables(self.concentration_)
        self.class_log_prior_ = self._class_log_prior("posterior_mean")

    def _check_fitted_finite(self, X):
        super()._check_fitted_finite(X)
        if not hasattr(self, "concentration_"):
            return
        cause = overflow_cause(X, self._feature_names())
        check_finite_output("the fitted concentrations concentration_", self.concentration_, cause=cause)

    def _joint_log_likelihood(self, X):
        return self._dcm_tables.log_pmf(X, self.include_multinomial_coef) + self.class_log_prior_
