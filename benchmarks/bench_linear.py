"""Benchmark: BayesianLinearClassifier against logistic regression on all standardised genes (issue 27).

Ten public microarray data sets (``$HDBAYES_DATA/microarray/*.RData``, see its MANIFEST.md), read with
``rdata``, transformed as the manifest says, stratified shuffled 5-fold cross-validation with seeds 0 and 1.
For every method and data set: AMLP (average minus log probability of the true class), error rate,
expected error (mean of 1 − max probability), the largest −ln p(true), CPU seconds (fit + predict, BLAS on one
thread). The summary checks the criteria of issue 27:

1. mean AMLP ≤ 0.9 × logistic-all's;
2. mean over (data set, seed) cells of |expected − actual error| ≤ 0.02;
3. in no cell AMLP > 1.5 × the best peer's + 0.05;
4. −ln p(true) > 10 on at most one case overall;
5. CPU ≤ 10 × logistic-all's.

Usage::

    nice -n 10 python benchmarks/bench_linear.py [--variant NAME=JSON ...] [--datasets a,b] [--output FILE]

``--variant`` adds a BayesianLinearClassifier with the given keyword arguments (JSON), e.g.
``--variant maximise='{"hyperparameters": "maximise"}'``; ``default`` is always run. Logistic-all's results
are cached in ``--cache`` (a JSON file) so that variants can be compared without refitting it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

TRANSFORMS = {
    "alon": 1.0, "christensen": None, "golub": 20.0, "gordon": 20.0, "gravier": None, "khan": None,
    "shipp": 20.0, "singh": 20.0, "sorlie": None, "su": None,
}  # fmt: skip
SEEDS = (0, 1)


def load(name, data_dir):
    """The manifest's data set ``name``: (X after its transform, y as strings)."""
    import rdata

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = rdata.read_rda(str(Path(data_dir) / "microarray" / f"{name}.RData"))[name]
    X = np.asarray(data["x"], dtype=np.float64)
    y = np.asarray(data["y"]).astype(str)
    floor = TRANSFORMS[name]
    if floor is not None:
        X = np.log2(np.maximum(X, floor))
    return X, y


def make(method, kwargs):
    """A fresh estimator."""
    if method == "logistic-all":
        from sklearn.linear_model import LogisticRegressionCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegressionCV(scoring="neg_log_loss"))
    from hdbayes import BayesianLinearClassifier

    return BayesianLinearClassifier(random_state=0, **kwargs)


def run_cell(method, kwargs, X, y, seed):
    """Cross-validated measures of one method on one data set and seed."""
    from sklearn.model_selection import StratifiedKFold
    from threadpoolctl import threadpool_limits

    classes = np.unique(y)
    log_true = np.empty(len(y))
    expected = np.empty(len(y))
    wrong = np.empty(len(y), dtype=bool)
    seconds = 0.0
    converged = True
    sweeps = []
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    with threadpool_limits(1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for train, test in folds.split(X, y):
            start = time.process_time()
            model = make(method, kwargs).fit(X[train], y[train])
            proba = model.predict_proba(X[test])
            seconds += time.process_time() - start
            converged &= bool(getattr(model, "converged_", True))
            if hasattr(model, "n_iter_"):
                sweeps.append(int(np.max(model.n_iter_)))
            model_classes = list(model.classes_)
            assert model_classes == list(classes)
            truth = np.searchsorted(classes, y[test])
            p_true = proba[np.arange(len(test)), truth]
            log_true[test] = np.log(np.maximum(p_true, 1e-300))
            expected[test] = 1.0 - proba.max(axis=1)
            wrong[test] = classes[np.argmax(proba, axis=1)] != y[test]
    return {
        "amlp": float(-log_true.mean()),
        "error": float(wrong.mean()),
        "expected_error": float(expected.mean()),
        "max_mlp": float(-log_true.min()),
        "n_over_10": int(np.sum(-log_true > 10.0)),
        "seconds": seconds,
        "converged": converged,
        "max_sweeps": max(sweeps, default=0),
    }


def summarise(results, method, peer="logistic-all"):
    """The issue-27 criteria for ``method`` against ``peer``; ``results[method][dataset][seed]``."""
    cells = [(d, s) for d in results[method] for s in results[method][d]]

    def mean(m, key):
        return float(np.mean([results[m][d][s][key] for d, s in cells]))

    amlp, amlp_peer = mean(method, "amlp"), mean(peer, "amlp")
    calibration = float(np.mean([abs(results[method][d][s]["expected_error"] - results[method][d][s]["error"])
                                 for d, s in cells]))  # fmt: skip
    worst = [(d, s) for d, s in cells if results[method][d][s]["amlp"] > 1.5 * results[peer][d][s]["amlp"] + 0.05]
    over = sum(results[method][d][s]["n_over_10"] for d, s in cells)
    cpu = sum(results[method][d][s]["seconds"] for d, s in cells)
    cpu_peer = sum(results[peer][d][s]["seconds"] for d, s in cells)
    return {
        "mean_amlp": amlp, "peer_mean_amlp": amlp_peer, "amlp_ratio": amlp / amlp_peer,
        "calibration": calibration, "peer_calibration": float(np.mean(
            [abs(results[peer][d][s]["expected_error"] - results[peer][d][s]["error"]) for d, s in cells])),
        "bad_cells": worst, "n_over_10": over, "cpu": cpu, "peer_cpu": cpu_peer, "cpu_ratio": cpu / cpu_peer,
        "met": {
            "amlp": amlp <= 0.9 * amlp_peer, "calibration": calibration <= 0.02, "no_bad_cell": not worst,
            "over_10": over <= 1, "cpu": cpu <= 10 * cpu_peer,
        },
    }  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", default=[], help="NAME=JSON keyword arguments")
    parser.add_argument("--datasets", default=",".join(TRANSFORMS))
    parser.add_argument("--data-dir", default=os.environ.get("HDBAYES_DATA", "/work/shared/data"))
    parser.add_argument("--cache", default="/tmp/bench_linear_logistic.json")
    parser.add_argument("--output", default=None)
    parser.add_argument("--no-default", action="store_true", help="run only the --variant models")
    args = parser.parse_args(argv)
    variants = {} if args.no_default else {"default": {}}
    for item in args.variant:
        name, _, spec = item.partition("=")
        variants[name] = json.loads(spec) if spec else {}
    datasets = args.datasets.split(",")
    cache_path = Path(args.cache)
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    results = {"logistic-all": {}, **{name: {} for name in variants}}
    for name in datasets:
        X, y = load(name, args.data_dir)
        for method, kwargs in [("logistic-all", {}), *variants.items()]:
            results[method][name] = {}
            for seed in SEEDS:
                key = f"{name}/{seed}"
                if method == "logistic-all" and key in cache:
                    cell = cache[key]
                else:
                    cell = run_cell("logistic-all" if method == "logistic-all" else "linear", kwargs, X, y, seed)
                    if method == "logistic-all":
                        cache[key] = cell
                        cache_path.write_text(json.dumps(cache, indent=1))
                results[method][name][str(seed)] = cell
            cells = results[method][name].values()
            print(
                f"{name:12s} {method:14s} amlp={np.mean([c['amlp'] for c in cells]):.3f} "
                f"err={np.mean([c['error'] for c in cells]):.3f} "
                f"exp={np.mean([c['expected_error'] for c in cells]):.3f} "
                f"max={max(c['max_mlp'] for c in cells):6.2f} cpu={sum(c['seconds'] for c in cells):6.1f}s "
                f"sweeps<={max(c.get('max_sweeps', 0) for c in cells)}"
                f"{'' if all(c['converged'] for c in cells) else ' NOT CONVERGED'}",
                flush=True,
            )
    summaries = {method: summarise(results, method) for method in variants}
    for method, summary in summaries.items():
        print(f"\n== {method}: {json.dumps(variants[method])}")
        print(
            f"mean AMLP {summary['mean_amlp']:.4f} vs logistic-all {summary['peer_mean_amlp']:.4f} "
            f"(ratio {summary['amlp_ratio']:.3f}, need <= 0.9)\n"
            f"mean |expected - actual error| {summary['calibration']:.4f} (logistic-all "
            f"{summary['peer_calibration']:.4f}; need <= 0.02)\n"
            f"cells worse than 1.5 x peer + 0.05: {summary['bad_cells']}\n"
            f"cases with -ln p(true) > 10: {summary['n_over_10']} (need <= 1)\n"
            f"CPU {summary['cpu']:.1f}s vs {summary['peer_cpu']:.1f}s (ratio {summary['cpu_ratio']:.2f}, need <= 10)\n"
            f"met: {summary['met']}"
        )
    if args.output:
        Path(args.output).write_text(json.dumps({"variants": variants, "results": results,
                                                 "summaries": summaries}, indent=1))  # fmt: skip
    return summaries


if __name__ == "__main__":
    main()
