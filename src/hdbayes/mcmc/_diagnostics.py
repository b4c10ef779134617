"""Convergence diagnostics of scalar MCMC draws without ArviZ: rank-normalised split R-hat and bulk ESS.

The definitions are those of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC", *Bayesian Analysis* 16(2),
which ArviZ's ``rhat(method="rank")`` and ``ess(method="bulk")`` compute; importing ArviZ costs a few seconds
of CPU, these need numpy and :func:`scipy.special.ndtri` only. ``tests/test_mcmc_core.py`` checks them
against ArviZ.

Draws are an array of shape (chain, draw). Each chain is split into its first and last halves (the middle
draw of an odd count dropped), the halves counted as chains; the pooled draws are replaced by their normal
scores z = Φ⁻¹((r − 3/8)/(N + 1/4)) with r the average rank among all N draws (Blom's offset).
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

__all__ = ["bulk_ess", "rank_rhat"]


def _split(values):
    """The chains' first and last halves, stacked as chains: shape (2 · chains, ⌊draws/2⌋)."""
    half = values.shape[1] // 2
    return np.concatenate([values[:, :half], values[:, values.shape[1] - half :]], axis=0)


def _average_ranks(values):
    """Ranks 1..N of the flattened ``values``, tied values sharing the average of their ranks."""
    flat = values.ravel()
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # first position of each run of ties
    ends = np.r_[starts[1:], flat.size]
    mean_rank = (starts + ends + 1) / 2.0  # positions starts..ends-1 hold ranks starts+1..ends
    ranks = np.empty(flat.size)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks.reshape(values.shape)


def _normal_scores(values):
    """Φ⁻¹((r − 3/8)/(N + 1/4)) of the average ranks r of all N values."""
    return ndtri((_average_ranks(values) - 0.375) / (values.size + 0.25))


def _rhat(values):
    """The potential scale reduction of the chains (rows) of ``values``, n draws each: √((B/W + n − 1)/n), with W
    the mean within-chain variance and B/n the variance of the chain means."""
    n = values.shape[1]
    between = n * np.var(values.mean(axis=1), ddof=1)
    within = np.mean(np.var(values, axis=1, ddof=1))
    return float(np.sqrt((between / within + n - 1) / n))


def _valid(values, min_chains):
    return not np.isnan(values).any() and values.shape[0] >= min_chains and values.shape[1] >= 4


def rank_rhat(values):
    """Rank-normalised split R-hat: the larger of the bulk and the tail (folded) R-hat.

    Parameters
    ----------
    values : array_like of shape (chains, draws)
        Draws of one scalar.

    Returns
    -------
    float
        NaN with fewer than 2 chains or 4 draws, a NaN draw, or constant draws.
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    if not _valid(values, 2):
        return float("nan")
    split = _split(values)
    bulk = _rhat(_normal_scores(split))
    tail = _rhat(_normal_scores(np.abs(split - np.median(split))))
    return max(bulk, tail)


def _autocovariance(values):
    """Each row's autocovariances at lags 0..n−1 (divided by n), by FFT with zero padding (no wrap-around)."""
    n = values.shape[1]
    size = 1 << int(2 * n - 1).bit_length()
    centred = values - values.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centred, n=size, axis=1)
    return np.fft.irfft(spectrum * np.conjugate(spectrum), n=size, axis=1)[:, :n] / n


def _ess(values):
    """Effective sample size of the chains (rows) of ``values``, with Geyer's initial monotone sequence."""
    n_chains, n = values.shape
    if np.max(values) - np.min(values) < np.finfo(np.float64).resolution:
        return float(values.size)
    acov = _autocovariance(values).mean(axis=0)  # mean over chains, lag by lag
    within = acov[0] * n / (n - 1.0)
    var_plus = within * (n - 1.0) / n + (np.var(values.mean(axis=1), ddof=1) if n_chains > 1 else 0.0)
    rho = 1.0 - (within - acov) / var_plus  # autocorrelations, lags 0..n-1
    kept = np.zeros(n)
    kept[0], kept[1] = 1.0, rho[1]
    even, odd = 1.0, rho[1]
    # initial positive sequence: pairs (ρ_t+1, ρ_t+2) are kept while the previous pair's sum is positive
    t = 1
    while t < n - 3 and even + odd > 0.0:
        even, odd = rho[t + 1], rho[t + 2]
        if even + odd >= 0:
            kept[t + 1], kept[t + 2] = even, odd
        t += 2
    last = t - 2
    if even > 0:
        kept[last + 1] = even
    # initial monotone sequence: no pair sum above the one before it
    for t in range(1, last - 1, 2):
        if kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t]:
            kept[t + 1] = kept[t + 2] = (kept[t - 1] + kept[t]) / 2.0
    total = n_chains * n
    tau = -1.0 + 2.0 * np.sum(kept[: last + 1]) + np.sum(kept[last + 1 : last + 2])
    tau = max(tau, 1.0 / np.log10(total))
    return float("nan") if np.isnan(kept).any() else float(total / tau)


def bulk_ess(values):
    """Bulk effective sample size: the ESS of the normal scores of the split chains.

    Parameters
    ----------
    values : array_like of shape (chains, draws)
        Draws of one scalar.

    Returns
    -------
    float
        NaN with fewer than 4 draws or a NaN draw; the number of split draws when they are constant.
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    if not _valid(values, 1):
        return float("nan")
    return _ess(_normal_scores(_split(values)))
