"""Speed of BiasCorrectedMixture (thesis §2.4), corrected against uncorrected.

Run from the project root:

    .venv/bin/python benchmarks/bench_mixture.py [--full]

Prints the time of 50 Gibbs iterations at k = 1, 10, 100, 1000 on the thesis's simulated
data (p = 10000, n = 200), corrected and uncorrected — the quantity of thesis Table 2.4 — and,
with ``--full``, the time of the whole paper-size experiment (``hdbayes reproduce
mixture-simulation --full``). Numba compilation is excluded by a warm-up fit.
"""

from __future__ import annotations

import argparse
import time

from hdbayes import BiasCorrectedMixture
from hdbayes.datasets import simulate_mixture

THESIS_SECONDS = {1: (70, 3324), 10: (82, 2648), 100: (193, 2881), 1000: (1277, 4300)}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="also time the whole paper-size experiment")
    args = parser.parse_args()
    data = simulate_mixture(n_features=10000, n_samples=200, n_test=10, random_state=0)
    BiasCorrectedMixture(n_features_to_select=5, n_iter=2, burn_in=0, thin=1).fit(data.X[:, :100], data.y)
    print("| k | uncorrected s | corrected s | corrected / uncorrected | thesis (pure R) uncorrected / corrected s |")
    print("|---:|---:|---:|---:|---:|")
    for k, (thesis_u, thesis_c) in THESIS_SECONDS.items():
        seconds = {}
        for correct in (False, True):
            start = time.perf_counter()
            model = BiasCorrectedMixture(
                n_features_to_select=k, correct=correct, n_iter=50, burn_in=10, thin=2, random_state=0
            )
            model.fit(data.X, data.y)
            seconds[correct] = time.perf_counter() - start
        ratio = seconds[True] / seconds[False]
        print(f"| {k} | {seconds[False]:.2f} | {seconds[True]:.2f} | {ratio:.2f} | {thesis_u} / {thesis_c} |")
    if args.full:
        from hdbayes.experiments import mixture_simulation

        start = time.perf_counter()
        mixture_simulation.run(full=True, progress=False)
        print(
            f"\nWhole paper-size experiment (4 k × 2 methods, 400 iterations each): {time.perf_counter() - start:.0f} s"
        )


if __name__ == "__main__":
    main()
