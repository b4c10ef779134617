"""Figures a statistician expects from these models.

All functions draw on a matplotlib ``Axes`` (created on a new ``Figure`` when none is
given, without touching pyplot's global state, so they work headless) and return it.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "amlp_brier_by_k",
    "posterior_medians_scatter",
    "error_rates_by_k",
    "new_axes",
    "plot_calibration",
    "plot_log_alpha_density",
]


def new_axes(ax=None, figsize=(5.0, 4.0)):
    """Return ``ax``, or the single Axes of a new headless Figure."""
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained").add_subplot()


def plot_log_alpha_density(model, ax=None, *, true_alpha=None, **kwargs):
    """Posterior density of log α on the quadrature grid (thesis Fig. 2.7).

    Parameters
    ----------
    model : fitted BiasCorrectedNaiveBayes
    ax : matplotlib Axes, optional
    true_alpha : float, optional
        Draw a vertical line at log(true_alpha).
    **kwargs
        Passed to ``ax.plot`` (e.g. ``label``, ``linestyle``).
    """
    ax = new_axes(ax)
    kwargs.setdefault("marker", ".")
    ax.plot(np.log(model.alpha_grid_), model.posterior_density_of_log_alpha_, **kwargs)
    if true_alpha is not None:
        ax.axvline(np.log(true_alpha), color="grey", linewidth=0.8)
    ax.set_xlabel("log(α)")
    ax.set_ylabel("posterior density")
    return ax


def plot_calibration(tables, ax=None):
    """Reliability diagram: mean predicted probability against the actual fraction per bin.

    Parameters
    ----------
    tables : dict of str to hdbayes.metrics.CalibrationTable
        One line per table (e.g. "corrected", "uncorrected").
    ax : matplotlib Axes, optional
    """
    ax = new_axes(ax)
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle=":")
    for name, table in tables.items():
        filled = table.count > 0
        ax.plot(table.mean_predicted[filled], table.actual_fraction[filled], marker="o", label=name)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted probability")
    ax.set_ylabel("actual fraction")
    ax.legend(frameon=False)
    return ax


def error_rates_by_k(by, ks, title):
    """Actual (solid) and expected (dotted) error rates against the number of features
    selected, corrected and uncorrected side by side (thesis Fig. 2.5 and 2.13).

    ``by[(k, method)]`` is a dict with ``actual_error`` and ``expected_error``; method is
    "corrected" or "uncorrected". Returns the Figure.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4), layout="constrained")
    for ax, method in zip(fig.subplots(1, 2, sharey=True), ("corrected", "uncorrected")):
        ax.plot(ks, [by[k, method]["actual_error"] for k in ks], "o-", color="black", label="actual")
        ax.plot(ks, [by[k, method]["expected_error"] for k in ks], "o:", color="black", label="expected")
        ax.set_xscale("log")
        ax.set_xlabel("number of features selected")
        ax.set_title(method)
        ax.legend(frameon=False)
    fig.axes[0].set_ylabel("error rate")
    fig.suptitle(title)
    return fig


def amlp_brier_by_k(by, ks, title):
    """Average minus log probability and average squared error against the number of
    features selected, corrected (dashed) and uncorrected (dotted) (thesis Fig. 2.6 and 2.14)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4), layout="constrained")
    for ax, (measure, label) in zip(
        fig.subplots(1, 2), (("amlp", "average minus log probability"), ("brier", "average squared error"))
    ):
        ax.plot(ks, [by[k, "corrected"][measure] for k in ks], "o--", color="black", label="corrected")
        ax.plot(ks, [by[k, "uncorrected"][measure] for k in ks], "o:", color="grey", label="uncorrected")
        ax.set_xscale("log")
        ax.set_xlabel("number of features selected")
        ax.set_ylabel(label)
        ax.legend(frameon=False)
    fig.suptitle(title)
    return fig


def posterior_medians_scatter(cauchy_samples, gaussian_samples, *, zoom, title):
    """Posterior medians of the same parameters under a Cauchy and a Gaussian prior, in full and
    zoomed to (−zoom, zoom)² (thesis Fig. 3.13 and 3.21)."""
    from matplotlib.figure import Figure

    cauchy = np.median(cauchy_samples, axis=0).ravel()
    gaussian = np.median(gaussian_samples, axis=0).ravel()
    fig = Figure(figsize=(9, 4.2), layout="constrained")
    for ax, limit in zip(fig.subplots(1, 2), (None, zoom)):
        ax.scatter(gaussian, cauchy, s=4, alpha=0.5)
        ax.axline((0, 0), slope=1, color="grey", linewidth=0.6)
        ax.set_xlabel("median, Gaussian prior")
        ax.set_ylabel("median, Cauchy prior")
        if limit is not None:
            ax.set_xlim(-limit, limit)
            ax.set_ylim(-limit, limit)
            ax.set_title(f"zoom (−{limit:g}, {limit:g})²", fontsize=9)
    fig.suptitle(title)
    return fig
