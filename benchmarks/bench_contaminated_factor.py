"""Prototype: the exact adjustment factor of the Gaussian model with per-class variances and contaminated cells
(issue 13).

Not part of the library. ``bench_cell_weight_factor.py`` showed that Student-t cells (a continuous weight per
cell) put n dimensions into the factor's pool, which then does not converge. Here each cell's variance is
multiplied by κ with probability π and by 1 otherwise (a contaminated normal, Box and Tiao 1968), so a discarded
feature's cells are of two kinds. Cases of one class are exchangeable and F treats them alike, so given the
number o_g of outlying cells in each class the distribution of F no longer depends on which cells they are: the
factor is a finite sum over the counts o = (o_1..o_G) with binomial weights, each term an exact quadratic-form
tail, and only the class-variance ratios ε stay in the pool (docs/gaussian_real_data.md, eq. R2–R6). Run from the
project root:

    .venv/bin/python benchmarks/bench_contaminated_factor.py [--quick]

Measured here:
1. With no outlying cell (o = 0) the term equals the per-class model's exact a(r; ε).
2. Against simulated features with contaminated cells (fixed r, ε): the fraction with F ≤ γ.
3. The truncation of the sum over counts: the omitted binomial mass, a certified bound on the error of 1 − b.
4. The cost of one term and of a table at lymphoma's and SRBCT's training sizes.
5. The pool's error: (p − k)(log b_M(r) − log b_ref(r)) over the r a posterior can visit, p − k = 4000, as for the
   per-class model (512 points against 8192).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from numba import njit
from scipy import stats
from scipy.special import logsumexp

from hdbayes.selection import f_statistic
from hdbayes.selection_bias.gaussian._factor import per_class_log_discard_probability_given
from hdbayes.selection_bias.gaussian.per_class import class_variance_pool
from hdbayes.selection_bias.quadratic_form import log_quadratic_form_tails


@njit(cache=False)
def helmert(G):
    """(G − 1) × G orthonormal contrasts (rows orthogonal to the constant)."""
    C = np.zeros((G - 1, G))
    for k in range(1, G):
        norm = math.sqrt(k * (k + 1.0))
        for j in range(k):
            C[k - 1, j] = 1.0 / norm
        C[k - 1, k] = -k / norm
    return C


@njit(cache=False)
def contaminated_log_a(log_r, epsilon, counts, outliers, kappa, threshold):
    """log P(F ≤ γ | r, ε, o): class g has o_g cells of variance κ ε_g and n_g − o_g of variance ε_g (eq. R3–R5).

    With b_g = n_g − o_g normal cells of mean ē_N and o_g outlying ones of mean ē_O, the class mean is
    x̄_g = μ_g + (b ē_N + o ē_O)/n_g and SSW_g = ε χ²_{b−1} + κε χ²_{o−1} + (b o/n_g) D_g², D_g = ē_N − ē_O, the two
    chi-squares independent of (x̄, D). So Q = SSB − c·SSW is a quadratic form in the Gaussian vector of the G − 1
    contrasts of x̄ and the D_g of the mixed classes (eigenvalues of Lᵀ A L) plus the chi-square terms."""
    G = counts.shape[0]
    total = 0.0
    for g in range(G):
        total += counts[g]
    c = threshold * (G - 1.0) / (total - G)
    r = math.exp(log_r)
    mixed = 0
    for g in range(G):
        if 0 < outliers[g] < counts[g]:
            mixed += 1
    # covariance and quadratic form of (x̄ minus its mean ν, D of the mixed classes)
    size = G + mixed
    cov = np.zeros((size, size))
    form = np.zeros((size, size))
    slot = G
    for g in range(G):
        o = outliers[g]
        b = counts[g] - o
        cov[g, g] = (b * epsilon[g] + o * kappa * epsilon[g]) / (counts[g] * counts[g])
        for h in range(G):
            form[g, h] = (counts[g] if g == h else 0.0) - counts[g] * counts[h] / total
        if 0 < o < counts[g]:
            cov[slot, slot] = epsilon[g] / b + kappa * epsilon[g] / o
            cov[g, slot] = epsilon[g] * (1.0 - kappa) / counts[g]
            cov[slot, g] = cov[g, slot]
            form[slot, slot] = -c * b * o / counts[g]
            slot += 1
    # contrasts T = blockdiag(C, I): SSB = (C x̄)ᵀ (C B Cᵀ)(C x̄) since B·1 = 0; the spread r adds r·I exactly
    C = helmert(G)
    dim = G - 1 + mixed
    T = np.zeros((dim, size))
    T[: G - 1, :G] = C
    for m in range(mixed):
        T[G - 1 + m, G + m] = 1.0
    cov_red = T @ cov @ T.T
    for i in range(G - 1):
        cov_red[i, i] += r
    form_red = T @ form @ T.T
    L = np.linalg.cholesky(cov_red)
    theta = np.linalg.eigvalsh(L.T @ form_red @ L)
    lam = np.empty(dim + 2 * G)
    dof = np.empty(dim + 2 * G)
    terms = 0
    for i in range(dim):
        lam[terms] = theta[i]
        dof[terms] = 1.0
        terms += 1
    for g in range(G):  # only terms with degrees of freedom (the tails' cumulants read every entry)
        o = outliers[g]
        b = counts[g] - o
        if b > 1.0:
            lam[terms] = -c * epsilon[g]
            dof[terms] = b - 1.0
            terms += 1
        if o > 1.0:
            lam[terms] = -c * kappa * epsilon[g]
            dof[terms] = o - 1.0
            terms += 1
    lower, _ = log_quadratic_form_tails(lam[:terms], dof[:terms])
    return lower


def outlier_configurations(counts, share, tol):
    """The count vectors o of largest weight w(o) = Π_g Binom(o_g; n_g, π) whose omitted mass is ≤ ``tol``
    (eq. R6), in decreasing weight, their log weights and the omitted mass 1 − Σ w (a bound on the error of
    1 − b: every omitted term has 0 ≤ a ≤ 1). Candidates are the vectors with Σ o_g ≤ N, N the total whose
    binomial tail is below 1e-15 (so a smaller ``tol`` gives a longer prefix of the same order)."""
    counts = np.asarray(counts, dtype=np.int64)
    log_pmf = [stats.binom.logpmf(np.arange(n + 1), n, share) for n in counts]
    n_total = int(counts.sum())
    N = int(np.argmax(stats.binom.sf(np.arange(n_total + 1), n_total, share) <= 1e-15))
    candidates = []

    def walk(g, prefix, left):
        if g == len(counts):
            candidates.append(prefix)
            return
        for o in range(min(left, counts[g]) + 1):
            walk(g + 1, prefix + [o], left - o)

    walk(0, [], N)
    candidates = np.array(candidates, dtype=np.float64)
    log_w = np.array([sum(log_pmf[g][int(o)] for g, o in enumerate(row)) for row in candidates])
    order = np.argsort(-log_w, kind="stable")
    remaining = 1.0 - np.cumsum(np.exp(log_w[order]))
    keep = int(np.argmax(remaining <= tol)) + 1 if np.any(remaining <= tol) else order.shape[0]
    chosen = order[:keep]
    omitted = max(0.0, 1.0 - float(np.exp(logsumexp(log_w[chosen]))))
    return np.ascontiguousarray(candidates[chosen]), np.ascontiguousarray(log_w[chosen]), omitted


@njit(cache=False)
def contaminated_log_b(log_r, epsilon_pool, counts, configs, log_w, kappa, threshold):
    """log b(r) = log [(1/M) Σ_m Σ_o w(o) a(r; ε_m, o)] (eq. R6), by a running log-sum-exp."""
    peak = -np.inf
    values = np.empty(epsilon_pool.shape[0] * configs.shape[0])
    k = 0
    for m in range(epsilon_pool.shape[0]):
        for j in range(configs.shape[0]):
            values[k] = log_w[j] + contaminated_log_a(log_r, epsilon_pool[m], counts, configs[j], kappa, threshold)
            peak = max(peak, values[k])
            k += 1
    total = 0.0
    for i in range(k):
        total += math.exp(values[i] - peak)
    return peak + math.log(total / epsilon_pool.shape[0])


def precision_prior_pool(alpha_x, w_x, n_classes, n_pool, seed=0):
    """Class variances ε_g = 1/τ_g, τ_g ~ Gamma(α^x/2, rate α^x w^x/2) (the prototype sampler's prior of the
    class precisions), at the points of a scrambled Sobol sequence (common random numbers): 1/τ_g is w^x times an
    Inv-χ²(α^x, 1) variate, so this is the library's pool of class-variance ratios scaled by w^x."""
    return np.ascontiguousarray(w_x * class_variance_pool(alpha_x, n_classes, n_pool=n_pool, seed=seed))


def log_factor_table(class_counts, threshold, n_discarded, share, kappa, alpha_x, w_x, log_tau_mu, n_pool=64):
    """(p − k) log b as a function of log τ^μ on the grid ``log_tau_mu`` for the prototype sampler of
    ``bench_gaussian_real.py`` with contaminated cells: a discarded feature has class means N(ν, 1/τ^μ), class
    precisions from the prior and contaminated cells, so r = 1/τ^μ and b is (R6) over a pool of class
    variances. The truncation keeps (p − k) × omitted mass ≤ 0.01 nats."""
    counts = np.asarray(class_counts, dtype=np.float64)
    configs, log_w, _ = outlier_configurations(counts.astype(int), share, 0.01 / max(n_discarded, 1))
    pool = precision_prior_pool(alpha_x, w_x, counts.shape[0], n_pool)
    return np.array([n_discarded * contaminated_log_b(-v, pool, counts, configs, log_w, kappa, float(threshold))
                     for v in log_tau_mu])  # fmt: skip


def case_log_factor_table(class_counts, threshold, n_discarded, outlying, kappa_c, alpha_x, w_x, log_tau_mu,
                          n_pool=64):
    """(p − k) log b(τ^μ; c) for contaminated *cases*: ``outlying`` = c, the number of outlying training cases in
    each class. A discarded feature shares the cases' states, so its cells in those cases have variance κ_c ε_g
    and b is one term of (R6) with o = c (no binomial sum), averaged over the same pool of class variances."""
    counts = np.asarray(class_counts, dtype=np.float64)
    configs = np.asarray(outlying, dtype=np.float64)[None, :]
    pool = precision_prior_pool(alpha_x, w_x, counts.shape[0], n_pool)
    return np.array([n_discarded * contaminated_log_b(-v, pool, counts, configs, np.zeros(1), kappa_c,
                                                      float(threshold)) for v in log_tau_mu])  # fmt: skip


def simulate(log_r, epsilon, counts, share, kappa, threshold, n_sim, rng):
    """Fraction of simulated contaminated features with F ≤ γ, in batches."""
    codes = np.repeat(np.arange(len(counts)), counts)
    hits = 0
    done = 0
    while done < n_sim:
        batch = min(50_000, n_sim - done)
        means = rng.normal(0.0, math.exp(log_r / 2.0), size=(batch, len(counts)))
        scale = np.where(rng.random((batch, codes.shape[0])) < share, math.sqrt(kappa), 1.0)
        X = means[:, codes] + rng.standard_normal((batch, codes.shape[0])) * scale * np.sqrt(epsilon[codes])
        hits += int(np.sum(f_statistic(X.T, codes) <= threshold))
        done += batch
    return hits / n_sim


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller pools and simulations")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    # truncation: (p − k) × omitted mass ≤ 0.01 nats for p − k = 4000 (lymphoma's 4026 genes)
    alpha2_x, share, kappa, tol = 2.0, 0.02, 25.0, 0.01 / 4000
    print(f"load average at start: {os.getloadavg()[0]:.1f}; α2_x = {alpha2_x}, π = {share}, κ = {kappa}")

    # 1. o = 0: the per-class model's exact factor
    counts, gamma = np.array([37.0, 9.0, 10.0]), 12.0
    worst = 0.0
    for log_r in (-6.0, -2.0, 0.0, 2.0, 8.0):
        epsilon = rng.gamma(2.0, 1.0, size=3)
        ours = contaminated_log_a(log_r, epsilon, counts, np.zeros(3), kappa, gamma)
        reference = per_class_log_discard_probability_given(log_r, epsilon, counts, gamma)
        worst = max(worst, abs(ours - reference) / abs(reference))
    print(f"1. o = 0 against the per-class model's a(r; ε): largest relative difference of log a {worst:.1e}")

    # 2. against simulated features (the whole sum over counts at fixed r, ε)
    n_sim = 100_000 if args.quick else 1_000_000
    configs, log_w, omitted = outlier_configurations(counts, share, tol)
    for log_r in (-3.0, -1.0, 0.5):
        epsilon = np.array([1.0, 0.4, 2.5])
        exact = math.exp(contaminated_log_b(log_r, epsilon[None, :], counts, configs, log_w, kappa, gamma))
        fraction = simulate(log_r, epsilon, counts.astype(int), share, kappa, gamma, n_sim, rng)
        se = math.sqrt(exact * (1 - exact) / n_sim)
        print(f"2. log r = {log_r:g}: exact a = {exact:.6f}, simulated {fraction:.6f} ({n_sim} features), "
              f"difference {(fraction - exact) / se:+.1f} standard errors")

    # 3. truncation
    for sizes in ((37, 9, 10), (26, 10, 16, 23)):
        for s in (0.01, 0.02, 0.05):
            cfg, _, om = outlier_configurations(sizes, s, tol)
            strict, _, _ = outlier_configurations(sizes, s, 1e-12)
            print(f"3. classes {sizes}, π = {s}: {cfg.shape[0]} count vectors "
                  f"(largest Σ o {int(cfg.sum(axis=1).max())}), "
                  f"omitted mass {om:.1e} (for 1e-12: {strict.shape[0]} vectors)")

    # 4. cost
    for name, sizes, thr in (("lymphoma-like (56 training cases, G = 3)", (37, 9, 10), 12.0),
                             ("SRBCT-like (75 training cases, G = 4)", (26, 10, 16, 23), 15.0)):  # fmt: skip
        sizes = np.array(sizes, dtype=np.float64)
        cfg, lw, _ = outlier_configurations(sizes.astype(int), share, tol)
        eps = class_variance_pool(alpha2_x, sizes.shape[0], n_pool=64)
        contaminated_log_b(0.0, eps[:1], sizes, cfg, lw, kappa, thr)  # compile
        start = time.perf_counter()
        contaminated_log_b(0.0, eps, sizes, cfg, lw, kappa, thr)
        per_term = (time.perf_counter() - start) / (eps.shape[0] * cfg.shape[0])
        print(f"4. {name}: {per_term * 1e6:.1f} µs per term, {cfg.shape[0]} count vectors; a table of 100 log r "
              f"nodes × 512 pool points: {per_term * cfg.shape[0] * 512 * 100:.0f} s (per-class model: one term each)")

    # 5. the pool's error over the r a posterior can visit
    n_pool, n_ref = (64, 1024) if args.quick else (512, 8192)
    small = class_variance_pool(alpha2_x, 3, n_pool=n_pool, seed=0)
    ref = class_variance_pool(alpha2_x, 3, n_pool=n_ref, seed=1)
    grid = np.linspace(-4.0, 2.0, 7)
    diff = np.array([4000 * (contaminated_log_b(v, small, counts, configs, log_w, kappa, gamma)
                             - contaminated_log_b(v, ref, counts, configs, log_w, kappa, gamma)) for v in grid])
    print(f"5. pool of {n_pool} against {n_ref}, p − k = 4000: (p − k)(log b_M − log b_ref) over log r in "
          f"[{grid[0]:g}, {grid[-1]:g}]: {np.round(diff, 3).tolist()}; variation {np.ptp(diff):.3f} nats")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
