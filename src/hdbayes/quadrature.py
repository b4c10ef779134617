"""Quadrature rules used to integrate hyperparameters and feature parameters.

* :func:`inverse_gamma_midpoint_grid` — the midpoint rule in prior quantiles used for
  α (thesis §2.3.3): with K points, α_m = F^{-1}((m − ½)/K), m = 1..K, where F is
  the Inverse-Gamma(a, b) distribution function; an integral ∫ g(α) P(α) dα is
  approximated by the plain average of g(α_m).
* :func:`simpson_rule` — composite Simpson's rule on [0, 1] (the θ integrals of
  eq. 2.40 and 2.55); the nodes include both endpoints and are symmetric about ½.
* :func:`gauss_legendre_rule` — Gauss–Legendre on [0, 1], exact for polynomials of
  degree ≤ 2m − 1. Given α, every θ integrand of the binary models is a polynomial in
  θ of degree at most n + 1 (U(αθ, α(1−θ), I, O) = (αθ)_I (α(1−θ))_O / (α)_{I+O}), so
  ⌈(n + 2)/2⌉ nodes integrate them exactly.
* :func:`adaptive_inverse_gamma_rule` — the default rule for α of the naive Bayes model: the
  trapezoidal rule in log α with the Inverse-Gamma prior density as part of the integrand,
  refined where the posterior has its mass until the posterior's normaliser, mean and
  standard deviation of log α settle, and the prior's tails beyond the grid added to the end
  nodes. A posterior that is a narrow peak in log α (many features) or a long tail towards
  large α (few weak features, with correction) both converge; the midpoint rule in prior
  quantiles with 30 points resolves neither (see ``docs/naive_bayes.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammainccinv, gammaincinv, gammaln

from hdbayes._validation import check_positive
from hdbayes.exceptions import InputValueError

__all__ = [
    "AdaptiveRule",
    "QuadratureRule",
    "adaptive_inverse_gamma_rule",
    "gauss_legendre_rule",
    "inverse_gamma_isf",
    "inverse_gamma_logpdf",
    "inverse_gamma_midpoint_grid",
    "inverse_gamma_ppf",
    "simpson_rule",
]


@dataclass(frozen=True)
class QuadratureRule:
    """Nodes and weights of a quadrature rule, with the logs of the weights."""

    nodes: np.ndarray
    weights: np.ndarray

    @property
    def log_weights(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.weights)


# The Inverse-Gamma(a, b) distribution from scipy.special: scipy.stats is a large import (about 0.5 s of CPU)
# that a fit should not need. α ~ IG(a, b) when b/α ~ Gamma(a, 1), so P(α ≤ x) = Q(a, b/x), the regularised
# upper incomplete gamma function.
def inverse_gamma_ppf(q, shape, scale):
    """Quantile function of Inverse-Gamma(``shape``, ``scale``): the x with P(α ≤ x) = ``q``.

    Parameters
    ----------
    q : array_like
        Probabilities in [0, 1].
    shape, scale : float
        a > 0 and b > 0.

    Returns
    -------
    ndarray or float
        b / Q⁻¹(a, q), with Q⁻¹ the inverse of the regularised upper incomplete gamma function
        (what ``scipy.stats.invgamma.ppf(q, a, scale=b)`` computes).
    """
    with np.errstate(divide="ignore"):
        return scale / gammainccinv(shape, np.asarray(q, dtype=np.float64))


def inverse_gamma_isf(q, shape, scale):
    """Inverse survival function of Inverse-Gamma(``shape``, ``scale``): the x with P(α > x) = ``q``.

    Parameters
    ----------
    q : array_like
        Probabilities in [0, 1].
    shape, scale : float
        a > 0 and b > 0.

    Returns
    -------
    ndarray or float
        b / P⁻¹(a, q), with P⁻¹ the inverse of the regularised lower incomplete gamma function
        (``scipy.stats.invgamma.isf(q, a, scale=b)``).
    """
    with np.errstate(divide="ignore"):
        return scale / gammaincinv(shape, np.asarray(q, dtype=np.float64))


def inverse_gamma_logpdf(x, shape, scale):
    """Log density of Inverse-Gamma(``shape``, ``scale``) at ``x``: a log b − log Γ(a) − (a + 1) log x − b/x.

    Parameters
    ----------
    x : array_like
        Points; the log density is −inf at x ≤ 0.
    shape, scale : float
        a > 0 and b > 0.

    Returns
    -------
    ndarray or float
        The log density (``scipy.stats.invgamma.logpdf(x, a, scale=b)``).
    """
    x = np.asarray(x, dtype=np.float64)
    positive = x > 0
    safe = np.where(positive, x, 1.0)
    value = shape * np.log(scale) - gammaln(shape) - (shape + 1.0) * np.log(safe) - scale / safe
    value = np.where(positive, value, -np.inf)
    return value[()] if value.ndim == 0 else value


def inverse_gamma_midpoint_grid(shape, scale, n_points):
    """Midpoint rule in the quantiles of an Inverse-Gamma prior.

    The Inverse-Gamma(a, b) density is ∝ α^{-(1+a)} exp(−b/α) (scipy's
    ``invgamma(a, scale=b)``).

    Parameters
    ----------
    shape, scale : float
        a > 0 and b > 0.
    n_points : int
        K ≥ 1.

    Returns
    -------
    QuadratureRule
        Nodes α_1 < … < α_K and equal weights 1/K.

    Examples
    --------
    >>> rule = inverse_gamma_midpoint_grid(0.5, 5.0, 10)
    >>> np.round(rule.nodes[:3], 2)
    array([2.6 , 4.83, 7.56])
    """
    shape = check_positive("shape", shape)
    scale = check_positive("scale", scale)
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 1:
        raise InputValueError(f"n_points must be an integer >= 1, got {n_points!r}")
    u = (np.arange(1, n_points + 1) - 0.5) / n_points
    nodes = inverse_gamma_ppf(u, shape, scale)
    return QuadratureRule(nodes, np.full(n_points, 1.0 / n_points))


def simpson_rule(n_points, lower=0.0, upper=1.0):
    """Composite Simpson's rule with ``n_points`` nodes (odd, ≥ 3), endpoints included.

    Weights are h/3 · [1, 4, 2, 4, …, 2, 4, 1] with h = (upper − lower)/(n_points − 1).

    Examples
    --------
    >>> rule = simpson_rule(21)
    >>> round(float(rule.weights @ rule.nodes**3), 12)  # exact for cubics
    0.25
    """
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 3 or n_points % 2 == 0:
        raise InputValueError(f"Simpson's rule needs an odd number of points >= 3, got {n_points!r}")
    nodes = np.linspace(lower, upper, n_points)
    h = (upper - lower) / (n_points - 1)
    weights = np.full(n_points, 2.0)
    weights[1::2] = 4.0
    weights[0] = weights[-1] = 1.0
    return QuadratureRule(nodes, weights * h / 3.0)


def gauss_legendre_rule(n_points, lower=0.0, upper=1.0):
    """Gauss–Legendre rule with ``n_points`` nodes on [lower, upper].

    Exact for polynomials of degree ≤ 2·n_points − 1; the nodes are interior and
    symmetric about the midpoint.

    Examples
    --------
    >>> rule = gauss_legendre_rule(3)
    >>> round(float(rule.weights @ rule.nodes**5), 12)  # exact up to degree 5
    0.166666666667
    """
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 1:
        raise InputValueError(f"n_points must be an integer >= 1, got {n_points!r}")
    nodes, weights = np.polynomial.legendre.leggauss(int(n_points))
    half = (upper - lower) / 2.0
    return QuadratureRule(lower + half * (nodes + 1.0), half * weights)


@dataclass(frozen=True)
class AdaptiveRule:
    """Outcome of :func:`adaptive_inverse_gamma_rule`.

    Attributes
    ----------
    rule : QuadratureRule
        Nodes α_1 < … < α_K and weights w_m (prior mass: Σ_m w_m g(α_m) ≈ ∫ g(α) P(α) dα).
    log_values : ndarray of shape (K,)
        log g(α_m), as returned by the integrand.
    order : ndarray of int, shape (K,)
        Position of each node among all the points evaluated, in the order the integrand
        saw them (concatenating its successive calls), so that a caller can pick what it
        computed alongside g at the retained nodes.
    n_evaluations : int
        Points at which g was evaluated (nodes of negligible posterior mass are dropped
        from ``rule``).
    converged : bool
        Whether every cell with mass was resolved before ``max_nodes`` points.
    """

    rule: QuadratureRule
    log_values: np.ndarray
    order: np.ndarray
    n_evaluations: int
    converged: bool


#: Nodes whose posterior density is below exp(−57.6) ≈ 1e-25 of the peak's are dropped at the end.
_NEGLIGIBLE = 57.6
#: Cells with posterior density above exp(−30) of the peak's at one end are halved together, so
#: that the grid is uniform wherever the integrand is not negligible (where the spacing changes
#: the trapezoidal rule is only O(h²) accurate).
_ACTIVE = 30.0
#: The cells that must resolve the integrand: density above exp(−15) of the peak's at one end.
_CHECKED = 15.0


def _h_squared_curvature(t, values):
    """h² |f''| at every node of a (non-uniform) grid, from second divided differences, with h the
    larger of the two adjacent spacings (the end nodes copy their neighbour)."""
    left, right = np.diff(t)[:-1], np.diff(t)[1:]
    slopes = np.diff(values) / np.diff(t)
    second = 2.0 * np.diff(slopes) / (left + right)
    out = np.empty_like(t)
    with np.errstate(invalid="ignore"):
        out[1:-1] = np.abs(second) * np.maximum(left, right) ** 2
    out[0], out[-1] = out[1], out[-2]
    return np.where(np.isfinite(out), out, np.inf)


def _trapezoid_log_weights(t, log_prior, log_lower_tail, log_upper_tail):
    """log of the prior-mass weights of the trapezoidal rule in t = log α, tails added at the ends."""
    widths = np.diff(t)
    half = np.zeros_like(t)
    half[:-1] += widths / 2.0
    half[1:] += widths / 2.0
    log_w = np.log(half) + log_prior
    log_w[0] = np.logaddexp(log_w[0], log_lower_tail)
    log_w[-1] = np.logaddexp(log_w[-1], log_upper_tail)
    return log_w


def adaptive_inverse_gamma_rule(
    log_integrand, shape, scale, *, spacing=0.5, n_points=None, resolution=1.0, tail=1e-6, max_nodes=4000
):  # fmt: skip
    """Adaptive rule for ∫ g(α) P(α) dα with an Inverse-Gamma(a, b) prior P.

    In t = log α the integrand is g(e^t) π(e^t) e^t, which the trapezoidal rule
    integrates with an error that falls exponentially with 1/h when it is smooth (it is:
    the prior density in t is an entire function and g is a product of smooth factors),
    however narrow its peak, once the spacing h is below the peak's width. The rule
    starts with spacing ``spacing`` between the prior quantiles 1e-15 and 1 − ``tail``,
    then halves all the cells in which the integrand is within e^-30 of its largest
    value (so that the grid stays uniform wherever the integrand matters: where the
    spacing changes, the trapezoidal rule is only O(h²) accurate) as long as one of them
    is not resolved, h² |d² log f/dt²| > ``resolution`` at an end of a cell where the
    integrand is within e^-15 of its largest value (f the integrand in t, h the cell's
    width). A Gaussian peak of standard deviation σ is then integrated with h ≤ σ,
    where the rule's error is about e^{-2π²} ≈ 3e-9. The prior mass beyond the grid is added to the
    end nodes (g taken as constant there: g(α) tends to a constant as α → ∞).

    Parameters
    ----------
    log_integrand : callable
        ``log_integrand(alpha)`` → log g at an array of α values (called once per
        refinement with the new points only).
    shape, scale : float
        a > 0 and b > 0 of the prior (density ∝ α^{-(1+a)} e^{-b/α}).
    spacing : float, default=0.5
        Initial spacing in log α.
    n_points : int, optional
        Initial number of points instead (spread evenly in log α over the same range).
    resolution : float, default=1.0
        Largest h² |d² log f/dt²| accepted in a cell with mass (estimated from second
        divided differences); a quarter of it halves the final spacing.
    tail : float, default=1e-6
        Prior mass beyond the last node.
    max_nodes : int, default=4000
        Stop refining (``converged=False``) when this many points have been evaluated.

    Returns
    -------
    AdaptiveRule

    Examples
    --------
    >>> out = adaptive_inverse_gamma_rule(lambda alpha: np.zeros_like(alpha), 0.5, 5.0)
    >>> round(float(out.rule.weights.sum()), 8)  # g = 1: the prior's total mass
    1.0
    """
    shape = check_positive("shape", shape)
    scale = check_positive("scale", scale)
    spacing = check_positive("spacing", spacing)
    resolution = check_positive("resolution", resolution)
    tail = check_positive("tail", tail)
    if not tail < 0.5:
        raise InputValueError(f"tail must be < 0.5, got {tail:g}")
    lower_tail = 1e-15
    t_lo = float(np.log(inverse_gamma_ppf(lower_tail, shape, scale)))
    t_hi = float(np.log(inverse_gamma_isf(tail, shape, scale)))
    if n_points is not None:
        if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 3:
            raise InputValueError(f"n_points must be an integer >= 3, got {n_points!r}")
        n_start = int(n_points)
    else:
        n_start = max(int(np.ceil((t_hi - t_lo) / spacing)) + 1, 3)
    log_lower, log_upper = np.log(lower_tail), np.log(tail)

    def log_prior(t):  # prior density of t = log α
        return inverse_gamma_logpdf(np.exp(t), shape, scale) + t

    def evaluate(t):
        values = np.asarray(log_integrand(np.exp(t)), dtype=np.float64)
        if values.shape != t.shape:
            raise ValueError(f"log_integrand returned shape {values.shape} for {t.shape[0]} points")  # a bug
        return values

    t = np.linspace(t_lo, t_hi, n_start)
    log_values = evaluate(t)
    log_p = log_prior(t)
    sequence = np.arange(t.shape[0])  # evaluation order of each node
    n_evaluated = t.shape[0]
    converged = False
    while n_evaluated < max_nodes:
        density = log_p + log_values
        upper = np.maximum(density[:-1], density[1:])
        active = upper > density.max() - _ACTIVE
        curvature = _h_squared_curvature(t, density)
        checked = upper > density.max() - _CHECKED
        if not np.any(checked & (np.maximum(curvature[:-1], curvature[1:]) > resolution)):
            converged = True  # every cell with mass resolves the integrand
            break
        new_t = (t[:-1][active] + t[1:][active]) / 2.0
        new_values = evaluate(new_t)
        new_sequence = np.arange(n_evaluated, n_evaluated + new_t.shape[0])
        n_evaluated += new_t.shape[0]
        order = np.argsort(np.concatenate([t, new_t]), kind="stable")
        t = np.concatenate([t, new_t])[order]
        log_values = np.concatenate([log_values, new_values])[order]
        log_p = np.concatenate([log_p, log_prior(new_t)])[order]
        sequence = np.concatenate([sequence, new_sequence])[order]
    log_w = _trapezoid_log_weights(t, log_p, log_lower, log_upper)
    keep = log_p + log_values >= (log_p + log_values).max() - _NEGLIGIBLE
    rule = QuadratureRule(np.exp(t[keep]), np.exp(log_w[keep]))
    return AdaptiveRule(rule, log_values[keep], sequence[keep], n_evaluated, converged)
