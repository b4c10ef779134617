"""Shared by the experiments on compressed interaction models: fit, predict, time and score."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from hdbayes.experiments._figures import posterior_medians_scatter
from hdbayes.metrics import average_minus_log_probability, error_rate

__all__ = [
    "PRIOR_STYLE",
    "TIME_KEYS",
    "CompressedRunSize",
    "autocorrelation",
    "compile_kernels",
    "counts_check",
    "counts_figure",
    "fit_and_score",
    "fit_order",
    "medians_figure",
    "medians_rows",
    "plot_by_prior",
    "plot_counts",
    "prior_figure",
    "prior_panels",
    "series",
    "sigma_acf_figure",
    "sigma_acf_rows",
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


def fit_order(model_class, data, size, seed, n_jobs, *, order, prior, compressed=True, last_columns=False,
              keep_model=None, sigma_order=None):  # fmt: skip
    """:func:`fit_and_score` of a ``model_class`` of ``order`` and ``prior`` with the MCMC of ``size``.

    ``compressed``: sample the compressed parameters (True) or one parameter per pattern (False, the original
    parameterisation of the thesis's timings). ``last_columns``: the model sees only the last ``order`` columns of
    the data (the most recent symbols of a history). Used by the runner as
    ``partial(fit_order, model_class, data, size, seed, n_jobs)``.

    The extra returned beside the row is ``(model, proba)`` when ``keep_model`` is True (default: the compressed
    fits), else ``(None, proba)``, so that the large uncompressed traces are not kept; with ``sigma_order`` equal to
    ``order``, it is ``(model or None, proba, log σ draws)``: the log σ_o draws (chain, draw, O + 1) for the
    autocorrelations of thesis Fig. 3.8, 3.11 and 3.19. The row also holds ``n_sampled``, the parameters the sampler
    updated (the compressed ones, or every pattern).
    """
    model = model_class(order=order, prior=prior, compress=compressed, n_iter=size.n_iter, burn_in=size.burn_in,
                        thin=size.thin, random_state=seed, n_jobs=n_jobs)  # fmt: skip
    columns = slice(-order, None) if last_columns else slice(None)
    row, (model, proba) = fit_and_score(model, data.X[:, columns], data.y, data.X_test[:, columns], data.y_test)
    row["n_sampled"] = int(model.n_compressed_ if compressed else model.n_original_)
    kept = model if (compressed if keep_model is None else keep_model) else None
    if sigma_order is not None and order == sigma_order:
        return row, (kept, proba, np.log(model.trace_["sigma"]))
    return row, (kept, proba)


def compile_kernels(model_class, data, priors, *, last_columns=False):
    """Fit and predict once per prior, compressed and not, on a few cases, so that no timed fit compiles the
    numba kernels (issue 29: the first fit's time was mostly compilation)."""
    columns = slice(-2, None) if last_columns else slice(None)
    for prior in priors:
        for compressed in (True, False):
            model = model_class(2, prior=prior, compress=compressed, n_iter=4, burn_in=2, thin=1, random_state=0)
            model.fit(data.X[:50, columns], data.y[:50]).predict_proba(data.X_test[:10, columns])


def autocorrelation(x, max_lag=50):
    """Sample autocorrelation of a 1-D series at lags 0..min(max_lag, len(x) - 1).

    A constant series has autocorrelation 1 at lag 0 and NaN at the other lags.

    Examples
    --------
    >>> autocorrelation([1.0, 2.0, 1.0, 2.0], max_lag=1).round(2).tolist()
    [1.0, -0.75]
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    max_lag = min(max_lag, n - 1)
    centred = x - x.mean()
    denominator = float(centred @ centred)
    if denominator == 0.0:
        return np.concatenate([[1.0], np.full(max_lag, np.nan)])
    return np.array([centred[: n - lag] @ centred[lag:] for lag in range(max_lag + 1)]) / denominator


def sigma_acf_rows(traces, sigma_orders, thin, max_lag=50):
    """The autocorrelation of log σ_o by lag, averaged over the chains (thesis Fig. 3.8, 3.11, 3.19).

    Parameters
    ----------
    traces : dict
        ``{(prior, compressed): log σ draws of shape (chain, draw, O + 1)}``, after burn-in.
    sigma_orders : sequence of int
        The o shown.
    thin : int
        Iterations between saved draws (the lags are given in iterations).
    max_lag : int
        Largest lag in saved draws.

    Returns
    -------
    list of dict
        Rows ``prior, compressed, sigma_order, lag, acf``.
    """
    rows = []
    for (prior, compressed), trace in traces.items():
        for o in sigma_orders:
            acf = np.nanmean([autocorrelation(chain[:, o], max_lag) for chain in trace], axis=0)
            rows += [{"prior": prior, "compressed": compressed, "sigma_order": o, "lag": lag * thin,
                      "acf": float(value)} for lag, value in enumerate(acf)]  # fmt: skip
    return rows


def sigma_acf_figure(acf_rows, priors, sigma_orders, title):
    """The autocorrelations of :func:`sigma_acf_rows`: one panel per prior and compression (thesis Fig. 3.8)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.2 * len(priors)), layout="constrained")
    axes = fig.subplots(len(priors), 2, squeeze=False)
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for i, prior in enumerate(priors):
        for j, compressed in enumerate((True, False)):
            ax = axes[i, j]
            for o, colour in zip(sigma_orders, colours):
                points = [r for r in acf_rows if r["prior"] == prior and r["compressed"] == compressed
                          and r["sigma_order"] == o]  # fmt: skip
                ax.plot([r["lag"] for r in points], [r["acf"] for r in points], color=colour, label=f"σ_{o}")
            ax.axhline(0.0, color="black", linewidth=0.6)
            ax.set_ylim(-0.3, 1.05)
            ax.set_title(f"{prior}, {'compressed' if compressed else 'uncompressed'}", fontsize=9)
            ax.set_xlabel("lag (iterations)")
            ax.set_ylabel("autocorrelation of log σ_o")
            ax.legend(frameon=False, fontsize=8)
    fig.suptitle(title)
    return fig


def medians_rows(cauchy_model, gaussian_model):
    """Posterior medians of every compressed parameter under the two priors (thesis Fig. 3.13 and 3.21).

    The two fits share their groups (the grouping depends on the training data only). Each row: ``order`` (O),
    ``group``, ``class`` (the index of the parameter's class column; 0 for two classes), ``n_patterns`` (the
    patterns the compressed parameter sums; 1: a single β), ``cauchy`` and ``gaussian`` (the medians of the saved
    draws).
    """
    cauchy = np.median(_parameter_draws(cauchy_model), axis=0)
    gaussian = np.median(_parameter_draws(gaussian_model), axis=0)
    n_patterns = np.asarray(cauchy_model.grouping_.order_counts).sum(axis=1)
    order = int(cauchy_model.grouping_.order)
    return [{"order": order, "group": g, "class": k, "n_patterns": int(n_patterns[g]),
             "cauchy": float(cauchy[g, k]), "gaussian": float(gaussian[g, k])}
            for g in range(cauchy.shape[0]) for k in range(cauchy.shape[1])]  # fmt: skip


#: The wall-clock columns of :func:`fit_and_score`'s rows.
TIME_KEYS = ("fit_seconds", "predict_seconds")


def times_figure(by, orders, title):
    """Training times compressed (solid) and uncompressed (dashed), and the compressed prediction times, against
    the order O for each prior (thesis Fig. 3.10, 3.18); ``by[O, prior, compressed]`` holds ``fit_seconds`` and
    ``predict_seconds``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6), layout="constrained")
    ax_fit, ax_predict = fig.subplots(1, 2)
    for prior in PRIOR_STYLE:
        colour = PRIOR_STYLE[prior]["color"]
        for flag, style in ((True, "o-"), (False, "x--")):
            ax_fit.plot(orders, [by[o, prior, flag]["fit_seconds"] for o in orders], style, color=colour,
                        label=f"{prior}, {'compressed' if flag else 'uncompressed'}")  # fmt: skip
        ax_predict.plot(orders, [by[o, prior, True]["predict_seconds"] for o in orders], "o-", color=colour,
                        label=prior)  # fmt: skip
    for ax, label in ((ax_fit, "training time (s)"), (ax_predict, "prediction time (s), compressed")):
        ax.set_xlabel("order O")
        ax.set_ylabel(label)
        ax.legend(frameon=False, fontsize=7)
    fig.suptitle(title)
    return fig
