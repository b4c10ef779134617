"""Exact posterior of the group spike-and-slab model by enumerating all 2^G configurations.

The oracle of Hernández-Lobato et al. (2013) §2.1: for each z with active set A(z), the coefficients of A have the
Gaussian posterior of a ridge regression with prior ``N(0, diag(v_{s,g(j)}))``, inactive
coefficients are exactly 0, and the evidence is ``P(y | z) = N(y | 0, σ0² I + X_A V_A X_Aᵀ)``.
Mixing with weights ∝ P(z) P(y | z) gives the exact log evidence, group inclusion
probabilities P(z_g = 1 | y, X) (eq. 7) and posterior means and variances of w.
Feasible for G up to about 16 groups (with few features per group).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
from scipy.special import logsumexp

from hdbayes.exceptions import InputValueError
from hdbayes.spike_slab.model import LOG_2PI, check_coded_model

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

__all__ = ["ExactPosterior", "MAX_ENUMERATED_GROUPS", "exact_posterior", "log_evidence_given_groups"]

MAX_ENUMERATED_GROUPS = 20


@dataclass(frozen=True)
class ExactPosterior:
    """The exact posterior of the model of Hernández-Lobato et al. (2013) §2.

    Attributes
    ----------
    log_evidence : float
        log P(y | X).
    group_inclusion_probabilities : ndarray of shape (G,)
        P(z_g = 1 | y, X).
    coef_mean, coef_variance : ndarray of shape (d,)
        Posterior mean and marginal variance of w.
    configurations : ndarray of bool, shape (2^G, G)
        Every z.
    log_posterior : ndarray of shape (2^G,)
        log P(z | y, X).
    """

    log_evidence: float
    group_inclusion_probabilities: np.ndarray
    coef_mean: np.ndarray
    coef_variance: np.ndarray
    configurations: np.ndarray
    log_posterior: np.ndarray


def log_evidence_given_groups(xtx, xty, yty, n_samples, active, slab_variance, noise_variance):
    """log P(y | z) and the Gaussian posterior of w_A for one active set (weight-space form).

    With ``M = X_AᵀX_A/σ0² + diag(1/v_A)``: ``log|C| = n log σ0² + Σ log v_A + log|M|`` (determinant
    lemma) and ``yᵀC⁻¹y = yᵀy/σ0² − bᵀM⁻¹b`` with ``b = X_Aᵀy/σ0²``; ``E[w_A] = M⁻¹b``, ``Var = diag(M⁻¹)``.

    Parameters
    ----------
    xtx, xty, yty : sufficient statistics XᵀX, Xᵀy, yᵀy
    n_samples : int
    active : ndarray of int
        Indices of the active coefficients.
    slab_variance : ndarray of shape (d,)
    noise_variance : float

    Returns
    -------
    log_likelihood : float
    mean, variance : ndarray of shape (|A|,)
    """
    base = -0.5 * (n_samples * (LOG_2PI + np.log(noise_variance)) + yty / noise_variance)
    if active.size == 0:
        return base, np.zeros(0), np.zeros(0)
    v = slab_variance[active]
    M = xtx[np.ix_(active, active)] / noise_variance + np.diag(1.0 / v)
    chol = scipy.linalg.cholesky(M, lower=True, check_finite=False)
    b = xty[active] / noise_variance
    mean = scipy.linalg.cho_solve((chol, True), b, check_finite=False)
    inverse = scipy.linalg.cho_solve((chol, True), np.eye(active.size), check_finite=False)
    log_det = np.sum(np.log(v)) + 2.0 * np.sum(np.log(np.diag(chol)))
    return base - 0.5 * (log_det - b @ mean), mean, np.diag(inverse).copy()


def exact_posterior(
        X: ArrayLike, y: ArrayLike, groups: int | ArrayLike | Sequence[Sequence[int]],
        prior_inclusion: float | ArrayLike, slab_variance: float | ArrayLike, noise_variance: float) -> ExactPosterior:
    """Enumerate all 2^G group configurations (paper §2.1).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The design matrix.
    y : ndarray of shape (n,)
        The responses.
    groups : ndarray of int64, shape (d,)
        g(j) in 0..G−1 (see :func:`hdbayes.spike_slab.model.check_groups`).
    prior_inclusion : ndarray of shape (G,)
        p0,g in (0, 1).
    slab_variance : ndarray of shape (G,)
        v_{s,g} > 0, the prior variance of an active coefficient of group g (eq. 3, 9).
    noise_variance : float
        σ0² > 0 (eq. 1).

    Returns
    -------
    ExactPosterior
        The evidence, the group inclusion probabilities, the coefficients' posterior means and variances
        and the posterior of every configuration.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbayes.spike_slab import exact_posterior
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 4)); y = X[:, :2] @ [1.0, -1.0] + 0.1 * rng.normal(size=20)
    >>> post = exact_posterior(X, y, np.array([0, 0, 1, 1]), np.full(2, 0.5), np.ones(2), 0.01)
    >>> post.group_inclusion_probabilities.round(2)
    array([1., 0.])
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    groups, prior_inclusion, slab_variance, noise_variance = check_coded_model(groups, prior_inclusion, slab_variance,
                                                                               noise_variance, d)  # fmt: skip
    n_groups = int(prior_inclusion.shape[0])
    if n_groups > MAX_ENUMERATED_GROUPS:
        raise InputValueError(f"exact enumeration of 2^{n_groups} configurations is infeasible "
                         f"(at most {MAX_ENUMERATED_GROUPS} groups)")  # fmt: skip
    xtx, xty, yty = X.T @ X, X.T @ y, float(y @ y)
    vs = np.asarray(slab_variance, dtype=float)[groups]
    log_p1, log_p0 = np.log(prior_inclusion), np.log1p(-prior_inclusion)
    configurations = np.array(list(itertools.product((False, True), repeat=n_groups)), dtype=bool).reshape(-1, n_groups)
    log_joint = np.empty(configurations.shape[0])
    means = np.zeros((configurations.shape[0], d))
    second_moments = np.zeros((configurations.shape[0], d))
    for k, z in enumerate(configurations):
        active = np.flatnonzero(z[groups])
        log_lik, mean, variance = log_evidence_given_groups(xtx, xty, yty, n, active, vs, noise_variance)
        log_joint[k] = log_lik + np.sum(np.where(z, log_p1, log_p0))
        means[k, active] = mean
        second_moments[k, active] = variance + mean**2
    log_evidence = float(logsumexp(log_joint))
    log_posterior = log_joint - log_evidence
    weights = np.exp(log_posterior)
    coef_mean = weights @ means
    coef_variance = np.maximum(weights @ second_moments - coef_mean**2, 0.0)
    return ExactPosterior(log_evidence, weights @ configurations, coef_mean, coef_variance, configurations,
                          log_posterior)  # fmt: skip
