"""Compressed interaction models against the peers a user would otherwise pick.

Run from the project root (needs ``pip install -e ".[bench]"`` for nltk):

    .venv/bin/python benchmarks/bench_compression.py [--orders 5 10 20] [--n-iter 2000]

* Sequences (HMM data of thesis §3.4.3, 500 training / 5000 test histories): ``CompressedSequenceModel``
  (Cauchy, compressed and uncompressed) against nltk's interpolated Kneser–Ney n-gram model of the
  same order, trained on the same 500 sequences (for a context never seen in training, nltk divides
  by zero; the benchmark then backs off to the longest seen suffix); average minus log probability of the next symbol,
  error rate and time.
* Classification (Cauchy-model data of thesis §3.5.3, 500 / 5000 cases): ``CompressedInteractionClassifier``
  against scikit-learn's ``LogisticRegression`` on one-hot interaction features up to the same order
  (``OneHotEncoder`` + ``PolynomialFeatures(interaction_only=True)``, C chosen by 5-fold CV on log loss).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegressionCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures

from hdbayes import CompressedInteractionClassifier, CompressedSequenceModel
from hdbayes.datasets import simulate_cauchy_classification, simulate_hmm
from hdbayes.metrics import average_minus_log_probability, error_rate


def kneser_ney(X, y, X_test, order):
    from nltk.lm import KneserNeyInterpolated

    sentences = [[str(v) for v in row] + [str(t)] for row, t in zip(X, y)]
    ngrams = [
        [tuple(s[i - n + 1 : i + 1]) for n in range(1, order + 2) for i in range(n - 1, len(s))] for s in sentences
    ]
    model = KneserNeyInterpolated(order + 1)
    model.fit(ngrams, vocabulary_text=["0", "1"])
    proba = np.empty((X_test.shape[0], 2))
    for i, row in enumerate(X_test):
        context = [str(v) for v in row[-order:]]
        while True:
            try:  # nltk divides by zero for a context never seen in training: back off by one symbol
                scores = np.array([model.score(symbol, context) for symbol in ("0", "1")])
                break
            except ZeroDivisionError:
                context = context[1:]
        proba[i] = scores / scores.sum()
    return proba


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orders", type=int, nargs="*", default=[5, 10, 20])
    parser.add_argument("--n-iter", type=int, default=2000)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)  # scikit-learn's parameter transitions
    mcmc = dict(n_iter=args.n_iter, burn_in=args.n_iter * 3 // 8, thin=5, random_state=0)

    hmm = simulate_hmm(n_samples=500, n_test=5000, random_state=0)
    print("## Sequences (HMM)\n\n| order | method | AMLP | error | seconds |\n|---:|---:|---:|---:|---:|")
    for order in args.orders:
        for compress in (True, False):
            model = CompressedSequenceModel(order=order, compress=compress, **mcmc)
            proba, seconds = timed(lambda: model.fit(hmm.X, hmm.y).predict_proba(hmm.X_test))
            name = "Bayes, compressed" if compress else "Bayes, uncompressed"
            print(f"| {order} | {name} | {average_minus_log_probability(hmm.y_test, proba):.4f} | "
                  f"{error_rate(hmm.y_test, proba):.4f} | {seconds:.1f} |")  # fmt: skip
        proba, seconds = timed(lambda: kneser_ney(hmm.X, hmm.y, hmm.X_test, order))
        print(f"| {order} | Kneser–Ney (nltk) | {average_minus_log_probability(hmm.y_test, proba):.4f} | "
              f"{error_rate(hmm.y_test, proba):.4f} | {seconds:.1f} |")  # fmt: skip

    data = simulate_cauchy_classification(n_samples=500, n_test=5000, random_state=0)
    print("\n## Classification (Cauchy model, true order 4)\n")
    print("| order | method | AMLP | error | seconds |\n|---:|---:|---:|---:|---:|")
    for order in (1, 2, 3, 4):
        model = CompressedInteractionClassifier(order=order, **mcmc)
        proba, seconds = timed(lambda: model.fit(data.X, data.y).predict_proba(data.X_test))
        print(f"| {order} | Bayes, compressed | {average_minus_log_probability(data.y_test, proba):.4f} | "
              f"{error_rate(data.y_test, proba):.4f} | {seconds:.1f} |")  # fmt: skip
        logistic = make_pipeline(
            OneHotEncoder(handle_unknown="ignore"),
            PolynomialFeatures(degree=order, interaction_only=True, include_bias=False),
            LogisticRegressionCV(Cs=10, cv=5, scoring="neg_log_loss", max_iter=2000),
        )
        proba, seconds = timed(lambda: logistic.fit(data.X, data.y).predict_proba(data.X_test))
        print(f"| {order} | LogisticRegressionCV, one-hot interactions | "
              f"{average_minus_log_probability(data.y_test, proba):.4f} | {error_rate(data.y_test, proba):.4f} | "
              f"{seconds:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
