"""Sequential experimental design (Hernández-Lobato et al. 2013, §4) against dense computations."""

from __future__ import annotations

import numpy as np
import pytest

from hdbayes.datasets.regression import simulate_block_sparse
from hdbayes.spike_slab.design import (
    leading_covariance_direction,
    next_candidate,
    predictive_variances,
    sequential_design,
)
from hdbayes.spike_slab.ep import expectation_propagation


@pytest.fixture(scope="module")
def fitted():
    data = simulate_block_sparse(n_samples=10, n_features=24, group_size=4, n_active_groups=2, noise_std=0.1,
                                 random_state=0)  # fmt: skip
    result = expectation_propagation(data.X, data.y, data.groups, np.full(6, 0.3), np.ones(6), 0.01, warn=False)
    v = result.sites.variance
    V = np.linalg.inv(data.X.T @ data.X / 0.01 + np.diag(1 / v))
    return data, result, V


def test_predictive_variances_and_next_candidate(fitted):
    _, result, V = fitted
    candidates = np.random.default_rng(1).normal(size=(30, 24))
    dense = np.einsum("ij,jk,ik->i", candidates, V, candidates)
    np.testing.assert_allclose(predictive_variances(result, candidates), dense, rtol=1e-8)
    assert next_candidate(result, candidates) == int(np.argmax(dense))


def test_power_method_finds_the_leading_eigenvector(fitted):
    _, result, V = fitted
    values, vectors = np.linalg.eigh(V)
    direction, eigenvalue = leading_covariance_direction(result, n_iter=2000, tol=1e-14, random_state=0)
    assert np.linalg.norm(direction) == pytest.approx(1.0)
    assert eigenvalue == pytest.approx(values[-1], rel=1e-6)
    assert abs(direction @ vectors[:, -1]) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("strategy", ["variance", "random"])
@pytest.mark.parametrize("use_candidates", [False, True])
def test_sequential_design_loop(strategy, use_candidates):
    data = simulate_block_sparse(n_samples=20, n_features=64, group_size=4, n_active_groups=2, random_state=2)
    rng = np.random.default_rng(3)
    candidates = rng.normal(size=(15, 64)) if use_candidates else None
    history = sequential_design(lambda x: float(x @ data.coef), data.X, data.y, 8, data.groups, np.full(16, 0.125),
                                np.ones(16), 0.005**2, candidates=candidates, strategy=strategy, true_coef=data.coef,
                                random_state=0)  # fmt: skip
    assert history.n_measurements == list(range(20, 29))
    assert history.X.shape == (28, 64) and len(history.relative_errors) == 9
    np.testing.assert_allclose(history.y[20:], history.X[20:] @ data.coef)
    if use_candidates:  # every added row is a distinct candidate
        matches = [np.flatnonzero(np.all(candidates == row, axis=1)) for row in history.X[20:]]
        assert all(m.size == 1 for m in matches) and len({int(m[0]) for m in matches}) == 8
    else:
        np.testing.assert_allclose(np.linalg.norm(history.X[20:], axis=1), 1.0)
    assert history.relative_errors[-1] < history.relative_errors[0]


def test_variance_strategy_picks_the_largest_predictive_variance():
    data = simulate_block_sparse(n_samples=12, n_features=32, group_size=4, n_active_groups=1, random_state=4)
    candidates = np.random.default_rng(5).normal(size=(10, 32))
    history = sequential_design(lambda x: 0.0, data.X, data.y, 1, data.groups, np.full(8, 0.2), np.ones(8), 0.01,
                                candidates=candidates)  # fmt: skip
    first = expectation_propagation(data.X, data.y, data.groups, np.full(8, 0.2), np.ones(8), 0.01, warn=False)
    np.testing.assert_array_equal(history.X[-1], candidates[next_candidate(first, candidates)])


def test_design_errors():
    data = simulate_block_sparse(n_samples=5, n_features=8, group_size=4, n_active_groups=1, random_state=0)
    args = (lambda x: 0.0, data.X, data.y, 3, data.groups, np.full(2, 0.5), np.ones(2), 0.1)
    with pytest.raises(ValueError, match="strategy must be"):
        sequential_design(*args, strategy="entropy")
    with pytest.raises(ValueError, match=r"candidates must have shape \(m, 8\)"):
        sequential_design(*args, candidates=np.ones((4, 3)))
    with pytest.raises(ValueError, match="2 candidates cannot supply 3"):
        sequential_design(*args, candidates=np.ones((2, 8)))
