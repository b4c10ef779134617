"""Bayesian Gaussian classification with F-statistic selection and bias correction.

Model (Li 2009, §3.1, eq. 4–11; docs/gaussian.md): classes y ∈ {1..G},
continuous features independent given the class,

    x_j | y = g ~ N(μ_j^(g), 1/τ_j^x),      μ_j^(g) | ν_j ~ N(ν_j, 1/τ^μ),   ν_j ~ N(0, 1/τ^ν),
    τ_j^x ~ Gamma(α^x/2, α^x w^x/2),        τ^μ ~ Gamma(α^μ/2, α^μ w^μ/2),   τ^ν ~ Gamma(α^ν/2, α^ν w^ν/2),
    P(y = g) = ψ_g,  ψ ~ Dirichlet(c, …, c)            (Gamma(shape, rate)).

τ^μ sets how far the class means are apart: small τ^μ, many relevant features. The
k features with the largest F-statistics are kept; the correction multiplies the
posterior by A(τ^μ)^{p−k}, the probability that the p − k others fall below the
threshold (eq. 23–34; :mod:`hdbayes.selection_bias.gaussian_adjustment`). Only the
conditional of τ^μ changes, so the sampler is Gibbs sampling (eq. 18–22) with τ^μ
updated by random-walk Metropolis on log τ^μ when corrected. One compiled kernel runs
a chain (:func:`gibbs_chain`), drawing every random number from the chain's own numpy
Generator; the chains run through :func:`hdbayes.mcmc.run_chains`.

The data are used as given. The paper notes that the prior mean of ν can be 0
"without loss of generality"; centring the features by their *training* means would
not be harmless: it uses the data twice (the centred class means lose a degree of
freedom that the model does not know about) and biases τ^μ upwards by up to a factor
G/(G − 1) — the simulation-based calibration test in ``tests/test_gaussian.py``
detects it. With raw data far from 0, τ^ν simply becomes small.
"""

from __future__ import annotations

import copy
import functools
import math
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes._numba import jit
from hdbayes._validation import (
    check_class_labels,
    check_finite_output,
    check_generator,
    check_memory,
    check_n_jobs,
    feature_label,
    is_dask_array,
    overflow_error,
    plain_value,
    unchanged_on_error,
    validate_input,
)
from hdbayes.base import MCMC_PARAMETER_CONSTRAINTS, MCMCMixin
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc.chains import ChainDraws, chain_seeds
from hdbayes.mcmc.slice import slice_sample
from hdbayes.selection import f_statistic
from hdbayes.selection_bias._base import (
    POSITIVE,
    SELECTION_PARAMETER_CONSTRAINTS,
    SelectionBiasClassifier,
    class_pseudo_counts,
)
from hdbayes.selection_bias.gaussian_adjustment import (
    ALPHA2_GRID,
    PER_CLASS_POOL,
    ClassVarianceGridAdjustment,
    GaussianAdjustment,
    PerClassVarianceAdjustment,
    PerFeatureGaussianAdjustment,
    check_class_scale,
    interpolated_log_discard_probability,
    interpolated_per_feature_log_discard_probability,
    new_interpolation_table,
    stacked_kernel_arguments,
)
from hdbayes.statistics.chunks import check_prediction_chunks, dask_class_codes, map_row_chunks
from hdbayes.statistics.gaussian_moments import GaussianClassMoments, _class_moments

if TYPE_CHECKING:
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike, RandomStateLike

__all__ = [
    "BiasCorrectedGaussianClassifier",
    "class_statistics",
    "gibbs_chain",
    "log_class_numerators",
    "per_class_chain",
    "per_feature_chain",
    "plug_in_class_scale",
    "rao_blackwell_log_class_numerators",
]

_PREDICT_CHUNK = 256
_PRIOR_NAMES = ("alpha_x", "w_x", "alpha_mu", "w_mu", "alpha_nu", "w_nu")
_PER_FEATURE_PRIOR_NAMES = ("alpha1_x", "alpha1_mu", *_PRIOR_NAMES)


def class_statistics(X, codes, n_classes):
    """Sufficient statistics per class: counts n_g, sums Σ x and sums of squares Σ x².

    Returns
    -------
    counts : ndarray of shape (G,)
    sums, squares : ndarray of shape (G, k)
    """
    counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    indicator = np.zeros((n_classes, X.shape[0]))
    indicator[codes, np.arange(X.shape[0])] = 1.0
    # one memory layout, so that the product's rounding (BLAS picks its kernel by layout) does not depend on how
    # X was made: a column selection of a C array is not C-contiguous, the same columns gathered from dask are
    X = np.ascontiguousarray(X, dtype=np.float64)
    return counts, indicator @ X, indicator @ (X * X)


def plug_in_class_scale(scatter, class_counts):
    """The plug-in class scales ŝ_g of the per-class-variance model (docs/gaussian.md, eq. P41), from every feature.

    Under w_gj = s_g v_j ε_gj (eq. P38) the log of class g's sample variance S²_gj = scatter_gj/(n_g − 1) is
    log s_g + log v_j + log ε_gj + log(χ²_ν/ν), ν = n_g − 1, whose mean over features is log s_g plus terms
    shared by the classes plus E log(χ²_ν/ν) = ψ(ν/2) − log(ν/2). So

        log ŝ_g = mean_j log S²_gj − ψ(ν_g/2) + log(ν_g/2),  then centred (Σ_g log ŝ_g = 0),

    over the features whose within-class scatter is finite and positive in every class (a common factor
    of the s_g is absorbed by the v_j and s_x). Consistent as p → ∞ whatever the v_j and α2_x.

    Parameters
    ----------
    scatter : ndarray of shape (G, p)
        Σ_{i in class g} (x_ij − x̄_gj)² for every feature.
    class_counts : array-like of shape (G,)
        n_g, each at least 2.

    Returns
    -------
    ndarray of shape (G,)
        ŝ, geometric mean 1.
    """
    from scipy.special import digamma

    scatter = np.asarray(scatter, dtype=np.float64)
    dof = np.asarray(class_counts, dtype=np.float64) - 1.0
    if scatter.ndim != 2 or scatter.shape[0] != dof.shape[0] or np.any(dof < 1):
        raise ValueError("plug_in_class_scale needs a (G, p) scatter and G class sizes of at least 2")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        usable = np.all(np.isfinite(scatter) & (scatter > 0), axis=0)
        if not usable.any():
            raise InputValueError(
                'class_scale="plug-in" needs at least one feature that varies within every class; none does'
            )
        log_variance = np.log(scatter[:, usable] / dof[:, None]).mean(axis=1)
    log_scale = log_variance - digamma(dof / 2.0) + np.log(dof / 2.0)
    return np.exp(log_scale - log_scale.mean())


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


@jit
def _log_adjustment(log_rho, index, tables, eta_min, step, v0s, h, log_a_stack, lengths, d1, d2, log_norm):
    """log A(ρ) of the ``index``-th class-variance model of a stacked grid (one table per value of α2_x)."""
    return interpolated_per_feature_log_discard_probability(
        log_rho, tables[index], eta_min, step, v0s[index], h, log_a_stack[index, : lengths[index]], d1, d2, log_norm
    )


@jit
def _log_s_target(eta, other, k_alpha_half, a_prior, b_prior, alpha_half_sum_inverse, sign, n_discarded, index,
                  tables, eta_min, step, v0s, h, log_a_stack, lengths, d1, d2, log_norm):  # fmt: skip
    """log π(η) for η = log s_μ (sign = +1, ``other`` = log s_x) or η = log s_x (sign = −1, other = log s_μ)
    (docs/gaussian.md, eq. P9–P10): (kα1/2 − a) η − b e^{−η} − (α1/2) e^η Σ_j 1/w_j + (p−k) log A(ρ),
    log ρ = log s_μ − log s_x, A that of the current α2_x (grid ``index``)."""
    value = (k_alpha_half - a_prior) * eta - b_prior * np.exp(-eta) - alpha_half_sum_inverse * np.exp(eta)
    if n_discarded > 0:
        value += n_discarded * _log_adjustment(sign * (eta - other), index, tables, eta_min, step, v0s, h,
                                               log_a_stack, lengths, d1, d2, log_norm)  # fmt: skip
    return value


@jit
def _log_class_variance_marginal(alpha2, residuals, counts, level, class_scale):
    """Σ_{g,j} log ∫ N^{n_g}(residual R_gj | w) Inv-χ²(w; α2_x, s_g v_j) dw, the class variances integrated
    out (docs/gaussian.md, eq. P35, P40), up to terms free of α2_x and v: with a = α2_x/2 and u = s_g v_j,
    lnΓ(a + n_g/2) − lnΓ(a) + a log(a u) − (a + n_g/2) log(a u + R_gj/2); for α2_x = ∞ (class variances
    w_gj = s_g v_j) its limit −(n_g/2) log u − R_gj/(2 u). ``class_scale`` holds the s_g (all 1 without
    class scales)."""
    n_classes, k = residuals.shape
    total = 0.0
    if np.isinf(alpha2):
        for j in range(k):
            for g in range(n_classes):
                variance = class_scale[g] * level[j]
                total -= 0.5 * counts[g] * np.log(variance) + 0.5 * residuals[g, j] / variance
        return total
    a = 0.5 * alpha2
    for g in range(n_classes):
        norm = math.lgamma(a + 0.5 * counts[g]) - math.lgamma(a)
        for j in range(k):
            scale = a * class_scale[g] * level[j]
            total += norm + a * np.log(scale) - (a + 0.5 * counts[g]) * np.log(scale + 0.5 * residuals[g, j])
    return total


@jit
def _log_alpha2_target(index, alpha2_grid, residuals, counts, level, class_scale, log_rho, n_discarded, tables,
                       eta_min, step, v0s, h, log_a_stack, lengths, d1, d2, log_norm):  # fmt: skip
    """log π(α2_x = grid[index] | μ, v, s_μ, s_x, data) with the class variances integrated out (eq. P36):
    :func:`_log_class_variance_marginal` + (p − k) log A(ρ; α2_x), a uniform prior on the grid."""
    value = _log_class_variance_marginal(alpha2_grid[index], residuals, counts, level, class_scale)
    if n_discarded > 0:
        value += n_discarded * _log_adjustment(log_rho, index, tables, eta_min, step, v0s, h, log_a_stack, lengths,
                                               d1, d2, log_norm)  # fmt: skip
    return value


@jit
def _log_v_density(eta, args):
    """log π(η) for η = log v_j of the per-class model (docs/gaussian.md, eq. P32): λ η − (χ e^{−η} + ψ e^η)/2,
    the generalised inverse Gaussian of v_j with the Jacobian of η = log v included (λ, not λ − 1)."""
    lam, chi, psi = args
    return lam * eta - 0.5 * (chi * np.exp(-eta) + psi * np.exp(eta))


@jit
def _draw_log_v(eta, lam, chi, psi, rng):
    """One slice-sampling update of η = log v_j (eq. P32), with an interval width set by the conditional
    alone: 2.4/√c, c = (χ/u + ψ u)/2 the curvature at the mode u = e^η̂ (λ + √(λ² + ψχ))/ψ."""
    root = np.sqrt(lam * lam + psi * chi)
    mode = (lam + root) / psi if lam >= 0.0 else chi / (root - lam)
    width = 2.4 / np.sqrt(0.5 * (chi / mode + psi * mode))
    args = (lam, chi, psi)
    new, _ = slice_sample(eta, _log_v_density(eta, args), _log_v_density, args, width, 20, -np.inf, np.inf, rng)
    return new


@jit
def _per_feature_chain_kernel(
    counts, sums, squares, burn_in, slots, n_saved, alpha1_x, alpha1_mu, alpha_x, w_x, alpha_mu, w_mu, alpha_nu,
    w_nu, per_class, alpha2_grid, class_scale, n_discarded, tables, eta_min, step, v0s, h, log_a_stack, lengths, d1,
    d2, log_norm,
    proposal_sd_mu, proposal_sd_x, n_metropolis, init_jitter, rng,
):  # fmt: skip
    """One chain of the per-feature-spread model (docs/gaussian.md, eq. P5–P10), drawing only from ``rng``;
    with ``per_class``, of the per-class-variance model (eq. P18–P19, P31–P36).

    ``alpha2_grid`` holds the values α2_x may take: ``[inf]`` for the pooled model (every class has the
    variance w^x_j), one finite value for fixed per-class variances, several for α2_x learned (eq. P35–P36),
    with one adjustment table per value (``log_a_stack[m, :lengths[m]]`` on the grid ``v0s[m] + i h``).
    ``class_scale`` holds the class scales s_g of the per-class prior w_gj ~ Inv-χ²(α2_x, s_g v_j) (eq. P38;
    all 1 without them, and for the pooled model). Per iteration: μ (P5 or P31); when the grid has several
    values, ``n_metropolis`` Metropolis steps of α2_x to a neighbouring grid value with the class variances
    integrated out (P36); the variances (w^x_j by P6 when α2_x = ∞; else w_gj by P31 and v_j by P32, one
    slice-sampling update of log v_j; with class scales by P40), ν (P7), w^μ_j (P8), τ^ν, then
    ``n_metropolis`` random-walk Metropolis steps on log s_μ and on log s_x (P9–P10 with Σ_j 1/v_j for
    per-class, and (p − k) log A(s_μ/s_x; α2_x) when corrected). ``level[j]`` is the variance of feature j
    around which s_x is updated: w^x_j (pooled) or v_j (per class). The saved class variances are returned
    only with ``per_class`` (a (0, G, k) array otherwise).
    """
    n_classes, k = sums.shape
    n = 0.0
    for g in range(n_classes):
        n += counts[g]
    n_iter = slots.shape[0]
    n_grid = alpha2_grid.shape[0]
    mu_samples = np.empty((n_saved, n_classes, k))
    w_x_samples = np.empty((n_saved if per_class else 0, n_classes, k))
    level_samples = np.empty((n_saved, k))
    w_mu_samples = np.empty((n_saved, k))
    nu_samples = np.empty((n_saved, k))
    log_s_mu_samples = np.empty(n_saved)
    log_s_x_samples = np.empty(n_saved)
    log_tau_nu_samples = np.empty(n_saved)
    alpha2_samples = np.empty(n_saved)
    acceptance = np.zeros(n_saved)
    alpha2_acceptance = np.zeros(n_saved)
    warm_s_mu = np.empty(burn_in)
    warm_s_x = np.empty(burn_in)
    warm_tau_nu = np.empty(burn_in)
    warm_alpha2 = np.empty(burn_in)
    accepted = 0
    accepted_alpha2 = 0
    window = 0
    a_mu, b_mu = alpha_mu / 2.0, alpha_mu * w_mu / 2.0
    a_x, b_x = alpha_x / 2.0, alpha_x * w_x / 2.0

    # initial state: class means, their average, pooled (and per-class) within-class variances, spreads
    mu = np.empty((n_classes, k))  # sums / max(counts, 1) by rows
    for g in range(n_classes):
        size = max(counts[g], 1.0)
        for j in range(k):
            mu[g, j] = sums[g, j] / size
    nu = np.empty(k)
    w_x = np.empty((n_classes, k))
    residuals = np.empty((n_classes, k))
    level = np.empty(k)
    w_mu = np.empty(k)
    spread_nu = 0.0
    log_sum_x = 0.0
    log_sum_mu = 0.0
    for j in range(k):
        column = 0.0
        for g in range(n_classes):
            column += mu[g, j]
        nu[j] = column / n_classes
        within = 0.0
        between = 0.0
        for g in range(n_classes):
            residual = max(squares[g, j] - 2.0 * mu[g, j] * sums[g, j] + counts[g] * mu[g, j] ** 2, 0.0)
            residuals[g, j] = residual
            within += residual
            between += (mu[g, j] - nu[j]) ** 2
            w_x[g, j] = residual / max(counts[g] - 1.0, 1.0)
        level[j] = max(within, 1e-12) / (n - n_classes)
        for g in range(n_classes):
            w_x[g, j] = max(w_x[g, j], 1e-6 * level[j]) if per_class else level[j]
        w_mu[j] = max(between / n_classes, 1e-6 * level[j])
        log_sum_x += np.log(level[j])
        log_sum_mu += np.log(w_mu[j])
        spread_nu += nu[j] ** 2
    log_s_x = log_sum_x / k + init_jitter * rng.standard_normal()
    log_s_mu = log_sum_mu / k + init_jitter * rng.standard_normal()
    tau_nu = k / max(spread_nu, 1e-12)
    # α2_x starts at the grid value of largest conditional density at this state (the only value when fixed)
    index = 0
    if n_grid > 1:
        best = -np.inf
        for m in range(n_grid):
            value = _log_alpha2_target(m, alpha2_grid, residuals, counts, level, class_scale, log_s_mu - log_s_x,
                                       n_discarded, tables, eta_min, step, v0s, h, log_a_stack, lengths, d1, d2,
                                       log_norm)  # fmt: skip
            if value > best:
                best, index = value, m

    for iteration in range(n_iter):
        # μ_gj (P5; P31 with the class's variance), then the residual sums of squares R_gj
        for j in range(k):
            for g in range(n_classes):
                precision = 1.0 / w_mu[j] + counts[g] / w_x[g, j]
                mean = (nu[j] / w_mu[j] + sums[g, j] / w_x[g, j]) / precision
                mu[g, j] = mean + rng.standard_normal() / np.sqrt(precision)
                residual = squares[g, j] - 2.0 * mu[g, j] * sums[g, j] + counts[g] * mu[g, j] ** 2
                residuals[g, j] = max(residual, 0.0)
        # α2_x (P36): Metropolis to a neighbouring grid value, the class variances integrated out
        if n_grid > 1:
            log_rho = log_s_mu - log_s_x
            current = _log_alpha2_target(index, alpha2_grid, residuals, counts, level, class_scale, log_rho,
                                         n_discarded, tables, eta_min, step, v0s, h, log_a_stack, lengths, d1, d2,
                                         log_norm)  # fmt: skip
            for _ in range(n_metropolis):
                proposal = index + 1 if rng.random() < 0.5 else index - 1
                if proposal < 0 or proposal >= n_grid:
                    continue
                candidate = _log_alpha2_target(proposal, alpha2_grid, residuals, counts, level, class_scale, log_rho,
                                               n_discarded, tables, eta_min, step, v0s, h, log_a_stack, lengths, d1,
                                               d2, log_norm)  # fmt: skip
                if np.log(rng.random()) < candidate - current:
                    index = proposal
                    current = candidate
                    accepted_alpha2 += 1
        alpha2_x = alpha2_grid[index]
        # the variances: w_gj (P31) and v_j (P32), or w^x_j (P6) when α2_x = ∞; class g's prior scale s_g v_j (P40)
        s_x = np.exp(log_s_x)
        sum_inverse_x = 0.0
        for j in range(k):
            if np.isfinite(alpha2_x):
                sum_inverse_w = 0.0
                for g in range(n_classes):
                    rate = alpha2_x * class_scale[g] * level[j] + residuals[g, j]
                    w_x[g, j] = 1.0 / rng.gamma((alpha2_x + counts[g]) / 2.0, 2.0 / rate)
                    sum_inverse_w += class_scale[g] / w_x[g, j]
                log_v = _draw_log_v(np.log(level[j]), (n_classes * alpha2_x - alpha1_x) / 2.0, alpha1_x * s_x,
                                    alpha2_x * sum_inverse_w, rng)  # fmt: skip
                level[j] = np.exp(log_v)
            else:
                residual = 0.0
                for g in range(n_classes):
                    residual += residuals[g, j] / class_scale[g]
                level[j] = 1.0 / rng.gamma((alpha1_x + n) / 2.0, 2.0 / (alpha1_x * s_x + residual))
                for g in range(n_classes):
                    w_x[g, j] = class_scale[g] * level[j]
            sum_inverse_x += 1.0 / level[j]
        # ν_j (P7)
        for j in range(k):
            precision = tau_nu + n_classes / w_mu[j]
            column = 0.0
            for g in range(n_classes):
                column += mu[g, j]
            mean = column / w_mu[j] / precision
            nu[j] = mean + rng.standard_normal() / np.sqrt(precision)
        # w^μ_j (P8)
        s_mu = np.exp(log_s_mu)
        sum_inverse_mu = 0.0
        for j in range(k):
            spread = 0.0
            for g in range(n_classes):
                spread += (mu[g, j] - nu[j]) ** 2
            w_mu[j] = 1.0 / rng.gamma((alpha1_mu + n_classes) / 2.0, 2.0 / (alpha1_mu * s_mu + spread))
            sum_inverse_mu += 1.0 / w_mu[j]
        # τ^ν
        spread_nu = 0.0
        for j in range(k):
            spread_nu += nu[j] ** 2
        tau_nu = rng.gamma((alpha_nu + k) / 2.0, 2.0 / (alpha_nu * w_nu + spread_nu))
        # log s_μ (P9), then log s_x (P10): random-walk Metropolis
        current = _log_s_target(log_s_mu, log_s_x, k * alpha1_mu / 2.0, a_mu, b_mu, alpha1_mu / 2.0 * sum_inverse_mu,
                                1.0, n_discarded, index, tables, eta_min, step, v0s, h, log_a_stack, lengths, d1, d2,
                                log_norm)  # fmt: skip
        for _ in range(n_metropolis):
            proposal = log_s_mu + proposal_sd_mu * rng.standard_normal()
            candidate = _log_s_target(proposal, log_s_x, k * alpha1_mu / 2.0, a_mu, b_mu,
                                      alpha1_mu / 2.0 * sum_inverse_mu, 1.0, n_discarded, index, tables, eta_min, step,
                                      v0s, h, log_a_stack, lengths, d1, d2, log_norm)  # fmt: skip
            if np.log(rng.random()) < candidate - current:
                log_s_mu = proposal
                current = candidate
                accepted += 1
        current = _log_s_target(log_s_x, log_s_mu, k * alpha1_x / 2.0, a_x, b_x, alpha1_x / 2.0 * sum_inverse_x,
                                -1.0, n_discarded, index, tables, eta_min, step, v0s, h, log_a_stack, lengths, d1, d2,
                                log_norm)  # fmt: skip
        for _ in range(n_metropolis):
            proposal = log_s_x + proposal_sd_x * rng.standard_normal()
            candidate = _log_s_target(proposal, log_s_mu, k * alpha1_x / 2.0, a_x, b_x,
                                      alpha1_x / 2.0 * sum_inverse_x, -1.0, n_discarded, index, tables, eta_min, step,
                                      v0s, h, log_a_stack, lengths, d1, d2, log_norm)  # fmt: skip
            if np.log(rng.random()) < candidate - current:
                log_s_x = proposal
                current = candidate
                accepted += 1

        if iteration < burn_in:
            warm_s_mu[iteration] = log_s_mu
            warm_s_x[iteration] = log_s_x
            warm_tau_nu[iteration] = np.log(tau_nu)
            warm_alpha2[iteration] = alpha2_x
            accepted = 0
            accepted_alpha2 = 0
            continue
        window += 1
        slot = slots[iteration]
        if slot >= 0:
            for j in range(k):  # element by element: numba compiles ``draws[slot] = array`` with string formatting
                for g in range(n_classes):
                    mu_samples[slot, g, j] = mu[g, j]
                    if per_class:
                        w_x_samples[slot, g, j] = w_x[g, j]
                level_samples[slot, j] = level[j]
                w_mu_samples[slot, j] = w_mu[j]
                nu_samples[slot, j] = nu[j]
            log_s_mu_samples[slot] = log_s_mu
            log_s_x_samples[slot] = log_s_x
            log_tau_nu_samples[slot] = np.log(tau_nu)
            alpha2_samples[slot] = alpha2_x
            acceptance[slot] = accepted / (2.0 * n_metropolis * window)
            alpha2_acceptance[slot] = accepted_alpha2 / (n_metropolis * window)
            accepted = 0
            accepted_alpha2 = 0
            window = 0
    return (mu_samples, w_x_samples, level_samples, w_mu_samples, nu_samples, log_s_mu_samples, log_s_x_samples,
            log_tau_nu_samples, alpha2_samples, acceptance, alpha2_acceptance, warm_s_mu, warm_s_x, warm_tau_nu,
            warm_alpha2)  # fmt: skip


def _alpha2_grid(prior, per_class):
    """The values α2_x may take: ``[inf]`` (pooled variances), ``[alpha2_x]`` (fixed), or :data:`ALPHA2_GRID`
    (``alpha2_x="learn"``)."""
    if not per_class:
        return np.array([np.inf])
    if isinstance(prior["alpha2_x"], str):
        return np.asarray(ALPHA2_GRID, dtype=np.float64)
    return np.array([float(prior["alpha2_x"])])


def _run_per_feature_kernel(rng, schedule, advance, counts, sums, squares, prior, adjustment, n_discarded,
                            proposal_sd, n_metropolis, init_jitter, per_class, class_scale=None):  # fmt: skip
    """Bind the arguments of :func:`_per_feature_chain_kernel` (both variances, α2_x fixed or learned, class
    scales or none) and run it."""
    n_classes, k = np.shape(sums)
    grid = _alpha2_grid(prior, per_class)
    scale = check_class_scale(class_scale, n_classes)
    if adjustment is None or n_discarded == 0:
        n_discarded = 0
        v0s, h, log_a, lengths = np.zeros(grid.size), 1.0, np.zeros((grid.size, 1)), np.ones(grid.size, np.int64)
        d1, d2, log_norm = 1.0, 1.0, 0.0
    else:
        v0s, h, log_a, lengths, d1, d2, log_norm = stacked_kernel_arguments(adjustment)
        if v0s.size != grid.size:
            raise ValueError(f"the adjustment has {v0s.size} tables for {grid.size} values of alpha2_x")
        members = getattr(adjustment, "adjustments", (adjustment,))
        factor_scale = [getattr(member, "class_scale", None) for member in members]
        if any(not np.array_equal(check_class_scale(value, n_classes), scale) for value in factor_scale):
            raise ValueError("the adjustment factor was computed for other class scales than the chain's")
    table, eta_min, step = new_interpolation_table(step=1.0 / 128.0)
    tables = np.repeat(table[None, :], grid.size, axis=0)
    sd_mu = min(float(proposal_sd), 2.4 * np.sqrt(2.0 / (k * prior["alpha1_mu"])))
    sd_x = min(float(proposal_sd), 2.4 * np.sqrt(2.0 / (k * prior["alpha1_x"])))
    out = _per_feature_chain_kernel(
        np.asarray(counts, dtype=np.float64), np.ascontiguousarray(sums, dtype=np.float64),
        np.ascontiguousarray(squares, dtype=np.float64), int(schedule.burn_in), schedule.slots,
        int(schedule.n_saved), *(float(prior[name]) for name in _PER_FEATURE_PRIOR_NAMES), bool(per_class),
        grid, scale, float(n_discarded), tables, float(eta_min), float(step), v0s, float(h), log_a, lengths, float(d1),
        float(d2), float(log_norm), sd_mu, sd_x, int(n_metropolis), float(init_jitter), rng,
    )  # fmt: skip
    if advance is not None:
        advance(schedule.n_iter)
    return out


def per_feature_chain(rng, schedule, advance=None, *, counts, sums, squares, prior, adjustment=None, n_discarded=0,
                      proposal_sd=0.5, n_metropolis=5, init_jitter=0.5):  # fmt: skip
    """Run one chain of the per-feature-spread model (Li 2012; docs/gaussian.md, eq. P1–P10).

    Per iteration: the conjugate Gibbs updates of μ, w^x_j, ν, w^μ_j and τ^ν, then ``n_metropolis``
    random-walk Metropolis steps on log s_μ and on log s_x, whose targets include
    (p − k) log A(s_μ/s_x) when ``adjustment`` (a :class:`PerFeatureGaussianAdjustment`) is given and
    p − k > 0. The proposal sd of log s is min(``proposal_sd``, 2.4 √(2/(k α1))), 2.4 times the sd of
    its conditional without the prior and the correction (a log-Gamma of shape kα1/2). Compiled
    with numba; the signature is that of a chain of :func:`hdbayes.mcmc.run_chains` once the keyword
    arguments are bound.

    Parameters
    ----------
    prior : dict
        ``alpha1_mu, alpha1_x, alpha_x, w_x, alpha_mu, w_mu, alpha_nu, w_nu``.

    Returns
    -------
    hdbayes.mcmc.ChainDraws
        ``posterior``: ``mu`` (S, G, k); ``w_x``, ``w_mu``, ``nu`` (S, k); ``log_s_mu``, ``log_s_x``,
        ``log_tau_nu`` (S,); ``warmup``: the three scalars at every burn-in iteration;
        ``sample_stats``: ``acceptance_rate`` (S,) of the Metropolis steps (both scales).
    """
    out = _run_per_feature_kernel(rng, schedule, advance, counts, sums, squares, prior, adjustment, n_discarded,
                                  proposal_sd, n_metropolis, init_jitter, per_class=False)  # fmt: skip
    mu, _, w_x, w_mu, nu, log_s_mu, log_s_x, log_tau_nu, _, acceptance, _, warm_mu, warm_x, warm_nu, _ = out
    return ChainDraws(
        posterior={"mu": mu, "w_x": w_x, "w_mu": w_mu, "nu": nu, "log_s_mu": log_s_mu, "log_s_x": log_s_x,
                   "log_tau_nu": log_tau_nu},  # fmt: skip
        warmup={"log_s_mu": warm_mu, "log_s_x": warm_x, "log_tau_nu": warm_nu} if schedule.burn_in > 0 else {},
        sample_stats={"acceptance_rate": acceptance},
    )


def per_class_chain(rng, schedule, advance=None, *, counts, sums, squares, prior, adjustment=None, n_discarded=0,
                    proposal_sd=0.5, n_metropolis=5, init_jitter=0.5, class_scale=None):  # fmt: skip
    """Run one chain of the per-class-variance model (docs/gaussian.md, eq. P18–P19, P31–P36).

    The per-feature-spread model (:func:`per_feature_chain`) with one variance per class and feature:
    x_ij | y_i = g ~ N(μ_gj, w_gj), w_gj | v_j ~ Inv-χ²(α2_x, v_j) independently over g, and
    v_j ~ Inv-χ²(α1_x, s_x) (the per-feature model's prior of w^x_j). Per iteration: μ_gj (P31), w_gj
    (P31, Gamma draws of 1/w_gj), log v_j (P32, one update of :func:`hdbayes.mcmc.slice_sample` from its
    generalised inverse Gaussian conditional), ν, w^μ_j, τ^ν, then the Metropolis steps on log s_μ and
    log s_x of the per-feature model with Σ_j 1/v_j in place of Σ_j 1/w^x_j (P33), and
    (p − k) log A(s_μ/s_x) when ``adjustment`` is given and p − k > 0 (a
    :class:`PerClassVarianceAdjustment`). Same kernel, proposals and signature as :func:`per_feature_chain`.

    With ``prior["alpha2_x"] = "learn"``, α2_x has a uniform prior on :data:`ALPHA2_GRID` (∞ included: equal
    class variances) and ``n_metropolis`` Metropolis steps per iteration move it to a neighbouring grid value
    with the class variances integrated out (eq. P35–P36); the correction then needs one table per grid
    value (a :class:`ClassVarianceGridAdjustment`).

    With ``class_scale`` (s_1..s_G, eq. P38–P40) class g's variances are centred on s_g v_j:
    w_gj | v_j ~ Inv-χ²(α2_x, s_g v_j), and at α2_x = ∞ w_gj = s_g v_j; the adjustment must then be
    computed with the same scales (``class_scale=`` of its ``create``; checked).

    Parameters
    ----------
    prior : dict
        ``alpha1_mu, alpha1_x, alpha2_x, alpha_x, w_x, alpha_mu, w_mu, alpha_nu, w_nu``; ``alpha2_x`` a
        positive number or ``"learn"``.
    class_scale : array-like of shape (G,), optional
        The class scales s_g (positive; None: all 1, the model of eq. P18).

    Returns
    -------
    hdbayes.mcmc.ChainDraws
        ``posterior``: ``mu`` and ``w_x`` (S, G, k); ``v``, ``w_mu``, ``nu`` (S, k); ``log_s_mu``,
        ``log_s_x``, ``log_tau_nu`` (S,); learned, also ``alpha2_x`` (S,) (``inf`` for equal class
        variances); ``warmup`` (learned: with ``alpha2_x``) and ``sample_stats`` as :func:`per_feature_chain`
        (learned: also ``alpha2_acceptance_rate``).
    """
    out = _run_per_feature_kernel(rng, schedule, advance, counts, sums, squares, prior, adjustment, n_discarded,
                                  proposal_sd, n_metropolis, init_jitter, per_class=True,
                                  class_scale=class_scale)  # fmt: skip
    mu, w_x, v, w_mu, nu, log_s_mu, log_s_x, log_tau_nu, alpha2, acceptance, alpha2_acceptance, *warm = out
    posterior = {"mu": mu, "w_x": w_x, "v": v, "w_mu": w_mu, "nu": nu, "log_s_mu": log_s_mu, "log_s_x": log_s_x,
                 "log_tau_nu": log_tau_nu}  # fmt: skip
    warmup = dict(zip(("log_s_mu", "log_s_x", "log_tau_nu"), warm[:3], strict=True))
    sample_stats = {"acceptance_rate": acceptance}
    if isinstance(prior["alpha2_x"], str):  # learned (eq. P35–P36)
        posterior["alpha2_x"] = alpha2
        warmup["alpha2_x"] = warm[3]
        sample_stats["alpha2_acceptance_rate"] = alpha2_acceptance
    return ChainDraws(posterior=posterior, warmup=warmup if schedule.burn_in > 0 else {}, sample_stats=sample_stats)


def log_class_numerators(X, mu, tau_x, class_log_prior):
    """log P(y* = g, x* | training data) by the ratio of Monte Carlo averages (eq. 13–15).

        log P(x* | train, y* = g) ≈ logmeanexp_s Σ_j log N(x*_j; μ_j^(g)[s], 1/τ_j^x[s]),

    computed with matrix products (Σ_j τ x², Σ_j τ μ x, Σ_j τ μ²) in chunks of test cases. With
    per-class precisions (``class_variance="per-class"``) τ_j^x is τ_gj^x = 1/w_gj of the class.

    Parameters
    ----------
    X : ndarray of shape (N, k)
        Test values of the selected features.
    mu : ndarray of shape (S, G, k)
    tau_x : ndarray of shape (S, k) or (S, G, k)
        Precisions per draw and feature, or per draw, class and feature.
    class_log_prior : ndarray of shape (G,)
        log (n_g + c)/(n + G c), the Pólya-urn predictive of the class.

    Returns
    -------
    ndarray of shape (N, G)
    """
    n_samples, n_classes, k = mu.shape
    tau = tau_x[:, None, :] if tau_x.ndim == 2 else tau_x  # (S, 1, k) or (S, G, k)
    weighted_mu = (tau * mu).reshape(n_samples * n_classes, k)  # (S·G, k)
    constant = 0.5 * np.log(tau).sum(axis=-1) - 0.5 * k * np.log(2.0 * np.pi)  # (S, 1) or (S, G)
    mean_term = 0.5 * np.einsum("sgk,sgk->sg", weighted_mu.reshape(n_samples, n_classes, k), mu)  # (S, G)
    out = np.empty((X.shape[0], n_classes))
    for start in range(0, X.shape[0], _PREDICT_CHUNK):
        rows = X[start : start + _PREDICT_CHUNK]
        square_term = 0.5 * ((rows * rows) @ tau.reshape(-1, k).T).reshape(rows.shape[0], n_samples, -1)
        cross = (rows @ weighted_mu.T).reshape(rows.shape[0], n_samples, n_classes)
        log_lik = constant[None] - square_term + cross - mean_term[None]
        out[start : start + _PREDICT_CHUNK] = logsumexp(log_lik, axis=1) - np.log(n_samples)
    return out + class_log_prior[None, :]


def rao_blackwell_log_class_numerators(X, nu, tau_x, tau_mu, counts, sums, class_log_prior):
    """log P(y* = g, x* | training data) with the class means integrated out analytically.

    For a draw (ν, τ^x, τ^μ) of the chain, μ_j^(g) given everything else is Gaussian
    (eq. 18) with precision P = τ^μ + n_g τ_j^x and mean m = (ν_j τ^μ + Σ_{i∈g} x_ij τ_j^x)/P,
    so x*_j | y* = g has predictive N(m, 1/τ_j^x + 1/P). Averaging these predictive
    densities over the draws estimates the same quantity as eq. 15 (Rao–Blackwellisation)
    with much smaller Monte Carlo variance: a product over k features of densities at
    sampled μ is dominated by a few draws when k is large, which makes eq. 15
    overconfident and noisy. With per-class precisions τ_gj^x = 1/w_gj
    (``class_variance="per-class"``, docs/gaussian.md eq. P34) τ_j^x is the class's in P, m and the
    variance: N(m_gj, w_gj + 1/P_gj).

    Parameters
    ----------
    X : ndarray of shape (N, k)
    nu : ndarray of shape (S, k)
    tau_x : ndarray of shape (S, k) or (S, G, k)
        Within-class precisions per draw and feature, or per draw, class and feature.
    tau_mu : ndarray of shape (S,) or (S, k)
        1/w^μ: one per draw (the shared model) or one per draw and feature (``spread="per-feature"``).
    counts : ndarray of shape (G,)
    sums : ndarray of shape (G, k)
        Training class counts and class sums of the selected features.
    class_log_prior : ndarray of shape (G,)

    Returns
    -------
    ndarray of shape (N, G)
    """
    n_samples, k = nu.shape
    n_classes = counts.shape[0]
    tau_mu = np.asarray(tau_mu).reshape(n_samples, 1, -1)  # (S, 1, 1) or (S, 1, k)
    tau = tau_x[:, None, :] if tau_x.ndim == 2 else tau_x  # (S, 1, k) or (S, G, k)
    precision = tau_mu + counts[None, :, None] * tau  # (S, G, k)
    mean = (nu[:, None, :] * tau_mu + sums[None] * tau) / precision
    variance = 1.0 / tau + 1.0 / precision
    constant = -0.5 * (np.log(2.0 * np.pi * variance) + mean * mean / variance).sum(axis=-1)  # (S, G)
    inverse = (1.0 / variance).reshape(n_samples * n_classes, k)
    weighted = (mean / variance).reshape(n_samples * n_classes, k)
    out = np.empty((X.shape[0], n_classes))
    for start in range(0, X.shape[0], _PREDICT_CHUNK):
        rows = X[start : start + _PREDICT_CHUNK]
        quadratic = -0.5 * (rows * rows) @ inverse.T + rows @ weighted.T  # (N, S·G)
        log_lik = constant[None] + quadratic.reshape(rows.shape[0], n_samples, n_classes)
        out[start : start + _PREDICT_CHUNK] = logsumexp(log_lik, axis=1) - np.log(n_samples)
    return out + class_log_prior[None, :]


def _predict_chunk(block, *, where, view, method, kwargs):
    """One row chunk of the selected columns, predicted by ``view`` (see ``_predict_dask``)."""
    block = np.asarray(block.toarray() if hasattr(block, "toarray") else block, dtype=np.float64)
    if not np.isfinite(block).all():
        raise InputValueError(f"{where} holds a value that is not finite; X must be finite")
    return getattr(view, method)(block, **kwargs)


class BiasCorrectedGaussianClassifier(MCMCMixin, SelectionBiasClassifier):
    """Bayesian Gaussian classifier with F-statistic selection and bias correction.

    ``fit`` receives all p candidate features, keeps the ``n_features_to_select`` with
    the largest F-statistics (or those above ``threshold``), and samples the posterior
    of the Gaussian model of Li (2009) on them by MCMC. With ``correct=True`` the
    posterior also conditions on the p − k discarded features having F ≤ γ, which
    makes the predictive probabilities calibrated.

    Parameters
    ----------
    n_features_to_select : int, optional
        k. With neither ``n_features_to_select`` nor ``threshold``, all features are used.
    threshold : float, optional
        Keep features with F > threshold.
    correct : bool, default=True
        Whether to condition on the discarded features' F ≤ γ (the correction for selection bias).
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        c, the Dirichlet(c, …, c) prior of the class probabilities ψ (one c per class,
        in the order of ``classes_``, when an array).
    alpha_x, w_x : float, default=4.0, 1.0
        Gamma(α^x/2, rate α^x w^x/2) prior of each feature's precision τ_j^x.
    alpha_mu, w_mu : float, default=1.5, 0.01
        Prior of τ^μ.
    alpha_nu, w_nu : float, default=1.5, 0.01
        Prior of τ^ν.
    n_mc : int, optional
        Size of the fixed pool of the adjustment factor: for ``spread="shared"`` the Monte Carlo pool of
        class means and precisions (None: 1000, the paper's); for ``class_variance="per-class"`` the
        quasi-Monte Carlo pool of class-variance ratios, rounded up to a power of 2 (None: 512, whose
        error is measured in docs/gaussian.md). The pooled per-feature factor is exact and uses none.
    proposal_sd : float, default=0.5
        Standard deviation of the random-walk proposal on log τ^μ.
    n_metropolis : int, default=5
        Metropolis updates of log τ^μ per iteration (corrected model).
    predictive : {"rao-blackwell", "samples"}, default="rao-blackwell"
        How P(x* | class, training data) is estimated from the draws:
        ``"samples"`` averages ∏_j N(x*_j; μ_j^(g), 1/τ_j^x) over the sampled class
        means, as in the paper (eq. 15); ``"rao-blackwell"`` averages the same
        densities with μ integrated out given the other parameters of each draw
        (:func:`rao_blackwell_log_class_numerators`). Both estimate the same
        probabilities; the second has far smaller Monte Carlo error when many
        features are kept (with all 4000 features of the paper's simulation: error
        rate 0.038 instead of 0.122, and calibrated).
    spread : {"shared", "per-feature"}, default="shared"
        ``"shared"``: one τ^μ for all features and τ_j^x with a fixed prior (Li 2009, above).
        ``"per-feature"``: the published model (Li 2012, BCBCSF; docs/gaussian.md eq. P1–P17):
        x_ij | y = g ~ N(μ_gj, w^x_j), μ_gj | ν_j ~ N(ν_j, w^μ_j), w^μ_j ~ scaled-Inv-χ²(α1_μ, s_μ),
        w^x_j ~ scaled-Inv-χ²(α1_x, s_x), 1/s_μ ~ Gamma(α^μ/2, rate α^μ w^μ/2) and
        1/s_x ~ Gamma(α^x/2, rate α^x w^x/2) (so ``alpha_mu, w_mu, alpha_x, w_x`` become the priors
        of the global scales); the correction is the exact factor A(s_μ/s_x)^{p−k} computed by
        quadrature (:class:`~hdbayes.selection_bias.gaussian_adjustment.PerFeatureGaussianAdjustment`;
        ``n_mc`` is unused).
    alpha1_mu, alpha1_x : float, default=3.0, 10.0
        Degrees of freedom of the per-feature spreads' priors (``spread="per-feature"`` only; the
        published package's defaults).
    class_variance : {"pooled", "per-class"}, default="pooled"
        ``"pooled"``: one variance per feature shared by the classes (the models above).
        ``"per-class"`` (only with ``spread="per-feature"``; docs/gaussian.md eq. P18–P19, P31–P34): one variance
        per class and feature, x_ij | y = g ~ N(μ_gj, w_gj), w_gj | v_j ~ scaled-Inv-χ²(α2_x, v_j)
        independently over the classes, v_j ~ scaled-Inv-χ²(α1_x, s_x) (the pooled model's prior of w^x_j):
        a class may be more variable than another (lymphoma: DLBCL about twice FL and CLL on the
        discriminating genes). The correction uses the adjustment factor of this model
        (:class:`~hdbayes.selection_bias.gaussian_adjustment.PerClassVarianceAdjustment`).
    alpha2_x : float or "learn", default="learn"
        Degrees of freedom of the class variances around v_j (``class_variance="per-class"`` only):
        small values let the classes' variances differ more; as α2_x → ∞ the model becomes the pooled one.
        ``"learn"``: α2_x has a uniform prior on
        :data:`~hdbayes.selection_bias.gaussian_adjustment.ALPHA2_GRID` (1, 2, 4, …, 128 and ∞) and is
        sampled with the other parameters (docs/gaussian.md, eq. P35–P37), so the data decide how unequal the
        class variances are; corrected, it costs one adjustment table per grid value (about 0.4 s each, in
        ``n_jobs`` threads). Its draws are ``trace_["alpha2_x"]``. It is the default because no fixed value
        suits both lymphoma and SRBCT, and α2_x = 4, the earlier default, fails the calibration checks of
        Li (2009) §4.1's equal-variance simulation, which the learned α2_x passes (docs/gaussian_real_data.md).
    class_scale : {"equal", "plug-in"} or array-like of shape (n_classes,), default="equal"
        The class scales s_g of the per-class prior (``class_variance="per-class"`` only; docs/gaussian.md
        eq. P38–P41): w_gj | v_j ~ scaled-Inv-χ²(α2_x, s_g v_j), so class g is s_g times as variable as the
        others across all features, and the adjustment factor's class-variance ratios are scaled by s.
        ``"equal"``: all 1 (the model above). ``"plug-in"``: ŝ estimated in ``fit`` from the within-class
        variances of all p features (:func:`plug_in_class_scale`, an empirical-Bayes value, consistent as
        p → ∞; on lymphoma ŝ = 1.62 : 0.94 : 0.66 for DLBCL : FL : CLL). An array: known scales (positive,
        in the order of ``classes_``; a common factor is absorbed by the v_j and s_x, up to the prior of
        s_x). The scales used are ``class_scale_``.
    n_iter, burn_in, thin : int, default=6000, 750, 15
        Gibbs iterations per chain; the draws after ``burn_in``, every ``thin``-th, are
        used (350 per chain with the defaults).
    n_chains : int, default=1
        Independent chains (R-hat in :meth:`mcmc_summary` needs at least two).
    n_jobs : int, optional
        Chains in parallel (threads; the sampler releases the GIL). Results do not
        depend on ``n_jobs``.
    random_state : int, Generator, RandomState or None
        Seeds tie-breaking in the selection, the adjustment pool and the chains.
    progress : bool, optional
        Progress bar over the iterations (None: only on an interactive terminal).

    Attributes
    ----------
    classes_ : ndarray of shape (G,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names.
    selection_ : hdbayes.selection.Selection
    selected_features_ : ndarray of shape (k,)
    threshold_ : float
        γ, the F-statistic threshold of the selection.
    trace_ : hdbayes.mcmc.Trace
        The post-burn-in draws, shaped (chain, draw, ...): ``mu`` (…, G, k), ``tau_x``
        and ``nu`` (…, k), ``log_tau_mu`` and ``log_tau_nu`` (the monitored scalars of
        :meth:`mcmc_summary`); ``trace_.warmup`` holds log τ^μ and log τ^ν at every
        burn-in iteration; ``trace_.sample_stats["acceptance_rate"]`` the Metropolis
        acceptance rate since the previous draw. With ``spread="per-feature"``: ``mu`` (…, G, k),
        ``w_x``, ``w_mu`` and ``nu`` (…, k), monitored ``log_s_mu``, ``log_s_x`` and ``log_tau_nu``;
        with ``class_variance="per-class"`` also, ``w_x`` is (…, G, k) (the class variances w_gj) and
        ``v`` (…, k) holds the features' variance levels v_j.
    acceptance_rate_ : ndarray of shape (n_chains,)
        Acceptance rate of the Metropolis steps after burn-in: on log τ^μ with the shared
        spread (0 when there are none: uncorrected, or nothing discarded); on both scales
        log s_μ and log s_x with ``spread="per-feature"``, corrected or not.
    class_counts_, class_sums_ : ndarray of shape (G,), (G, k)
        Training counts and sums of the selected features (for the Rao–Blackwellised
        predictive).
    adjustment_ : GaussianAdjustment or None
        The adjustment factor A of the correction (one of the adjustment classes of
        :mod:`hdbayes.selection_bias.gaussian_adjustment`, by ``spread``, ``class_variance`` and
        ``alpha2_x``); None when uncorrected or when no feature is discarded.
    statistics_ : hdbayes.statistics.GaussianClassMoments or None
        Per-class counts, means and centred sums of squares of all p training features, which
        :meth:`partial_fit` continues from; None when values near the largest double make them
        overflow.
    class_log_prior_ : ndarray of shape (G,)
        log (n_g + c_g)/(n + Σ c), the Pólya-urn predictive of the class.
    class_scale_ : ndarray of shape (G,)
        The class scales s_g of the fit (``class_variance="per-class"`` only; all 1 with
        ``class_scale="equal"``; geometric mean 1 for ``"plug-in"``).

    Examples
    --------
    >>> from hdbayes import BiasCorrectedGaussianClassifier
    >>> from hdbayes.datasets import simulate_gaussian
    >>> data = simulate_gaussian(n_classes=3, n_features=200, random_state=0)
    >>> model = BiasCorrectedGaussianClassifier(
    ...     n_features_to_select=10, n_iter=600, burn_in=100, thin=5, n_chains=2, random_state=0
    ... ).fit(data.X, data.y)
    >>> model.predict_proba(data.X_test[:2]).shape
    (2, 3)
    >>> model.trace_["mu"].shape  # (chain, draw, class, feature)
    (2, 100, 3, 10)
    >>> sorted(model.mcmc_summary())
    ['log_tau_mu', 'log_tau_nu']
    """

    _parameter_constraints = {
        **SELECTION_PARAMETER_CONSTRAINTS,
        **{name: [POSITIVE] for name in _PRIOR_NAMES},
        "n_mc": [Interval(Integral, 1, None, closed="left"), None],
        "proposal_sd": [POSITIVE],
        "n_metropolis": [Interval(Integral, 1, None, closed="left")],
        "predictive": [StrOptions({"rao-blackwell", "samples"})],
        "spread": [StrOptions({"shared", "per-feature"})],
        "alpha1_mu": [POSITIVE],
        "alpha1_x": [POSITIVE],
        "class_variance": [StrOptions({"pooled", "per-class"})],
        "alpha2_x": [POSITIVE, StrOptions({"learn"})],
        "class_scale": [StrOptions({"equal", "plug-in"}), "array-like"],
        **MCMC_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        n_features_to_select: int | None = None,
        *,
        threshold: float | None = None,
        correct: bool = True,
        class_pseudo_count: float | ArrayLike = 1.0,
        alpha_x: float = 4.0,
        w_x: float = 1.0,
        alpha_mu: float = 1.5,
        w_mu: float = 0.01,
        alpha_nu: float = 1.5,
        w_nu: float = 0.01,
        n_mc: int | None = None,
        proposal_sd: float = 0.5,
        n_metropolis: int = 5,
        predictive: Literal["rao-blackwell", "samples"] = "rao-blackwell",
        spread: Literal["shared", "per-feature"] = "shared",
        alpha1_mu: float = 3.0,
        alpha1_x: float = 10.0,
        class_variance: Literal["pooled", "per-class"] = "pooled",
        alpha2_x: float | Literal["learn"] = "learn",
        class_scale: Literal["equal", "plug-in"] | ArrayLike = "equal",
        n_iter: int = 6000,
        burn_in: int = 750,
        thin: int = 15,
        n_chains: int = 1,
        n_jobs: int | None = None,
        random_state: RandomStateLike = None,
        progress: bool | None = None,
    ) -> None:
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.correct = correct
        self.class_pseudo_count = class_pseudo_count
        self.alpha_x = alpha_x
        self.w_x = w_x
        self.alpha_mu = alpha_mu
        self.w_mu = w_mu
        self.alpha_nu = alpha_nu
        self.w_nu = w_nu
        self.n_mc = n_mc
        self.proposal_sd = proposal_sd
        self.n_metropolis = n_metropolis
        self.predictive = predictive
        self.spread = spread
        self.alpha1_mu = alpha1_mu
        self.alpha1_x = alpha1_x
        self.class_variance = class_variance
        self.alpha2_x = alpha2_x
        self.class_scale = class_scale
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Select features by F on (X, y) and sample the posterior.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, p)
            All candidate continuous features. Constant features are allowed: their F is 0,
            they are discarded and count among the p − k discarded features, as the model
            of the unfloored values says (docs/gaussian.md, "Constant features"). Only if the
            selection reaches them (γ = 0) does the selection's ``UserWarning`` say so (features
            with F = 0 kept to make up k); the correction then uses its γ → 0⁺ limit
            (:class:`GaussianAdjustment`).
            A kept feature whose sums of squares overflow raises an ``InputValueError``.
            A ``dask.array`` (dense or ``scipy.sparse`` chunks, any chunking) is summarised on
            the workers by per-class moments of every feature
            (:class:`hdbayes.statistics.GaussianClassMoments`); F and the selection come from
            them, and only the n × k selected columns reach this process. The draws are those of
            the in-memory fit (F agrees to about 1e-12, so only a near-tie at the k-th feature
            could select differently).
        y : array-like or dask array of shape (n_samples,)
            Class labels; at least two classes, each with at least two cases.

        Returns
        -------
        self
            The fitted estimator.
        """
        self.__dict__.pop("statistics_", None)
        if is_dask_array(X) or is_dask_array(y):
            return self._fit_dask(X, y)
        self._check_selection_params()
        self._check_variant()
        schedule = self._schedule()
        X, codes = self._validate_classification_data(X, y, targets=True, ensure_all_finite=True, ensure_min_samples=3)
        counts = self._checked_class_counts(np.bincount(codes, minlength=self.classes_.shape[0]))
        # the moments partial_fit continues from (F and the sampler below use X itself); None when values near
        # the largest double make them overflow (fit copes with those: F rescales columns, a discarded one is unused)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                self.statistics_ = GaussianClassMoments._from_checked(X, codes, self.classes_)
        except InputValueError:
            self.statistics_ = None
        rng = check_generator(self.random_state)
        selection = self._select_features(f_statistic(X, codes), "f", rng)
        scatter = None if self.statistics_ is None else self.statistics_.scatter
        if scatter is None and self._needs_scatter():  # overflowing moments: the plug-in skips such features
            with np.errstate(over="ignore", invalid="ignore"):
                scatter = _class_moments(X, codes, self.classes_.shape[0])[2]
        return self._fit_selected(X[:, selection.indices], codes, counts, selection, rng, schedule, scatter)

    def _fit_dask(self, X, y):
        """``fit`` on a dask array X: the per-class moments of every feature are computed on the
        workers and merged (:class:`hdbayes.statistics.GaussianClassMoments`), F and the selection
        come from them, and only the k selected columns (n × k values) and the labels are brought
        to the client for the sampler, which then runs exactly as in memory."""
        self._check_selection_params()
        self._check_variant()
        schedule = self._schedule()
        for name in ("classes_", "n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        moments = GaussianClassMoments.from_dask(X, y)
        check_class_labels(moments.classes)
        self.statistics_ = moments
        if moments.n_samples < 3:
            raise InputValueError(f"Found array with {moments.n_samples} sample(s) while a minimum of 3 is required.")
        self.classes_ = moments.classes
        self.n_features_in_ = int(X.shape[1])
        counts, rng, selection = self._select_from_moments(moments)
        _, codes = dask_class_codes(y, moments.classes)
        kept = X[:, selection.indices].compute()
        kept = np.asarray(kept.toarray() if hasattr(kept, "toarray") else kept, dtype=np.float64)
        return self._fit_selected(kept, np.asarray(codes.compute() if is_dask_array(codes) else codes), counts,
                                  selection, rng, schedule, moments.scatter)  # fmt: skip

    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add a batch of training cases; the model equals ``fit`` on all batches so far, up to rounding.

        The per-class moments of every feature (:class:`hdbayes.statistics.GaussianClassMoments`,
        ``statistics_``) are merged, and after every call F, the selection and the sampler are computed
        again from them (the selected features' class sums and sums of squares follow from their
        moments). They differ from ``fit``'s in the last bits (sums in another order), so the draws are
        those of ``fit`` up to rounding rather than bit for bit. Until every class has two cases the
        moments are only accumulated. A call that raises leaves the estimator as it was.

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            A batch of all p candidate features (finite).
        y : array-like of shape (n_samples,)
            The batch's labels, each one of ``classes``.
        classes : array-like, optional
            All class labels (at least two); required on the first call, checked on later ones.

        Returns
        -------
        self
            The estimator, updated with the batch.
        """
        if "statistics_" in self.__dict__ and self.statistics_ is None:
            raise InputValueError(
                "partial_fit cannot continue this fit: the per-class sums of squares of its data overflow (values "
                "near the largest double); rescale the features, or start again with fit"
            )
        first = not hasattr(self, "statistics_")
        if first and classes is None:
            raise InputValueError("classes must be passed on the first call to partial_fit")
        self._validate_params()
        self._check_selection_params()
        self._check_variant()
        classes_ = self._batch_classes(y, classes, first)
        with unchanged_on_error(self):
            X, y = validate_input(self, X, y, reset=first, dtype="numeric", ensure_all_finite=True,
                                  ensure_min_samples=1)  # fmt: skip
            y = np.asarray(y)
            self._check_batch_labels(y, classes_)
            self.classes_ = classes_
            batch = GaussianClassMoments.from_data(X, y, classes=classes_)
            self.statistics_ = batch if first else self.statistics_ + batch
            if self.statistics_.class_counts.min() >= 2:
                self._fit_moments(self.statistics_)
        return self

    def _fit_moments(self, moments):
        """Selection and sampler from per-class moments alone (``partial_fit``)."""
        schedule = self._schedule()
        counts, rng, selection = self._select_from_moments(moments)
        kept = selection.indices
        n_g = moments.class_counts.astype(np.float64)[:, None]
        means = moments.means[:, kept]
        with np.errstate(over="ignore", invalid="ignore"):
            sums = n_g * means
            squares = moments.scatter[:, kept] + n_g * means * means
        bad = np.flatnonzero(~(np.isfinite(sums).all(axis=0) & np.isfinite(squares).all(axis=0)))
        if bad.size:
            label = feature_label(int(kept[bad[0]]), getattr(self, "feature_names_in_", None))
            raise InputValueError(f"the sum of squares of {label} overflows; rescale the feature")
        return self._fit_class_statistics(moments.class_counts.astype(np.float64), sums, squares, counts, selection,
                                          rng, schedule, moments.scatter)  # fmt: skip

    def _select_from_moments(self, moments):
        """(class sizes, the fit's generator, the selection by F) from per-class moments (dask, partial_fit)."""
        counts = self._checked_class_counts(moments.class_counts)
        rng = check_generator(self.random_state)
        return counts, rng, self._select_features(moments.f_statistic(), "f", rng)

    def _check_variant(self):
        if self.class_variance == "per-class" and self.spread != "per-feature":
            raise InputValueError(
                'class_variance="per-class" needs spread="per-feature" (with spread="shared" the class '
                'variances are pooled: class_variance="pooled")'
            )
        if not (isinstance(self.class_scale, str) and self.class_scale == "equal"):
            if self.class_variance != "per-class":
                raise InputValueError(
                    'class_scale needs class_variance="per-class" (the pooled models have one variance for all '
                    'classes): set class_variance="per-class", or class_scale="equal"'
                )

    def _needs_scatter(self):
        """Whether the fit needs every feature's within-class scatter (the plug-in class scales)."""
        return isinstance(self.class_scale, str) and self.class_scale == "plug-in"

    def _resolve_class_scale(self, scatter, counts):
        """The class scales s_g of a per-class fit (eq. P38–P41): None for ``"equal"`` (the model without
        them), ŝ for ``"plug-in"``, the given array otherwise (checked against the classes)."""
        if isinstance(self.class_scale, str):
            if self.class_scale == "equal":
                return None
            return plug_in_class_scale(scatter, counts)
        n_classes = self.classes_.shape[0]
        try:
            values = np.asarray(self.class_scale, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputValueError(f"class_scale must be numbers, one per class, got {self.class_scale!r}") from None
        if values.shape != (n_classes,):
            raise InputValueError(
                f"class_scale has {values.size} value{'s' if values.size != 1 else ''} for {n_classes} classes "
                f"{self.classes_.tolist()}; give one per class, in that order"
            )
        return check_class_scale(values, n_classes)

    def _checked_class_counts(self, counts):
        counts = np.asarray(counts)
        if counts.min() < 2:
            label = self.classes_[np.argmin(counts)]
            raise InputValueError(f"class {plain_value(label)} has {counts.min()} case; every class needs at least two")
        return counts

    def _fit_selected(self, X_kept, codes, counts, selection, rng, schedule, scatter):
        """The model of the selected columns ``X_kept`` (n × k), given the selection on all p features (and
        their within-class ``scatter`` (G, p), for the plug-in class scales)."""
        with np.errstate(over="ignore", invalid="ignore"):
            count_f, sums, squares = class_statistics(X_kept, codes, self.classes_.shape[0])
        self._check_kept_magnitudes(X_kept, selection.indices, sums, squares)
        return self._fit_class_statistics(count_f, sums, squares, counts, selection, rng, schedule, scatter)

    def _fit_class_statistics(self, count_f, sums, squares, counts, selection, rng, schedule, scatter):
        """The sampler on the selected features' class counts, sums and sums of squares."""
        per_feature = self.spread == "per-feature"
        per_class = self.class_variance == "per-class"
        n_classes = self.classes_.shape[0]
        class_scale = self._resolve_class_scale(scatter, counts) if per_class else None
        pseudo_counts = class_pseudo_counts(self.class_pseudo_count, n_classes)
        n_discarded = selection.n_discarded if self.correct else 0
        self.adjustment_ = None
        if n_discarded > 0 and per_class:
            if selection.threshold <= 0:
                raise InputValueError(
                    f'class_variance="per-class" with correct=True needs a selection threshold above 0; the '
                    f"{selection.indices.size} kept features reach features with F = 0 (constant ones): keep fewer "
                    "features, or set correct=False"
                )
            n_pool = PER_CLASS_POOL if self.n_mc is None else 1 << int(self.n_mc - 1).bit_length()
            n_grid = len(ALPHA2_GRID) if self.alpha2_x == "learn" else 1
            # each grid value's pool: its Sobol points and class-variance ratios, G + 2 numbers a point
            check_memory(8.0 * n_grid * n_pool * (n_classes + 2), f"n_mc = {self.n_mc}",
                         purpose="the Monte Carlo pools of the correction")  # fmt: skip
            class_counts = tuple(int(c) for c in counts)
            if self.alpha2_x == "learn":
                self.adjustment_ = ClassVarianceGridAdjustment.create(
                    selection.threshold, class_counts, self.alpha1_mu, self.alpha1_x, n_pool=n_pool,
                    n_jobs=check_n_jobs(self.n_jobs, n_grid), class_scale=class_scale,
                )  # fmt: skip
            else:
                self.adjustment_ = PerClassVarianceAdjustment.create(
                    selection.threshold, class_counts, self.alpha1_mu, self.alpha1_x, self.alpha2_x, n_pool=n_pool,
                    class_scale=class_scale,
                )  # fmt: skip
        elif n_discarded > 0 and per_feature:
            self.adjustment_ = PerFeatureGaussianAdjustment.create(
                selection.threshold, tuple(int(c) for c in counts), self.alpha1_mu, self.alpha1_x
            )
        elif n_discarded > 0:
            if self.n_mc is not None:  # the pool: n_mc normal vectors of G values, a precision and a weight
                check_memory(8.0 * self.n_mc * (n_classes + 3), f"n_mc = {self.n_mc}",
                             purpose="the Monte Carlo pool of the correction")  # fmt: skip
            self.adjustment_ = GaussianAdjustment.create(
                selection.threshold, tuple(int(c) for c in counts), self.alpha_x, self.w_x,
                n_mc=1000 if self.n_mc is None else self.n_mc, random_state=rng,
            )  # fmt: skip
        if per_class:
            sampler = functools.partial(per_class_chain, class_scale=class_scale)
            prior_names = (*_PER_FEATURE_PRIOR_NAMES, "alpha2_x")
        elif per_feature:
            sampler, prior_names = per_feature_chain, _PER_FEATURE_PRIOR_NAMES
        else:
            sampler, prior_names = gibbs_chain, _PRIOR_NAMES
        chain = functools.partial(
            sampler, counts=count_f, sums=sums, squares=squares,
            prior={name: getattr(self, name) for name in prior_names}, adjustment=self.adjustment_,
            n_discarded=n_discarded, proposal_sd=self.proposal_sd, n_metropolis=self.n_metropolis,
        )  # fmt: skip
        names = getattr(self, "feature_names_in_", None)
        features = selection.indices if names is None else names[selection.indices]
        if per_class:
            dims = {"mu": ["class", "feature"], "w_x": ["class", "feature"], "v": ["feature"],
                    "w_mu": ["feature"], "nu": ["feature"]}  # fmt: skip
            monitored = ("log_s_mu", "log_s_x", "log_tau_nu")
        elif per_feature:
            dims = {"mu": ["class", "feature"], "w_x": ["feature"], "w_mu": ["feature"], "nu": ["feature"]}
            monitored = ("log_s_mu", "log_s_x", "log_tau_nu")
        else:
            dims = {"mu": ["class", "feature"], "tau_x": ["feature"], "nu": ["feature"]}
            monitored = ("log_tau_mu", "log_tau_nu")
        # a saved draw: the class means (G × k), k values per feature-level variable (the variances and ν; the
        # per-feature models' level and w_μ too), G × k variances w_x per class, and a few scalars
        k = sums.shape[1]
        per_feature_values = 4 if per_feature or per_class else 2
        draw_bytes = 8 * (n_classes * k * (2 if per_class else 1) + per_feature_values * k + 8)
        trace = self._run_chains(
            chain, desc="Gaussian Gibbs", seeds=chain_seeds(rng, self.n_chains), schedule=schedule,
            draw_bytes=draw_bytes, warmup_bytes=32,
            trace_options={
                "dims": dims, "coords": {"class": self.classes_, "feature": features}, "monitored": monitored,
            },
        )  # fmt: skip
        cause = "a kept feature is too large for the model's arithmetic; rescale it"
        for name, values in trace.posterior.items():
            if name != "alpha2_x":  # learned α2_x is ∞ when the classes' variances are equal
                check_finite_output(f"the posterior draws of {name}", values, cause=cause)
        self.acceptance_rate_ = trace.sample_stats["acceptance_rate"].mean(axis=1)
        self.class_counts_, self.class_sums_ = count_f, sums
        if per_class:
            self.class_scale_ = np.ones(n_classes) if class_scale is None else class_scale
        else:
            self.__dict__.pop("class_scale_", None)
        self.class_log_prior_ = np.log((counts + pseudo_counts) / (counts.sum() + pseudo_counts.sum()))
        return self

    def _predict_dask(self, X, method, **kwargs):
        """``method`` on a dask array X, as a dask array: the k selected columns are mapped over the
        row chunks, each predicted where it lives by a copy of the model restricted to them (the same
        computation as in memory)."""
        X, n_outputs, dtype = check_prediction_chunks(self, X, method)
        selected = np.asarray(self.selected_features_)
        view = copy.copy(self)  # small: the draws of the k selected features only
        view.__dict__.pop("feature_names_in_", None)
        view.n_features_in_ = selected.shape[0]
        view.selected_features_ = np.arange(selected.shape[0])
        return map_row_chunks(X[:, selected], _predict_chunk, n_outputs=n_outputs, dtype=dtype, view=view,
                              method=method, kwargs=kwargs)  # fmt: skip

    def _check_kept_magnitudes(self, X_kept, kept, sums, squares):
        """Raise an input error naming a kept feature (and its largest row) whose statistics overflow."""
        bad = np.flatnonzero(~(np.isfinite(sums).all(axis=0) & np.isfinite(squares).all(axis=0)))
        if bad.size:
            label = feature_label(int(kept[bad[0]]), getattr(self, "feature_names_in_", None))
            raise overflow_error(label, "the sum of squares of its values", X_kept[:, bad[0]])

    def _joint_log_likelihood(self, X):
        return self._selected_joint_log_likelihood(X[:, self.selected_features_])

    def _selected_joint_log_likelihood(self, X_selected, first_row=0):
        trace = self.trace_
        with np.errstate(over="ignore", invalid="ignore"):
            if "w_x" in trace.posterior:  # spread="per-feature"; w_x (S, G, k) with class_variance="per-class"
                tau_x, tau_mu = 1.0 / trace.flat("w_x"), 1.0 / trace.flat("w_mu")
            else:
                tau_x, tau_mu = trace.flat("tau_x"), np.exp(trace.flat("log_tau_mu"))
            if self.predictive == "samples":
                out = log_class_numerators(X_selected, trace.flat("mu"), tau_x, self.class_log_prior_)
            else:
                out = rao_blackwell_log_class_numerators(
                    X_selected, trace.flat("nu"), tau_x, tau_mu, self.class_counts_, self.class_sums_,
                    self.class_log_prior_,
                )  # fmt: skip
        # a class may have probability 0 (−inf); a NaN, a +inf or a row without a finite class is overflow
        bad = np.flatnonzero(np.isnan(out).any(axis=1) | (out == np.inf).any(axis=1) | ~np.isfinite(out).any(axis=1))
        if bad.size:
            i = int(bad[0])
            column = int(np.argmax(np.abs(X_selected[i])))
            j = int(self.selected_features_[column])
            raise InputValueError(
                f"the probability row {first_row + i} is not finite; its value {X_selected[i, column]:g} of "
                f"{feature_label(j, getattr(self, 'feature_names_in_', None))} is too large for double precision; "
                "rescale the feature"
            )
        return out
