"""Accuracy and cost of BiasCorrectedNaiveBayes's quadrature: the defaults and the thesis's rules
against a converged computation (the numbers in docs/naive_bayes.md, "Accuracy of the defaults").

Run from the project root (the colon part needs HDBAYES_DATA or a download):

    HDBAYES_DATA=../shared/data .venv/bin/python benchmarks/bench_quadrature.py [--colon-folds 62]

"Converged" is the adaptive α rule started at a quarter of the default spacing and refined to a
quarter of the final spacing, with Gauss–Legendre at twice the exact number of θ nodes. Prints a
markdown table: max |Δ P(y = 1)| over the test cases and fit + predict seconds (numba compilation
excluded by a warm-up fit), and the number of α nodes each rule used.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.datasets import load_colon, simulate_naive_bayes

RULES = {
    "thesis": {"alpha_rule": "midpoint", "theta_rule": "simpson"},
    "default": {},
}


def converged(n_train):
    return {"n_alpha": 4 * 64 - 3, "alpha_resolution": 1 / 16, "n_theta": 2 * ((n_train + 3) // 2)}


def fit_predict(X, y, X_test, k, correct, params):
    start = time.perf_counter()
    model = BiasCorrectedNaiveBayes(n_features_to_select=k, correct=correct, random_state=0, **params).fit(X, y)
    proba = model.predict_proba(X_test)[:, 1]
    return proba, time.perf_counter() - start, model.alpha_grid_.size


def compare(problems, k, correct):
    """problems: list of (X, y, X_test); returns {rule: (max |Δp|, seconds, α nodes of the last fit)}."""
    out = {}
    reference = [fit_predict(X, y, Xt, k, correct, converged(X.shape[0]))[0] for X, y, Xt in problems]
    for name, params in RULES.items():
        error, seconds, nodes = 0.0, 0.0, 0
        for (X, y, X_test), ref in zip(problems, reference):
            proba, elapsed, nodes = fit_predict(X, y, X_test, k, correct, params)
            error = max(error, float(np.abs(proba - ref).max()))
            seconds += elapsed
        out[name] = (error, seconds, nodes)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--colon-folds", type=int, default=6, help="leave-one-out folds of the colon data at k >= 10")
    args = parser.parse_args()
    data = simulate_naive_bayes(n_features=10000, n_samples=200, n_test=2000, random_state=0)
    fit_predict(data.X[:, :200], data.y, data.X_test[:5, :200], 5, True, {})  # compile
    print("| data | k | correct | thesis: max abs dp / s / α nodes | default: max abs dp / s / α nodes |")
    print("|---|---:|---|---:|---:|")

    def row(name, k, correct, result):
        cells = [f"{e:.1e} / {s:.2f} / {n}" for e, s, n in (result["thesis"], result["default"])]
        print(f"| {name} | {k} | {correct} | {cells[0]} | {cells[1]} |", flush=True)

    for k in (10, 100, 1000):
        for correct in (True, False):
            row("simulation", k, correct, compare([(data.X, data.y, data.X_test)], k, correct))
    colon = load_colon(binarize=True)
    X, y = np.asarray(colon.X), np.asarray(colon.y)
    for k in (4, 10, 100, 1000):
        folds = range(X.shape[0]) if k == 4 else np.linspace(0, X.shape[0] - 1, args.colon_folds).astype(int)
        problems = [(np.delete(X, i, axis=0), np.delete(y, i), X[i : i + 1]) for i in folds]
        for correct in (True, False):
            row(f"colon LOO ({len(problems)} folds)", k, correct, compare(problems, k, correct))


if __name__ == "__main__":
    main()
