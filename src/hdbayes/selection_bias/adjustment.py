"""Adjustment factors: the probability that a discarded feature fails the filter.

The correction for selection bias (thesis eq. 2.3, 2.8–2.14; spec §1.4) multiplies the
likelihood by

    P(S | α, y) = q(α)^{p−k},   q(α) = P(R(x_t, y) in the discarded region | α, y),

the probability that **one** feature drawn afresh from the prior is discarded. Its
cost is independent of p − k. Everything is returned as log q, which the models
multiply by p − k.

Naive Bayes (thesis §2.3.4, eq. 2.47–2.63): given α and θ the counts
I0 = #{y=0, x=1} and I1 = #{y=1, x=1} are independent Beta-binomials, and the
correlation depends on the data only through (I0, I1), so

    q(α) = ∫_0^1 Σ_{(I0, I1) discarded} P(I0 | α, θ) P(I1 | α, θ) dθ.

The thesis sums over the region H+ and uses the flip symmetry q = 1 − 2 P(H+);
here the discarded region itself is summed on the whole (n0+1) × (n1+1) lattice,
which is O(n²) per θ (trivial for gene-expression sizes), needs no symmetry
argument, has no cancellation when q is small, and uses exactly the correlation
function of the selection step (:func:`hdbayes.selection.correlation_from_sums`), so
the lattice point that equals γ is classified as the selection classified it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import logsumexp

from hdbayes.quadrature import simpson_rule
from hdbayes.selection import THRESHOLD_RTOL, correlation_from_sums
from hdbayes.special import beta_binomial_log_pmf_table

__all__ = [
    "discarded_lattice",
    "lattice_correlation",
    "naive_bayes_log_discard_probability",
]


def lattice_correlation(n0, n1):
    """Cor(I0, I1, ȳ) on the lattice 0 ≤ I0 ≤ n0, 0 ≤ I1 ≤ n1 (thesis eq. 2.45–2.46).

    Parameters
    ----------
    n0, n1 : int
        Numbers of training cases with y = 0 and y = 1.

    Returns
    -------
    ndarray of shape (n0 + 1, n1 + 1)
        The signed correlation of a binary feature having I0 ones among the y = 0
        cases and I1 ones among the y = 1 cases (0 for a constant feature).
    """
    n = n0 + n1
    i0 = np.arange(n0 + 1)[:, None]
    i1 = np.arange(n1 + 1)[None, :]
    m = i0 + i1
    return correlation_from_sums(i1, m, m, n, n1)


def discarded_lattice(n0, n1, threshold, strict):
    """Boolean mask of the lattice points whose |Cor| falls in the discarded region.

    ``strict=True``: |Cor| < γ (the point at γ itself passes the filter);
    ``strict=False``: |Cor| ≤ γ. A relative tolerance of
    :data:`hdbayes.selection.THRESHOLD_RTOL` guards the boundary.
    """
    cor = np.abs(lattice_correlation(n0, n1))
    tol = THRESHOLD_RTOL * abs(threshold)
    if strict:
        return cor < threshold - tol
    return cor <= threshold + tol


@lru_cache(maxsize=32)
def _beta_binomial_pmfs(n, alpha, theta):
    """P(I | α, θ) for I = 0..n on the (α, θ) grid, cached: cross-validation folds
    share class sizes and grids, so the tables are computed once per study."""
    alpha = np.asarray(alpha)[:, None]
    theta = np.asarray(theta)[None, :]
    pmf = np.exp(beta_binomial_log_pmf_table(alpha * theta, alpha * (1.0 - theta), n))
    pmf.setflags(write=False)
    return pmf


def naive_bayes_log_discard_probability(alpha, n0, n1, threshold, *, strict=False, theta_rule=None):
    """log q(α) for the Bayesian naive Bayes model (thesis eq. 2.54–2.63).

    Parameters
    ----------
    alpha : array_like of shape (K,)
        Values of the hyperparameter α > 0.
    n0, n1 : int
        Training class sizes (both ≥ 1).
    threshold : float
        γ ≥ 0, the selection threshold on |COR|.
    strict : bool, default=False
        Whether the discarded features satisfy |COR| < γ (True) or |COR| ≤ γ.
    theta_rule : QuadratureRule, optional
        Rule for the θ integral on [0, 1]; default Simpson's rule with 21 points
        (thesis §2.3.5). Use a symmetric rule with nodes at 0 and 1 or inside.

    Returns
    -------
    ndarray of shape (K,)
        log q(α); −inf where no lattice point is discarded.

    Notes
    -----
    Cost O(K · n_θ · n0 · n1) — independent of p − k.
    """
    alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if np.any(~np.isfinite(alpha)) or np.any(alpha <= 0):
        raise ValueError("alpha must be finite and > 0")
    if n0 < 1 or n1 < 1:
        raise ValueError(f"both classes need at least one case, got n0={n0}, n1={n1}")
    rule = theta_rule if theta_rule is not None else simpson_rule(21)
    mask = discarded_lattice(n0, n1, float(threshold), strict)
    if not mask.any():
        return np.full(alpha.shape, -np.inf)
    alpha_key, theta_key = tuple(alpha.tolist()), tuple(rule.nodes.tolist())
    pmf0 = _beta_binomial_pmfs(n0, alpha_key, theta_key)  # (K, T, n0 + 1)
    pmf1 = _beta_binomial_pmfs(n1, alpha_key, theta_key)  # (K, T, n1 + 1)
    inner = ((pmf0 @ mask.astype(np.float64)) * pmf1).sum(axis=-1)  # (K, T)
    with np.errstate(divide="ignore"):
        return logsumexp(np.log(inner) + rule.log_weights[None, :], axis=1)
