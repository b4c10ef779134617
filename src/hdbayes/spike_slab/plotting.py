"""The group-inclusion-probability plot (Hernández-Lobato et al. 2013, §3.4: the bi-separation of σ(p_g))."""

from __future__ import annotations

import numpy as np

from hdbayes.plotting import new_axes

__all__ = ["plot_group_inclusion_probabilities"]


def plot_group_inclusion_probabilities(probabilities, ax=None, *, true_groups=None, label=None):
    """Posterior inclusion probability P(z_g = 1 | y, X) of every group.

    Parameters
    ----------
    probabilities : array-like of shape (n_groups,)
        σ(p_g), e.g. ``GroupSpikeSlabRegression.group_inclusion_probabilities_``.
    ax : matplotlib Axes, optional
    true_groups : array-like of int, optional
        Indices of the truly active groups, marked in a second colour.
    label : str, optional
        Title of the axes.

    Returns
    -------
    matplotlib Axes
    """
    probabilities = np.asarray(probabilities, dtype=float)
    ax = new_axes(ax, figsize=(7.0, 3.0))
    positions = np.arange(probabilities.shape[0])
    colours = np.full(probabilities.shape[0], "tab:grey", dtype=object)
    if true_groups is not None:
        colours[np.asarray(true_groups, dtype=int)] = "tab:red"
    ax.bar(positions, probabilities, width=1.0, color=list(colours), edgecolor="none")
    ax.set_ylim(0.0, 1.02)
    ax.set_xlim(-0.5, probabilities.shape[0] - 0.5)
    ax.set_xlabel("group")
    ax.set_ylabel("P(z_g = 1 | y, X)")
    if label:
        ax.set_title(label, fontsize=10)
    return ax
