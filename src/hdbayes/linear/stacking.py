"""Bayesian stacking of predictive distributions by their leave-one-out densities (docs/linear.md eq. 19).

Given the leave-one-out log predictive densities ℓ_ki = log p_k(y_i | y₋ᵢ) of M candidate models at n cases,
the stacking weights maximise Σ_i log Σ_k w_k exp(ℓ_ki) over the simplex (Yao, Vehtari, Simpson & Gelman 2018,
eq. 4). The objective is concave; it is the log likelihood of a mixture with fixed components, so the EM
fixed point w_k ← (1/n) Σ_i w_k p_ki / Σ_j w_j p_ji increases it monotonically and converges to the maximum.
"""

from __future__ import annotations

import numpy as np

__all__ = ["stacking_weights"]


def stacking_weights(log_density: np.ndarray, *, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Stacking weights of M models from their leave-one-out log predictive densities.

    Parameters
    ----------
    log_density : ndarray of shape (M, n)
        log p_k(y_i | y₋ᵢ), finite or −inf (a model that gives a case no probability).
    tol : float, default=1e-10
        Stop when no weight changes by more than this.
    max_iter : int, default=10000
        Largest number of EM steps.

    Returns
    -------
    ndarray of shape (M,)
        Non-negative weights summing to one.
    """
    log_density = np.asarray(log_density, dtype=np.float64)
    n_models = log_density.shape[0]
    # p_ki / max_k p_ki: the largest is 1 in every case, so nothing underflows that matters
    density = np.exp(log_density - log_density.max(axis=0, keepdims=True))
    weights = np.full(n_models, 1.0 / n_models)
    for _ in range(max_iter):
        mixture = weights @ density
        updated = weights * (density @ (1.0 / mixture)) / density.shape[1]
        updated /= updated.sum()
        if np.max(np.abs(updated - weights)) < tol:
            return updated
        weights = updated
    return weights
