"""Calibrated predictions from gene expression across sixteen public microarray data sets.

Run from the project root (the sixteen files of ``hdbayes.datasets.load_microarray``: HDBAYES_DATA or a download):

    HDBAYES_DATA=../shared/data .venv/bin/python benchmarks/bench_microarray.py --out results.csv --cases cases.csv
    .venv/bin/python benchmarks/bench_microarray.py --summary results.csv --cases cases.csv --figures figs/

Or on your own data, a folder of ``.RData`` files laid out like datamicroarray's (each file ``NAME.RData`` holds
one R list ``NAME`` with ``x``, cases x features, and ``y``, a factor of class labels):

    .venv/bin/python benchmarks/bench_microarray.py --data-dir DIR --transform mine=log2floor1 --out results.csv

Protocol (fixed, so that figures from anyone's data compare): stratified 5-fold cross-validation, shuffled, one
run per seed (``--seeds``, default 0 1; the seed is also the ``random_state`` of every randomised method); the
methods that select genes select the top k inside every training fold (``--k``, default 10 50); the others use
all genes and have an empty k. ``--folds N`` runs only the first N folds of each split (quick checks).

Methods (labels fixed):

``hdbayes``
    ``hdbayes.BayesianLinearClassifier()`` with its defaults (all genes), when the installed hdbayes has it;
    else rows with empty figures and the note "not available".
``hdbayes_gaussian``, ``hdbayes_gaussian_uncorrected``, ``hdbayes_per_feature``
    ``BiasCorrectedGaussianClassifier(k)`` with its defaults; with ``correct=False``; with
    ``variant="per-feature"``.
``hdbayes_naive_bayes``
    Genes binarised at their training-fold medians: ``BiasCorrectedNaiveBayes(k, binarize="median")`` for two
    classes, ``FeatureBinarizer("median")`` + ``BiasCorrectedCategoricalNB(k, n_levels=2)`` for more.
``gaussian_nb``, ``lda``, ``logistic_selected``
    ``SelectKBest(f_classif, k)`` followed by ``GaussianNB()``; ``LinearDiscriminantAnalysis(solver="lsqr",
    shrinkage="auto")``; ``StandardScaler()`` + ``LogisticRegressionCV(scoring="neg_log_loss")``.
``logistic_all``, ``random_forest``
    ``StandardScaler()`` + ``LogisticRegressionCV(scoring="neg_log_loss")`` on all genes;
    ``RandomForestClassifier(n_estimators=500)`` on all genes.

Transforms: ``--transform NAME=log2floor1|log2floor20|none`` (repeatable); by default the manifest's transform for
the sixteen known names and ``none`` for other files.

Output: ``--out CSV``, one row per (data set, seed, k, method) with the columns of :data:`COLUMNS`, measured on
the pooled test cases of the folds run: ``amlp`` = mean of −ln p(true class), probabilities clipped below at
1e-15 (``n_clipped`` cases were); ``error``; ``expected_error`` (mean of 1 − max p); ``brier`` (of
:func:`hdbayes.metrics.brier_score`: mean (y − p₁)² for two classes, the sum over classes for more);
``max_neg_log_p`` (the largest −ln p(true), clipped); ``cpu_s`` (``time.process_time`` of every fit and
predict). A method that refuses a data set (an input error, e.g. k > p or too many categorical tables) writes a
row with empty figures and ``refused: <message>`` in ``note``; any other exception writes ``bug: <message>``
(with the traceback on stderr) and makes the exit status 1; warnings raised while fitting are counted in
``note``. ``--cases CSV`` writes every test case's prediction (:data:`CASE_COLUMNS`). Progress goes to stderr.

``--summary CSV`` turns a results file into the summary table (printed as Markdown), per method: mean AMLP, mean
|expected − actual error|, mean rank of AMLP in a cell (a cell is a data set, seed and k; the methods that use all
genes are in every k's cell), cells won (lowest AMLP, ties shared), the worst ratio of its AMLP to the best
peer's in a cell (peers: the scikit-learn methods; AMLPs below 0.01 count as 0.01), and the cases above 10 nats
(from ``--cases``; without it, the rows whose worst case is above 10 nats). ``--figures DIR`` also draws
``amlp_per_dataset.png`` (AMLP per data set, methods side by side, one panel per k, mean over seeds) and
``calibration.png`` (reliability of the largest probability, pooled over data sets, seeds and folds; needs
``--cases``). A run prints the summary too.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

import hdbayes
from hdbayes.datasets import MICROARRAY_DATASETS, load_microarray
from hdbayes.datasets.microarray import _INFO, TRANSFORMS, _read_microarray_file
from hdbayes.exceptions import is_input_error
from hdbayes.metrics import average_minus_log_probability, brier_score, error_rate, expected_error_rate

N_SPLITS = 5
CLIP = 1e-15
NATS_LIMIT = 10.0
#: AMLPs below this count as this in the ratio to the best peer (a peer with AMLP 0, every case given probability
#: 1, would make every ratio of its cell infinite).
RATIO_FLOOR = 0.01
COLUMNS = ["dataset", "seed", "k", "method", "amlp", "error", "expected_error", "brier", "max_neg_log_p",
           "n_clipped", "cpu_s", "note"]  # fmt: skip
CASE_COLUMNS = ["dataset", "seed", "k", "method", "fold", "case", "true", "p_true", "p_max", "pred"]
HDBAYES_METHODS = ("hdbayes", "hdbayes_gaussian", "hdbayes_gaussian_uncorrected", "hdbayes_per_feature",
                   "hdbayes_naive_bayes")  # fmt: skip
PEERS = ("gaussian_nb", "lda", "logistic_selected", "logistic_all", "random_forest")
METHODS = HDBAYES_METHODS + PEERS
#: The methods that use all genes (their k is empty).
ALL_GENES = ("hdbayes", "logistic_all", "random_forest")


class Unavailable(Exception):
    """The method is not in the installed hdbayes."""


def _set_if_present(estimator, **params):
    """Set the parameters ``estimator`` has (the seed, no progress bar); leave the others at their defaults."""
    present = estimator.get_params()
    estimator.set_params(**{key: value for key, value in params.items() if key in present})
    return estimator


def make_estimator(method, k, seed, n_classes):
    """The estimator of ``method`` for one training fold (a fresh, unfitted scikit-learn estimator)."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.feature_selection import SelectKBest, f_classif
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    seeded = {"random_state": seed, "progress": False}
    if method == "hdbayes":
        if not hasattr(hdbayes, "BayesianLinearClassifier"):
            raise Unavailable("not available")
        return _set_if_present(hdbayes.BayesianLinearClassifier(), **seeded)
    if method == "hdbayes_gaussian":
        return _set_if_present(hdbayes.BiasCorrectedGaussianClassifier(k), **seeded)
    if method == "hdbayes_gaussian_uncorrected":
        return _set_if_present(hdbayes.BiasCorrectedGaussianClassifier(k, correct=False), **seeded)
    if method == "hdbayes_per_feature":
        return _set_if_present(hdbayes.BiasCorrectedGaussianClassifier(k, variant="per-feature"), **seeded)
    if method == "hdbayes_naive_bayes":
        if n_classes == 2:
            return _set_if_present(hdbayes.BiasCorrectedNaiveBayes(k, binarize="median"), **seeded)
        categorical = _set_if_present(hdbayes.BiasCorrectedCategoricalNB(k, n_levels=2), **seeded)
        return make_pipeline(hdbayes.FeatureBinarizer("median"), categorical)
    if method == "gaussian_nb":
        return make_pipeline(SelectKBest(f_classif, k=k), GaussianNB())
    if method == "lda":
        return make_pipeline(SelectKBest(f_classif, k=k), LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"))
    if method == "logistic_selected":
        return make_pipeline(
            SelectKBest(f_classif, k=k), StandardScaler(), LogisticRegressionCV(scoring="neg_log_loss")
        )
    if method == "logistic_all":
        return make_pipeline(StandardScaler(), LogisticRegressionCV(scoring="neg_log_loss"))
    if method == "random_forest":
        return RandomForestClassifier(n_estimators=500, random_state=seed)
    raise ValueError(f"unknown method {method!r}")


def predicted_class(P):
    """The guess of :mod:`hdbayes.metrics`: class 1 iff P(class 1) >= 0.5 for two classes, else the first
    class of largest probability."""
    if P.shape[1] == 2:
        return (P[:, 1] >= 0.5).astype(np.intp)
    return np.argmax(P, axis=1)


def measures(y, P):
    """The figures of one row from the pooled test cases: true codes ``y`` and probabilities ``P`` (n, G)."""
    p_true = P[np.arange(y.shape[0]), y]
    clipped = np.maximum(P, CLIP)
    return {
        "amlp": average_minus_log_probability(y, clipped),
        "error": error_rate(y, P),
        "expected_error": expected_error_rate(P),
        "brier": brier_score(y, P),
        "max_neg_log_p": float(np.max(-np.log(np.maximum(p_true, CLIP)))),
        "n_clipped": int(np.sum(p_true < CLIP)),
    }


def _expected_warning(message) -> bool:
    """Warnings that say nothing about how a method fits these data: f_classif's constant genes (flooring makes
    some genes constant within a fold) and scikit-learn's notices of future API changes."""
    if issubclass(message.category, (FutureWarning, DeprecationWarning)):
        return True
    return message.filename.replace("\\", "/").endswith("feature_selection/_univariate_selection.py")


def run_method(method, k, seed, X, y, n_classes, splits):
    """Fit and predict ``method`` on every split; returns (P of all test cases in split order, test indices,
    fold numbers, CPU seconds, warning counts). Raises what the method raises."""
    probabilities, indices, folds = [], [], []
    cpu = 0.0
    counts = Counter()
    for fold, (train, test) in enumerate(splits):
        estimator = make_estimator(method, k, seed, n_classes)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.process_time()
            estimator.fit(X[train], y[train])
            P_fold = estimator.predict_proba(X[test])
            cpu += time.process_time() - start
        counts.update(type(w.message).__name__ for w in caught if not _expected_warning(w))
        classes = np.asarray(estimator.classes_)
        P = np.zeros((test.shape[0], n_classes))
        P[:, classes] = P_fold  # a class absent from a training fold has probability 0
        probabilities.append(P)
        indices.append(test)
        folds.append(np.full(test.shape[0], fold))
    P = np.concatenate(probabilities)
    if not np.isfinite(P).all():
        raise FloatingPointError(f"{int((~np.isfinite(P)).sum())} non-finite predictive probabilities")
    return P, np.concatenate(indices), np.concatenate(folds), cpu, counts


def _format(value):
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value + 0.0:.6g}"  # + 0.0: no "-0"
    return str(value)


def _progress(message):
    print(message, file=sys.stderr, flush=True)


class Writer:
    """Rows written as they are measured (a long run keeps what it has done); ``None`` paths are ignored."""

    def __init__(self, path, columns):
        self.columns = columns
        self.rows = []
        self._file = None if path is None else open(path, "w", newline="")  # noqa: SIM115
        self._csv = None if self._file is None else csv.writer(self._file)
        if self._csv is not None:
            self._csv.writerow(columns)

    def write(self, row):
        row = {column: _format(row.get(column, "")) for column in self.columns}
        self.rows.append(row)
        if self._csv is not None:
            self._csv.writerow([row[column] for column in self.columns])
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()


def load_datasets(names, data_dir, transforms):
    """``{name: Bunch}`` of the data sets to run: from ``data_dir`` (every ``*.RData``) or the sixteen of
    :func:`load_microarray`; ``transforms`` maps names to transforms (default: manifest's, else none)."""
    if data_dir is not None:
        files = {path.stem: path for path in sorted(Path(data_dir).glob("*.RData"))}
        if not files:
            raise SystemExit(f"error: --data-dir {data_dir} holds no .RData file")
    else:
        files = dict.fromkeys(MICROARRAY_DATASETS)
    if names:
        unknown = [name for name in names if name not in files]
        if unknown:
            raise SystemExit(f"error: --datasets: unknown {unknown}; available: {sorted(files)}")
        files = {name: files[name] for name in names}
    unused = sorted(set(transforms) - set(files))
    if unused:
        raise SystemExit(f"error: --transform names data sets that are not run: {unused}")
    datasets = {}
    for name, path in files.items():
        default = _INFO[name].transform if name in _INFO else "none"
        transform = transforms.get(name, default)
        if path is None:
            datasets[name] = load_microarray(name, transform=transform)
        else:
            datasets[name] = _read_microarray_file(path, transform=transform)
    return datasets


def warm_up(methods):
    """Fit every hdbayes method once on a tiny two-class and three-class problem, so that compiling its numba
    kernels is not counted in the first data set's CPU seconds (failures are left to the real run to report)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 20))
    for method in methods:
        if method not in HDBAYES_METHODS:
            continue
        for n_classes in (2, 3):
            y = np.arange(30) % n_classes
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    make_estimator(method, None if method in ALL_GENES else 5, 0, n_classes).fit(X, y).predict_proba(X)
                except Exception:  # reported by the real run
                    continue


def run(datasets, methods, seeds, ks, n_folds=None, out=None, cases=None):
    """Run the benchmark; returns (result rows, whether a method raised something other than an input error)."""
    from sklearn.model_selection import StratifiedKFold

    warm_up(methods)
    results = Writer(out, COLUMNS)
    case_rows = Writer(cases, CASE_COLUMNS)
    bug = False
    try:
        for name, data in datasets.items():
            X = np.asarray(data.X, dtype=np.float64)
            classes = list(data.target_names)
            y = np.asarray([classes.index(label) for label in data.y], dtype=np.intp)
            n_classes = len(classes)
            for seed in seeds:
                splitter = StratifiedKFold(n_splits=N_SPLITS, shuffle=True, random_state=seed)
                splits = list(splitter.split(X, y))[:n_folds]
                for method in methods:
                    for k in [None] if method in ALL_GENES else ks:
                        row = {"dataset": name, "seed": seed, "k": "" if k is None else k, "method": method}
                        label = f"{name} seed {seed} {method}" + ("" if k is None else f" k={k}")
                        if k is not None and k > X.shape[1]:
                            row["note"] = f"refused: k = {k} > p = {X.shape[1]} genes"
                            results.write(row)
                            _progress(f"{label}: {row['note']}")
                            continue
                        try:
                            P, test, fold, cpu, counts = run_method(method, k, seed, X, y, n_classes, splits)
                        except Unavailable as exc:
                            row["note"] = str(exc)
                        except Exception as exc:
                            if is_input_error(exc):
                                row["note"] = f"refused: {exc}".replace("\n", " ")
                            else:
                                bug = True
                                row["note"] = f"bug: {type(exc).__name__}: {exc}".replace("\n", " ")
                                traceback.print_exc(file=sys.stderr)
                        else:
                            row.update(measures(y[test], P), cpu_s=round(cpu, 3))
                            row["note"] = "; ".join(f"{count} {kind}" for kind, count in sorted(counts.items()))
                            p_true = P[np.arange(test.shape[0]), y[test]]
                            pred = predicted_class(P)
                            for i in range(test.shape[0]):
                                case_rows.write({**row, "fold": int(fold[i]), "case": int(test[i]),
                                                 "true": classes[y[test[i]]], "p_true": f"{p_true[i]:.10g}",
                                                 "p_max": f"{P[i].max():.10g}", "pred": classes[pred[i]]})  # fmt: skip
                        results.write(row)
                        shown = {key: row.get(key, "") for key in ("amlp", "error", "cpu_s", "note")}
                        _progress(f"{label}: " + ", ".join(f"{k_}={_format(v)}" for k_, v in shown.items() if v != ""))
    finally:
        results.close()
        case_rows.close()
    return results.rows, bug


# ---------------------------------------------------------------------------
# summary


def _read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _cells(rows):
    """``{(dataset, seed, k): {method: amlp}}``; the rows of the methods that use all genes join every k's cell
    of their data set and seed (when there is no k, the cell's k is empty)."""
    ks = sorted({row["k"] for row in rows if row["k"] != ""}, key=int) or [""]
    cells = {}
    for row in rows:
        if row["amlp"] == "":
            continue
        for k in ks if row["k"] == "" else [row["k"]]:
            cells.setdefault((row["dataset"], row["seed"], k), {})[row["method"]] = float(row["amlp"])
    return cells


def summarize(rows, case_rows=None):
    """The summary table: one dict per method (in :data:`METHODS` order, then others), see the module doc."""
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    methods += sorted({r["method"] for r in rows} - set(methods))
    cells = _cells(rows)
    ranks = {m: [] for m in methods}
    won = Counter()
    ratios = {m: [] for m in methods}
    for values in cells.values():
        ordered = sorted(values.values())
        best = ordered[0]
        peers = [values[m] for m in values if m in PEERS]
        for m, v in values.items():
            # average rank: 1 + number strictly smaller + half the number of ties
            ranks[m].append(1 + sum(o < v for o in ordered) + 0.5 * (sum(o == v for o in ordered) - 1))
            won[m] += v == best
            if peers:
                ratios[m].append(max(v, RATIO_FLOOR) / max(min(peers), RATIO_FLOOR))
    above = Counter()
    if case_rows is not None:
        for case in case_rows:
            if -math.log(max(float(case["p_true"]), CLIP)) > NATS_LIMIT:
                above[case["method"]] += 1
    table = []
    for m in methods:
        mine = [r for r in rows if r["method"] == m and r["amlp"] != ""]
        if case_rows is None:
            above[m] = sum(float(r["max_neg_log_p"]) > NATS_LIMIT for r in mine)
        table.append({
            "method": m,
            "rows": len(mine),
            "rows without figures": sum(r["method"] == m and r["amlp"] == "" for r in rows),
            "mean AMLP": np.mean([float(r["amlp"]) for r in mine]) if mine else math.nan,
            "mean |expected - error|": np.mean([abs(float(r["expected_error"]) - float(r["error"])) for r in mine])
            if mine else math.nan,
            "mean rank": np.mean(ranks[m]) if ranks[m] else math.nan,
            "cells won": won[m],
            "worst ratio to best peer": max(ratios[m]) if ratios[m] else math.nan,
            ("cases > 10 nats" if case_rows is not None else "rows with a case > 10 nats"): above[m],
        })  # fmt: skip
    return table, len(cells)


def markdown(table, n_cells):
    columns = list(table[0])
    lines = [f"Summary over {n_cells} cells (data set, seed, k)", "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]  # fmt: skip
    for row in table:
        lines.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()) + " |")
    return "\n".join(lines)


def figures(rows, case_rows, folder):
    """``amlp_per_dataset.png`` and (with per-case rows) ``calibration.png`` in ``folder``; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ks = sorted({r["k"] for r in rows if r["k"] != ""}, key=int) or [""]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    methods += sorted({r["method"] for r in rows} - set(methods))
    written = []
    fig, axes = plt.subplots(len(ks), 1, figsize=(max(8.0, 1.1 * len(datasets) * len(methods) / 4), 3.6 * len(ks)),
                             squeeze=False)  # fmt: skip
    width = 0.8 / len(methods)
    for ax, k in zip(axes[:, 0], ks, strict=True):
        drawn = False
        for j, m in enumerate(methods):
            heights = []
            for d in datasets:
                values = [float(r["amlp"]) for r in rows if r["dataset"] == d and r["method"] == m
                          and r["amlp"] != "" and r["k"] in ("", k)]  # fmt: skip
                heights.append(np.mean(values) if values else np.nan)
            ax.bar(np.arange(len(datasets)) + (j - (len(methods) - 1) / 2) * width, heights, width, label=m)
            drawn |= bool(np.any(np.asarray(heights) > 0))
        ax.set_xticks(np.arange(len(datasets)), datasets, rotation=35, ha="right")
        if drawn:  # a panel of refused rows only has nothing to put on a log scale
            ax.set_yscale("log")
        ax.set_ylabel("AMLP (nats, log scale)")
        ax.set_title("all genes" if k == "" else f"k = {k} selected genes (methods without k: all genes)")
    axes[0, 0].legend(fontsize="small", ncol=3)
    fig.tight_layout()
    path = folder / "amlp_per_dataset.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)
    if case_rows is None:
        return written
    fig, axes = plt.subplots(1, len(ks), figsize=(5.0 * len(ks), 4.6), squeeze=False)
    edges = np.linspace(0.0, 1.0, 11)
    for ax, k in zip(axes[0], ks, strict=True):
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        for m in methods:
            mine = [c for c in case_rows if c["method"] == m and c["k"] in ("", k)]
            if not mine:
                continue
            p = np.array([float(c["p_max"]) for c in mine])
            correct = np.array([c["pred"] == c["true"] for c in mine], dtype=float)
            bins = np.clip(np.digitize(p, edges) - 1, 0, len(edges) - 2)
            filled = np.bincount(bins, minlength=10) > 0
            mean_p = np.bincount(bins, p, 10)[filled] / np.bincount(bins, minlength=10)[filled]
            accuracy = np.bincount(bins, correct, 10)[filled] / np.bincount(bins, minlength=10)[filled]
            ax.plot(mean_p, accuracy, marker="o", markersize=3, label=m)
        ax.set_xlabel("largest predictive probability (binned)")
        ax.set_ylabel("fraction of guesses correct")
        ax.set_title("all genes" if k == "" else f"k = {k}")
    axes[0, 0].legend(fontsize="small")
    fig.tight_layout()
    path = folder / "calibration.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)
    return written


# ---------------------------------------------------------------------------
# command line


def _split(values, convert=str):
    return [convert(v) for value in values or [] for v in value.split(",") if v]


def _transform_option(text):
    name, sep, value = text.partition("=")
    if not sep or not name or value not in TRANSFORMS:
        raise argparse.ArgumentTypeError(f"expected NAME=log2floor1|log2floor20|none, got {text!r}")
    return name, value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data-dir", type=Path, help="folder of NAME.RData files (default: the sixteen data sets)")
    parser.add_argument(
        "--transform",
        type=_transform_option,
        action="append",
        default=[],
        metavar="NAME=log2floor1|log2floor20|none",
        help="transform of data set NAME (repeatable)",
    )
    parser.add_argument("--datasets", nargs="+", help="data sets to run (default: all)")
    parser.add_argument("--methods", nargs="+", help=f"methods to run (default: all): {', '.join(METHODS)}")
    parser.add_argument("--seeds", nargs="+", default=["0", "1"], help="seeds of the fold splits (default: 0 1)")
    parser.add_argument("--k", nargs="+", default=["10", "50"], help="genes selected (default: 10 50)")
    parser.add_argument("--folds", type=int, help="run only the first N folds of each split")
    parser.add_argument("--out", type=Path, help="results CSV")
    parser.add_argument("--cases", type=Path, help="per-case predictions CSV (read by --summary)")
    parser.add_argument("--summary", type=Path, metavar="CSV", help="summarise a results CSV instead of running")
    parser.add_argument("--figures", type=Path, metavar="DIR", help="write the two figures to DIR")
    args = parser.parse_args(argv)

    if args.summary is not None:
        rows = _read_csv(args.summary)
        case_rows = _read_csv(args.cases) if args.cases is not None else None
    else:
        methods = _split(args.methods) or list(METHODS)
        unknown = sorted(set(methods) - set(METHODS))
        if unknown:
            parser.error(f"--methods: unknown {unknown}; known: {', '.join(METHODS)}")
        try:
            seeds, ks = _split(args.seeds, int), _split(args.k, int)
        except ValueError as exc:
            parser.error(f"--seeds and --k take integers ({exc})")
        if not seeds or not ks or min(ks) < 1:
            parser.error("--seeds and --k need at least one value, and k >= 1")
        if args.folds is not None and not 1 <= args.folds <= N_SPLITS:
            parser.error(f"--folds must be between 1 and {N_SPLITS}")
        datasets = load_datasets(_split(args.datasets), args.data_dir, dict(args.transform))
        result_rows, bug = run(datasets, methods, seeds, ks, args.folds, args.out, args.cases)
        rows = [{key: str(value) for key, value in row.items()} for row in result_rows]
        case_rows = _read_csv(args.cases) if args.cases is not None else None
    if rows:
        table, n_cells = summarize(rows, case_rows)
        print(markdown(table, n_cells))
        if args.figures is not None:
            for path in figures(rows, case_rows, args.figures):
                _progress(f"wrote {path}")
    return 1 if args.summary is None and bug else 0


if __name__ == "__main__":
    sys.exit(main())
