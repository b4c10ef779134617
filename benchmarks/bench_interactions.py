"""Speed of grouping interaction patterns into superpatterns (Li & Neal; thesis ch. 3).

Run from the project root:

    .venv/bin/python benchmarks/bench_interactions.py

Times (best of 3, after a warm-up that compiles the numba kernels):
* grouping 100 000 sequence histories at order 20 (the HMM generator of spec §5.2);
* grouping 500 classification cases × 7 features with 3 values at order 7;
and, for the 500 HMM training histories, the number of original against compressed
parameters at every order.
"""

from __future__ import annotations

import time

import numpy as np

from hdbayes.datasets import simulate_hmm
from hdbayes.interactions.patterns import count_parameters, group_classification_patterns, group_sequence_patterns


def best_time(function, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main():
    hmm = simulate_hmm(n_train=100_000, n_test=1, random_state=0)
    classification = np.random.default_rng(0).integers(0, 3, size=(500, 7))
    group_sequence_patterns(hmm.X_train[:100], 20)
    group_classification_patterns(classification[:50], 7)
    seconds, grouping = best_time(lambda: group_sequence_patterns(hmm.X_train, 20))
    print(f"sequences: 100000 histories, order 20: {seconds:.2f} s, {grouping.n_groups} groups, "
          f"{grouping.n_patterns} patterns")  # fmt: skip
    seconds, grouping = best_time(lambda: group_classification_patterns(classification, 7))
    print(f"classification: 500 cases x 7 features (3 values), order 7: {seconds:.3f} s, "
          f"{grouping.n_groups} groups, {grouping.n_patterns} patterns")  # fmt: skip
    small = simulate_hmm(n_train=500, n_test=1, random_state=0)
    print("\n| order | original | compressed | ratio |\n|---:|---:|---:|---:|")
    for order in (1, 5, 10, 15, 20):
        original, compressed = count_parameters(small.X_train, order, kind="sequence")
        print(f"| {order} | {original} | {compressed} | {compressed / original:.3f} |")


if __name__ == "__main__":
    main()
