"""The adjustment factor of the Bayesian binary mixture model (thesis §2.4, eq. 2.97–2.105, Appendix 2).

As for naive Bayes (:mod:`hdbayes.selection_bias.adjustment`, whose lattice and Beta-binomial tables it uses),
the correction multiplies the likelihood by q(α)^{p−k}, q(α) the probability that one feature drawn afresh from
the prior is discarded; here q depends also on the latent labels z.

For a discarded feature t, let I0 and I1 be its numbers of ones among the cases with
x_0 = 0 and x_0 = 1 (the lattice of the naive Bayes factor). Its distribution now
depends on the latent labels z: in group z the number of ones m_z is Beta-binomial
(n^[z], αθ, α(1−θ)), and given m_z the ones are spread uniformly over the group, so the
count A_x^[z] among its x_0 = x cases is hypergeometric. The thesis forms the 2-D
convolution T^[0] ⊛ T^[1] (eq. 2.105) for every θ and α and sums it over the discarded
region. Here the sum is reorganised so that θ and α enter only through the two
Beta-binomial vectors:

    q(α) = ∫ Σ_{m0, m1} BB_{n^[0]}(m0 | α, θ) · BB_{n^[1]}(m1 | α, θ) · W(m0, m1) dθ,
    W(m0, m1) = P((I0, I1) discarded | m0, m1)        (hypergeometric splits only).

W depends on the data only through (n0, n1, n_0^[1], n_1^[1], γ) and costs O(n³) once;
the (α, θ) grid then costs one matrix product. At fixed M = m0 + m1 the correlation is
monotone in I0 (the numerator is I1 − ȳM), so the discarded set is an interval of I0
and W(m0, m1) = Σ_a P(A^[E] = a | m_E) · P(lo_M − a ≤ A^[C] ≤ hi_M − a | m_C), one
hypergeometric summed explicitly (the smallest of the four cells) and the other read
from its cumulative table. All terms are non-negative, so there is no cancellation
beyond the difference of two cumulative sums.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import gammaln, logsumexp

from hdbayes._numba import jit
from hdbayes._validation import check_count, check_positive
from hdbayes.exceptions import InputValueError
from hdbayes.selection_bias.adjustment import _beta_binomial_pmfs, discarded_lattice, exact_theta_rule

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from hdbayes.quadrature import QuadratureRule

__all__ = ["MixtureAdjustmentCache", "mixture_log_discard_probability"]


def _check_alpha(alpha):
    alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if alpha.ndim != 1 or alpha.size == 0:
        raise InputValueError("alpha must be a non-empty 1-D array")
    if np.any(~np.isfinite(alpha)) or np.any(alpha <= 0):
        raise InputValueError("alpha must be finite and > 0")
    return alpha


def _check_class_sizes(n0, n1):
    n0 = check_count("n0", n0, minimum=1)
    n1 = check_count("n1", n1, minimum=1)
    return n0, n1


def _check_label_counts(n0, n1, n0_label1, n1_label1):
    n0_label1 = check_count("n0_label1", n0_label1, minimum=0)
    n1_label1 = check_count("n1_label1", n1_label1, minimum=0)
    if n0_label1 > n0:
        raise InputValueError(f"n0_label1 must be between 0 and n0={n0}, got {n0_label1}")
    if n1_label1 > n1:
        raise InputValueError(f"n1_label1 must be between 0 and n1={n1}, got {n1_label1}")
    return n0_label1, n1_label1


@lru_cache(maxsize=32)
def _discarded_intervals(n0, n1, threshold, strict):
    """The discarded region as intervals of I0 on each anti-diagonal I0 + I1 = M.

    Returns (lo, hi), int arrays of length n0 + n1 + 1: the feature is discarded iff
    lo[M] ≤ I0 ≤ hi[M]; an empty diagonal has lo = hi + 1. Raises if the mask of
    :func:`~hdbayes.selection_bias.adjustment.discarded_lattice` is not an interval on some diagonal (it always
    is: at fixed M the correlation is a monotone function of I1 − ȳM).
    """
    mask = discarded_lattice(n0, n1, threshold, strict)
    i0 = np.broadcast_to(np.arange(n0 + 1)[:, None], mask.shape)
    total = np.arange(n0 + 1)[:, None] + np.arange(n1 + 1)[None, :]
    n = n0 + n1
    count = np.bincount(total[mask], minlength=n + 1)
    lo = np.full(n + 1, n + 1, dtype=np.int64)
    hi = np.full(n + 1, -1, dtype=np.int64)
    np.minimum.at(lo, total[mask], i0[mask])
    np.maximum.at(hi, total[mask], i0[mask])
    empty = count == 0
    lo[empty], hi[empty] = 0, -1
    if np.any(count[~empty] != hi[~empty] - lo[~empty] + 1):
        raise RuntimeError("the discarded region is not an interval on every anti-diagonal")  # pragma: no cover
    lo.setflags(write=False)
    hi.setflags(write=False)
    return lo, hi


@lru_cache(maxsize=8)
def _log_factorials(n):
    table = gammaln(np.arange(n + 1) + 1.0)
    table.setflags(write=False)
    return table


@jit
def _hypergeometric_table(size, marked, log_factorial):
    """P(A = a | m) for m = 0..size (rows), a = 0..marked (columns): the number of marked
    items among m drawn without replacement from ``size`` items of which ``marked`` are marked."""
    lf = log_factorial
    unmarked = size - marked
    table = np.zeros((size + 1, marked + 1))
    for m in range(size + 1):
        log_total = lf[size] - lf[m] - lf[size - m]
        for a in range(max(0, m - unmarked), min(marked, m) + 1):
            # log C(marked, a) + log C(unmarked, m − a) − log C(size, m), grouped so that the
            # degenerate splits (unmarked = 0 or marked = 0) give exactly 1
            log_marked = lf[marked] - lf[a] - lf[marked - a]
            log_unmarked = lf[unmarked] - lf[m - a] - lf[unmarked - m + a]
            table[m, a] = np.exp(log_marked + log_unmarked - log_total)
    return table


@jit
def _discard_weights_kernel(size_e, marked_e, size_c, marked_c, column, lo, hi, log_factorial):
    """W(m_E, m_C) for an explicit group E and a cumulated group C (see _mixture_discard_weights)."""
    hyper_e = _hypergeometric_table(size_e, marked_e, log_factorial)
    hyper_c = _hypergeometric_table(size_c, marked_c, log_factorial)
    # cumulative[m, j + 1] = P(A_C ≤ j | m), j = −1..marked_c
    cumulative = np.zeros((size_c + 1, marked_c + 2))
    for m in range(size_c + 1):
        running = 0.0
        for a in range(marked_c + 1):
            running += hyper_c[m, a]
            cumulative[m, a + 1] = running
    unmarked_e = size_e - marked_e
    weights = np.zeros((size_e + 1, size_c + 1))
    for m_e in range(size_e + 1):
        a_first, a_last = max(0, m_e - unmarked_e), min(marked_e, m_e)
        for m_c in range(size_c + 1):
            total = m_e + m_c
            if column == 0:
                low, high = lo[total], hi[total]
            else:  # the interval of I1 = M − I0
                low, high = total - hi[total], total - lo[total]
            if high < low:
                continue
            acc = 0.0
            for a in range(a_first, a_last + 1):
                upper = high - a  # A_C ≤ upper
                if upper < 0:
                    break
                lower = low - a - 1  # A_C > lower
                if lower >= marked_c:
                    continue
                acc += hyper_e[m_e, a] * (
                    cumulative[m_c, min(upper, marked_c) + 1] - cumulative[m_c, max(lower, -1) + 1]
                )
            weights[m_e, m_c] = acc
    return weights


def _mixture_discard_weights(n0, n1, n0_label1, n1_label1, lo, hi):
    """W(m0, m1) = P(discarded | m0 ones in group z = 0, m1 ones in group z = 1).

    Returns an array of shape (n^[0] + 1, n^[1] + 1).
    """
    n = n0 + n1
    cells = {(0, 0): n0 - n0_label1, (0, 1): n1 - n1_label1, (1, 0): n0_label1, (1, 1): n1_label1}
    sizes = {0: n - n0_label1 - n1_label1, 1: n0_label1 + n1_label1}
    # the explicit sum runs over the smallest cell; the other group's cell in the same x_0 column is cumulated
    group_e, column = min(cells, key=lambda key: (cells[key], key))
    group_c = 1 - group_e
    weights = _discard_weights_kernel(
        sizes[group_e],
        cells[(group_e, column)],
        sizes[group_c],
        cells[(group_c, column)],
        column,
        lo,
        hi,
        _log_factorials(n),
    )
    return weights if group_e == 0 else weights.T


def _canonical_labels(n0, n1, n0_label1, n1_label1):
    """Swapping the labels z ↔ 1 − z leaves q unchanged; use one orientation of each pair."""
    return min((n0_label1, n1_label1), (n0 - n0_label1, n1 - n1_label1))


@jit
def _bilinear_kernel(left, weights, right):
    """out[r] = left[r] @ weights @ right[r] (compiled: a BLAS call this small is slower when threaded)."""
    out = np.zeros(left.shape[0])
    row = np.empty(weights.shape[1])
    for r in range(left.shape[0]):
        row[:] = 0.0
        for i in range(weights.shape[0]):
            p = left[r, i]
            if p != 0.0:
                for j in range(weights.shape[1]):
                    row[j] += p * weights[i, j]
        total = 0.0
        for j in range(weights.shape[1]):
            total += row[j] * right[r, j]
        out[r] = total
    return out


def _mixture_log_q(weights, pmf0, pmf1, log_weights):
    """log ∫ pmf0ᵀ W pmf1 dθ for pmf0 of shape (K, T, n^[0] + 1) and pmf1 of shape (K, T, n^[1] + 1)."""
    k, t = pmf0.shape[:2]
    # contiguous arguments: one compiled signature (the weights of the other orientation come transposed)
    left, right = np.ascontiguousarray(pmf0.reshape(k * t, -1)), np.ascontiguousarray(pmf1.reshape(k * t, -1))
    inner = _bilinear_kernel(left, np.ascontiguousarray(weights), right).reshape(k, t)
    with np.errstate(divide="ignore"):
        return logsumexp(np.log(inner) + log_weights[None, :], axis=1)


def mixture_log_discard_probability(
    alpha: ArrayLike,
    n0: int,
    n1: int,
    n0_label1: int,
    n1_label1: int,
    threshold: float,
    *,
    strict: bool = False,
    theta_rule: QuadratureRule | None = None,
) -> np.ndarray:
    """log q(α) for the Bayesian binary mixture model (thesis eq. 2.97–2.105).

    q(α) is the probability that one feature drawn afresh from the prior, given the
    observed response x_0 and the latent labels z, has |COR(x_t, x_0)| in the discarded
    region. It depends on z only through the counts of label 1 among the x_0 = 0 and
    x_0 = 1 cases.

    Parameters
    ----------
    alpha : array_like of shape (K,)
        Values of the feature hyperparameter α > 0 (not α_0).
    n0, n1 : int
        Numbers of training cases with x_0 = 0 and x_0 = 1 (both ≥ 1).
    n0_label1, n1_label1 : int
        #{z = 1, x_0 = 0} ∈ [0, n0] and #{z = 1, x_0 = 1} ∈ [0, n1]; the z = 0 counts
        are the complements.
    threshold : float
        γ ≥ 0, the selection threshold on |COR| with the response.
    strict : bool, default=False
        Whether the discarded features satisfy |COR| < γ (True) or |COR| ≤ γ.
    theta_rule : QuadratureRule, optional
        Rule for the θ integral on [0, 1]. Given α the integrand is a polynomial in θ of
        degree ≤ n0 + n1, so the default, Gauss–Legendre with ⌈(n0 + n1 + 2)/2⌉ nodes
        (:func:`~hdbayes.selection_bias.adjustment.exact_theta_rule`), integrates it exactly. The thesis (§2.4.4) used
        Simpson's rule with 11 points (``simpson_rule(11)``), which errs by 4e-3 to 2e-2 in
        log q at n = 200 — multiplied by p − k in the conditionals of α and the labels.

    Returns
    -------
    ndarray of shape (K,)
        The values log q(α), one per α; −inf where no lattice point is discarded.

    Notes
    -----
    Equals :func:`~hdbayes.selection_bias.adjustment.naive_bayes_log_discard_probability` (to rounding) when z = x_0
    (``n0_label1 = 0, n1_label1 = n1``) and is unchanged by the swap z ↔ 1 − z
    (bit for bit: both orientations are computed the same way). Cost O(n³) for the
    hypergeometric weights plus O(K · n_θ · n²) — see :class:`MixtureAdjustmentCache`
    for repeated calls with the same α grid.
    """
    return (
        MixtureAdjustmentCache(alpha, n0, n1, threshold, strict=strict, theta_rule=theta_rule)
        .log_q(n0_label1, n1_label1)
        .copy()
    )


class MixtureAdjustmentCache:
    """log q(α) of the mixture model for every label configuration, computed on demand.

    For fixed (α grid, n0, n1, γ, strict, θ rule) the adjustment factor depends on the
    labels only through ``(n0_label1, n1_label1)``; a Gibbs update of one label z^(i)
    needs the two keys with that case's label set to 0 and to 1, so each key is
    computed once and stored.

    Parameters
    ----------
    alpha, n0, n1, threshold, strict, theta_rule
        As in :func:`mixture_log_discard_probability`.

    Attributes
    ----------
    alpha : ndarray of shape (K,)
    n_computed : int
        Number of keys computed so far (a key and its label-swapped mirror
        (n0 − n0_label1, n1 − n1_label1) share one computation).

    Examples
    --------
    >>> cache = MixtureAdjustmentCache([2.6, 27.99], 4, 5, 0.3)
    >>> cache.log_q(2, 3).shape
    (2,)
    >>> bool(np.array_equal(cache.log_q(1, 2), cache.log_q(3, 3))), cache.n_computed  # mirror keys
    (True, 2)
    """

    def __init__(self, alpha, n0, n1, threshold, *, strict=False, theta_rule=None):
        self.alpha = _check_alpha(alpha)
        self.alpha.setflags(write=False)
        self.n0, self.n1 = _check_class_sizes(n0, n1)
        self.threshold = check_positive("threshold", threshold, allow_zero=True)
        self.strict = bool(strict)
        self.theta_rule = theta_rule if theta_rule is not None else exact_theta_rule(self.n0 + self.n1)
        self._lo, self._hi = _discarded_intervals(self.n0, self.n1, self.threshold, self.strict)
        self._nothing_discarded = not np.any(self._hi >= self._lo)
        self._log_theta_weights = self.theta_rule.log_weights
        self._alpha_key = tuple(self.alpha.tolist())
        self._theta_key = tuple(self.theta_rule.nodes.tolist())
        self._values = {}
        self._table = None
        self.n_computed = 0

    def _pmf(self, size):
        """Beta-binomial pmf of the number of ones in a group of ``size`` cases, (K, T, size + 1)."""
        return _beta_binomial_pmfs(size, self._alpha_key, self._theta_key)

    def _compute(self, key):
        if self._nothing_discarded:
            value = np.full(self.alpha.shape, -np.inf)
        else:
            n0_label1, n1_label1 = key
            size1 = n0_label1 + n1_label1
            weights = _mixture_discard_weights(self.n0, self.n1, n0_label1, n1_label1, self._lo, self._hi)
            value = _mixture_log_q(
                weights, self._pmf(self.n0 + self.n1 - size1), self._pmf(size1), self._log_theta_weights
            )
        value.setflags(write=False)
        self.n_computed += 1
        return value

    def _compute_batch(self, keys):
        """Keys of one group size n^[1]: one matrix product for all of them (BLAS pays off here)."""
        if self._nothing_discarded:
            for key in keys:
                self._values[key] = self._compute(key)
            return
        size1 = keys[0][0] + keys[0][1]
        pmf0, pmf1 = self._pmf(self.n0 + self.n1 - size1), self._pmf(size1)
        k, t = pmf0.shape[:2]
        weights = np.stack([_mixture_discard_weights(self.n0, self.n1, u, v, self._lo, self._hi) for u, v in keys])
        # (K·T, n^[0]+1) @ (n^[0]+1, keys·(n^[1]+1))
        products = pmf0.reshape(k * t, -1) @ weights.transpose(1, 0, 2).reshape(weights.shape[1], -1)
        inner = (products.reshape(k * t, len(keys), -1) * pmf1.reshape(k * t, 1, -1)).sum(axis=-1)
        with np.errstate(divide="ignore"):
            log_inner = np.log(inner.reshape(k, t, len(keys)))
        values = logsumexp(log_inner + self._log_theta_weights[None, :, None], axis=1)  # (K, keys)
        for key, value in zip(keys, values.T):
            value = value.copy()
            value.setflags(write=False)
            self._values[key] = value
        self.n_computed += len(keys)

    def log_q(self, n0_label1, n1_label1):
        """log q(α) for the label counts (#{z=1, x_0=0}, #{z=1, x_0=1}); read-only array (K,)."""
        n0_label1, n1_label1 = _check_label_counts(self.n0, self.n1, n0_label1, n1_label1)
        key = _canonical_labels(self.n0, self.n1, n0_label1, n1_label1)
        value = self._values.get(key)
        if value is None:
            value = self._values[key] = self._compute(key)
        return value

    def table(self):
        """The values computed so far: {(n0_label1, n1_label1): log q}, both mirror keys listed."""
        out = {}
        for (u, v), value in self._values.items():
            out[(u, v)] = value
            out[(self.n0 - u, self.n1 - v)] = value
        return out

    def precompute_all(self):
        """Fill and return the whole table, a read-only float64 array (n0 + 1, n1 + 1, K).

        ``table[u, v]`` is log q for n0_label1 = u, n1_label1 = v. Keys already computed
        are reused; each mirror pair is computed once.
        """
        if self._table is None:
            n = self.n0 + self.n1
            for size1 in range(n + 1):  # keys of one group size share the Beta-binomial tables
                keys = [
                    key
                    for u in range(max(0, size1 - self.n1), min(self.n0, size1) + 1)
                    if (key := (u, size1 - u)) == _canonical_labels(self.n0, self.n1, *key) and key not in self._values
                ]
                # chunks of at most ~4e6 weights in memory
                chunk = max(1, 4_000_000 // ((n - size1 + 1) * (size1 + 1)))
                for start in range(0, len(keys), chunk):
                    self._compute_batch(keys[start : start + chunk])
            table = np.empty((self.n0 + 1, self.n1 + 1, self.alpha.size))
            for (u, v), value in self.table().items():
                table[u, v] = value
            table.setflags(write=False)
            self._table = table
        return self._table
