"""The likelihoods of the linear classifier's latent values, each with the inference that fits it.

One class a likelihood, all with one interface, so that the estimator never branches on which one it holds:

* :class:`BinaryProbit` — p(y = ±1 | f) = Φ(y f), by EP (docs/linear.md eq. 5–9, 17);
* :class:`MultinomialProbit` — y = argmax_c (f_c + ε_c), by class-factorised EP conditioned on the mean intercept
  (eq. 14–16);
* :class:`Softmax` — p(y = c | f) = softmax(f)_c, by the Laplace approximation (eq. 12–13), its class probabilities
  averaged over fixed quasi-Monte-Carlo draws.

``fit`` takes the prior covariance K of the latent values at the training cases and returns a
:class:`CandidateFit`; ``log_predictive`` turns a fit's predictor and the kernel at new cases into
log p(y | x*). A new likelihood is one more class with these two methods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.special import log_ndtr, logsumexp

from hdbayes.linear.ep import (
    multinomial_probit_ep,
    multinomial_probit_latent,
    multinomial_probit_probabilities,
    probit_ep,
)
from hdbayes.linear.laplace import softmax_laplace

__all__ = ["BinaryProbit", "CandidateFit", "Likelihood", "MultinomialProbit", "Softmax"]


@dataclass(frozen=True)
class CandidateFit:
    """One candidate model (a kernel at one prior scale) fitted: what its weight and its predictions need.

    Attributes
    ----------
    log_evidence : float
        The approximate log evidence.
    loo : ndarray of shape (n,)
        log p(y_i | y₋ᵢ) of every training case (NaN where the inference gives none).
    make_predictor : callable
        Returns what :meth:`Likelihood.log_predictive` needs (computed only for candidates that carry weight).
    warm_start : object
        The state the next prior scale's fit starts from.
    n_iter : int
    converged : bool
    """

    log_evidence: float
    loo: np.ndarray
    make_predictor: Any
    warm_start: Any
    n_iter: int
    converged: bool


class Likelihood:
    """The interface of a likelihood with its inference (see the module docstring)."""

    #: Whether the inference gives leave-one-out densities (stacking needs them).
    gives_loo: ClassVar[bool] = True

    def n_outputs(self, n_classes: int) -> int:
        """The number of columns of :meth:`log_predictive` for a problem of ``n_classes`` classes."""
        return n_classes

    def fit(self, K, target, start, *, intercept_variance, damping, tol, max_iter, loo_reductions):
        """Fit the latent posterior under the prior covariance ``K``; ``loo_reductions`` lists (weight,
        reduction of the cavity variance or None) over which the leave-one-out density is averaged (eq. 17–18)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def log_predictive(self, predictor, k_star, k_star_star):
        """log p(y | x*) at new cases from the kernel between training and new cases (n, m) and at the new ones."""
        raise NotImplementedError  # pragma: no cover - abstract


def _ep_candidate(fit, loo_reductions):
    terms = [np.log(weight) + fit.loo_log_density(reduction) for weight, reduction in loo_reductions]
    return CandidateFit(fit.log_evidence(), logsumexp(np.stack(terms), axis=0), fit.predictor, (fit.tau, fit.nu),
                        fit.n_iter, fit.converged)  # fmt: skip


class BinaryProbit(Likelihood):
    """p(y = ±1 | f) = Φ(y f) by EP; targets in {−1, +1}."""

    def n_outputs(self, n_classes):
        return 2

    def fit(self, K, target, start, *, intercept_variance, damping, tol, max_iter, loo_reductions):
        tau, nu = (None, None) if start is None else start
        fit = probit_ep(K, target, tau=tau, nu=nu, damping=damping, tol=tol, max_iter=max_iter, warn=False)
        return _ep_candidate(fit, loo_reductions)

    def log_predictive(self, predictor, k_star, k_star_star):
        a, W = predictor
        mean = k_star.T @ a
        var = np.maximum(k_star_star - np.einsum("im,im->m", k_star, W @ k_star), 0.0)
        z = mean / np.sqrt(1.0 + var)
        return np.column_stack([log_ndtr(-z), log_ndtr(z)])


class MultinomialProbit(Likelihood):
    """y = argmax_c (f_c + ε_c) by class-factorised EP conditioned on the mean intercept; targets are class codes."""

    def __init__(self, n_classes: int):
        self.n_classes = n_classes

    def fit(self, K, target, start, *, intercept_variance, damping, tol, max_iter, loo_reductions):
        tau, nu = (None, None) if start is None else start
        fit = multinomial_probit_ep(K, target, self.n_classes, tau=tau, nu=nu, intercept_variance=intercept_variance,
                                    damping=damping, tol=tol, max_iter=max_iter, warn=False)  # fmt: skip
        return _ep_candidate(fit, loo_reductions)

    def log_predictive(self, predictor, k_star, k_star_star):
        return multinomial_probit_probabilities(*multinomial_probit_latent(predictor, k_star, k_star_star))


class Softmax(Likelihood):
    """p(y = c | f) = softmax(f)_c by the Laplace approximation; targets one-hot. ``draws``: the fixed standard
    normal draws (S, C) that average the softmax over the Gaussian latent at a new case."""

    gives_loo = False

    def __init__(self, draws: np.ndarray):
        self.draws = draws

    def fit(self, K, target, start, *, intercept_variance, damping, tol, max_iter, loo_reductions):
        fit = softmax_laplace(K, target, a=start, tol=tol * 1e-2, max_iter=max_iter, warn=False)
        return CandidateFit(fit.log_evidence, np.full(len(K), np.nan), lambda: fit, fit.a, fit.n_iter, fit.converged)

    def log_predictive(self, predictor, k_star, k_star_star):
        return softmax_expectation(*predictor.predict_latent(k_star, k_star_star), self.draws)


def normal_draws(uniform):
    """Standard normal draws from uniform ones, kept away from 0 and 1."""
    from scipy.special import ndtri

    return ndtri(np.clip(uniform, 1e-12, 1.0 - 1e-12))


def softmax_expectation(mean, cov, draws):
    """log E[softmax(f)] for f ~ N(mean_j, cov_j), averaged over the fixed standard normal draws.

    Parameters
    ----------
    mean : ndarray of shape (m, C)
    cov : ndarray of shape (m, C, C)
    draws : ndarray of shape (S, C)

    Returns
    -------
    ndarray of shape (m, C)
    """
    n_classes = mean.shape[1]
    jitter = 1e-10 * np.maximum(np.trace(cov, axis1=1, axis2=2) / n_classes, 1e-300)
    chol = np.linalg.cholesky(cov + jitter[:, None, None] * np.eye(n_classes))
    latent = np.einsum("mcd,sd->msc", chol, draws)
    latent += mean[:, None, :]
    latent -= latent.max(axis=2, keepdims=True)
    np.exp(latent, out=latent)
    latent /= latent.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore"):
        return np.log(latent.mean(axis=1))
