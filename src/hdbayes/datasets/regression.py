"""Simulators for the regression experiments of group spike-and-slab regression (docs/spike_slab.md, "Experiments").

:func:`simulate_block_sparse` is the block-sparse signal of docs/spike_slab.md (after Ji et al. 2008's
compressive-sensing benchmark): a signal of length d split into groups of consecutive
coefficients, a few of them active with N(0, 1) values, measured by a random Gaussian matrix
with unit-norm rows plus Gaussian noise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hdbayes._validation import check_count, check_generator, check_positive
from hdbayes.exceptions import InputValueError

from ._common import check_sizes, data_bunch, numbered_names

if TYPE_CHECKING:
    from sklearn.utils import Bunch

    from hdbayes._validation import RandomStateLike

__all__ = ["measurement_rows", "simulate_block_sparse"]


def measurement_rows(n_samples: int, n_features: int, random_state: RandomStateLike = None) -> np.ndarray:
    """Draw ``n_samples`` random measurement rows of length ``n_features``, each of unit norm.

    The entries are N(0, 1), each row then scaled to unit norm (docs/spike_slab.md, "Experiments").

    Parameters
    ----------
    n_samples : int
        Number of rows.
    n_features : int
        Length of each row.
    random_state : int, numpy.random.Generator or None, default=None
        Source of the random numbers.

    Returns
    -------
    ndarray of shape (n_samples, n_features)
        The rows, each of Euclidean norm 1.
    """
    rng = check_generator(random_state)
    rows = rng.standard_normal((n_samples, n_features))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def simulate_block_sparse(
        n_samples: int = 100, n_features: int = 512, group_size: int = 4, n_active_groups: int = 10,
        noise_std: float = 0.005, n_test: int = 0, random_state: RandomStateLike = None) -> Bunch:  # fmt: skip
    """A block-sparse signal measured with noise (docs/spike_slab.md, "Experiments").

    Parameters
    ----------
    n_samples : int, default=100
        Number of measurements n.
    n_features : int, default=512
        Signal length d (a multiple of ``group_size``).
    group_size : int, default=4
        Coefficients per group; group g holds the features g·group_size .. (g + 1)·group_size − 1.
    n_active_groups : int, default=10
        Groups drawn at random without replacement; their coefficients are N(0, 1).
    noise_std : float, default=0.005
        σ0 (so σ0² = 2.5e-5).
    n_test : int, default=0
        Extra measurements (same rows distribution) for prediction error.
    random_state : int, Generator or None
        Source of the random numbers.

    Returns
    -------
    sklearn.utils.Bunch
        ``X`` (n × d, unit-norm rows), ``y``, ``X_test``, ``y_test`` (``n_test`` rows), ``feature_names``
        (``x0``, ``x1``, ...), ``DESCR``, ``coef`` (the true signal w), ``groups`` (g(j) = j // group_size),
        ``active_groups`` (sorted indices), ``noise_std``.

    Examples
    --------
    >>> from hdbayes.datasets.regression import simulate_block_sparse
    >>> data = simulate_block_sparse(n_samples=20, n_features=16, group_size=4, n_active_groups=1, random_state=0)
    >>> data.X.shape, int((data.coef != 0).sum())
    ((20, 16), 4)
    """
    n_samples, n_test = check_sizes(n_samples, n_test, test_minimum=0)
    n_features = check_count("n_features", n_features)
    group_size = check_count("group_size", group_size)
    if n_features % group_size:
        raise InputValueError(f"n_features={n_features} must be a multiple of group_size={group_size}")
    n_groups = n_features // group_size
    n_active_groups = check_count("n_active_groups", n_active_groups, minimum=0)
    if n_active_groups > n_groups:
        raise InputValueError(f"n_active_groups={n_active_groups} exceeds the number of groups {n_groups}")
    noise_std = check_positive("noise_std", noise_std, allow_zero=True)
    rng = check_generator(random_state)
    groups = np.arange(n_features) // group_size
    active = np.sort(rng.choice(n_groups, size=n_active_groups, replace=False))
    coef = np.zeros(n_features)
    mask = np.isin(groups, active)
    coef[mask] = rng.standard_normal(int(mask.sum()))
    X = measurement_rows(n_samples + n_test, n_features, rng)
    y = X @ coef + noise_std * rng.standard_normal(n_samples + n_test)
    descr = (
        f"Block-sparse signal of length {n_features} in groups of {group_size}, {n_active_groups} active, measured "
        f"by unit-norm Gaussian rows with noise {noise_std:g} (docs/spike_slab.md): {n_samples} training and "
        f"{n_test} test measurements."
    )
    n = n_samples
    return data_bunch(X[:n], y[:n], X[n:], y[n:], feature_names=numbered_names(n_features), DESCR=descr, coef=coef,
                      groups=groups, active_groups=active, noise_std=noise_std)  # fmt: skip
