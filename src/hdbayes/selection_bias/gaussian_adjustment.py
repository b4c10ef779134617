"""Adjustment factor of the Bayesian Gaussian classification model (Li 2009, eq. 25–34).

The features are screened with the one-way ANOVA F-statistic R_F (eq. 25) and a
feature is discarded iff R_F ≤ γ. The correction for selection bias multiplies the
posterior by A(τ^μ)^{p−k} (eq. 23–24, Li 2009 §3.3), where

    A(τ^μ) = P(R_F(x_t, y) ≤ γ | y, τ^μ)

is the probability that **one** feature drawn afresh from the prior is discarded.

Given the class means μ^(1..G) and the precision τ^x, R_F has a noncentral F
distribution with G − 1 and n − G degrees of freedom (eq. 26–28), a Poisson mixture
of central ones (eq. 29–30):

    P(R_F ≤ γ | y, μ, τ^x) = Σ_{k≥0} f_k · Pois(k; Λ(μ) τ^x / 2),
    f_k = F_cdf( γ (G−1)/(G−1+2k); G−1+2k, n−G ),
    Λ(μ) = Σ_g n_g (μ^(g) − μ̃)²,   μ̃ = Σ_g n_g μ^(g) / n.

(The paper calls Λτ^x/2 "the noncentrality"; in scipy's convention
``ncf(G−1, n−G, nc)`` the noncentrality is nc = Λ τ^x and the Poisson mean nc/2;
docs/gaussian.md, "Selection and correction".) Λ is unchanged by adding a constant to every μ^(g), so ν (and τ^ν)
drop out; with μ^(g) = ν + Z_g/√τ^μ, Z_g i.i.d. N(0, 1), and τ^x from its prior
(eq. 31–34),

    A(τ^μ) = E_{Z, T}[ Σ_k f_k Pois(k; Λ(Z) T / (2 τ^μ)) ]
           ≈ Σ_{k≤K} f_k · mean_m Pois(k; λ_m / τ^μ),   λ_m = Λ(Z_m) T_m / 2,

with a **fixed** pool of M draws (Z_m, T_m), T_m ~ Gamma(α^x/2, rate α^x w^x/2),
reused for every τ^μ (common random numbers: the Metropolis target of log τ^μ stays
fixed along the chain and the ratios A(τ')/A(τ) are accurate). The
k-sum stops at the largest K with f_K > e^{-10}; f_k decreases in k and the Poisson
weights sum to at most one, so the truncation error is below e^{-10} (eq. 34 and the
remarks after it).

Everything is computed in log space: for small τ^μ the Poisson
means λ_m/τ^μ reach 10^8 and e^{-λ} underflows, yet log A stays finite.

A Metropolis sampler evaluates log A tens of thousands of times per chain, each
costing M·(K + 1) exponentials; :func:`interpolated_log_discard_probability`
replaces that by cubic interpolation in η = log τ^μ between grid nodes computed on
demand, so only the few dozen nodes near the chain's path are ever computed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import fdtr, gammaincinv

from hdbayes._numba import jit
from hdbayes._validation import check_count, check_generator, check_positive
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection_bias.quadratic_form import log_quadratic_form_tails

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from hdbayes._validation import RandomStateLike

__all__ = [
    "ALPHA2_GRID",
    "ClassVarianceGridAdjustment",
    "GaussianAdjustment",
    "PerClassVarianceAdjustment",
    "PerFeatureGaussianAdjustment",
    "class_count_eigenvalues",
    "gaussian_f_series",
    "gaussian_poisson_means",
    "interpolated_log_discard_probability",
    "interpolated_per_feature_log_discard_probability",
    "log_discard_probability_at",
    "log_discard_probability_given_ratio",
    "new_interpolation_table",
    "per_feature_log_discard_probability_at",
    "stacked_kernel_arguments",
]

DEFAULT_TOL = math.exp(-10.0)
"""Truncation of the k-sum: keep the f_k > e^{-10} (Li 2009, §4.1)."""

_MAX_TERMS = 1 << 24


def _check_class_counts(class_counts):
    """Class sizes as an int64 array; ≥ 2 classes, each with ≥ 1 case, and n > G."""
    counts = np.asarray(class_counts)
    if counts.ndim != 1:
        raise InputValueError(f"class_counts must be a 1-d sequence of class sizes, got shape {counts.shape}")
    if counts.shape[0] < 2:
        raise InputValueError(f"the F-statistic needs at least 2 classes, got {counts.shape[0]} class count(s)")
    if counts.dtype.kind == "f" and np.all(np.isfinite(counts)) and np.all(counts == np.round(counts)):
        counts = counts.astype(np.int64)
    if counts.dtype.kind not in "iu":
        raise InputTypeError(f"class_counts must hold integers, got values of type {counts.dtype.name}")
    counts = counts.astype(np.int64)
    if np.any(counts < 1):
        raise InputValueError(f"every class needs at least one case, got class_counts={counts.tolist()}")
    n, n_classes = int(counts.sum()), counts.shape[0]
    if n <= n_classes:
        raise InputValueError(
            f"the F-statistic needs more cases than classes (n − G ≥ 1 within-class degrees of freedom), "
            f"got n={n} cases in G={n_classes} classes"
        )
    return counts


def gaussian_f_series(threshold, class_counts, tol=DEFAULT_TOL):
    """log f_k, the probabilities of the central-F mixture components (Li 2009, eq. 30).

        f_k = P( [χ²_{G−1+2k}/(G−1)] / [χ²_{n−G}/(n−G)] ≤ γ )
            = F_cdf( γ (G−1)/(G−1+2k); G−1+2k, n−G ),

    the probability that the F-statistic of a feature is ≤ γ given that the Poisson
    component of its noncentral χ² is k. f_k decreases in k (χ²_{d+2} is stochastically
    larger than χ²_d); f_0 is the central F cdf, i.e. A(τ^μ) as τ^μ → ∞.

    Parameters
    ----------
    threshold : float
        γ ≥ 0; a feature is discarded iff its F-statistic is ≤ γ.
    class_counts : sequence of int
        n_1..n_G, the training class sizes (G ≥ 2, each ≥ 1, n = Σ n_g > G).
    tol : float, default=e^{-10}
        Keep k = 0..K with K the largest k such that f_k > ``tol`` (Li 2009, §4.1);
        at least the term k = 0 is always returned. The neglected tail of the
        Poisson mixture is below ``tol``.

    Returns
    -------
    ndarray of shape (K + 1,)
        log f_0, ..., log f_K (−inf only when γ = 0).

    Notes
    -----
    Because d₁ x = γ (G−1) does not depend on k, f_k = I_z((G−1)/2 + k, (n−G)/2) with
    the fixed argument z = γ(G−1)/(γ(G−1) + n − G): for large k it decays roughly like
    z^k, so K grows with γ (K = 13, 19, 25, 33 for G = 6, n = 200 and γ = 1.79, 3.15,
    4.41, 6.2).
    """
    threshold = check_positive("threshold", threshold, allow_zero=True)
    counts = _check_class_counts(class_counts)
    tol = check_positive("tol", tol)
    n, n_classes = int(counts.sum()), counts.shape[0]
    dfn0, dfd = n_classes - 1, n - n_classes
    pieces = []
    start, size = 0, 64
    while True:
        k = np.arange(start, start + size, dtype=np.float64)
        dfn = dfn0 + 2.0 * k
        with np.errstate(divide="ignore"):
            log_f = np.log(fdtr(dfn, dfd, threshold * dfn0 / dfn))  # scipy.stats.f.logcdf
        below = np.flatnonzero(~(log_f > np.log(tol)))
        if below.size:
            stop = max(int(below[0]), 1 if start == 0 else 0)
            pieces.append(log_f[:stop])
            break
        pieces.append(log_f)
        start += size
        size *= 2
        if start >= _MAX_TERMS:
            raise InputValueError(
                f"more than {_MAX_TERMS} terms f_k > tol={tol:g} for threshold={threshold:g}; "
                "the threshold is implausibly large for the F-statistic"
            )
    return np.ascontiguousarray(np.concatenate(pieces), dtype=np.float64)


def gaussian_poisson_means(class_counts, alpha_x, w_x, n_mc=1000, random_state=None):
    """The fixed Monte Carlo pool λ_m = Λ(Z_m) T_m / 2 of eq. 34 (Li 2009).

    Z_m = (Z_m1..Z_mG) i.i.d. N(0, 1) (the paper's "Z^(1..n)" is a typo for
    Z^(1..G)), Λ(Z) = Σ_g n_g (Z_g − Z̃)² with Z̃ = Σ_g n_g Z_g / n, and
    T_m ~ Gamma(shape α^x/2, rate α^x w^x/2), the prior of τ^x (eq. 9; the paper's
    "P(τ^μ)" is a typo). The Poisson mean of the k-sum at τ^μ is λ_m / τ^μ
    (scipy noncentrality 2 λ_m / τ^μ).

    Parameters
    ----------
    class_counts : sequence of int
        n_1..n_G (G ≥ 2, each ≥ 1).
    alpha_x, w_x : float
        Prior of τ^x: Gamma(α^x/2, rate α^x w^x/2), mean 1/w^x.
    n_mc : int, default=1000
        M, the number of draws (Li 2009 used 1000).
    random_state : int, numpy.random.Generator, RandomState or None
        Seed or generator (:func:`hdbayes._validation.check_generator`; a Generator is
        used and advanced, not copied); Z is drawn first, then T.

    Returns
    -------
    ndarray of shape (M,)
        λ_1..λ_M, all > 0 with probability one.
    """
    counts = _check_class_counts(class_counts)
    alpha_x = check_positive("alpha_x", alpha_x)
    w_x = check_positive("w_x", w_x)
    n_mc = check_count("n_mc", n_mc)
    rng = check_generator(random_state)
    weights = counts.astype(np.float64)
    z = rng.standard_normal((n_mc, counts.shape[0]))
    centred = z - (z @ weights / weights.sum())[:, None]
    lam = (centred**2) @ weights
    t = rng.gamma(shape=alpha_x / 2.0, scale=2.0 / (alpha_x * w_x), size=n_mc)
    return np.ascontiguousarray(lam * t / 2.0)


#: Terms below e^−60 of the largest are skipped in the k-sum of :func:`log_discard_probability_at` (they cannot
#: change a double-precision sum that includes the largest term, 1 after factoring it out).
_NEGLIGIBLE_LOG = 60.0


@jit
def log_discard_probability_at(tau_mu, poisson_means, log_f):
    """log A(τ^μ) for one τ^μ > 0 from the pool λ_m and the series log f_k (eq. 34).

        A(τ^μ) ≈ mean_m Σ_{k=0}^{K} f_k Pois(k; λ_m/τ^μ).

    Per draw m the k-sum is a log-sum-exp of log f_k + log Pois(k; μ_m), μ_m = λ_m/τ^μ,
    with log Pois from log p_0 = −μ, log p_{k+1} = log p_k + log μ − log(k + 1) (the
    recursion of Li 2009, §3, in log space), and the maximum factored out; then a
    log-mean-exp over m. Finite for μ_m from 0 (A → f_0) up to 10^8 and beyond (A → 0).

    Parameters
    ----------
    tau_mu : float
        τ^μ > 0 (+inf gives log f_0).
    poisson_means : ndarray of shape (M,)
        λ_m from :func:`gaussian_poisson_means`.
    log_f : ndarray of shape (K + 1,)
        From :func:`gaussian_f_series`.

    Returns
    -------
    float
        log A(τ^μ); cost at most M · (K + 1) exponentials, in practice M times the terms within e^−60 of each
        draw's largest (the k-sum stops past the Poisson mode, where f_k and Pois(k) both fall).
    """
    if not tau_mu > 0.0:
        raise ValueError("tau_mu must be > 0")
    n_terms = log_f.shape[0]
    n_mc = poisson_means.shape[0]
    log_k = np.empty(n_terms)
    for k in range(1, n_terms):
        log_k[k] = np.log(k)
    terms = np.empty(n_terms)
    per_draw = np.empty(n_mc)
    peak_m = -np.inf
    for m in range(n_mc):
        mu = poisson_means[m] / tau_mu
        if np.isinf(mu):  # Pois(k; ∞) = 0 for every finite k
            per_draw[m] = -np.inf
            continue
        log_mu = np.log(mu)  # −inf for μ = 0: then only k = 0 survives
        log_p = -mu
        peak = -np.inf
        n_used = n_terms
        for k in range(n_terms):
            if k > 0:
                log_p += log_mu - log_k[k]
            value = log_f[k] + log_p
            terms[k] = value
            if value > peak:
                peak = value
            elif k > mu and value < peak - _NEGLIGIBLE_LOG:
                # past the Poisson mode both log f_k and log Pois(k) fall: every later term is below e^−60 of
                # the peak, which adds nothing to a sum ≥ 1 in double precision
                n_used = k
                break
        if peak == -np.inf:
            per_draw[m] = -np.inf
            continue
        total = 0.0
        for k in range(n_used):
            gap = terms[k] - peak
            if gap > -_NEGLIGIBLE_LOG:
                total += np.exp(gap)
        value = peak + np.log(total)
        per_draw[m] = value
        if value > peak_m:
            peak_m = value
    if peak_m == -np.inf:
        return -np.inf
    total = 0.0
    for m in range(n_mc):
        total += np.exp(per_draw[m] - peak_m)
    return peak_m + np.log(total / n_mc)


@jit
def _log_discard_probabilities(tau_mu, poisson_means, log_f):
    out = np.empty(tau_mu.shape[0])
    for i in range(tau_mu.shape[0]):
        out[i] = log_discard_probability_at(tau_mu[i], poisson_means, log_f)
    return out


@jit
def _cubic_lagrange(s, v0, v1, v2, v3):
    """The cubic through (−1, v0), (0, v1), (1, v2), (2, v3) at s ∈ [0, 1)."""
    sp1 = s + 1.0
    sm1 = s - 1.0
    sm2 = s - 2.0
    return -s * sm1 * sm2 / 6.0 * v0 + sp1 * sm1 * sm2 / 2.0 * v1 - sp1 * s * sm2 / 2.0 * v2 + sp1 * s * sm1 / 6.0 * v3


@jit
def interpolated_log_discard_probability(eta, table, eta_min, step, poisson_means, log_f):
    """log A(e^η) by 4-point (cubic) Lagrange interpolation in η = log τ^μ.

    The grid is η_i = ``eta_min`` + i · ``step``, i = 0..len(table) − 1. ``table``
    caches the exact node values log A(e^{η_i}) (from
    :func:`log_discard_probability_at`) and is filled on demand: a NaN entry is
    computed the first time it is needed, in place. For η in [η_i, η_{i+1}) the nodes
    i − 1..i + 2 are used; when one of them is off the grid (η < η_1 or η ≥ η_{n−2}),
    or not finite, the exact value is returned instead.

    The error scales with step⁴ · |d⁴ log A/dη⁴|; with ``step`` = 1/64 it is about
    2e-9 · |log A| (e.g. < 1e-9 absolute for η ≥ 0 and < 1e-7 for η ≥ −5 with G = 6,
    n = 200, γ = 1.79, α^x = 4, w^x = 1), far below the Monte Carlo error of A.
    A filled node costs one exact evaluation (M · (K + 1) exponentials); an
    interpolation from cached nodes costs a few flops.

    Parameters
    ----------
    eta : float
        log τ^μ.
    table : ndarray of float64, shape (n_nodes,)
        Node cache from :func:`new_interpolation_table`, **tied to this pool and
        series**: use a fresh table for other ``poisson_means`` or ``log_f``.
    eta_min, step : float
        The grid.
    poisson_means, log_f : ndarray
        As for :func:`log_discard_probability_at`.

    Returns
    -------
    float
        ≈ log A(e^η).
    """
    n_nodes = table.shape[0]
    t = (eta - eta_min) / step
    if not (t >= 1.0 and t < n_nodes - 2.0):
        return log_discard_probability_at(np.exp(eta), poisson_means, log_f)
    i = int(np.floor(t))
    s = t - i
    for j in range(i - 1, i + 3):
        if np.isnan(table[j]):
            table[j] = log_discard_probability_at(np.exp(eta_min + j * step), poisson_means, log_f)
    v0, v1, v2, v3 = table[i - 1], table[i], table[i + 1], table[i + 2]
    if not (np.isfinite(v0) and np.isfinite(v1) and np.isfinite(v2) and np.isfinite(v3)):
        return log_discard_probability_at(np.exp(eta), poisson_means, log_f)
    return _cubic_lagrange(s, v0, v1, v2, v3)


def new_interpolation_table(eta_min=-30.0, eta_max=30.0, step=1.0 / 64.0):
    """An empty (all-NaN) node cache for :func:`interpolated_log_discard_probability`.

    Parameters
    ----------
    eta_min, eta_max : float, default=-30, 30
        Range of η = log τ^μ covered by the grid (the last node is the largest
        η_min + i · step ≤ η_max).
    step : float, default=1/64
        Grid spacing in η.

    Returns
    -------
    table : ndarray of shape (n_nodes,)
        float64, filled with NaN.
    eta_min, step : float
    """
    eta_min, eta_max, step = float(eta_min), float(eta_max), float(step)
    if not (np.isfinite(eta_min) and np.isfinite(eta_max)) or eta_max <= eta_min:
        raise InputValueError(f"need finite eta_min < eta_max, got eta_min={eta_min:g}, eta_max={eta_max:g}")
    step = check_positive("step", step)
    n_nodes = int(math.floor((eta_max - eta_min) / step + 1e-9)) + 1
    if n_nodes < 4:
        raise InputValueError(f"the grid needs at least 4 nodes for cubic interpolation, got {n_nodes}")
    return np.full(n_nodes, np.nan), eta_min, step


@dataclass(frozen=True, eq=False)
class GaussianAdjustment:
    """The adjustment factor A(τ^μ) of the Gaussian model with its fixed Monte Carlo pool.

    Holds everything that is fixed along a Markov chain (Li 2009, §3): the series
    log f_k (depends on γ and the class sizes) and the pool λ_m (depends on the class
    sizes and the prior of τ^x). Build it with :meth:`create`.

    With γ = 0 (every discarded feature has F = 0, for example constant features that the
    selection reached) A(τ^μ) = P(F ≤ 0) = 0 for every τ^μ and the corrected posterior is
    undefined. :meth:`create` then stores its γ → 0⁺ limit instead: f_k ∝ γ^{(G−1)/2 + k} for
    small γ, so A(τ^μ)/f_0 → mean_m exp(−λ_m/τ^μ), the k = 0 term alone (``log_f = [0]``). The
    constant factor f_0^{p−k} cancels in the posterior, which becomes the limit of the posteriors
    for γ ↓ 0: the discarded features' class means are equal.

    Attributes
    ----------
    threshold : float
        γ.
    class_counts : tuple of int
        n_1..n_G.
    log_f : ndarray of shape (K + 1,)
        From :func:`gaussian_f_series`.
    poisson_means : ndarray of shape (M,)
        From :func:`gaussian_poisson_means`.

    Examples
    --------
    >>> adj = GaussianAdjustment.create(1.79, [34, 33, 33, 33, 33, 34], alpha_x=4.0, w_x=1.0, random_state=0)
    >>> log_a = adj.log_discard_probability([1.0, 100.0, 1e4])
    """

    threshold: float
    class_counts: tuple
    log_f: np.ndarray
    poisson_means: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "threshold", check_positive("threshold", self.threshold, allow_zero=True))
        counts = _check_class_counts(self.class_counts)
        object.__setattr__(self, "class_counts", tuple(int(c) for c in counts))
        for name in ("log_f", "poisson_means"):
            value = np.array(getattr(self, name), dtype=np.float64, order="C", copy=True)
            if value.ndim != 1 or value.shape[0] == 0:
                raise InputValueError(f"{name} must be a non-empty 1-d array, got shape {value.shape}")
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        if np.any(np.isnan(self.log_f)):
            raise InputValueError("log_f must not contain NaN")
        if np.any(~np.isfinite(self.poisson_means)) or np.any(self.poisson_means < 0):
            raise InputValueError("poisson_means must be finite and >= 0")

    @classmethod
    def create(cls, threshold: float, class_counts: Sequence[int], alpha_x: float, w_x: float,
               n_mc: int = 1000, random_state: RandomStateLike = None) -> GaussianAdjustment:  # fmt: skip
        """Compute the series f_k (tol e^{-10}) and draw the pool λ_m.

        Parameters
        ----------
        threshold : float
            γ ≥ 0 on the F-statistic.
        class_counts : sequence of int
            n_1..n_G of the training data.
        alpha_x, w_x : float
            Prior of τ^x (Gamma(α^x/2, rate α^x w^x/2)).
        n_mc : int, default=1000
            Size M of the pool.
        random_state : int, numpy.random.Generator, RandomState or None
            Seed or generator of the pool (see :func:`gaussian_poisson_means`).

        Returns
        -------
        GaussianAdjustment
        """
        threshold = check_positive("threshold", threshold, allow_zero=True)
        # γ = 0: A ≡ 0 (F ≤ 0 has probability 0); keep the γ → 0⁺ limit of A/f_0 = mean_m e^{−λ_m/τ^μ}
        log_f = gaussian_f_series(threshold, class_counts) if threshold > 0 else np.zeros(1)
        means = gaussian_poisson_means(class_counts, alpha_x, w_x, n_mc=n_mc, random_state=random_state)
        return cls(float(threshold), tuple(int(c) for c in np.asarray(class_counts)), log_f, means)

    @property
    def n_terms(self):
        """K + 1, the number of terms of the k-sum."""
        return self.log_f.shape[0]

    def log_discard_probability(self, tau_mu: ArrayLike) -> np.ndarray:
        """log A(τ^μ), elementwise (exact Monte Carlo estimate of eq. 34).

        Parameters
        ----------
        tau_mu : array_like
            Values τ^μ > 0.

        Returns
        -------
        ndarray of the shape of ``tau_mu``
            The estimates of log A(τ^μ), one per value of ``tau_mu``.
        """
        tau = np.asarray(tau_mu, dtype=np.float64)
        if np.any(np.isnan(tau)) or np.any(tau <= 0):
            raise InputValueError("tau_mu must be > 0 (and not NaN)")
        flat = np.ascontiguousarray(tau.ravel())
        return _log_discard_probabilities(flat, self.poisson_means, self.log_f).reshape(tau.shape)


# ---------------------------------------------------------------------------------------------
# The per-feature-spread model (Li 2012, BCBCSF): exact adjustment factor by quadrature
# ---------------------------------------------------------------------------------------------

PER_FEATURE_TOL = 1e-30
"""Truncation of the f_k series for the per-feature model: the neglected tail is below 1e-30·P(K > K_max)."""


def class_count_eigenvalues(class_counts):
    """d_1..d_{G−1}, the nonzero eigenvalues of M = diag(n_g) − n nᵀ/N (docs/gaussian.md, eq. P11).

    Λ(Z) = Σ_g n_g (Z_g − Z̃)² = Zᵀ M Z with Z i.i.d. N(0, 1), so Λ = Σ_i d_i χ²_1 (independent).
    Balanced classes n_g = m give d_i = m.
    """
    counts = _check_class_counts(class_counts).astype(np.float64)
    matrix = np.diag(counts) - np.outer(counts, counts) / counts.sum()
    values = np.sort(np.linalg.eigvalsh(matrix))[1:]  # the smallest is 0 (constant vector)
    return np.ascontiguousarray(np.maximum(values, 0.0))


@jit
def log_discard_probability_given_ratio(log_r, eigenvalues, log_f):
    """log a(r) = log P(F ≤ γ | r), r = w^μ/w^x, exactly (docs/gaussian.md, eq. P12–P14).

    Given r, the Poisson component K of the noncentral χ² has probability generating function
    E[z^K] = Π_i (1 + (1 − z) d_i r)^{−1/2}: K is a sum of independent negative binomials
    NB(1/2, π_i), π_i = d_i r/(1 + d_i r). Their pmfs (1 − π_i)^{1/2} c_k π_i^k with
    c_k = Γ(k + 1/2)/(Γ(1/2) k!) are convolved up to k = K_max (positive terms, no cancellation),
    and a(r) = Σ_k f_k P(K = k). Cost O(G K_max²) flops, no Monte Carlo.
    """
    n_terms = log_f.shape[0]
    conv = np.zeros(n_terms)
    conv[0] = 1.0
    log_scale = 0.0
    single = np.empty(n_terms)
    new = np.empty(n_terms)
    for i in range(eigenvalues.shape[0]):
        dr = eigenvalues[i] * np.exp(log_r)
        # π = dr/(1 + dr); log(1 − π) = −log1p(dr)
        log_scale += -0.5 * np.log1p(dr)
        if dr == np.inf:
            return -np.inf
        pi = dr / (1.0 + dr)
        single[0] = 1.0
        for k in range(1, n_terms):
            single[k] = single[k - 1] * pi * (k - 0.5) / k
        if i == 0:  # the first factor needs no convolution
            for k in range(n_terms):
                new[k] = single[k]
        else:
            for k in range(n_terms):
                total = 0.0
                for m in range(k + 1):
                    total += conv[m] * single[k - m]
                new[k] = total
        # rescale to keep the largest coefficient near 1 (π → 1 makes them grow slowly)
        peak = 0.0
        for k in range(n_terms):
            if new[k] > peak:
                peak = new[k]
        for k in range(n_terms):
            conv[k] = new[k] / peak
        log_scale += np.log(peak)
    peak = -np.inf
    for k in range(n_terms):
        if conv[k] > 0.0 and log_f[k] > -np.inf:
            value = log_f[k] + np.log(conv[k])
            if value > peak:
                peak = value
    if peak == -np.inf:
        return -np.inf
    total = 0.0
    for k in range(n_terms):
        if conv[k] > 0.0 and log_f[k] > -np.inf:
            total += np.exp(log_f[k] + np.log(conv[k]) - peak)
    return log_scale + peak + np.log(total)


@jit
def _log_discard_probabilities_given_ratio(log_r, eigenvalues, log_f):
    out = np.empty(log_r.shape[0])
    for i in range(log_r.shape[0]):
        out[i] = log_discard_probability_given_ratio(log_r[i], eigenvalues, log_f)
    return out


@jit
def log_f_density_of_log(u, d1, d2, log_norm):
    """log density of U = log T, T ~ F(d1, d2): log_norm + (d1/2) u − ((d1+d2)/2) log(1 + (d1/d2) e^u)."""
    x = np.log(d1 / d2) + u
    if x > 0.0:
        softplus = x + np.log1p(np.exp(-x))
    else:
        softplus = np.log1p(np.exp(x))
    return log_norm + 0.5 * d1 * u - 0.5 * (d1 + d2) * softplus


def _log_f_density_normaliser(d1, d2):
    """log of (d1/d2)^{d1/2} / B(d1/2, d2/2), the normaliser of :func:`log_f_density_of_log`."""
    log_beta = math.lgamma(d1 / 2) + math.lgamma(d2 / 2) - math.lgamma((d1 + d2) / 2)
    return 0.5 * d1 * math.log(d1 / d2) - log_beta


@jit
def per_feature_log_discard_probability_at(log_rho, v0, h, log_a, d1, d2, log_norm):
    """log A(ρ) = log ∫ a(e^v) p_U(v − log ρ) dv by the trapezoidal rule on the fixed grid
    v_i = v0 + i h (docs/gaussian.md, eq. P15–P17), as a log-sum-exp; p_U is the density of
    log T, T ~ F(α1_x, α1_μ), and ``log_a`` holds log a(e^{v_i})."""
    n = log_a.shape[0]
    peak = -np.inf
    terms = np.empty(n)
    for i in range(n):
        value = log_a[i] + log_f_density_of_log(v0 + i * h - log_rho, d1, d2, log_norm)
        terms[i] = value
        if value > peak:
            peak = value
    if peak == -np.inf:
        return -np.inf
    total = 0.0
    for i in range(n):
        total += np.exp(terms[i] - peak)
    return peak + np.log(total * h)


@jit
def _per_feature_log_discard_probabilities(log_rho, v0, h, log_a, d1, d2, log_norm):
    out = np.empty(log_rho.shape[0])
    for i in range(log_rho.shape[0]):
        out[i] = per_feature_log_discard_probability_at(log_rho[i], v0, h, log_a, d1, d2, log_norm)
    return out


@jit
def interpolated_per_feature_log_discard_probability(log_rho, table, eta_min, step, v0, h, log_a, d1, d2, log_norm):
    """log A(ρ) by cubic Lagrange interpolation in log ρ between nodes computed on demand; the same
    grid, node cache and fallback rules as :func:`interpolated_log_discard_probability` (a table
    from :func:`new_interpolation_table`, tied to this adjustment)."""
    n_nodes = table.shape[0]
    t = (log_rho - eta_min) / step
    if not (t >= 1.0 and t < n_nodes - 2.0):
        return per_feature_log_discard_probability_at(log_rho, v0, h, log_a, d1, d2, log_norm)
    i = int(np.floor(t))
    for j in range(i - 1, i + 3):
        if np.isnan(table[j]):
            table[j] = per_feature_log_discard_probability_at(eta_min + j * step, v0, h, log_a, d1, d2, log_norm)
    v_0, v_1, v_2, v_3 = table[i - 1], table[i], table[i + 1], table[i + 2]
    if not (np.isfinite(v_0) and np.isfinite(v_1) and np.isfinite(v_2) and np.isfinite(v_3)):
        return per_feature_log_discard_probability_at(log_rho, v0, h, log_a, d1, d2, log_norm)
    return _cubic_lagrange(t - i, v_0, v_1, v_2, v_3)


def _freeze_arrays(instance, names):
    """Store read-only C-contiguous float copies of the array fields ``names`` of a frozen dataclass."""
    for name in names:
        value = np.array(getattr(instance, name), dtype=np.float64, order="C", copy=True)
        value.setflags(write=False)
        object.__setattr__(instance, name, value)


def _grid_values(start, h, block, compute, finished):
    """log a (or log b) on the grid v_i = start + i h, computed in blocks of ``block`` nodes by
    ``compute(v)`` until ``finished(v, values)`` holds for the last block (eq. P17, P30)."""
    pieces = []
    while True:
        v = start + h * np.arange(block)
        values = compute(v)
        pieces.append(values)
        if finished(v, values):
            return np.concatenate(pieces)
        start = v[-1] + h
        if len(pieces) * block > 102400:
            raise InputValueError("the adjustment grid did not reach its lower level; alpha1_mu is too small")


@dataclass(frozen=True, eq=False)
class PerFeatureGaussianAdjustment:
    """The exact adjustment factor A(ρ), ρ = s_μ/s_x, of the per-feature-spread model (Li 2012).

    A(ρ) = P(F ≤ γ | ρ) for one feature drawn from the prior: w^μ_j ~ scaled-Inv-χ²(α1_μ, s_μ),
    w^x_j ~ scaled-Inv-χ²(α1_x, s_x), so the only quantity F depends on, r = w^μ_j/w^x_j, is ρ T
    with T ~ F(α1_x, α1_μ), and A(ρ) = ∫ a(ρ t) dF_{α1_x, α1_μ}(t) with a(r) exact
    (:func:`log_discard_probability_given_ratio`). The integral is the trapezoidal rule in
    v = log r on a fixed grid of step ``h`` (exponentially convergent: the integrand is analytic in
    the strip |Im v| < π), whose nodes log a(e^{v_i}) are computed once here. No Monte Carlo, no
    floor. Build it with :meth:`create`. When γ is so large that the series has more than 1000 terms, the
    nodes are the quadratic-form tail P(Σ_i (1 + d_i r) χ²_1 − c χ²_{n−G} ≤ 0), c = γ(G − 1)/(n − G) (the
    per-class factor with every class variance equal, eq. P20–P27): about 10 µs a node whatever γ, where the
    series' convolution costs O((G − 1) K²) for K terms.

    Attributes
    ----------
    threshold : float
    class_counts : tuple of int
    alpha1_mu, alpha1_x : float
    log_f : ndarray (K + 1,)
        The f_k series (:func:`gaussian_f_series`, tol :data:`PER_FEATURE_TOL`).
    eigenvalues : ndarray (G − 1,)
        :func:`class_count_eigenvalues`.
    v0, h : float
        The grid v_i = v0 + i h.
    log_a : ndarray
        log a(e^{v_i}).

    Examples
    --------
    >>> adj = PerFeatureGaussianAdjustment.create(4.0, [20, 21, 21], alpha1_mu=3.0, alpha1_x=10.0)
    >>> bool(adj.log_discard_probability([0.0])[0] < 0)
    True
    """

    threshold: float
    class_counts: tuple
    alpha1_mu: float
    alpha1_x: float
    log_f: np.ndarray
    eigenvalues: np.ndarray
    v0: float
    h: float
    log_a: np.ndarray

    @classmethod
    def create(cls, threshold, class_counts, alpha1_mu=3.0, alpha1_x=10.0, h=0.5, tail=40.0,
               log_rho_range=(-30.0, 30.0), tol=PER_FEATURE_TOL):  # fmt: skip
        """Compute the series, the eigenvalues and the grid values log a(e^{v_i}).

        The grid covers v from ``log_rho_range[0]`` − 2·``tail``/α1_x − log max d_i − 5 (below it the
        integrand is less than e^{−tail} relative, for every ρ in the range) up to where
        log a(e^v) < log f_0 − 2·``tail`` − (α1_μ/2)(the range's width) (eq. P17).
        """
        threshold = check_positive("threshold", threshold, allow_zero=True)
        alpha1_mu = check_positive("alpha1_mu", alpha1_mu)
        alpha1_x = check_positive("alpha1_x", alpha1_x)
        h = check_positive("h", h)
        counts = _check_class_counts(class_counts)
        log_f = gaussian_f_series(threshold, counts, tol=tol) if threshold > 0 else np.zeros(1)
        eigenvalues = class_count_eigenvalues(counts)
        lo, hi = float(log_rho_range[0]), float(log_rho_range[1])
        v_start = lo - 2.0 * tail / alpha1_x - math.log(eigenvalues.max()) - 5.0
        stop_level = log_f[0] - 2.0 * tail - 0.5 * alpha1_mu * max(hi - lo, 0.0)
        log_a = _grid_values(
            v_start, h, 256, lambda v: _pooled_log_discard_probabilities(v, counts, threshold, eigenvalues, log_f),
            lambda v, values: values[-1] < stop_level and v[0] > hi + 5.0,
        )  # fmt: skip
        return cls(float(threshold), tuple(int(c) for c in counts), float(alpha1_mu), float(alpha1_x),
                   log_f, eigenvalues, float(v_start), float(h), log_a)  # fmt: skip

    def __post_init__(self):
        _freeze_arrays(self, ("log_f", "eigenvalues", "log_a"))

    @property
    def density_parameters(self):
        """(d1, d2, log normaliser) of the density of log T, T ~ F(α1_x, α1_μ)."""
        return self.alpha1_x, self.alpha1_mu, _log_f_density_normaliser(self.alpha1_x, self.alpha1_mu)

    def kernel_arguments(self):
        """(v0, h, log_a, d1, d2, log_norm): the arguments of the compiled functions (writeable copies)."""
        return (self.v0, self.h, np.array(self.log_a), *self.density_parameters)

    def log_discard_probability(self, log_rho):
        """log A(ρ) elementwise, for log ρ = log s_μ − log s_x."""
        x = np.asarray(log_rho, dtype=np.float64)
        if np.any(np.isnan(x)):
            raise InputValueError("log_rho must not be NaN")
        flat = np.ascontiguousarray(x.ravel())
        return _per_feature_log_discard_probabilities(flat, *self.kernel_arguments()).reshape(x.shape)

    def log_discard_probability_given_ratio(self, log_r):
        """log a(r) elementwise (the factor for one feature with known r = w^μ/w^x)."""
        x = np.ascontiguousarray(np.asarray(log_r, dtype=np.float64).ravel())
        counts = np.asarray(self.class_counts)
        out = _pooled_log_discard_probabilities(x, counts, self.threshold, self.eigenvalues, np.array(self.log_f))
        return out.reshape(np.shape(log_r))


_SERIES_MAX_TERMS = 1000
"""Above this many f_k terms (γ in the hundreds or more) the pooled factor's nodes are quadratic-form tails
rather than the series, whose convolution costs O((G − 1) K²) a node (65 s for the grid at γ = 3250, class sizes
33, 8, 10, K = 17 594). Below it the series stays: exact to 1e-15 and what earlier fits used, bit for bit (the tails
agree with it to 4e-12 at G = 6, n = 200, γ = 3.15)."""
_QUADRATIC_FORM_MAX_LOG_R = 300.0
"""Above this log r (weights 1 + d_i r beyond about 1e130 against c) the quadratic-form tail loses accuracy (it
drifts by 2e-7 at log r = 350 and fails near 370, G = 2) and the series takes over."""


def _pooled_log_discard_probabilities(log_r, class_counts, threshold, eigenvalues, log_f):
    """log a(r) of the pooled per-feature model at each log r: the series (eq. P12–P14; at γ = 0 its limit), or
    with more than :data:`_SERIES_MAX_TERMS` terms the quadratic-form tail of equal class variances (a pool of
    the one point ε = 1, eq. P20–P27) for log r ≤ 300."""
    log_r = np.ascontiguousarray(log_r, dtype=np.float64)
    if not (threshold > 0 and log_f.shape[0] > _SERIES_MAX_TERMS):
        return _log_discard_probabilities_given_ratio(log_r, eigenvalues, log_f)
    out = np.empty(log_r.shape[0])
    near = log_r <= _QUADRATIC_FORM_MAX_LOG_R
    ones = np.ones((1, len(class_counts)))
    counts = np.asarray(class_counts, dtype=np.float64)
    out[near] = _per_class_log_b_grid(np.ascontiguousarray(log_r[near]), ones, counts, float(threshold))
    out[~near] = _log_discard_probabilities_given_ratio(np.ascontiguousarray(log_r[~near]), eigenvalues, log_f)
    return out


# ---------------------------------------------------------------------------------------------
# Per-class variances: F is no longer noncentral F; its distribution is a quadratic-form tail
# ---------------------------------------------------------------------------------------------


@jit
def between_class_weights(variances, class_counts):
    """The G − 1 weights λ_i of SSB = Σ_i λ_i χ²_1 when the class sample means are independent
    N(ν, V_g) (docs/gaussian.md, eq. P21): the nonzero eigenvalues of V^{1/2} M V^{1/2},
    M = diag(n_g) − n nᵀ/N.

    Its null vector V^{−1/2}·1 is removed exactly (a Householder reflection) before the eigenvalues
    are computed, so a huge common V (a large spread of class means) leaves no spurious eigenvalue of
    the size of its rounding error."""
    G = variances.shape[0]
    total = class_counts.sum()
    root = np.sqrt(variances)
    matrix = np.empty((G, G))
    for a in range(G):
        for b in range(G):
            m = (class_counts[a] if a == b else 0.0) - class_counts[a] * class_counts[b] / total
            matrix[a, b] = root[a] * m * root[b]
    null = 1.0 / root
    null /= np.sqrt((null * null).sum())
    w = null.copy()
    w[0] -= 1.0
    ww = (w * w).sum()
    reflection = np.eye(G)
    if ww > 0.0:
        reflection -= 2.0 * np.outer(w, w) / ww
    rotated = reflection @ matrix @ reflection
    if G == 2:
        return np.array([rotated[1, 1]])
    if G == 3:  # the 2 × 2 block's eigenvalues in closed form (LAPACK's call costs more than the work)
        a, b, d = rotated[1, 1], rotated[1, 2], rotated[2, 2]
        half_trace = 0.5 * (a + d)
        radius = np.sqrt(0.25 * (a - d) ** 2 + b * b)
        return np.array([half_trace - radius, half_trace + radius])
    return np.linalg.eigvalsh(np.ascontiguousarray(rotated[1:, 1:]))


@jit
def per_class_log_discard_probability_given(log_r, epsilon, class_counts, threshold):
    """log a(r; ε) = log P(F ≤ γ | r, ε) for one feature whose class g has variance ε_g (in units of
    v_j) and whose class means have spread r = w^μ_j/v_j (docs/gaussian.md, eq. P20–P23).

    F ≤ γ iff SSB − c·SSW ≤ 0, c = γ(G − 1)/(N − G), with SSB = Σ_i λ_i χ²_1 (weights from
    :func:`between_class_weights` of V_g = r + ε_g/n_g) and SSW = Σ_g ε_g χ²_{n_g − 1}, independent:
    a tail of an indefinite quadratic form (:func:`log_quadratic_form_tails`)."""
    G = class_counts.shape[0]
    r = np.exp(log_r)
    weights = np.empty(2 * G - 1)
    dof = np.empty(2 * G - 1)
    variances = np.empty(G)
    c = threshold * (G - 1.0) / (class_counts.sum() - G)
    for g in range(G):
        variances[g] = r + epsilon[g] / class_counts[g]
        weights[G - 1 + g] = -c * epsilon[g]
        dof[G - 1 + g] = class_counts[g] - 1.0
    between = between_class_weights(variances, class_counts)
    for i in range(G - 1):
        weights[i] = between[i]
        dof[i] = 1.0
    lower, _ = log_quadratic_form_tails(weights, dof)
    return lower


@jit
def per_class_log_b(log_r, epsilon_pool, class_counts, threshold):
    """log b(r) = log mean_m a(r; ε_m) over the fixed pool of class-variance ratios (eq. P28)."""
    M = epsilon_pool.shape[0]
    values = np.empty(M)
    peak = -np.inf
    for m in range(M):
        values[m] = per_class_log_discard_probability_given(log_r, epsilon_pool[m], class_counts, threshold)
        if values[m] > peak:
            peak = values[m]
    if peak == -np.inf:
        return -np.inf
    total = 0.0
    for m in range(M):
        total += np.exp(values[m] - peak)
    return peak + np.log(total / M)


@jit
def _per_class_log_b_grid(log_r, epsilon_pool, class_counts, threshold):
    out = np.empty(log_r.shape[0])
    for i in range(log_r.shape[0]):
        out[i] = per_class_log_b(log_r[i], epsilon_pool, class_counts, threshold)
    return out


PER_CLASS_POOL = 512
"""Size of the quasi-Monte Carlo pool of class-variance ratios (eq. P28). Against a pool of 16 384, over
the values of ρ a posterior can visit, the error of (p − k) log A(ρ) varies by at most 0.03–0.06 nats
for p − k = 4000 (docs/gaussian.md, "The adjustment factor"): a constant offset of log A cancels in
the sampler, only this variation matters."""


def check_class_scale(class_scale, n_classes):
    """The class scales s_g as a float array of shape (G,): ones for None, else G finite positive numbers."""
    if class_scale is None:
        return np.ones(int(n_classes))
    values = np.asarray(class_scale, dtype=np.float64)
    if values.shape != (int(n_classes),):
        raise InputValueError(f"class_scale must hold one value per class ({int(n_classes)}), got shape {values.shape}")
    if not (np.all(np.isfinite(values)) and np.all(values > 0)):
        raise InputValueError(f"class_scale must be finite and > 0, got {values.tolist()}")
    return values


def class_variance_pool(alpha2_x, n_classes, n_pool=PER_CLASS_POOL, seed=0, class_scale=None):
    """The fixed pool ε_m (M × G) of class-variance ratios ε_g ~ s_g Inv-χ²(α2_x, 1) (eq. P28, P39): a
    scrambled Sobol sequence (seeded, so the pool is the same in every fit and every chain: common
    random numbers) mapped through the inverse distribution function, ε = s_g α2_x / χ²_{α2_x}, with the
    class scales s_g of ``class_scale`` (None: all 1). For α2_x = ∞ the ratios are the scales themselves:
    one row, exact."""
    from scipy.stats import qmc

    scale = check_class_scale(class_scale, n_classes)
    if isinstance(alpha2_x, numbers.Real) and alpha2_x == math.inf:
        return np.ascontiguousarray(scale[None, :])
    alpha2_x = check_positive("alpha2_x", alpha2_x)
    n_pool = check_count("n_pool", n_pool)
    uniforms = qmc.Sobol(int(n_classes), scramble=True, seed=int(seed)).random(n_pool)
    half_chi2 = gammaincinv(alpha2_x / 2.0, uniforms)  # scipy.stats.gamma.ppf
    return np.ascontiguousarray(scale * (alpha2_x / (2.0 * half_chi2)))


@dataclass(frozen=True, eq=False)
class PerClassVarianceAdjustment:
    """The adjustment factor A(ρ), ρ = s_μ/s_x, of the per-class-variance model (docs/gaussian.md,
    eq. P18–P30).

    A feature drawn from the prior has class variances w_g = v ε_g (v ~ Inv-χ²(α1_x, s_x),
    ε_g ~ s_g Inv-χ²(α2_x, 1), s_g the class scales of ``class_scale``, all 1 unless given: eq. P38–P39) and
    a spread of class means w^μ ~ Inv-χ²(α1_μ, s_μ). F depends on them
    only through r = w^μ/v = ρ T, T ~ F(α1_x, α1_μ) as in the per-feature model, and ε, so

        A(ρ) = ∫ b(ρ t) dF_{α1_x, α1_μ}(t),   b(r) = E_ε a(r; ε),

    with a(r; ε) exact (a quadratic-form tail, :func:`per_class_log_discard_probability_given`),
    E_ε by a fixed quasi-Monte Carlo pool of ``n_pool`` points (:func:`class_variance_pool`; its
    error is measured in the tests and the docs), and the t-integral by the per-feature model's
    trapezoidal rule in v = log r (eq. P15–P16) on a grid of step ``h``. The object has the same
    :meth:`kernel_arguments` as :class:`PerFeatureGaussianAdjustment`, so the samplers use one
    interpolation routine for both.

    Examples
    --------
    >>> adj = PerClassVarianceAdjustment.create(4.0, [20, 21, 21], alpha2_x=4.0, n_pool=64)
    >>> bool(adj.log_discard_probability([0.0])[0] < 0)
    True
    """

    threshold: float
    class_counts: tuple
    alpha1_mu: float
    alpha1_x: float
    alpha2_x: float
    epsilon_pool: np.ndarray
    v0: float
    h: float
    log_a: np.ndarray
    class_scale: tuple | None = None

    @classmethod
    def create(cls, threshold, class_counts, alpha1_mu=3.0, alpha1_x=10.0, alpha2_x=4.0, *, n_pool=PER_CLASS_POOL,
               seed=0, h=0.5, tail=20.0, log_rho_range=(-12.0, 12.0), class_scale=None):  # fmt: skip
        """Compute the pool and the grid values log b(e^{v_i}).

        ``class_scale`` (G positive numbers, None for all 1) multiplies class g's variance ratios ε_g
        (eq. P39); with it α2_x may be ∞ (class variances exactly s_g v: a pool of one point, no pool error).

        ρ = s_μ/s_x is the ratio of the spread of the class means to the within-class variance, free
        of the data's units; ``log_rho_range`` (−12, 12) covers signal-to-noise ratios from 6e-6 to
        1.6e5, beyond which A is still finite but computed from a truncated grid.

        The grid runs from ``log_rho_range[0]`` − 2·``tail``/α1_x − log max d_i − 5 (below it the
        density of log T, which falls like e^{(α1_x/2) u}, leaves less than e^{−tail} of every A(ρ)
        with log ρ in the range) up to where the integrand of A at the range's upper end,
        b(e^v) p_U(v − log ρ), has fallen below e^{−2·tail} of its peak (b decreases in r, so the
        integrands of smaller ρ have fallen further).
        The step h = 1/2 is the per-feature model's: against h = 1/4 the two differ by about 1e-11
        in log A (h = 1 would give 2e-4).
        """
        threshold = check_positive("threshold", threshold)
        alpha1_mu = check_positive("alpha1_mu", alpha1_mu)
        alpha1_x = check_positive("alpha1_x", alpha1_x)
        h = check_positive("h", h)
        counts = _check_class_counts(class_counts)
        if counts.sum() <= counts.shape[0]:
            raise InputValueError("the per-class-variance adjustment needs more cases than classes")
        scale = None if class_scale is None else tuple(float(x) for x in check_class_scale(class_scale, counts.size))
        pool = class_variance_pool(alpha2_x, counts.shape[0], n_pool=n_pool, seed=seed, class_scale=scale)
        eigenvalues = class_count_eigenvalues(counts)
        lo, hi = float(log_rho_range[0]), float(log_rho_range[1])
        v_start = lo - 2.0 * tail / alpha1_x - math.log(eigenvalues.max()) - 5.0
        d1, d2, log_norm = alpha1_x, alpha1_mu, _log_f_density_normaliser(alpha1_x, alpha1_mu)
        as_float = counts.astype(np.float64)
        best = [-np.inf]

        def finished(v, values):  # the integrand of A(e^hi) below e^{−2·tail} of its peak so far
            integrand = values + np.array([log_f_density_of_log(x - hi, d1, d2, log_norm) for x in v])
            best[0] = max(best[0], float(integrand.max()))
            return v[-1] > hi and integrand[-1] < best[0] - 2.0 * tail

        log_a = _grid_values(v_start, h, 16, lambda v: _per_class_log_b_grid(v, pool, as_float, float(threshold)),
                             finished)  # fmt: skip
        return cls(float(threshold), tuple(int(c) for c in counts), float(alpha1_mu), float(alpha1_x),
                   float(alpha2_x), pool, float(v_start), float(h), log_a, scale)  # fmt: skip

    def __post_init__(self):
        _freeze_arrays(self, ("epsilon_pool", "log_a"))

    density_parameters = PerFeatureGaussianAdjustment.density_parameters
    kernel_arguments = PerFeatureGaussianAdjustment.kernel_arguments
    log_discard_probability = PerFeatureGaussianAdjustment.log_discard_probability

    def log_discard_probability_given_ratio(self, log_r):
        """log b(r) elementwise: the factor for one feature with known r = w^μ/v, its class variances
        averaged over the pool."""
        x = np.ascontiguousarray(np.asarray(log_r, dtype=np.float64).ravel())
        counts = np.asarray(self.class_counts, dtype=np.float64)
        return _per_class_log_b_grid(x, np.array(self.epsilon_pool), counts, self.threshold).reshape(np.shape(log_r))


# ---------------------------------------------------------------------------------------------
# α2_x learned: one factor per value of a fixed grid (docs/gaussian.md, eq. P35–P37)
# ---------------------------------------------------------------------------------------------

ALPHA2_GRID = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, math.inf)
"""The values α2_x takes when it is learned (``alpha2_x="learn"``), each with prior probability 1/9: from
very unequal class variances (1: ε_g ~ Inv-χ²(1, 1), a Cauchy-like spread) to equal ones (∞, the pooled
model). Measured on lymphoma and SRBCT (docs/gaussian_real_data.md), the best fixed value was 1–4 on one and
64–∞ on the other."""


def stacked_kernel_arguments(adjustment):
    """(v0s (M,), h, log_a (M, L), lengths (M,), d1, d2, log normaliser): the tables of the M factors of a
    :class:`ClassVarianceGridAdjustment` (or of one factor with ``kernel_arguments()``, M = 1), padded with
    −inf to the longest; row m is ``log_a[m, :lengths[m]]`` on the grid ``v0s[m] + i h``."""
    members = adjustment.adjustments if isinstance(adjustment, ClassVarianceGridAdjustment) else (adjustment,)
    arguments = [member.kernel_arguments() for member in members]
    steps = {float(argument[1]) for argument in arguments}
    densities = {tuple(float(x) for x in argument[3:]) for argument in arguments}
    if len(steps) != 1 or len(densities) != 1:  # pragma: no cover - every factor here has h = 1/2 and one density
        raise ValueError("the stacked adjustment factors must share the grid step and the density of log T")
    lengths = np.array([argument[2].shape[0] for argument in arguments], dtype=np.int64)
    log_a = np.full((len(arguments), int(lengths.max())), -np.inf)
    for row, argument in enumerate(arguments):
        log_a[row, : lengths[row]] = argument[2]
    v0s = np.array([float(argument[0]) for argument in arguments])
    return (v0s, steps.pop(), log_a, lengths, *densities.pop())


@dataclass(frozen=True, eq=False)
class ClassVarianceGridAdjustment:
    """The adjustment factors A(ρ; α2_x) of the per-class-variance model for every value of a grid of α2_x
    (docs/gaussian.md, eq. P35–P37): a :class:`PerClassVarianceAdjustment` for each finite value (the same
    scrambled-Sobol uniforms for all, so the factors of neighbouring values share their pool's error) and
    the exact :class:`PerFeatureGaussianAdjustment` for α2_x = ∞ (equal class variances).

    Examples
    --------
    >>> adj = ClassVarianceGridAdjustment.create(4.0, [20, 21, 21], alpha2_grid=(4.0, math.inf), n_pool=64)
    >>> values = adj.log_discard_probability([0.0])
    >>> values.shape, bool(np.all(values < 0))
    ((2, 1), True)
    """

    alpha2_grid: tuple
    adjustments: tuple

    @classmethod
    def create(cls, threshold, class_counts, alpha1_mu=3.0, alpha1_x=10.0, *, alpha2_grid=ALPHA2_GRID,
               n_pool=PER_CLASS_POOL, seed=0, n_jobs=None, class_scale=None):  # fmt: skip
        """Compute the factor of every grid value; ``n_jobs`` threads (joblib's convention; the quadratic-form
        tails release the GIL), which does not change the result. With ``class_scale`` (eq. P38–P39) every
        pool is scaled by it, and α2_x = ∞ is the per-class factor of the one point ε = s (exact) rather
        than the pooled one."""
        from joblib import Parallel, delayed

        grid = tuple(float(value) for value in alpha2_grid)
        if not grid or any(not value > 0 for value in grid) or list(grid) != sorted(set(grid)):
            raise InputValueError(f"alpha2_grid must be increasing positive values, got {alpha2_grid}")

        equal = class_scale is None

        def factor(value):
            if math.isinf(value) and equal:
                return PerFeatureGaussianAdjustment.create(threshold, class_counts, alpha1_mu, alpha1_x)
            return PerClassVarianceAdjustment.create(threshold, class_counts, alpha1_mu, alpha1_x, value,
                                                     n_pool=n_pool, seed=seed, class_scale=class_scale)  # fmt: skip

        adjustments = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(factor)(value) for value in grid)
        return cls(grid, tuple(adjustments))

    @property
    def threshold(self):
        """γ, the F threshold of every factor."""
        return self.adjustments[0].threshold

    def log_discard_probability(self, log_rho):
        """log A(ρ; α2_x) for every grid value (rows) and every log ρ = log s_μ − log s_x (columns)."""
        return np.stack([np.atleast_1d(member.log_discard_probability(log_rho)) for member in self.adjustments])
