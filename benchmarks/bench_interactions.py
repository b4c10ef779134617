"""Speed of grouping interaction patterns into superpatterns (Li & Neal; thesis ch. 3).

Run from the project root:

    .venv/bin/python benchmarks/bench_interactions.py

Times (best of 3, after a warm-up that compiles the numba kernels):
* grouping 100 000 sequence histories at order 20 (the HMM generator of thesis §3.4.3);
* grouping 500 classification cases × 7 features with 3 values at order 7;
and, for the 500 HMM training histories, the number of original against compressed
parameters at every order, and the training time of ``CompressedSequenceModel`` at order 20
(Cauchy, 2000 iterations, one chain) compressed and uncompressed: in all, and without the
σ_o updates (the module constant ``N_SIGMA_UPDATES`` set to 0, for the breakdown only), with
the number of case visits of one sweep of the coefficient updates, Σ_g |E_g|. Times are CPU
seconds of this process (best of 3), so a busy second core inflates them less than wall time.

    .venv/bin/python benchmarks/bench_interactions.py [--n-iter 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import hdbayes.interactions.models as models
from hdbayes.datasets import simulate_hmm
from hdbayes.interactions.patterns import count_parameters, group_classification_patterns, group_sequence_patterns


def best_time(function, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def model_times(X, y, order, n_iter, repeat=3):
    """CPU seconds (best of ``repeat``) of compressed and uncompressed fits, with and without the σ_o updates."""
    rows = []
    default = models.N_SIGMA_UPDATES
    try:
        for n_sigma_updates in (default, 0):
            models.N_SIGMA_UPDATES = n_sigma_updates
            for compress in (True, False):
                model = models.CompressedSequenceModel(
                    order=order, compress=compress, n_iter=n_iter, burn_in=n_iter // 4, thin=5, random_state=0
                )
                model.fit(X[:20], y[:20])  # warm-up: load the compiled kernels
                seconds = np.inf
                for _ in range(repeat):
                    start = time.process_time()
                    model.fit(X, y)
                    seconds = min(seconds, time.process_time() - start)
                params = model.grouping_ if compress else model.expanded_
                rows.append((n_sigma_updates, compress, seconds, params.n_groups, int(params.case_indptr[-1])))
    finally:
        models.N_SIGMA_UPDATES = default
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-iter", type=int, default=2000)
    args = parser.parse_args()
    hmm = simulate_hmm(n_samples=100_000, n_test=1, random_state=0)
    classification = np.random.default_rng(0).integers(0, 3, size=(500, 7))
    group_sequence_patterns(hmm.X[:100], 20)
    group_classification_patterns(classification[:50], 7)
    seconds, grouping = best_time(lambda: group_sequence_patterns(hmm.X, 20))
    print(f"sequences: 100000 histories, order 20: {seconds:.2f} s, {grouping.n_groups} groups, "
          f"{grouping.n_patterns} patterns")  # fmt: skip
    seconds, grouping = best_time(lambda: group_classification_patterns(classification, 7))
    print(f"classification: 500 cases x 7 features (3 values), order 7: {seconds:.3f} s, "
          f"{grouping.n_groups} groups, {grouping.n_patterns} patterns")  # fmt: skip
    small = simulate_hmm(n_samples=500, n_test=1, random_state=0)
    print("\n| order | original | compressed | ratio |\n|---:|---:|---:|---:|")
    for order in (1, 5, 10, 15, 20):
        original, compressed = count_parameters(small.X, order, kind="sequence")
        print(f"| {order} | {original} | {compressed} | {compressed / original:.3f} |")
    rows = model_times(small.X, small.y, 20, args.n_iter)
    print(f"\nCompressedSequenceModel, HMM, order 20, {args.n_iter} iterations (CPU seconds)\n")
    print("| σ updates per iteration | parameters | fit s | case visits per sweep |\n|---|---|---:|---:|")
    for n_sigma_updates, compress, seconds, n_params, visits in rows:
        label = "compressed" if compress else "uncompressed"
        print(f"| {n_sigma_updates} | {n_params} ({label}) | {seconds:.2f} | {visits} |")
    by = {(r[0], r[1]): r[2] for r in rows}
    full, coef = models.N_SIGMA_UPDATES, 0
    print(f"\ncompressed / uncompressed: {by[full, True] / by[full, False]:.3f} in all, "
          f"{by[coef, True] / by[coef, False]:.3f} without the σ updates")  # fmt: skip


if __name__ == "__main__":
    main()
