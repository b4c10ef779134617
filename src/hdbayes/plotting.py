"""Figures a statistician expects from these models.

All functions draw on a matplotlib ``Axes`` (created on a new ``Figure`` when none is
given, without touching pyplot's global state, so they work headless) and return it.
"""

from __future__ import annotations

import numpy as np

__all__ = [
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
