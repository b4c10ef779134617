"""Shared by the experiments on compressed interaction models: fit, predict, time and score."""

from __future__ import annotations

import time
from dataclasses import dataclass

from hdbayes.metrics import average_minus_log_probability, error_rate

__all__ = ["PRIOR_STYLE", "CompressedRunSize", "fit_and_score", "series"]

#: Line styles of the two priors in the compression experiments' figures.
PRIOR_STYLE = {"cauchy": dict(linestyle=":", color="tab:blue"), "gaussian": dict(linestyle="--", color="tab:red")}


@dataclass(frozen=True)
class CompressedRunSize:
    """The size of a compression experiment: orders fitted, data sizes and MCMC length.

    ``n_trace_chains`` chains are run at one order for the σ_o traces (1: the fit's own chain).
    """

    orders: tuple
    n_train: int
    n_test: int
    n_iter: int
    burn_in: int
    thin: int
    n_trace_chains: int = 1


def series(by, orders, prior, key):
    """``by[(order, prior)][key]`` for each order."""
    return [by[o, prior][key] for o in orders]


def fit_and_score(model, X_train, y_train, X_test, y_test, **labels):
    """Fit ``model``, predict the test cases and return ``(model, row, proba)``.

    The row holds ``labels`` (e.g. order and prior), the parameter counts, the fit time (which
    includes the grouping), the prediction time, the error rate and the average minus log
    probability.
    """
    model.fit(X_train, y_train)
    start = time.perf_counter()
    proba = model.predict_proba(X_test)
    predict_seconds = time.perf_counter() - start
    row = {
        **labels,
        "n_original": int(model.n_original_),
        "n_compressed": int(model.n_compressed_),
        "ratio": model.n_compressed_ / model.n_original_,
        "fit_seconds": float(model.fit_seconds_),
        "predict_seconds": predict_seconds,
        "error_rate": error_rate(y_test, proba),
        "amlp": average_minus_log_probability(y_test, proba),
    }
    return model, row, proba
