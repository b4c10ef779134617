"""Shared by the experiments: how many workers to start, and wall-clock times kept out of the results.

Two runs of an experiment with the same seed must write byte-identical results, so every
wall-clock measurement goes into ``Report.timings`` (written as ``timing.csv``), never into a result
table or ``summary.md``; :func:`split_timings` moves the time columns of result rows there.
"""

from __future__ import annotations

import numbers

from hdbayes._threads import usable_cores
from hdbayes.exceptions import InputTypeError, InputValueError

__all__ = ["cap_n_jobs", "choose_size", "split_timings", "usable_cores"]


def cap_n_jobs(n_jobs):
    """``n_jobs`` for joblib, never more workers than usable cores.

    Parameters
    ----------
    n_jobs : int or None
        None: joblib's default (one worker unless a ``parallel_backend`` context says
        otherwise). A positive value is capped at :func:`usable_cores`; a negative one
        counts from the number of cores as in joblib (-1: all of them, -2: all but one),
        at least 1.

    Returns
    -------
    int or None

    Examples
    --------
    >>> cap_n_jobs(None) is None
    True
    >>> cap_n_jobs(1)
    1
    >>> cap_n_jobs(10**6) == usable_cores()
    True
    >>> cap_n_jobs(-1) == usable_cores()
    True
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise InputTypeError(f"n_jobs must be a whole number or None, got {n_jobs!r}")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise InputValueError("n_jobs must not be 0 (use 1 for no parallelism, -1 for all cores)")
    cores = usable_cores()
    if n_jobs < 0:
        return max(cores + 1 + n_jobs, 1)
    return min(n_jobs, cores)


def split_timings(rows, time_keys, id_keys):
    """Remove the columns ``time_keys`` from ``rows`` (in place) and return them as timing rows.

    Parameters
    ----------
    rows : list of dict
        Result rows holding both results and wall-clock times.
    time_keys : sequence of str
        The time columns (absent keys are skipped).
    id_keys : sequence of str
        Columns copied into each timing row so that it names its result row.

    Returns
    -------
    list of dict
        One row per result row: ``id_keys`` then ``time_keys``.

    Examples
    --------
    >>> rows = [{"k": 1, "error": 0.1, "seconds": 2.5}]
    >>> split_timings(rows, ["seconds"], ["k"])
    [{'k': 1, 'seconds': 2.5}]
    >>> rows
    [{'k': 1, 'error': 0.1}]
    """
    timings = []
    for row in rows:
        timing = {key: row[key] for key in id_keys}
        timing.update({key: row.pop(key) for key in time_keys if key in row})
        timings.append(timing)
    return timings


def choose_size(sizes, full=False, size=None):
    """The name and settings of an experiment's size: ``size`` if given, else "full" or "small".

    Parameters
    ----------
    sizes : dict
        The experiment's size table (``SIZES``), e.g. with keys "tiny", "small", "full".
    full : bool
        The paper's size (used when ``size`` is None).
    size : str, optional
        A key of ``sizes``; "tiny" is the smallest run that still evaluates every check (for
        the test suite).

    Returns
    -------
    (str, object)
    """
    name = size if size is not None else ("full" if full else "small")
    if name not in sizes:
        raise InputValueError(f"size must be one of {', '.join(map(repr, sizes))}, got {name!r}")
    return name, sizes[name]
