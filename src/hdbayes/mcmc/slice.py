"""Univariate slice sampling with stepping out and shrinkage (Neal 2003).

One update of x with log density ``log_density(x, args)`` (``args`` a tuple passed
through, so one compiled sampler serves every density of the same signature):

1. draw the slice level log y = log f(x) − Exp(1);
2. place an interval of width ``width`` at random around x and step it out, at
   most ``max_steps`` steps in all, until both ends are outside the slice (or
   beyond the support bounds ``lower``, ``upper``);
3. draw uniformly from the interval, shrinking it towards x after every
   rejection, until a point inside the slice is found.

The update leaves the distribution with density ∝ f invariant. Compiled with numba;
it draws only from the :class:`numpy.random.Generator` passed in (a chain's own, see
:func:`hdbayes.mcmc.run_chains`), so chains in threads neither share nor reseed a
generator. It is the one slice sampler of hdbayes: a model supplies only a compiled
log density ``(float, tuple) -> float``. It is inlined into its caller at numba's IR level
(``inline="always"``), so a model kernel that calls it with a fixed log density is an
ordinary function of arrays and scalars, which the disk cache keeps (see
:mod:`hdbayes._numba`); on its own it is never cached, because a signature holding a
compiled function cannot be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hdbayes._numba import jit

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

__all__ = ["slice_sample"]


@jit(cache=False, inline="always")
def slice_sample(
        x: float, current_log_density: float, log_density: Callable[..., float], args: tuple, width: ArrayLike,
        max_steps: int, lower: float, upper: float, rng: np.random.Generator) -> tuple[float, float]:
    """One slice-sampling update of a scalar.

    Parameters
    ----------
    x : float
        Current value (inside the support).
    current_log_density : float
        ``log_density(x, args)``, passed in to save an evaluation.
    log_density : numba-compiled function ``(float, tuple) -> float``
        The log density, up to a constant, of the variable's conditional distribution.
    args : tuple
        Extra arguments of ``log_density``.
    width : float
        Initial interval width w.
    max_steps : int
        Largest number of stepping-out steps m (split at random between the ends).
    lower, upper : float
        Support bounds (use ±inf for none); points outside have density 0.
    rng : numpy.random.Generator
        The chain's generator.

    Returns
    -------
    (float, float)
        The new value and its log density.
    """
    level = current_log_density - rng.standard_exponential()
    left = x - width * rng.random()
    right = left + width
    steps_left = int(np.floor(max_steps * rng.random()))
    steps_right = max_steps - 1 - steps_left
    while steps_left > 0 and left > lower and log_density(left, args) > level:
        left -= width
        steps_left -= 1
    while steps_right > 0 and right < upper and log_density(right, args) > level:
        right += width
        steps_right -= 1
    left = max(left, lower)
    right = min(right, upper)
    while True:
        proposal = left + (right - left) * rng.random()
        value = log_density(proposal, args) if lower < proposal < upper else -np.inf
        if value > level:
            return proposal, value
        if proposal < x:
            left = proposal
        else:
            right = proposal
        if right - left < 1e-300:  # numerically collapsed onto x
            return x, current_log_density
