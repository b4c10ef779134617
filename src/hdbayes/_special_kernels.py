"""Compiled twins of :mod:`hdbayes.special` for numba kernels: the same formulas, defined once.

The kernels of the model packages (the Dirichlet-compound-multinomial fit, the naive-Bayes adjustment tables)
need log Γ(a + n)/Γ(a) inside compiled loops. :mod:`hdbayes.special` keeps the vectorised numpy functions and
does not load numba, so the discrete models that need only those import quickly; this module compiles its
Stirling series and the scalar rising factorial built on it.
"""

from __future__ import annotations

import math

import numpy as np

from hdbayes import special
from hdbayes._numba import jit

__all__ = ["log_rising_factorial_scalar", "stirling_tail"]

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
