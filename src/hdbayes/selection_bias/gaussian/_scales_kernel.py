"""The compiled chain of the two models with global scales s_μ and s_x (docs/gaussian.md, eq. P1–P10 and
P18–P40): the per-feature spread (:mod:`.per_feature`) and, with its class variances, α2_x fixed or learned
and its class scales, the per-class variance (:mod:`.per_class`), which is the per-feature model with one
variance per class. One kernel serves both so that they share every update but the variances'.
"""

from __future__ import annotations

import math

import numpy as np

from hdbayes._numba import jit
from hdbayes.mcmc.slice import slice_sample
from hdbayes.selection_bias.gaussian._factor import (
    check_class_scale,
    interpolated_per_feature_log_discard_probability,
    new_interpolation_table,
)

PRIOR_NAMES = ("alpha1_x", "alpha1_mu", "alpha_x", "w_x", "alpha_mu", "w_mu", "alpha_nu", "w_nu")
"""The priors the kernel reads, in its order."""


def stacked_kernel_arguments(adjustment):
    """(v0s (M,), h, log_a (M, L), lengths (M,), d1, d2, log normaliser): the tables of the M factors of a
    :class:`~hdbayes.selection_bias.gaussian.per_class.ClassVarianceGridAdjustment` (its ``adjustments``), or of
    one factor with ``kernel_arguments()`` (M = 1), padded with
    −inf to the longest; row m is ``log_a[m, :lengths[m]]`` on the grid ``v0s[m] + i h``."""
    members = getattr(adjustment, "adjustments", (adjustment,))
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


def run_scales_kernel(rng, schedule, advance, counts, sums, squares, prior, adjustment, n_discarded, proposal_sd,
                      n_metropolis, init_jitter, per_class, grid, class_scale=None):  # fmt: skip
    """Bind the arguments of :func:`_per_feature_chain_kernel` and run it: ``per_class`` whether the classes have
    variances of their own, ``grid`` the values α2_x may take (``[inf]`` for the per-feature model's pooled
    variances, one value when fixed, several when learned),
    ``class_scale`` the class scales (None: all 1), ``prior`` the fields of :data:`PRIOR_NAMES`. Returns the
    kernel's arrays."""
    n_classes, k = np.shape(sums)
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
        int(schedule.n_saved), *(float(prior[name]) for name in PRIOR_NAMES), bool(per_class),
        grid, scale, float(n_discarded), tables, float(eta_min), float(step), v0s, float(h), log_a, lengths, float(d1),
        float(d2), float(log_norm), sd_mu, sd_x, int(n_metropolis), float(init_jitter), rng,
    )  # fmt: skip
    if advance is not None:
        advance(schedule.n_iter)
    return out
