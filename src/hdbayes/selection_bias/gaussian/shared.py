"""The shared spread (Li 2009): the variant ``"shared"`` of the Gaussian classifier.

Model (Li 2009, §3.1, eq. 4–11; docs/gaussian.md): x_j | y = g ~ N(μ_j^(g), 1/τ_j^x),
μ_j^(g) | ν_j ~ N(ν_j, 1/τ^μ), ν_j ~ N(0, 1/τ^ν), τ_j^x ~ Gamma(α^x/2, α^x w^x/2),
τ^μ ~ Gamma(α^μ/2, α^μ w^μ/2), τ^ν ~ Gamma(α^ν/2, α^ν w^ν/2) (Gamma(shape, rate)). τ^μ sets how far the
class means are apart. Here: its prior (:class:`SharedSpread`), its adjustment factor A(τ^μ)
(:class:`GaussianAdjustment`) and its chain (:func:`gibbs_chain`).

The adjustment factor. The features are screened with the one-way ANOVA F-statistic R_F (eq. 25) and a
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

The chain is Gibbs sampling (eq. 18–22) with τ^μ updated by random-walk Metropolis on log τ^μ when
corrected; one compiled kernel runs a chain, drawing every random number from the chain's own numpy
Generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from hdbayes._numba import jit
from hdbayes._validation import check_count, check_generator, check_memory, check_positive
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc.chains import ChainDraws
from hdbayes.selection_bias.gaussian._factor import (
    _check_class_counts,
    _cubic_lagrange,
    gaussian_f_series,
    new_interpolation_table,
)
from hdbayes.selection_bias.gaussian._variant import COMMON_CONSTRAINTS, GaussianVariant

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from hdbayes._validation import RandomStateLike
    from hdbayes.mcmc import Trace

__all__ = [
    "GaussianAdjustment",
    "SharedSpread",
    "gaussian_poisson_means",
    "gibbs_chain",
    "interpolated_log_discard_probability",
    "log_discard_probability_at",
]


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


@jit
def _gibbs_chain_kernel(
    counts, sums, squares, burn_in, slots, n_saved, alpha_x, w_x, alpha_mu, w_mu, alpha_nu, w_nu,
    n_discarded, poisson_means, log_f, table, eta_min, step, proposal_sd, n_metropolis, init_jitter, rng,
):  # fmt: skip
    """One chain of ``slots.shape[0]`` iterations drawing only from the Generator ``rng``.

    ``slots[t]`` is the index among the saved draws of iteration t, or −1 (from
    :attr:`hdbayes.mcmc.Schedule.saved_iterations`). Returns the saved draws, the
    acceptance rate of the Metropolis steps since the previous saved draw (0 without
    them), and log τ^μ, log τ^ν at each of the ``burn_in`` first iterations.
    """
    n_classes, k = sums.shape
    n = 0.0
    for g in range(n_classes):
        n += counts[g]
    n_iter = slots.shape[0]
    mu_samples = np.empty((n_saved, n_classes, k))
    tau_x_samples = np.empty((n_saved, k))
    nu_samples = np.empty((n_saved, k))
    log_tau_mu_samples = np.empty(n_saved)
    log_tau_nu_samples = np.empty(n_saved)
    acceptance = np.zeros(n_saved)
    warmup_log_tau_mu = np.empty(burn_in)
    warmup_log_tau_nu = np.empty(burn_in)
    accepted = 0
    window = 0  # iterations since burn-in ended or since the previous saved draw

    # initial state: class means, their average, pooled precisions; τ^μ, τ^ν from the spreads
    mu = np.empty((n_classes, k))  # sums / max(counts, 1) by rows
    for g in range(n_classes):
        size = max(counts[g], 1.0)
        for j in range(k):
            mu[g, j] = sums[g, j] / size
    nu = np.empty(k)
    tau_x = np.empty(k)
    spread_mu = 0.0
    spread_nu = 0.0
    for j in range(k):
        column = 0.0
        for g in range(n_classes):
            column += mu[g, j]
        nu[j] = column / n_classes
        within = 0.0
        for g in range(n_classes):
            within += squares[g, j] - 2.0 * mu[g, j] * sums[g, j] + counts[g] * mu[g, j] ** 2
            spread_mu += (mu[g, j] - nu[j]) ** 2
        tau_x[j] = (n - n_classes) / max(within, 1e-12)
        spread_nu += nu[j] ** 2
    log_tau_mu = np.log(n_classes * k / max(spread_mu, 1e-12)) + init_jitter * rng.standard_normal()
    tau_nu = k / max(spread_nu, 1e-12)

    for iteration in range(n_iter):
        tau_mu = np.exp(log_tau_mu)
        # μ_j^(g) (eq. 18, with the class mean Σ x / n_g)
        for j in range(k):
            for g in range(n_classes):
                precision = tau_mu + counts[g] * tau_x[j]
                mean = (nu[j] * tau_mu + sums[g, j] * tau_x[j]) / precision
                mu[g, j] = mean + rng.standard_normal() / np.sqrt(precision)
        # τ_j^x (eq. 19), from the sufficient statistics
        for j in range(k):
            residual = 0.0
            for g in range(n_classes):
                residual += squares[g, j] - 2.0 * mu[g, j] * sums[g, j] + counts[g] * mu[g, j] ** 2
            residual = max(residual, 0.0)
            tau_x[j] = rng.gamma((alpha_x + n) / 2.0, 2.0 / (alpha_x * w_x + residual))
        # ν_j (eq. 20)
        precision = tau_nu + n_classes * tau_mu
        for j in range(k):
            column = 0.0
            for g in range(n_classes):
                column += mu[g, j]
            mean = column * tau_mu / precision
            nu[j] = mean + rng.standard_normal() / np.sqrt(precision)
        # τ^μ (eq. 21): conjugate draw, or Metropolis on log τ^μ with the adjustment factor
        spread_mu = 0.0
        for j in range(k):
            for g in range(n_classes):
                spread_mu += (mu[g, j] - nu[j]) ** 2
        shape = (alpha_mu + n_classes * k) / 2.0
        rate_sum = (alpha_mu * w_mu + spread_mu) / 2.0
        if n_discarded > 0:
            # log π(η) for η = log τ^μ: the Gamma conditional (eq. 21) on the log scale, with its Jacobian, times
            # A(e^η)^{p−k} (eq. 23–24): shape·η − e^η·rate_sum + (p−k) log A(e^η) (written out here rather than
            # as a kernel of its own: one kernel less to compile on a first run)
            current = shape * log_tau_mu - np.exp(log_tau_mu) * rate_sum
            current += n_discarded * interpolated_log_discard_probability(
                log_tau_mu, table, eta_min, step, poisson_means, log_f
            )
            for _ in range(n_metropolis):
                proposal = log_tau_mu + proposal_sd * rng.standard_normal()
                candidate = shape * proposal - np.exp(proposal) * rate_sum
                candidate += n_discarded * interpolated_log_discard_probability(
                    proposal, table, eta_min, step, poisson_means, log_f
                )
                if np.log(rng.random()) < candidate - current:
                    log_tau_mu = proposal
                    current = candidate
                    accepted += 1
        else:
            log_tau_mu = np.log(rng.gamma(shape, 1.0 / rate_sum))
        # τ^ν (eq. 22)
        spread_nu = 0.0
        for j in range(k):
            spread_nu += nu[j] ** 2
        tau_nu = rng.gamma((alpha_nu + k) / 2.0, 2.0 / (alpha_nu * w_nu + spread_nu))

        if iteration < burn_in:
            warmup_log_tau_mu[iteration] = log_tau_mu
            warmup_log_tau_nu[iteration] = np.log(tau_nu)
            accepted = 0
            continue
        window += 1
        slot = slots[iteration]
        if slot >= 0:
            for j in range(k):  # element by element: numba compiles ``draws[slot] = array`` with string formatting
                for g in range(n_classes):
                    mu_samples[slot, g, j] = mu[g, j]
                tau_x_samples[slot, j] = tau_x[j]
                nu_samples[slot, j] = nu[j]
            log_tau_mu_samples[slot] = log_tau_mu
            log_tau_nu_samples[slot] = np.log(tau_nu)
            if n_discarded > 0:
                acceptance[slot] = accepted / (n_metropolis * window)
            accepted = 0
            window = 0
    return (mu_samples, tau_x_samples, nu_samples, log_tau_mu_samples, log_tau_nu_samples, acceptance,
            warmup_log_tau_mu, warmup_log_tau_nu)  # fmt: skip


def gibbs_chain(rng, schedule, advance=None, *, counts, sums, squares, prior, adjustment=None, n_discarded=0,
                proposal_sd=0.5, n_metropolis=5, init_jitter=0.5):  # fmt: skip
    """Run one chain of the Gibbs sampler (Li 2009, eq. 17–24).

    Per iteration: μ (eq. 18), τ^x (eq. 19), ν (eq. 20), τ^μ (eq. 21 — a Gamma draw,
    or, when ``adjustment`` is given and p − k > 0, ``n_metropolis`` random-walk
    Metropolis steps on log τ^μ with proposal sd ``proposal_sd``, target including
    the Jacobian and (p − k) log A(τ^μ)), τ^ν (eq. 22). Compiled with numba. The
    signature is that of a chain of :func:`hdbayes.mcmc.run_chains` once the keyword
    arguments are bound (``functools.partial``).

    Parameters
    ----------
    rng : numpy.random.Generator
        The chain's only source of random numbers.
    schedule : hdbayes.mcmc.Schedule
        Iterations, burn-in and thinning.
    advance : callable, optional
        Progress callback, called once with ``schedule.n_iter`` at the end.
    counts : ndarray (G,); sums, squares : ndarray (G, k)
        From :func:`class_statistics` on the training data.
    prior : dict
        ``alpha_x, w_x, alpha_mu, w_mu, alpha_nu, w_nu``.
    adjustment : GaussianAdjustment, optional
        The fixed Monte Carlo pool of A(τ^μ) (common random numbers for the chain).
    n_discarded : int
        p − k.

    Returns
    -------
    hdbayes.mcmc.ChainDraws
        ``posterior``: ``mu`` (S, G, k), ``tau_x`` and ``nu`` (S, k), ``log_tau_mu`` and
        ``log_tau_nu`` (S,) at the saved iterations; ``warmup``: ``log_tau_mu`` and
        ``log_tau_nu`` at every burn-in iteration (empty without burn-in);
        ``sample_stats``: ``acceptance_rate`` (S,), the fraction of accepted Metropolis
        proposals in the iterations since the previous saved draw (0 when there are
        none: uncorrected, or p − k = 0).
    """
    if adjustment is None or n_discarded == 0:
        poisson_means, log_f, n_discarded = np.ones(1), np.zeros(1), 0
    else:
        # writeable copies: numba compiles a separate signature for read-only arrays
        poisson_means, log_f = np.array(adjustment.poisson_means), np.array(adjustment.log_f)
    table, eta_min, step = new_interpolation_table(step=1.0 / 128.0)
    slots = schedule.slots
    mu, tau_x, nu, log_tau_mu, log_tau_nu, acceptance, warm_mu, warm_nu = _gibbs_chain_kernel(
        np.asarray(counts, dtype=np.float64), np.ascontiguousarray(sums, dtype=np.float64),
        np.ascontiguousarray(squares, dtype=np.float64), int(schedule.burn_in), slots, int(schedule.n_saved),
        float(prior["alpha_x"]), float(prior["w_x"]), float(prior["alpha_mu"]), float(prior["w_mu"]),
        float(prior["alpha_nu"]), float(prior["w_nu"]), float(n_discarded), poisson_means, log_f, table,
        float(eta_min), float(step), float(proposal_sd), int(n_metropolis), float(init_jitter), rng,
    )  # fmt: skip
    if advance is not None:
        advance(schedule.n_iter)
    return ChainDraws(
        posterior={"mu": mu, "tau_x": tau_x, "nu": nu, "log_tau_mu": log_tau_mu, "log_tau_nu": log_tau_nu},
        warmup={"log_tau_mu": warm_mu, "log_tau_nu": warm_nu} if schedule.burn_in > 0 else {},
        sample_stats={"acceptance_rate": acceptance},
    )


class SharedSpread(GaussianVariant):
    """The shared spread of Li (2009): one τ^μ for all features, each feature's τ_j^x with a fixed prior.

    The variant ``"shared"`` of :class:`~hdbayes.BiasCorrectedGaussianClassifier` (its default); the correction
    is A(τ^μ)^{p−k} with A estimated on a fixed Monte Carlo pool (:class:`GaussianAdjustment`).

    Parameters
    ----------
    alpha_x, w_x : float, default=4.0, 1.0
        Gamma(α^x/2, rate α^x w^x/2) prior of each feature's precision τ_j^x.
    alpha_mu, w_mu : float, default=1.5, 0.01
        Prior of τ^μ.
    alpha_nu, w_nu : float, default=1.5, 0.01
        Prior of τ^ν.
    proposal_sd : float, default=0.5
        Standard deviation of the random-walk proposal on log τ^μ (corrected model).
    n_metropolis : int, default=5
        Metropolis updates of log τ^μ per iteration (corrected model).

    Examples
    --------
    >>> from sklearn.base import clone
    >>> variant = SharedSpread(alpha_x=2.0, w_x=0.3)
    >>> variant
    SharedSpread(alpha_x=2.0, w_x=0.3)
    >>> clone(variant) == variant, variant == SharedSpread()
    (True, False)
    """

    name: ClassVar[str] = "shared"
    _parameter_constraints: ClassVar[dict] = dict(COMMON_CONSTRAINTS)
    dims: ClassVar[dict] = {"mu": ["class", "feature"], "tau_x": ["feature"], "nu": ["feature"]}
    monitored: ClassVar[tuple] = ("log_tau_mu", "log_tau_nu")
    _prior_names: ClassVar[tuple] = ("alpha_x", "w_x", "alpha_mu", "w_mu", "alpha_nu", "w_nu")

    def __init__(self, *, alpha_x: float = 4.0, w_x: float = 1.0, alpha_mu: float = 1.5, w_mu: float = 0.01,
                 alpha_nu: float = 1.5, w_nu: float = 0.01, proposal_sd: float = 0.5,
                 n_metropolis: int = 5) -> None:  # fmt: skip
        self.alpha_x = alpha_x
        self.w_x = w_x
        self.alpha_mu = alpha_mu
        self.w_mu = w_mu
        self.alpha_nu = alpha_nu
        self.w_nu = w_nu
        self.proposal_sd = proposal_sd
        self.n_metropolis = n_metropolis

    def _draw_bytes(self, n_classes, k):
        """Bytes of a saved draw: the class means (G × k), τ^x and ν (k each) and a few scalars."""
        return 8 * (n_classes * k + 2 * k + 8)

    def _factor(self, threshold, class_counts, *, n_kept, n_mc, n_jobs, rng, class_scale):
        """A(τ^μ) on a Monte Carlo pool of ``n_mc`` draws (None: 1000, the paper's) from the fit's generator."""
        if n_mc is not None:  # the pool: n_mc normal vectors of G values, a precision and a weight
            check_memory(8.0 * n_mc * (len(class_counts) + 3), f"n_mc = {n_mc}",
                         purpose="the Monte Carlo pool of the correction")  # fmt: skip
        return GaussianAdjustment.create(threshold, class_counts, self.alpha_x, self.w_x,
                                         n_mc=1000 if n_mc is None else n_mc, random_state=rng)  # fmt: skip

    def _bind_chain(self, class_counts, sums, squares, adjustment, n_discarded, class_scale):
        return self._chain(gibbs_chain, class_counts, sums, squares, adjustment, n_discarded)

    def precisions(self, trace: Trace) -> tuple[np.ndarray, np.ndarray]:
        """τ_j^x (S, k) and τ^μ (S,) of every draw.

        Parameters
        ----------
        trace : hdbayes.mcmc.Trace
            The fit's draws.

        Returns
        -------
        tau_x : ndarray of shape (S, k)
            The within-class precisions of every draw.
        tau_mu : ndarray of shape (S,)
            The precision of the class means of every draw.
        """
        return trace.flat("tau_x"), np.exp(trace.flat("log_tau_mu"))
