"""Weak signal among many genes: is the recommended classifier ever worse than knowing nothing?

Data from :func:`hdbayes.datasets.simulate_probit`: p = 2000 independent N(0, 1) genes, 10 of them carrying a
(multinomial) probit signal whose class latents have sd 2; n training cases, 500 test cases, three data seeds
per setting. Settings: n in {50, 100, 200} x C in {2, 4, 10} classes.

Methods (labels fixed):

``hdbayes``
    ``hdbayes.BayesianLinearClassifier()`` with its defaults.
``class_frequencies``
    Predicts the training class frequencies, smoothed by one case per class ((n_c + 1) / (n + C)), for every
    test case: what a classifier that knows nothing about the genes can do.
``logistic_all``
    ``StandardScaler()`` + ``LogisticRegressionCV(scoring="neg_log_loss")`` on all genes, as in
    ``bench_microarray.py``.

Extra variants of the recommended classifier: ``--variant NAME='{"hyperparameters": "average"}'`` (JSON
parameters, repeatable).

Every fit and prediction runs with BLAS held to one thread (threadpoolctl), so the CPU seconds compare.

Run from the project root::

    .venv/bin/python benchmarks/bench_weak_signal.py --out weak.csv            # every setting (about 15 min)
    .venv/bin/python benchmarks/bench_weak_signal.py --n 50 --classes 2 --seeds 0   # one cell, seconds

Target of the recommended classifier (stated before any run): in every setting its AMLP (mean over the three
data seeds) is at most the class-frequency prediction's + 0.02, and at most ``logistic_all``'s + 0.02. The summary
prints both margins per setting.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from hdbayes import BayesianLinearClassifier
from hdbayes.datasets import simulate_probit
from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate

N_FEATURES = 2000
N_INFORMATIVE = 10
SIGNAL_SD = 2.0
N_TEST = 500
MARGIN = 0.02
COLUMNS = ["n", "classes", "seed", "method", "amlp", "error", "expected_error", "cpu_s"]


def class_frequencies(y_train, n_classes, n_test):
    counts = np.bincount(y_train, minlength=n_classes) + 1.0
    return np.tile(counts / counts.sum(), (n_test, 1))


def predict(method, params, X, y, X_test, n_classes, seed):
    """Probabilities of every class (columns 0..C-1) at the test cases."""
    if method == "class_frequencies":
        return class_frequencies(y, n_classes, len(X_test))
    if method == "logistic_all":
        from sklearn.linear_model import LogisticRegressionCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        model = make_pipeline(StandardScaler(), LogisticRegressionCV(scoring="neg_log_loss"))
    else:
        model = BayesianLinearClassifier(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
        P_fit = model.predict_proba(X_test)
    P = np.zeros((len(X_test), n_classes))
    P[:, np.asarray(model.classes_)] = P_fit  # a class absent from the training cases gets 0
    return P


def run(ns, classes, seeds, methods, out=None):
    rows = []
    writer = None
    if out is not None:
        handle = open(out, "w", newline="")  # noqa: SIM115
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
    for n in ns:
        for n_classes in classes:
            for seed in seeds:
                data = simulate_probit(n_classes, N_FEATURES, n, N_TEST, n_informative=N_INFORMATIVE,
                                       signal_sd=SIGNAL_SD, random_state=seed)  # fmt: skip
                for method, params in methods.items():
                    start = time.process_time()
                    with threadpool_limits(limits=1, user_api="blas"):
                        P = predict(method if method in ("class_frequencies", "logistic_all") else "hdbayes",
                                    params, data.X, data.y, data.X_test, n_classes, seed)  # fmt: skip
                    cpu = time.process_time() - start
                    P_clipped = np.maximum(P, 1e-15)
                    row = {"n": n, "classes": n_classes, "seed": seed, "method": method,
                           "amlp": average_minus_log_probability(data.y_test, P_clipped),
                           "error": error_rate(data.y_test, P), "expected_error": expected_error_rate(P),
                           "cpu_s": cpu}  # fmt: skip
                    rows.append(row)
                    if writer is not None:
                        writer.writerow([f"{row[c]:.6g}" if isinstance(row[c], float) else row[c] for c in COLUMNS])
                        handle.flush()
                    print(f"n={n} C={n_classes} seed={seed} {method}: AMLP {row['amlp']:.3f} "
                          f"({cpu:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
    if writer is not None:
        handle.close()
    return rows


def summarize(rows):
    """Mean AMLP over the seeds per (n, C, method), and the target's two margins for every method not a peer."""
    table = {}
    for row in rows:
        table.setdefault((int(row["n"]), int(row["classes"])), {}).setdefault(row["method"], []).append(
            float(row["amlp"]))
    methods = sorted({row["method"] for row in rows}, key=lambda m: (m != "hdbayes", m))
    lines = ["| n | C | " + " | ".join(methods) + " | target met (hdbayes) |",
             "|---:|---:|" + "---:|" * len(methods) + "---|"]  # fmt: skip
    met_all = True
    for (n, n_classes), cell in sorted(table.items()):
        means = {m: float(np.mean(cell[m])) for m in methods if m in cell}
        verdict = ""
        if {"hdbayes", "class_frequencies", "logistic_all"} <= set(means):
            ok = (means["hdbayes"] <= means["class_frequencies"] + MARGIN
                  and means["hdbayes"] <= means["logistic_all"] + MARGIN)  # fmt: skip
            met_all &= ok
            verdict = "yes" if ok else "no"
        lines.append(f"| {n} | {n_classes} | " + " | ".join(f"{means[m]:.3f}" if m in means else "" for m in methods)
                     + f" | {verdict} |")  # fmt: skip
    return "\n".join(lines), met_all


def _read(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 4, 10])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--methods", nargs="+", default=["hdbayes", "class_frequencies", "logistic_all"])
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=JSON",
                        help="an extra variant of BayesianLinearClassifier (its parameters as JSON)")
    parser.add_argument("--out", help="CSV of every (n, C, seed, method)")
    parser.add_argument("--summary", help="summarise an existing CSV instead of running")
    args = parser.parse_args(argv)
    if args.summary:
        text, _ = summarize(_read(args.summary))
        print(text)
        return 0
    methods = {method: {} for method in args.methods}
    for variant in args.variant:
        name, _, params = variant.partition("=")
        methods[name] = json.loads(params)
    rows = run(args.n, args.classes, args.seeds, methods, args.out)
    text, _ = summarize(rows)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
