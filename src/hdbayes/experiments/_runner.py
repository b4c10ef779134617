"""The one runner of the experiments: a loop over settings, the scores, the tables and the summary.

An experiment is a thin description: its settings (one dict of labels each, e.g.
``{"k": 10, "method": "corrected"}``), a function that fits and scores one setting, its
acceptance checks and figures. :func:`run_settings` runs the loop (with a progress bar, in
parallel when asked), moves the wall-clock columns of the result rows to the timings (so that
two runs with the same seed write identical results) and indexes the rows by their labels;
:func:`summary_markdown` writes the summary in the layout every experiment shares;
:func:`probability_measures` scores predictive probabilities with the measures of the papers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from tqdm.auto import tqdm

from hdbayes.experiments._report import checks_markdown
from hdbayes.experiments._runtime import split_timings
from hdbayes.metrics import (
    average_minus_log_probability,
    brier_score,
    error_rate,
    expected_and_actual_loss,
    expected_error_rate,
)

__all__ = ["Results", "bar", "draws", "probability_measures", "run_settings", "summary_markdown"]


def bar(iterable=None, *, desc, progress, total=None):
    """A tqdm progress bar: shown when ``progress`` is True, on a terminal only when it is None."""
    return tqdm(iterable, total=total, desc=desc, disable=None if progress is None else not progress)


@dataclass
class Results:
    """What :func:`run_settings` returns.

    Attributes
    ----------
    rows : list of dict
        One result row per setting, in the order of the settings (no wall-clock columns).
    timings : list of dict
        One row per setting: its labels, then its wall-clock columns.
    by : dict of tuple to dict
        The result rows by the values of their labels, e.g. ``by[10, "corrected"]``.
    extras : dict of tuple to object
        What the fit function returned besides the row (models, probabilities), by labels.
    """

    rows: list = field(default_factory=list)
    timings: list = field(default_factory=list)
    by: dict = field(default_factory=dict)
    extras: dict = field(default_factory=dict)


def run_settings(settings, fit, *, desc, progress=None, time_keys=(), n_jobs=None):
    """Fit and score every setting; returns :class:`Results`.

    Parameters
    ----------
    settings : list of dict
        The labels of each setting (the same keys in every one); they open its result row.
    fit : callable
        ``fit(**setting) -> (row, extra)``: the scores of one setting (a dict, which may hold
        wall-clock columns named in ``time_keys``) and anything else the experiment keeps
        (a fitted model, predictive probabilities).
    desc : str
        Label of the progress bar.
    progress : bool or None
        Show the bar (None: only on a terminal).
    time_keys : sequence of str
        The wall-clock columns moved from the rows to :attr:`Results.timings`.
    n_jobs : int, optional
        Settings in parallel with joblib (already capped by the caller); None runs them one by one.

    Examples
    --------
    >>> def fit(k, method):
    ...     return {"error": k / 10, "seconds": 0.5}, f"model {k} {method}"
    >>> settings = [{"k": k, "method": m} for k in (1, 2) for m in ("a", "b")]
    >>> results = run_settings(settings, fit, desc="demo", progress=False, time_keys=["seconds"])
    >>> results.rows[1]
    {'k': 1, 'method': 'b', 'error': 0.1}
    >>> results.timings[0], results.by[2, "a"]["error"], results.extras[2, "b"]
    ({'k': 1, 'method': 'a', 'seconds': 0.5}, 0.2, 'model 2 b')
    """
    settings = [dict(setting) for setting in settings]
    if n_jobs is None:
        fits = (fit(**setting) for setting in settings)
    else:
        fits = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(fit)(**setting) for setting in settings)
    results = Results()
    for setting, (row, extra) in bar(zip(settings, fits), total=len(settings), desc=desc, progress=progress):
        key = tuple(setting.values())
        row = {**setting, **row}
        results.rows.append(row)
        results.by[key] = row
        results.extras[key] = extra
    labels = list(settings[0]) if settings else []
    results.timings = split_timings(results.rows, list(time_keys), labels)
    return results


def summary_markdown(title, body, checks, *, heading="Acceptance checks", after=()):
    """The summary of an experiment: ``# title``, the body lines, the checks as a task list, more lines.

    Examples
    --------
    >>> print(summary_markdown("Demo", ["Some text.", ""], {"it works": True}))
    # Demo
    <BLANKLINE>
    Some text.
    <BLANKLINE>
    ## Acceptance checks
    <BLANKLINE>
    - [x] it works
    <BLANKLINE>
    """
    return "\n".join([f"# {title}", "", *body, f"## {heading}", "", *checks_markdown(checks), "", *after])


def probability_measures(y, proba, *, loss=None, brier=True):
    """The measures of the papers for predictive probabilities (thesis §2.3.5; Li 2009 §3.4, eq. 35–38).

    Parameters
    ----------
    y : array-like of shape (n,)
        True classes ``0..G-1``.
    proba : ndarray of shape (n, G), or (n,) for P(y = 1) of two classes
    loss : ndarray of shape (G, G), optional
        Loss matrix ``L[true, guess]``: adds the expected and actual loss of the Bayes decisions.
    brier : bool, default=True
        Include the average squared error (Brier score).

    Returns
    -------
    dict
        ``actual_error``, ``expected_error``, ``amlp``, then ``brier``, ``expected_loss``,
        ``actual_loss`` as asked.

    Examples
    --------
    >>> m = probability_measures(np.array([0, 1]), np.array([0.2, 0.6]))
    >>> m["actual_error"], round(m["expected_error"], 3), round(m["brier"], 3)
    (0.0, 0.3, 0.1)
    """
    measures = {
        "actual_error": error_rate(y, proba),
        "expected_error": expected_error_rate(proba),
        "amlp": average_minus_log_probability(y, proba),
    }
    if brier:
        measures["brier"] = brier_score(y, proba)
    if loss is not None:
        losses = expected_and_actual_loss(y, proba, loss)
        measures.update(expected_loss=losses.expected, actual_loss=losses.actual)
    return measures


def draws(model, name):
    """The saved post-burn-in draws of the variable ``name`` of a fitted MCMC model, shaped (chain, draw, ...).

    (:func:`hdbayes.plotting.plot_trace` shows the burn-in too.)
    """
    return np.asarray(model.trace_[name])
