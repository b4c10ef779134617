"""Prototype: the adjustment factor of the Gaussian model with per-class variances and Student-t cells (issue 13).

Not part of the library: it measures whether the exact correction of the model that repairs SRBCT
(docs/gaussian_real_data.md, "Heavy tails with per-class precisions") is affordable. Run from the project root:

    .venv/bin/python benchmarks/bench_cell_weight_factor.py [--quick]

The model of one discarded feature, in units of its variance level v (F is invariant to scale): class means
μ_g ~ N(ν, r), cell i of class g(i) ~ N(μ_g(i), ε_g(i)/λ_i) with class-variance ratios ε_g ~ Inv-χ²(α2_x, 1)
(docs/gaussian.md, eq. P28) and cell weights λ_i ~ Gamma(df/2, rate df/2), so each cell is Student-t. The
feature is discarded iff F ≤ γ iff Q = xᵀMx ≤ 0, M = P_Z − P_1 − c(I − P_Z), c = γ(G − 1)/(n − G) (P_Z projects on
the class indicators, P_1 on the constant). Given (r, ε, λ), x ~ N(ν1, Σ), Σ = D + r ZZᵀ, D = diag(ε_g(i)/λ_i),
and M1 = 0, so Q = Σ_k θ_k χ²_1 with θ the eigenvalues of LᵀML (Σ = LLᵀ): an n × n eigenproblem, then the tail
of a quadratic form (:func:`hdbayes.selection_bias.quadratic_form.log_quadratic_form_tails`, eq. P24–P27), exact
given (r, ε, λ). The factor averages it over a fixed pool of (ε, λ), as the per-class model averages over ε.

Measured here:
1. With every λ_i = 1 it equals the per-class model's exact a(r; ε) (the library's
   ``per_class_log_discard_probability_given``).
2. Against simulated features (fixed r, ε, λ): the fraction with F ≤ γ within 4 standard errors.
3. The cost of one evaluation at lymphoma's and SRBCT's training sizes.
4. The pool's error: (p − k) (log b_M(r) − log b_ref(r)) over the r a posterior can visit, for pools of M points
   against a reference pool 16 times larger (common Sobol construction), p − k = 4000.
5. The moment generating function of Q given (r, ε, λ), det(I − 2sMΣ)^{−1/2}, from O(n) class sums
   (:func:`determinant_by_class_sums`) against the dense determinant.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import stats
from scipy.special import logsumexp
from scipy.stats import qmc

from hdbayes.selection import f_statistic
from hdbayes.selection_bias.gaussian._factor import per_class_log_discard_probability_given
from hdbayes.selection_bias.quadratic_form import log_quadratic_form_tails


def design(class_counts, threshold):
    """The class codes (sorted), the indicator matrix Z and M = P_Z − P_1 − c(I − P_Z)."""
    counts = np.asarray(class_counts)
    n, n_classes = int(counts.sum()), counts.shape[0]
    codes = np.repeat(np.arange(n_classes), counts)
    Z = np.zeros((n, n_classes))
    Z[np.arange(n), codes] = 1.0
    P_Z = Z @ np.diag(1.0 / counts) @ Z.T
    P_1 = np.full((n, n), 1.0 / n)
    c = threshold * (n_classes - 1.0) / (n - n_classes)
    return codes, Z, P_Z - P_1 - c * (np.eye(n) - P_Z)


def log_a(log_r, epsilon, lam, codes, Z, M):
    """log P(F ≤ γ | r, ε, λ): eigenvalues of LᵀML, then the lower tail of Σ θ_k χ²_1."""
    sigma = np.diag(epsilon[codes] / lam) + np.exp(log_r) * (Z @ Z.T)
    L = np.linalg.cholesky(sigma)
    theta = np.linalg.eigvalsh(L.T @ M @ L)
    lower, _ = log_quadratic_form_tails(np.ascontiguousarray(theta), np.ones(theta.shape[0]))
    return lower


def determinant_by_class_sums(s, log_r, epsilon, lam, codes, counts, threshold):
    """det(I − 2sMΣ) for complex s in O(n): it depends on λ only through Π_i δ_i and the class means
    m_g = mean_{i∈g} 1/δ_i, δ_i = 1 + 2sc ε_g(i)/λ_i (M = −cI + E K Eᵀ on the class-mean directions E,
    Σ = Δ-like diagonal + r E N Eᵀ; the determinant lemma and Woodbury leave only G × G diagonal matrices)."""
    counts = np.asarray(counts, dtype=np.float64)
    n, n_classes = counts.sum(), counts.shape[0]
    c = threshold * (n_classes - 1.0) / (n - n_classes)
    r = np.exp(log_r)
    delta = 1.0 + 2.0 * s * c * epsilon[codes] / lam
    m = np.array([np.mean(1.0 / delta[codes == g]) for g in range(n_classes)])
    h = (1.0 - m / (1.0 + 2.0 * s * c * r * counts * m)) / (2.0 * s * c)
    shares = counts / n
    return (np.prod(delta) * np.prod(1.0 + 2.0 * s * c * r * counts * m) * np.prod(1.0 - 2.0 * s * (1.0 + c) * h)
            * (1.0 + 2.0 * s * np.sum(shares * h / (1.0 - 2.0 * s * (1.0 + c) * h))))  # fmt: skip


def pool(n_points, n_classes, n, alpha2_x, df, seed=0):
    """(ε (M, G), λ (M, n)) from one scrambled Sobol sequence in G + n dimensions (common random numbers)."""
    u = qmc.Sobol(n_classes + n, scramble=True, seed=seed).random(n_points)
    epsilon = alpha2_x / (2.0 * stats.gamma.ppf(u[:, :n_classes], alpha2_x / 2.0))
    lam = stats.gamma.ppf(u[:, n_classes:], df / 2.0) / (df / 2.0)
    return epsilon, lam


def log_b(log_r, epsilon_pool, lam_pool, codes, Z, M):
    """log b(r) = log mean over the pool of a(r; ε_m, λ_m)."""
    values = np.array([log_a(log_r, e, l, codes, Z, M) for e, l in zip(epsilon_pool, lam_pool)])
    return logsumexp(values) - np.log(values.size)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller pools and simulations")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    alpha2_x, df = 2.0, 4.0
    print(f"load average at start: {os.getloadavg()[0]:.1f}")

    # 1. λ ≡ 1: the per-class model's exact factor
    counts, gamma = (19, 19, 18), 8.0
    codes, Z, M = design(counts, gamma)
    worst = 0.0
    for log_r in (-6.0, -2.0, 0.0, 2.0):
        epsilon = rng.gamma(2.0, 1.0, size=len(counts))
        ours = log_a(log_r, epsilon, np.ones(codes.shape[0]), codes, Z, M)
        reference = per_class_log_discard_probability_given(log_r, epsilon, np.asarray(counts, float), gamma)
        worst = max(worst, abs(ours - reference) / abs(reference))
    print(f"1. λ ≡ 1 against the per-class model's a(r; ε): largest relative difference of log a {worst:.1e}")

    # 2. against simulated features
    n_sim = 20_000 if args.quick else 200_000
    for log_r in (-3.0, 0.0):
        epsilon = np.array([1.0, 0.4, 2.5])
        lam = rng.gamma(df / 2.0, 2.0 / df, size=codes.shape[0])
        exact = np.exp(log_a(log_r, epsilon, lam, codes, Z, M))
        means = rng.normal(0.0, np.exp(log_r / 2.0), size=(n_sim, len(counts)))
        X = means[:, codes] + rng.standard_normal((n_sim, codes.shape[0])) * np.sqrt(epsilon[codes] / lam)
        fraction = np.mean(f_statistic(X.T, codes) <= gamma)
        se = np.sqrt(exact * (1 - exact) / n_sim)
        print(f"2. log r = {log_r:g}: exact a = {exact:.5f}, simulated {fraction:.5f} ({n_sim} features), "
              f"difference {abs(fraction - exact) / se:.1f} standard errors")

    # 3. cost of one evaluation
    for name, sizes in (("lymphoma-like (56 training cases, G = 3)", (19, 19, 18)),
                        ("SRBCT-like (75 training cases, G = 4)", (26, 10, 16, 23))):  # fmt: skip
        c_codes, c_Z, c_M = design(sizes, gamma)
        eps, lams = pool(64, len(sizes), c_codes.shape[0], alpha2_x, df)
        log_a(0.0, eps[0], lams[0], c_codes, c_Z, c_M)  # compile
        start = time.perf_counter()
        for e, l in zip(eps, lams):
            log_a(0.0, e, l, c_codes, c_Z, c_M)
        each = (time.perf_counter() - start) / eps.shape[0]
        print(f"3. {name}: {each * 1e3:.2f} ms per evaluation; a table of 120 log r nodes × 512 pool points: "
              f"{each * 120 * 512:.0f} s")

    # 4. the pool's error over the r a posterior can visit
    n_pool, n_ref = (64, 1024) if args.quick else (512, 8192)
    eps, lams = pool(n_ref, len(counts), codes.shape[0], alpha2_x, df, seed=1)
    small_eps, small_lams = pool(n_pool, len(counts), codes.shape[0], alpha2_x, df, seed=0)
    grid = np.linspace(-4.0, 2.0, 7)
    diff = []
    for log_r in grid:
        reference = log_b(log_r, eps, lams, codes, Z, M)
        small = log_b(log_r, small_eps, small_lams, codes, Z, M)
        diff.append(4000 * (small - reference))
    diff = np.array(diff)
    print(f"4. pool of {n_pool} against {n_ref}, p − k = 4000: (p − k)(log b_M − log b_ref) over log r in "
          f"[{grid[0]:g}, {grid[-1]:g}]: {np.round(diff, 3).tolist()}; variation {np.ptp(diff):.3f} nats")
    # 5. the generating function by class sums (a lead for averaging over λ)
    epsilon = np.array([1.0, 0.4, 2.5])
    lam = rng.gamma(df / 2.0, 2.0 / df, size=codes.shape[0])
    sigma = np.diag(epsilon[codes] / lam) + np.exp(-1.0) * (Z @ Z.T)
    worst = 0.0
    for s in (0.05 + 0.3j, -0.02 + 1.1j, 0.01 - 0.4j, 0.2 + 5.0j):
        dense = np.linalg.det(np.eye(codes.shape[0]) - 2.0 * s * M @ sigma)
        fast = determinant_by_class_sums(s, -1.0, epsilon, lam, codes, counts, gamma)
        worst = max(worst, abs(fast - dense) / abs(dense))
    print(f"5. det(I − 2sMΣ) from Π δ_i and the class means of 1/δ_i against the dense determinant, four complex s: "
          f"largest relative difference {worst:.1e}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
