"""The linear model on all standardised features, in the dual (function-space) form.

f(x) = b + wᵀx̃ with x̃ the features standardised by the training means and standard deviations (features
constant in training are set to zero, so they contribute nothing), w ~ N(0, s²/p I) with p the number of
non-constant features, and b ~ N(0, σ_b²). The latent values at the n training cases then have the prior
N(0, K(s²)) with

    K(s²) = s² G + σ_b² 11ᵀ,   G = X̃ X̃ᵀ / p     (docs/linear.md eq. 2),

so G (O(n² p), computed once) is all the inference needs; s² is integrated over a grid of log s² with
weights ∝ evidence × prior (eq. 10–11).

Functions:

* :class:`Standardiser` — training means and scales (per feature or one common scale), constant features dropped;
* :func:`scale_grid` — the grid of log s² and the log prior weights on it;
* :func:`span_projector` — G⁺, for the part of a new case in the span of the training cases;
* :func:`posterior_weights` — normalised weights ∝ exp(log evidence + log prior);
* :func:`loo_conditional_variance` — the part of a left-out case's latent variance that the span prior removes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

__all__ = ["Standardiser", "loo_conditional_variance", "posterior_weights", "scale_grid"]

#: Relative size below which a training standard deviation counts as zero (a constant feature).
CONSTANT_TOLERANCE = 1e-10


@dataclass
class Standardiser:
    """Centre and scale features by their training means and standard deviations.

    Two scalings (docs/linear.md eq. 1): ``"standardise"`` divides each feature by its own standard deviation;
    ``"common"`` divides every feature by one scale, the root mean variance of the varying features, so that
    features keep their relative spread (log expression values share one unit, and a gene that varies more
    gets a larger prior share of the latent function).

    Attributes
    ----------
    mean : ndarray of shape (n_features,)
    scale : ndarray of shape (n_features,)
        Standard deviation (ddof = 0); for constant features +inf, so they map to zero.
    n_varying : int
        p, the number of features that vary in training.
    """

    mean: np.ndarray
    scale: np.ndarray
    n_varying: int

    @classmethod
    def fit(cls, X, scaling="standardise"):
        """Means and scales of the training matrix X.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        scaling : {"standardise", "common"}, default="standardise"
            One standard deviation per feature, or one common scale for all (the root mean variance of the
            varying features).

        Returns
        -------
        Standardiser
        """
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        magnitude = np.maximum(np.abs(mean), 1.0)
        constant = ~(scale > CONSTANT_TOLERANCE * magnitude)
        n_varying = int(np.count_nonzero(~constant))
        if scaling == "common" and n_varying:
            scale = np.full_like(scale, np.sqrt(np.mean(scale[~constant] ** 2)))
        scale = np.where(constant, np.inf, scale)
        return cls(mean, scale, n_varying)

    def transform(self, X):
        """(X − mean)/scale, zero in the constant features.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        return (X - self.mean) / self.scale


def scale_grid(log_min, log_max, n_points, prior_mean, prior_sd):
    """Grid of ln s² and the log of the prior weights on it.

    The prior on ln s² is N(prior_mean, prior_sd²) restricted to the grid (prior_sd = inf: uniform).

    Parameters
    ----------
    log_min, log_max : float
        Ends of the grid of ln s².
    n_points : int
    prior_mean, prior_sd : float

    Returns
    -------
    log_s2 : ndarray of shape (n_points,)
    log_prior : ndarray of shape (n_points,)
        Normalised to sum (in probability) to one.
    """
    log_s2 = np.linspace(log_min, log_max, n_points) if n_points > 1 else np.array([0.5 * (log_min + log_max)])
    if np.isinf(prior_sd):
        log_prior = np.zeros(n_points)
    else:
        log_prior = -0.5 * ((log_s2 - prior_mean) / prior_sd) ** 2
    return log_s2, log_prior - logsumexp(log_prior)


def span_projector(gram, cutoff=1e-10):
    """The pseudo-inverse G⁺ of G = X̃X̃ᵀ/p (eigenvalues below ``cutoff`` × the largest count as zero).

    For a new case with g* = X̃x*/p, ‖P x*‖²/p = g*ᵀ G⁺ g* with P the projection onto the span of the training
    cases (docs/linear.md eq. 4).

    Parameters
    ----------
    gram : ndarray of shape (n, n)
    cutoff : float

    Returns
    -------
    ndarray of shape (n, n)
    """
    values, vectors = np.linalg.eigh(gram)
    keep = values > cutoff * max(float(values[-1]), 1e-300)
    return (vectors[:, keep] / values[keep]) @ vectors[:, keep].T


def posterior_weights(log_evidence, log_prior):
    """Posterior weights of the grid points, ∝ exp(log evidence + log prior) (docs/linear.md eq. 11).

    Parameters
    ----------
    log_evidence, log_prior : ndarray of shape (n_points,)

    Returns
    -------
    ndarray of shape (n_points,)
        Non-negative, summing to one.
    """
    log_post = np.asarray(log_evidence) + np.asarray(log_prior)
    return np.exp(log_post - logsumexp(log_post))


def loo_conditional_variance(pinv_diagonal, s2, intercept_variance):
    """Var(f_i | f_j, j ≠ i) under K = s² G + σ_b² 11ᵀ, for every training case i (docs/linear.md eq. 18).

    The leave-one-out predictive of the span prior differs from the EP cavity (which is that of the isotropic
    prior) by exactly this variance: with the coefficients in the span of the other cases, f_i is a function of
    the other latents. For centred features G1 = 0, so K⁻¹ = G⁺/s² + 11ᵀ/(n²σ_b²) and
    Var(f_i | f₋ᵢ) = 1/(K⁻¹)_ii = 1/(G⁺_ii/s² + 1/(n²σ_b²)).

    Parameters
    ----------
    pinv_diagonal : ndarray of shape (n,)
        The diagonal of G⁺ (:func:`span_projector`).
    s2 : float
        The prior variance s².
    intercept_variance : float
        σ_b².

    Returns
    -------
    ndarray of shape (n,)
        Var(f_i | f₋ᵢ) for every training case.
    """
    n = len(pinv_diagonal)
    return 1.0 / (np.asarray(pinv_diagonal) / s2 + 1.0 / (n * n * intercept_variance))
