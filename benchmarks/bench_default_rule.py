"""The rule that chooses the recommended classifier's default, on the sixteen sets and leave-one-data-set-out.

Candidates (settings of ``BayesianLinearClassifier``; labels fixed, the same as the ``--variant`` names of the
weak-signal run below):

``isotropic``, ``factor``, ``hdbayes`` (factor + isotropic, the default), ``stacked`` (factor + isotropic weighed
by stacking), ``earlier_default`` (stacking over the span prior, ln s² ~ N(4, 2.5²), no atypicality).

The rule, written before these runs: (1) never worse than knowing nothing — a candidate is admissible when its
worst excess AMLP over the class frequencies in the weak-signal settings is within 0.02 of the best candidate's;
(2) among the admissible, the lowest mean AMLP on the data sets. Leave-one-data-set-out, (2) is applied to the
other fifteen sets for each set, and that set's figures come from the candidate chosen.

Run from the project root (about 25 minutes in all)::

    .venv/bin/python benchmarks/bench_weak_signal.py --out weak.csv \\
        --variant 'isotropic={"coefficient_prior": "isotropic"}' --variant 'factor={"coefficient_prior": "factor"}' \\
        --variant 'stacked={"hyperparameters": "stack"}' --variant 'earlier_default={"coefficient_prior": "span",
        "hyperparameters": "stack", "log_variance_mean": 4.0, "log_variance_sd": 2.5, "unrelated_prior": 0.0}'
    OPENBLAS_NUM_THREADS=1 HDBAYES_DATA=../shared/data .venv/bin/python benchmarks/bench_default_rule.py \\
        --weak weak.csv --out candidates.csv
    .venv/bin/python benchmarks/bench_default_rule.py --weak weak.csv --summary candidates.csv

The cross-validation is ``bench_microarray.py``'s (stratified 5-fold, shuffled, seeds 0 and 1): the ``hdbayes``
candidate's figures equal that script's ``hdbayes`` rows.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from collections import defaultdict

import numpy as np
from sklearn.model_selection import StratifiedKFold

from hdbayes import BayesianLinearClassifier
from hdbayes.datasets import MICROARRAY_DATASETS, load_microarray
from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate

CANDIDATES = {
    "isotropic": {"coefficient_prior": "isotropic"},
    "factor": {"coefficient_prior": "factor"},
    "hdbayes": {},
    "stacked": {"hyperparameters": "stack"},
    "earlier_default": {"coefficient_prior": "span", "hyperparameters": "stack", "log_variance_mean": 4.0,
                        "log_variance_sd": 2.5, "unrelated_prior": 0.0},
}  # fmt: skip
TOLERANCE = 0.02
OVERCONFIDENT = 0.05
COLUMNS = ["dataset", "seed", "candidate", "amlp", "error", "expected_error", "cpu_s"]


def cross_validate(X, y, params, seed):
    """AMLP, error, expected error and CPU seconds of one candidate on one split."""
    classes, codes = np.unique(y, return_inverse=True)
    P = np.zeros((len(y), len(classes)))
    cpu = 0.0
    for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, codes):
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = BayesianLinearClassifier(**params).fit(X[train], codes[train])
            P[np.ix_(test, model.classes_)] = model.predict_proba(X[test])
        cpu += time.process_time() - start
    return (average_minus_log_probability(codes, np.maximum(P, 1e-15)), error_rate(codes, P),
            expected_error_rate(P), cpu)  # fmt: skip


def run(datasets, seeds, out):
    rows = []
    with open(out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for name in datasets:
            data = load_microarray(name)
            for seed in seeds:
                for candidate, params in CANDIDATES.items():
                    figures = cross_validate(data.X, data.y, params, seed)
                    row = dict(zip(COLUMNS, [name, seed, candidate, *figures], strict=True))
                    rows.append(row)
                    writer.writerow([row[c] for c in COLUMNS])
                    handle.flush()
                    print(f"{name} seed {seed} {candidate}: AMLP {figures[0]:.3f}", file=sys.stderr, flush=True)
    return rows


def weak_excess(path):
    """Per candidate, its worst excess mean AMLP over the class frequencies across the weak-signal settings."""
    means = defaultdict(list)
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            means[(row["method"], row["n"], row["classes"])].append(float(row["amlp"]))
    settings = {(n, c) for (_, n, c) in means}
    excess = {}
    for candidate in CANDIDATES:
        gaps = [np.mean(means[(candidate, n, c)]) - np.mean(means[("class_frequencies", n, c)])
                for n, c in settings if (candidate, n, c) in means]  # fmt: skip
        if gaps:
            excess[candidate] = max(gaps)
    return excess


def summarize(rows, excess):
    amlp, gap = defaultdict(dict), defaultdict(dict)
    for row in rows:
        key = (row["dataset"], str(row["seed"]))
        amlp[row["candidate"]][key] = float(row["amlp"])
        gap[row["candidate"]][key] = float(row["error"]) - float(row["expected_error"])
    candidates = [c for c in CANDIDATES if c in amlp and c in excess]
    keys = sorted(amlp[candidates[0]])
    lines = ["| candidate | worst weak-signal excess | mean AMLP | mean \\|gap\\| | cells overconfident > 0.05 |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for c in candidates:
        lines.append(f"| {c} | {excess[c]:+.3f} | {np.mean([amlp[c][k] for k in keys]):.3f} | "
                     f"{np.mean([abs(gap[c][k]) for k in keys]):.3f} | "
                     f"{sum(gap[c][k] > OVERCONFIDENT for k in keys)} |")  # fmt: skip
    best = min(excess[c] for c in candidates)
    admissible = [c for c in candidates if excess[c] <= best + TOLERANCE]
    chosen_all = min(admissible, key=lambda c: np.mean([amlp[c][k] for k in keys]))
    chosen = {}
    for name in sorted({k[0] for k in keys}):
        others = [k for k in keys if k[0] != name]
        chosen[name] = min(admissible, key=lambda c: np.mean([amlp[c][k] for k in others]))
    lodo = [amlp[chosen[k[0]]][k] for k in keys]
    lodo_gap = [gap[chosen[k[0]]][k] for k in keys]
    lines += ["", f"admissible: {', '.join(admissible)}; chosen on all sets: {chosen_all}",
              "leave-one-data-set-out choices: " + ", ".join(f"{name}: {c}" for name, c in chosen.items()),
              f"leave-one-data-set-out: mean AMLP {np.mean(lodo):.3f}, mean |gap| {np.mean(np.abs(lodo_gap)):.3f}, "
              f"cells overconfident > 0.05: {sum(g > OVERCONFIDENT for g in lodo_gap)}"]  # fmt: skip
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weak", required=True, help="CSV of bench_weak_signal.py with the candidates as variants")
    parser.add_argument("--datasets", nargs="+", default=list(MICROARRAY_DATASETS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--out", help="CSV of every (data set, seed, candidate)")
    parser.add_argument("--summary", help="summarise an existing CSV instead of running")
    args = parser.parse_args(argv)
    if args.summary:
        with open(args.summary, newline="") as handle:
            rows = list(csv.DictReader(handle))
    else:
        if not args.out:
            parser.error("--out is required unless --summary is given")
        rows = run(args.datasets, args.seeds, args.out)
    print(summarize(rows, weak_excess(args.weak)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
