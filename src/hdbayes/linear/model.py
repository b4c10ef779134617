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
* :func:`loo_conditional_variance` — the part of a left-out case's latent variance that the span prior removes;
* :class:`FactorKernel` — the common factors of the training arrays, shrunk, on which the factor prior's
  coefficients act (docs/linear.md eq. 21–23);
* :class:`Typicality` — how much of a new array the training arrays explain, and the probability that it is
  unrelated to them (eq. 24–26).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit, logsumexp

__all__ = ["FactorKernel", "Standardiser", "Typicality", "loo_conditional_variance", "posterior_weights", "scale_grid"]

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


def span_projector(gram, cutoff=1e-10, *, eigen=None):
    """The pseudo-inverse G⁺ of G = X̃X̃ᵀ/p (eigenvalues below ``cutoff`` × the largest count as zero).

    For a new case with g* = X̃x*/p, ‖P x*‖²/p = g*ᵀ G⁺ g* with P the projection onto the span of the training
    cases (docs/linear.md eq. 4).

    Parameters
    ----------
    gram : ndarray of shape (n, n)
    cutoff : float
    eigen : tuple of ndarray, optional
        ``np.linalg.eigh(gram)`` when the caller has it (one decomposition serves every use of G).

    Returns
    -------
    ndarray of shape (n, n)
    """
    values, vectors = np.linalg.eigh(gram) if eigen is None else eigen
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


#: The 99th percentile of the Tracy–Widom law of order 1 (the largest eigenvalue of real white noise).
TRACY_WIDOM_99 = 2.02


@dataclass
class FactorKernel:
    """The common factors of the training arrays, on which the coefficients of the factor prior act.

    The standardised arrays follow a factor model x̃ = Λz + ε with isotropic idiosyncratic noise ε ~ N(0, ψ I)
    (probabilistic PCA; West 2003 for factor regression), and the class depends on an array only through its
    common part Λz (docs/linear.md eq. 21). The factors are the eigenvectors of G = X̃X̃ᵀ/p whose eigenvalues d_k
    lie above what noise alone would give: ψ times the 99th percentile of the largest eigenvalue of (n − 1) × p
    white noise (Johnstone 2001: (√(n−1) + √p)²/p plus 2.02 Tracy–Widom scales, just above the Marchenko–Pastur
    edge ψ(1 + √(n/p))²); ψ is the mean of the eigenvalues below (a fixed-point iteration). A case's factor scores
    are shrunk by the Wiener factor φ_k = (d_k − ψ)/d_k, the posterior mean of the common part under the factor
    model (eq. 22):

        z(x̃) = x̃ᵀ V Φ,   V = X̃ᵀ U / √(p d)  (the unit factor directions in feature space),

    and the kernel is Z Zᵀ/p (eq. 23), the same map for training and new cases. Arrays of noise project onto
    the factors with tiny scores; with no factor above the noise edge the kernel is zero and the model predicts
    from the intercept alone.

    Attributes
    ----------
    loadings : ndarray of shape (n_features, n_factors)
        V Φ: a standardised case's shrunk factor scores are ``x̃ @ loadings``.
    noise_variance : float
        ψ, the idiosyncratic variance of a standardised feature.
    eigenvalues : ndarray of shape (n_factors,)
        d_k of the factors kept.
    """

    loadings: np.ndarray
    noise_variance: float
    eigenvalues: np.ndarray

    @classmethod
    def fit(cls, Xt, gram, p, *, eigen=None):
        """The factors of the centred, scaled training matrix ``Xt`` with ``gram`` = Xt Xtᵀ/p.

        Parameters
        ----------
        Xt : ndarray of shape (n_samples, n_features)
        gram : ndarray of shape (n_samples, n_samples)
        p : int
            The number of varying features.
        eigen : tuple of ndarray, optional
            ``np.linalg.eigh(gram)`` when the caller has it.

        Returns
        -------
        FactorKernel
        """
        n = len(gram)
        values, vectors = np.linalg.eigh(gram) if eigen is None else eigen
        values, vectors = values[::-1], vectors[:, ::-1]
        m = max(n - 1, 1)  # centring removes one dimension
        values, vectors = np.maximum(values[:m], 0.0), vectors[:, :m]
        # the largest eigenvalue of m × p white noise of variance 1, scaled by 1/p: centre + 2.02 × scale of its
        # Tracy–Widom law (Johnstone 2001), 2.02 its 99th percentile
        centre = (np.sqrt(m) + np.sqrt(p)) ** 2
        spread = (np.sqrt(m) + np.sqrt(p)) * (1.0 / np.sqrt(m) + 1.0 / np.sqrt(max(p, 1))) ** (1.0 / 3.0)
        noise_edge = (centre + TRACY_WIDOM_99 * spread) / max(p, 1)
        psi = float(np.median(values))
        keep = np.zeros(m, dtype=bool)
        for _ in range(200):
            edge = psi * noise_edge
            keep = values > edge
            n_bulk = m - int(keep.sum())
            new = float(values[~keep].sum() / n_bulk) if n_bulk else psi
            if abs(new - psi) <= 1e-12 * max(psi, 1e-300):
                break
            psi = new
        d = values[keep]
        directions = Xt.T @ (vectors[:, keep] / np.sqrt(p * d))
        return cls(directions * ((d - psi) / d), psi, d)

    @property
    def n_factors(self) -> int:
        return int(self.eigenvalues.size)

    def scores(self, Xt):
        """The shrunk factor scores of standardised cases ``Xt`` (n, n_features) -> (n, n_factors)."""
        return Xt @ self.loadings


#: Scales of the Cauchy densities of an unrelated array's logit r around logit(d/p) (it explains about the share d/p
#: of its squared norm that a random direction would) and of its log squared norm around the training arrays' (its
#: size is unknown). Cauchy tails: far from both hypotheses, an array is more likely unrelated than typical.
UNRELATED_LOGIT_SD = 1.5
UNRELATED_LOG_NORM_SD = 2.0


def _normal_logpdf(x, location, scale):
    z = (x - location) / scale
    return -0.5 * z * z - np.log(scale * np.sqrt(2.0 * np.pi))


def _cauchy_logpdf(x, location, scale):
    z = (x - location) / scale
    return -np.log(np.pi * scale * (1.0 + z * z))


def _bandwidth(values):
    """Scott's bandwidth for a two-dimensional density, n^(−1/6) × the spread (the smaller of the standard deviation
    and the interquartile range / 1.349), at least 0.05."""
    values = np.asarray(values, dtype=float)
    quartiles = np.percentile(values, [25.0, 75.0])
    spread = min(float(np.std(values)), float(quartiles[1] - quartiles[0]) / 1.349)
    return max(spread * len(values) ** (-1.0 / 6.0), 0.05)


@dataclass
class Typicality:
    """How much of an array the training arrays explain, and the probability that it is unrelated to them.

    With x̃ an array standardised by the training means and standard deviations and P the projection onto the
    span of the centred training arrays, two statistics describe it (docs/linear.md eq. 24): its explained
    fraction and its size,

        r(x̃) = ‖P x̃‖² / ‖x̃‖² = g*ᵀ G⁺ g* / (‖x̃‖²/p),   g* = X̃x̃/p,      a(x̃) = ‖x̃‖²/p.

    For a training array left out of the others (its centring and span computed without it) both are exact:
    r_i = 1 − 1 / (G⁺_ii G_ii (n/(n − 1))²) (the squared distance of a point from the affine hull of the other
    points is 1/(G_c⁺)_ii, G_c the centred Gram matrix) and a_i = G_ii (n/(n − 1))². Two hypotheses about a new
    array (eq. 25):

    * *typical*: it comes from the population of the training arrays, whose (logit r, log a) the n leave-one-out
      values describe: a kernel density estimate, the mean of product normal kernels (bandwidths of
      :func:`_bandwidth`) centred at the n values (a batch of arrays unlike the rest forms its own bump);
    * *unrelated*: it shares nothing with the training arrays (noise, genes in the wrong order, another
      platform): it explains about the share d/p of its squared norm that a random direction would (d = rank G),
      logit r ~ Cauchy(logit(d/p), ``UNRELATED_LOGIT_SD``), and its size is unknown,
      log a ~ Cauchy(median of the training arrays' log a_i, ``UNRELATED_LOG_NORM_SD``): heavier tails than the
      typical density's, so that an array far from both is called unrelated.

    The probability that an array is unrelated is the posterior of the second hypothesis under the prior
    probability ``prior`` (eq. 26). An array of noise with the genes' own means and spreads is caught by r, an
    array whose values are in the wrong genes by a (its standardised values are huge), the training mean array
    itself by a (a = 0, where no real array lies).

    Attributes
    ----------
    pinv : ndarray of shape (n, n)
        G⁺.
    rank : int
        d, the rank of G.
    n_features : int
        p, the number of varying features.
    loo_explained, loo_size : ndarray of shape (n,)
        r_i and a_i of every training array left out of the others.
    """

    pinv: np.ndarray
    rank: int
    n_features: int
    loo_explained: np.ndarray
    loo_size: np.ndarray

    @classmethod
    def fit(cls, gram, p, *, pinv=None):
        """From G = X̃X̃ᵀ/p of the centred, standardised training arrays and p.

        Parameters
        ----------
        gram : ndarray of shape (n, n)
        p : int
        pinv : ndarray of shape (n, n), optional
            G⁺ (:func:`span_projector`) when the caller has it.

        Returns
        -------
        Typicality
        """
        n = len(gram)
        pinv = span_projector(gram) if pinv is None else pinv
        rank = int(round(float(np.einsum("ij,ji->", pinv, gram))))  # trace of the projection G⁺G
        size = np.diag(gram) * (n / max(n - 1, 1)) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            residual = 1.0 / (np.diag(pinv) * size)
        explained = np.clip(1.0 - np.nan_to_num(residual, nan=1.0, posinf=1.0), 1e-12, 1.0 - 1e-12)
        return cls(pinv, rank, int(p), explained, size)

    def statistics(self, cross, full):
        """r and a of new arrays from their g* (n, m) and a = ‖x̃*‖²/p (m,) (r = 1 where a = 0)."""
        in_span = np.einsum("im,im->m", cross, self.pinv @ cross)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(full > 0, in_span / full, 1.0)
        return np.clip(r, 0.0, 1.0), np.asarray(full, dtype=float)

    def unrelated_probability(self, explained, size, prior):
        """P(unrelated | r, a) under the prior probability ``prior`` of unrelated (eq. 26)."""
        explained = np.asarray(explained, dtype=float)
        n = len(self.loo_explained)
        if prior <= 0.0 or n < 3:
            return np.zeros_like(explained)
        u = logit(np.clip(explained, 1e-12, 1.0 - 1e-12))
        v = np.log(np.maximum(size, 1e-300))
        loo_u = logit(self.loo_explained)
        loo_v = np.log(np.maximum(self.loo_size, 1e-300))
        informative = self.n_features > self.rank  # else the training arrays span every direction: r tells nothing
        kernels = _normal_logpdf(v[:, None], loo_v[None, :], _bandwidth(loo_v))
        if informative:
            kernels = kernels + _normal_logpdf(u[:, None], loo_u[None, :], _bandwidth(loo_u))
        log_typical = logsumexp(kernels, axis=1) - np.log(n)
        log_unrelated = _cauchy_logpdf(v, np.median(loo_v), UNRELATED_LOG_NORM_SD)
        if informative:
            log_unrelated = log_unrelated + _cauchy_logpdf(u, logit(self.rank / self.n_features),
                                                           UNRELATED_LOGIT_SD)  # fmt: skip
        return expit(np.log(prior) - np.log1p(-prior) + log_unrelated - log_typical)
