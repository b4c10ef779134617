"""Shared by the simulations with and without correction for selection bias (naive Bayes, mixture, Gaussian).

Each of them fits a model to the top k features for several k, corrected and uncorrected
(:func:`k_settings`), scores the test cases with the runner's measures, checks each k with the
same named margins (:func:`calibration_check`, :func:`overconfidence_check`, :func:`amlp_check`)
and prints calibration tables in the layout of the thesis (:func:`calibration_section`).
"""

from __future__ import annotations

from hdbayes.metrics import calibration_markdown, calibration_table

__all__ = [
    "METHODS",
    "amlp_check",
    "calibration_check",
    "calibration_rows",
    "calibration_section",
    "calibration_tables",
    "k_checks",
    "k_settings",
    "overconfidence_check",
]

#: Method name → the model's ``correct`` flag.
METHODS = {"corrected": True, "uncorrected": False}


def k_settings(ks, methods=METHODS, *, only_corrected=()):
    """The settings ``{"k": k, "method": m}`` for every k and method; at the k in ``only_corrected`` (all
    features: the correction changes nothing) the corrected method only."""
    return [{"k": k, "method": m} for k in ks for m in methods if k not in only_corrected or m == "corrected"]


def calibration_check(by, k, tolerance):
    """The corrected model's |expected − actual error| at k is at most ``tolerance``: (name, held)."""
    corrected = by[k, "corrected"]
    gap = abs(corrected["expected_error"] - corrected["actual_error"])
    return f"k={k}: corrected |expected - actual error| <= {tolerance:g} (got {gap:.3f})", bool(gap <= tolerance)


def overconfidence_check(by, k, margin):
    """The uncorrected model's expected error at k is at least ``margin`` below its actual error: (name, held)."""
    uncorrected = by[k, "uncorrected"]
    below = uncorrected["actual_error"] - uncorrected["expected_error"]
    return f"k={k}: uncorrected expected error >= {margin:g} below actual (got {below:.3f})", bool(below >= margin)


def amlp_check(by, k, margin):
    """The corrected AMLP at k is at least ``margin`` below the uncorrected one: (name, held)."""
    gain = by[k, "uncorrected"]["amlp"] - by[k, "corrected"]["amlp"]
    return f"k={k}: corrected AMLP at least {margin:g} below uncorrected (got {gain:.3f})", bool(gain >= margin)


def k_checks(by, k, *, calibration=None, overconfidence=None, amlp=None):
    """The checks at k whose margin is given, in this order: :func:`calibration_check` (tolerance),
    :func:`overconfidence_check` (margin), :func:`amlp_check` (margin); a dict of name to held."""
    checks = {}
    for check, margin in ((calibration_check, calibration), (overconfidence_check, overconfidence),
                          (amlp_check, amlp)):  # fmt: skip
        if margin is not None:
            checks.update([check(by, k, margin)])
    return checks


def calibration_tables(y_test, proba, ks, positive_class=1):
    """``{k: {"Corr": table, "Unc": table}}`` from ``proba[k, method]`` (the thesis's Table 2.1 layout)."""
    return {
        k: {short: calibration_table(y_test, proba[k, method], positive_class=positive_class)
            for short, method in (("Corr", "corrected"), ("Unc", "uncorrected"))}
        for k in ks
    }  # fmt: skip


def calibration_rows(calibration):
    """The calibration tables of :func:`calibration_tables` as rows ``k, method, bin, count, predicted, actual``
    (the run's ``calibration.csv``, bin by bin as the thesis's Tables 2.1 and 2.3; empty bins have no row)."""
    rows = []
    for k, tables in calibration.items():
        for short, method in (("Corr", "corrected"), ("Unc", "uncorrected")):
            table = tables[short]
            for b, (count, predicted, actual) in enumerate(zip(table.count, table.mean_predicted,
                                                               table.actual_fraction)):  # fmt: skip
                if count:
                    rows.append({"k": k, "method": method, "bin": b, "count": int(count),
                                 "predicted": float(predicted), "actual": float(actual)})  # fmt: skip
    return rows


def calibration_section(heading, calibration, p, *, complete=None, complete_title=None):
    """Summary lines: ``## heading``, one calibration table per k (of p), then ``complete`` (all features)."""
    lines = [f"## {heading}", ""]
    for k, tables in calibration.items():
        lines += [calibration_markdown(tables, title=f"k = {k} (of {p})"), ""]
    if complete is not None:
        lines += [complete.to_markdown(title=complete_title), ""]
    return lines
