"""Figures of fitted estimators: the posterior of log α, a reliability diagram, MCMC traces.

All functions draw on a matplotlib ``Axes`` (created on a new ``Figure`` when none is
given, without touching pyplot's global state, so they work headless) and return it. The
figures of the papers' experiments, which compare several fits, live with the experiments
(:mod:`hdbayes.experiments._figures`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["new_axes", "plot_calibration", "plot_log_alpha_density", "plot_trace"]


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


def plot_trace(model, name, index=(), ax=None, *, chains=None, transform=None, warmup=True, burn_in_line=True,
               **kwargs):
    """Trace of one scalar of a fitted MCMC estimator: one line per chain against the iteration.

    Parameters
    ----------
    model : fitted MCMC estimator (with ``trace_``), or a :class:`hdbayes.mcmc.Trace`
    name : str
        A variable of the trace, e.g. ``"log_tau_mu"``.
    index : int or tuple of int, optional
        The component of a vector or array variable (e.g. the order ``o`` of ``log_sigma``).
    ax : matplotlib Axes, optional
    chains : sequence of int, optional
        The chains drawn (default: all).
    transform : callable, optional
        Applied to the values before plotting (e.g. ``np.log`` for ``log σ`` from ``sigma``).
    warmup : bool, default=True
        Show what was recorded during burn-in too (when the model records it).
    burn_in_line : bool, default=True
        A dotted vertical line at the end of burn-in (when the trace knows its schedule).
    **kwargs
        Passed to ``ax.plot`` for every chain (e.g. ``color``, ``linewidth``, ``label``; a
        label is given to the first chain only).

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> from hdbayes.mcmc import Schedule, Trace
    >>> draws = np.arange(12.0).reshape(2, 3, 2)
    >>> trace = Trace({"x": draws}, {"x": np.zeros((2, 4, 2))}, schedule=Schedule(10, 4, 2))
    >>> ax = plot_trace(trace, "x", 1)
    >>> ax.lines[0].get_xdata().tolist()  # four warm-up iterations, then every second one
    [0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 9.0]
    """
    trace = getattr(model, "trace_", model)
    ax = new_axes(ax, figsize=(7.0, 2.5))
    index = index if isinstance(index, tuple) else (index,)
    values = np.asarray(trace[name])[(slice(None), slice(None), *index)]
    schedule = trace.schedule
    saved = schedule.saved_iterations if schedule is not None else np.arange(values.shape[1])
    if warmup and name in trace.warmup:
        early = np.asarray(trace.warmup[name])[(slice(None), slice(None), *index)]
        burn_in = schedule.burn_in if schedule is not None else early.shape[1]
        positions = np.linspace(0, burn_in, early.shape[1], endpoint=False)
        values = np.concatenate([early, values], axis=1)
        saved = np.concatenate([positions, saved])
    if transform is not None:
        values = transform(values)
    kwargs.setdefault("linewidth", 0.6)
    for n, chain in enumerate(range(values.shape[0]) if chains is None else chains):
        ax.plot(saved, values[chain], **(kwargs if n == 0 else {k: v for k, v in kwargs.items() if k != "label"}))
    if burn_in_line and schedule is not None and schedule.burn_in:
        ax.axvline(schedule.burn_in, color="grey", linewidth=0.5, linestyle=":")
    ax.set_xlabel("iteration")
    ax.set_ylabel(name)
    return ax
