"""Speed and memory of BiasCorrectedNaiveBayes, against scikit-learn's BernoulliNB.

Run from the project root (the colon part needs HDBAYES_DATA or a download):

    HDBAYES_DATA=../shared/data .venv/bin/python benchmarks/bench_naive_bayes.py

Prints markdown tables (paste them into BENCHMARKS.md). Times are the best of
``--repeat`` runs after a warm-up (numba compilation is excluded); the p = 10^6
case runs in a child process so that its peak resident memory can be read.

``--scaling 1000 2000 5000 20000`` times instead one fit of
``BiasCorrectedNaiveBayes(n_features_to_select=10)`` per number of cases n (balanced classes, binary
X with p = ``--scaling-p`` features, 20 of them informative), each in a child process (peak memory),
and log q(α) alone at the fit's α nodes with cold caches (the lattice's runs and the θ rule included),
and, up to ``--scaling-exact-up-to`` cases, its difference from the exact θ rule in (p − k) log q.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np
from sklearn.model_selection import LeaveOneOut
from sklearn.naive_bayes import BernoulliNB

from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.datasets import load_colon, simulate_naive_bayes
from hdbayes.metrics import average_minus_log_probability
from hdbayes.selection import select_features


def best_time(function, repeat):
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def fit_predict(model, X_train, y_train, X_test):
    return model.fit(X_train, y_train).predict_proba(X_test)[:, 1]


def simulation(repeat):
    data = simulate_naive_bayes(random_state=0)
    ks = (1, 10, 100, 1000, 10000)
    fit_predict(BiasCorrectedNaiveBayes(n_features_to_select=10), data.X, data.y, data.X_test)  # compile
    rows, total = [], 0.0
    for k in ks:
        row = {"k": k}
        for correct in (True, False):
            model = BiasCorrectedNaiveBayes(n_features_to_select=k, correct=correct, random_state=0)
            seconds, proba = best_time(lambda: fit_predict(model, data.X, data.y, data.X_test), repeat)
            key = "corrected" if correct else "uncorrected"
            row[f"{key}_s"] = seconds
            row[f"{key}_amlp"] = average_minus_log_probability(data.y_test, proba)
            total += seconds
        # scikit-learn's BernoulliNB (Laplace smoothing) on the same selected features
        selected = model.selected_features_
        bnb = BernoulliNB(alpha=1.0, binarize=None)
        seconds, proba = best_time(
            lambda: fit_predict(bnb, data.X[:, selected], data.y, data.X_test[:, selected]), repeat
        )
        row["bernoulli_nb_s"] = seconds
        row["bernoulli_nb_amlp"] = average_minus_log_probability(data.y_test, proba)
        row["corrected/uncorrected"] = row["corrected_s"] / row["uncorrected_s"]
        rows.append(row)
    return rows, total


def colon(repeat):
    data = load_colon(binarize=True)
    X, y = data.X, data.y  # int8 0/1 with binarize=True
    folds = list(LeaveOneOut().split(X))

    def loocv(correct):
        proba = np.empty(y.shape[0])
        for train, test in folds:
            model = BiasCorrectedNaiveBayes(n_features_to_select=5, correct=correct, random_state=0)
            model.fit(X[train], y[train])
            proba[test] = model.predict_proba(X[test])[:, 1]
        return proba

    def loocv_bernoulli():
        proba = np.empty(y.shape[0])
        for train, test in folds:
            selected = select_features(X[train], y[train], n_features_to_select=5, random_state=0).indices
            model = BernoulliNB(alpha=1.0, binarize=None).fit(X[train][:, selected], y[train])
            proba[test] = model.predict_proba(X[test][:, selected])[:, 1]
        return proba

    loocv(True)  # warm-up
    rows = []
    for name, function in (
        ("corrected", lambda: loocv(True)),
        ("uncorrected", lambda: loocv(False)),
        ("BernoulliNB (same selection)", loocv_bernoulli),
    ):
        seconds, proba = best_time(function, repeat)
        rows.append({"method": name, "seconds_for_62_fits": seconds, "amlp": average_minus_log_probability(y, proba)})
    return rows


CHILD = r"""
import json, resource, sys, time
import numpy as np
from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.datasets import simulate_naive_bayes
p, n_test = int(sys.argv[1]), int(sys.argv[2])
data = simulate_naive_bayes(n_features=p, n_samples=200, n_test=n_test, random_state=0, sparse=True)
BiasCorrectedNaiveBayes(n_features_to_select=5).fit(data.X[:, :1000], data.y)  # compile outside the timing
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
model = BiasCorrectedNaiveBayes(n_features_to_select=1000).fit(data.X, data.y)
proba = model.predict_proba(data.X_test)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"p": p, "nnz_train": int(data.X.nnz), "seconds": seconds,
                  "peak_rss_mb": peak / 1024, "rss_before_fit_mb": before / 1024}))
"""


def wide(p, n_test):
    out = subprocess.run([sys.executable, "-c", CHILD, str(p), str(n_test)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


SCALING_CHILD = r"""
import json, resource, sys, time
import numpy as np
from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.selection_bias import adjustment
n, p = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
y = np.repeat([0, 1], [n - n // 2, n // 2])
X = (rng.random((n, p)) < 0.5).astype(np.int8)
X[:, :20] ^= (rng.random((n, 20)) < 0.3).astype(np.int8) * y[:, None].astype(np.int8)  # 20 informative
few = np.r_[0:30, n - 30:n]
BiasCorrectedNaiveBayes(n_features_to_select=10).fit(X[few], y[few])  # compile outside the timing
adjustment.exact_theta_rule.cache_clear()
adjustment._discarded_runs_csr.cache_clear()
calls = []
original = adjustment.naive_bayes_log_discard_probability
import hdbayes.selection_bias.naive_bayes as module
def counted(alpha, *args, **kwargs):
    calls.append(len(alpha))
    return original(alpha, *args, **kwargs)
module.naive_bayes_log_discard_probability = counted
start = time.perf_counter()
model = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(X, y)
fit = time.perf_counter() - start
module.naive_bayes_log_discard_probability = original
adjustment.exact_theta_rule.cache_clear()
adjustment._discarded_runs_csr.cache_clear()
selection = model.selection_
n0, n1 = int(np.sum(y == 0)), int(np.sum(y == 1))
tolerance = module._ADJUSTMENT_TOLERANCE / selection.n_discarded
start = time.perf_counter()
log_q = original(model.alpha_grid_, n0, n1, selection.threshold, strict=selection.strict, tolerance=tolerance)
alone = time.perf_counter() - start
np.testing.assert_allclose(selection.n_discarded * log_q, model.log_adjustment_, rtol=1e-12, atol=1e-12)
row = {"n": n, "p": p, "fit_s": fit, "log_q_alone_s": alone, "alpha_nodes": int(sum(calls)),
       "alpha_batches": len(calls), "exact_theta_nodes": int(adjustment.exact_points(n))}
if n <= int(sys.argv[3]):  # the error of the default against the exact rule, in (p − k) log q
    start = time.perf_counter()
    exact = original(model.alpha_grid_, n0, n1, selection.threshold, strict=selection.strict)
    row["log_q_exact_rule_s"] = time.perf_counter() - start
    row["max_(p-k)|dlog_q|"] = float(np.max(np.abs(selection.n_discarded * (log_q - exact))))
row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(row))
"""


def scaling(sizes, p, exact_up_to):
    rows = []
    for n in sizes:
        out = subprocess.run(
            [sys.executable, "-c", SCALING_CHILD, str(n), str(p), str(exact_up_to)], capture_output=True, text=True
        )
        if out.returncode:
            raise RuntimeError(f"n = {n}: {out.stderr}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(markdown(rows[-1:]), flush=True)
    return rows


def markdown(rows):
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row.values()) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--wide-p", type=int, default=1_000_000)
    parser.add_argument("--skip", nargs="*", default=(), choices=("simulation", "colon", "wide"))
    parser.add_argument("--scaling", nargs="+", type=int, metavar="N", help="only the fit time at these n")
    parser.add_argument("--scaling-p", type=int, default=2000)
    parser.add_argument("--scaling-exact-up-to", type=int, default=5000, help="compare with the exact θ rule")
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
        f"numpy {np.__version__}\n"
    )
    if args.scaling:
        print(f"## Fit time against n (p = {args.scaling_p}, k = 10; load: {os.getloadavg()[0]:.1f})\n")
        print(markdown(scaling(args.scaling, args.scaling_p, args.scaling_exact_up_to)))
        return
    if "simulation" not in args.skip:
        rows, total = simulation(args.repeat)
        print("## Simulation (thesis §2.3.5): fit + predict 2000 test cases\n")
        print(markdown(rows))
        print(f"\nAll 10 fits (5 k × corrected/uncorrected): {total:.2f} s\n")
    if "colon" not in args.skip:
        print("## Colon LOOCV: 62 fits on all 2000 genes, k = 5 selected inside each fold\n")
        print(markdown(colon(args.repeat)))
        print()
    if "wide" not in args.skip:
        result = wide(args.wide_p, 200)
        print(f"## Sparse p = {args.wide_p}, n = 200 (+200 test): selection + fit (k = 1000) + predict\n")
        print(markdown([result]))
    print(f"\n(benchmark process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
