"""Sequential experimental design with the EP posterior (Hernández-Lobato et al. 2013, §4).

The next measurement maximises the expected reduction of the entropy of the Gaussian part of Q
with the spike-and-slab sites Λ held fixed (eq. 30–31):
``H[Q] − H[Q'] = ½ log(1 + xᵀVx/σ0²)``, so the best row is the one of largest predictive variance
``xᵀVx`` (eq. 29). Among given candidates that is an arg-max; for a free design with ‖x‖ = 1 it is
the leading eigenvector of V, found by the power method with ``V v = Λv − ΛXᵀK⁻¹XΛv`` (eq. 24),
never forming V. After each measurement EP is refitted, warm-started from the previous sites.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hdbayes._validation import check_count, check_generator
from hdbayes.exceptions import InputValueError
from hdbayes.spike_slab.ep import EPResult, expectation_propagation
from hdbayes.spike_slab.model import check_coded_model

__all__ = ["DesignHistory", "leading_covariance_direction", "next_candidate", "predictive_variances",
           "sequential_design"]  # fmt: skip


def predictive_variances(result: EPResult, candidates):
    """``xᵀVx`` for every candidate row (without the noise variance), eq. (29), in O(m(nd + n²))."""
    return result.gaussian.covariance().quadratic_form(np.asarray(candidates, dtype=float))


def next_candidate(result: EPResult, candidates):
    """Index of the candidate row of largest predictive variance (paper §4, eq. 31)."""
    return int(np.argmax(predictive_variances(result, candidates)))


def leading_covariance_direction(result: EPResult, n_iter=100, tol=1e-10, random_state=None):
    """Unit vector maximising ``xᵀVx``: the leading eigenvector of V by the power method (paper §4).

    Each product ``V v`` costs O(nd + n²) with the Cholesky factor of K already computed.

    Parameters
    ----------
    result : EPResult
    n_iter : int, default=100
    tol : float, default=1e-10
        Stop when the Rayleigh quotient changes by less than ``tol`` (relative).
    random_state : int, Generator or None
        Start vector.

    Returns
    -------
    direction : ndarray of shape (d,)
        ‖direction‖ = 1.
    eigenvalue : float
        ``directionᵀ V direction``.
    """
    rng = check_generator(random_state)
    vector = rng.standard_normal(result.mean.shape[0])
    vector /= np.linalg.norm(vector)
    eigenvalue = 0.0
    covariance = result.gaussian.covariance()
    for _ in range(check_count("n_iter", n_iter)):
        product = covariance.matvec(vector)
        new_eigenvalue = float(vector @ product)
        vector = product / np.linalg.norm(product)
        if abs(new_eigenvalue - eigenvalue) <= tol * abs(new_eigenvalue):
            eigenvalue = new_eigenvalue
            break
        eigenvalue = new_eigenvalue
    return vector, eigenvalue


@dataclass
class DesignHistory:
    """The course of a sequential-design run.

    Attributes
    ----------
    X, y : ndarray
        All measurements, initial ones first.
    n_measurements : list of int
        The number of measurements at each fit.
    relative_errors : list of float
        ``‖m − w‖/‖w‖`` at each fit (when the true coefficients were given).
    n_iter : list of int
        EP iterations of each (warm-started) fit.
    converged : list of bool
        Whether each fit converged (one that did not has also warned: issue 29).
    result : EPResult
        The last fit.
    """

    X: np.ndarray
    y: np.ndarray
    n_measurements: list = field(default_factory=list)
    relative_errors: list = field(default_factory=list)
    n_iter: list = field(default_factory=list)
    converged: list = field(default_factory=list)
    result: EPResult | None = None


def sequential_design(measure, X, y, n_steps, groups, prior_inclusion, slab_variance, noise_variance, *,
                      candidates=None, strategy="variance", true_coef=None, random_state=None, warm_start=True,
                      **ep_options):  # fmt: skip
    """Acquire ``n_steps`` measurements one at a time, refitting EP incrementally (the loop of paper §4).

    Parameters
    ----------
    measure : callable
        ``measure(x)`` returns the (noisy) measurement y for a row x of shape (d,).
    X, y : ndarray
        The initial measurements (n0 ≥ 1 rows).
    n_steps : int
        Measurements to add.
    groups, prior_inclusion, slab_variance, noise_variance
        The model, as in :func:`~hdbayes.spike_slab.ep.expectation_propagation`.
    candidates : ndarray of shape (m, d), optional
        A pool of rows to choose from (each used at most once); None: a free design with unit-norm
        rows.
    strategy : {"variance", "random"}, default="variance"
        "variance": the largest predictive variance (candidates) or the leading eigenvector of V
        (free design); "random": a random unused candidate or a random unit-norm Gaussian row.
    true_coef : ndarray of shape (d,), optional
        To record the relative reconstruction error after each fit.
    random_state : int, Generator or None
    warm_start : bool, default=True
        Start each EP fit from the previous sites.
    **ep_options
        Passed to :func:`~hdbayes.spike_slab.ep.expectation_propagation`. A fit that does not converge warns
        (``ConvergenceWarning``) as EP does everywhere, and ``DesignHistory.converged`` records it.

    Returns
    -------
    DesignHistory
    """
    if strategy not in ("variance", "random"):
        raise InputValueError(f"strategy must be 'variance' or 'random', got {strategy!r}")
    n_steps = check_count("n_steps", n_steps, minimum=0)
    rng = check_generator(random_state)
    X = np.array(X, dtype=float)
    y = np.array(y, dtype=float)
    d = X.shape[1]
    groups, prior_inclusion, slab_variance, noise_variance = check_coded_model(groups, prior_inclusion, slab_variance,
                                                                               noise_variance, d)  # fmt: skip
    available = None
    if candidates is not None:
        candidates = np.asarray(candidates, dtype=float)
        if candidates.ndim != 2 or candidates.shape[1] != d:
            raise InputValueError(f"candidates must have shape (m, {d}), got {candidates.shape}")
        if candidates.shape[0] < n_steps:
            raise InputValueError(f"{candidates.shape[0]} candidates cannot supply {n_steps} measurements")
        available = np.ones(candidates.shape[0], dtype=bool)
    history = DesignHistory(X, y)
    sites = None
    for step in range(n_steps + 1):
        result = expectation_propagation(X, y, groups, prior_inclusion, slab_variance, noise_variance,
                                         init=sites if warm_start else None, **ep_options)  # fmt: skip
        sites = result.sites
        history.n_measurements.append(X.shape[0])
        history.n_iter.append(result.n_iter)
        history.converged.append(bool(result.converged))
        if true_coef is not None:
            history.relative_errors.append(float(np.linalg.norm(result.mean - true_coef) / np.linalg.norm(true_coef)))
        history.result = result
        if step == n_steps:
            break
        if candidates is not None:
            index = np.flatnonzero(available)
            if strategy == "variance":
                chosen = index[np.argmax(predictive_variances(result, candidates[index]))]
            else:
                chosen = rng.choice(index)
            available[chosen] = False
            row = candidates[chosen]
        elif strategy == "variance":
            row, _ = leading_covariance_direction(result, random_state=rng)
        else:
            row = rng.standard_normal(d)
            row /= np.linalg.norm(row)
        X = np.vstack([X, row])
        y = np.append(y, measure(row))
    history.X, history.y = X, y
    return history
