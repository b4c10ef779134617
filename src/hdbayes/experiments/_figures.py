"""Figures of the experiments that compare several fits (the papers' figures).

The plots of one fitted estimator live in :mod:`hdbayes.plotting`; these helpers draw the
results of many fits side by side (corrected against uncorrected, one prior against another).
"""

from __future__ import annotations

import numpy as np

__all__ = ["amlp_brier_by_k", "diagonal", "error_rates_by_k", "posterior_medians_scatter"]


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


def diagonal(ax, values):
    """The line y = x over the range of ``values``, padded by 5 % (grey, thin)."""
    low, high = min(values), max(values)
    pad = 0.05 * (high - low or 1.0)
    ax.plot([low - pad, high + pad], [low - pad, high + pad], color="grey", linewidth=0.6)
