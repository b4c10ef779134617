"""The Dirichlet-compound-multinomial (Pólya) document classifier (spec §1.8; an addition to the seed).

The seed (Murphy ch. 3.5.5) presents the DCM document model

    p(x_i | y_i = c, α_c) = N_i!/∏_j x_ij! · B(x_i + α_c)/B(α_c)

(erratum 13 corrected) but not how to fit α_c. Following Madsen, Kauchak & Elkan (2005)
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

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes import special
from hdbayes._numba import jit
from hdbayes._validation import check_count, check_finite_output, check_positive
from hdbayes.discrete._base import PSEUDO_COUNT, GenerativeClassifier, overflow_cause, plain
from hdbayes.discrete.conjugate import (
    _COEF_HINT,
    DirichletMultinomialTables,
    check_count_matrix,
    dirichlet_multinomial_log_pmf,
    integer_counts_fit_tables,
)
from hdbayes.exceptions import InputValueError

__all__ = ["DCMClassifier", "DirichletFit", "dirichlet_multinomial_log_likelihood", "fit_dirichlet_multinomial"]


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


#: log Γ(z) − [(z − 1/2) log z − z + log(2π)/2] (z ≥ 15): the series of :mod:`hdbayes.special`, compiled
_stirling_tail = jit(error_model="numpy")(special._stirling_tail)


@jit(error_model="numpy")
def _stirling_tail_derivative(z):
    """d/dz of :func:`_stirling_tail`."""
    inverse = 1.0 / z
    square = inverse * inverse
    return -square * (1.0 / 12 - square * (1.0 / 120 - square * (1.0 / 252 - square * (1.0 / 240 - square / 132))))


@jit(error_model="numpy")
def _log_rising(a, x):
    """log Γ(a + x)/Γ(a) for a > 0, x ≥ 0 real: the log-Gamma difference, or for a ≥ 15 the
    difference of Stirling's series without cancellation (as ``hdbayes.special.log_rising_factorial``)."""
    if x == 0.0:
        return 0.0
    if a < 15.0:
        return math.lgamma(a + x) - math.lgamma(a)
    return x * np.log(a) + (a + x - 0.5) * np.log1p(x / a) - x + _stirling_tail(a + x) - _stirling_tail(a)


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
        value += _log_rising(a, x)
        first += a * d1
        second += a * d1 + a * a * (_trigamma(a + x) - _trigamma(a))
    alpha0 = scale + held
    for i in range(lengths.shape[0]):
        n = lengths[i]
        d1 = _digamma_difference(alpha0, n)
        value -= _log_rising(alpha0, n)
        first -= scale * d1
        second -= scale * d1 + scale * scale * (_trigamma(alpha0 + n) - _trigamma(alpha0))
    return value, first, second


@jit(error_model="numpy")
def _fixed_point(integer, tables, alpha, n_fixed, alpha_min, max_iter, tol):
    """Minka's fixed point on the words with data; ``n_fixed`` further words sit at alpha_min.

    ``tables`` is (pointer, exceed, length_exceed) of the exceedance counts for ``integer``
    counts (digamma differences as finite sums), else (columns, data, lengths): the words
    (0..m−1) of the non-zeros ``data`` and the lengths of the non-empty documents (digamma
    differences computed directly, O(nnz) per iteration). Every sweep is followed by one
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
        denominator = _digamma_sums(integer, tables, alpha, alpha0, numerator)
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
            value, first, second = _objective(integer, tables, scale, alpha, free, held)
            if second < 0.0:
                step = min(max(-first / second, -2.0), 2.0)
                for _ in range(20):
                    trial = min(scale * np.exp(step), _MAX_SCALE)
                    trial_value, _, _ = _objective(integer, tables, trial, alpha, free, held)
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
def _digamma_sums(integer, tables, alpha, alpha0, numerator):
    """Fill numerator[k] = Σ_i ψ(x_ik + α_k) − ψ(α_k) and return Σ_i ψ(N_i + α_0) − ψ(α_0)."""
    first, second, third = tables
    denominator = 0.0
    if integer:  # (pointer, exceed, length_exceed): Σ_l G(l)/(a + l) and Σ_l H(l)/(α_0 + l)
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
def _objective(integer, tables, scale, alpha, free, held):
    """The scale objective of the integer or the real tables (see :func:`_fixed_point`)."""
    first, second, third = tables
    if integer:
        return _scale_objective(scale, alpha, free, first, second, third, held)
    return _real_scale_objective(scale, alpha, free, first, second, third, held)


def _minka_fixed_point(pointer, exceed, length_exceed, alpha, n_fixed, alpha_min, max_iter, tol):
    """:func:`_fixed_point` on the exceedance counts of integer counts."""
    tables = (np.ascontiguousarray(pointer, dtype=np.int64), np.ascontiguousarray(exceed, dtype=np.float64),
              np.ascontiguousarray(length_exceed, dtype=np.float64))  # fmt: skip
    return _fixed_point(True, tables, alpha, n_fixed, alpha_min, max_iter, tol)


def _minka_fixed_point_real(columns, data, lengths, alpha, n_fixed, alpha_min, max_iter, tol):
    """:func:`_fixed_point` on real counts: the words ``columns`` (0..m−1) of the non-zeros ``data``
    and the lengths of the non-empty documents."""
    tables = (np.ascontiguousarray(columns, dtype=np.int64), np.ascontiguousarray(data, dtype=np.float64),
              np.ascontiguousarray(lengths, dtype=np.float64))  # fmt: skip
    return _fixed_point(False, tables, alpha, n_fixed, alpha_min, max_iter, tol)


class DirichletFit:
    """Result of :func:`fit_dirichlet_multinomial`: ``alpha`` (D,), ``n_iter``, ``converged``."""

    __slots__ = ("alpha", "converged", "n_iter")

    def __init__(self, alpha, n_iter, converged):
        self.alpha = alpha
        self.n_iter = n_iter
        self.converged = converged

    def __repr__(self):
        return f"DirichletFit(alpha0={self.alpha.sum():.4g}, n_iter={self.n_iter}, converged={self.converged})"


def fit_dirichlet_multinomial(X, *, alpha_init=None, alpha_min=1e-8, max_iter=1000, tol=1e-6):
    """Maximum-likelihood α of a Dirichlet-compound-multinomial by Minka's fixed point (spec §1.8).

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
    tol : float, default=1e-6
        Stop when no α_j changes by more than this relative amount.

    Returns
    -------
    DirichletFit

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
    integer = integer_counts_fit_tables(X)
    X = X.tocsc()
    D = X.shape[1]
    with np.errstate(over="ignore"):
        lengths = np.asarray(X.sum(axis=1)).ravel()
    if lengths.max(initial=0) == 0:
        raise InputValueError("every document is empty: the Dirichlet-compound-multinomial cannot be fitted")
    check_finite_output("the document lengths", lengths, cause=overflow_cause(X, feature_names))
    X.eliminate_zeros()
    seen = np.flatnonzero(np.diff(X.indptr) > 0)
    sub = X[:, seen]
    if alpha_init is None:
        with np.errstate(over="ignore"):  # an overflow makes α non-finite, reported after the fit
            start = np.asarray(sub.sum(axis=0)).ravel() / X.shape[0]
    else:
        alpha_init = np.asarray(alpha_init, dtype=np.float64)
        if alpha_init.shape != (D,) or not np.all(np.isfinite(alpha_init)) or np.any(alpha_init <= 0):
            raise InputValueError(f"alpha_init must hold {D} finite numbers > 0")
        start = alpha_init[seen]
    start = np.maximum(start, alpha_min)
    if integer:
        lengths = lengths.astype(np.int64)
        pointer, exceed = _exceedance_counts(sub.indptr.astype(np.int64), sub.data.astype(np.int64))
        length_exceed = np.bincount(lengths, minlength=lengths.max() + 1)[::-1].cumsum()[::-1][1:].astype(np.float64)
        fitted, n_iter, converged = _minka_fixed_point(
            pointer, exceed, length_exceed, start.copy(), D - seen.shape[0], alpha_min, max_iter, tol
        )
    else:
        columns = np.repeat(np.arange(seen.shape[0]), np.diff(sub.indptr))
        fitted, n_iter, converged = _minka_fixed_point_real(
            columns, np.ascontiguousarray(sub.data, dtype=np.float64), lengths[lengths > 0], start.copy(),
            D - seen.shape[0], alpha_min, max_iter, tol,
        )  # fmt: skip
    check_finite_output("the fitted Dirichlet concentrations", fitted, cause=overflow_cause(X, feature_names))
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
    π̄_c = (N_c + a)/(N + C·a), a = ``class_pseudo_count`` (spec §1.8; Madsen et al. 2005).
    Unlike the multinomial, the DCM makes a word that has appeared once more likely to
    appear again (burstiness). X holds non-negative counts; real values (tf-idf weights) are
    accepted as by scikit-learn's ``MultinomialNB`` and use the Gamma-function form of the
    DCM likelihood (equal to the integer form at integers).
    An empty document is valid for prediction (likelihood 1 under every class), but a class
    whose training documents are all empty cannot be fitted (InputValueError). Documents that
    are not over-dispersed relative to the multinomial have their likelihood maximum at
    α_c0 → ∞ (the multinomial limit); the fit then stops when α_c0 reaches 10^10 (or at
    ``max_iter``) with a ConvergenceWarning and ``converged_`` False.

    Parameters
    ----------
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        Dirichlet pseudo-counts of the class prior (posterior mean plugged in).
    min_concentration : "auto" or float, default="auto"
        Smoothing floor of the fitted α_jc (words never seen in class c): "auto" floors at
        α̂_c0/D after the maximum-likelihood fit; a number > 0 is an absolute floor used
        inside the fixed point.
    max_iter : int, default=1000
    tol : float, default=1e-6
    include_multinomial_coef : bool, default=False
        Add log N_i!/∏_j x_ij! (cancels in p(y | x)); defined for integer counts only, so
        with it non-integral values are refused.
    class_prior : None, "uniform" or array-like of shape (n_classes,), default=None

    Attributes
    ----------
    classes_, class_count_ : ndarray of shape (n_classes,)
    concentration_ : ndarray of shape (n_classes, n_features)
        The fitted Dirichlet concentrations α_c (after smoothing).
    total_concentration_ : ndarray of shape (n_classes,)
        α̂_c0 of the maximum-likelihood fit, before smoothing (the burstiness: small is bursty).
    n_iter_ : ndarray of shape (n_classes,)
    converged_ : ndarray of bool, shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        T_jc.
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
        self, *, class_pseudo_count=1.0, min_concentration="auto", max_iter=1000, tol=1e-6,
        include_multinomial_coef=False, class_prior=None,
    ):  # fmt: skip
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

    #: no ``partial_fit``: the maximum-likelihood α needs all documents of a class at once
    _incremental = False

    def _reset_counts(self, n_features):
        self.feature_count_ = np.zeros((self.classes_.shape[0], n_features))
        self._documents = []

    def _count(self, X, Y):
        self.feature_count_ = self.feature_count_ + (Y.T @ X).toarray()
        codes = Y.indices  # one non-zero per row: the class code
        self._documents = [X[codes == c] for c in range(self.classes_.shape[0])]

    def _update_parameters(self):
        C, D = self.feature_count_.shape
        self.concentration_ = np.empty((C, D))
        self.n_iter_ = np.zeros(C, dtype=np.int64)
        self.converged_ = np.zeros(C, dtype=bool)
        self.total_concentration_ = np.zeros(C)
        for c, documents in enumerate(self._documents):
            if documents.shape[0] == 0 or documents.count_nonzero() == 0:
                raise InputValueError(
                    f"class {plain(self.classes_[c])} has no words (no documents, or all empty): "
                    "its Dirichlet-compound-multinomial cannot be fitted"
                )
            fit = _fit_dirichlet_multinomial(
                documents, None, self._floor(), self.max_iter, self.tol, self._feature_names()
            )
            auto = isinstance(self.min_concentration, str)
            alpha = np.maximum(fit.alpha, fit.alpha.sum() / D) if auto else fit.alpha
            self.concentration_[c], self.n_iter_[c], self.converged_[c] = alpha, fit.n_iter, fit.converged
            self.total_concentration_[c] = fit.alpha.sum()
        del self._documents
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
        cause = overflow_cause(X, self._feature_names())
        check_finite_output("the fitted concentrations concentration_", self.concentration_, cause=cause)

    def _joint_log_likelihood(self, X):
        return self._dcm_tables.log_pmf(X, self.include_multinomial_coef) + self.class_log_prior_
