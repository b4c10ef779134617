"""Compiled twins of :mod:`hdbayes.special` for numba kernels: the same formulas, defined once.

The kernels of the model packages (the Dirichlet-compound-multinomial fit, the naive-Bayes adjustment tables)
need log Γ(a + n)/Γ(a) inside compiled loops. :mod:`hdbayes.special` keeps the vectorised numpy functions and
does not load numba, so the discrete models that need only those import quickly; this module compiles its
Stirling series and the scalar rising factorial built on it, and the digamma and trigamma functions with
the digamma difference ψ(a + x) − ψ(a) = d/da log Γ(a + x)/Γ(a) that Minka's fixed point
(:mod:`hdbayes.discrete.minka`) needs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from hdbayes import special
from hdbayes._numba import jit

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "digamma_difference",
    "digamma_difference_scalar",
    "digamma_scalar",
    "log_rising_factorial_scalar",
    "stirling_tail",
    "stirling_tail_derivative",
    "trigamma_scalar",
]

#: S(z) = log Γ(z) − [(z − 1/2) log z − z + log(2π)/2] for z ≥ 15: the series of :mod:`hdbayes.special`, compiled
stirling_tail = jit(error_model="numpy")(special._stirling_tail)


@jit(error_model="numpy")
def log_rising_factorial_scalar(a, n):
    """log Γ(a + n)/Γ(a) for one a and one real n ≥ 0: :func:`hdbayes.special.log_rising_factorial`'s formulas
    (Stirling's series without cancellation for a ≥ 15, the log-Gamma difference below, the exact limits at
    a ≤ 0: 0 for n = 0, −inf otherwise), compiled."""
    if n == 0.0:
        return 0.0
    if a <= 0.0:
        return -np.inf
    if a < special._STIRLING_FROM:
        return math.lgamma(a + n) - math.lgamma(a)
    return n * math.log(a) + (a + n - 0.5) * math.log1p(n / a) - n + stirling_tail(a + n) - stirling_tail(a)


@jit(error_model="numpy")
def stirling_tail_derivative(z):
    """d/dz of Stirling's series :func:`stirling_tail`."""
    inverse = 1.0 / z
    square = inverse * inverse
    return -square * (1.0 / 12 - square * (1.0 / 120 - square * (1.0 / 252 - square * (1.0 / 240 - square / 132))))


@jit(error_model="numpy")
def digamma_scalar(z):
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
def trigamma_scalar(z):
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
def digamma_difference_scalar(a, x):
    """ψ(a + x) − ψ(a) for a > 0, x ≥ 0 real (Σ_{l<x} 1/(a + l) at integer x); for a ≥ 15
    log1p(x/a) + x/(2a(a + x)) + S'(a + x) − S'(a), accurate near the multinomial limit."""
    if x == 0.0:
        return 0.0
    if a < 15.0:
        return digamma_scalar(a + x) - digamma_scalar(a)
    return np.log1p(x / a) + x / (2.0 * a * (a + x)) + stirling_tail_derivative(a + x) - stirling_tail_derivative(a)


def digamma_difference(a: ArrayLike, x: ArrayLike) -> np.ndarray:
    """ψ(a + x) − ψ(a) = d/da log Γ(a + x)/Γ(a), elementwise for a > 0, x ≥ 0 (real).

    Equal to Σ_{l<x} 1/(a + l) at integer x; for a ≥ 15 computed from Stirling's series
    without cancellation, so that it stays accurate near the multinomial limit (a ~ 10^10).

    Parameters
    ----------
    a, x : array_like
        Broadcast against each other.

    Returns
    -------
    ndarray
        ψ(a + x) − ψ(a), of the broadcast shape.
    """
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    return _digamma_difference_array(np.ascontiguousarray(a).ravel(), np.ascontiguousarray(x).ravel()).reshape(a.shape)


@jit(error_model="numpy")
def _digamma_difference_array(a, x):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = digamma_difference_scalar(a[i], x[i])
    return out
