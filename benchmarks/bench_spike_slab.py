"""Benchmark: group spike-and-slab EP against its peers (docs/spike_slab.md; BENCHMARKS.md).

1. Block-sparse reconstruction at d = 512, n = 100 (the signals of ``hdbayes reproduce
   group-sparse-reconstruction``): fit time and relative error of GroupSpikeSlabRegression (EP)
   against skglm's GroupLasso with α by 3-fold CV and scikit-learn's ARDRegression, all in this
   process.
2. EP against the collapsed Gibbs sampler at matched accuracy of the group inclusion
   probabilities (exact enumeration as the reference): the time EP needs against the time Gibbs
   needs to get its Rao–Blackwellised probabilities as close to the exact ones.
   The same at the reconstruction size (d = 512, groups of 4, n = 60, 80, 100), where enumeration is
   impossible: a long Gibbs run (2 chains × 4000 sweeps) is the reference.
3. Scaling: n = 500, d = 100 000 (Woodbury path): time per EP iteration as a ratio to one
   ``(X * v) @ X.T`` and the peak memory allocated by EP (tracemalloc) against n² and n·d doubles.
4. The paper's cost claim, "O(n²d), linear in d" (seed 002 §1, §4): time per EP iteration against d at
   n = 200 and against n at d = 16 000, with the least-squares slopes of log time on log d and log n
   (``--skip-cost`` skips it).

BLAS runs single-threaded (threadpoolctl) so that the ratios do not depend on the machine's load.

Run: ``.venv/bin/python benchmarks/bench_spike_slab.py [--skip-large]``
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits


def _best_time(function, repeats=5):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = function()
        best = min(best, time.perf_counter() - start)
    return best, out


def reconstruction():
    from sklearn.linear_model import ARDRegression

    from hdbayes.datasets.regression import simulate_block_sparse
    from hdbayes.experiments.group_sparse_reconstruction import _group_lasso_cv, relative_error
    from hdbayes.spike_slab import GroupSpikeSlabRegression

    _group_lasso_cv(*(lambda d: (d.X, d.y))(simulate_block_sparse(random_state=99)), 0)  # compile skglm
    from hdbayes.spike_slab import GroupSpikeSlabGibbs

    rows = {"GSS-EP": [], "GSS-Gibbs (1200 sweeps, 200 burn-in)": [], "group lasso (CV)": [], "ARD": []}
    for seed in range(5):
        data = simulate_block_sparse(random_state=seed)
        model = GroupSpikeSlabRegression(groups=4, prior_inclusion=10 / 128, noise_variance=0.005**2,
                                         fit_intercept=False)  # fmt: skip
        seconds, fitted = _best_time(lambda model=model, data=data: model.fit(data.X, data.y))
        rows["GSS-EP"].append((seconds, relative_error(fitted.coef_, data.coef)))
        sampler = GroupSpikeSlabGibbs(groups=4, prior_inclusion=10 / 128, noise_variance=0.005**2,
                                      fit_intercept=False, n_iter=1200, burn_in=200, n_chains=1, random_state=seed,
                                      progress=False)  # fmt: skip
        seconds, fitted = _best_time(lambda sampler=sampler, data=data: sampler.fit(data.X, data.y), repeats=1)
        rows["GSS-Gibbs (1200 sweeps, 200 burn-in)"].append((seconds, relative_error(fitted.coef_, data.coef)))
        seconds, coef = _best_time(lambda data=data: _group_lasso_cv(data.X, data.y, 0), repeats=1)
        rows["group lasso (CV)"].append((seconds, relative_error(coef, data.coef)))
        seconds, ard = _best_time(lambda data=data: ARDRegression(fit_intercept=False).fit(data.X, data.y), repeats=1)
        rows["ARD"].append((seconds, relative_error(ard.coef_, data.coef)))
    print("\n## d = 512, n = 100 block-sparse reconstruction (5 signals; median)")
    print("| method | fit time (s) | relative error | time / EP |")
    print("|---|---:|---:|---:|")
    ep_time = np.median([t for t, _ in rows["GSS-EP"]])
    for name, values in rows.items():
        t, e = np.median([v[0] for v in values]), np.median([v[1] for v in values])
        print(f"| {name} | {t:.4f} | {e:.4f} | {t / ep_time:.1f} |")


def ep_against_gibbs():
    """Time to reach EP's accuracy (floored at 1e-3) on two small problems and a weak-signal one, 3 seeds each."""
    from hdbayes.spike_slab import GroupSpikeSlabGibbs, exact_posterior, expectation_propagation

    settings = {  # (n, G, d_g, active groups, σ0², signal scale)
        "small 1 (20, 8×3, 2 active, σ0²=0.01)": (20, 8, 3, 2, 0.01, 1.0),
        "small 2 (30, 10×2, 2 active, σ0²=0.1)": (30, 10, 2, 2, 0.1, 1.0),
        "weak signals (40, 12×4, 3 active, σ0²=0.5, scale 0.4)": (40, 12, 4, 3, 0.5, 0.4),
    }
    warm_up = GroupSpikeSlabGibbs(n_iter=3, burn_in=1, n_chains=1, progress=False)
    warm_up.fit(np.random.default_rng(0).normal(size=(5, 4)), np.ones(5))  # load the compiled sweep
    print("\n## EP against Gibbs at matched accuracy of P(z_g = 1 | y) (3 Gibbs chains per budget; median)")
    print("| problem | seed | EP time (s) | EP max abs error | Gibbs sweeps to reach it | Gibbs time (s) "
          "| Gibbs / EP |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    budgets = (25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600)
    summary = {}
    for label, (n, n_groups, size, n_active, noise, scale) in settings.items():
        ratios = []
        for seed in range(3):
            rng = np.random.default_rng(seed)
            X = rng.normal(size=(n, n_groups * size))
            groups = np.repeat(np.arange(n_groups), size)
            w = np.zeros(n_groups * size)
            for g in rng.choice(n_groups, n_active, replace=False):
                w[groups == g] = scale * rng.normal(size=size)
            y = X @ w + np.sqrt(noise) * rng.normal(size=n)
            p0, vs = np.full(n_groups, n_active / n_groups), np.ones(n_groups)
            exact = exact_posterior(X, y, groups, p0, vs, noise)
            ep_time, ep = _best_time(lambda X=X, y=y, groups=groups, p0=p0, vs=vs, noise=noise:
                                     expectation_propagation(X, y, groups, p0, vs, noise, warn=False))  # fmt: skip
            ep_error = float(np.max(np.abs(ep.group_inclusion_probabilities - exact.group_inclusion_probabilities)))
            target = max(ep_error, 1e-3)
            sweeps = gibbs_time = None
            for n_iter in budgets:
                errors, times = [], []
                for chain_seed in range(3):
                    sampler = GroupSpikeSlabGibbs(groups=size, prior_inclusion=n_active / n_groups,
                                                  noise_variance=noise, fit_intercept=False, n_iter=n_iter + 10,
                                                  burn_in=10, n_chains=1, random_state=chain_seed,
                                                  progress=False)  # fmt: skip
                    start = time.perf_counter()
                    sampler.fit(X, y)
                    times.append(time.perf_counter() - start)
                    errors.append(np.max(np.abs(sampler.group_inclusion_probabilities_
                                                - exact.group_inclusion_probabilities)))  # fmt: skip
                if np.median(errors) <= target:
                    sweeps, gibbs_time = n_iter, float(np.median(times))
                    break
            if sweeps is None:
                print(f"| {label} | {seed} | {ep_time:.5f} | {ep_error:.1e} | > {budgets[-1]} | - | - |")
                continue
            ratios.append(gibbs_time / ep_time)
            print(f"| {label} | {seed} | {ep_time:.5f} | {ep_error:.1e} (target {target:.0e}) | {sweeps} | "
                  f"{gibbs_time:.4f} | {gibbs_time / ep_time:.0f} |")
        summary[label] = np.median(ratios) if ratios else float("nan")
    for label, ratio in summary.items():
        print(f"median Gibbs / EP time ratio, {label}: {ratio:.0f}")


def ep_against_gibbs_at_reconstruction_size(budgets=(20, 40, 80, 160, 320, 640, 1280)):
    """Matched accuracy at d = 512 against a long Gibbs reference run (3 short chains per budget; median)."""
    from hdbayes.datasets.regression import simulate_block_sparse
    from hdbayes.spike_slab import GroupSpikeSlabGibbs, expectation_propagation

    groups, p0, vs, noise = np.repeat(np.arange(128), 4), np.full(128, 10 / 128), np.ones(128), 0.005**2
    print("\n## EP against Gibbs at d = 512 (block-sparse, 10 of 128 groups active); reference: 2 × 4000 sweeps")
    print("| n | EP time (s) | EP max abs error | Gibbs sweeps (burn-in 1/4) → median max abs error, time / EP |")
    print("|---:|---:|---:|---|")
    for n in (60, 80, 100):
        data = simulate_block_sparse(n_samples=n, n_features=512, group_size=4, n_active_groups=10, random_state=1)

        def gibbs(n_iter, burn_in, n_chains, seed, data=data):
            return GroupSpikeSlabGibbs(groups=4, prior_inclusion=10 / 128, noise_variance=noise, fit_intercept=False,
                                       n_iter=n_iter, burn_in=burn_in, n_chains=n_chains, random_state=seed,
                                       progress=False).fit(data.X, data.y)  # fmt: skip

        reference = gibbs(4000, 500, 2, 99).group_inclusion_probabilities_
        ep_time, ep = _best_time(lambda data=data: expectation_propagation(data.X, data.y, groups, p0, vs, noise,
                                                                          warn=False))  # fmt: skip
        ep_error = float(np.max(np.abs(ep.group_inclusion_probabilities - reference)))
        cells = []
        for n_iter in budgets:
            errors, times = [], []
            for seed in range(3):
                start = time.perf_counter()
                sampler = gibbs(n_iter, n_iter // 4, 1, seed)
                times.append(time.perf_counter() - start)
                errors.append(np.max(np.abs(sampler.group_inclusion_probabilities_ - reference)))
            cells.append(f"{n_iter} → {np.median(errors):.0e}, {np.median(times) / ep_time:.0f}×")
        print(f"| {n} | {ep_time:.4f} | {ep_error:.1e} | {'; '.join(cells)} |")


def large_scale(n=500, d=100_000):
    from hdbayes.spike_slab import expectation_propagation

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    groups = np.arange(d) // 4
    n_groups = d // 4
    w = np.zeros(d)
    w[np.isin(groups, rng.choice(n_groups, 25, replace=False))] = rng.standard_normal(100)
    y = X @ w + 0.005 * rng.standard_normal(n)
    v = rng.uniform(0.1, 1.0, d)
    reference, _ = _best_time(lambda: (X * v) @ X.T, repeats=2)
    p0, vs = np.full(n_groups, 25 / n_groups), np.ones(n_groups)
    times = {}
    tracemalloc.start()
    for iterations in (2, 6):
        start = time.perf_counter()
        result = expectation_propagation(X, y, groups, p0, vs, 0.005**2, max_iter=iterations, tol=0.0, restarts=False,
                                    annealing=False, warn=False)  # one attempt: the iterations themselves
        times[iterations] = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per_iteration = (times[6] - times[2]) / 4
    print(f"\n## n = {n}, d = {d} (Woodbury path)")
    print(f"one (X * v) @ X.T: {reference:.3f} s; one EP iteration: {per_iteration:.3f} s; "
          f"ratio {per_iteration / reference:.2f}")
    print(f"peak memory allocated by EP (tracemalloc, X itself excluded): {peak / 2**20:.0f} MiB = "
          f"{peak / (8 * n * d):.2f} × n·d doubles (n² doubles = {8 * n * n / 2**20:.1f} MiB); "
          f"a d × d matrix would take {8 * d * d / 2**30:.0f} GiB")
    print(f"relative error after 6 iterations: {np.linalg.norm(result.mean - w) / np.linalg.norm(w):.3f}")


def _time_per_iteration(n, d, rng):
    """CPU seconds of one EP iteration (Woodbury path) on block-sparse data of n cases and d features: the time of
    10 iterations minus that of 2, over 8, each the best of 3 (the set-up and the first iterations' work cancel)."""
    from hdbayes.spike_slab import expectation_propagation

    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    groups = np.arange(d) // 4
    n_groups = d // 4
    w = np.zeros(d)
    w[np.isin(groups, rng.choice(n_groups, 10, replace=False))] = rng.standard_normal(40)
    y = X @ w + 0.005 * rng.standard_normal(n)
    p0, vs = np.full(n_groups, 10 / n_groups), np.ones(n_groups)
    times = {}
    for iterations in (2, 10):
        best = np.inf
        for _ in range(3):  # CPU seconds of this process (BLAS single-threaded): a busy machine does not inflate them
            start = time.process_time()
            expectation_propagation(X, y, groups, p0, vs, 0.005**2, max_iter=iterations, tol=0.0, restarts=False,
                                    annealing=False, warn=False)  # one attempt: the iterations themselves
            best = min(best, time.process_time() - start)
        times[iterations] = best
    return (times[10] - times[2]) / 8


def cost_scaling(ds=(2000, 4000, 8000, 16000, 32000), ns=(100, 200, 400, 800), n_fixed=200, d_fixed=16000):
    """The paper's "O(n²d)": slopes of log(time per iteration) on log d (n fixed) and on log n (d fixed)."""
    rng = np.random.default_rng(0)
    print(f"\n## Cost of one EP iteration against d (n = {n_fixed}) and against n (d = {d_fixed})")
    print("| varied | value | CPU s per iteration |\n|---|---:|---:|")
    by_d = [_time_per_iteration(n_fixed, d, rng) for d in ds]
    for d, t in zip(ds, by_d, strict=True):
        print(f"| d | {d} | {t:.4f} |")
    by_n = [_time_per_iteration(n, d_fixed, rng) for n in ns]
    for n, t in zip(ns, by_n, strict=True):
        print(f"| n | {n} | {t:.4f} |")
    slope_d = np.polyfit(np.log(ds), np.log(by_d), 1)[0]
    slope_n = np.polyfit(np.log(ns), np.log(by_n), 1)[0]
    print(f"slope of log time on log d: {slope_d:.2f} (the paper: 1); on log n: {slope_n:.2f} (the paper: at most 2; "
          "the O(nd) terms weigh more at small n)")
    return slope_d, slope_n


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-large", action="store_true", help="skip the n = 500, d = 100 000 case")
    parser.add_argument("--skip-cost", action="store_true", help="skip the cost against d and n")
    parser.add_argument("--only-cost", action="store_true", help="run only the cost against d and n")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        if args.only_cost:
            cost_scaling()
            return
        reconstruction()
        ep_against_gibbs()
        ep_against_gibbs_at_reconstruction_size()
        if not args.skip_large:
            large_scale()
        if not args.skip_cost:
            cost_scaling()


if __name__ == "__main__":
    main()
