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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["QuadratureRule", "gauss_legendre_rule", "inverse_gamma_midpoint_grid", "simpson_rule"]


@dataclass(frozen=True)
class QuadratureRule:
    """Nodes and weights of a quadrature rule, with the logs of the weights."""

    nodes: np.ndarray
    weights: np.ndarray

    @property
    def log_weights(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.weights)


def _check_positive(name, value):
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


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
    shape = _check_positive("shape", shape)
    scale = _check_positive("scale", scale)
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 1:
        raise ValueError(f"n_points must be an integer >= 1, got {n_points!r}")
    u = (np.arange(1, n_points + 1) - 0.5) / n_points
    nodes = stats.invgamma.ppf(u, shape, scale=scale)
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
        raise ValueError(f"Simpson's rule needs an odd number of points >= 3, got {n_points!r}")
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
        raise ValueError(f"n_points must be an integer >= 1, got {n_points!r}")
    nodes, weights = np.polynomial.legendre.leggauss(int(n_points))
    half = (upper - lower) / 2.0
    return QuadratureRule(lower + half * (nodes + 1.0), half * weights)
