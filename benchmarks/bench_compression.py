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

``--predict`` prints instead the CPU seconds of training and of ``predict_proba`` of the compressed
models (issue 28: prediction splits the touched groups' parameters for every saved sample and test case):

    .venv/bin/python benchmarks/bench_compression.py --predict [--n-test 5000] [--orders 5 20]

on the Cauchy-classification data (500 training cases, the classifier at each of ``--orders``, at most 7)
and the HMM data (500 training histories, order 20), Cauchy and Gaussian priors, ``--n-iter`` iterations
(2000: 250 saved samples). Compilation is excluded (a small fit and prediction run first).
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


def cpu_timed(function):
    start = time.process_time()
    result = function()
    return result, time.process_time() - start


def prediction_times(orders, n_test, mcmc):
    """Training and prediction CPU seconds of the compressed models (``--predict``)."""
    cauchy = simulate_cauchy_classification(n_samples=500, n_test=n_test, random_state=0)
    hmm = simulate_hmm(n_samples=500, n_test=n_test, random_state=0)
    classifier_orders = sorted({min(order, 7) for order in orders})  # the data have 7 features
    runs = [("Cauchy classification", CompressedInteractionClassifier, cauchy, order) for order in classifier_orders]
    runs.append(("HMM", CompressedSequenceModel, hmm, 20))
    print(f"## Training and prediction CPU seconds ({n_test} test cases)\n")
    print("| data | order | prior | saved samples | fit (CPU s) | predict_proba (CPU s) | predict / fit |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, estimator, data, order in runs:
        for prior in ("cauchy", "gaussian"):
            small = estimator(order=order, prior=prior, n_iter=20, burn_in=5, thin=5, random_state=0)
            small.fit(data.X[:60], data.y[:60]).predict_proba(data.X_test[:20])  # compile outside the timings
            model = estimator(order=order, prior=prior, **mcmc)
            _, fit = cpu_timed(lambda: model.fit(data.X, data.y))
            _, predict = cpu_timed(lambda: model.predict_proba(data.X_test))
            n_saved = model.trace_.flat("s").shape[0]
            print(f"| {name} | {order} | {prior} | {n_saved} | {fit:.2f} | {predict:.2f} | {predict / fit:.2f} |",
                  flush=True)  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orders", type=int, nargs="*", default=[5, 10, 20])
    parser.add_argument("--n-iter", type=int, default=2000)
    parser.add_argument("--predict", action="store_true", help="training and prediction CPU times only")
    parser.add_argument("--n-test", type=int, default=5000, help="test cases of --predict")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)  # scikit-learn's parameter transitions
    mcmc = dict(n_iter=args.n_iter, burn_in=args.n_iter * 3 // 8, thin=5, random_state=0)
    if args.predict:
        prediction_times(args.orders, args.n_test, mcmc)
        return

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
