"""Garbage in: what the recommended classifier says about arrays that carry no information.

For every microarray data set of :func:`hdbayes.datasets.load_microarray` (its manifest transform), the
classifier is fitted on all cases, then shown

``noise``
    200 arrays of pure noise: each gene drawn independently from the normal with its training mean and
    standard deviation;
``permuted``
    200 arrays whose genes are a real (training) array's values in a random order.

Neither carries any information about the class, so an honest prediction is the training class frequencies.
Reported per data set and kind: the largest class share, the mean largest probability, the share of arrays
given a probability above 0.9, the mean :meth:`~hdbayes.BayesianLinearClassifier.atypicality` and whether the
:class:`~hdbayes.exceptions.AtypicalArrayWarning` was raised.

Target (stated before any run): on every data set and for both kinds, mean largest probability at most the
largest class share + 0.10, at most 10 % of arrays above 0.9, and the warning raised.

Run from the project root (about 2 minutes for the sixteen sets)::

    HDBAYES_DATA=../shared/data .venv/bin/python benchmarks/bench_garbage_in.py --out garbage.csv
    .venv/bin/python benchmarks/bench_garbage_in.py --datasets golub khan --params '{"unrelated_prior": 0}'
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from hdbayes import BayesianLinearClassifier
from hdbayes.datasets import MICROARRAY_DATASETS, load_microarray
from hdbayes.exceptions import AtypicalArrayWarning

N_ARRAYS = 200
COLUMNS = ["dataset", "kind", "largest_share", "mean_max_p", "share_above_0.9", "mean_atypicality", "warned",
           "target_met"]  # fmt: skip


def garbage(X, kind, rng):
    """``N_ARRAYS`` arrays of ``kind`` ("noise" or "permuted") made from the training arrays ``X``."""
    if kind == "noise":
        return X.mean(axis=0) + X.std(axis=0) * rng.standard_normal((N_ARRAYS, X.shape[1]))
    rows = rng.integers(len(X), size=N_ARRAYS)
    return np.array([rng.permutation(X[row]) for row in rows])


def run(datasets, params, seed=0, out=None):
    rows = []
    for name in datasets:
        data = load_microarray(name)
        shares = np.unique(data.y, return_counts=True)[1] / len(data.y)
        with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = BayesianLinearClassifier(**params).fit(data.X, data.y)
        rng = np.random.default_rng(seed)
        for kind in ("noise", "permuted"):
            Z = garbage(data.X, kind, rng)
            with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                largest = model.predict_proba(Z).max(axis=1)
                atypicality = model.atypicality(Z)
            warned = any(issubclass(w.category, AtypicalArrayWarning) for w in caught)
            row = {"dataset": name, "kind": kind, "largest_share": float(shares.max()),
                   "mean_max_p": float(largest.mean()), "share_above_0.9": float(np.mean(largest > 0.9)),
                   "mean_atypicality": float(atypicality.mean()), "warned": warned}  # fmt: skip
            row["target_met"] = (row["mean_max_p"] <= row["largest_share"] + 0.10
                                 and row["share_above_0.9"] <= 0.10 and warned)  # fmt: skip
            rows.append(row)
            print(f"{name} {kind}: mean max p {row['mean_max_p']:.3f} (share {row['largest_share']:.3f}), "
                  f"{row['share_above_0.9']:.0%} above 0.9, atypicality {row['mean_atypicality']:.3f}",
                  file=sys.stderr, flush=True)  # fmt: skip
    if out is not None:
        with open(out, "w", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    return rows


def markdown(rows):
    lines = ["| data set | kind | largest class share | mean max p | above 0.9 | mean atypicality | warned | met |",
             "|---|---|---:|---:|---:|---:|---|---|"]  # fmt: skip
    for row in rows:
        lines.append(f"| {row['dataset']} | {row['kind']} | {row['largest_share']:.3f} | {row['mean_max_p']:.3f} | "
                     f"{row['share_above_0.9']:.0%} | {row['mean_atypicality']:.3f} | "
                     f"{'yes' if row['warned'] else 'no'} | {'yes' if row['target_met'] else 'no'} |")  # fmt: skip
    met = sum(bool(row["target_met"]) for row in rows)
    lines.append(f"\nTarget met in {met} of {len(rows)} (data set, kind) cells.")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(MICROARRAY_DATASETS))
    parser.add_argument("--params", default="{}", help="parameters of BayesianLinearClassifier as JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="CSV of every (data set, kind)")
    args = parser.parse_args(argv)
    rows = run(args.datasets, json.loads(args.params), args.seed, args.out)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
