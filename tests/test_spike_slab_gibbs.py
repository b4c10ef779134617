"""Collapsed Gibbs sampler for the group spike-and-slab model (spec §6.2) against exact enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logit
from scipy.stats import multivariate_normal
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.spike_slab import GroupSpikeSlabGibbs, exact_posterior
from hdbayes.spike_slab.gibbs import collapsed_group_sweep


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    n, d = 20, 12
    X = rng.normal(size=(n, d))
    w = np.zeros(d)
    w[:3] = [1.0, -0.5, 0.3]
    w[6:9] = [0.2, 0.1, -0.25]
    y = X @ w + 0.5 * rng.normal(size=n)
    return X - X.mean(0), y - y.mean()


def test_conditional_log_odds_identity():
    """The Cholesky form of the collapsed conditional equals the ratio of two Gaussian marginals."""
    rng = np.random.default_rng(1)
    n, noise, vs = 9, 0.3, np.array([1.5, 0.7])
    X, y = rng.normal(size=(n, 5)), rng.normal(size=n)
    starts, ends = np.array([0, 3]), np.array([3, 5])
    for z_other in (False, True):
        z = np.array([True, z_other])
        active = np.concatenate([np.arange(3), np.arange(3, 5) if z_other else np.zeros(0, int)]).astype(int)
        scale = np.repeat(vs, [3, 2])[active]
        C = noise * np.eye(n) + (X[:, active] * scale) @ X[:, active].T
        probabilities = np.zeros(2)
        collapsed_group_sweep(np.ascontiguousarray(X.T), y, starts, ends, logit(np.array([0.3, 0.4])), vs,
                              np.linalg.inv(C), z.copy(), np.array([0]), np.array([2.0]), probabilities)  # fmt: skip
        C_off = C - vs[0] * X[:, :3] @ X[:, :3].T
        log_odds = logit(0.3) + multivariate_normal(np.zeros(n), C).logpdf(y) - multivariate_normal(
            np.zeros(n), C_off).logpdf(y)  # fmt: skip
        assert probabilities[0] == pytest.approx(1 / (1 + np.exp(-log_odds)), rel=1e-9)


def test_gibbs_against_exact_enumeration(problem):
    X, y = problem
    exact = exact_posterior(X, y, np.arange(12) // 3, np.full(4, 0.3), np.ones(4), 0.25)
    sampler = GroupSpikeSlabGibbs(groups=3, prior_inclusion=0.3, noise_variance=0.25, fit_intercept=False,
                                  n_iter=1500, burn_in=200, n_chains=2, random_state=0, progress=False)  # fmt: skip
    sampler.fit(X, y)
    assert np.max(np.abs(sampler.group_inclusion_probabilities_ - exact.group_inclusion_probabilities)) < 0.03
    np.testing.assert_allclose(sampler.coef_, exact.coef_mean, atol=0.03)
    draws = sampler.coef_samples_.reshape(-1, 12)
    np.testing.assert_allclose(draws.var(axis=0), exact.coef_variance, atol=0.03)


def test_reproducible_and_inference_data(problem):
    X, y = problem
    kwargs = dict(groups=3, prior_inclusion=0.3, noise_variance=0.25, n_iter=60, burn_in=20, n_chains=2,
                  progress=False)  # fmt: skip
    a = GroupSpikeSlabGibbs(random_state=3, **kwargs).fit(X, y)
    b = GroupSpikeSlabGibbs(random_state=3, **kwargs).fit(X, y)
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    assert a.z_samples_.shape == (2, 40, 4) and a.z_trace_.shape == (2, 60, 4)
    idata = a.to_inference_data()
    assert idata.posterior["z"].shape == (2, 40, 4)
    assert idata.posterior["coef"].shape == (2, 40, 12)
    assert a.predict(X[:3]).shape == (3,)


def test_gibbs_errors(problem):
    X, y = problem
    with pytest.raises(ValueError, match="burn_in=10 must be smaller than n_iter=10"):
        GroupSpikeSlabGibbs(n_iter=10, burn_in=10).fit(X, y)
    with pytest.raises(ValueError, match=r"prior_inclusion must be in \(0, 1\)"):
        GroupSpikeSlabGibbs(prior_inclusion=1.0).fit(X, y)
    with pytest.raises(ValueError, match="groups overlap"):
        GroupSpikeSlabGibbs(groups=[list(range(7)), list(range(6, 12))]).fit(X, y)


def test_gibbs_refuses_overflowing_input_and_handles_a_constant_column(problem):
    from hdbayes.exceptions import InputValueError

    X, y = problem
    bad = X.copy()
    bad[1, 2] = 1e308
    with pytest.raises(InputValueError, match="X feature 2 is too large"):
        GroupSpikeSlabGibbs(n_iter=20, burn_in=5, random_state=0).fit(bad, y)
    constant = X.copy()
    constant[:, 2] = 3.0
    model = GroupSpikeSlabGibbs(n_iter=40, burn_in=10, n_chains=1, random_state=0).fit(constant, y)
    assert np.isfinite(model.coef_).all() and np.isfinite(model.group_inclusion_probabilities_).all()


@parametrize_with_checks([GroupSpikeSlabGibbs(n_iter=40, burn_in=10, random_state=0, progress=False)])
def test_sklearn_compatible(estimator, check):
    """scikit-learn's checks with short chains (the sampler's contract does not depend on their length)."""
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([GroupSpikeSlabGibbs()])
def test_sklearn_compatible_as_shipped(estimator, check):
    """The same checks with the shipped defaults (2 × 1000 sweeps: about 40 s on 2 cores)."""
    check(estimator)
