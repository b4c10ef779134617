"""Exact enumeration of the group spike-and-slab posterior (Hernández-Lobato et al. 2013, §2.1) against dense
formulas."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from hdbayes.spike_slab.exact import exact_posterior, log_evidence_given_groups


def test_one_group_against_the_two_gaussian_marginals():
    rng = np.random.default_rng(0)
    n, d, noise, vs, p0 = 8, 3, 0.4, 1.7, 0.3
    X, y = rng.normal(size=(n, d)), rng.normal(size=n)
    on = multivariate_normal(np.zeros(n), noise * np.eye(n) + vs * X @ X.T).logpdf(y)
    off = multivariate_normal(np.zeros(n), noise * np.eye(n)).logpdf(y)
    post = exact_posterior(X, y, np.zeros(d, dtype=np.int64), np.array([p0]), np.array([vs]), noise)
    assert post.log_evidence == pytest.approx(np.logaddexp(np.log(p0) + on, np.log1p(-p0) + off), rel=1e-12)
    probability = 1 / (1 + np.exp(np.log1p(-p0) + off - np.log(p0) - on))
    assert post.group_inclusion_probabilities[0] == pytest.approx(probability, rel=1e-10)
    C = noise * np.eye(n) + vs * X @ X.T
    np.testing.assert_allclose(post.coef_mean, probability * vs * X.T @ np.linalg.solve(C, y), rtol=1e-9)
    slab_var = vs - vs**2 * np.einsum("ij,ij->j", X, np.linalg.solve(C, X))
    slab_mean = vs * X.T @ np.linalg.solve(C, y)
    np.testing.assert_allclose(post.coef_variance, probability * (slab_var + slab_mean**2) - post.coef_mean**2,
                               rtol=1e-8)  # fmt: skip


def test_log_evidence_given_groups_against_the_dense_gaussian():
    rng = np.random.default_rng(1)
    n, d, noise = 10, 6, 0.2
    X, y = rng.normal(size=(n, d)), rng.normal(size=n)
    v = rng.uniform(0.5, 2, d)
    for active in (np.array([], dtype=int), np.array([1, 4]), np.arange(d)):
        value, mean, var = log_evidence_given_groups(X.T @ X, X.T @ y, y @ y, n, active, v, noise)
        C = noise * np.eye(n) + (X[:, active] * v[active]) @ X[:, active].T
        assert value == pytest.approx(multivariate_normal(np.zeros(n), C).logpdf(y), rel=1e-12)
        if active.size:
            np.testing.assert_allclose(mean, v[active] * (X[:, active].T @ np.linalg.solve(C, y)), rtol=1e-9)


def test_posterior_over_configurations_is_normalised_and_consistent():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(15, 8)), rng.normal(size=15)
    groups = np.repeat(np.arange(4), 2)
    post = exact_posterior(X, y, groups, np.array([0.1, 0.5, 0.5, 0.9]), np.ones(4), 0.5)
    assert post.configurations.shape == (16, 4)
    assert np.exp(post.log_posterior).sum() == pytest.approx(1.0)
    np.testing.assert_allclose(post.group_inclusion_probabilities, np.exp(post.log_posterior) @ post.configurations)


def test_too_many_groups_is_refused():
    with pytest.raises(ValueError, match="infeasible"):
        exact_posterior(np.ones((2, 21)), np.ones(2), np.arange(21), np.full(21, 0.5), np.ones(21), 1.0)
