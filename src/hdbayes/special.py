"""Special functions shared by the models, all in log space.

The building block of every binary model in the thesis is the Beta–Bernoulli
marginal probability U (thesis eq. 2.27–2.30)

    U(f1, f0, n1, n0) = B(f1 + n1, f0 + n0) / B(f1, f0)
                      = ∏_{l<n0}(f0 + l) · ∏_{l<n1}(f1 + l) / ∏_{l<n0+n1}(f0 + f1 + l),

the probability of one particular binary sequence with n1 ones and n0 zeros when the
success probability ~ Beta(f1, f0) is integrated out. At the endpoints of a θ grid a
Beta parameter is 0; the product form gives the right limits
(U(0, f0, n1, n0) = 1 if n1 = 0 else 0), which the Gamma-function form does not.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

__all__ = [
    "beta_binomial_log_pmf_table",
    "log_beta_bernoulli",
    "log_rising_factorial",
    "log_rising_factorial_table",
]


#: Below this a the log-Gamma difference is used; above it Stirling's series.
_STIRLING_FROM = 15.0


def _stirling_tail(z):
    """log Γ(z) − [(z − 1/2) log z − z + log(2π)/2], by Stirling's series (z ≥ 15: error < 1e-15)."""
    inverse = 1.0 / z
    square = inverse * inverse
    return inverse * (1.0 / 12 - square * (1.0 / 360 - square * (1.0 / 1260 - square * (1.0 / 1680 - square / 1188))))


def log_rising_factorial(a, n):
    """log of the rising factorial a (a+1) … (a+n−1) = log Γ(a+n)/Γ(a), elementwise.

    Accurate also when a ≫ n (a Dirichlet concentration near the multinomial limit,
    a ~ 10^10), where the difference of two log-Gamma values would lose every digit: for
    a ≥ 15 it uses the difference of Stirling's series written without cancellation,

        n log a + (a + n − 1/2) log1p(n/a) − n + S(a + n) − S(a),

    and the log-Gamma difference below. n ≥ 0 (real). Exact limits at a = 0: 0 for n = 0
    and −inf for n ≥ 1.

    Examples
    --------
    >>> round(float(log_rising_factorial(1e12, 3) - 3 * np.log(1e12)), 12)   # log(1 + 3/a + …) ≈ 3e-12
    3e-12
    """
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    a, n = np.broadcast_arrays(a, n)
    large = a >= _STIRLING_FROM
    safe = np.where(large, a, _STIRLING_FROM)
    stirling = n * np.log(safe) + (safe + n - 0.5) * np.log1p(n / safe) - n + _stirling_tail(safe + n)
    stirling = stirling - _stirling_tail(safe)
    positive = a > 0
    small = np.where(large | ~positive, 1.0, a)
    out = np.where(large, stirling, gammaln(small + n) - gammaln(small))
    return np.where(positive, out, np.where(n > 0, -np.inf, 0.0))


def log_beta_bernoulli(f1, f0, n1, n0):
    """log U(f1, f0, n1, n0), the Beta–Bernoulli marginal (thesis eq. 2.27–2.30).

    Parameters
    ----------
    f1, f0 : array_like
        Beta parameters (≥ 0; a zero gives the limiting point mass).
    n1, n0 : array_like
        Numbers of ones and zeros.

    Returns
    -------
    ndarray
        log U, broadcast over the inputs (−inf where U = 0).

    Examples
    --------
    >>> round(float(np.exp(log_beta_bernoulli(1.0, 1.0, 1, 1))), 12)  # ∫ ψ(1−ψ) dψ = 1/6
    0.166666666667
    """
    f1 = np.asarray(f1, dtype=np.float64)
    f0 = np.asarray(f0, dtype=np.float64)
    n1 = np.asarray(n1, dtype=np.float64)
    n0 = np.asarray(n0, dtype=np.float64)
    return log_rising_factorial(f1, n1) + log_rising_factorial(f0, n0) - log_rising_factorial(f1 + f0, n1 + n0)


def log_rising_factorial_table(a, n_max):
    """Table of log Γ(a + I)/Γ(a) for I = 0..n_max, by cumulative sums of log(a + l).

    Parameters
    ----------
    a : array_like of shape S
        Values ≥ 0.
    n_max : int

    Returns
    -------
    ndarray of shape S + (n_max + 1,)
        Exact limits at a = 0 (0, −inf, −inf, …). Accurate to a few ulps per term,
        which is all the small counts of the thesis's models need; use
        :func:`log_rising_factorial` for large counts.
    """
    a = np.asarray(a, dtype=np.float64)[..., None]
    with np.errstate(divide="ignore"):
        terms = np.log(a + np.arange(n_max))
    table = np.zeros(a.shape[:-1] + (n_max + 1,))
    np.cumsum(terms, axis=-1, out=table[..., 1:])
    return table


def beta_binomial_log_pmf_table(a, b, n):
    """log Beta-binomial(I; n, a, b) for I = 0..n (thesis eq. 2.60, 2.63).

    P(I) = C(n, I) · U(a, b, I, n − I), with the point-mass limits at a = 0 or b = 0.

    Parameters
    ----------
    a, b : array_like of shape S
        Beta parameters (≥ 0, not both 0).
    n : int
        Number of trials.

    Returns
    -------
    ndarray of shape S + (n + 1,)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    counts = np.arange(n + 1)
    log_choose = gammaln(n + 1) - gammaln(counts + 1) - gammaln(n - counts + 1)
    ones = log_rising_factorial_table(a, n)
    zeros = log_rising_factorial_table(b, n)[..., ::-1]
    total = log_rising_factorial_table(a + b, n)[..., n:]
    return log_choose + ones + zeros - total
