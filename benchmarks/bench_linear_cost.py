"""How the recommended classifier's cost grows with the number of cases, against logistic regression.

Simulated two-class data (:func:`hdbayes.datasets.simulate_probit`, p = 2000 genes, latent sd 3), fit + 200
predictions, CPU seconds (``time.process_time``) with BLAS held to one thread on both sides (threadpoolctl), for
``BayesianLinearClassifier()`` and ``StandardScaler()`` + ``LogisticRegressionCV(Cs=10, scoring="neg_log_loss")``;
prints each size and the log-log slope of CPU on n (all sizes, and n ≥ 200).

Run from the project root (about a minute)::

    .venv/bin/python benchmarks/bench_linear_cost.py --n 50 100 200 400 800
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from hdbayes import BayesianLinearClassifier
from hdbayes.datasets import simulate_probit


def peers():
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def logistic_all():
        return make_pipeline(StandardScaler(), LogisticRegressionCV(Cs=10, scoring="neg_log_loss"))

    return {"hdbayes": BayesianLinearClassifier, "logistic_all": logistic_all}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 100, 200, 400, 800])
    parser.add_argument("--p", type=int, default=2000)
    args = parser.parse_args(argv)
    makers = peers()
    cpu = {name: [] for name in makers}
    print("| n | " + " | ".join(makers) + " |\n|---:|" + "---:|" * len(makers))
    for n in args.n:
        data = simulate_probit(2, args.p, n, 200, signal_sd=3.0, random_state=0)
        for name, make in makers.items():
            with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.process_time()
                make().fit(data.X, data.y).predict_proba(data.X_test)
                cpu[name].append(time.process_time() - start)
        print(f"| {n} | " + " | ".join(f"{cpu[name][-1]:.2f}" for name in makers) + " |", flush=True)
    log_n = np.log(args.n)
    large = np.asarray(args.n) >= 200
    for name, values in cpu.items():
        slope = np.polyfit(log_n, np.log(values), 1)[0]
        slope_large = np.polyfit(log_n[large], np.log(np.asarray(values)[large]), 1)[0] if large.sum() > 1 else np.nan
        print(f"{name}: log-log slope of CPU on n {slope:.2f} (n >= 200: {slope_large:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
