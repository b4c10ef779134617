"""Accuracy and speed of BiasCorrectedGaussianClassifier against scikit-learn classifiers.

Run from the project root (needs HDBAYES_DATA or a download of SRBCT.rda and
lymphoma.RData):

    HDBAYES_DATA=../shared/data .venv/bin/python benchmarks/bench_gaussian.py [--full]

Prints markdown tables:

* SRBCT (Li 2009 §4.2 protocol): the first 2 of the 10 random gene groups of
  :func:`hdbayes.experiments.srbct.gene_groups` (230–231 genes each), 20-fold CV,
  in each fold whitening with λ = 10 (eq. 12) and the top k = 10 whitened features
  by F, both estimated on the training cases;
* lymphoma: 10-fold CV on all 4026 genes, top k = 10 by F in each fold, no whitening;
* one chain of 6000 iterations at k = 1000, G = 6, n = 200 on the paper's simulated
  data (p = 4000), corrected vs uncorrected;
* with ``--full``: the time of the whole SRBCT study (10 groups × 20 folds × both
  methods, the paper's MCMC);
* with ``--variants`` (only): µs per iteration and set-up seconds of every variant of the classifier
  (shared / per-feature spread, pooled / per-class variances, α2_x fixed or learned), corrected and not,
  at k = 10 and 1000 on the simulated data.

Every method gets the same in-fold pipeline: the Bayesian classifier selects by F
itself (it needs all p features for the correction); the scikit-learn classifiers
get the :class:`FSelector` below. The Bayesian classifier uses the paper's MCMC
(6000 iterations, 750 burn-in, thin 15) and priors α^x = 2, w^x = 0.3 on the real
data. Times are wall-clock of the whole cross-validation (fits and predictions of
all folds, run one after the other), after a warm-up that compiles the sampler.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import sklearn
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import NearestCentroid
from sklearn.pipeline import make_pipeline

from hdbayes.datasets import load_lymphoma, load_srbct, simulate_gaussian
from hdbayes.experiments import srbct
from hdbayes.experiments._gaussian_cv import MCMC_PAPER, cross_validate_methods, gaussian_model
from hdbayes.experiments._report import markdown_table
from hdbayes.mcmc import Schedule
from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate, random_lognormal_loss
from hdbayes.preprocessing import ShrunkCovarianceWhitener
from hdbayes.selection import select_features
from hdbayes.selection_bias.gaussian import (
    BiasCorrectedGaussianClassifier,
    PerClassVariance,
    PerFeatureGaussianAdjustment,
    SharedSpread,
)

PRIOR = {"alpha_x": 2.0, "w_x": 0.3}
SHRINK_THRESHOLD = 0.5


class FSelector(TransformerMixin, BaseEstimator):
    """Keep the ``n_features_to_select`` columns with the largest F-statistics on the training data."""

    def __init__(self, n_features_to_select=10):
        self.n_features_to_select = n_features_to_select

    def fit(self, X, y):
        self.indices_ = select_features(
            X, y, n_features_to_select=self.n_features_to_select, statistic="f", random_state=0
        ).indices
        return self

    def transform(self, X):
        return np.asarray(X)[:, self.indices_]


def methods(k, lam):
    """Name → (estimator, has probabilities); every estimator does its selection in ``fit``."""
    front = [ShrunkCovarianceWhitener(lam=lam)] if lam is not None else []
    sklearn_models = {
        "GaussianNB": GaussianNB(),
        f"NearestCentroid(shrink_threshold={SHRINK_THRESHOLD})": NearestCentroid(shrink_threshold=SHRINK_THRESHOLD),
        "LDA(lsqr, shrinkage=auto)": LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
    }
    out = {
        name: (
            gaussian_model(n_features_to_select=k, correct=correct, lam=lam, random_state=0,
                           variant=SharedSpread(**PRIOR), **MCMC_PAPER),
            True,
        )
        for name, correct in (("Bayes Gaussian, corrected", True), ("Bayes Gaussian, uncorrected", False))
    }
    for name, model in sklearn_models.items():
        out[name] = (make_pipeline(*front, FSelector(k), model), hasattr(model, "predict_proba"))
    return out


def compare(X, y, cv, k, lam):
    rows = []
    for name, (model, has_proba) in methods(k, lam).items():
        start = time.perf_counter()
        if has_proba:
            proba = cross_val_predict(model, X, y, cv=cv, method="predict_proba")
            seconds = time.perf_counter() - start
            row = {"error_rate": error_rate(y, proba), "expected_error": expected_error_rate(proba)}
            row["amlp"] = average_minus_log_probability(y, proba)
        else:
            guesses = cross_val_predict(model, X, y, cv=cv)
            seconds = time.perf_counter() - start
            row = {"error_rate": float(np.mean(guesses != y)), "expected_error": "–", "amlp": "–"}
        rows.append({"method": name, **row, "seconds": seconds})
    return rows


def warm_up():
    data = simulate_gaussian(n_classes=3, n_features=30, n_samples=30, n_test=3, random_state=0)
    for correct in (True, False):
        BiasCorrectedGaussianClassifier(n_features_to_select=5, correct=correct, n_iter=50, burn_in=0, thin=1).fit(
            data.X, data.y
        ).predict_proba(data.X_test)


def srbct_table():
    data = load_srbct()
    X, y = data.X, data.y
    cv = KFold(20, shuffle=True, random_state=0)
    rows = []
    for g, columns in enumerate(srbct.gene_groups(X.shape[1], random_state=0)[:2]):
        rows += [{"group": g + 1, **row} for row in compare(X[:, columns], y, cv, k=10, lam=10.0)]
    return rows


def lymphoma_table():
    data = load_lymphoma()
    return compare(data.X, data.y, KFold(10, shuffle=True, random_state=0), k=10, lam=None)


def chain_table(repeat):
    data = simulate_gaussian(n_features=4000, random_state=0)
    rows = []
    for correct in (True, False):
        best_fit, best_predict = np.inf, np.inf
        for _ in range(repeat):
            model = BiasCorrectedGaussianClassifier(n_features_to_select=1000, correct=correct, random_state=0)
            start = time.perf_counter()
            model.fit(data.X, data.y)
            fitted = time.perf_counter()
            proba = model.predict_proba(data.X_test)
            best_fit = min(best_fit, fitted - start)
            best_predict = min(best_predict, time.perf_counter() - fitted)
        rows.append(
            {
                "method": "corrected" if correct else "uncorrected",
                "fit_s (selection + 1 chain of 6000)": best_fit,
                f"predict_s ({data.X_test.shape[0]} cases, 350 draws)": best_predict,
                "test_error": error_rate(data.y_test, proba),
                "test_expected_error": expected_error_rate(proba),
                "test_amlp": average_minus_log_probability(data.y_test, proba),
                "acceptance": float(model.acceptance_rate_[0]),
            }
        )
    return rows


#: (spread, class_variance, alpha2_x, class_scale) of every variant of the classifier (issue 13)
#: The variants timed: (name, the variant object or name, alpha2_x, class_scale) — the last two for the table.
VARIANTS = [("shared", "shared", "", ""), ("per-feature", "per-feature", "", ""),
            ("per-class", PerClassVariance(alpha2_x=4.0), 4.0, "equal"),
            ("per-class", PerClassVariance(alpha2_x="learn"), "learn", "equal"),
            ("per-class", PerClassVariance(alpha2_x="learn", class_scale="plug-in"), "learn", "plug-in")]  # fmt: skip


def variant_table(repeat, ks=(10, 1000)):
    """µs per iteration and set-up seconds of every variant, corrected and not, on Li (2009) §4.1's simulated
    data (G = 6, n = 200, p = 4000). Set-up: a fit of 20 iterations (selection, the adjustment factor, the
    chain's set-up). Per iteration: the fit's own chain (its adjustment factor bound) run alone for 1000 and 3000
    iterations, the difference / 2000. Best of ``repeat``, after a fit that compiles the variant's kernels."""
    data = simulate_gaussian(n_features=4000, random_state=0)
    rows = []
    for k in ks:
        for name, variant, alpha2_x, class_scale in VARIANTS:
            for correct in (True, False):
                kwargs = dict(n_features_to_select=k, correct=correct, variant=variant, n_iter=20, burn_in=0, thin=10,
                              random_state=0, progress=False)  # fmt: skip
                captured = {}
                model = BiasCorrectedGaussianClassifier(**kwargs)
                run_chains = model._run_chains

                def capture(chain, _run=run_chains, **options):
                    captured["chain"] = chain
                    return _run(chain, **options)

                model._run_chains = capture
                model.fit(data.X, data.y)  # compiles; keeps the chain with its adjustment factor
                setup = np.inf
                for _ in range(repeat):
                    start = time.perf_counter()
                    BiasCorrectedGaussianClassifier(**kwargs).fit(data.X, data.y)
                    setup = min(setup, time.perf_counter() - start)
                seconds = {}
                for n_iter in (1000, 3000):
                    best = np.inf
                    for _ in range(repeat):
                        start = time.perf_counter()
                        captured["chain"](np.random.default_rng(0), Schedule(n_iter, 0, 10))
                        best = min(best, time.perf_counter() - start)
                    seconds[n_iter] = best
                rows.append({"k": k, "variant": name, "alpha2_x": alpha2_x, "class_scale": class_scale,
                             "corrected": "yes" if correct else "no",
                             "µs / iteration": 1e6 * (seconds[3000] - seconds[1000]) / 2000,
                             "set-up s (fit of 20 iterations)": setup})  # fmt: skip
    return rows


def full_srbct_time():
    data = load_srbct()
    X, y = data.X, data.y
    cv = KFold(20, shuffle=True, random_state=0)
    loss = random_lognormal_loss(4, random_state=0)
    totals = {"corrected": 0.0, "uncorrected": 0.0}
    start = time.perf_counter()
    for columns in srbct.gene_groups(X.shape[1], random_state=0):
        rows, _ = cross_validate_methods(
            X[:, columns], y, cv=cv, n_features_to_select=10, loss=loss, lam=10.0, random_state=0,
            variant=SharedSpread(**PRIOR), **MCMC_PAPER,
        )
        for row in rows:
            totals[row["method"]] += row["seconds"]
    wall = time.perf_counter() - start
    return [{"method": m, "seconds (10 groups × 20 folds)": s, "per fit": s / 200} for m, s in totals.items()] + [
        {"method": "both", "seconds (10 groups × 20 folds)": wall, "per fit": wall / 400}
    ]


def factor_cost_table(thresholds=(10.0, 300.0, 3250.0), counts=(33, 8, 10), repeat=2):
    """Seconds of ``PerFeatureGaussianAdjustment.create`` (the exact per-feature factor's grid) and its number of
    series terms at each threshold γ, best of ``repeat`` after a compiling call (issue 13: the series costs
    O((G − 1) K²) a node; above 1000 terms the nodes are quadratic-form tails)."""
    PerFeatureGaussianAdjustment.create(4.0, counts)
    rows = []
    for gamma in thresholds:
        best = np.inf
        for _ in range(repeat):
            start = time.perf_counter()
            adjustment = PerFeatureGaussianAdjustment.create(gamma, counts)
            best = min(best, time.perf_counter() - start)
        rows.append({"γ": gamma, "class sizes": str(counts), "series terms": adjustment.log_f.shape[0],
                     "create s": best})  # fmt: skip
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="also time the whole SRBCT study (10 groups)")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs for the single chain")
    parser.add_argument("--variants", action="store_true",
                        help="only the time per iteration and set-up of every variant (issue 13)")  # fmt: skip
    parser.add_argument("--factor-cost", action="store_true",
                        help="only the set-up of the exact per-feature factor at γ = 10, 300, 3250")  # fmt: skip
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}\n"
    )
    if args.factor_cost:
        print("## The exact per-feature factor's set-up (PerFeatureGaussianAdjustment.create)\n")
        print(markdown_table(factor_cost_table(repeat=args.repeat)))
        return
    warm_up()
    if args.variants:
        print("## Every variant: µs per iteration and set-up, Li (2009) §4.1 data, G = 6, n = 200, p = 4000\n")
        print(f"load average before: {os.getloadavg()}\n")
        print(markdown_table(variant_table(args.repeat)))
        print(f"load average after: {os.getloadavg()}\n")
        return
    print("## SRBCT: 20-fold CV, whitening λ = 10 + top 10 by F inside each fold, gene groups 1–2\n")
    print(markdown_table(srbct_table()))
    print("## Lymphoma: 10-fold CV, all 4026 genes, top 10 by F inside each fold, no whitening\n")
    print(markdown_table(lymphoma_table()))
    print("## One chain, simulated data of Li (2009) §4.1: G = 6, n = 200, p = 4000, k = 1000\n")
    print(markdown_table(chain_table(args.repeat)))
    if args.full:
        print("## Whole SRBCT study: 10 gene groups × 20 folds, paper MCMC\n")
        print(markdown_table(full_srbct_time()))


if __name__ == "__main__":
    main()
