"""Make the result tables of the Reproductions pages from ``hdbayes reproduce NAME --full`` runs.

For each experiment named (default: all of ``hdbayes.experiments.EXPERIMENTS``) this runs ::

    hdbayes reproduce NAME --full --seed 0 --n-jobs 1 --out WORKDIR/NAME

one experiment at a time, records the command, seed, start time, hdbayes version, git commit, wall time, exit status
and load average in ``WORKDIR/NAME/run_metadata.json``, and extracts from the run's CSV tables and ``summary.md`` the
numbers that the pages show, into ``docs/reproductions/tables/``:

``<name>.csv``
    the measured numbers, one per row: ``key, quantity, setting, value`` (4 significant digits);
``<name>_checks.csv``
    the run's acceptance checks: ``check, held``;
``compare_<name>.csv``
    the paper's values (the hand-written ``docs/reproductions/paper/paper_<name>.csv``, joined on ``key``) beside
    ours: ``quantity, setting, paper, ours, source``; a paper row without a measured number is an error;
``runs.csv``
    one row of run metadata per experiment (updated in place, other experiments' rows kept).

Usage (from the repository's root)::

    python docs/reproductions/make_results.py                      # all 14 experiments, --full, one at a time
    python docs/reproductions/make_results.py colon hmm            # only these
    python docs/reproductions/make_results.py --reuse --workdir W  # extract from runs already in W/NAME
    python docs/reproductions/make_results.py --size small colon   # default size (quick; a check of the script)
    python docs/reproductions/make_results.py --rederive           # only recompute the derived rows (no run)

``derived/...`` rows are computed from a table's own rows (differences, ratios and growth rates that the pages'
prose quotes; :func:`derive`), so that every number of the prose is in a table (``tests/test_reproduction_prose.py``).

The data sets are read from ``HDBAYES_DATA`` as by ``hdbayes reproduce``. Nothing here is hard-coded: every number
of ``<name>.csv`` is read from, or computed from, the run's own output files.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "tables"
PAPER = HERE / "paper"
ROOT = HERE.parent.parent

MEASURED_COLUMNS = ["key", "quantity", "setting", "value"]
COMPARE_COLUMNS = ["quantity", "setting", "paper", "ours", "source"]
CHECK_COLUMNS = ["check", "held"]
RUN_COLUMNS = ["experiment", "command", "seed", "started_utc", "wall_time_s", "exit_status", "hdbayes_version",
               "git_commit", "load_start", "load_end"]  # fmt: skip


# -- running -----------------------------------------------------------------------------------------------------------
def _hdbayes_command():
    script = Path(sys.executable).with_name("hdbayes")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hdbayes"]


def _load():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def run_experiment(name, out, *, size="full", seed=0, n_jobs=1):
    """Run ``hdbayes reproduce NAME`` into ``out`` and write its ``run_metadata.json``.

    Parameters
    ----------
    name : str
        The experiment (a key of ``hdbayes.experiments.EXPERIMENTS``).
    out : pathlib.Path
        The output folder (must not exist, or be one written by hdbayes).
    size : {"full", "small"}
        ``--full`` or the default size.
    seed : int
        ``--seed``.
    n_jobs : int
        ``--n-jobs``.

    Returns
    -------
    dict
        The metadata: command, seed, start time, wall time, exit status, version, commit and load averages.
    """
    import hdbayes

    args = ["reproduce", name, *(["--full"] if size == "full" else []), "--seed", str(seed), "--n-jobs", str(n_jobs)]
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    # the commit the run starts from (read before it: a commit made while it runs is not the code it ran)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"  # fmt: skip
    load_start = _load()
    t0 = time.perf_counter()
    status = subprocess.run([*_hdbayes_command(), *args, "--out", str(out)], check=False).returncode
    wall = time.perf_counter() - t0
    meta = {"name": name, "command": "hdbayes " + " ".join(args), "seed": seed, "started_utc": started,
            "wall_time_s": round(wall, 1), "exit_status": status, "hdbayes_version": hdbayes.__version__,
            "git_commit": commit, "load_start": load_start, "load_end": _load()}  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / "run_metadata.json").write_text(json.dumps(meta) + "\n")
    return meta


# -- reading a run's output ------------------------------------------------------------------------------------------
def read_table(out, stem):
    """The rows of ``out/<stem>.csv`` as dicts of strings.

    Parameters
    ----------
    out : pathlib.Path
        A run's output folder.
    stem : str
        The table's file stem.

    Returns
    -------
    list of dict
        The rows.
    """
    return read_csv(out / f"{stem}.csv")


_CHECK = re.compile(r"^- \[([ xX])\] (.+)$")


def read_checks(out):
    """The acceptance checks listed in ``out/summary.md`` (``- [x] name`` held, ``- [ ] name`` did not).

    Parameters
    ----------
    out : pathlib.Path
        A run's output folder.

    Returns
    -------
    list of dict
        ``{"check": name, "held": "yes" or "no"}`` in the summary's order.
    """
    checks = []
    for line in (out / "summary.md").read_text().splitlines():
        match = _CHECK.match(line.strip())
        if match:
            checks.append({"check": match.group(2), "held": "yes" if match.group(1) != " " else "no"})
    return checks


def fmt(value):
    """A number to 4 significant digits (integers as they are; text unchanged).

    Parameters
    ----------
    value : int, float or str
        The value.

    Returns
    -------
    str
        Its text.
    """
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eE") or value in ("nan", "inf") else int(value)
        except ValueError:
            return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.4g}"


def measured(key, quantity, setting, value):
    """One row of a measured table.

    Parameters
    ----------
    key : str
        The join key with the paper's table (``paper_<name>.csv``).
    quantity, setting : str
        What is measured, and for which setting (shown on the page).
    value : int, float or str
        The number.

    Returns
    -------
    dict
        The row, with ``value`` formatted by :func:`fmt`.
    """
    return {"key": key, "quantity": quantity, "setting": setting, "value": fmt(value)}


def _f(row, column):
    return float(row[column])


def _by(rows, *columns):
    return {tuple(row[c] for c in columns): row for row in rows}


# -- one extractor per experiment: the run's output folder -> measured rows -------------------------------------------
def _error_rows(rows, *, key_columns, label, methods=("corrected", "uncorrected")):
    """actual / expected error, AMLP (and gamma) per setting and method, from a results table."""
    out = []
    for row in rows:
        if row["method"] not in methods:
            continue
        setting = ", ".join(f"{c} = {row[c]}" for c in key_columns)
        key = "/".join(f"{c}={row[c]}" for c in key_columns) + f"/{row['method']}"
        out.append(measured(f"{key}/actual_error", f"actual error, {row['method']}", setting, row["actual_error"]))
        out.append(measured(f"{key}/expected_error", f"expected error, {row['method']}", setting,
                            row["expected_error"]))  # fmt: skip
        out.append(measured(f"{key}/gap", f"expected − actual error, {row['method']}", setting,
                            _f(row, "expected_error") - _f(row, "actual_error")))  # fmt: skip
        out.append(measured(f"{key}/amlp", f"AMLP, {row['method']}", setting, row["amlp"]))
        if "gamma" in row and row["method"] == methods[0] and _f(row, "gamma") > 0:
            out.append(measured("/".join(f"{c}={row[c]}" for c in key_columns) + "/gamma", f"threshold γ ({label})",
                                setting, row["gamma"]))  # fmt: skip
    return out


def _posterior_mean(rows, group_columns, x_column, density_column):
    """The posterior mean of ``x`` from a density tabulated on a grid (trapezoidal rule), per group."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[c] for c in group_columns), []).append((_f(row, x_column), _f(row, density_column)))
    means = {}
    for group, points in groups.items():
        points.sort()
        mass = moment = 0.0
        for (x0, d0), (x1, d1) in zip(points, points[1:]):
            mass += (d0 + d1) * (x1 - x0) / 2
            moment += (x0 * d0 + x1 * d1) * (x1 - x0) / 2
        means[group] = moment / mass
    return means


def _seconds(rows, key_columns, methods=("corrected", "uncorrected")):
    out = []
    for row in rows:
        if row["method"] in methods:
            setting = ", ".join(f"{c} = {row[c]}" for c in key_columns)
            key = "/".join(f"{c}={row[c]}" for c in key_columns)
            out.append(measured(f"{key}/{row['method']}/seconds", f"fit + predict seconds, {row['method']}", setting,
                                row["seconds"]))  # fmt: skip
    return out


def _calibration_rows(out):
    """Per k and method, the count-weighted mean |predicted − actual| over the run's calibration bins (issue 29:
    the thesis's Tables 2.1 and 2.3 bin by bin)."""
    if not (out / "calibration.csv").exists():
        return []
    sums = {}
    for row in read_table(out, "calibration"):
        total = sums.setdefault((row["k"], row["method"]), [0.0, 0])
        total[0] += int(row["count"]) * abs(_f(row, "predicted") - _f(row, "actual"))
        total[1] += int(row["count"])
    return [measured(f"k={k}/{method}/calibration_gap",
                     f"mean |predicted − actual| over the calibration bins (count-weighted), {method}", f"k = {k}",
                     weighted / count) for (k, method), (weighted, count) in sums.items()]  # fmt: skip


def extract_naive_bayes_simulation(out):
    rows = read_table(out, "results")
    result = _error_rows(rows, key_columns=["k"], label="|COR|")
    for row in rows:
        if row["method"] in ("corrected", "uncorrected"):
            result.append(measured(f"k={row['k']}/{row['method']}/brier", f"average squared error, {row['method']}",
                                   f"k = {row['k']}", row["brier"]))  # fmt: skip
    means = _posterior_mean(read_table(out, "alpha_posterior"), ["k", "method"], "log_alpha", "density")
    for (k, method), mean in means.items():
        if method in ("corrected", "uncorrected"):
            result.append(measured(f"k={k}/{method}/log_alpha_mean", f"posterior mean of log α, {method} (true 5.70)",
                                   f"k = {k}", mean))  # fmt: skip
    if (out / "correlations.csv").exists():  # Fig. 2.4 in numbers (issue 29)
        row = read_table(out, "correlations")[0]
        for column, label in (("test_best_training_rank", "training rank of the test set's most correlated feature"),
                              ("test_best_test_cor", "its |COR| in the test set"),
                              ("test_best_training_cor", "its |COR| in the training set"),
                              ("training_best_training_cor", "|COR| of the training set's best feature, training"),
                              ("training_best_test_cor", "|COR| of the training set's best feature, test"),
                              ):  # fmt: skip
            result.append(measured(f"correlations/{column}", label, "all 10000 features", row[column]))
    return result + _seconds(read_table(out, "timing"), ["k"]) + _calibration_rows(out)


def _paired(rows, group_column, measure):
    from hdbayes.metrics import paired_t_test

    by = _by(rows, group_column, "method")
    groups = sorted({row[group_column] for row in rows}, key=float)
    corrected = [_f(by[g, "corrected"], measure) for g in groups]
    uncorrected = [_f(by[g, "uncorrected"], measure) for g in groups]
    better = sum(c < u for c, u in zip(corrected, uncorrected))
    p_value = float(paired_t_test(corrected, uncorrected).pvalue) if len(groups) > 1 else float("nan")
    return groups, better, p_value


def _group_comparison(rows, name, group_column="group", measures=("amlp", "brier")):
    labels = {"amlp": "AMLP", "brier": "average squared error", "actual_loss": "average loss"}
    out = []
    for measure in measures:
        groups, better, p_value = _paired(rows, group_column, measure)
        label = labels.get(measure, measure)
        out.append(measured(f"{measure}/groups_better", f"{label}: groups where corrected is lower",
                            f"of {len(groups)} {name}", better))  # fmt: skip
        out.append(measured(f"{measure}/p_value", f"{label}: paired t-test p", f"{len(groups)} {name}", p_value))
    return out


def extract_colon(out):
    rows = read_table(out, "results")
    result = _group_comparison(rows, "gene groups")
    for method in ("corrected", "uncorrected"):
        selected = [row for row in rows if row["method"] == method]
        below = sum(_f(row, "expected_error") < _f(row, "actual_error") for row in selected)
        result.append(measured(f"{method}/expected_below_actual", f"groups with expected error below actual, {method}",
                               f"of {len(selected)} gene groups", below))  # fmt: skip
        gap = sum(_f(row, "actual_error") - _f(row, "expected_error") for row in selected) / len(selected)
        result.append(measured(f"{method}/mean_gap", f"mean actual − expected error, {method}",
                               f"{len(selected)} gene groups", gap))  # fmt: skip
    by = _by(rows, "group", "method")
    groups = sorted({row["group"] for row in rows}, key=float)
    same = sum(by[g, "corrected"]["actual_error"] == by[g, "uncorrected"]["actual_error"] for g in groups)
    result.append(measured("same_error", "groups where both methods have the same error rate",
                           f"of {len(groups)} gene groups", same))  # fmt: skip
    for measure, label in (("amlp", "AMLP"), ("brier", "average squared error")):
        difference = sum(_f(by[g, "corrected"], measure) - _f(by[g, "uncorrected"], measure) for g in groups)
        result.append(measured(f"{measure}/mean_difference", f"mean corrected − uncorrected {label}",
                               f"{len(groups)} gene groups", difference / len(groups)))  # fmt: skip
    for g in groups:
        for method in ("corrected", "uncorrected"):
            result.append(measured(f"group={g}/{method}/actual_error", f"error rate, {method}", f"gene group {g}",
                                   by[g, method]["actual_error"]))  # fmt: skip
    if (out / "thresholds.csv").exists():  # issue 29: the thesis's "around 0.5 in all cases"
        thresholds = read_table(out, "thresholds")
        for column, label in (("gamma_min", "smallest"), ("gamma_max", "largest")):
            pick = min if column == "gamma_min" else max
            result.append(measured(f"gamma/{label}", f"{label} γ (5th largest |COR|) over folds and groups",
                                   f"{len(thresholds)} gene groups × 62 folds",
                                   pick(_f(row, column) for row in thresholds)))  # fmt: skip
        medians = sorted(_f(row, "gamma_median") for row in thresholds)
        result.append(measured("gamma/median_range", "median γ over folds, per group: lowest – highest",
                               f"{len(thresholds)} gene groups",
                               f"{fmt(medians[0])} – {fmt(medians[-1])}"))  # fmt: skip
    return result


def extract_interaction_counts(out):
    result = []
    for row in read_table(out, "sequence_counts"):
        setting = f"HMM histories, order {row['order']}"
        result.append(measured(f"sequence/O={row['order']}/original", "original parameters", setting, row["original"]))
        result.append(measured(f"sequence/O={row['order']}/compressed", "compressed parameters", setting,
                               row["compressed"]))  # fmt: skip
        result.append(measured(f"sequence/O={row['order']}/ratio", "compressed / original", setting, row["ratio"]))
    for row in read_table(out, "classification_counts"):
        setting = f"classification ({row['sweep']}), p = {row['p']}, K = {row['K']}, O = {row['order']}"
        key = f"classification/p={row['p']}/K={row['K']}/O={row['order']}"
        if any(r["key"] == f"{key}/ratio" for r in result):
            continue  # the centre point (p = 7, K = 3, O = 5) is in all three sweeps
        result.append(measured(f"{key}/original", "original parameters", setting, row["original"]))
        result.append(measured(f"{key}/compressed", "compressed parameters", setting, row["compressed"]))
        result.append(measured(f"{key}/ratio", "compressed / original", setting, row["ratio"]))
    return result


def extract_discrete_models(out):
    result = []
    predictive = read_table(out, "beta_binomial_predictive")
    for row in predictive:
        result.append(measured(f"predictive/x={row['heads']}/bayes", "Bb(x | 5, 19, 10)", f"x = {row['heads']}",
                               row["beta_binomial"]))  # fmt: skip
        result.append(measured(f"predictive/x={row['heads']}/plugin", "Bin(x | 10, 2/11)", f"x = {row['heads']}",
                               row["plugin_map"]))  # fmt: skip
    for column, label in (("beta_binomial", "Bb(x | 5, 19, 10)"), ("plugin_map", "Bin(x | 10, 2/11)")):
        tail = sum(_f(row, column) for row in predictive if int(row["heads"]) >= 6)
        result.append(measured(f"predictive/tail6/{column}", f"P(x ≥ 6), {label}", "M = 10 future trials", tail))
    for row in read_table(out, "beta_binomial_posterior"):
        if row["float"] not in ("", "nan"):
            result.append(measured(f"beta_binomial/{row['quantity']}", row["quantity"], "Beta(2, 2), N1 = 3, N0 = 17",
                                   row["float"]))  # fmt: skip
    for row in read_table(out, "number_game"):
        result.append(measured(f"number_game/{row['prior']}/{row['D']}/p_pow2", "p(h_pow2 | D)",
                               f"prior {row['prior']}, D = {row['D']}", row["p_pow2"]))  # fmt: skip
    for row in read_table(out, "black_swan"):
        for column in ("mle", "laplace_add_one", "beta_2_2"):
            result.append(measured(f"black_swan/N1={row['N1']}/N0={row['N0']}/{column}", f"p(x̃ = 1 | D), {column}",
                                   f"N1 = {row['N1']}, N0 = {row['N0']}", row[column]))  # fmt: skip
    for row in read_table(out, "bursty_corpus"):
        short = row["model"].split(" (")[0]
        result.append(measured(f"corpus/{short}/accuracy", "accuracy", short, row["accuracy"]))
        result.append(measured(f"corpus/{short}/log_loss", "log-loss (nats)", short, row["log_loss"]))
    zero = re.search(r"multinomial MLE gives ([0-9.]+)% of the test documents", (out / "summary.md").read_text())
    if zero:
        result.append(measured("corpus/mle_zero_percent", "% of test documents with probability 0 under every class",
                               "multinomial MLE (no smoothing)", zero.group(1)))  # fmt: skip
    for row in read_table(out, "dcm_concentration"):
        result.append(measured(f"dcm/class={row['class']}/alpha0", "fitted α̂_0 (true 20)", f"class {row['class']}",
                               row["fitted_alpha0"]))  # fmt: skip
    return result


def _columns(rows, key_columns, columns, methods=("corrected", "uncorrected")):
    """Named columns of a results table as measured rows, per setting and method."""
    labels = {"brier": "average squared error", "log_alpha_mean": "posterior mean of log α (true 5.70)",
              "seconds": "fit + predict seconds", "seconds_per_50_iterations": "seconds per 50 iterations",
              "fit_seconds": "training seconds", **LATENT_LABELS}  # fmt: skip
    out = []
    for row in rows:
        if row["method"] not in methods:
            continue
        setting = ", ".join(f"{c} = {row[c]}" for c in key_columns)
        key = "/".join(f"{c}={row[c]}" for c in key_columns)
        for column in columns:
            out.append(measured(f"{key}/{row['method']}/{column}", f"{labels.get(column, column)}, {row['method']}",
                                setting, row[column]))  # fmt: skip
    return out


def extract_mixture_simulation(out):
    rows = read_table(out, "results")
    result = (_error_rows(rows, key_columns=["k"], label="|COR|")
              + _columns(rows, ["k"], ["brier", "log_alpha_mean"])
              + _columns(read_table(out, "timing"), ["k"], ["seconds_per_50_iterations"])
              + _calibration_rows(out))  # fmt: skip
    if "z_x0_agreement" in rows[0]:  # issue 29: the thesis's explanation of the bias left after correction
        result += _columns(rows, ["k"], list(LATENT_LABELS))
    if (out / "complete_data.csv").exists():  # issue 29: the model on every feature
        row = read_table(out, "complete_data")[0]
        setting = f"all {row['k']} features"
        for column, label in (("actual_error", "actual error"), ("expected_error", "expected error"),
                              ("amlp", "AMLP"), ("brier", "average squared error"),
                              ("log_alpha_mean", "posterior mean of log α (true 5.70)"),
                              *LATENT_LABELS.items()):  # fmt: skip
            result.append(measured(f"complete/{column}", f"{label}, complete data", setting, row[column]))
        timing = read_table(out, "timing_complete")[0]
        result.append(measured("complete/seconds_per_50_iterations", "seconds per 50 iterations, complete data",
                               setting, timing["seconds_per_50_iterations"]))  # fmt: skip
    if (out / "latent_truth.csv").exists():
        row = read_table(out, "latent_truth")[0]
        for column, label in (("z_x0_agreement", "fraction of training cases with z = x_0"),
                              ("phi00", "fraction with x_0 = 1 among z = 0 (φ_00 = 0.1)"),
                              ("phi10", "fraction with x_0 = 1 among z = 1 (φ_10 = 0.9)")):  # fmt: skip
            result.append(measured(f"truth/{column}", label, "the simulated training cases", row[column]))
    return result


#: The columns of the mixture fits that describe the sampled latent labels (issue 29), with their labels.
LATENT_LABELS = {
    "z_x0_agreement": "fraction of training cases with z = x_0 (or its complement), mean over draws",
    "phi0_low": "posterior mean of the smaller P(x_0 = 1 | z)",
    "phi0_high": "posterior mean of the larger P(x_0 = 1 | z)",
    "smaller_component": "mean size of the smaller label group",
}


def extract_prior_knowledge(out):
    result = []
    for row in read_table(out, "summary"):
        prior = row["prior"].replace(" p0", "")
        result.append(measured(f"n={row['n']}/{prior}/mean_error", f"mean relative error, {row['prior']}",
                               f"n = {row['n']}", row["mean error"]))  # fmt: skip
        if row.get("converged", "") != "":  # issue 29
            result.append(measured(f"n={row['n']}/{prior}/converged", f"EP fits that converged, {row['prior']}",
                                   f"n = {row['n']}", row["converged"]))  # fmt: skip
    errors = read_table(out, "errors")
    if errors and "converged" in errors[0]:
        result.append(measured("converged", "EP fits that converged", f"of {len(errors)}",
                               sum(row["converged"] == "True" for row in errors)))  # fmt: skip
    return result


def extract_group_sparse_reconstruction(out):
    result = []
    for row in read_table(out, "summary"):
        result.append(measured(f"n={row['n']}/{row['method']}/mean_error", f"mean relative error, {row['method']}",
                               f"n = {row['n']}", row["mean error"]))  # fmt: skip
        if row.get("converged", ""):  # the EP methods (issue 29)
            result.append(measured(f"n={row['n']}/{row['method']}/converged",
                                   f"EP fits that converged, {row['method']}", f"n = {row['n']}, of "
                                   f"{row['repetitions']}", row["converged"]))  # fmt: skip
        for score, label in (("active found", "active groups (of 10) with P(z_g = 1) > 0.5"),
                             ("inactive found", "inactive groups (of 118) with P(z_g = 1) > 0.5"),
                             ("ranking AUC", "P(an active group outranks an inactive one)")):  # fmt: skip
            if row.get(f"mean {score}", "") != "":  # the group models (issue 29)
                result.append(measured(f"n={row['n']}/{row['method']}/{score.replace(' ', '_')}",
                                       f"mean {label}, {row['method']}", f"n = {row['n']}",
                                       row[f"mean {score}"]))  # fmt: skip
    errors = _by(read_table(out, "errors"), "n", "repetition", "method")
    for n in sorted({key[0] for key in errors}, key=int):
        pairs = [(errors[key], errors.get((n, key[1], "GSS-Gibbs"))) for key in errors
                 if key[0] == n and key[2] == "GSS-EP"]  # fmt: skip
        pairs = [(ep, gibbs) for ep, gibbs in pairs if gibbs is not None]
        if pairs:
            apart = sum(abs(_f(ep, "relative_error") - _f(gibbs, "relative_error")) > 0.05 for ep, gibbs in pairs)
            result.append(measured(f"n={n}/ep_gibbs_apart", "repetitions where EP and Gibbs errors differ by > 0.05",
                                   f"n = {n}, of {len(pairs)}", apart))  # fmt: skip
            converged = [(ep, gibbs) for ep, gibbs in pairs if ep.get("converged") == "True"]
            if "converged" in pairs[0][0]:
                apart = sum(abs(_f(ep, "relative_error") - _f(gibbs, "relative_error")) > 0.05
                            for ep, gibbs in converged)  # fmt: skip
                result.append(measured(f"n={n}/ep_gibbs_apart_converged",
                                       "repetitions where EP converged and EP and Gibbs errors differ by > 0.05",
                                       f"n = {n}, of {len(converged)}", apart))  # fmt: skip
    times = {}
    for row in read_table(out, "timing"):
        times.setdefault((row["n"], row["method"]), []).append(_f(row, "seconds"))
    n_max = max((key[0] for key in times), key=int)
    for (n, method), seconds in times.items():
        if n == n_max or (n == "60" and method != "GSS-Gibbs"):  # every method's time (issue 29: paper C5)
            result.append(measured(f"n={n}/{method}/seconds", f"seconds per fit, {method}", f"n = {n}",
                                   sum(seconds) / len(seconds)))  # fmt: skip
    design = read_table(out, "design")
    for name in ("sequential", "random"):
        rows = [row for row in design if row["design"] == name]
        reach = [_f(row, "n to reach 0.1") for row in rows]
        setting = f"{name} rows, {len(rows)} runs"
        result.append(measured(f"design/{name}/n_to_reach", "mean n to reach error 0.1", setting,
                               sum(reach) / len(reach)))  # fmt: skip
        result.append(measured(f"design/{name}/final_error", "mean error at the final n", setting,
                               sum(_f(row, "final error") for row in rows) / len(rows)))  # fmt: skip
    return result


def _gaussian_rows(rows, key_columns):
    """Error rates, losses and the posterior of log τ^μ of the Gaussian classifier's runs."""
    result = _error_rows(rows, key_columns=key_columns, label="F")
    for row in rows:
        if row["method"] not in ("corrected", "uncorrected"):
            continue
        setting = ", ".join(f"{c} = {row[c]}" for c in key_columns)
        key = "/".join(f"{c}={row[c]}" for c in key_columns) + f"/{row['method']}"
        for column, label in (("actual_loss", "average loss"), ("expected_loss", "expected loss")):
            if column in row:
                result.append(measured(f"{key}/{column}", f"{label} (random log-normal loss), {row['method']}",
                                       setting, row[column]))  # fmt: skip
        if row.get("log_tau_mu_mean", "") not in ("", "nan"):
            result.append(measured(f"{key}/log_tau_mu", f"posterior mean of log τ^μ, {row['method']}", setting,
                                   row["log_tau_mu_mean"]))  # fmt: skip
            result.append(measured(f"{key}/log_tau_mu_95", f"95% interval of log τ^μ, {row['method']}", setting,
                                   f"{fmt(row['log_tau_mu_2.5%'])} – {fmt(row['log_tau_mu_97.5%'])}"))  # fmt: skip
        for column in ("actual_error_eq15", "expected_error_eq15", "amlp_eq15"):
            if row.get(column, "") not in ("", "nan"):
                quantity = column.removesuffix("_eq15").replace("_", " ").replace("amlp", "AMLP")
                result.append(measured(f"{key}/{column}", f"{quantity} with the paper's estimator (eq. 15), "
                                       f"{row['method']}", setting, row[column]))  # fmt: skip
    return result


def extract_gaussian_simulation(out):
    rows = read_table(out, "results")
    timing = read_table(out, "timing")
    return _gaussian_rows(rows, ["k"]) + _columns(timing, ["k"], ["fit_seconds"])


def _compressed_rows(out):
    """AMLP, error rate, parameter counts and fit times of a compressed-model experiment, per order and prior."""
    rows = read_table(out, "results")
    timing = {tuple(row.get(c, "") for c in ("order", "prior", "compressed")): row
              for row in read_table(out, "timing")}  # fmt: skip
    result = []
    for row in rows:
        variant = row["prior"] + ("" if "compressed" not in row else
                                  ", compressed" if row["compressed"] == "True" else ", uncompressed")  # fmt: skip
        key = f"O={row['order']}/{variant.replace(', ', '/')}"
        setting = f"O = {row['order']}"
        result.append(measured(f"{key}/amlp", f"AMLP, {variant}", setting, row["amlp"]))
        result.append(measured(f"{key}/error_rate", f"error rate, {variant}", setting, row["error_rate"]))
        if row["prior"] == "cauchy" and row.get("compressed", "True") == "True":
            result.append(measured(f"O={row['order']}/n_original", "original parameters", setting, row["n_original"]))
            result.append(measured(f"O={row['order']}/n_compressed", "compressed parameters", setting,
                                   row["n_compressed"]))  # fmt: skip
            result.append(measured(f"O={row['order']}/ratio", "compressed / original", setting, row["ratio"]))
        times = timing.get((row["order"], row["prior"], row.get("compressed", "")))
        if times:
            result.append(measured(f"{key}/fit_seconds", f"training seconds, {variant}", setting, times["fit_seconds"]))
            if times.get("predict_seconds", "") != "" and row.get("compressed", "True") == "True":
                result.append(measured(f"{key}/predict_seconds", f"seconds to predict the test cases, {variant}",
                                       setting, times["predict_seconds"]))  # fmt: skip
    return result


def _autocorrelation_rows(out, threshold=0.2):
    """Per prior, compression and σ_o: the first saved lag at which the chains' autocorrelation falls below 0.2."""
    first = {}
    rows = read_table(out, "sigma_autocorrelation")
    last = max(int(row["lag"]) for row in rows)
    for row in rows:
        group = (row["prior"], row["compressed"], row["sigma_order"])
        if group not in first and _f(row, "acf") < threshold:
            first[group] = int(row["lag"])
        first.setdefault(("all",) + group, 0)
    result = []
    for group in sorted({key[1:] for key in first if key[0] == "all"}, key=lambda g: (g[0], g[1], int(g[2]))):
        prior, compressed, order = group
        variant = f"{prior}, {'compressed' if compressed == 'True' else 'uncompressed'}"
        lag = first.get(group, f"> {last}")
        result.append(measured(f"acf/{prior}/{'compressed' if compressed == 'True' else 'uncompressed'}/sigma{order}",
                               f"first lag with autocorrelation < {threshold}, {variant}", f"σ_{order}",
                               lag))  # fmt: skip
    return result


def _medians_rows(out, box):
    """Thesis Fig. 3.13 and 3.21 in numbers: the posterior medians of the compressed parameters under the two
    priors (``medians.csv``), against the figure's zoom box (−box, box)²."""
    rows = read_table(out, "medians")
    cauchy = [abs(_f(row, "cauchy")) for row in rows]
    gaussian = [abs(_f(row, "gaussian")) for row in rows]
    n = len(rows)
    setting = f"O = {rows[0]['order']}, {'two classes' if rows[-1]['class'] == '0' else 'all classes'}"
    result = [measured("medians/n_parameters", "compressed parameters (× classes) compared", setting, n)]
    for prior, values in (("cauchy", cauchy), ("gaussian", gaussian)):
        result.append(measured(f"medians/{prior}/max_abs", f"largest |median|, {prior}", setting, max(values)))
        result.append(measured(f"medians/{prior}/outside_box", f"parameters with |median| > {fmt(box)}, {prior}",
                               setting, sum(v > box for v in values)))  # fmt: skip
    result.append(measured("medians/cauchy_large_gaussian_small",
                           f"parameters with |median| > {fmt(box)} under Cauchy and < {fmt(box / 2)} under Gaussian",
                           setting, sum(c > box and g < box / 2 for c, g in zip(cauchy, gaussian))))  # fmt: skip
    inside = [(c, g) for c, g in zip(cauchy, gaussian) if c < box and g < box]
    result.append(measured("medians/in_box", f"parameters with both |medians| < {fmt(box)}", setting, len(inside)))
    result.append(measured("medians/in_box/cauchy_smaller",
                           "of those, parameters with |Cauchy median| < |Gaussian median|", setting,
                           sum(c < g for c, g in inside)))  # fmt: skip
    for index, prior in enumerate(("cauchy", "gaussian")):
        values = sorted(pair[index] for pair in inside)
        middle = (values[(len(values) - 1) // 2] + values[len(values) // 2]) / 2 if values else float("nan")
        result.append(measured(f"medians/in_box/{prior}/median_abs",
                               f"median |median| of the parameters in the box, {prior}", setting, middle))  # fmt: skip
    return result


def extract_hmm(out):
    return _compressed_rows(out) + _autocorrelation_rows(out)


def extract_english_text(out):
    result = _compressed_rows(out)
    if (out / "sigma_autocorrelation.csv").exists():  # issue 29: the uncompressed fits
        result += _autocorrelation_rows(out)
    if (out / "medians.csv").exists():
        result += _medians_rows(out, box=2.0)
    if (out / "named_parameters.csv").exists():
        for row in read_table(out, "named_parameters"):
            key = f"named/{row['parameter']}/{row['prior']}"
            setting = f"{row['parameter']} ({row['n_patterns']} β), {row['prior']}"
            result.append(measured(f"{key}/median", "posterior median", setting, row["median"]))
            result.append(measured(f"{key}/q97.5", "97.5 % quantile", setting, row["q97.5"]))
            result.append(measured(f"{key}/width_95", "width of the central 95 % interval", setting,
                                   row["width_95"]))  # fmt: skip
    return result


def extract_cauchy_classification(out):
    result = _compressed_rows(out)
    rows = [row for row in read_table(out, "results")
            if row["prior"] == "cauchy" and row.get("compressed", "True") == "True"]  # fmt: skip
    best = min(rows, key=lambda row: _f(row, "amlp"))
    result.append(measured("best_order", "order with the lowest AMLP, Cauchy prior", "O = 1 … 7", best["order"]))
    for row in read_table(out, "true_model"):
        result.append(measured("true_model/amlp", "AMLP of the true model", "the generating β", row["amlp"]))
        result.append(measured("true_model/error_rate", "error rate of the true model", "the generating β",
                               row["error_rate"]))  # fmt: skip
    if (out / "sigma_autocorrelation.csv").exists():  # issue 29: the uncompressed fits
        result += _autocorrelation_rows(out)
    if (out / "medians.csv").exists():
        result += _medians_rows(out, box=1.0)
    return result


def extract_categorical_simulation(out):
    rows = read_table(out, "results")
    result = _error_rows(rows, key_columns=["G", "L", "k"], label="X²")
    training = {(row["G"], row["L"]): row["n_train"] for row in rows}
    for (g, level), n in training.items():
        result.append(measured(f"G={g}/L={level}/n_train", "training cases", f"G = {g}, L = {level}", n))
    means = _posterior_mean(read_table(out, "alpha_posterior"), ["G", "L", "k", "method"], "log_alpha", "density")
    for (g, level, k, method), mean in means.items():
        result.append(measured(f"G={g}/L={level}/k={k}/{method}/log_alpha_mean",
                               f"posterior mean of log α, {method} (true 5.70)", f"G = {g}, L = {level}, k = {k}",
                               mean))  # fmt: skip
    return result


def extract_srbct(out):
    rows = read_table(out, "results")
    result = _group_comparison(rows, "gene groups", measures=("amlp", "brier", "actual_loss"))
    by = _by(rows, "group", "method")
    groups = sorted({row["group"] for row in rows}, key=float)

    def gap(row):
        return abs(_f(row, "expected_error") - _f(row, "actual_error"))

    narrower = sum(gap(by[g, "corrected"]) < gap(by[g, "uncorrected"]) for g in groups)
    result.append(measured("gap/groups_narrower", "groups where the correction narrows |expected − actual error|",
                           f"of {len(groups)} gene groups", narrower))  # fmt: skip
    for method in ("corrected", "uncorrected"):
        selected = [by[g, method] for g in groups]
        result.append(measured(f"{method}/mean_abs_gap", f"mean |expected − actual error|, {method}",
                               f"{len(groups)} gene groups", sum(map(gap, selected)) / len(selected)))  # fmt: skip
        below = sum(_f(row, "expected_error") < _f(row, "actual_error") for row in selected)
        result.append(measured(f"{method}/expected_below_actual", f"groups with expected error below actual, {method}",
                               f"of {len(groups)} gene groups", below))  # fmt: skip
    excess = [_f(by[g, "corrected"], "actual_loss") - _f(by[g, "uncorrected"], "actual_loss") for g in groups]
    result.append(measured("actual_loss/largest_excess", "largest excess of the corrected average loss",
                           f"{len(groups)} gene groups", max(excess)))  # fmt: skip
    result.append(measured("actual_loss/mean_difference", "mean corrected − uncorrected average loss",
                           f"{len(groups)} gene groups", sum(excess) / len(excess)))  # fmt: skip
    for row in read_table(out, "whole_data"):
        result.append(measured(f"whole/{row['method']}/misclassified", f"cases misclassified, {row['method']}",
                               "all 2308 genes, top 50 by F, leave-one-out", row["misclassified"]))  # fmt: skip
        result.append(measured(f"whole/{row['method']}/expected_error", f"expected error, {row['method']}",
                               "all 2308 genes, top 50 by F, leave-one-out", row["expected_error"]))  # fmt: skip
    return result


def extract_lymphoma(out):
    result = _gaussian_rows(read_table(out, "results"), ["k"])
    for row in read_table(out, "whole_data_fit"):
        setting = f"k = {row['k']}, all 62 cases"
        result.append(measured(f"fit/k={row['k']}/{row['method']}/log_tau_mu", f"posterior mean of log τ^μ, "
                               f"{row['method']}", setting, row["log_tau_mu_mean"]))  # fmt: skip
        if row["method"] == "corrected":
            result.append(measured(f"fit/k={row['k']}/threshold_F", "threshold F", setting, row["threshold_F"]))
    return result


# -- derived numbers: computed from a measured table's own rows, so that the prose can quote them (issue 29) -------
DERIVED = "derived/"


def _values(rows):
    return {row["key"]: row["value"] for row in rows}


def _number(value):
    try:
        return float(value)
    except ValueError:
        return None


def _derive_priors(rows):
    """Gaussian − Cauchy AMLP and error rate per order (compressed fits); compressed − uncompressed AMLP per prior."""
    values = _values(rows)
    result = []
    orders = sorted({int(key.split("/")[0][2:]) for key in values if key.startswith("O=")})
    for order in orders:
        for variant in ("", "/compressed"):
            for measure, label in (("amlp", "AMLP"), ("error_rate", "error rate")):
                gaussian = values.get(f"O={order}/gaussian{variant}/{measure}")
                cauchy = values.get(f"O={order}/cauchy{variant}/{measure}")
                if gaussian is None or cauchy is None:
                    continue
                result.append(measured(f"{DERIVED}O={order}{variant}/gaussian_minus_cauchy/{measure}",
                                       f"{label}, Gaussian − Cauchy{variant.replace('/', ', ')}", f"O = {order}",
                                       float(gaussian) - float(cauchy)))  # fmt: skip
    for prior in ("cauchy", "gaussian"):
        gaps = [(order, float(values[f"O={order}/{prior}/compressed/amlp"])
                 - float(values[f"O={order}/{prior}/uncompressed/amlp"])) for order in orders
                if f"O={order}/{prior}/uncompressed/amlp" in values]  # fmt: skip
        if gaps:
            result.append(measured(f"{DERIVED}{prior}/largest_abs_compression_amlp",
                                   f"largest |AMLP compressed − uncompressed|, {prior}", f"{len(gaps)} orders",
                                   max(abs(gap) for _, gap in gaps)))  # fmt: skip
        for order in orders:
            fast = _number(values.get(f"O={order}/{prior}/compressed/fit_seconds", ""))
            slow = _number(values.get(f"O={order}/{prior}/uncompressed/fit_seconds", ""))
            if fast and slow:
                result.append(measured(f"{DERIVED}O={order}/{prior}/time_ratio",
                                       f"training time compressed / uncompressed, {prior}", f"O = {order}",
                                       fast / slow))  # fmt: skip
        for order in orders:  # issue 29: "trapped in a local mode" (thesis §3.4.5)
            for measure, label in (("amlp", "AMLP"), ("error_rate", "error rate")):
                packed = _number(values.get(f"O={order}/{prior}/compressed/{measure}", ""))
                unpacked = _number(values.get(f"O={order}/{prior}/uncompressed/{measure}", ""))
                if packed is not None and unpacked is not None:
                    result.append(measured(f"{DERIVED}O={order}/{prior}/uncompressed_minus_compressed/{measure}",
                                           f"{label}, uncompressed − compressed, {prior}", f"O = {order}",
                                           unpacked - packed))  # fmt: skip
    result += _derive_faster_autocorrelation(values)
    cauchy = {order: float(values.get(f"O={order}/cauchy/amlp", values.get(f"O={order}/cauchy/compressed/amlp", "nan")))
              for order in orders}  # fmt: skip
    cauchy = {order: amlp for order, amlp in cauchy.items() if not math.isnan(amlp)}
    if cauchy:
        lowest = min(cauchy.values())
        for order, amlp in cauchy.items():
            result.append(measured(f"{DERIVED}O={order}/cauchy_above_lowest", "AMLP above the lowest, Cauchy prior",
                                   f"O = {order}", amlp - lowest))  # fmt: skip
    return result


def _lag(text):
    """A first lag of ``_autocorrelation_rows`` as a number ("> 250": not reached, infinite)."""
    return math.inf if text.startswith(">") else float(text)


def _derive_faster_autocorrelation(values):
    """Per prior and in all, the σ_o whose autocorrelation falls below the threshold at a smaller lag compressed
    than uncompressed (thesis Fig. 3.8, 3.11, 3.19: "5 out of 6 experiments"); both lags beyond the last: not
    faster."""
    pairs = {}
    for key, value in values.items():
        if key.startswith("acf/") and "/compressed/" in key:
            prior, sigma = key.split("/")[1], key.split("/")[3]
            other = values.get(f"acf/{prior}/uncompressed/{sigma}")
            if other is not None:
                pairs.setdefault(prior, []).append(_lag(value) < _lag(other))
    result = []
    for prior, faster in sorted(pairs.items()):
        result.append(measured(f"{DERIVED}acf/{prior}/faster_after_compressing",
                               f"σ_o whose autocorrelation falls faster compressed, {prior}", f"of {len(faster)}",
                               sum(faster)))  # fmt: skip
    if pairs:
        every = [flag for faster in pairs.values() for flag in faster]
        result.append(measured(f"{DERIVED}acf/faster_after_compressing",
                               "experiments (prior × σ_o) whose autocorrelation falls faster compressed",
                               f"of {len(every)}", sum(every)))  # fmt: skip
    return result


def _derive_mixture(rows):
    """Corrected / uncorrected time per k; the complete-data fit against the selected features' (issue 29)."""
    result = _derive_time_ratios("seconds_per_50_iterations")(rows)
    values = _values(rows)
    for key in values:
        if key.endswith("/corrected/amlp") and "complete/amlp" in values:
            setting = key.split("/")[0]
            for measure, label in (("amlp", "AMLP"), ("actual_error", "actual error")):
                result.append(measured(f"{DERIVED}{setting}/complete_minus_corrected/{measure}",
                                       f"{label}, complete data − corrected", setting.replace("=", " = "),
                                       float(values["complete/" + measure])
                                       - float(values[f"{setting}/corrected/{measure}"])))  # fmt: skip
            seconds = _number(values.get(f"{setting}/corrected/seconds_per_50_iterations", ""))
            complete = _number(values.get("complete/seconds_per_50_iterations", ""))
            if seconds and complete:
                result.append(measured(f"{DERIVED}{setting}/complete_over_corrected_time",
                                       "time per 50 iterations, complete data / corrected", setting.replace("=", " = "),
                                       complete / seconds))  # fmt: skip
    return result


def _derive_time_ratios(column):
    """Corrected / uncorrected time per k (the grading rule's time ratio)."""

    def derive(rows):
        values = _values(rows)
        result = []
        for key, value in values.items():
            if key.endswith(f"/corrected/{column}"):
                setting = key.split("/")[0]
                other = _number(values.get(f"{setting}/uncorrected/{column}", ""))
                if other:
                    result.append(measured(f"{DERIVED}{setting}/time_ratio", "time corrected / uncorrected",
                                           setting.replace("=", " = "), float(value) / other))  # fmt: skip
        return result

    return derive


def _derive_counts(rows):
    """The growth per order of the sequence models' parameter counts between consecutive orders."""
    values = _values(rows)
    orders = sorted(int(key.split("/")[1][2:]) for key in values
                    if key.startswith("sequence/O=") and key.endswith("/original"))  # fmt: skip
    result = []
    for low, high in zip(orders, orders[1:]):
        for kind in ("original", "compressed"):
            grown = float(values[f"sequence/O={high}/{kind}"]) - float(values[f"sequence/O={low}/{kind}"])
            step = grown / (high - low)
            result.append(measured(f"{DERIVED}sequence/O={low}-{high}/{kind}_per_order",
                                   f"{kind} parameters added per order", f"HMM histories, O = {low} to {high}",
                                   step))  # fmt: skip
    return result


def _derive_spike_slab(rows):
    """Gibbs's time per fit over EP's."""
    values = _values(rows)
    result = []
    for key, value in values.items():
        if key.endswith("/GSS-EP/seconds"):
            setting = key.split("/")[0]
            for method in ("GSS-Gibbs", "SS-EP", "group lasso (CV)", "ARD"):
                other = _number(values.get(f"{setting}/{method}/seconds", ""))
                if other:
                    result.append(measured(f"{DERIVED}{setting}/{method}_over_ep_time".replace("GSS-Gibbs", "gibbs"),
                                           f"time per fit, {method} / GSS-EP", setting.replace("=", " = "),
                                           other / float(value)))  # fmt: skip
    sequential, random = values.get("design/sequential/final_error"), values.get("design/random/final_error")
    if sequential and random:
        result.append(measured(f"{DERIVED}design/random_over_sequential", "mean final error, random / sequential rows",
                               "design runs", float(random) / float(sequential)))  # fmt: skip
    return result


DERIVATIONS = {
    "english-text": _derive_priors,
    "hmm": _derive_priors,
    "cauchy-classification": _derive_priors,
    "naive-bayes-simulation": _derive_time_ratios("seconds"),
    "gaussian-simulation": _derive_time_ratios("fit_seconds"),
    "mixture-simulation": _derive_mixture,
    "interaction-counts": _derive_counts,
    "group-sparse-reconstruction": _derive_spike_slab,
}


def derive(name, rows):
    """A measured table with its derived rows recomputed from the others (``derived/...`` keys, at the end).

    Parameters
    ----------
    name : str
        The experiment.
    rows : list of dict
        Its measured rows (derived ones, if any, are dropped and recomputed).

    Returns
    -------
    list of dict
        The measured rows followed by the derived rows.
    """
    base = [row for row in rows if not row["key"].startswith(DERIVED)]
    return base + (DERIVATIONS[name](base) if name in DERIVATIONS else [])


EXTRACTORS = {
    "srbct": extract_srbct,
    "lymphoma": extract_lymphoma,
    "categorical-simulation": extract_categorical_simulation,
    "hmm": extract_hmm,
    "english-text": extract_english_text,
    "cauchy-classification": extract_cauchy_classification,
    "gaussian-simulation": extract_gaussian_simulation,
    "group-sparse-reconstruction": extract_group_sparse_reconstruction,
    "prior-knowledge": extract_prior_knowledge,
    "mixture-simulation": extract_mixture_simulation,
    "naive-bayes-simulation": extract_naive_bayes_simulation,
    "colon": extract_colon,
    "interaction-counts": extract_interaction_counts,
    "discrete-models": extract_discrete_models,
}


# -- writing -----------------------------------------------------------------------------------------------------------
def write_csv(path, rows, columns):
    """Write ``rows`` (dicts) to ``path`` with the given columns.

    Parameters
    ----------
    path : pathlib.Path
        The CSV file.
    rows : list of dict
        The rows.
    columns : list of str
        The header.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path):
    """The rows of a CSV file as dicts of strings.

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    list of dict
        Its rows.
    """
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def compare(paper_rows, measured_rows):
    """The paper's values beside ours, joined on ``key``.

    Parameters
    ----------
    paper_rows : list of dict
        Rows of ``paper_<name>.csv``: ``key, quantity, setting, paper, source``.
    measured_rows : list of dict
        Rows of ``<name>.csv``: ``key, quantity, setting, value``.

    Returns
    -------
    list of dict
        ``quantity, setting, paper, ours, source`` in the paper table's order.

    Raises
    ------
    KeyError
        If a paper row's key has no measured number.
    """
    ours = {row["key"]: row["value"] for row in measured_rows}
    missing = [row["key"] for row in paper_rows if row["key"] not in ours]
    if missing:
        raise KeyError(f"no measured value for the paper's keys {missing}")
    return [{"quantity": row["quantity"], "setting": row["setting"], "paper": row["paper"], "ours": ours[row["key"]],
             "source": row["source"]} for row in paper_rows]  # fmt: skip


def extract(name, out):
    """The measured rows of one run.

    Parameters
    ----------
    name : str
        The experiment.
    out : pathlib.Path
        Its output folder.

    Returns
    -------
    list of dict
        Rows ``key, quantity, setting, value``.
    """
    return derive(name, EXTRACTORS[name](Path(out)))


def write_results(name, out, results=RESULTS, paper=PAPER):
    """Extract one run into ``tables/<name>.csv``, ``<name>_checks.csv``, ``compare_<name>.csv`` and ``runs.csv``.

    Parameters
    ----------
    name : str
        The experiment.
    out : pathlib.Path
        Its output folder (with ``run_metadata.json``).
    results : pathlib.Path
        Where the tables go.
    paper : pathlib.Path
        Where ``paper_<name>.csv`` is.

    Returns
    -------
    list of dict
        The measured rows.
    """
    out = Path(out)
    rows = extract(name, out)
    write_csv(results / f"{name}.csv", rows, MEASURED_COLUMNS)
    write_csv(results / f"{name}_checks.csv", read_checks(out), CHECK_COLUMNS)
    paper_file = paper / f"paper_{name}.csv"
    if paper_file.exists():
        write_csv(results / f"compare_{name}.csv", compare(read_csv(paper_file), rows), COMPARE_COLUMNS)
    meta = json.loads((out / "run_metadata.json").read_text())
    runs_file = results / "runs.csv"
    runs = {row["experiment"]: row for row in (read_csv(runs_file) if runs_file.exists() else [])}
    runs[name] = {"experiment": name, **{c: meta[c] for c in RUN_COLUMNS[1:]}}
    write_csv(runs_file, [runs[n] for n in sorted(runs)], RUN_COLUMNS)
    return rows


def rederive(name, results=RESULTS, paper=PAPER):
    """Recompute the derived rows of ``tables/<name>.csv`` and its comparison table from the table itself.

    Parameters
    ----------
    name : str
        The experiment.
    results : pathlib.Path
        Where the tables are.
    paper : pathlib.Path
        Where ``paper_<name>.csv`` is.

    Returns
    -------
    list of dict
        The measured rows as written.
    """
    rows = derive(name, read_csv(results / f"{name}.csv"))
    write_csv(results / f"{name}.csv", rows, MEASURED_COLUMNS)
    paper_file = paper / f"paper_{name}.csv"
    if paper_file.exists():
        write_csv(results / f"compare_{name}.csv", compare(read_csv(paper_file), rows), COMPARE_COLUMNS)
    return rows


CLAIMS = HERE / "claims"
VERDICTS = ("reproduced", "partly", "not reproduced")


def claim_counts(name, claims=CLAIMS):
    """How many claims an experiment's page lists, and how many have each verdict.

    Parameters
    ----------
    name : str
        The experiment.
    claims : pathlib.Path
        The folder of ``<name>.csv`` claim tables.

    Returns
    -------
    tuple of int
        (claims, reproduced, partly, not reproduced): the numbers the index's summary table shows.
    """
    verdicts = [row["verdict"] for row in read_csv(claims / f"{name}.csv")]
    unknown = sorted(set(verdicts) - set(VERDICTS))
    if unknown:
        raise ValueError(f"{name}: unknown verdicts {unknown}; use one of {VERDICTS}")
    return (len(verdicts), *(verdicts.count(verdict) for verdict in VERDICTS))


def main(argv=None):
    """Run the experiments named (default all) one at a time and write their result tables.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when every run finished and was extracted (a run whose checks failed still counts), 1 otherwise.
    """
    from hdbayes.experiments import EXPERIMENTS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="experiments (default: all)")
    parser.add_argument("--workdir", type=Path, help="where the runs' folders go (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="extract from WORKDIR/NAME without running")
    parser.add_argument("--size", choices=["full", "small"], default="full")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the tables go")
    parser.add_argument("--rederive", action="store_true",
                        help="recompute the derived rows and comparison tables from the tables already written, "
                        "without running anything")  # fmt: skip
    parser.add_argument("--counts", action="store_true",
                        help="print each experiment's claim counts (for the index's summary table) and exit")
    args = parser.parse_args(argv)
    names = args.names or list(EXPERIMENTS)
    if args.counts:
        for name in names:
            print(name, *claim_counts(name))
        return 0
    if args.rederive:
        for name in names:
            rederive(name, results=args.results)
        return 0
    unknown = [name for name in names if name not in EXTRACTORS]
    if unknown:
        parser.error(f"no extractor for {unknown}; known: {sorted(EXTRACTORS)}")
    if args.reuse and args.workdir is None:
        parser.error("--reuse needs --workdir")
    if not args.reuse and args.workdir is not None:
        taken = [str(args.workdir / name) for name in names if (args.workdir / name).exists()]
        if taken:  # never delete what is there: the user chose this folder
            parser.error(f"{', '.join(taken)} already exist(s): choose a new --workdir, or pass --reuse to extract "
                         "from those runs")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="hdbayes-reproductions-"))
    failed = []
    for name in names:
        out = workdir / name
        if not args.reuse:
            meta = run_experiment(name, out, size=args.size, seed=args.seed)
            print(f"{name}: exit {meta['exit_status']}, {meta['wall_time_s']} s, load {meta['load_start']}",
                  flush=True)  # fmt: skip
            if meta["exit_status"] not in (0, 3):
                failed.append(name)
                continue
        write_results(name, out, results=args.results)
    if failed:
        print("failed:", ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.exit(main())
