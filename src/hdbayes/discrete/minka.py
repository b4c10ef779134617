"""Minka's (2000) fixed point: the maximum-likelihood Dirichlet-compound-multinomial (Madsen et al. 2005).

For documents x_i (counts of D words, lengths N_i) the concentrations α of a Dirichlet-compound-multinomial
maximise Σ_i log DCM(x_i | α) under Minka's fixed point

    α_j ← α_j · Σ_i [ψ(x_ij + α_j) − ψ(α_j)] / Σ_i [ψ(N_i + α_0) − ψ(α_0)],

which never decreases the likelihood. The plain fixed point crawls along the overall scale
α_0 (hundreds of iterations on text); each sweep is therefore followed by one safeguarded
Newton step on log α_0 with the proportions α/α_0 fixed, accepted only when it
increases the likelihood, so the iteration stays monotone. For integer counts the digamma differences are
finite sums, ψ(x + a) − ψ(a) = Σ_{l<x} 1/(a + l), so with

    G_j(l) = #{i: x_ij > l},   H(l) = #{i: N_i > l}

one iteration costs O(Σ_j max_i x_ij + max_i N_i) — independent of the number
of documents, and only the words seen take part.

Real values (tf-idf weights, as scikit-learn's ``MultinomialNB`` accepts) and counts too
large for those tables use the same iteration with the digamma differences themselves,
ψ(x + a) − ψ(a), and the log-likelihood in its Gamma-function form
Σ_j log Γ(x_j + α_j)/Γ(α_j) − log Γ(N + α_0)/Γ(α_0), which equals the integer form at
integer counts (O(nnz) per iteration; tested against the integer path).

The fit reads the documents only through their histograms (:class:`~hdbayes.discrete.word_counts.WordCountHistogram`):
:func:`fit_histogram` fits from them, :func:`fit_dirichlet_multinomial` from documents. The digamma and trigamma
kernels are those of :mod:`hdbayes._special_kernels`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hdbayes._numba import jit
from hdbayes._special_kernels import digamma_difference_scalar, log_rising_factorial_scalar, trigamma_scalar
from hdbayes._validation import check_count, check_finite_output, check_positive
from hdbayes.discrete.conjugate import _TABLE_SIZE, dirichlet_multinomial_log_pmf
from hdbayes.discrete.word_counts import WordCountHistogram, _run_lengths
from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

__all__ = ["DirichletFit", "dirichlet_multinomial_log_likelihood", "fit_dirichlet_multinomial", "fit_histogram"]


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
        d1 = digamma_difference_scalar(a, x)
        value += log_rising_factorial_scalar(a, x)
        first += a * d1
        second += a * d1 + a * a * (trigamma_scalar(a + x) - trigamma_scalar(a))
    alpha0 = scale + held
    for i in range(lengths.shape[0]):
        n = lengths[i]
        d1 = digamma_difference_scalar(alpha0, n)
        value -= log_rising_factorial_scalar(alpha0, n)
        first -= scale * d1
        second -= scale * d1 + scale * scale * (trigamma_scalar(alpha0 + n) - trigamma_scalar(alpha0))
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
        denominator += digamma_difference_scalar(alpha0, third[i])
    numerator[:] = 0.0
    for e in range(second.shape[0]):
        k = int(first[e])
        numerator[k] += digamma_difference_scalar(alpha[k], second[e])
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
    X: ArrayLike,
    *,
    alpha_init: ArrayLike | None = None,
    alpha_min: float = 1e-8,
    max_iter: int = 1000,
    tol: float = 1e-6,
) -> DirichletFit:
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
    histogram = WordCountHistogram.from_data(X)
    return fit_histogram(
        histogram,
        alpha_init,
        check_positive("alpha_min", alpha_min),
        check_count("max_iter", max_iter),
        check_positive("tol", tol),
    )


def _integer_tables_apply(histogram):
    """Whether the exceedance tables of integer counts apply to ``histogram`` (as
    :func:`~hdbayes.discrete.conjugate.integer_counts_fit_tables` on the documents)."""
    values = histogram.values
    if values.size == 0:
        return True
    if not np.all(values == np.round(values)) or values.max() > 2**31:
        return False
    word_ends = np.append(_run_lengths((histogram.words,))[1:], values.shape[0]) - 1
    top = values[word_ends]  # values are sorted within each word
    limit = max(_TABLE_SIZE, 4 * histogram.n_nonzero)
    return top[top >= 2].sum() <= limit and histogram.lengths.max(initial=0) <= limit


def fit_histogram(
    histogram: WordCountHistogram, alpha_init: ArrayLike | None = None, alpha_min: float = 1e-8,
    max_iter: int = 1000, tol: float = 1e-6, feature_names: Sequence[str] | None = None,
) -> DirichletFit:  # fmt: skip
    """Minka's fixed point (see :func:`fit_dirichlet_multinomial`) on the histograms of the documents.

    Parameters
    ----------
    histogram : WordCountHistogram
        The documents' histograms of word counts and lengths (at least one non-empty document).
    alpha_init : array-like of shape (D,), optional
    alpha_min, tol : float, default=1e-8, 1e-6
    max_iter : int, default=1000
        The settings of :func:`fit_dirichlet_multinomial`.
    feature_names : sequence of str, optional
        The words' names, for messages.

    Returns
    -------
    DirichletFit
        The estimate ``alpha``, the number of iterations ``n_iter`` and whether they converged (``converged``).
    """
    D = histogram.n_features
    if histogram.lengths.size == 0:
        raise InputValueError("every document is empty: the Dirichlet-compound-multinomial cannot be fitted")
    check_finite_output("the document lengths", histogram.lengths, cause=histogram.overflow_cause(feature_names))
    word_starts = _run_lengths((histogram.words,))
    seen = histogram.words[word_starts]
    if alpha_init is None:
        with np.errstate(over="ignore"):  # an overflow makes α non-finite, reported after the fit
            start = np.add.reduceat(histogram.values * histogram.counts, word_starts) / histogram.n_documents
    else:
        alpha_init = np.asarray(alpha_init, dtype=np.float64)
        if alpha_init.shape != (D,) or not np.all(np.isfinite(alpha_init)) or np.any(alpha_init <= 0):
            raise InputValueError(f"alpha_init must hold {D} finite numbers > 0")
        start = alpha_init[seen]
    start = np.maximum(start, alpha_min)
    local = np.repeat(np.arange(seen.shape[0]), np.diff(np.append(word_starts, histogram.words.shape[0])))
    if _integer_tables_apply(histogram):
        ends = np.append(word_starts[1:], histogram.words.shape[0]) - 1
        pointer = np.concatenate([[0], np.cumsum(histogram.values[ends].astype(np.int64))])
        ones = np.zeros(pointer[-1] + 1)  # ones[pointer[k] + v - 1] = documents with x_k = v
        np.add.at(ones, pointer[local] + histogram.values.astype(np.int64) - 1, histogram.counts)
        tail = np.cumsum(ones[::-1])[::-1]  # Σ over positions ≥ l
        exceed = tail[:-1] - np.repeat(tail[pointer[1:]], np.diff(pointer))  # G_k(l) = #{x_k > l}
        lengths = histogram.lengths.astype(np.int64)
        length_exceed = np.bincount(lengths, weights=histogram.length_counts, minlength=lengths.max() + 1)
        length_exceed = length_exceed[::-1].cumsum()[::-1][1:]
        fitted, n_iter, converged = _minka_fixed_point(
            pointer, exceed, length_exceed, start.copy(), D - seen.shape[0], alpha_min, max_iter, tol
        )
    else:
        fitted, n_iter, converged = _minka_fixed_point_real(
            np.repeat(local, histogram.counts), np.repeat(histogram.values, histogram.counts),
            np.repeat(histogram.lengths, histogram.length_counts), start.copy(), D - seen.shape[0], alpha_min,
            max_iter, tol,
        )  # fmt: skip
    check_finite_output("the fitted Dirichlet concentrations", fitted, cause=histogram.overflow_cause(feature_names))
    alpha = np.full(D, alpha_min)
    alpha[seen] = fitted
    return DirichletFit(alpha, int(n_iter), bool(converged))


def dirichlet_multinomial_log_likelihood(X: ArrayLike, alpha: ArrayLike) -> float:
    """Σ_i log DCM(x_i | α) without the multinomial coefficients (the objective of the fixed point)."""
    return float(dirichlet_multinomial_log_pmf(X, alpha, include_coefficient=False).sum())
