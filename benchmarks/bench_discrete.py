"""Speed of the discrete generative classifiers against scikit-learn, on sparse bursty documents.

Run from the project root:

    .venv/bin/python benchmarks/bench_discrete.py            # 20 000 × 50 000, 20 classes
    .venv/bin/python benchmarks/bench_discrete.py --n-documents 2000 --n-words 5000   # quick

Fits on ``--n-documents`` training documents and predicts class probabilities for as many
test documents (a bursty Pólya-urn corpus, :func:`hdbayes.datasets.documents.simulate_bursty_documents`).
Times are the best of ``--repeat`` runs after a warm-up (numba compilation excluded); ratios
are against scikit-learn's ``MultinomialNB`` / ``BernoulliNB`` run in the same process.
Prints a markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np
from sklearn.naive_bayes import BernoulliNB, MultinomialNB

from hdbayes.datasets.documents import simulate_bursty_documents
from hdbayes.discrete import BayesianBernoulliNB, BayesianMultinomialNB, DCMClassifier


def best_time(function, repeat):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def log_loss(model, X, y):
    log_proba = model.predict_log_proba(X)
    return float(-np.mean(log_proba[np.arange(y.shape[0]), np.searchsorted(model.classes_, y)]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-documents", type=int, default=20_000)
    parser.add_argument("--n-words", type=int, default=50_000)
    parser.add_argument("--n-classes", type=int, default=20)
    parser.add_argument("--mean-length", type=float, default=150)
    parser.add_argument("--concentration", type=float, default=200.0, help="α_0 of the Pólya urns")
    parser.add_argument("--class-spread", type=float, default=0.35)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    n = args.n_documents
    start = time.perf_counter()
    corpus = simulate_bursty_documents(
        2 * n, args.n_words, n_classes=args.n_classes, mean_length=args.mean_length,
        concentration=args.concentration, class_spread=args.class_spread, random_state=0,
    )  # fmt: skip
    simulate_seconds = time.perf_counter() - start
    X_train, y_train, X_test, y_test = corpus.X[:n], corpus.y[:n], corpus.X[n:], corpus.y[n:]
    print(f"# {n} training + {n} test documents, {args.n_words} words, {args.n_classes} classes, "
          f"α_0 = {args.concentration}, spread {args.class_spread}, "
          f"nnz/document {X_train.nnz / n:.1f}, words/document {X_train.sum() / n:.1f} "
          f"(simulated in {simulate_seconds:.2f} s); {platform.processor() or platform.machine()}, "
          f"best of {args.repeat}")  # fmt: skip
    X_train_binary = (X_train > 0).astype(np.float64)
    X_test_binary = (X_test > 0).astype(np.float64)

    def fit_predict(model, X, Xt):
        return lambda: model.fit(X, y_train).predict_proba(Xt)

    cases = [
        ("sklearn MultinomialNB(alpha=1)", MultinomialNB(alpha=1.0), X_train, X_test, None),
        ("BayesianMultinomialNB(method='posterior_mean', class_pseudo_count=0)",
         BayesianMultinomialNB("posterior_mean", class_pseudo_count=0), X_train, X_test,
         "sklearn MultinomialNB(alpha=1)"),
        ("BayesianMultinomialNB(method='bayes')", BayesianMultinomialNB("bayes"), X_train, X_test,
         "sklearn MultinomialNB(alpha=1)"),
        ("DCMClassifier()", DCMClassifier(), X_train, X_test, "sklearn MultinomialNB(alpha=1)"),
        ("sklearn BernoulliNB(alpha=1)", BernoulliNB(alpha=1.0), X_train_binary, X_test_binary, None),
        ("BayesianBernoulliNB(method='posterior_mean', class_pseudo_count=0)",
         BayesianBernoulliNB("posterior_mean", class_pseudo_count=0), X_train_binary, X_test_binary,
         "sklearn BernoulliNB(alpha=1)"),
    ]  # fmt: skip
    with warnings.catch_warnings():  # compile the numba kernels on a tiny fit
        warnings.simplefilter("ignore")
        DCMClassifier().fit(X_train[:200], y_train[:200]).predict_proba(X_test[:200])
    # repeats interleave the models, so that a busy machine slows all of them alike
    fit_seconds = {name: np.inf for name, *_ in cases}
    total_seconds = dict(fit_seconds)
    for _ in range(args.repeat):
        for name, model, X, Xt, _reference in cases:
            fit_seconds[name] = min(fit_seconds[name], best_time(lambda: model.fit(X, y_train), 1))
            total_seconds[name] = min(total_seconds[name], best_time(fit_predict(model, X, Xt), 1))
    rows = []
    for name, model, _X, Xt, reference in cases:
        total = total_seconds[name]
        rows.append((name, fit_seconds[name], total, total / total_seconds[reference] if reference else 1.0,
                     1 - model.score(Xt, y_test), log_loss(model, Xt, y_test)))  # fmt: skip
    print()
    print("| model | fit (s) | fit + predict_proba (s) | ratio to sklearn | test error | test log-loss |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, fit, total, ratio, error, loss in rows:
        print(f"| {name} | {fit:.3f} | {total:.3f} | {ratio:.2f} | {error:.4f} | {loss:.4f} |")
    dcm = cases[3][1]
    print(f"\nDCM fixed point: iterations per class {int(dcm.n_iter_.min())}–{int(dcm.n_iter_.max())}, "
          f"all converged: {bool(dcm.converged_.all())}")  # fmt: skip


if __name__ == "__main__":
    main()
