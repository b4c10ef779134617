"""Shared by the experiments on compressed interaction models: fit, predict, time and score."""

from __future__ import annotations

import time
from dataclasses import dataclass

from hdbayes.experiments._figures import posterior_medians_scatter
from hdbayes.metrics import average_minus_log_probability, error_rate

__all__ = [
    "PRIOR_STYLE",
    "TIME_KEYS",
    "CompressedRunSize",
    "counts_check",
    "counts_figure",
    "fit_and_score",
    "fit_order",
    "medians_figure",
    "plot_by_prior",
    "plot_counts",
    "prior_figure",
    "prior_panels",
    "series",
]

#: Line styles of the two priors in the compression experiments' figures.
PRIOR_STYLE = {"cauchy": dict(linestyle=":", color="tab:blue"), "gaussian": dict(linestyle="--", color="tab:red")}


@dataclass(frozen=True)
class CompressedRunSize:
    """The size of a compression experiment: orders fitted, data sizes and MCMC length.

    ``n_trace_chains`` chains are run at one order for the σ_o traces (1: the fit's own chain).
    """

    orders: tuple
    n_samples: int
    n_test: int
    n_iter: int
    burn_in: int
    thin: int
    n_trace_chains: int = 1


def series(by, orders, prior, key):
    """``by[(order, prior)][key]`` for each order."""
    return [by[o, prior][key] for o in orders]


def plot_counts(ax_counts, ax_ratio, by, orders, priors):
    """Original and compressed parameter counts, and their ratio, against the order (one style per prior)."""
    for prior in priors:
        style = PRIOR_STYLE[prior]
        ax_counts.plot(orders, series(by, orders, prior, "n_original"), marker="x", label=f"original ({prior})",
                       **style)  # fmt: skip
        ax_counts.plot(orders, series(by, orders, prior, "n_compressed"), marker="o", mfc="none",
                       label=f"compressed ({prior})", **style)  # fmt: skip
        ax_ratio.plot(orders, series(by, orders, prior, "ratio"), marker="^", label=prior, **style)
    for ax, label in ((ax_counts, "number of parameters (per class)"), (ax_ratio, "compressed / original")):
        ax.set_xlabel("order O")
        ax.set_ylabel(label)
        ax.legend(frameon=False, fontsize=7)


def counts_check(by, orders):
    """The check that the parameter counts do not depend on the prior (only on the training data): {name: held}."""
    same = all(by[o, "cauchy"][key] == by[o, "gaussian"][key] for o in orders for key in ("n_compressed", "n_original"))
    return {"parameter counts identical for the two priors": bool(same)}


def counts_figure(by, orders, priors, title):
    """A figure of the :func:`plot_counts` panels (counts and their ratio against the order)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6), layout="constrained")
    plot_counts(*fig.subplots(1, 2), by, orders, priors)
    fig.suptitle(title)
    return fig


def plot_by_prior(axes, by, orders, priors, panels):
    """On each axis, one line per prior against the order: ``panels`` = ((key, y label), ...)."""
    for ax, (key, label) in zip(axes, panels):
        for prior in priors:
            ax.plot(orders, series(by, orders, prior, key), marker="o", label=prior, **PRIOR_STYLE[prior])
        ax.set_xlabel("order O")
        ax.set_ylabel(label)


def prior_panels(by, orders, priors, panels, title):
    """A figure of two :func:`plot_by_prior` panels; returns it and its axes (for reference lines)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6), layout="constrained")
    axes = fig.subplots(1, 2)
    plot_by_prior(axes, by, orders, priors, panels)
    fig.suptitle(title)
    return fig, axes


def prior_figure(by, orders, priors, panels, title, *, fontsize=8):
    """:func:`prior_panels` with a legend on each panel; returns the figure."""
    fig, axes = prior_panels(by, orders, priors, panels, title)
    for ax in axes:
        ax.legend(frameon=False, fontsize=fontsize)
    return fig


def medians_figure(cauchy_model, gaussian_model, *, zoom, title):
    """Posterior medians of the compressed parameters of two fits, Cauchy prior against Gaussian prior."""
    return posterior_medians_scatter(_parameter_draws(cauchy_model), _parameter_draws(gaussian_model), zoom=zoom,
                                     title=title)  # fmt: skip


def _parameter_draws(model):
    """The draws of the compressed parameters with the chains concatenated: shape (draws, G', K')."""
    return model.trace_.flat("s")


def fit_and_score(model, X_train, y_train, X_test, y_test):
    """Fit ``model``, predict the test cases and return ``(row, (model, proba))`` for the runner.

    The row holds the parameter counts, the fit time (which includes the grouping), the
    prediction time, the error rate and the average minus log probability; the runner
    (:func:`~hdbayes.experiments._runner.run_settings`) moves the two times to the timings,
    out of the result tables, with ``time_keys=TIME_KEYS``.
    """
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    proba = model.predict_proba(X_test)
    predict_seconds = time.perf_counter() - start
    row = {
        "n_original": int(model.n_original_),
        "n_compressed": int(model.n_compressed_),
        "ratio": model.n_compressed_ / model.n_original_,
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
        "error_rate": error_rate(y_test, proba),
        "amlp": average_minus_log_probability(y_test, proba),
    }
    return row, (model, proba)


def fit_order(model_class, data, size, seed, n_jobs, *, order, prior, last_columns=False):
    """:func:`fit_and_score` of a compressed ``model_class`` of ``order`` and ``prior`` with the MCMC of ``size``.

    ``last_columns``: the model sees only the last ``order`` columns of the data (the most recent symbols of a
    history). Used by the runner as ``partial(fit_order, model_class, data, size, seed, n_jobs)``.
    """
    model = model_class(order=order, prior=prior, compress=True, n_iter=size.n_iter, burn_in=size.burn_in,
                        thin=size.thin, random_state=seed, n_jobs=n_jobs)  # fmt: skip
    columns = slice(-order, None) if last_columns else slice(None)
    return fit_and_score(model, data.X[:, columns], data.y, data.X_test[:, columns], data.y_test)


#: The wall-clock columns of :func:`fit_and_score`'s rows.
TIME_KEYS = ("fit_seconds", "predict_seconds")
